# The histograms of the tree kernels (_tree.pyx, _gbm.pyx): built from uint8 codes, scanned
# for the best split, subtracted from a parent's.  Written once, here, as inline functions so
# that each kernel's hot loops inline them; cimport them, never copy them.  The costs, the
# split record and the scan state are in _criterion.pxd.
#
# Layout: a feature's histogram is `max_bins` bins of `stride` doubles, bin b = [count,
# sum w, then the K class weights (classification) or sum w y (regression, K = 0)], so
# stride = 2 + max(K, 1).  A regression histogram is a (count, sum h, sum g) histogram of
# second-order boosting with h = w and g = w y (002 "XGBoost"): its leaf value S/W and split
# score are the boosting ones with lambda = 0.  The boosting kernel (_gbm.pyx) fills
# histograms without the count (Targets.no_counts): bin b = [sum h, sum g], stride 2, 16 bytes
# (aligned to 16 bytes, a bin never straddles two cache lines and is added in one vector
# operation), with h = hessian, g = gradient, and sets Targets.reg_lambda and
# min_child_weight; both kernels scan numerical features with scan_bins.  The scans read a
# histogram and leave it as it is (a caller that subtracts a sibling's histogram keeps it; the
# tree kernel clears the bins it used).
#
# Tie rule: the first (lowest) candidate with the smallest cost wins.
from smml._core._typedefs cimport intp_t, uint8_t
from smml._core._criterion cimport (MAXCAT, Targets, ScanState, cost_lr, score_reg, init_scan)

cdef extern from "smml_prefetch.h":
    void smml_prefetch_row3(const void* a, intp_t na, const void* b, intp_t nb, const void* c,
                            intp_t nc) noexcept nogil

cdef extern from "smml_histogram.h":
    void smml_hist_row_hg(double* b, intp_t fstride, const uint8_t* row, intp_t nf, double hi,
                          double gi) noexcept nogil
    void smml_hist_hg_rows(double* hist, intp_t fstride, const uint8_t* codes, intp_t d, intp_t f0,
                           intp_t nf, const intp_t* samples, intp_t start, intp_t end, const double* h,
                           const double* g, int prefetch) noexcept nogil

# hist_build's prefetch: the rows GATHER_AHEAD places on are asked for, when the data do not
# fit in the cache (codes and targets over GATHER_MIN_BYTES) and a node's rows lie far apart
# in X (over GATHER_MIN_GAP bytes of codes between one and the next, on average): each is then
# a cache miss, which the hardware's own prefetcher does not foresee.  Rows closer together
# (a large node's) it streams, and the prefetches would only cost their instructions.
cdef enum:
    GATHER_AHEAD = 16
    GATHER_MIN_BYTES = 1 << 20
    GATHER_MIN_GAP = 256


cdef inline bint gather_prefetch(intp_t n, intp_t d, intp_t nn) noexcept nogil:
    """Whether hist_build should prefetch the nn rows of a node, out of n rows of d codes
    (and 16 bytes of targets each)."""
    return n * (d + 16) > GATHER_MIN_BYTES and n * d >= GATHER_MIN_GAP * nn


cdef inline bint _empty(bint no_counts, const double* hb) noexcept nogil:
    if no_counts:
        return hb[0] == 0.0 and hb[1] == 0.0
    return hb[0] == 0.0


cdef inline bint bin_empty(const Targets* t, const double* hb) noexcept nogil:
    """No sample in histogram bin hb (without counts: nothing to add, sum h = sum g = 0)."""
    return _empty(t.no_counts, hb)


