"""k-means kernels (001 "Clustering and the k-means algorithm"): the Lloyd iteration, fused.

One call of :func:`lloyd_iter` is one iteration of the notes' loop:

1. assignment, c_i = argmin_j ||x_i - mu_j||^2, lowest j on equal distances;
2. update, mu_j = (sum_{c_i = j} w_i x_i) / (sum_{c_i = j} w_i) (w = 1 without weights);

in ONE pass over X: the rows are cut into fixed blocks of ``block_rows`` rows (the
same blocks whatever the thread count), a block into chunks of ``chunk_rows`` rows;
per chunk, ``-2 X_chunk C^T`` is one gemm tile (``smml._core._distances.neg2_dot_tile``),
each row takes the argmin and is added into its block's partial sums while the
chunk is still in cache. The blocks' partial sums are merged in block order, so
every result is the same, bit for bit, for any number of threads.

Exact assignments. The tile gives v_j = ||c_j||^2 - 2 x.c_j, within ``eps`` of
E_j - ||x||^2, E_j the distance computed exactly as the notes define it
(``exact_key``: direct subtraction, float64, feature by feature); ``eps`` is the
rigorous gemm bound of ``smml.neighbors._euclidean_error_coef`` with
(||x|| + max ||c||)^2 <= 2 (||x||^2 + max ||c||^2). A row whose best v beats the
second best by more than 2 eps has the same argmin on exact distances; any other row
(a tie or a near-tie) recomputes E_j exactly for every centroid within 2 eps of the
best and takes the smallest, lowest index first. Labels therefore equal those
computed on exact distances, whatever the gemm's rounding, chunking or threads.

Centred data. The gemm operand ``Xg`` may be X - m (m a fixed shift, to keep the
bound small for data far from the origin; then ``Cg`` = fl(C - m)); exact distances
always use the raw ``X`` and ``C``. Sums are accumulated from ``Xg`` in float64 and
the new centroid is fl(m + S / W), rounded to the data's dtype (or through float32
when ``round32``: float32 data computed in float64).

Clusters of identical rows. A cluster whose members are all the same row (compared
feature by feature on the raw X) gets that row exactly as its centroid, not fl(m + S / W),
which may round off it: its members then sit at distance 0 from it, as they do in exact
arithmetic, so the re-seeding of empty clusters (which takes points at positive distance)
never picks them. Each block records, per cluster, the first member row and whether a
later member differs (``anch``); the blocks are merged in block order.

The distortion of the iteration, J(c, mu_old) = sum_i w_i ||x_i - mu_old_{c_i}||^2, is
computed from the per-cluster totals as sum_j (Q_j - 2 mu_j.S_j + W_j ||mu_j||^2)
(Q_j = sum w_i ||x_i||^2; each term clamped at 0), in float64, for free;
:func:`assign` computes J exactly, row by row (for ``inertia_`` and ``score``).
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memcpy
from libc.math cimport INFINITY, NAN, sqrt
from cython.parallel cimport prange, parallel

from smml._core._typedefs cimport floating, intp_t, int32_t
from smml._core._openmp cimport threads_for
from smml._core._atomic cimport flag_set
from smml._core._distances cimport (SQEUCLIDEAN, exact_key, neg2_dot_tile, fast_tile_available,
                                    panel_width, pack_panels, neg2_dot_tile_panels)


cdef extern from "smml_kmeans.h":
    void _best_rows_d "smml_best_rows_d" (const double *tile, intp_t nr, intp_t kp, const double *cn,
                                          const int32_t *prev, const double *xn, double coef4,
                                          double R2, int32_t *out) noexcept nogil
    void _best_rows_f32 "smml_best_rows_f32" (const float *tile, intp_t nr, intp_t kp, const float *cn32,
                                              const int32_t *prev, const double *xn, double coef4,
                                              double R2, int32_t *out) noexcept nogil
    void _best2_rows_d "smml_best2_rows_d" (const double *tile, intp_t nr, intp_t kp, const double *cn,
                                            const double *xn, double coef4, double R2, int32_t *out,
                                            double *lo) noexcept nogil
    void _best2_rows_f32 "smml_best2_rows_f32" (const float *tile, intp_t nr, intp_t kp, const float *cn32,
                                                const double *xn, double coef4, double R2, int32_t *out,
                                                double *lo) noexcept nogil
    void _row_panels_d "smml_row_panels_d" (intp_t d, const double *x, const double *P, intp_t kp,
                                            double *out) noexcept nogil
    void _row_panels_f "smml_row_panels_f" (intp_t d, const float *x, const float *P, intp_t kp,
                                            float *out) noexcept nogil
    double _dot_d "smml_dot_d" (const double *a, const double *b, intp_t n) noexcept nogil
    float _dot_f "smml_dot_f" (const float *a, const float *b, intp_t n) noexcept nogil
    void _add_rows_d "smml_add_rows_d" (const double *X, intp_t nr, intp_t d, const int32_t *labels,
                                        const double *xn, const double *w, intp_t R,
                                        double *S) noexcept nogil
    void _add_rows_f "smml_add_rows_f" (const float *X, intp_t nr, intp_t d, const int32_t *labels,
                                        const double *xn, const double *w, intp_t R,
                                        double *S) noexcept nogil


cdef enum:
    _MERGE_PARALLEL = 1 << 20   # block totals merged on several threads from this many additions


cdef inline intp_t _rec(intp_t d) noexcept nogil:
    """Doubles per cluster in the partial sums: the record [S (d) | W | Q], padded with zeros
    to a multiple of 4 (one or two vectors hold its tail: smml_add_rows)."""
    return (d + 5) // 4 * 4


def record_width(intp_t d):
    """Doubles per cluster in a block's partial sums (``acc`` rows hold k such records)."""
    if d < 1:
        raise ValueError("record_width: d must be positive")
    return _rec(d)


# ---- per-row decisions ---------------------------------------------------------------------

cdef inline void _best_rows(const floating *tile, intp_t nr, intp_t kp, const double *cn,
                            const float *cn32, const int32_t *prev, const double *xn, double coef4,
                            double R2, bint simd, int32_t *out) noexcept nogil:
    """out[i] = the index of the single v_j = tile[i, j] + cn[j] within
    eps2_i = coef4 (xn[i] + R2) of the row's smallest, or -1 when there are several
    (float32 tiles on AVX2: in float32, with ``cn32``)."""
    cdef intp_t i, j, first, count
    cdef double b1, thr
    cdef const floating *t
    if simd:
        if floating is double:
            _best_rows_d(tile, nr, kp, cn, prev, xn, coef4, R2, out)
        else:
            _best_rows_f32(tile, nr, kp, cn32, prev, xn, coef4, R2, out)
        return
    for i in range(nr):
        t = tile + i * kp
        b1 = INFINITY
        for j in range(kp):
            if <double> t[j] + cn[j] < b1:
                b1 = <double> t[j] + cn[j]
        thr = b1 + coef4 * (xn[i] + R2)
        first = -1
        count = 0
        for j in range(kp):
            if <double> t[j] + cn[j] <= thr:
                count += 1
                if first < 0:
                    first = j
        out[i] = <int32_t> first if count == 1 else -1


cdef inline void _exact_candidate(const floating *x, const floating *C, intp_t d, int32_t j,
                                  double *best, int32_t *j1) noexcept nogil:
    """One candidate of a near-tie: centroid j replaces the best so far (``best``, its exact
    key, at ``j1``; -1: none yet) when nearer, or as near with a lower index (the candidates
    may come in any order)."""
    cdef double e = exact_key(x, C + j * d, d, SQEUCLIDEAN)
    if j1[0] < 0 or e < best[0] or (e == best[0] and j < j1[0]):
        best[0] = e
        j1[0] = j


