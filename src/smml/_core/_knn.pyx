"""k-nearest-neighbour search with the notes' distance-tie rule (000, 'The Nearest Neighbour algorithm').

For every query the kernels return a *candidate list* of at most ``cap`` training
points sorted by (exact key, training index) and a count ``k'``:

- the key is the distance computed exactly as the notes define it, by direct
  subtraction in float64, feature by feature in order (squared for Euclidean,
  so that no square root can merge two different values; the sum of absolute
  differences for Manhattan; the number of differing coordinates for Hamming);
- ``k'`` is the smallest integer >= k such that the (k'+1)-th point is strictly
  farther than the k'-th (000, 'The Nearest Neighbour algorithm'); the first
  ``k'`` candidates are exactly the points taken by the rule;
- ``k' = -1`` means the candidate list was too short to prove that no further
  point ties with the k-th one: the caller then scans that query exactly with
  :func:`exact_rows` (rare: many duplicates / ties at the k-th distance).

Euclidean fast path (:func:`knn_gemm`). Squared distances are approximated as
``||x||^2 - 2 x.y + ||y||^2`` with a BLAS gemm over (query chunk x training
chunk) tiles in per-thread buffers, and a bounded max-heap of ``cap`` entries
per query keeps the best approximate candidates. Every candidate's exact key is
then recomputed by direct subtraction and the candidates are sorted on it. If
``eps`` bounds the error ``|approx - exact|`` (the caller passes a rigorous
bound per query, see ``smml.neighbors._euclidean_error_bound``), every point
left out of the heap has ``exact >= heap_max_approx - eps``; so when
``heap_max_approx - eps > D_k`` (the exact k-th key among the candidates) no
excluded point can be at distance <= D_k, the candidates contain the k nearest
points and all their ties, and the result is exact. Otherwise the query is
flagged (-1). Given the error coefficient, the bound is narrowed per query to the
training points whose norm allows a key <= D_k (:func:`_pair_eps`), so one far
outlier does not loosen every query's bound. Results therefore do not depend on gemm rounding, chunk sizes or
thread counts.

Threads share out query chunks (:func:`knn_gemm`) or, when there are too few
queries to feed them, training chunks (:func:`knn_gemm_split_train`: per-thread heaps
merged on (approximate key, index) into exactly the serial heap). Query chunks of at
most ``GEMV_ROWS`` rows use gemv instead of gemm (see ``smml._core._distances.neg2_dot_tile``).

Other metrics, and data the gemm filter cannot take, are scanned exactly by the kd-tree
kernel over a one-leaf tree (``smml._core._kdtree``, ``smml.neighbors._flat_tree``).

Memory: per thread one tile (q_chunk x t_chunk) plus q_chunk heaps of ``cap``
entries; never n_queries x n_train.
"""
from libc.stdlib cimport malloc, free, qsort
from libc.math cimport nextafter, nextafterf, INFINITY, sqrt
from cython.parallel cimport prange, parallel

from smml._core._atomic cimport flag_set
from smml._core._typedefs cimport floating, intp_t
from smml._core._openmp cimport omp_get_thread_num
from smml._core._distances cimport (SQEUCLIDEAN, MANHATTAN, HAMMING, GEMV_ROWS, exact_key,
                                    neg2_dot_tile)
from smml._core._heap cimport Pair, cmp_pair, pair_less, heap_push
from smml._core._vote cimport majority

METRIC_CODES = {"sqeuclidean": SQEUCLIDEAN, "manhattan": MANHATTAN, "hamming": HAMMING}

cdef enum:
    _BLOCK = 64     # scan granularity of the candidate test

# The dtype of the original data (exact keys), independent of the gemm's dtype: float64
# data may be filtered through a float32 gemm (see smml.neighbors, _gemm_dtype).
ctypedef fused data_t:
    float
    double


cdef extern from "smml_distances.h":
    int smml_any_below_d(const double *r, const double *t, intp_t n, double top) noexcept nogil
    int smml_any_below_f(const float *r, const double *t, intp_t n, double top) noexcept nogil


cdef extern from "smml_distances.h" nogil:
    intp_t smml_first_below_d(const double *r, intp_t n, double top)
    intp_t smml_first_below_f(const float *r, intp_t n, float top)


