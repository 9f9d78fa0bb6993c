# Tree growth kernel: split scanning (exact and histogram), in-place node
# partitioning, depth-first / best-first growth, prediction.
#
# 000 "Tree Predictors": a tree starts as a single leaf; a leaf is repeatedly
# replaced by an internal node with a binary test and two new leaves.  A node's
# cost is W * psi(p) (W = weight of the examples routed to it), and a split is
# worth c(parent) - c(first child) - c(second child) (the decrease of the
# training objective sum_leaves psi * N_leaf).
#
# Everything below runs without the GIL.  The whole growth is one nogil call:
# Python validates inputs and allocates the read-only arrays, the kernel grows
# C buffers and Python copies them into numpy node arrays at the end.
#
# Tie rule (documented in smml.tree): among splits with the same cost, the one
# with the lowest feature index wins, and within a feature the lowest threshold
# (numerical) or the shortest prefix of the category ordering (categorical).
# Per-feature searches run in parallel and write one record per feature; the
# argmin over features is serial, so results do not depend on the thread count.
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memset, memcpy
from libc.math cimport log2, sqrt, INFINITY, fabs
from cython.parallel cimport prange, threadid

from smml._core._typedefs cimport intp_t, int32_t, uint8_t, uint64_t, floating

import numpy as np

# criteria
cdef enum:
    CRIT_ERROR = 0
    CRIT_GINI = 1
    CRIT_ENTROPY = 2
    CRIT_SQRT = 3
    CRIT_MSE = 4

cdef enum:
    MODE_EXACT = 0
    MODE_HIST = 1

DEF MAXCAT = 256
DEF NWORDS = 4

CRITERIA = {"error": CRIT_ERROR, "gini": CRIT_GINI, "entropy": CRIT_ENTROPY,
            "sqrt": CRIT_SQRT, "squared_error": CRIT_MSE}


cdef struct SplitRecord:
    intp_t feature           # -1: no valid split
    intp_t n_left            # number of samples routed to the first child
    intp_t bin               # hist: last bin of the first child; exact: last sorted position of the first child
    double threshold
    double cost              # c(first) + c(second) (regression: minus the score)
    double improvement       # c(parent) - cost
    uint8_t is_cat
    uint64_t cat_bits[NWORDS]


cdef struct Pending:
    intp_t node
    intp_t start
    intp_t end
    intp_t depth
    SplitRecord split


cdef struct Builder:
    int mode
    int criterion
    intp_t K                 # classes (regression: 0)
    intp_t n
    intp_t d
    intp_t max_bins
    intp_t stride            # doubles per histogram bin
    int n_threads
    intp_t par_work          # below this many (samples x features) a node is scanned serially
    # data
    const double* w
    const intp_t* ycls
    const double* yreg
    double* Xs               # exact: sorted values per numeric feature (d*n)
    int32_t* Si              # exact: sorted sample indices per numeric feature (d*n)
    const uint8_t* Xb        # codes, row-major (n*d): hist all features, exact categorical only
    intp_t* lo               # (d) lowest bin present in the node's histogram of each feature
    intp_t* hi               # (d) highest bin present
    intp_t* hlist            # (d) candidate features scanned through a histogram
    const double* edges      # (d*max_bins) threshold of "code <= b"
    const uint8_t* is_cat    # (d)
    const intp_t* n_bins     # (d) number of bins / categories
    intp_t* samples          # (n)
    uint8_t* goes_left       # (n)
    int32_t* tmp_i           # (n_threads*n)
    double* tmp_v            # (n_threads*n)
    double* hist             # (d*max_bins*stride)
    double* scratch          # (d*scr_stride) per-feature left / right sums
    intp_t scr_stride
    intp_t cat_stride        # d*MAXCAT with categorical features, else 1
    double* catkey           # (d*MAXCAT)
    intp_t* catord           # (d*MAXCAT)
    SplitRecord* feat_best   # (d)
    intp_t* features         # (d) candidate order for max_features
    intp_t max_features
    uint64_t rng
    # params
    intp_t max_depth
    intp_t min_samples_split
    intp_t min_samples_leaf
    double min_impurity_decrease
    double w_root
    double* node_tot         # (K+2) totals of the node being evaluated
    double node_q            # regression: sum w y^2 of the node being evaluated
    # output (grown with realloc)
    intp_t n_nodes
    intp_t cap
    intp_t* left
    intp_t* right
    intp_t* feature
    double* threshold
    uint8_t* node_cat
    uint64_t* cat_bits       # (cap*NWORDS)
    double* value            # (cap*V), V = K or 1
    double* impurity
    intp_t* n_node_samples
    double* w_node
    intp_t* depth
    double* improvement
    int failed


# ---------------------------------------------------------------------------
# psi costs: W * psi(p) for a vector of class weights (000 "Tree Predictors")

cdef inline double _cost(const double* wk, intp_t K, double W, int crit) noexcept nogil:
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


cdef inline double _cost_lr(const double* left, const double* tot, intp_t K, double WL, double WR,
                            int crit, double* right) noexcept nogil:
    """c(left) + c(right), right = tot - left (classification)."""
    cdef intp_t k
    for k in range(K):
        right[k] = tot[k] - left[k]
    return _cost(left, K, WL, crit) + _cost(right, K, WR, crit)


cdef inline double _score_reg(double SL, double WL, double SR, double WR) noexcept nogil:
    """-(S_L^2/W_L + S_R^2/W_R): minus the variance-reduction score (002 'CART trees for regression')."""
    cdef double s = 0.0
    if WL > 0.0:
        s = s + SL * SL / WL
    if WR > 0.0:
        s = s + SR * SR / WR
    return -s