cdef inline int32_t _exact_best(const floating *trow, const double *cn, intp_t kp, double eps2,
                                const floating *x, const floating *C, intp_t d) noexcept nogil:
    """A tie or near-tie: the exact distances of the candidates (v_j within ``eps2``, twice
    the error bound, of the smallest) decide, the lowest index on equal distances."""
    cdef intp_t j
    cdef int32_t j1 = -1
    cdef double thr = INFINITY, best = INFINITY
    for j in range(kp):
        if <double> trow[j] + cn[j] < thr:
            thr = <double> trow[j] + cn[j]
    thr = thr + eps2
    for j in range(kp):
        if <double> trow[j] + cn[j] <= thr:
            _exact_candidate(x, C, d, <int32_t> j, &best, &j1)
    return j1


# ---- distance bounds (Hamerly's test) ------------------------------------------------------

# Slack of the bounds. exact_key gives the squared distance within a relative (d + 2) u64
# (u64 = 2^-53): under 2e-11 for d <= 10^5, the largest d the bounds are used for
# (BOUNDS_MAX_D in smml._kmeans_loop), so a distance computed from it, or from a tile
# value within the tile's error bound, times _UP (_DOWN) is above (below) the true one. A
# row keeps its label without computing its distances only when u < l _KEEP: its centroid
# is then nearer than every other by a relative 1e-9, far more than the rounding of
# exact_key, so the exact distances (the labels' definition) order them the same way.
# Bounds are stored in float32, rounded outward (_up32, _down32).
cdef double _UP = 1.0 + 1e-10
cdef double _DOWN = 1.0 - 1e-10
cdef double _KEEP = 1.0 - 1e-9
cdef double _UP32 = 1.0 + 2.384185791015625e-07      # 1 + 2^-22: rounding to float32 (2^-24) stays above
cdef double _DOWN32 = 1.0 - 2.384185791015625e-07


cdef inline float _up32(double u) noexcept nogil:
    """u rounded to a float32 that is >= u."""
    return <float> (u * _UP32)


cdef inline float _down32(double l) noexcept nogil:
    """l rounded to a float32 that is <= l (0 when l <= 0: distances are >= 0)."""
    return <float> ((l if l > 0.0 else 0.0) * _DOWN32)


cdef inline float _lower32(double xn, double v, double eps2) noexcept nogil:
    """A float32 lower bound on the distance whose v_j (within eps2 / 2) is v."""
    cdef double s = xn + v - eps2
    if not s > 0.0:
        return 0.0
    return _down32(sqrt(s) * _DOWN)


cdef inline float _upper32(double xn, double v, double eps2) noexcept nogil:
    cdef double s = xn + v + eps2
    return _up32(sqrt(s if s > 0.0 else 0.0) * _UP)


cdef inline void _best2_rows(const floating *tile, intp_t nr, intp_t kp, const double *cn,
                             const float *cn32, const double *xn, double coef4, double R2, bint simd,
                             int32_t *out, double *lo) noexcept nogil:
    """:func:`_best_rows` without the previous-label pass, and lo[i] = the second smallest
    v_j of a row with a single candidate (see smml_best2_rows in smml_kmeans.h)."""
    cdef intp_t i, j
    cdef double v, m1, m2
    if simd:
        if floating is double:
            _best2_rows_d(tile, nr, kp, cn, xn, coef4, R2, out, lo)
        else:
            _best2_rows_f32(tile, nr, kp, cn32, xn, coef4, R2, out, lo)
        return
    _best_rows(tile, nr, kp, cn, cn32, NULL, xn, coef4, R2, simd, out)
    for i in range(nr):
        m1 = INFINITY
        m2 = INFINITY
        for j in range(kp):
            v = <double> tile[i * kp + j] + cn[j]
            if v < m1:
                m2 = m1
                m1 = v
            elif v < m2:
                m2 = v
        lo[i] = m2


cdef inline void _set_bounds(const floating *t, const double *cn, intp_t kp, intp_t lab, double lo,
                             double xn, double eps2, float *ub, float *lb) noexcept nogil:
    """From a tile row (v_j = t[j] + cn[j], each within eps2 / 2 of E_j - xn) and ``lo``, the
    smallest v_j over j != lab (NaN: not known, computed here): ub >= the distance to
    centroid ``lab``, lb <= the distance to every other."""
    cdef intp_t j
    cdef double v, vl = <double> t[lab] + cn[lab]
    if lo != lo:
        lo = INFINITY
        for j in range(kp):
            v = <double> t[j] + cn[j]
            if j != lab and v < lo:
                lo = v
    ub[0] = _upper32(xn, vl, eps2)
    lb[0] = _lower32(xn, lo, eps2)


# ---- group bounds (Yinyang's test) -----------------------------------------------------------

# With many clusters one lower bound per row (Hamerly's) moves by the largest drift of all the
# other centroids at every update and soon proves nothing. The centroids are split once into t
# groups (``smml._kmeans_loop.centroid_groups``: neighbouring initial centroids together); a row
# keeps one lower bound per group (its distance to every centroid of the group but its own),
# moved by the group's largest drift only (Ding et al., "Yinyang K-means", 2015). A row whose
# upper bound is below every group's bound keeps its label; otherwise only the groups whose
# bound its exact upper bound reaches are computed, one row of the group's packed-panel tile
# each. The labels stay the ones of exact distances: the same slack (_KEEP) proves a skipped
# group farther, and the computed v_j are within the tile's error bound (any order of the dot
# product's sum), so near-ties go to exact_key as in the tile path.

cdef inline double _dot(const floating *a, const floating *b, intp_t d, bint simd) noexcept nogil:
    """a.b in the data's type, four running sums (within the gemm bound: any order); AVX2
    with ``simd`` (smml_dot_*)."""
    cdef floating s0 = 0, s1 = 0, s2 = 0, s3 = 0
    cdef intp_t f = 0
    if simd:
        if floating is double:
            return _dot_d(a, b, d)
        else:
            return <double> _dot_f(a, b, d)
    while f + 4 <= d:
        s0 = s0 + a[f] * b[f]
        s1 = s1 + a[f + 1] * b[f + 1]
        s2 = s2 + a[f + 2] * b[f + 2]
        s3 = s3 + a[f + 3] * b[f + 3]
        f = f + 4
    while f < d:
        s0 = s0 + a[f] * b[f]
        f = f + 1
    return <double> ((s0 + s1) + (s2 + s3))


cdef inline void _row_panels(intp_t d, const floating *x, const floating *P, intp_t kp,
                             floating *out) noexcept nogil:
    if floating is double:
        _row_panels_d(d, x, P, kp, out)
    else:
        _row_panels_f(d, x, P, kp, out)