cdef inline intp_t _first_below(const floating *row, intp_t n, double top) noexcept nogil:
    """The first j < n with row[j] < top, or n, possibly earlier: for float rows the test
    runs against the nearest float >= top (row[j] < top implies row[j] < that float), so a
    returned j may fail the exact test; none before it passes it."""
    cdef float topf
    if floating is double:
        return smml_first_below_d(row, n, top)
    else:
        topf = <float> top
        if <double> topf < top:
            topf = nextafterf(topf, INFINITY)
        return smml_first_below_f(row, n, topf)


cdef inline bint _any_below(const floating *row, const double *tn, intp_t n,
                            double top) noexcept nogil:
    """Is any row[j] + tn[j] below top? (A tile holding the whole key is scanned by
    :func:`_first_below` instead.)"""
    if floating is double:
        return smml_any_below_d(row, tn, n, top)
    else:
        return smml_any_below_f(row, tn, n, top)


cdef inline double _enter(double v, intp_t t, double *hvi, intp_t *hii, intp_t *hs,
                          intp_t cap, bint by_index, double top) noexcept nogil:
    """Training point t with tile key v into a query's bounded heap if it belongs there
    (see :func:`_scan_tile_rows`); returns the heap's new test bound."""
    if v != v:
        v = INFINITY            # NaN from an overflowing tile: sort it last
    if by_index:
        if hs[0] < cap or pair_less(v, t, hvi[0], hii[0]):
            heap_push(hvi, hii, hs, cap, v, t)
            top = nextafter(hvi[0], INFINITY) if hs[0] == cap else INFINITY
    elif v < top or hs[0] < cap:
        heap_push(hvi, hii, hs, cap, v, t)
        top = hvi[0] if hs[0] == cap else INFINITY
    return top


cdef inline void _scan_tile_rows(const floating *tile, const double *tn, intp_t nqb, intp_t ntb,
                                 intp_t t0, double *hv, intp_t *hi, intp_t *hs, intp_t cap,
                                 bint by_index) noexcept nogil:
    """Scan each row i < nqb of a tile (training points t0 .. t0 + ntb - 1) into query i's
    bounded heap (hv + i * cap, hi + i * cap, size hs[i]); key = tile value + tn (tn NULL:
    the tile value itself, from the augmented gemm of ``smml.neighbors``).

    by_index False (the tiles of a heap arrive in training order): a point enters when the
    heap is not full or its key is below the root's.  by_index True (a thread's chunks may
    come in any order): compare on (key, index), and scan every block holding a key <= the
    root's (the vectorised test's bound is the next double above the root).
    """
    cdef const floating *row
    cdef double *hvi
    cdef intp_t *hii
    cdef intp_t i, j, j0, j1
    cdef double v, top
    for i in range(nqb):
        row = tile + i * ntb
        hvi = hv + i * cap
        hii = hi + i * cap
        if by_index:
            top = nextafter(hvi[0], INFINITY) if hs[i] == cap else INFINITY
        else:
            top = hvi[0] if hs[i] == cap else INFINITY
        if tn == NULL:
            # the tile holds the whole key: jump from candidate to candidate (branch-free
            # test of 32 values at a time, _first_below); every value before the next one
            # returned is >= top, so the same points enter the heap as value by value
            j = 0
            while j < ntb:
                if hs[i] == cap:
                    j = j + _first_below(row + j, ntb - j, top)
                    if j >= ntb:
                        break
                top = _enter(<double> row[j], t0 + j, hvi, hii, &hs[i], cap, by_index, top)
                j += 1
            continue
        j0 = 0
        while j0 < ntb:
            j1 = j0 + _BLOCK
            if j1 > ntb:
                j1 = ntb
            # branch-free (vectorised) test first: most blocks hold no candidate
            if hs[i] < cap or _any_below(row + j0, tn + j0, j1 - j0, top):
                for j in range(j0, j1):
                    v = <double> row[j]
                    if tn != NULL:
                        v = v + tn[j]
                    top = _enter(v, t0 + j, hvi, hii, &hs[i], cap, by_index, top)
            j0 = j1


