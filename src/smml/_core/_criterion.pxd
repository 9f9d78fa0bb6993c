# What a split search reads and scores, shared by the tree kernels (_tree.pyx, _gbm.pyx):
# the split costs psi, the split record, and the running state of a scan. Written once,
# here, as inline functions so that each kernel's hot loops inline them; cimport them, never
# copy them. The histograms and their scans are in _histogram.pxd, the growth frontier in
# _frontier.pxd.
#
# 000 "Tree Predictors": a node's cost is W * psi(p) (W = weight of the examples
# routed to it); a split is worth c(parent) - c(first child) - c(second child).
# Regression (002 "CART trees for regression"): the cost is minus the score
# S_L^2 / W_L + S_R^2 / W_R (S = sum of w y over a side).  Boosting (002 "XGBoost",
# _gbm.pyx) sets Targets.reg_lambda and min_child_weight, so its score is
# -(G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda)).
#
# Tie rule: the first (lowest) candidate with the smallest cost wins.
from libc.math cimport log2, sqrt, INFINITY
from libc.string cimport memset

from smml._core._typedefs cimport intp_t, uint8_t, uint64_t

cdef enum:
    MAXCAT = 256        # categories per categorical feature (codes 0..255)
    NWORDS = 4          # 64-bit words of a categorical test's set of codes (MAXCAT / 64)

cdef enum:
    CRIT_ERROR = 0
    CRIT_GINI = 1
    CRIT_ENTROPY = 2
    CRIT_SQRT = 3
    CRIT_MSE = 4


cdef struct Targets:
    # what a split search reads about the samples (read-only, shared by all threads)
    intp_t K                    # classes (0: regression)
    int criterion
    intp_t min_samples_leaf     # least number of examples on each side of a split
    double reg_lambda           # regression / boosting: lambda added to each side's W (002 "XGBoost"; 0 for trees)
    double min_child_weight     # regression / boosting: least W (sum of hessians) on each side (0: no limit)
    bint no_counts              # boosting: bins hold no count, (sum h, sum g) only (stride 2; a bin is empty
                                # when its sums are 0, and min_samples_leaf is not checked)
    const double* w             # (n) sample weights
    const intp_t* ycls          # (n) class index 0..K-1 (classification)
    const double* wy            # (n) w * y (regression)


cdef struct SplitRecord:
    intp_t feature              # -1: no valid split
    intp_t n_left               # number of samples routed to the first child
    intp_t bin                  # hist: last bin of the first child; exact: last sorted position of the first child
    double threshold
    double cost                 # c(first) + c(second) (regression: minus the score)
    double improvement          # c(parent) - cost
    uint8_t is_cat
    uint8_t missing_left        # boosting with missing values: the missing rows go to the first child
    uint64_t cat_bits[NWORDS]


cdef struct ScanState:
    # running first side of a scan, and the best candidate so far
    intp_t nL
    double WL, SL, WT, ST
    double best
    intp_t best_idx, best_nl


# ---------------------------------------------------------------------------
# costs (000 "Tree Predictors"; 002 "CART trees for regression")

cdef inline double cost(const double* wk, intp_t K, double W, int crit) noexcept nogil:
    """W * psi(p) for the class weights wk (summing to W)."""
    cdef intp_t k
    cdef double s = 0.0, m, r
    if W <= 0.0:
        return 0.0
    if K == 2 and crit == CRIT_GINI:
        # the loop below unrolled: same operations in the same order (0.0 + a == a exactly)
        return W - (wk[0] * wk[0] + wk[1] * wk[1]) / W
    if crit == CRIT_ERROR:
        m = wk[0]
        for k in range(1, K):
            if wk[k] > m:
                m = wk[k]
        return W - m
    elif crit == CRIT_GINI:
        for k in range(K):
            s = s + wk[k] * wk[k]
        return W - s / W
    elif crit == CRIT_ENTROPY:
        for k in range(K):
            if wk[k] > 0.0:
                s = s - wk[k] * log2(wk[k] / W)
        return 0.5 * s
    else:  # CRIT_SQRT
        for k in range(K):
            r = W - wk[k]
            if r > 0.0 and wk[k] > 0.0:
                s = s + sqrt(wk[k] * r)
        return 0.5 * s


cdef inline double cost_lr(const double* left, const double* tot, intp_t K, double WL, double WR,
                           int crit, double* right) noexcept nogil:
    """c(left) + c(right), right = tot - left (classification)."""
    cdef intp_t k
    for k in range(K):
        right[k] = tot[k] - left[k]
    return cost(left, K, WL, crit) + cost(right, K, WR, crit)


cdef inline double score_reg(double SL, double WL, double SR, double WR) noexcept nogil:
    """-(S_L^2/W_L + S_R^2/W_R): minus the variance-reduction score (002 'CART trees for regression')."""
    cdef double s = 0.0
    if WL > 0.0:
        s = s + SL * SL / WL
    if WR > 0.0:
        s = s + SR * SR / WR
    return -s


cdef inline void init_record(SplitRecord* r) noexcept nogil:
    r.feature = -1
    r.n_left = 0
    r.bin = -1
    r.threshold = 0.0
    r.cost = INFINITY
    r.improvement = -INFINITY
    r.is_cat = 0
    r.missing_left = 0
    memset(r.cat_bits, 0, NWORDS * sizeof(uint64_t))


cdef inline void init_scan(const Targets* t, const double* tot, ScanState* st) noexcept nogil:
    """An empty first side, the node's totals tot = [K class weights, W, S], no candidate yet."""
    st.nL = 0
    st.WL = 0.0
    st.SL = 0.0
    st.WT = tot[t.K]
    st.ST = tot[t.K + 1]
    st.best = INFINITY
    st.best_idx = -1
    st.best_nl = 0