cdef inline void _set_group_bounds(const floating *t, const double *cn, intp_t lab, double xn,
                                   double eps2, const int32_t *gmem, const int32_t *gptr,
                                   intp_t ng, float *ub,
                                   float *lbrow) noexcept nogil:
    """From a tile row (v_j = t[j] + cn[j]): ub >= the distance to centroid ``lab``, lbrow[g] <=
    the distance to every centroid of group g but ``lab`` (+inf: none)."""
    cdef intp_t g, p, j
    cdef double v, lo, lo2
    ub[0] = _upper32(xn, <double> t[lab] + cn[lab], eps2)
    for g in range(ng):
        # two running minima (half the dependency chain); the label counts as +inf
        lo = INFINITY
        lo2 = INFINITY
        p = gptr[g]
        while p + 2 <= gptr[g + 1]:
            j = gmem[p]
            v = <double> t[j] + cn[j] if j != lab else INFINITY
            lo = v if v < lo else lo
            j = gmem[p + 1]
            v = <double> t[j] + cn[j] if j != lab else INFINITY
            lo2 = v if v < lo2 else lo2
            p = p + 2
        if p < gptr[g + 1]:
            j = gmem[p]
            v = <double> t[j] + cn[j] if j != lab else INFINITY
            lo = v if v < lo else lo
        lo = lo2 if lo2 < lo else lo
        lbrow[g] = _lower32(xn, lo, eps2) if lo < INFINITY else <float> INFINITY


cdef int32_t _row_groups(const floating *xg, const floating *x, double xn, const floating *Cg,
                         const floating *C, const double *cn, intp_t d, int32_t lab, double eps2,
                         const int32_t *gid, const int32_t *gmem, const int32_t *gptr, intp_t ng,
                         const double *lg, double *vb, unsigned char *comp, double *glo,
                         int32_t *garg, float *ub, float *lbrow, intp_t *n_ex, bint simd,
                         const floating *Pg, const intp_t *gcol, floating *trow) noexcept nogil:
    """A row that failed the global test: its label among its own centroid (v computed first:
    its exact upper bound) and the groups that bound reaches (``lg``: the groups' bounds
    moved by their drifts), each of their centroids computed (one tile row of the group's
    packed panels ``Pg`` with ``simd``, else a dot product each); then its new bounds. Returns
    the label (a near-tie settled by exact_key, the lowest index on equal distances).
    Scratch: ``vb`` (k), ``comp``, ``glo`` (2 ng), ``garg`` (ng), ``trow`` (a group's columns)."""
    cdef double vl = cn[lab] - 2.0 * _dot(xg, Cg + lab * d, d, simd)
    cdef double ut = sqrt(xn + vl + eps2 if xn + vl + eps2 > 0.0 else 0.0) * _UP
    cdef double m1 = vl, m2 = INFINITY, v, a1, a2, thr, eb, lo
    cdef int32_t best = lab, j, j1, ai
    cdef intp_t g, p, g0
    cdef float l32
    for g in range(ng):
        if ut < lg[g] * _KEEP:
            comp[g] = 0
            continue
        comp[g] = 1
        g0 = gptr[g]
        if simd:
            # the group's packed panels (its centroids in gmem order, from column gcol[g], padded
            # to a multiple of 8 columns) against the row
            _row_panels(d, xg, Pg + gcol[g] * d, gcol[g + 1] - gcol[g], trow)
        # the group's two smallest v (the first's centroid), and the row's two smallest
        a1 = INFINITY
        a2 = INFINITY
        ai = -1
        for p in range(g0, gptr[g + 1]):
            j = gmem[p]
            if j == lab:
                v = vl
            else:
                if simd:
                    v = <double> trow[p - g0] + cn[j]
                else:
                    v = cn[j] - 2.0 * _dot(xg, Cg + j * d, d, simd)
                if v < m1:
                    m2 = m1
                    m1 = v
                    best = j
                elif v < m2:
                    m2 = v
            vb[j] = v
            if v < a1:
                a2 = a1
                a1 = v
                ai = j
            elif v < a2:
                a2 = v
        glo[2 * g] = a1
        glo[2 * g + 1] = a2
        garg[g] = ai
    vb[lab] = vl
    thr = m1 + eps2
    if m2 <= thr:
        # a tie or near-tie (a second v within eps2 of the smallest): exact distances decide
        n_ex[0] = n_ex[0] + 1
        eb = INFINITY
        j1 = -1
        if vl <= thr:
            _exact_candidate(x, C, d, lab, &eb, &j1)
        for g in range(ng):
            if comp[g]:
                for p in range(gptr[g], gptr[g + 1]):
                    j = gmem[p]
                    if j != lab and vb[j] <= thr:
                        _exact_candidate(x, C, d, j, &eb, &j1)
        best = j1
    ub[0] = _upper32(xn, vb[best], eps2)
    for g in range(ng):
        if comp[g]:
            # every centroid of the group but the label: the smallest, or the second when the
            # smallest is the label's (equal values count twice: a2 is then a1)
            lo = glo[2 * g + 1] if garg[g] == best else glo[2 * g]
            lbrow[g] = _lower32(xn, lo, eps2) if lo < INFINITY else <float> INFINITY
        else:
            lbrow[g] = _down32(lg[g])
    if best != lab and not comp[gid[lab]]:
        # the old label joins its (skipped) group's others
        l32 = _lower32(xn, vl, eps2)
        if l32 < lbrow[gid[lab]]:
            lbrow[gid[lab]] = l32
    return best


cdef void _drifts(const floating[:, ::1] C, const floating[:, ::1] C_prev, double *drift,
                  double *m1, double *m2, intp_t *a1) noexcept nogil:
    """drift[j] >= ||C_j - C_prev_j||; m1 = the largest (at a1), m2 the largest of the others."""
    cdef intp_t j, k = C.shape[0], d = C.shape[1]
    m1[0] = 0.0
    m2[0] = 0.0
    a1[0] = -1
    for j in range(k):
        drift[j] = sqrt(exact_key(&C[j, 0], &C_prev[j, 0], d, SQEUCLIDEAN)) * _UP
        if drift[j] > m1[0]:
            m2[0] = m1[0]
            m1[0] = drift[j]
            a1[0] = j
        elif drift[j] > m2[0]:
            m2[0] = drift[j]


cdef inline double _max_norm(const double *cn, intp_t k) noexcept nogil:
    cdef double r = 0.0
    cdef intp_t j
    for j in range(k):
        if cn[j] > r:
            r = cn[j]
    return r


cdef inline void _add_row(const floating *xg, double xn, double wi, bint weighted, intp_t d,
                          double *S, double *W, double *Q) noexcept nogil:
    """S += w x, W += w, Q += w ||x||^2 (one cluster's totals); w = 1 unweighted."""
    cdef intp_t f
    if weighted:
        for f in range(d):
            S[f] += wi * <double> xg[f]
        W[0] += wi
        Q[0] += wi * xn
    else:
        for f in range(d):
            S[f] += <double> xg[f]
        W[0] += 1.0
        Q[0] += xn


cdef inline bint _same_row(const floating *a, const floating *b, intp_t d) noexcept nogil:
    cdef intp_t f
    for f in range(d):
        if a[f] != b[f]:
            return False
    return True


cdef inline void _note_members(const floating *X, intp_t d, intp_t c0, intp_t c1,
                               const int32_t *labels, intp_t *A) noexcept nogil:
    """Rows c0..c1 of X (n x d, C order; ``labels`` from row c0): A[j] = -1 no member yet,
    i >= 0 every member so far equals row i (the first), -2 mixed."""
    cdef intp_t i, j, a
    for i in range(c0, c1):
        j = labels[i - c0]
        a = A[j]
        if a == -1:
            A[j] = i
        elif a >= 0 and i != a and not _same_row(X + i * d, X + a * d, d):
            A[j] = -2