cdef inline double _pair_eps(double eps_q, double q_norm, double dk, double coef,
                            double delta) noexcept nogil:
    """The error bound that certifies a query whose exact k-th key is dk: the smaller of
    ``eps_q`` (the bound over every training point, from the largest training norm R) and
    the bound over the training points that could still be at key <= dk.

    The gemm error of a pair (q, t) is at most coef (||q~|| + ||t~||)^2 (the terms of
    ``smml.neighbors._euclidean_error_bound`` are per pair; the caller's eps_q takes the
    largest ||t~||). A point with ||t~|| > rho = (||q~|| (1 + delta) + sqrt(dk (1 + delta)))
    / (1 - delta) is farther than dk whatever the gemm says: its real distance is at least
    ||t - mu|| - ||q - mu|| >= ||t~|| (1 - delta) - ||q~|| (1 + delta) > sqrt(dk (1 + delta)),
    and the float64 exact key is within a factor (1 - delta / 2) of the real squared
    distance (``delta`` covers the centring and norm roundings and the key's own, see
    ``smml.neighbors._relative_slack``). So only points with ||t~|| <= rho matter, and
    their error is at most coef (||q~|| + rho)^2. On heavy-tailed data R is far above a
    typical rho: one outlier no longer flags every query. coef <= 0: eps_q as given."""
    cdef double r, rho, e
    if coef <= 0.0:
        return eps_q
    r = sqrt(q_norm)
    rho = (r * (1.0 + delta) + sqrt(dk * (1.0 + delta))) / (1.0 - delta)
    e = coef * (r + rho) * (r + rho) * (1.0 + delta) + 1e-300
    return e if e < eps_q else eps_q


cdef intp_t _finalize(const data_t *q, const data_t *T, intp_t d, int metric,
                      const double *hv, const intp_t *hi, intp_t hsize, bint full,
                      double approx_top, double eps_q, double q_norm, double coef,
                      double delta, intp_t k, Pair *buf,
                      double *out_key, intp_t *out_idx, intp_t cap) noexcept nogil:
    """Exact keys of the heap's candidates, sorted; returns k' or -1 (see module doc).
    ``approx_top``: the heap's largest approximate key (every excluded point's is >= it);
    the excluded points' exact keys are >= approx_top - :func:`_pair_eps`."""
    cdef intp_t c, n_le
    cdef double dk
    if hsize < k:
        # cannot happen when every point enters a non-full heap; never read past the heap
        return -1
    for c in range(hsize):
        buf[c].idx = hi[c]
        buf[c].key = exact_key(q, T + hi[c] * d, d, metric)
    qsort(buf, hsize, sizeof(Pair), cmp_pair)
    for c in range(hsize):
        out_key[c] = buf[c].key
        out_idx[c] = buf[c].idx
    for c in range(hsize, cap):
        out_key[c] = INFINITY
        out_idx[c] = -1
    dk = buf[k - 1].key
    n_le = k
    while n_le < hsize and buf[n_le].key <= dk:
        n_le += 1
    if full and not (approx_top - _pair_eps(eps_q, q_norm, dk, coef, delta) > dk):
        return -1
    return n_le