cdef inline uint64_t _rng_next(uint64_t* state) noexcept nogil:
    # splitmix64
    state[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


# ---------------------------------------------------------------------------
# split search for one feature

cdef inline void _init_record(SplitRecord* r) noexcept nogil:
    r.feature = -1
    r.n_left = 0
    r.bin = -1
    r.threshold = 0.0
    r.cost = INFINITY
    r.improvement = -INFINITY
    r.is_cat = 0
    memset(r.cat_bits, 0, NWORDS * sizeof(uint64_t))


cdef void _scan_exact(Builder* B, intp_t f, intp_t start, intp_t end, SplitRecord* out) noexcept nogil:
    """Scan the sorted values of numeric feature f over the node's segment."""
    cdef intp_t K = B.K, n = B.n, p, i, nL, nn = end - start, k
    cdef const double* xs = B.Xs + f * n
    cdef const int32_t* si = B.Si + f * n
    cdef double* left = B.scratch + f * B.scr_stride
    cdef double* right = left + K
    cdef double WL = 0.0, WT = B.node_tot[K], SL = 0.0, ST = B.node_tot[K + 1], c, wi
    cdef intp_t msl = B.min_samples_leaf
    cdef intp_t best_p = -1
    cdef double best = INFINITY, a, b, thr
    _init_record(out)
    if xs[start] >= xs[end - 1]:
        return   # constant feature in this node
    if K > 0:
        for k in range(K):
            left[k] = 0.0
    nL = 0
    for p in range(start, end - 1):
        i = si[p]
        wi = B.w[i]
        if K > 0:
            left[B.ycls[i]] += wi
        else:
            SL += wi * B.yreg[i]
        WL += wi
        nL += 1
        if xs[p + 1] <= xs[p]:
            continue
        if nL < msl:
            continue
        if nn - nL < msl:
            break
        if K > 0:
            c = _cost_lr(left, B.node_tot, K, WL, WT - WL, B.criterion, right)
        else:
            c = _score_reg(SL, WL, ST - SL, WT - WL)
        if c < best:
            best = c
            best_p = p
    if best_p < 0:
        return
    a = xs[best_p]
    b = xs[best_p + 1]
    thr = a / 2.0 + b / 2.0
    if thr >= b or thr < a:
        thr = a
    out.feature = f
    out.n_left = best_p + 1 - start
    out.bin = best_p
    out.threshold = thr
    out.cost = best


cdef void _build_hist_rows(Builder* B, intp_t j0, intp_t j1, intp_t start, intp_t end) noexcept nogil:
    """Histograms of features hlist[j0:j1] over samples[start:end], one pass over the rows
    (the codes are row-major, so a sample's codes share a cache line)."""
    cdef intp_t K = B.K, S = B.stride, d = B.d, MB = B.max_bins, p, i, b, j, f, c = 0
    cdef const uint8_t* row
    cdef double* h
    cdef double wi, v
    for j in range(j0, j1):
        f = B.hlist[j]
        B.lo[f] = MAXCAT
        B.hi[f] = -1
    for p in range(start, end):
        i = B.samples[p]
        row = B.Xb + i * d
        wi = B.w[i]
        if K > 0:
            c = B.ycls[i]
            v = wi
        else:
            v = wi * B.yreg[i]
        for j in range(j0, j1):
            f = B.hlist[j]
            b = row[f]
            if b < B.lo[f]:
                B.lo[f] = b
            if b > B.hi[f]:
                B.hi[f] = b
            h = B.hist + (f * MB + b) * S
            h[0] += 1.0
            h[1] += wi
            h[2 + c] += v


cdef struct ScanState:
    # running left side of a histogram / categorical scan, and the best candidate so far
    intp_t nL
    double WL, SL, WT, ST
    double best
    intp_t best_idx, best_nl


cdef inline bint _add_bin_and_score(Builder* B, const double* hb, intp_t idx, intp_t nn,
                                    double* left, double* right, ScanState* s) noexcept nogil:
    """Move histogram bin hb (count, weight, then K class weights or the weighted target
    sum) to the left side and score the split after it, keeping it as s.best_idx when it is
    strictly better (first best wins).  Return True when the right side has become smaller
    than min_samples_leaf (the caller stops its scan)."""
    cdef intp_t K = B.K, k
    cdef double c
    s.nL += <intp_t>hb[0]
    s.WL += hb[1]
    if K > 0:
        for k in range(K):
            left[k] += hb[2 + k]
    else:
        s.SL += hb[2]
    if s.nL < B.min_samples_leaf:
        return False
    if nn - s.nL < B.min_samples_leaf:
        return True
    if K > 0:
        c = _cost_lr(left, B.node_tot, K, s.WL, s.WT - s.WL, B.criterion, right)
    else:
        c = _score_reg(s.SL, s.WL, s.ST - s.SL, s.WT - s.WL)
    if c < s.best:
        s.best = c
        s.best_idx = idx
        s.best_nl = s.nL
    return False


cdef inline void _init_scan(Builder* B, ScanState* st) noexcept nogil:
    """An empty left side, the node's totals, and no candidate yet."""
    st.nL = 0
    st.WL = 0.0
    st.SL = 0.0
    st.WT = B.node_tot[B.K]
    st.ST = B.node_tot[B.K + 1]
    st.best = INFINITY
    st.best_idx = -1
    st.best_nl = 0


cdef void _scan_hist(Builder* B, intp_t f, intp_t start, intp_t end, SplitRecord* out) noexcept nogil:
    """Numeric feature from its histogram: candidate after every non-empty bin."""
    cdef intp_t K = B.K, S = B.stride, b, k, lo, hi, nn = end - start
    cdef double* h = B.hist + f * B.max_bins * S
    cdef double* left = B.scratch + f * B.scr_stride
    cdef double* right = left + K
    cdef ScanState st
    _init_scan(B, &st)
    _init_record(out)
    lo = B.lo[f]
    hi = B.hi[f]
    if lo < hi:
        for k in range(K):
            left[k] = 0.0
        for b in range(lo, hi):
            if h[b * S] == 0.0:
                continue
            if _add_bin_and_score(B, h + b * S, b, nn, left, right, &st):
                break
    memset(h + lo * S, 0, (hi - lo + 1) * S * sizeof(double))
    if st.best_idx < 0:
        return
    out.feature = f
    out.n_left = st.best_nl
    out.bin = st.best_idx
    out.threshold = B.edges[f * B.max_bins + st.best_idx]
    out.cost = st.best


cdef void _scan_cat(Builder* B, intp_t f, intp_t start, intp_t end, SplitRecord* out) noexcept nogil:
    """Categorical feature: order the categories present by a key and scan prefixes.

    Binary classification: key = weighted proportion of the second class; regression:
    key = weighted mean target (Breiman: a prefix of this order is an optimal subset);
    multiclass: key = proportion of the node's majority class (a heuristic).
    Ties in the key are ordered by category code.
    """
    cdef intp_t K = B.K, S = B.stride, b, k, lo, hi, m = 0, j, t, nn = end - start, kmaj = 0
    cdef double* h = B.hist + f * B.max_bins * S
    cdef double* left = B.scratch + f * B.scr_stride
    cdef double* right = left + K
    cdef double* key = B.catkey + f * MAXCAT
    cdef intp_t* order = B.catord + f * MAXCAT
    cdef double kv, wb
    cdef ScanState st
    _init_scan(B, &st)
    _init_record(out)
    lo = B.lo[f]
    hi = B.hi[f]
    if lo < hi:
        if K > 2:
            for k in range(1, K):
                if B.node_tot[k] >= B.node_tot[kmaj]:
                    kmaj = k
        elif K == 2:
            kmaj = 1
        for b in range(lo, hi + 1):
            if h[b * S] == 0.0:
                continue
            wb = h[b * S + 1]
            if K > 0:
                kv = h[b * S + 2 + kmaj] / wb if wb > 0.0 else 0.0
            else:
                kv = h[b * S + 2] / wb if wb > 0.0 else 0.0
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
            if _add_bin_and_score(B, h + order[j] * S, j, nn, left, right, &st):
                break
    memset(h + lo * S, 0, (hi - lo + 1) * S * sizeof(double))
    if st.best_idx < 0:
        return
    out.feature = f
    out.n_left = st.best_nl
    out.is_cat = 1
    out.cost = st.best
    for j in range(st.best_idx + 1):
        b = order[j]
        out.cat_bits[b >> 6] |= (<uint64_t>1) << (b & 63)


cdef void _scan_feature(Builder* B, intp_t f, intp_t start, intp_t end, SplitRecord* out) noexcept nogil:
    if B.is_cat[f]:
        _scan_cat(B, f, start, end, out)
    elif B.mode == MODE_EXACT:
        _scan_exact(B, f, start, end, out)
    else:
        _scan_hist(B, f, start, end, out)


# ---------------------------------------------------------------------------
# nodes

cdef int _grow_storage(Builder* B) noexcept nogil:
    cdef intp_t cap = B.cap * 2 if B.cap > 0 else 64
    cdef intp_t V = B.K if B.K > 0 else 1
    cdef void* p
    p = realloc(B.left, cap * sizeof(intp_t))
    if p == NULL: return -1
    B.left = <intp_t*>p
    p = realloc(B.right, cap * sizeof(intp_t))
    if p == NULL: return -1
    B.right = <intp_t*>p
    p = realloc(B.feature, cap * sizeof(intp_t))
    if p == NULL: return -1
    B.feature = <intp_t*>p
    p = realloc(B.threshold, cap * sizeof(double))
    if p == NULL: return -1
    B.threshold = <double*>p
    p = realloc(B.node_cat, cap * sizeof(uint8_t))
    if p == NULL: return -1
    B.node_cat = <uint8_t*>p
    p = realloc(B.cat_bits, cap * NWORDS * sizeof(uint64_t))
    if p == NULL: return -1
    B.cat_bits = <uint64_t*>p
    p = realloc(B.value, cap * V * sizeof(double))
    if p == NULL: return -1
    B.value = <double*>p
    p = realloc(B.impurity, cap * sizeof(double))
    if p == NULL: return -1
    B.impurity = <double*>p
    p = realloc(B.n_node_samples, cap * sizeof(intp_t))
    if p == NULL: return -1
    B.n_node_samples = <intp_t*>p
    p = realloc(B.w_node, cap * sizeof(double))
    if p == NULL: return -1
    B.w_node = <double*>p
    p = realloc(B.depth, cap * sizeof(intp_t))
    if p == NULL: return -1
    B.depth = <intp_t*>p
    p = realloc(B.improvement, cap * sizeof(double))
    if p == NULL: return -1
    B.improvement = <double*>p
    B.cap = cap
    return 0


cdef intp_t _new_node(Builder* B, intp_t start, intp_t end, intp_t depth) noexcept nogil:
    """Create a leaf for samples[start:end]; fill its value and impurity; leave totals in B.node_tot."""
    cdef intp_t K = B.K, node, p, i, k, V = B.K if B.K > 0 else 1
    cdef double W = 0.0, S = 0.0, Q = 0.0, wi, yi
    cdef double* tot = B.node_tot
    if B.n_nodes >= B.cap:
        if _grow_storage(B) != 0:
            B.failed = 1
            return -1
    node = B.n_nodes
    B.n_nodes += 1
    for k in range(K):
        tot[k] = 0.0
    for p in range(start, end):
        i = B.samples[p]
        wi = B.w[i]
        W += wi
        if K > 0:
            tot[B.ycls[i]] += wi
        else:
            yi = B.yreg[i]
            S += wi * yi
            Q += wi * yi * yi
    tot[K] = W
    tot[K + 1] = S
    B.left[node] = -1
    B.right[node] = -1
    B.feature[node] = -1
    B.threshold[node] = 0.0
    B.node_cat[node] = 0
    memset(B.cat_bits + node * NWORDS, 0, NWORDS * sizeof(uint64_t))
    B.n_node_samples[node] = end - start
    B.w_node[node] = W
    B.depth[node] = depth
    B.improvement[node] = 0.0
    if K > 0:
        for k in range(K):
            B.value[node * V + k] = tot[k]
        B.impurity[node] = _cost(tot, K, W, B.criterion) / W if W > 0.0 else 0.0
    else:
        B.value[node] = S / W if W > 0.0 else 0.0
        B.impurity[node] = (Q - S * S / W) / W if W > 0.0 else 0.0
        if B.impurity[node] < 0.0:
            B.impurity[node] = 0.0
        B.node_q = Q        # node's sum w y^2, read by _evaluate right after
    return node


cdef void _evaluate(Builder* B, intp_t node, intp_t start, intp_t end, intp_t depth,
                    SplitRecord* best) noexcept nogil:
    """Best split of a freshly created leaf (B.node_tot holds its totals)."""
    cdef intp_t K = B.K, nn = end - start, j, f, mf, d = B.d, t, tmp, nh, nb
    cdef bint par
    cdef double parent_cost, scale, W = B.node_tot[K], S = B.node_tot[K + 1]
    cdef SplitRecord* r
    _init_record(best)
    if B.max_depth >= 0 and depth >= B.max_depth:
        return
    if nn < B.min_samples_split or nn < 2 * B.min_samples_leaf:
        return
    if K > 0:
        parent_cost = _cost(B.node_tot, K, W, B.criterion)
        scale = W
    else:
        parent_cost = -(S * S / W) if W > 0.0 else 0.0
        scale = B.node_q                # sum w y^2 of the node
        if scale - S * S / W <= 1e-12 * scale:
            return                      # constant target: nothing to decrease
    if K > 0 and parent_cost <= 1e-12 * scale:
        return                          # pure leaf
    # candidate features (000/002: CART tries a random subset of directions)
    mf = B.max_features
    if mf < d:
        for j in range(mf):
            t = j + <intp_t>(_rng_next(&B.rng) % <uint64_t>(d - j))
            tmp = B.features[j]
            B.features[j] = B.features[t]
            B.features[t] = tmp
    else:
        mf = d
    # histograms of the candidates that need one (hist mode: all; exact: categorical)
    nh = 0
    for j in range(mf):
        f = B.features[j]
        if B.mode == MODE_HIST or B.is_cat[f]:
            B.hlist[nh] = f
            nh += 1
    par = nn * mf >= B.par_work and B.n_threads > 1
    if nh > 0:
        if par and nh >= 2:
            nb = min(B.n_threads, nh)
            for j in prange(nb, num_threads=nb, schedule="static"):
                _build_hist_rows(B, (j * nh) // nb, ((j + 1) * nh) // nb, start, end)
        else:
            _build_hist_rows(B, 0, nh, start, end)
    if par:
        for j in prange(mf, num_threads=B.n_threads, schedule="dynamic"):
            _scan_feature(B, B.features[j], start, end, &B.feat_best[j])
    else:
        for j in range(mf):
            _scan_feature(B, B.features[j], start, end, &B.feat_best[j])
    for j in range(mf):
        r = &B.feat_best[j]
        if r.feature < 0:
            continue
        if r.cost < best.cost or (r.cost == best.cost and r.feature < best.feature):
            best[0] = r[0]
    if best.feature < 0:
        return
    best.improvement = parent_cost - best.cost
    if not (best.improvement > 1e-12 * scale) or best.improvement < B.min_impurity_decrease * B.w_root:
        best.feature = -1    # 000: no split decreases the training objective (or not enough)


cdef void _partition(Builder* B, SplitRecord* s, intp_t start, intp_t end) noexcept nogil:
    """Route the node's samples: first child first, stable, in place."""
    cdef intp_t p, i, q, r, f = s.feature, n = B.n, b, j, d = B.d
    cdef const uint8_t* xb
    cdef int32_t* ti
    cdef int32_t* si
    # 1. goes_left per sample
    if s.is_cat:
        xb = B.Xb + f
        for p in range(start, end):
            i = B.samples[p]
            b = xb[i * d]
            B.goes_left[i] = (s.cat_bits[b >> 6] >> (b & 63)) & 1
    elif B.mode == MODE_HIST:
        xb = B.Xb + f
        for p in range(start, end):
            i = B.samples[p]
            B.goes_left[i] = xb[i * d] <= s.bin
    else:
        si = B.Si + f * n
        for p in range(start, end):
            B.goes_left[si[p]] = p <= s.bin
    # 2. samples (stable)
    ti = B.tmp_i
    q = start
    r = 0
    for p in range(start, end):
        i = B.samples[p]
        if B.goes_left[i]:
            B.samples[q] = i
            q += 1
        else:
            ti[r] = <int32_t>i
            r += 1
    for p in range(r):
        B.samples[q + p] = ti[p]
    # 3. exact: the sorted arrays of every numeric feature (parallel over features)
    if B.mode == MODE_EXACT:
        if (end - start) * d >= B.par_work and B.n_threads > 1:
            for j in prange(d, num_threads=B.n_threads, schedule="static"):
                if not B.is_cat[j]:
                    _partition_sorted(B, j, start, end, threadid())
        else:
            for j in range(d):
                if not B.is_cat[j]:
                    _partition_sorted(B, j, start, end, 0)


cdef void _partition_sorted(Builder* B, intp_t f, intp_t start, intp_t end, int tid) noexcept nogil:
    cdef intp_t n = B.n, p, q = start, r = 0, i
    cdef int32_t* si = B.Si + f * n
    cdef double* xs = B.Xs + f * n
    cdef int32_t* ti = B.tmp_i + tid * n
    cdef double* tv = B.tmp_v + tid * n
    for p in range(start, end):
        i = si[p]
        if B.goes_left[i]:
            si[q] = <int32_t>i
            xs[q] = xs[p]
            q += 1
        else:
            ti[r] = <int32_t>i
            tv[r] = xs[p]
            r += 1
    memcpy(si + q, ti, r * sizeof(int32_t))
    memcpy(xs + q, tv, r * sizeof(double))


# frontier: a stack (depth-first) or a max-heap on (improvement, -node) (best-first)

cdef inline bint _before(Pending* a, Pending* b) noexcept nogil:
    """a is expanded before b (best-first): larger decrease, then smaller node id."""
    if a.split.improvement > b.split.improvement:
        return True
    if a.split.improvement < b.split.improvement:
        return False
    return a.node < b.node


cdef void _heap_push(Pending* h, intp_t* size, Pending* x) noexcept nogil:
    cdef intp_t i = size[0], parent
    cdef Pending tmp
    h[i] = x[0]
    size[0] += 1
    while i > 0:
        parent = (i - 1) // 2
        if _before(&h[i], &h[parent]):
            tmp = h[i]; h[i] = h[parent]; h[parent] = tmp
            i = parent
        else:
            break


cdef void _heap_pop(Pending* h, intp_t* size, Pending* out) noexcept nogil:
    cdef intp_t i = 0, l, r, m, n
    cdef Pending tmp
    out[0] = h[0]
    size[0] -= 1
    n = size[0]
    h[0] = h[n]
    while True:
        l = 2 * i + 1
        r = l + 1
        m = i
        if l < n and _before(&h[l], &h[m]):
            m = l
        if r < n and _before(&h[r], &h[m]):
            m = r
        if m == i:
            break
        tmp = h[i]; h[i] = h[m]; h[m] = tmp
        i = m


cdef struct Deferred:
    intp_t node              # global id of the leaf whose subtree is grown later
    intp_t start
    intp_t end
    intp_t depth


cdef struct DeferList:
    Deferred* items
    intp_t size
    intp_t cap


cdef int _grow(Builder* B, intp_t start, intp_t end, intp_t depth0, int best_first,
               intp_t max_leaf_nodes, intp_t cutoff, DeferList* defer) noexcept nogil:
    """000 'Tree Predictors': start from one leaf, repeatedly replace a leaf by an
    internal node and two leaves.  Depth-first (a stack) or best-first (a heap on
    the decrease of the training objective).

    With cutoff > 0, a new leaf with fewer than ``cutoff`` examples is not expanded
    here: it goes to ``defer`` and its subtree is grown on its own later (possibly on
    another thread).  The rule depends on sizes only, never on the thread count."""
    cdef Pending* front = NULL
    cdef intp_t fsize = 0, fcap = 64, n_leaves = 1, node, mid, c
    cdef Pending cur
    cdef Pending kids[2]
    cdef SplitRecord sp
    cdef void* p
    front = <Pending*>malloc(fcap * sizeof(Pending))
    if front == NULL:
        return -1
    node = _new_node(B, start, end, depth0)
    if node < 0:
        free(front)
        return -1
    _evaluate(B, node, start, end, depth0, &cur.split)
    if cur.split.feature >= 0:
        cur.node = node; cur.start = start; cur.end = end; cur.depth = depth0
        front[0] = cur
        fsize = 1
    while fsize > 0:
        if max_leaf_nodes > 0 and n_leaves >= max_leaf_nodes:
            break
        if best_first:
            _heap_pop(front, &fsize, &cur)
        else:
            fsize -= 1
            cur = front[fsize]
        sp = cur.split
        _partition(B, &sp, cur.start, cur.end)
        mid = cur.start + sp.n_left
        node = cur.node
        B.feature[node] = sp.feature
        B.threshold[node] = sp.threshold
        B.node_cat[node] = sp.is_cat
        memcpy(B.cat_bits + node * NWORDS, sp.cat_bits, NWORDS * sizeof(uint64_t))
        B.improvement[node] = sp.improvement
        n_leaves += 1
        # first child, then second child (node ids in creation order)
        kids[0].start = cur.start; kids[0].end = mid
        kids[1].start = mid; kids[1].end = cur.end
        for c in range(2):
            kids[c].depth = cur.depth + 1
            kids[c].node = _new_node(B, kids[c].start, kids[c].end, kids[c].depth)
            if kids[c].node < 0:
                free(front)
                return -1
            if cutoff > 0 and kids[c].end - kids[c].start < cutoff:
                kids[c].split.feature = -1
                if defer.size >= defer.cap:
                    defer.cap = 2 * defer.cap + 16
                    p = realloc(defer.items, defer.cap * sizeof(Deferred))
                    if p == NULL:
                        free(front)
                        return -1
                    defer.items = <Deferred*>p
                defer.items[defer.size].node = kids[c].node
                defer.items[defer.size].start = kids[c].start
                defer.items[defer.size].end = kids[c].end
                defer.items[defer.size].depth = kids[c].depth
                defer.size += 1
            else:
                _evaluate(B, kids[c].node, kids[c].start, kids[c].end, kids[c].depth, &kids[c].split)
        B.left[node] = kids[0].node
        B.right[node] = kids[1].node
        if fsize + 2 > fcap:
            fcap *= 2
            p = realloc(front, fcap * sizeof(Pending))
            if p == NULL:
                free(front)
                return -1
            front = <Pending*>p
        if best_first:
            for c in range(2):
                if kids[c].split.feature >= 0:
                    _heap_push(front, &fsize, &kids[c])
        else:
            for c in range(1, -1, -1):     # second child below the first: first child expanded first
                if kids[c].split.feature >= 0:
                    front[fsize] = kids[c]
                    fsize += 1
    free(front)
    return 0


cdef void _free_nodes(Builder* B) noexcept nogil:
    free(B.left); free(B.right); free(B.feature); free(B.threshold); free(B.node_cat)
    free(B.cat_bits); free(B.value); free(B.impurity); free(B.n_node_samples); free(B.w_node)
    free(B.depth); free(B.improvement)
    B.left = NULL; B.right = NULL; B.feature = NULL; B.threshold = NULL; B.node_cat = NULL
    B.cat_bits = NULL; B.value = NULL; B.impurity = NULL; B.n_node_samples = NULL; B.w_node = NULL
    B.depth = NULL; B.improvement = NULL


cdef int _merge(Builder* G, Builder* L, intp_t g) noexcept nogil:
    """Append subtree L (its node 0 is G's leaf g) to G, renumbering L's nodes."""
    cdef intp_t j, gj, base, V = G.K if G.K > 0 else 1, l, r
    base = G.n_nodes - 1          # local j >= 1  ->  base + j
    while G.n_nodes + L.n_nodes - 1 > G.cap:
        if _grow_storage(G) != 0:
            return -1
    for j in range(L.n_nodes):
        gj = g if j == 0 else base + j
        l = L.left[j]
        r = L.right[j]
        G.left[gj] = -1 if l < 0 else base + l
        G.right[gj] = -1 if r < 0 else base + r
        G.feature[gj] = L.feature[j]
        G.threshold[gj] = L.threshold[j]
        G.node_cat[gj] = L.node_cat[j]
        memcpy(G.cat_bits + gj * NWORDS, L.cat_bits + j * NWORDS, NWORDS * sizeof(uint64_t))
        memcpy(G.value + gj * V, L.value + j * V, V * sizeof(double))
        G.impurity[gj] = L.impurity[j]
        G.n_node_samples[gj] = L.n_node_samples[j]
        G.w_node[gj] = L.w_node[j]
        G.depth[gj] = L.depth[j]
        G.improvement[gj] = L.improvement[j]
    G.n_nodes += L.n_nodes - 1
    return 0


cdef struct PaddedBuilder:
    Builder b
    char pad[128]


cdef int _grow_deferred(Builder* B, DeferList* defer, int best_first, uint64_t seed) noexcept nogil:
    """Grow every deferred subtree with its own scratch and node storage (in parallel over
    subtrees, dynamic schedule), then append them to B in list order: the result does not
    depend on the number of threads.  max_features draws come from a generator seeded by
    (seed, subtree index)."""
    cdef intp_t nd = defer.size, s, t, j, d = B.d, K = B.K, nt = B.n_threads
    cdef intp_t hsz = d * B.max_bins * B.stride, ssz = d * B.scr_stride
    cdef Builder* subs = NULL
    cdef double* hist_all = NULL
    cdef double* scr_all = NULL
    cdef double* key_all = NULL
    cdef intp_t* ord_all = NULL
    cdef SplitRecord* fb_all = NULL
    cdef intp_t* feat_all = NULL
    cdef double* tot_all = NULL
    cdef intp_t* lhh_all = NULL
    cdef uint8_t* gl_all = NULL
    cdef PaddedBuilder* tb = NULL
    cdef int rc = 0, tid
    cdef uint64_t st
    if nt > nd:
        nt = nd
    if B.n * B.d < 4 * B.par_work:
        nt = 1
    subs = <Builder*>calloc(nd, sizeof(Builder))
    hist_all = <double*>calloc(nt * hsz, sizeof(double))
    scr_all = <double*>malloc(nt * ssz * sizeof(double))
    key_all = <double*>malloc(nt * B.cat_stride * sizeof(double))
    ord_all = <intp_t*>malloc(nt * B.cat_stride * sizeof(intp_t))
    # per-thread blocks padded by 16 elements (>= a cache line): no false sharing between threads
    fb_all = <SplitRecord*>malloc(nt * (d + 1) * sizeof(SplitRecord))
    feat_all = <intp_t*>malloc(nt * (d + 16) * sizeof(intp_t))
    tot_all = <double*>malloc(nt * (K + 18) * sizeof(double))
    lhh_all = <intp_t*>malloc(nt * (3 * d + 16) * sizeof(intp_t))
    tb = <PaddedBuilder*>calloc(nt, sizeof(PaddedBuilder))
    gl_all = <uint8_t*>malloc(nt * B.n * sizeof(uint8_t)) if nt > 1 else B.goes_left
    if (gl_all == NULL or subs == NULL or hist_all == NULL or scr_all == NULL or key_all == NULL or ord_all == NULL
            or fb_all == NULL or feat_all == NULL or tot_all == NULL or lhh_all == NULL or tb == NULL):
        rc = -1
    else:
        for s in prange(nd, num_threads=nt, schedule="dynamic"):
            tid = threadid()
            # grow in this thread's own (padded) Builder, then hand the nodes over to subs[s]
            tb[tid].b = B[0]
            tb[tid].b.n_threads = 1
            tb[tid].b.tmp_i = B.tmp_i + tid * B.n
            tb[tid].b.goes_left = gl_all + tid * B.n     # per thread: no false sharing
            tb[tid].b.tmp_v = B.tmp_v + (tid * B.n if B.mode == MODE_EXACT else 0)
            tb[tid].b.hist = hist_all + tid * hsz
            tb[tid].b.scratch = scr_all + tid * ssz
            tb[tid].b.catkey = key_all + tid * B.cat_stride
            tb[tid].b.catord = ord_all + tid * B.cat_stride
            tb[tid].b.feat_best = fb_all + tid * (d + 1)
            tb[tid].b.features = feat_all + tid * (d + 16)
            tb[tid].b.node_tot = tot_all + tid * (K + 18)
            tb[tid].b.lo = lhh_all + tid * (3 * d + 16)
            tb[tid].b.hi = lhh_all + tid * (3 * d + 16) + d
            tb[tid].b.hlist = lhh_all + tid * (3 * d + 16) + 2 * d
            for j in range(d):
                tb[tid].b.features[j] = j
            st = seed ^ (<uint64_t>(s + 1) * <uint64_t>0x9E3779B97F4A7C15)
            tb[tid].b.rng = st
            tb[tid].b.left = NULL; tb[tid].b.right = NULL; tb[tid].b.feature = NULL
            tb[tid].b.threshold = NULL; tb[tid].b.node_cat = NULL; tb[tid].b.cat_bits = NULL
            tb[tid].b.value = NULL; tb[tid].b.impurity = NULL; tb[tid].b.n_node_samples = NULL
            tb[tid].b.w_node = NULL; tb[tid].b.depth = NULL; tb[tid].b.improvement = NULL
            tb[tid].b.n_nodes = 0
            tb[tid].b.cap = 0
            tb[tid].b.failed = 0
            if _grow(&tb[tid].b, defer.items[s].start, defer.items[s].end, defer.items[s].depth,
                     best_first, 0, 0, NULL) != 0:
                tb[tid].b.failed = 1
            subs[s] = tb[tid].b
        for s in range(nd):
            if subs[s].failed or rc != 0:
                rc = -1
            elif _merge(B, &subs[s], defer.items[s].node) != 0:
                rc = -1
    if subs != NULL:
        for s in range(nd):
            _free_nodes(&subs[s])
    free(subs); free(hist_all); free(scr_all); free(key_all); free(ord_all); free(fb_all)
    free(feat_all); free(tot_all); free(lhh_all); free(tb)
    if nt > 1:
        free(gl_all)
    return rc


# ---------------------------------------------------------------------------
# Python entry points

def build_tree(int mode, int criterion, intp_t n_classes,
               double[:, ::1] Xs,              # IN/OUT exact: sorted values per feature (d, n); scratch
               int32_t[:, ::1] Si,             # IN/OUT exact: sorted sample indices per feature (d, n)
               const uint8_t[:, ::1] Xb,       # IN codes (n, d): hist mode, and categorical features
               const double[:, ::1] edges,     # IN (d, hist_bins): threshold of "code <= b"
               const uint8_t[::1] is_cat,      # IN (d,)
               const intp_t[::1] n_bins,       # IN (d,)
               const intp_t[::1] ycls,         # IN (n,) class index (classification)
               const double[::1] yreg,         # IN (n,) target (regression)
               const double[::1] sample_weight,  # IN (n,)
               intp_t max_depth, intp_t min_samples_split, intp_t min_samples_leaf,
               double min_impurity_decrease, intp_t max_leaf_nodes, intp_t max_features,
               bint best_first, unsigned long long seed, int n_threads, intp_t par_work=131072,
               intp_t decompose_min=20000):
    """Grow one tree; return a dict of numpy node arrays.

    Every input is validated by smml.tree before this call (shapes, codes below
    hist_bins, class indices below n_classes, non-negative weights).
    """
    cdef Builder B
    cdef intp_t n = sample_weight.shape[0], d = is_cat.shape[0], K = n_classes, j, V
    cdef intp_t hist_bins = edges.shape[1]
    cdef int rc
    cdef intp_t dummy_i = 0, cutoff
    cdef double dummy_d = 0.0
    cdef DeferList defer
    defer.items = NULL
    defer.size = 0
    defer.cap = 0
    memset(&B, 0, sizeof(Builder))
    B.mode = mode
    B.criterion = criterion
    B.K = K
    B.n = n
    B.d = d
    B.max_bins = hist_bins
    B.stride = 2 + (K if K > 0 else 1)
    B.n_threads = max(1, n_threads)
    B.par_work = par_work
    B.w = &sample_weight[0]
    B.ycls = &ycls[0] if K > 0 else &dummy_i
    B.yreg = &yreg[0] if K == 0 else &dummy_d
    B.Xs = &Xs[0, 0]
    B.Si = &Si[0, 0]
    B.Xb = &Xb[0, 0]
    B.edges = &edges[0, 0]
    B.is_cat = &is_cat[0]
    B.n_bins = &n_bins[0]
    B.max_features = max_features if 0 < max_features <= d else d
    B.rng = seed
    B.max_depth = max_depth
    B.min_samples_split = max(2, min_samples_split)
    B.min_samples_leaf = max(1, min_samples_leaf)
    B.min_impurity_decrease = min_impurity_decrease
    B.w_root = 0.0
    for j in range(n):
        B.w_root += sample_weight[j]
    B.samples = <intp_t*>malloc(n * sizeof(intp_t))
    B.goes_left = <uint8_t*>malloc(n * sizeof(uint8_t))
    B.tmp_i = <int32_t*>malloc(B.n_threads * n * sizeof(int32_t))
    B.tmp_v = <double*>malloc(B.n_threads * n * sizeof(double)) if mode == MODE_EXACT else <double*>malloc(8)
    B.hist = <double*>calloc(d * hist_bins * B.stride, sizeof(double))
    # per-feature running sums, a cache line apart: features scanned on different threads
    # must not share a line (false sharing)
    B.scr_stride = ((2 * K + 2 + 7) // 8) * 8 + 8
    B.scratch = <double*>malloc(d * B.scr_stride * sizeof(double))
    B.cat_stride = 1                      # the category-ordering buffers serve categorical features only
    for j in range(d):
        if is_cat[j]:
            B.cat_stride = d * MAXCAT
    B.catkey = <double*>malloc(B.cat_stride * sizeof(double))
    B.catord = <intp_t*>malloc(B.cat_stride * sizeof(intp_t))
    B.feat_best = <SplitRecord*>malloc(d * sizeof(SplitRecord))
    B.features = <intp_t*>malloc(d * sizeof(intp_t))
    B.node_tot = <double*>malloc((K + 2) * sizeof(double))
    B.lo = <intp_t*>malloc(d * sizeof(intp_t))
    B.hi = <intp_t*>malloc(d * sizeof(intp_t))
    B.hlist = <intp_t*>malloc(d * sizeof(intp_t))
    try:
        if (B.samples == NULL or B.goes_left == NULL or B.tmp_i == NULL or B.tmp_v == NULL or B.hist == NULL
                or B.scratch == NULL or B.catkey == NULL or B.catord == NULL or B.feat_best == NULL
                or B.features == NULL or B.node_tot == NULL or B.lo == NULL or B.hi == NULL
                or B.hlist == NULL):
            raise MemoryError("smml.tree: could not allocate the growth buffers")
        for j in range(n):
            B.samples[j] = j
        for j in range(d):
            B.features[j] = j
        # Subtrees below `cutoff` examples are grown independently, on several threads
        # when there are several (only without max_leaf_nodes, whose count is global; only
        # from decompose_min samples on, so small problems keep the plain growth order).
        cutoff = 0
        if max_leaf_nodes <= 0 and n >= decompose_min:
            cutoff = max(2, n // 16)
        with nogil:
            rc = _grow(&B, 0, n, 0, best_first, max_leaf_nodes, cutoff, &defer)
            if rc == 0 and defer.size > 0:
                rc = _grow_deferred(&B, &defer, best_first, seed)
        if rc != 0 or B.failed:
            raise MemoryError("smml.tree: out of memory while growing the tree")
        m = B.n_nodes
        V = K if K > 0 else 1
        out = {
            "children_left": np.asarray(<intp_t[:m]>B.left).copy(),
            "children_right": np.asarray(<intp_t[:m]>B.right).copy(),
            "feature": np.asarray(<intp_t[:m]>B.feature).copy(),
            "threshold": np.asarray(<double[:m]>B.threshold).copy(),
            "is_categorical": np.asarray(<uint8_t[:m]>B.node_cat).copy().astype(bool),
            "category_bits": np.asarray(<uint64_t[:m * NWORDS]>B.cat_bits).copy().reshape(m, NWORDS),
            "value": np.asarray(<double[:m * V]>B.value).copy().reshape(m, V),
            "impurity": np.asarray(<double[:m]>B.impurity).copy(),
            "n_node_samples": np.asarray(<intp_t[:m]>B.n_node_samples).copy(),
            "weighted_n_node_samples": np.asarray(<double[:m]>B.w_node).copy(),
            "depth": np.asarray(<intp_t[:m]>B.depth).copy(),
            "improvement": np.asarray(<double[:m]>B.improvement).copy(),
        }
        return out
    finally:
        free(B.samples); free(B.goes_left); free(B.tmp_i); free(B.tmp_v); free(B.hist)
        free(B.scratch); free(B.catkey); free(B.catord); free(B.feat_best); free(B.features)
        free(B.node_tot); free(B.lo); free(B.hi); free(B.hlist)
        free(defer.items)
        _free_nodes(&B)


cdef packed struct PNode:
    # one prediction node in 24 bytes (one cache line holds a node and most of the next)
    double threshold
    int32_t feature
    int32_t left         # -1: leaf
    int32_t right
    int32_t is_cat       # categorical test: index of the node's 4-word bitset in `bits`, else -1


PNODE_DTYPE = np.dtype([("threshold", np.float64), ("feature", np.int32), ("left", np.int32),
                        ("right", np.int32), ("is_cat", np.int32)])


cdef inline intp_t _route(const floating* x, const PNode* nodes, const uint64_t* bits) noexcept nogil:
    """000: start at the root; at an internal node go to the child its test picks."""
    cdef intp_t node = 0, c
    cdef const PNode* nd = nodes
    cdef double v
    cdef int go_right
    while nd.left >= 0:
        v = x[nd.feature]
        if nd.is_cat >= 0:
            # categories are codes 0..255; unknown categories (-1 or >= 256) go to the second child
            c = <intp_t>v
            go_right = not (0 <= c < MAXCAT and (bits[nd.is_cat * NWORDS + (c >> 6)] >> (c & 63)) & 1)
        else:
            go_right = not (v <= nd.threshold)
        node = nd.left + go_right          # the second child is always stored right after the first
        nd = nodes + node
    return node


def apply_tree(const floating[:, ::1] X,          # IN (n, d)
               const uint8_t[::1] packed,         # IN PNODE_DTYPE records as bytes
               const uint64_t[:, ::1] category_bits,  # IN (n_nodes, 4)
               intp_t[::1] out,                   # OUT (n,) leaf index per row
               int n_threads):
    cdef intp_t i, n = X.shape[0]
    cdef const PNode* nodes = <const PNode*>&packed[0]
    cdef const uint64_t* bits = &category_bits[0, 0]
    if n == 0:
        return
    if n < 2048:
        n_threads = 1
    with nogil:
        for i in prange(n, num_threads=max(1, n_threads), schedule="static"):
            out[i] = _route(&X[i, 0], nodes, bits)


def path_sums(const floating[:, ::1] X,          # IN (n, d)
              const double[:, ::1] T,             # IN (n, k) per-sample quantities to add along the path
              const intp_t[::1] children_left,
              const intp_t[::1] children_right,
              const intp_t[::1] feature,
              const double[::1] threshold,
              const uint8_t[::1] is_categorical,
              const uint64_t[:, ::1] category_bits,
              double[:, ::1] out):                 # OUT (n_nodes, k) sums over the samples routed through each node
    """Serial (a plain sum per node, deterministic)."""
    cdef intp_t i, j, node, f, c, n = X.shape[0], k = T.shape[1]
    cdef double v
    with nogil:
        for i in range(n):
            node = 0
            while True:
                for j in range(k):
                    out[node, j] += T[i, j]
                if children_left[node] < 0:
                    break
                f = feature[node]
                v = X[i, f]
                if is_categorical[node]:
                    c = <intp_t>v
                    if 0 <= c < MAXCAT and (category_bits[node, c >> 6] >> (c & 63)) & 1:
                        node = children_left[node]
                    else:
                        node = children_right[node]
                elif v <= threshold[node]:
                    node = children_left[node]
                else:
                    node = children_right[node]


cdef inline intp_t _lower_bound(const double* e, intp_t m, double v) noexcept nogil:
    """Number of the m >= 1 sorted edges below v, without data-dependent branches."""
    cdef intp_t base = 0, half
    while m > 1:
        half = m >> 1
        base = base + half if e[base + half] < v else base
        m = m - half
    return base + (e[base] < v)


def bin_columns(const floating[:, ::1] X,      # IN (n, d)
                const double[:, ::1] edges,      # IN (d, n_edges_max) ascending, padded with +inf
                const intp_t[::1] n_edges,       # IN (d,)
                const uint8_t[::1] skip,         # IN (d,) 1: leave that column of out untouched
                uint8_t[:, ::1] out,             # OUT (n, d): number of edges < x  (so code <= b  <=>  x <= edges[b])
                int n_threads):
    cdef intp_t f, i, n = X.shape[0], d = X.shape[1]
    with nogil:
        for i in prange(n, num_threads=max(1, n_threads), schedule="static"):
            for f in range(d):
                if skip[f] or n_edges[f] == 0:
                    if not skip[f]:
                        out[i, f] = 0
                    continue
                out[i, f] = <uint8_t>_lower_bound(&edges[f, 0], n_edges[f], X[i, f])