cdef void _merge_anchors(const floating *X, intp_t d, intp_t *anch, intp_t n_blocks,
                         intp_t k) noexcept nogil:
    """anch[0:k] <- the whole data's first-member / mixed state, from the blocks' in order."""
    cdef intp_t j, b, a, ab
    for j in range(k):
        a = anch[j]
        b = 1
        while b < n_blocks and a != -2:
            ab = anch[b * k + j]
            if ab == -2:
                a = -2
            elif ab >= 0:
                if a == -1:
                    a = ab
                elif not _same_row(X + ab * d, X + a * d, d):
                    a = -2
            b += 1
        anch[j] = a


# ---- one pass over the blocks --------------------------------------------------------------

cdef int _pass(const floating[:, ::1] Xg, const floating[:, ::1] X, const double[::1] xn,
               const double[::1] w, const floating[:, ::1] Cg, const floating[:, ::1] C,
               const double[::1] cn, double coef, int32_t[::1] labels,
               double *acc, intp_t *anch, intp_t *counts, double *Jpart,
               bint assign, bint accumulate, intp_t block_rows, intp_t chunk_rows,
               bint fast, int n_threads, float *ub=NULL, float *lb=NULL, const double *drift=NULL,
               double m1=0.0, double m2=0.0, intp_t a1=-1, const int32_t *gid=NULL,
               const int32_t *gmem=NULL, const int32_t *gptr=NULL, intp_t ng=0,
               const double *gdrift=NULL) noexcept nogil:
    """Blocks of rows in parallel: assign (labels; changes and exact checks counted in
    ``counts[2 b]``, ``counts[2 b + 1]``) and/or accumulate the block's totals into
    ``acc + b * k R``, k records [S_j (d) | W_j | Q_j | zeros] of R = :func:`_rec` (d) doubles (``acc`` may be NULL when not
    accumulating) and, per cluster, the block's first member / mixed state into
    ``anch + b * k`` (see :func:`_note_members`; ``anch`` NULL: not recorded), and/or (``Jpart`` not NULL) sum w_i ||x_i - c_{label_i}||^2 over the
    block's rows in order, every distance computed exactly, into ``Jpart[b]``. The tile has kp columns (k rounded up to the panel width; the padding
    columns have cn = +inf): the packed-panel tile when ``fast`` (and the CPU has it),
    else the BLAS tile. Returns 0, or 1 if an allocation failed.

    Bounds (``ub`` not NULL, with ``assign``): ub[i] >= the distance of row i to its
    centroid, lb[i] <= its distance to every other, set from the tile for every row whose
    distances are computed. With ``drift`` (the centroids' moves since the labels were set,
    m1 the largest, at a1, m2 the largest of the others; see :func:`_drifts`), Hamerly's
    test first: u = ub + drift[label], l = lb - (the largest move of another centroid);
    a row with u < l _KEEP keeps its label (ub, lb <- u, l); the other rows are gathered,
    and only they go through the tile. (Hamerly's second test, on the exact distance to
    the row's centroid, saved the tile for under 2% of the rows on the grid's data; its
    gain was within the A/B's noise, so it is left out.) Without ``drift`` every row is
    computed (the first pass).

    Group bounds (``ng`` > 0, see :func:`_row_groups`): ``lb`` holds ng bounds per row (row i's
    at ``lb + i ng``), ``gmem`` the centroids by group (group g's at gptr[g] .. gptr[g + 1] - 1),
    ``gid`` each centroid's group; with ``drift``, ``gdrift`` each group's largest drift, and a
    row that fails the test is computed by :func:`_row_groups` instead of the tile."""
    cdef floating *Xb
    cdef double *xnb
    cdef int32_t *pb
    cdef intp_t *ix
    cdef double *lo2
    cdef const floating *src
    cdef const double *sxn
    cdef const int32_t *sprev
    cdef intp_t nf, q
    cdef double u, l
    cdef bint bounded = assign and ub != NULL
    cdef bint grouped = bounded and ng > 0
    cdef floating *Pg = NULL
    cdef floating *Gtmp = NULL
    cdef intp_t *gcol = NULL
    cdef floating *trow
    cdef double *glo
    cdef int32_t *garg
    cdef intp_t p
    cdef double *vb
    cdef double *lgp
    cdef unsigned char *comp
    cdef double lmin
    cdef intp_t g
    # the labels by a raw pointer: through the memoryview, the per-row loops reloaded its data
    # pointer at every row (the compiler cannot prove the stores leave it alone)
    cdef int32_t *labp = &labels[0]
    cdef intp_t n = Xg.shape[0], d = Xg.shape[1], k = Cg.shape[0], R = _rec(d)
    cdef intp_t n_blocks = (n + block_rows - 1) // block_rows
    cdef intp_t pw = panel_width(&Cg[0, 0]), kp = (k + pw - 1) // pw * pw
    cdef intp_t b, r0, r1, c0, c1, nr, i, j, n_chg, n_ex
    cdef double Jb
    cdef bint weighted = w.shape[0] > 0
    cdef bint simd = fast_tile_available()
    cdef double coef4 = 4.0 * coef, R2 = _max_norm(&cn[0], k), wi
    cdef floating *tile
    cdef int32_t *best
    cdef floating *Cp = NULL
    cdef double *cnp = NULL
    cdef float *cnp32 = NULL
    cdef double *S
    cdef int32_t lab
    cdef int failed[1]
    failed[0] = 0
    fast = fast and simd
    n_threads = threads_for(n_threads, n_blocks, 1)
    if assign:
        # the centroids as the tile reads them: packed panels, or kp x d rows (zero past k)
        Cp = <floating *> malloc(kp * d * sizeof(floating))
        cnp = <double *> malloc(kp * sizeof(double))
        cnp32 = <float *> malloc(kp * sizeof(float))
        if Cp == NULL or cnp == NULL or cnp32 == NULL:
            free(Cp)
            free(cnp)
            free(cnp32)
            return 1
        if fast:
            pack_panels(&Cg[0, 0], k, d, kp, Cp)
        else:
            memset(Cp, 0, kp * d * sizeof(floating))
            for j in range(k * d):
                Cp[j] = (&Cg[0, 0])[j]
        for j in range(kp):
            cnp[j] = cn[j] if j < k else INFINITY
            cnp32[j] = <float> cnp[j]
    if grouped and drift != NULL and simd:
        # each group's centroids packed as the tile's panels, groups one after another, each
        # padded to a multiple of 8 columns (_row_groups' tiles of one row)
        gcol = <intp_t *> malloc((ng + 1) * sizeof(intp_t))
        Gtmp = <floating *> malloc(k * d * sizeof(floating))
        if gcol != NULL:
            gcol[0] = 0
            for g in range(ng):
                gcol[g + 1] = gcol[g] + (gptr[g + 1] - gptr[g] + 7) // 8 * 8
            Pg = <floating *> malloc((gcol[ng] * d + 1) * sizeof(floating))
        if gcol == NULL or Gtmp == NULL or Pg == NULL:
            free(gcol)
            free(Gtmp)
            free(Pg)
            free(Cp)
            free(cnp)
            free(cnp32)
            return 1
        for g in range(ng):
            for p in range(gptr[g], gptr[g + 1]):
                memcpy(Gtmp + (p - gptr[g]) * d, &Cg[gmem[p], 0], d * sizeof(floating))
            if gptr[g + 1] > gptr[g]:
                pack_panels(Gtmp, gptr[g + 1] - gptr[g], d, gcol[g + 1] - gcol[g], Pg + gcol[g] * d)
        free(Gtmp)
    with parallel(num_threads=n_threads):
        tile = NULL
        best = NULL
        Xb = NULL
        xnb = NULL
        pb = NULL
        ix = NULL
        lo2 = NULL
        vb = NULL
        lgp = NULL
        comp = NULL
        if bounded:
            lo2 = <double *> malloc(chunk_rows * sizeof(double))
        trow = NULL
        glo = NULL
        garg = NULL
        if grouped and drift != NULL:
            glo = <double *> malloc(2 * ng * sizeof(double))
            garg = <int32_t *> malloc(ng * sizeof(int32_t))
            trow = <floating *> malloc((k + 8) * sizeof(floating))
            vb = <double *> malloc(k * sizeof(double))
            lgp = <double *> malloc(ng * sizeof(double))
            comp = <unsigned char *> malloc(ng)
        if assign:
            tile = <floating *> malloc(chunk_rows * kp * sizeof(floating))
            best = <int32_t *> malloc(chunk_rows * sizeof(int32_t))
        if bounded and drift != NULL:
            Xb = <floating *> malloc(chunk_rows * d * sizeof(floating))
            xnb = <double *> malloc(chunk_rows * sizeof(double))
            pb = <int32_t *> malloc(chunk_rows * sizeof(int32_t))
            ix = <intp_t *> malloc(chunk_rows * sizeof(intp_t))
        # dynamic: a thread slowed down by another process does not hold up the pass;
        # results do not depend on which thread takes a block
        for b in prange(n_blocks, schedule="dynamic"):
            if (assign and (tile == NULL or best == NULL)) or (bounded and lo2 == NULL) or (
                    bounded and drift != NULL and (Xb == NULL or xnb == NULL or pb == NULL or ix == NULL)) or (
                    grouped and drift != NULL and (vb == NULL or lgp == NULL or comp == NULL or trow == NULL
                                                   or glo == NULL or garg == NULL)):
                flag_set(failed)                # any thread: atomic (_atomic.pxd)
                continue
            r0 = b * block_rows
            r1 = r0 + block_rows
            if r1 > n:
                r1 = n
            S = acc + b * k * R
            if accumulate:
                memset(S, 0, k * R * sizeof(double))
                if anch != NULL:
                    for j in range(k):
                        anch[b * k + j] = -1
            # counted in locals, stored once per block (adjacent blocks' counters share a
            # cache line: incrementing them in place costs more than the whole pass)
            n_chg = 0
            n_ex = 0
            Jb = 0.0
            c0 = r0
            while c0 < r1:
                c1 = c0 + chunk_rows
                if c1 > r1:
                    c1 = r1
                nr = c1 - c0
                nf = nr
                src = &Xg[c0, 0]
                sxn = &xn[c0]
                sprev = &labels[c0]
                if grouped and drift != NULL:
                    # the group bounds' test; a row that fails it is computed alone
                    for i in range(c0, c1):
                        j = labp[i]
                        u = <double> ub[i] + drift[j]
                        lmin = INFINITY
                        for g in range(ng):
                            lgp[g] = <double> lb[i * ng + g] - gdrift[g]
                            lmin = lgp[g] if lgp[g] < lmin else lmin
                        if u < lmin * _KEEP:
                            ub[i] = _up32(u)
                            for g in range(ng):
                                lb[i * ng + g] = _down32(lgp[g])
                            continue
                        lab = _row_groups(&Xg[i, 0], &X[i, 0], xn[i], &Cg[0, 0], &C[0, 0], &cn[0], d,
                                          <int32_t> j, coef4 * (xn[i] + R2), gid, gmem, gptr, ng, lgp,
                                          vb, comp, glo, garg, &ub[i], &lb[i * ng], &n_ex, simd, Pg,
                                          gcol, trow)
                        if lab != j:
                            n_chg = n_chg + 1
                            labp[i] = lab
                    nf = 0
                elif bounded and drift != NULL:
                    # Hamerly's test; the rows that fail it are gathered (ix, Xb, xnb, pb)
                    nf = 0
                    for i in range(c0, c1):
                        j = labp[i]
                        u = <double> ub[i] + drift[j]
                        l = <double> lb[i] - (m2 if j == a1 else m1)
                        if not u < l * _KEEP:
                            ix[nf] = i
                            nf = nf + 1
                            continue
                        ub[i] = _up32(u)
                        lb[i] = _down32(l)
                    if nf < nr:
                        for q in range(nf):
                            i = ix[q]
                            memcpy(Xb + q * d, &Xg[i, 0], d * sizeof(floating))
                            xnb[q] = xn[i]
                            pb[q] = labp[i]
                        src = Xb
                        sxn = xnb
                        sprev = pb
                if assign and nf > 0:
                    if fast:
                        neg2_dot_tile_panels(nf, kp, d, src, Cp, tile)
                    else:
                        neg2_dot_tile(<int> nf, <int> kp, <int> d, src, Cp, tile)
                    if bounded:
                        _best2_rows(tile, nf, kp, cnp, cnp32, sxn, coef4, R2, simd, best, lo2)
                    else:
                        _best_rows(tile, nf, kp, cnp, cnp32, sprev, sxn, coef4, R2, simd, best)
                    for q in range(nf):
                        i = ix[q] if nf < nr else c0 + q
                        lab = best[q]
                        if lab < 0:
                            n_ex = n_ex + 1
                            lab = _exact_best(tile + q * kp, cnp, kp, coef4 * (sxn[q] + R2),
                                              &X[i, 0], &C[0, 0], d)
                            if bounded:
                                lo2[q] = NAN
                        if lab != labp[i]:
                            n_chg = n_chg + 1
                            labp[i] = lab
                        if grouped:
                            _set_group_bounds(tile + q * kp, cnp, lab, sxn[q], coef4 * (sxn[q] + R2),
                                              gmem, gptr, ng, &ub[i], &lb[i * ng])
                        elif bounded:
                            _set_bounds(tile + q * kp, cnp, kp, lab, lo2[q], sxn[q],
                                        coef4 * (sxn[q] + R2), &ub[i], &lb[i])
                if accumulate:
                    if simd:
                        if floating is double:
                            _add_rows_d(&Xg[c0, 0], nr, d, &labels[c0], &xn[c0],
                                        &w[c0] if weighted else NULL, R, S)
                        else:
                            _add_rows_f(&Xg[c0, 0], nr, d, &labels[c0], &xn[c0],
                                        &w[c0] if weighted else NULL, R, S)
                    else:
                        for i in range(c0, c1):
                            j = labels[i]
                            wi = w[i] if weighted else 1.0
                            _add_row(&Xg[i, 0], xn[i], wi, weighted, d,
                                     S + j * R, S + j * R + d, S + j * R + d + 1)
                    if anch != NULL:
                        _note_members(&X[0, 0], d, c0, c1, &labels[c0], anch + b * k)
                if Jpart != NULL:
                    for i in range(c0, c1):
                        if weighted:
                            Jb = Jb + w[i] * exact_key(&X[i, 0], &C[labels[i], 0], d, SQEUCLIDEAN)
                        else:
                            Jb = Jb + exact_key(&X[i, 0], &C[labels[i], 0], d, SQEUCLIDEAN)
                c0 = c1
            counts[2 * b] = n_chg
            counts[2 * b + 1] = n_ex
            if Jpart != NULL:
                Jpart[b] = Jb
        free(tile)
        free(best)
        free(Xb)
        free(xnb)
        free(pb)
        free(ix)
        free(lo2)
        free(vb)
        free(lgp)
        free(comp)
        free(trow)
        free(glo)
        free(garg)
    free(Cp)
    free(cnp)
    free(cnp32)
    free(Pg)
    free(gcol)
    return failed[0]