def knn_gemm(const floating[:, ::1] Q, const floating[:, ::1] T,          # IN  centred data (gemm)
             const double[::1] q_norm, const double[::1] t_norm,          # IN  their squared norms
             const data_t[:, ::1] Q0, const data_t[:, ::1] T0,            # IN  original data (exact keys)
             const double[::1] eps,                                       # IN  error bound per query
             intp_t k, intp_t cap,
             double[:, ::1] out_key, intp_t[:, ::1] out_idx,              # OUT (n_queries, cap)
             intp_t[::1] out_cnt,                                         # OUT k' or -1
             intp_t q_chunk, intp_t t_chunk, int n_threads,
             double coef=0.0, double delta=0.0):                          # IN  per-pair bound (_pair_eps)
    """Euclidean k-NN candidates through chunked gemm (see the module doc).

    Q, T: (nq, d) / (m, d) centred data with t_norm their squared norms, or (nq, d + 1) /
    (m, d + 1) *augmented* centred data [q~, -1/2] / [t~, ||t~||^2] with t_norm empty (the
    tile then holds ||t~||^2 - 2 q~.t~ itself); Q0, T0 (nq, d) / (m, d); 1 <= k <= cap <= m.
    """
    cdef intp_t nq = Q.shape[0], m = T.shape[0], d = Q0.shape[1], dg = Q.shape[1]
    cdef intp_t n_qc, n_tc, qc, tc, q0, q1, nqb, t0, t1, ntb, i
    cdef floating *tile
    cdef double *hv
    cdef intp_t *hi
    cdef intp_t *hs
    cdef Pair *buf
    cdef int failed[1]
    cdef bint full
    cdef const double *tnp
    if nq == 0:
        return
    if q_chunk < 1 or t_chunk < 1 or k < 1 or cap < k or cap > m:
        raise ValueError("knn_gemm: bad chunk sizes or k/cap")
    if T.shape[1] != dg or T0.shape[1] != d or T0.shape[0] != m or Q0.shape[0] != nq \
            or (dg != d and dg != d + 1):
        raise ValueError("knn_gemm: bad shapes")
    if t_norm.shape[0] != m and t_norm.shape[0] != 0:
        raise ValueError("knn_gemm: t_norm must have m entries (or none: augmented data)")
    tnp = &t_norm[0] if t_norm.shape[0] > 0 else NULL
    n_qc = (nq + q_chunk - 1) // q_chunk
    n_tc = (m + t_chunk - 1) // t_chunk
    if n_threads > n_qc:
        n_threads = <int> n_qc
    if n_threads < 1:
        n_threads = 1
    failed[0] = 0
    tile = NULL
    hv = NULL
    hi = NULL
    hs = NULL
    buf = NULL
    with nogil, parallel(num_threads=n_threads):
        tile = <floating *> malloc(q_chunk * t_chunk * sizeof(floating))
        hv = <double *> malloc(q_chunk * cap * sizeof(double))
        hi = <intp_t *> malloc(q_chunk * cap * sizeof(intp_t))
        hs = <intp_t *> malloc(q_chunk * sizeof(intp_t))
        buf = <Pair *> malloc(cap * sizeof(Pair))
        for qc in prange(n_qc, schedule="static"):
            if tile == NULL or hv == NULL or hi == NULL or hs == NULL or buf == NULL:
                flag_set(failed)
                continue
            q0 = qc * q_chunk
            q1 = q0 + q_chunk
            if q1 > nq:
                q1 = nq
            nqb = q1 - q0
            for i in range(nqb):
                hs[i] = 0
            for tc in range(n_tc):
                t0 = tc * t_chunk
                t1 = t0 + t_chunk
                if t1 > m:
                    t1 = m
                ntb = t1 - t0
                # tile = -2 Q[q0:q1] @ T[t0:t1].T
                neg2_dot_tile(<int> nqb, <int> ntb, <int> dg, &Q[q0, 0], &T[t0, 0], tile)
                _scan_tile_rows(tile, (tnp + t0) if tnp != NULL else NULL,
                                nqb, ntb, t0, hv, hi, hs, cap, False)
            for i in range(nqb):
                full = hs[i] == cap and cap < m
                out_cnt[q0 + i] = _finalize(
                    &Q0[q0 + i, 0], &T0[0, 0], d, SQEUCLIDEAN,
                    hv + i * cap, hi + i * cap, hs[i], full,
                    hv[i * cap] + q_norm[q0 + i], eps[q0 + i], q_norm[q0 + i], coef, delta, k, buf,
                    &out_key[q0 + i, 0], &out_idx[q0 + i, 0], cap)
        free(tile)
        free(hv)
        free(hi)
        free(hs)
        free(buf)
    if failed[0]:
        raise MemoryError("knn_gemm: could not allocate the per-thread buffers")