cdef inline void hist_build(const Targets* t, double* hist, intp_t max_bins, intp_t stride,
                            intp_t* lo, intp_t* hi, const intp_t* feats, intp_t j0, intp_t j1,
                            const uint8_t* codes, intp_t d, const intp_t* samples,
                            intp_t start, intp_t end, bint prefetch) noexcept nogil:
    """Add samples[start:end] to the histograms of features feats[j0:j1] (all zero before),
    one pass over the rows: the codes are row-major (n, d), so a sample's codes share a
    cache line.  lo[f] / hi[f]: lowest / highest bin present.

    Small nodes (fewer samples than bins) track lo / hi while they add; large ones add
    only (regression / boosting: two or three adds per value) and find lo / hi from the
    counts afterwards.  Boosting's large nodes on consecutive features (all of them, without
    column sampling) take the C pass smml_hist_hg_rows (smml_histogram.h), the same sums in
    the same order.  With ``prefetch`` (gather_prefetch) the codes and targets of the row
    GATHER_AHEAD places on are asked for before each row is added; it changes no result."""
    cdef intp_t K = t.K, p, i, b, j, f, c = 0
    cdef const uint8_t* row
    cdef double* h
    cdef double wi, v
    cdef bint track = K > 0 or end - start < max_bins
    cdef intp_t f0 = d, f1 = -1, span, ahead = end - GATHER_AHEAD if prefetch else start
    # what is read of a row: its codes f0..f1, its weight (h) and its target (g, or its
    # class).  (The prefetch is a C helper: GCC deletes a Cython inline helper that only
    # prefetches.)
    cdef const char* tgt = <const char*>t.ycls if K > 0 else <const char*>t.wy
    cdef intp_t tsz = sizeof(intp_t) if K > 0 else sizeof(double)
    if j1 <= j0:
        return
    for j in range(j0, j1):
        f = feats[j]
        lo[f] = MAXCAT
        hi[f] = -1
        f0 = min(f0, f)
        f1 = max(f1, f)
    span = f1 - f0 + 1
    if not track:
        if t.no_counts and span == j1 - j0:      # (no_counts: stride 2)
            # consecutive features (all of them, without column sampling): the C pass
            smml_hist_hg_rows(hist, max_bins * stride, codes, d, f0, span, samples, start, end, t.w,
                              t.wy, prefetch)
        elif t.no_counts:
            for p in range(start, end):
                if p < ahead:
                    i = samples[p + GATHER_AHEAD]
                    smml_prefetch_row3(codes + i * d + f0, span, t.w + i, sizeof(double), tgt + i * tsz, tsz)
                i = samples[p]
                row = codes + i * d
                wi = t.w[i]
                v = t.wy[i]
                for j in range(j0, j1):
                    f = feats[j]
                    h = hist + (f * max_bins + row[f]) * stride
                    h[0] += wi
                    h[1] += v
        else:
            for p in range(start, end):
                if p < ahead:
                    i = samples[p + GATHER_AHEAD]
                    smml_prefetch_row3(codes + i * d + f0, span, t.w + i, sizeof(double), tgt + i * tsz, tsz)
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
        if p < ahead:
            i = samples[p + GATHER_AHEAD]
            smml_prefetch_row3(codes + i * d + f0, span, t.w + i, sizeof(double), tgt + i * tsz, tsz)
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
            if t.no_counts:
                h[0] += wi
                h[1] += v
            else:
                h[0] += 1.0
                h[1] += wi
                h[2 + c] += v


cdef inline bint _add_bin(intp_t K, bint no_counts, intp_t min_leaf, double mcw, double lam, int crit,
                          const double* tot, const double* hb, intp_t idx, intp_t nn, double* left,
                          double* right, ScanState* s) noexcept nogil:
    """add_bin_and_score on the Targets' fields, which the caller's loop holds in locals (so that
    the compiler keeps them in registers across the bins)."""
    cdef intp_t k
    cdef double c
    if no_counts:                       # boosting's (sum h, sum g) bins
        s.WL += hb[0]
        s.SL += hb[1]
    else:
        s.nL += <intp_t>hb[0]
        s.WL += hb[1]
        if K > 0:
            for k in range(K):
                left[k] += hb[2 + k]
        else:
            s.SL += hb[2]
    if not no_counts:
        if s.nL < min_leaf:
            return False
        if nn - s.nL < min_leaf:
            return True
    if mcw > 0.0:
        if s.WL < mcw:
            return False
        if s.WT - s.WL < mcw:
            return True
    if K > 0:
        c = cost_lr(left, tot, K, s.WL, s.WT - s.WL, crit, right)
    else:
        c = score_reg(s.SL, s.WL + lam, s.ST - s.SL, s.WT - s.WL + lam)
    if c < s.best:
        s.best = c
        s.best_idx = idx
        s.best_nl = s.nL
    return False