cdef void _merge(double *acc, intp_t n_blocks, intp_t width, int n_threads) noexcept nogil:
    """Row 0 of ``acc`` (n_blocks x width) <- the sum of all rows, added in block order."""
    cdef intp_t e, b
    cdef double s
    if n_blocks <= 1:
        return
    if n_blocks * width < _MERGE_PARALLEL:
        n_threads = 1       # a few thousand additions: not worth waking the threads
    for e in prange(width, schedule="static", num_threads=n_threads):
        s = acc[e]
        for b in range(1, n_blocks):
            s = s + acc[b * width + e]
        acc[e] = s


cdef double _objective(const double *tot, const floating[:, ::1] Cg, const double[::1] cn,
                       intp_t k, intp_t d) noexcept nogil:
    """J = sum_j (Q_j - 2 mu_j.S_j + W_j ||mu_j||^2), terms clamped at 0 (see module doc)."""
    cdef intp_t j, f, R = _rec(d)
    cdef double J = 0.0, dot, t
    cdef const double *S
    for j in range(k):
        S = tot + j * R
        dot = 0.0
        for f in range(d):
            dot = dot + <double> Cg[j, f] * S[f]
        t = S[d + 1] - 2.0 * dot + S[d] * cn[j]
        if t > 0.0:
            J = J + t
    return J