def knn_gemm_split_train(const floating[:, ::1] Q, const floating[:, ::1] T,  # IN  centred data
                         const double[::1] q_norm, const double[::1] t_norm,      # IN  squared norms
                         const data_t[:, ::1] Q0, const data_t[:, ::1] T0,        # IN  original data
                         const double[::1] eps,                                   # IN  error bound
                         intp_t k, intp_t cap,
                         double[:, ::1] out_key, intp_t[:, ::1] out_idx,          # OUT (n_queries, cap)
                         intp_t[::1] out_cnt,                                     # OUT k' or -1
                         intp_t q_chunk, intp_t t_chunk, int n_threads,
                         double coef=0.0, double delta=0.0):
    """:func:`knn_gemm` parallelised over TRAINING chunks (for too few queries to feed the threads).

    Query chunks are taken one after the other; for each, the threads share out the
    training chunks (static schedule), each keeping its own ``cap``-heap per query over
    the training points it scanned. The heaps are then merged, per query, into the
    ``cap`` smallest entries in the total order (approximate key, training index) of the
    union. Every thread's heap holds the ``cap`` smallest of its own points in that
    order (it compares on (key, index), whatever order its chunks come in), hence the
    merged heap is exactly the serial scan's heap: the
    same candidates, the same root, the same completion test and the same exact
    re-ranking (:func:`_finalize`), whatever the thread count. Same arguments and
    outputs as :func:`knn_gemm`; memory per thread: one tile and q_chunk heaps.
    """
    cdef intp_t nq = Q.shape[0], m = T.shape[0], d = Q0.shape[1], dg = Q.shape[1]
    cdef intp_t n_qc, n_tc, qc, tc, q0, q1, nqb, t0, t1, ntb, i, c, th
    cdef int tid
    cdef floating *tiles
    cdef double *hv_all
    cdef intp_t *hi_all
    cdef intp_t *hs_all
    cdef Pair *buf_all
    cdef floating *tile
    cdef double *hv
    cdef intp_t *hi
    cdef intp_t *hs
    cdef double *hvi
    cdef intp_t *hii
    cdef double *ov
    cdef intp_t *oi
    cdef bint full
    cdef const double *tnp
    if nq == 0:
        return
    if q_chunk < 1 or t_chunk < 1 or k < 1 or cap < k or cap > m:
        raise ValueError("knn_gemm_split_train: bad chunk sizes or k/cap")
    if T.shape[1] != dg or T0.shape[1] != d or T0.shape[0] != m or Q0.shape[0] != nq \
            or (dg != d and dg != d + 1):
        raise ValueError("knn_gemm_split_train: bad shapes")
    if t_norm.shape[0] != m and t_norm.shape[0] != 0:
        raise ValueError("knn_gemm_split_train: t_norm must have m entries (or none: augmented data)")
    tnp = &t_norm[0] if t_norm.shape[0] > 0 else NULL
    if q_chunk > nq:
        q_chunk = nq
    n_qc = (nq + q_chunk - 1) // q_chunk
    n_tc = (m + t_chunk - 1) // t_chunk
    if n_threads > n_tc:
        n_threads = <int> n_tc
    if n_threads < 1:
        n_threads = 1
    tid = 0
    tile = NULL
    hv = NULL
    hi = NULL
    hs = NULL
    tiles = <floating *> malloc(n_threads * q_chunk * t_chunk * sizeof(floating))
    hv_all = <double *> malloc(n_threads * q_chunk * cap * sizeof(double))
    hi_all = <intp_t *> malloc(n_threads * q_chunk * cap * sizeof(intp_t))
    hs_all = <intp_t *> malloc(n_threads * q_chunk * sizeof(intp_t))
    buf_all = <Pair *> malloc(n_threads * cap * sizeof(Pair))
    if tiles == NULL or hv_all == NULL or hi_all == NULL or hs_all == NULL or buf_all == NULL:
        free(tiles)
        free(hv_all)
        free(hi_all)
        free(hs_all)
        free(buf_all)
        raise MemoryError("knn_gemm_split_train: could not allocate the per-thread buffers")
    try:
        with nogil:
            for qc in range(n_qc):
                q0 = qc * q_chunk
                q1 = q0 + q_chunk
                if q1 > nq:
                    q1 = nq
                nqb = q1 - q0
                # every thread's heaps start empty (also those of threads OpenMP may not start)
                for i in range(n_threads * q_chunk):
                    hs_all[i] = 0
                with parallel(num_threads=n_threads):
                    tid = omp_get_thread_num()
                    tile = tiles + tid * q_chunk * t_chunk
                    hv = hv_all + tid * q_chunk * cap
                    hi = hi_all + tid * q_chunk * cap
                    hs = hs_all + tid * q_chunk
                    # dynamic: a thread held up (by another process) does not hold up the call
                    for tc in prange(n_tc, schedule="dynamic"):
                        t0 = tc * t_chunk
                        t1 = t0 + t_chunk
                        if t1 > m:
                            t1 = m
                        ntb = t1 - t0
                        neg2_dot_tile(<int> nqb, <int> ntb, <int> dg, &Q[q0, 0], &T[t0, 0], tile)
                        # a thread's chunks may come in any order: compare on (key, index)
                        _scan_tile_rows(tile, (tnp + t0) if tnp != NULL else NULL,
                                        nqb, ntb, t0, hv, hi, hs, cap, True)
                # merge every thread's heap into thread 0's, then re-rank exactly
                with parallel(num_threads=n_threads):
                    tid = omp_get_thread_num()
                    for i in prange(nqb, schedule="static"):
                        hvi = hv_all + i * cap
                        hii = hi_all + i * cap
                        for th in range(1, n_threads):
                            ov = hv_all + (th * q_chunk + i) * cap
                            oi = hi_all + (th * q_chunk + i) * cap
                            for c in range(hs_all[th * q_chunk + i]):
                                if hs_all[i] < cap or pair_less(ov[c], oi[c], hvi[0], hii[0]):
                                    heap_push(hvi, hii, &hs_all[i], cap, ov[c], oi[c])
                        full = hs_all[i] == cap and cap < m
                        out_cnt[q0 + i] = _finalize(
                            &Q0[q0 + i, 0], &T0[0, 0], d, SQEUCLIDEAN,
                            hvi, hii, hs_all[i], full,
                            hvi[0] + q_norm[q0 + i], eps[q0 + i], q_norm[q0 + i], coef, delta,
                            k, buf_all + tid * cap,
                            &out_key[q0 + i, 0], &out_idx[q0 + i, 0], cap)
    finally:
        free(tiles)
        free(hv_all)
        free(hi_all)
        free(hs_all)
        free(buf_all)


