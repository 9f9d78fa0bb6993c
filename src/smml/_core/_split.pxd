# Split search pieces every tree kernel shares: the split costs psi, the split
# record, and the histograms (built from uint8 codes, then scanned for the best
# split).  Written once, here, as inline functions so that each kernel's hot
# loops inline them; cimport them, never copy them.
#
# 000 "Tree Predictors": a node's cost is W * psi(p) (W = weight of the examples
# routed to it); a split is worth c(parent) - c(first child) - c(second child).
# Regression (002 "CART trees for regression"): the cost is minus the score
# S_L^2 / W_L + S_R^2 / W_R (S = sum of w y over a side).
#
# Histogram layout: a feature's histogram is `max_bins` bins of `stride`
# doubles, bin b = [count, sum w, then the K class weights (classification) or
# sum w y (regression, K = 0)], so stride = 2 + max(K, 1).  A regression
# histogram is a (count, sum h, sum g) histogram of second-order boosting with
# h = w and g = w y (002 "XGBoost"): its leaf value S/W and split score are the
# boosting ones with lambda = 0.  The boosting kernel (_gbm.pyx) fills the same
# histograms with h = hessian, g = gradient and sets Targets.reg_lambda and
# min_child_weight, so its score is -(G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda)).
# The scans below read a histogram and leave it
# as it is (a caller that subtracts a sibling's histogram keeps it; the tree
# kernel clears the bins it used).
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
    bint no_counts              # boosting: bins hold no count (slot 0 stays 0; a bin is empty when its sums
                                # are 0, and min_samples_leaf is not checked): one store less per value
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


# ---------------------------------------------------------------------------
# histograms

cdef inline bint bin_empty(const Targets* t, const double* hb) noexcept nogil:
    """No sample in histogram bin hb (without counts: nothing to add, sum h = sum g = 0)."""
    if t.no_counts:
        return hb[1] == 0.0 and hb[2] == 0.0
    return hb[0] == 0.0


cdef inline void hist_build(const Targets* t, double* hist, intp_t max_bins, intp_t stride,
                            intp_t* lo, intp_t* hi, const intp_t* feats, intp_t j0, intp_t j1,
                            const uint8_t* codes, intp_t d, const intp_t* samples,
                            intp_t start, intp_t end) noexcept nogil:
    """Add samples[start:end] to the histograms of features feats[j0:j1] (all zero before),
    one pass over the rows: the codes are row-major (n, d), so a sample's codes share a
    cache line.  lo[f] / hi[f]: lowest / highest bin present.

    Small nodes (fewer samples than bins) track lo / hi while they add; large ones add
    only (regression / boosting: three adds per value) and find lo / hi from the counts
    afterwards."""
    cdef intp_t K = t.K, p, i, b, j, f, c = 0
    cdef const uint8_t* row
    cdef double* h
    cdef double wi, v
    cdef bint track = K > 0 or end - start < max_bins
    for j in range(j0, j1):
        f = feats[j]
        lo[f] = MAXCAT
        hi[f] = -1
    if not track:
        if t.no_counts:
            for p in range(start, end):
                i = samples[p]
                row = codes + i * d
                wi = t.w[i]
                v = t.wy[i]
                for j in range(j0, j1):
                    f = feats[j]
                    h = hist + (f * max_bins + row[f]) * stride
                    h[1] += wi
                    h[2] += v
        else:
            for p in range(start, end):
                i = samples[p]
                row = codes + i * d
                wi = t.w[i]
                v = t.wy[i]
                for j in range(j0, j1):
                    f = feats[j]
                    h = hist + (f * max_bins + row[f]) * stride
                    h[0] += 1.0
                    h[1] += wi
                    h[2] += v
        for j in range(j0, j1):
            f = feats[j]
            h = hist + f * max_bins * stride
            for b in range(max_bins):
                if not bin_empty(t, h + b * stride):
                    lo[f] = b
                    break
            for b in range(max_bins - 1, -1, -1):
                if not bin_empty(t, h + b * stride):
                    hi[f] = b
                    break
        return
    for p in range(start, end):
        i = samples[p]
        row = codes + i * d
        wi = t.w[i]
        if K > 0:
            c = t.ycls[i]
            v = wi
        else:
            v = t.wy[i]
        for j in range(j0, j1):
            f = feats[j]
            b = row[f]
            if b < lo[f]:
                lo[f] = b
            if b > hi[f]:
                hi[f] = b
            h = hist + (f * max_bins + b) * stride
            if not t.no_counts:
                h[0] += 1.0
            h[1] += wi
            h[2 + c] += v


cdef inline bint add_bin_and_score(const Targets* t, const double* tot, const double* hb, intp_t idx,
                                   intp_t nn, double* left, double* right, ScanState* s) noexcept nogil:
    """Move histogram bin hb to the first side and score the split after it, keeping it as
    s.best_idx when it is strictly better (first best wins).  Return True when the second
    side has become smaller than min_samples_leaf (the caller stops its scan)."""
    cdef intp_t K = t.K, k
    cdef double c
    s.nL += <intp_t>hb[0]
    s.WL += hb[1]
    if K > 0:
        for k in range(K):
            left[k] += hb[2 + k]
    else:
        s.SL += hb[2]
    if not t.no_counts:
        if s.nL < t.min_samples_leaf:
            return False
        if nn - s.nL < t.min_samples_leaf:
            return True
    if t.min_child_weight > 0.0:
        if s.WL < t.min_child_weight:
            return False
        if s.WT - s.WL < t.min_child_weight:
            return True
    if K > 0:
        c = cost_lr(left, tot, K, s.WL, s.WT - s.WL, t.criterion, right)
    else:
        c = score_reg(s.SL, s.WL + t.reg_lambda, s.ST - s.SL, s.WT - s.WL + t.reg_lambda)
    if c < s.best:
        s.best = c
        s.best_idx = idx
        s.best_nl = s.nL
    return False