cdef inline bint add_bin_and_score(const Targets* t, const double* tot, const double* hb, intp_t idx,
                                   intp_t nn, double* left, double* right, ScanState* s) noexcept nogil:
    """Move histogram bin hb to the first side and score the split after it, keeping it as
    s.best_idx when it is strictly better (first best wins).  Return True when the second
    side has become smaller than min_samples_leaf, or its weight (sum of h) smaller than
    min_child_weight (the caller stops its scan)."""
    return _add_bin(t.K, t.no_counts, t.min_samples_leaf, t.min_child_weight, t.reg_lambda, t.criterion,
                    tot, hb, idx, nn, left, right, s)


cdef inline bint scan_bins(const Targets* t, const double* tot, const double* h, intp_t stride,
                           intp_t b0, intp_t b1, intp_t shift, intp_t nn, double* left, double* right,
                           ScanState* st) noexcept nogil:
    """Bins b0..b1-1 of histogram h, in order, move to the first side of st one by one (empty
    bins skipped), each split after a bin scored by add_bin_and_score (candidate index = bin +
    shift); return True when the scan stopped because the second side became too small.  The
    numerical scan of both tree kernels: scan_numeric (shift 0, from an empty first side) and
    boosting's scans with missing values (_gbm.pyx: the missing bin first, then the finite
    ones)."""
    cdef intp_t K = t.K, min_leaf = t.min_samples_leaf
    cdef bint no_counts = t.no_counts
    cdef double mcw = t.min_child_weight, lam = t.reg_lambda
    cdef int crit = t.criterion
    if K == 0 and no_counts:
        # boosting's histograms: the same loop with K and no_counts as constants, so that the
        # compiler folds their branches out of it
        return _scan_loop(0, True, min_leaf, mcw, lam, crit, tot, h, stride, b0, b1, shift, nn, left,
                          right, st)
    return _scan_loop(K, no_counts, min_leaf, mcw, lam, crit, tot, h, stride, b0, b1, shift, nn, left,
                      right, st)


cdef inline bint _scan_loop(intp_t K, bint no_counts, intp_t min_leaf, double mcw, double lam, int crit,
                            const double* tot, const double* h, intp_t stride, intp_t b0, intp_t b1,
                            intp_t shift, intp_t nn, double* left, double* right,
                            ScanState* st) noexcept nogil:
    """scan_bins' loop on the Targets' fields (in locals, or constants at a call site)."""
    cdef intp_t q
    cdef const double* hb
    for q in range(b0, b1):
        hb = h + q * stride
        if _empty(no_counts, hb):
            continue
        if _add_bin(K, no_counts, min_leaf, mcw, lam, crit, tot, hb, q + shift, nn, left, right, st):
            return True
    return False


cdef inline void scan_numeric(const Targets* t, const double* tot, const double* h, intp_t stride,
                              intp_t lo, intp_t hi, intp_t nn, double* left, double* right,
                              ScanState* st) noexcept nogil:
    """A numerical feature's histogram h (bins lo..hi present, nn samples): a candidate
    "code <= b" after every non-empty bin b < hi.  The best is st.best_idx (the bin)."""
    cdef intp_t k
    init_scan(t, tot, st)
    if lo >= hi:
        return
    for k in range(t.K):
        left[k] = 0.0
    scan_bins(t, tot, h, stride, lo, hi, 0, nn, left, right, st)


cdef inline void scan_categorical(const Targets* t, const double* tot, const double* h, intp_t stride,
                                  intp_t lo, intp_t hi, intp_t nn, double* left, double* right,
                                  double* key, intp_t* order, ScanState* st) noexcept nogil:
    """A categorical feature's histogram: order the categories present by a key and scan
    the prefixes of that order; the best prefix is order[0..st.best_idx].

    Binary classification: key = weighted proportion of the second class; regression:
    key = weighted mean target (Breiman: a prefix of this order is an optimal subset);
    multiclass: key = proportion of the node's most frequent class (a heuristic).
    Ties in the key are ordered by category code."""
    cdef intp_t K = t.K, b, k, m = 0, j, kmaj = 0, ow = 0 if t.no_counts else 1
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
        wb = h[b * stride + ow]
        if K > 0:
            kv = h[b * stride + 2 + kmaj] / wb if wb > 0.0 else 0.0
        else:
            kv = h[b * stride + ow + 1] / wb if wb > 0.0 else 0.0
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