def exact_rows(const floating[:, ::1] Q0, const floating[:, ::1] T0,      # IN  original data
               const intp_t[::1] rows, int metric,                        # IN  which queries
               double[:, ::1] out,                                        # OUT (len(rows), m)
               int n_threads):
    """Exact keys from each query ``Q0[rows[r]]`` to every training point (the fallback)."""
    cdef intp_t nr = rows.shape[0], m = T0.shape[0], d = Q0.shape[1]
    cdef intp_t r, j
    if nr == 0:
        return
    if out.shape[0] != nr or out.shape[1] != m or T0.shape[1] != d:
        raise ValueError("exact_rows: bad shapes")
    if metric not in (SQEUCLIDEAN, MANHATTAN, HAMMING):
        raise ValueError("exact_rows: unknown metric code")
    for r in range(nr):
        if rows[r] < 0 or rows[r] >= Q0.shape[0]:
            raise ValueError("exact_rows: row index out of range")
    if n_threads > nr:
        n_threads = <int> nr
    if n_threads < 1:
        n_threads = 1
    with nogil:
        for r in prange(nr, schedule="static", num_threads=n_threads):
            for j in range(m):
                out[r, j] = exact_key(&Q0[rows[r], 0], &T0[j, 0], d, metric)


cdef inline double mahalanobis_key(const floating *a, const floating *b, const double *VI,
                                   intp_t d, double *delta) noexcept nogil:
    """002's squared Mahalanobis distance (a - b)^T VI (a - b) by its definition: the
    differences in float64 (into the scratch ``delta``, d doubles), then sum_i sum_j
    (delta_i VI_ij) delta_j in the order (i, j), each product rounded left to right
    (``smml.reference.neighbors.distance_key``); a negative sum (rounding of a positive
    semi-definite form) is 0."""
    cdef double s = 0.0, di
    cdef intp_t i, j
    for i in range(d):
        delta[i] = <double> a[i] - <double> b[i]
    for i in range(d):
        di = delta[i]
        for j in range(d):
            s = s + (di * VI[i * d + j]) * delta[j]
    return s if s > 0.0 else 0.0