cdef intp_t _update(const double *tot, const intp_t *pure, const floating[:, ::1] X,
                    const double[::1] mean, bint centred, bint round32,
                    const floating[:, ::1] C, const floating[:, ::1] Cg, const double[::1] cn,
                    floating[:, ::1] C_new, floating[:, ::1] Cg_new, double[::1] cn_new,
                    intp_t k, intp_t d) noexcept nogil:
    """mu_j = fl(m + S_j / W_j) for every cluster of positive weight; an empty cluster
    (W_j = 0) keeps its centroid; a cluster whose members are all row a (``pure[j] = a``)
    gets mu_j = x_a exactly. Returns the number of empty clusters."""
    cdef intp_t j, f, n_empty = 0, R = _rec(d)
    cdef double W, v, s
    for j in range(k):
        W = tot[j * R + d]
        if not W > 0.0:
            n_empty += 1
            for f in range(d):
                C_new[j, f] = C[j, f]
                Cg_new[j, f] = Cg[j, f]
            cn_new[j] = cn[j]
            continue
        s = 0.0
        for f in range(d):
            if pure[j] >= 0:
                v = <double> X[pure[j], f]
            else:
                v = tot[j * R + f] / W
                if centred:
                    v = mean[f] + v
            if round32:
                v = <double> <float> v
            C_new[j, f] = <floating> v
            if centred:
                v = <double> C_new[j, f] - mean[f]
                if round32:
                    v = <double> <float> v
            Cg_new[j, f] = <floating> v
            s = s + <double> Cg_new[j, f] * <double> Cg_new[j, f]
        cn_new[j] = s
    return n_empty


cdef intp_t _merge_and_update(double *acc, const intp_t *pure, intp_t n_blocks,
                              const floating[:, ::1] X, const double[::1] mean, bint centred,
                              bint round32, const floating[:, ::1] C, const floating[:, ::1] Cg,
                              const double[::1] cn, floating[:, ::1] C_new, floating[:, ::1] Cg_new,
                              double[::1] cn_new, intp_t k, intp_t d, int n_threads,
                              double *J) noexcept nogil:
    """The end of an iteration from the blocks' partial sums (anchors already merged into
    ``pure``): the blocks merged in order into acc[0], J of the assignment (when J is not
    NULL) and the update step. Returns the number of empty clusters."""
    _merge(acc, n_blocks, k * _rec(d), n_threads)
    if J != NULL:
        J[0] = _objective(acc, Cg, cn, k, d)
    return _update(acc, pure, X, mean, centred, round32, C, Cg, cn, C_new, Cg_new, cn_new, k, d)


# ---- entry points --------------------------------------------------------------------------

def _check(const floating[:, ::1] Xg, const floating[:, ::1] X, const double[::1] xn,
           const double[::1] w, const floating[:, ::1] Cg, const floating[:, ::1] C,
           const double[::1] cn, int32_t[::1] labels, intp_t block_rows, intp_t chunk_rows):
    cdef intp_t n = Xg.shape[0], d = Xg.shape[1], k = Cg.shape[0]
    if X.shape[0] != n or X.shape[1] != d or xn.shape[0] != n or labels.shape[0] != n:
        raise ValueError("k-means kernel: X, Xg, norms and labels disagree in shape")
    if w.shape[0] not in (0, n):
        raise ValueError("k-means kernel: weights must have n entries (or none)")
    if k < 1 or C.shape[0] != k or Cg.shape[1] != d or C.shape[1] != d or cn.shape[0] != k:
        raise ValueError("k-means kernel: centroid arrays disagree in shape")
    if block_rows < 1 or chunk_rows < 1:
        raise ValueError("k-means kernel: block_rows and chunk_rows must be positive")


def _check_out_work(floating[:, ::1] C_new, floating[:, ::1] Cg_new, double[::1] cn_new,
                    double[:, ::1] acc, intp_t[:, ::1] anch, intp_t[:, ::1] counts,
                    intp_t n_blocks, intp_t k, intp_t d):
    """The update step's outputs (k x d centroids, k norms) and the blocks' work arrays."""
    if (C_new.shape[0] != k or Cg_new.shape[0] != k or C_new.shape[1] != d or Cg_new.shape[1] != d
            or cn_new.shape[0] != k):
        raise ValueError("k-means kernel: output centroid arrays disagree in shape")
    if (acc.shape[0] < n_blocks or acc.shape[1] != k * _rec(d) or counts.shape[0] < n_blocks
            or anch.shape[0] < n_blocks or anch.shape[1] != k):
        raise ValueError("k-means kernel: work arrays too small")


