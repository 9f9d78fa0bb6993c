# Distance tiles and exact distances: the pieces every distance-based kernel shares
# (k-NN, kernel Gram matrices, k-means). The (key, index) order and the bounded heap
# on it are in _heap.pxd.
# Written once, here, as inline functions so that each kernel's hot loop
# inlines them; cimport them, never copy them.
#
# Conventions: row-major operands; a "tile" is the (nqb x ntb) block of query
# rows Q[q0:q0+nqb] against training rows T[t0:t0+ntb]; keys are float64.
from libc.math cimport fabs, INFINITY
from smml._core._typedefs cimport floating, intp_t
from smml._core._blas cimport _gemm, _gemv

cdef enum:
    SQEUCLIDEAN = 0      # squared Euclidean distance (no square root: no two keys merge)
    MANHATTAN = 1        # sum of absolute differences
    HAMMING = 2          # number of differing coordinates (002)

cdef enum:
    GEMV_ROWS = 6        # tiles of at most this many query rows: one gemv per row


cdef inline double exact_key(const floating *a, const floating *b, intp_t d,
                             int metric) noexcept nogil:
    """The notes' distance (squared for Euclidean), by direct subtraction in float64,
    summed feature by feature in order: the exact key every fast path is checked against."""
    return exact_key_upto(a, b, d, metric, INFINITY)


cdef inline double exact_key_upto(const floating *a, const floating *b, intp_t d,
                                  int metric, double bound) noexcept nogil:
    """:func:`exact_key` when it is <= ``bound`` (bit for bit: the same operations in the
    same order); otherwise some value > ``bound``. The sum stops as soon as a partial sum
    exceeds ``bound``: every term is >= 0 and rounding to nearest is monotone, so
    fl(s + t) >= s and the full sum would exceed ``bound`` too."""
    cdef double s = 0.0, t
    cdef intp_t f
    if metric == SQEUCLIDEAN:
        for f in range(d):
            t = <double> a[f] - <double> b[f]
            s = s + t * t
            if s > bound:
                return s
    elif metric == MANHATTAN:
        for f in range(d):
            s = s + fabs(<double> a[f] - <double> b[f])
            if s > bound:
                return s
    else:
        for f in range(d):
            if a[f] != b[f]:
                s = s + 1.0
                if s > bound:
                    return s
    return s


cdef inline void scaled_dot_tile(int nqb, int ntb, int d, floating alpha, const floating *Qr,
                                 const floating *Tr, floating *tile) noexcept nogil:
    """tile (nqb x ntb) = alpha Qr @ Tr.T, with Qr (nqb x d) and Tr (ntb x d) row-major.

    A tile of at most ``GEMV_ROWS`` query rows goes through one gemv per row, which
    reads the training block without packing it (measured faster than gemm's packed
    product for so few rows: bench/neighbors.md); the block stays in cache between the rows.
    """
    cdef floating beta = 0.0
    cdef int r
    if nqb <= GEMV_ROWS:
        for r in range(nqb):
            _gemv(False, ntb, d, alpha, Tr, d, Qr + r * d, 1, beta, tile + r * ntb, 1)
    else:
        _gemm(False, True, nqb, ntb, d, alpha, Qr, d, Tr, d, beta, tile, ntb)


cdef inline void neg2_dot_tile(int nqb, int ntb, int d, const floating *Qr, const floating *Tr,
                               floating *tile) noexcept nogil:
    """tile (nqb x ntb) = -2 Qr @ Tr.T (the middle term of the squared distances)."""
    scaled_dot_tile(nqb, ntb, d, <floating> -2.0, Qr, Tr, tile)


# ---- the packed-panel tile (x86-64 with AVX2 + FMA, chosen at run time) -------------------
#
# For few centroids / queries against many rows (k-means: 200,000 x 32 rows against 16
# centroids), BLAS gemm spends about as long packing the row block as multiplying it (a
# profile of OpenBLAS's dgemm on 256 x 32 x 16 tiles, bench/cluster.md: packing as long as the
# kernel). This tile reads the rows in place and the (few) columns from panels packed
# once: panel p holds columns p*PW .. p*PW + PW - 1 of -2 C (zero past k) feature by feature,
# PW = PANEL_D (float64) or PANEL_F (float32) = two AVX2 vectors; a 4-row x 2-vector
# register block of fused multiply-adds (its speed against gemm's: bench/cluster.md), and for
# a float32 kp that is an odd multiple of 8, a last half panel of one vector computed 8 rows x
# 1 vector at a time (k = 8, float32: half the multiply-adds of a padded panel). It is
# compiled for AVX2 + FMA with a target attribute (the wheel stays generic x86-64) and
# used only when ``fast_tile_available()``; elsewhere callers use neg2_dot_tile. Its
# rounding differs from gemm's (fused multiply-adds, another order) but stays within the
# same error bound (each product-sum rounds once instead of twice).
cdef extern from "smml_distances.h":
    int PANEL_D "SMML_PANEL_D"
    int PANEL_F "SMML_PANEL_F"
    int PANEL_UNIT "SMML_PANEL_UNIT"
    bint fast_tile_available "smml_fast_tile_available" () noexcept nogil
    void _pack_panels_d "smml_pack_panels_d" (const double *C, intp_t k, intp_t d, intp_t kp,
                                              double *P) noexcept nogil
    void _pack_panels_f "smml_pack_panels_f" (const float *C, intp_t k, intp_t d, intp_t kp,
                                              float *P) noexcept nogil
    void _tile_panels_d "smml_tile_panels_d" (intp_t nr, intp_t kp, intp_t d, const double *X,
                                              const double *P, double *out) noexcept nogil
    void _tile_panels_f "smml_tile_panels_f" (intp_t nr, intp_t kp, intp_t d, const float *X,
                                              const float *P, float *out) noexcept nogil


cdef inline intp_t panel_width(const floating *dummy) noexcept nogil:
    """The padding unit of ``kp`` for the tile of this dtype: 8 columns (float64: a panel of
    two vectors; float32: half a panel, packed and computed as one vector, so that 8
    centroids or fewer are not computed as 16)."""
    return PANEL_UNIT


cdef inline void pack_panels(const floating *C, intp_t k, intp_t d, intp_t kp,
                             floating *P) noexcept nogil:
    """Pack -2 C (C: k x d, row-major) as the panels of :func:`neg2_dot_tile_panels`;
    ``kp`` (k rounded up to a multiple of ``panel_width``) columns, zero past k."""
    if floating is double:
        _pack_panels_d(C, k, d, kp, P)
    else:
        _pack_panels_f(C, k, d, kp, P)


cdef inline void neg2_dot_tile_panels(intp_t nr, intp_t kp, intp_t d, const floating *Xr,
                                      const floating *P, floating *tile) noexcept nogil:
    """tile (nr x kp, row-major) = -2 Xr @ C^T, Xr (nr x d) row-major, C packed in panels
    (:func:`pack_panels`). Only when ``fast_tile_available()``."""
    if floating is double:
        _tile_panels_d(nr, kp, d, Xr, P, tile)
    else:
        _tile_panels_f(nr, kp, d, Xr, P, tile)


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