def mahalanobis_pairs(const floating[:, ::1] Q, const floating[:, ::1] T,   # IN  original data
                      const double[:, ::1] VI,                              # IN  (d, d)
                      const intp_t[::1] qrow, const intp_t[::1] tidx,       # IN  the pairs
                      double[::1] out,                                      # OUT their keys
                      int n_threads):
    """``out[p]`` = the exact Mahalanobis key of query ``Q[qrow[p]]`` and training point
    ``T[tidx[p]]`` (:func:`mahalanobis_key`; ``radius_neighbors``' final test)."""
    cdef intp_t n = qrow.shape[0], d = Q.shape[1], nq = Q.shape[0], m = T.shape[0], p
    cdef double *delta
    cdef int failed[1]
    if tidx.shape[0] != n or out.shape[0] != n or T.shape[1] != d \
            or VI.shape[0] != d or VI.shape[1] != d:
        raise ValueError("mahalanobis_pairs: bad shapes")
    for p in range(n):
        if qrow[p] < 0 or qrow[p] >= nq or tidx[p] < 0 or tidx[p] >= m:
            raise ValueError("mahalanobis_pairs: index out of range")
    if n == 0:
        return
    if n_threads < 1:
        n_threads = 1
    failed[0] = 0
    with nogil, parallel(num_threads=n_threads):
        delta = <double *> malloc(max(d, 1) * sizeof(double))
        for p in prange(n, schedule="static"):
            if delta == NULL:
                flag_set(failed)
                continue
            out[p] = mahalanobis_key(&Q[qrow[p], 0], &T[tidx[p], 0], &VI[0, 0], d, delta)
        free(delta)
    if failed[0]:
        raise MemoryError("mahalanobis_pairs: could not allocate the per-thread buffers")