def lloyd_iter(const floating[:, ::1] Xg, const floating[:, ::1] X,     # IN  (n, d) gemm operand, raw data
               const double[::1] xn, const double[::1] w,               # IN  ||Xg_i||^2, weights (or empty)
               const floating[:, ::1] Cg, const floating[:, ::1] C,     # IN  (k, d) centroids mu_old
               const double[::1] cn,                                     # IN  ||Cg_j||^2
               const double[::1] mean, bint centred, bint round32,      # IN  the shift m (Xg = X - m)
               double coef,                                              # IN  gemm error coefficient
               int32_t[::1] labels,                                      # IN/OUT previous -> new labels
               floating[:, ::1] Cg_new, floating[:, ::1] C_new,          # OUT (k, d) centroids mu_new
               double[::1] cn_new,                                       # OUT ||Cg_new_j||^2
               double[:, ::1] acc,                                       # WORK (n_blocks, k record_width(d));
                                                                         #      OUT acc[0]: the k records [S_j | W_j | Q_j | 0]
               intp_t[:, ::1] anch,                                      # WORK (n_blocks, k); OUT anch[0]:
                                                                         #      row a if cluster j is all row a
               intp_t[:, ::1] counts,                                    # WORK (n_blocks, 2)
               intp_t block_rows, intp_t chunk_rows, bint fast, int n_threads, bint update=True,
               float[::1] ub=None, float[::1] lb=None,                   # IN/OUT (n,) distance bounds
               const floating[:, ::1] C_prev=None,                       # IN  (k, d) centroids of the
                                                                         #     bounds (None: not valid)
               const int32_t[::1] groups=None):                          # IN  (k,) each centroid's group
    """One Lloyd iteration (see the module doc). ``C_new`` may be ``Cg_new`` when not
    centred (likewise ``C`` and ``Cg``). Returns (J(c_new, mu_old), labels changed,
    rows decided on exact distances, empty clusters).

    With ``update=False`` only the assignment step and the blocks' partial sums run: ``acc``
    and ``counts`` keep one row per block, ``anch[0]`` holds the anchors of all the blocks
    merged (rows of this call's X), the centroid outputs are not written, and J and the
    empty clusters are returned as 0.0 and 0 (``smml.dask.KMeans`` merges every chunk's
    blocks in block order, with :func:`update_from_blocks`).

    Distance bounds (Hamerly's test, see :func:`_pass`): with ``ub`` and ``lb`` (float32,
    n entries each) the call sets them for the new labels and centroids ``C``. When
    ``C_prev`` is also given, the bounds held on entry are those of the current labels and
    the centroids ``C_prev``, and rows they prove still nearest to their centroid keep
    their label without computing their distances: the labels are the same as without
    bounds, bit for bit (the distances that decide them are exact).

    Group bounds (Yinyang's test, see :func:`_row_groups`): with ``groups`` (values 0 .. t - 1,
    t = max + 1), ``lb`` holds t bounds per row (n t entries), row i's group g at i t + g."""
    cdef intp_t n = Xg.shape[0], d = Xg.shape[1], k = Cg.shape[0]
    cdef intp_t n_blocks = (n + block_rows - 1) // block_rows, b
    cdef intp_t n_changed = 0, n_exact = 0, n_empty = 0, a1 = -1
    cdef double J = 0.0, m1 = 0.0, m2 = 0.0
    cdef int failed = 0
    cdef double *drift = NULL
    cdef float *ubp = NULL
    cdef float *lbp = NULL
    cdef intp_t ng = 0, g, j
    cdef int32_t *gmem = NULL
    cdef int32_t *gptr = NULL
    cdef double *gdrift = NULL
    _check(Xg, X, xn, w, Cg, C, cn, labels, block_rows, chunk_rows)
    _check_out_work(C_new, Cg_new, cn_new, acc, anch, counts, n_blocks, k, d)
    if groups is not None:
        if ub is None or groups.shape[0] != k:
            raise ValueError("k-means kernel: groups need the bounds and one entry per centroid")
        for j in range(k):
            if groups[j] < 0 or groups[j] >= k:
                raise ValueError("k-means kernel: a group out of range")
            if groups[j] + 1 > ng:
                ng = groups[j] + 1
    if (ub is None) != (lb is None) or (ub is not None and (ub.shape[0] != n or
                                                            lb.shape[0] != n * (ng if ng else 1))):
        raise ValueError("k-means kernel: bounds must be given together, n entries each (n t with groups)")
    if C_prev is not None:
        if ub is None:
            raise ValueError("k-means kernel: C_prev needs the bounds")
        if C_prev.shape[0] != k or C_prev.shape[1] != d:
            raise ValueError("k-means kernel: C_prev disagrees in shape with C")
        for b in range(n):
            if labels[b] < 0 or labels[b] >= k:
                raise ValueError("k-means kernel: bounds given for labels out of range")
    if n == 0:
        return 0.0, 0, 0, k
    if ub is not None:
        ubp = &ub[0]
        lbp = &lb[0]
    if C_prev is not None:
        drift = <double *> malloc(k * sizeof(double))
        if drift == NULL:
            raise MemoryError("lloyd_iter: could not allocate the drifts")
    if ng:
        # the centroids by group (a counting sort), each group's largest drift
        gmem = <int32_t *> malloc(k * sizeof(int32_t))
        gptr = <int32_t *> malloc((ng + 1) * sizeof(int32_t))
        gdrift = <double *> malloc(ng * sizeof(double))
        if gmem == NULL or gptr == NULL or gdrift == NULL:
            free(gmem)
            free(gptr)
            free(gdrift)
            free(drift)
            raise MemoryError("lloyd_iter: could not allocate the groups")
        memset(gptr, 0, (ng + 1) * sizeof(int32_t))
        for j in range(k):
            gptr[groups[j] + 1] += 1
        for g in range(ng):
            gptr[g + 1] += gptr[g]
        for j in range(k):
            gmem[gptr[groups[j]]] = <int32_t> j
            gptr[groups[j]] += 1
        for g in range(ng, 0, -1):
            gptr[g] = gptr[g - 1]
        gptr[0] = 0
    with nogil:
        if drift != NULL:
            _drifts(C, C_prev, drift, &m1, &m2, &a1)
            if ng:
                for g in range(ng):
                    gdrift[g] = 0.0
                for j in range(k):
                    if drift[j] > gdrift[groups[j]]:
                        gdrift[groups[j]] = drift[j]
        failed = _pass(Xg, X, xn, w, Cg, C, cn, coef, labels, &acc[0, 0], &anch[0, 0], &counts[0, 0],
                       NULL, True, True, block_rows, chunk_rows, fast, n_threads, ubp, lbp, drift,
                       m1, m2, a1, &groups[0] if ng else NULL, gmem, gptr, ng, gdrift)
        free(drift)
        free(gmem)
        free(gptr)
        free(gdrift)
        if not failed:
            for b in range(n_blocks):
                n_changed += counts[b, 0]
                n_exact += counts[b, 1]
            _merge_anchors(&X[0, 0], d, &anch[0, 0], n_blocks, k)
        if not failed and update:
            n_empty = _merge_and_update(&acc[0, 0], &anch[0, 0], n_blocks, X, mean, centred, round32,
                                        C, Cg, cn, C_new, Cg_new, cn_new, k, d, n_threads, &J)
    if failed:
        raise MemoryError("lloyd_iter: could not allocate the tiles")
    return J, n_changed, n_exact, n_empty


def update_from_blocks(const floating[:, ::1] V,                    # IN  (n_blocks k, d) anchor values
                       double[:, ::1] acc,                              # IN  (n_blocks, k record_width(d));
                                                                        #     OUT acc[0]: the k records [S_j | W_j | Q_j | 0]
                       intp_t[:, ::1] anch,                             # IN  (n_blocks, k): row of V,
                                                                        #     -1 or -2; OUT anch[0]
                       const floating[:, ::1] Cg, const floating[:, ::1] C,
                       const double[::1] cn, const double[::1] mean, bint centred, bint round32,
                       floating[:, ::1] Cg_new, floating[:, ::1] C_new, double[::1] cn_new):
    """The rest of :func:`lloyd_iter` (or :func:`recompute_centroids`) from the blocks'
    partial sums and anchors computed elsewhere (``smml.dask.KMeans``: every chunk's blocks,
    in block order): the same merge, objective and update step, in the same order. A
    block's anchor is a row of V holding that row's values; a cluster's anchors merge to
    the same state whichever blocks hold them, so a chunk may give its merged anchors on
    its first block and -1 (no member) on the others. Returns (J, empty clusters)."""
    cdef intp_t n_blocks = acc.shape[0], d = Cg.shape[1], k = Cg.shape[0], i, n_empty = 0
    cdef intp_t n_rows = V.shape[0]
    cdef double J = 0.0
    if (n_blocks < 1 or n_rows < 1 or acc.shape[1] != k * _rec(d) or anch.shape[0] != n_blocks
            or anch.shape[1] != k):
        raise ValueError("update_from_blocks: acc and anchors disagree in shape")
    if V.shape[1] != d or C.shape[0] != k or C.shape[1] != d or cn.shape[0] != k or mean.shape[0] != d:
        raise ValueError("update_from_blocks: centroid arrays disagree in shape")
    if (C_new.shape[0] != k or Cg_new.shape[0] != k or C_new.shape[1] != d or Cg_new.shape[1] != d
            or cn_new.shape[0] != k):
        raise ValueError("update_from_blocks: output centroid arrays disagree in shape")
    for i in range(n_blocks * k):
        if (&anch[0, 0])[i] < -2 or (&anch[0, 0])[i] >= n_rows:
            raise ValueError("update_from_blocks: an anchor is not a row of V")
    with nogil:
        _merge_anchors(&V[0, 0], d, &anch[0, 0], n_blocks, k)
        n_empty = _merge_and_update(&acc[0, 0], &anch[0, 0], n_blocks, V, mean, centred, round32,
                                    C, Cg, cn, C_new, Cg_new, cn_new, k, d, 1, &J)
    return J, n_empty