cdef inline void scan_numeric(const Targets* t, const double* tot, const double* h, intp_t stride,
                              intp_t lo, intp_t hi, intp_t nn, double* left, double* right,
                              ScanState* st) noexcept nogil:
    """A numerical feature's histogram h (bins lo..hi present, nn samples): a candidate
    "code <= b" after every non-empty bin b < hi.  The best is st.best_idx (the bin)."""
    cdef intp_t b, k
    init_scan(t, tot, st)
    if lo >= hi:
        return
    for k in range(t.K):
        left[k] = 0.0
    for b in range(lo, hi):
        if bin_empty(t, h + b * stride):
            continue
        if add_bin_and_score(t, tot, h + b * stride, b, nn, left, right, st):
            break


cdef inline void scan_categorical(const Targets* t, const double* tot, const double* h, intp_t stride,
                                  intp_t lo, intp_t hi, intp_t nn, double* left, double* right,
                                  double* key, intp_t* order, ScanState* st) noexcept nogil:
    """A categorical feature's histogram: order the categories present by a key and scan
    the prefixes of that order; the best prefix is order[0..st.best_idx].

    Binary classification: key = weighted proportion of the second class; regression:
    key = weighted mean target (Breiman: a prefix of this order is an optimal subset);
    multiclass: key = proportion of the node's most frequent class (a heuristic).
    Ties in the key are ordered by category code."""
    cdef intp_t K = t.K, b, k, m = 0, j, kmaj = 0
    cdef double kv, wb
    init_scan(t, tot, st)
    if lo >= hi:
        return
    if K > 2:
        for k in range(1, K):
            if tot[k] >= tot[kmaj]:
                kmaj = k
    elif K == 2:
        kmaj = 1
    for b in range(lo, hi + 1):
        if bin_empty(t, h + b * stride):
            continue
        wb = h[b * stride + 1]
        if K > 0:
            kv = h[b * stride + 2 + kmaj] / wb if wb > 0.0 else 0.0
        else:
            kv = h[b * stride + 2] / wb if wb > 0.0 else 0.0
        # insertion into the ordered list (key, code)
        j = m
        while j > 0 and key[j - 1] > kv:
            key[j] = key[j - 1]
            order[j] = order[j - 1]
            j -= 1
        key[j] = kv
        order[j] = b
        m += 1
    for k in range(K):
        left[k] = 0.0
    for j in range(m - 1):
        if add_bin_and_score(t, tot, h + order[j] * stride, j, nn, left, right, st):
            break


cdef inline void hist_subtract(double* parent, const double* child, intp_t max_bins, intp_t stride,
                               const intp_t* lo, const intp_t* hi, const intp_t* feats, intp_t j0,
                               intp_t j1) noexcept nogil:
    """parent -= child over the bins lo[f]..hi[f] (the parent's) of features feats[j0:j1]: the
    parent's histogram becomes its other child's (the sibling subtraction: only the smaller
    child's histogram is built from its rows).  Counts stay exact (integers in doubles)."""
    cdef intp_t j, f, q, q0, q1
    for j in range(j0, j1):
        f = feats[j]
        if hi[f] < lo[f]:
            continue
        q0 = (f * max_bins + lo[f]) * stride
        q1 = (f * max_bins + hi[f] + 1) * stride
        for q in range(q0, q1):
            parent[q] -= child[q]


# ---------------------------------------------------------------------------
# the growth frontier of the tree and boosting kernels: leaves waiting to be split, a stack
# (depth-first) or a max-heap on (improvement, -node) (best-first)

cdef struct Pending:
    intp_t node
    intp_t start
    intp_t end
    intp_t depth
    SplitRecord split


cdef inline bint frontier_before(const Pending* a, const Pending* b) noexcept nogil:
    """a is expanded before b (best-first): larger decrease, then smaller node id."""
    if a.split.improvement > b.split.improvement:
        return True
    if a.split.improvement < b.split.improvement:
        return False
    return a.node < b.node


cdef inline void frontier_push(Pending* h, intp_t* size, const Pending* x, bint heap) noexcept nogil:
    """Add x (room for it is the caller's): on top of the stack, or into the heap."""
    cdef intp_t i = size[0], parent
    cdef Pending tmp
    h[i] = x[0]
    size[0] += 1
    if not heap:
        return
    while i > 0:
        parent = (i - 1) // 2
        if frontier_before(&h[i], &h[parent]):
            tmp = h[i]; h[i] = h[parent]; h[parent] = tmp
            i = parent
        else:
            break


cdef inline void frontier_pop(Pending* h, intp_t* size, Pending* out, bint heap) noexcept nogil:
    """Remove the top of the stack, or the heap's first (frontier_before) into out."""
    cdef intp_t i = 0, l, r, m, n
    cdef Pending tmp
    size[0] -= 1
    n = size[0]
    if not heap:
        out[0] = h[n]
        return
    out[0] = h[0]
    h[0] = h[n]
    while True:
        l = 2 * i + 1
        r = l + 1
        m = i
        if l < n and frontier_before(&h[l], &h[m]):
            m = l
        if r < n and frontier_before(&h[r], &h[m]):
            m = r
        if m == i:
            break
        tmp = h[i]; h[i] = h[m]; h[m] = tmp
        i = m