def mahalanobis_rank(const floating[:, ::1] Q, const floating[:, ::1] T,    # IN  original data
                     const double[:, ::1] VI,                               # IN  (d, d)
                     const intp_t[:, ::1] cand, const intp_t[::1] cand_cnt,  # IN  candidates
                     intp_t k,
                     double[:, ::1] out_key, intp_t[:, ::1] out_idx,        # OUT like cand
                     intp_t[::1] out_cnt,                                   # OUT k' (-1: see below)
                     int n_threads,
                     const double[:, ::1] akey=None,      # IN  optional: the filter's keys of cand
                     const double[::1] q_rad=None,        # IN  with akey: the error bound's terms
                     double coef=0.0, double t_rad=0.0, intp_t m=0):
    """The notes' k' rule on exact Mahalanobis keys, for candidates from a filter.

    Query i's candidates ``cand[i, :cand_cnt[i]]`` (at least k of them, holding every
    training point whose exact key is <= the k-th smallest): their exact keys
    (:func:`mahalanobis_key`), sorted by (key, index) into row i of ``out_key`` /
    ``out_idx`` (padded with inf / -1), and k' (the points tied with the k-th included) in
    ``out_cnt[i]``.

    With ``akey`` (the candidates' keys in the filter, ascending along each row: the
    transformed search of ``smml.neighbors``) the candidates are first checked: with
    e = coef (q_rad[i] + t_rad)^2 + 1e-300 bounding |filter key - exact key|, they hold every
    point whose exact key is <= the k-th smallest when all ``m`` training points are
    candidates or the last candidate's filter key exceeds akey[i, k - 1] + 2 e. A query
    that fails gets ``out_cnt[i] = -1`` (its row is left unset); returns how many did."""
    cdef intp_t nq = Q.shape[0], d = Q.shape[1], mt = T.shape[0]
    cdef intp_t width = cand.shape[1], i, c, n, cnt, j
    cdef double kth, e
    cdef Pair *buf
    cdef double *delta
    cdef int failed[1]
    cdef intp_t n_short = 0
    cdef const double *ak = NULL
    cdef const double *qr = NULL
    if cand.shape[0] != nq or cand_cnt.shape[0] != nq or T.shape[1] != d or VI.shape[0] != d \
            or VI.shape[1] != d or out_idx.shape[0] != nq or out_key.shape[0] != nq \
            or out_cnt.shape[0] != nq or out_idx.shape[1] != width or out_key.shape[1] != width:
        raise ValueError("mahalanobis_rank: bad shapes")
    if k < 1:
        raise ValueError("mahalanobis_rank: bad k")
    if (akey is None) != (q_rad is None):
        raise ValueError("mahalanobis_rank: give akey and q_rad together")
    if akey is not None:
        if akey.shape[0] != nq or akey.shape[1] != width or q_rad.shape[0] != nq:
            raise ValueError("mahalanobis_rank: bad shapes")
        if nq:
            ak = &akey[0, 0]
            qr = &q_rad[0]
    for i in range(nq):
        n = cand_cnt[i]
        if n < k or n > width:
            raise ValueError("mahalanobis_rank: each query needs k to width candidates")
        for c in range(n):
            if cand[i, c] < 0 or cand[i, c] >= mt:
                raise ValueError("mahalanobis_rank: index out of range")
    if nq == 0:
        return 0
    if n_threads < 1:
        n_threads = 1
    failed[0] = 0
    with nogil, parallel(num_threads=n_threads):
        buf = <Pair *> malloc(width * sizeof(Pair) + max(d, 1) * sizeof(double))
        delta = <double *> (buf + width) if buf != NULL else NULL
        for i in prange(nq, schedule="dynamic", chunksize=64):
            if buf == NULL:
                flag_set(failed)
                continue
            n = cand_cnt[i]
            if ak != NULL and n < m:
                e = coef * (qr[i] + t_rad) * (qr[i] + t_rad) + 1e-300
                if not (ak[i * width + n - 1] > ak[i * width + k - 1] + 2.0 * e):
                    out_cnt[i] = -1
                    n_short += 1
                    continue
            for c in range(n):
                j = cand[i, c]
                buf[c].idx = j
                buf[c].key = mahalanobis_key(&Q[i, 0], &T[j, 0], &VI[0, 0], d, delta)
            qsort(buf, n, sizeof(Pair), cmp_pair)
            kth = buf[k - 1].key
            cnt = k
            while cnt < n and buf[cnt].key <= kth:
                cnt = cnt + 1
            for c in range(n):
                out_key[i, c] = buf[c].key
                out_idx[i, c] = buf[c].idx
            for c in range(n, width):
                out_key[i, c] = INFINITY
                out_idx[i, c] = -1
            out_cnt[i] = cnt
        free(buf)
    if failed[0]:
        raise MemoryError("mahalanobis_rank: could not allocate the per-thread buffers")
    return n_short


def vote_uniform(const intp_t[:, ::1] idx, const intp_t[::1] cnt,    # IN  taken points (padded rows)
                 const intp_t[::1] y, intp_t n_classes, intp_t default,  # IN  encoded labels
                 intp_t[::1] pred,                                     # OUT class code per query
                 int n_threads):
    """000's majority vote over the first ``cnt[i]`` points of row i (all of them <= idx's
    width): the class with the most votes, or ``default`` when several tie for the most."""
    cdef intp_t nq = idx.shape[0], i, c
    cdef intp_t *votes
    if cnt.shape[0] != nq or pred.shape[0] != nq or n_classes < 1:
        raise ValueError("vote_uniform: bad shapes")
    for i in range(nq):
        if cnt[i] < 0 or cnt[i] > idx.shape[1]:
            raise ValueError("vote_uniform: a count exceeds the row width")
    if nq == 0:
        return
    if n_threads < 1:
        n_threads = 1
    votes = NULL
    with nogil, parallel(num_threads=n_threads):
        votes = <intp_t *> malloc(n_classes * sizeof(intp_t))
        for i in prange(nq, schedule="static"):
            if votes == NULL:
                pred[i] = -1
                continue
            for c in range(n_classes):
                votes[c] = 0
            for c in range(cnt[i]):
                votes[y[idx[i, c]]] += 1
            pred[i] = majority(votes, n_classes, default)
        free(votes)
