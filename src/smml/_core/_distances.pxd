# Distance tiles, exact distances and the bounded (key, index) heap: the pieces
# every distance-based kernel shares (k-NN, kernel Gram matrices, k-means).
# Written once, here, as inline functions so that each kernel's hot loop
# inlines them; cimport them, never copy them.
#
# Conventions: row-major operands; a "tile" is the (nqb x ntb) block of query
# rows Q[q0:q0+nqb] against training rows T[t0:t0+ntb]; keys are float64.
from libc.math cimport fabs
from smml._core._typedefs cimport floating, intp_t
from smml._core._blas cimport _gemm, _gemv

cdef enum:
    SQEUCLIDEAN = 0      # squared Euclidean distance (no square root: no two keys merge)
    MANHATTAN = 1        # sum of absolute differences
    HAMMING = 2          # number of differing coordinates (002)

cdef enum:
    GEMV_ROWS = 6        # tiles of at most this many query rows: one gemv per row


ctypedef struct Pair:
    double key
    intp_t idx


cdef inline int cmp_pair(const void *a, const void *b) noexcept nogil:
    """qsort order on (key, index)."""
    cdef const Pair *p = <const Pair *> a
    cdef const Pair *q = <const Pair *> b
    if p.key < q.key:
        return -1
    if p.key > q.key:
        return 1
    if p.idx < q.idx:
        return -1
    if p.idx > q.idx:
        return 1
    return 0


cdef inline double exact_key(const floating *a, const floating *b, intp_t d,
                             int metric) noexcept nogil:
    """The notes' distance (squared for Euclidean), by direct subtraction in float64,
    summed feature by feature in order: the exact key every fast path is checked against."""
    cdef double s = 0.0, t
    cdef intp_t f
    if metric == SQEUCLIDEAN:
        for f in range(d):
            t = <double> a[f] - <double> b[f]
            s = s + t * t
    elif metric == MANHATTAN:
        for f in range(d):
            s = s + fabs(<double> a[f] - <double> b[f])
    else:
        for f in range(d):
            if a[f] != b[f]:
                s = s + 1.0
    return s


cdef inline void neg2_dot_tile(int nqb, int ntb, int d, const floating *Qr, const floating *Tr,
                               floating *tile) noexcept nogil:
    """tile (nqb x ntb) = -2 Qr @ Tr.T, with Qr (nqb x d) and Tr (ntb x d) row-major.

    A tile of at most ``GEMV_ROWS`` query rows goes through one gemv per row, which
    reads the training block without packing it (measured 2-4 times faster than gemm's
    packed product for so few rows); the block stays in cache between the rows.
    """
    cdef floating alpha = -2.0, beta = 0.0
    cdef int r
    if nqb <= GEMV_ROWS:
        for r in range(nqb):
            _gemv(False, ntb, d, alpha, Tr, d, Qr + r * d, 1, beta, tile + r * ntb, 1)
    else:
        _gemm(False, True, nqb, ntb, d, alpha, Qr, d, Tr, d, beta, tile, ntb)


cdef inline void sqdist_tile(int nqb, int ntb, int d, const floating *Qr, const floating *Tr,
                             const double *q_norm, const double *t_norm,
                             floating *tile) noexcept nogil:
    """tile = ||q||^2 - 2 q.t + ||t||^2, clamped at 0: approximate squared distances
    (gemm rounding; callers that must be exact re-check with :func:`exact_key`).
    ``q_norm`` / ``t_norm`` are the squared norms of the tile's rows."""
    cdef intp_t i, j
    cdef floating *row
    cdef double v
    neg2_dot_tile(nqb, ntb, d, Qr, Tr, tile)
    for i in range(nqb):
        row = tile + i * ntb
        for j in range(ntb):
            v = <double> row[j] + q_norm[i] + t_norm[j]
            row[j] = <floating> (v if v > 0.0 else 0.0)


cdef inline bint pair_less(double a, intp_t ia, double b, intp_t ib) noexcept nogil:
    """(a, ia) < (b, ib) in the order (key, index)."""
    return a < b or (a == b and ia < ib)


cdef inline void heap_push(double *vals, intp_t *idxs, intp_t *size, intp_t cap,
                           double v, intp_t i) noexcept nogil:
    """Push (v, i) into a max-heap on (key, index) of at most ``cap`` entries.

    The caller has checked that (v, i) belongs in the heap (heap not full, or
    (v, i) smaller than the root); a full heap drops its root.
    """
    cdef intp_t pos, parent, child
    if size[0] < cap:
        pos = size[0]
        size[0] += 1
        while pos > 0:
            parent = (pos - 1) >> 1
            if pair_less(vals[parent], idxs[parent], v, i):
                vals[pos] = vals[parent]
                idxs[pos] = idxs[parent]
                pos = parent
            else:
                break
        vals[pos] = v
        idxs[pos] = i
        return
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= cap:
            break
        if child + 1 < cap and pair_less(vals[child], idxs[child], vals[child + 1], idxs[child + 1]):
            child += 1
        if pair_less(v, i, vals[child], idxs[child]):
            vals[pos] = vals[child]
            idxs[pos] = idxs[child]
            pos = child
        else:
            break
    vals[pos] = v
    idxs[pos] = i