def recompute_centroids(const floating[:, ::1] Xg, const floating[:, ::1] X,
                        const double[::1] xn, const double[::1] w,
                        int32_t[::1] labels,                                     # IN  the labels
                        const floating[:, ::1] Cg, const floating[:, ::1] C,     # IN  mu_old (kept if empty)
                        const double[::1] cn,
                        const double[::1] mean, bint centred, bint round32,
                        floating[:, ::1] Cg_new, floating[:, ::1] C_new,         # OUT mu_new
                        double[::1] cn_new, double[:, ::1] acc, intp_t[:, ::1] anch,
                        intp_t[:, ::1] counts, intp_t block_rows, int n_threads, bint update=True):
    """The update step alone for given labels (after empty clusters were re-seeded): the
    same blocks, sums and rounding as :func:`lloyd_iter`. Returns the empty clusters.
    ``update=False``: the blocks' partial sums and the merged anchors only (as
    :func:`lloyd_iter`); returns 0."""
    cdef intp_t n = Xg.shape[0], d = Xg.shape[1], k = Cg.shape[0]
    cdef intp_t n_blocks = (n + block_rows - 1) // block_rows, i, n_empty = 0
    _check(Xg, X, xn, w, Cg, C, cn, labels, block_rows, block_rows)
    _check_out_work(C_new, Cg_new, cn_new, acc, anch, counts, n_blocks, k, d)
    for i in range(n):
        if labels[i] < 0 or labels[i] >= k:
            raise ValueError("recompute_centroids: label out of range")
    if n == 0:
        return k
    with nogil:
        # no tile without the assignment: one chunk per block
        _pass(Xg, X, xn, w, Cg, C, cn, 0.0, labels, &acc[0, 0], &anch[0, 0], &counts[0, 0], NULL,
              False, True, block_rows, block_rows, False, n_threads)
        _merge_anchors(&X[0, 0], d, &anch[0, 0], n_blocks, k)
        if update:
            n_empty = _merge_and_update(&acc[0, 0], &anch[0, 0], n_blocks, X, mean, centred, round32,
                                        C, Cg, cn, C_new, Cg_new, cn_new, k, d, n_threads, NULL)
    return n_empty


def assign(const floating[:, ::1] Xg, const floating[:, ::1] X,       # IN  (n, d)
           const double[::1] xn, const double[::1] w,                 # IN  ||Xg_i||^2, weights (or empty)
           const floating[:, ::1] Cg, const floating[:, ::1] C,       # IN  (k, d) centroids
           const double[::1] cn, double coef,
           int32_t[::1] labels,                                       # IN previous labels (a hint: any
                                                                      # value is safe; -1 = none), OUT
                                                                      # (IN only if not reassign)
           bint reassign, bint want_J,
           intp_t block_rows, intp_t chunk_rows, bint fast, int n_threads,
           double[::1] block_J=None):                                 # OUT each block's J (if given)
    """Labels on exact distances (``reassign``) and/or J = sum_i w_i ||x_i - c_{label_i}||^2
    with every distance computed exactly (``want_J``), summed row by row within fixed
    blocks and the blocks in order. Returns (J or 0.0, rows decided on exact distances).
    ``block_J`` (n_blocks entries, with ``want_J``): each block's sum, for a caller that adds
    the blocks of several calls in order (``smml.dask.KMeans``)."""
    cdef intp_t n = Xg.shape[0], d = Xg.shape[1], k = Cg.shape[0]
    cdef intp_t n_blocks = (n + block_rows - 1) // block_rows, b, i, n_exact = 0
    cdef double J = 0.0
    cdef double *part
    cdef intp_t[:, ::1] counts
    cdef int failed = 0
    _check(Xg, X, xn, w, Cg, C, cn, labels, block_rows, chunk_rows)
    if n == 0:
        return 0.0, 0
    if not reassign:
        for i in range(n):
            if labels[i] < 0 or labels[i] >= k:
                raise ValueError("assign: label out of range")
    if block_J is not None and (not want_J or block_J.shape[0] != n_blocks):
        raise ValueError("assign: block_J needs want_J and one entry per block")
    import numpy as np
    counts = np.zeros((n_blocks, 2), dtype=np.intp)
    part = <double *> malloc(n_blocks * sizeof(double))
    if part == NULL:
        raise MemoryError("assign: could not allocate the block sums")
    try:
        with nogil:
            failed = _pass(Xg, X, xn, w, Cg, C, cn, coef, labels, NULL, NULL, &counts[0, 0],
                           part if want_J else NULL, reassign, False, block_rows, chunk_rows,
                           fast, n_threads)
            if want_J and not failed:
                for b in range(n_blocks):
                    J = J + part[b]
                if block_J is not None:
                    for b in range(n_blocks):
                        block_J[b] = part[b]
        if failed:
            raise MemoryError("assign: could not allocate the tiles")
        for b in range(n_blocks):
            n_exact += counts[b, 1]
    finally:
        free(part)
    return J, n_exact


def sqdist_to_assigned(const floating[:, ::1] X, const floating[:, ::1] C,   # IN  (n, d), (k, d)
                       const int32_t[::1] labels,                            # IN  (n,)
                       double[::1] out, int n_threads):                      # OUT (n,)
    """out[i] = ||x_i - c_{labels[i]}||^2 computed exactly."""
    cdef intp_t n = X.shape[0], d = X.shape[1], k = C.shape[0], i
    if C.shape[1] != d or out.shape[0] != n or labels.shape[0] != n:
        raise ValueError("sqdist_to_assigned: bad shapes")
    for i in range(n):
        if labels[i] < 0 or labels[i] >= k:
            raise ValueError("sqdist_to_assigned: label out of range")
    if n == 0:
        return
    with nogil:
        for i in prange(n, schedule="static", num_threads=n_threads):
            out[i] = exact_key(&X[i, 0], &C[labels[i], 0], d, SQEUCLIDEAN)


def min_sqdist_update(const floating[:, ::1] X, const floating[::1] c,   # IN  (n, d), (d,)
                      double[::1] mind, int n_threads):                  # IN/OUT (n,)
    """mind[i] = min(mind[i], ||x_i - c||^2), the distance computed exactly (k-means++)."""
    cdef intp_t n = X.shape[0], d = X.shape[1], i
    cdef double e
    if c.shape[0] != d or mind.shape[0] != n:
        raise ValueError("min_sqdist_update: bad shapes")
    if n == 0:
        return
    with nogil:
        for i in prange(n, schedule="static", num_threads=n_threads):
            e = exact_key(&X[i, 0], &c[0], d, SQEUCLIDEAN)
            if e < mind[i]:
                mind[i] = e
