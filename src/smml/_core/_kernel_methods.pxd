# Kernel tiles and the bounded kernel-row cache shared by the kernel learners
# (smml._core._kernel_methods: Gram matrices, decision values, kernel Perceptron and
# Pegasos; smml._core._svm: the SMO solver). Inline, so each hot loop inlines
# them; cimport them, never copy them.
#
# The kernels of 003 section 11 (gamma is 003's Gaussian WIDTH, not
# scikit-learn's gamma; scale = 1 / (2 gamma) is what the tiles use):
#   linear       K(x, x') = x.x'
#   polynomial   K(x, x') = (1 + x.x')^n
#   gaussian     K(x, x') = exp(-||x - x'||^2 / (2 gamma))
# Tiles go through the shared distance tile of smml._core._distances: one gemm
# (or a gemv per row for a few rows) per tile, then an elementwise transform.
from libc.stdint cimport int64_t
from smml._core._typedefs cimport floating, intp_t
from smml._core._distances cimport sqdist_tile, scaled_dot_tile

# exp(-s v) over an array, vectorised. A branch-free Cody-Waite reduction
# (x = n ln2 + r, |r| <= ln2 / 2) and the Taylor polynomial of e^r to degree 13
# (truncation < 5e-18 relative), scaled by 2^n through the exponent bits: at
# most 1 ulp from the correctly rounded value on the normal range (checked
# against libm on 4M arguments). Arguments outside [-708, 709] (results that
# are subnormal, zero or huge) are recomputed by libm's exp. float32 tiles (and
# float64 tiles stored as float32) use the float32 twin below. GCC compiles the
# block loop twice (AVX2 and portable, chosen at run time by smml_platform.h's
# smml_isa(), which SMML_SIMD can lower); other compilers get the portable loop.
# The C is in smml_math.h.
cdef extern from "smml_math.h" nogil:
    void smml_exp_neg_scaled_d(double *v, Py_ssize_t n, double s) noexcept nogil
    void smml_expf_neg_scaled(const double *vd, const float *vf, float *out, Py_ssize_t n,
                              double s) noexcept nogil


cdef enum:
    KERNEL_LINEAR = 0
    KERNEL_POLYNOMIAL = 1
    KERNEL_GAUSSIAN = 2
    KERNEL_CALLABLE = 3      # a user callable: rows come from Python, never from a tile


ctypedef struct KernelSpec:
    int kind
    int degree               # polynomial degree n >= 1
    double scale             # 1 / (2 gamma) for the Gaussian


cdef inline double int_power(double b, int n) noexcept nogil:
    """b ** n for an integer n >= 0 by repeated squaring."""
    cdef double r = 1.0
    while n > 0:
        if n & 1:
            r = r * b
        b = b * b
        n = n >> 1
    return r


cdef inline double kernel_self(const KernelSpec *ks, double sqnorm) noexcept nogil:
    """K(x, x) from ||x||^2, exactly: x.x, (1 + x.x)^n, or exp(0) = 1."""
    if ks.kind == KERNEL_GAUSSIAN:
        return 1.0
    if ks.kind == KERNEL_POLYNOMIAL:
        return int_power(1.0 + sqnorm, ks.degree)
    return sqnorm


cdef inline void kernel_tile(const KernelSpec *ks, int nqb, int ntb, int d,
                             const floating *Qr, const floating *Tr,
                             const double *q_norm, const double *t_norm,
                             floating *tile) noexcept nogil:
    """tile (nqb x ntb, row-major) = K(Qr[a], Tr[b]) for a < nqb, b < ntb.

    ``q_norm`` / ``t_norm`` (squared row norms, float64) are read for the
    Gaussian only. The arithmetic is in ``floating`` for the product and in
    float64 for the transform of each entry.
    """
    cdef intp_t k, n = <intp_t> nqb * ntb
    cdef double v, s = ks.scale
    cdef int deg = ks.degree
    if ks.kind == KERNEL_GAUSSIAN:
        sqdist_tile(nqb, ntb, d, Qr, Tr, q_norm, t_norm, tile)
        if floating is double:
            smml_exp_neg_scaled_d(tile, n, s)
        else:
            smml_expf_neg_scaled(NULL, tile, tile, n, s)
    else:
        scaled_dot_tile(nqb, ntb, d, <floating> 1.0, Qr, Tr, tile)
        if ks.kind == KERNEL_POLYNOMIAL:
            for k in range(n):
                v = 1.0 + <double> tile[k]
                tile[k] = <floating> int_power(v, deg)


cdef inline void kernel_tile_f32(const KernelSpec *ks, int nqb, int ntb, int d,
                                 const floating *Qr, const floating *Tr,
                                 const double *q_norm, const double *t_norm,
                                 floating *work, float *out) noexcept nogil:
    """kernel_tile for results stored as float32 (the SVM's kernel cache, as
    libsvm's): the product in ``floating`` (into ``work``), the Gaussian's exp in
    float32 arithmetic on the float32-rounded argument (2 float32 ulp), other
    transforms in float64; ``out`` may be ``work`` when floating is float."""
    cdef intp_t k, n = <intp_t> nqb * ntb
    if floating is float:
        kernel_tile(ks, nqb, ntb, d, Qr, Tr, q_norm, t_norm, out)
    else:
        if ks.kind == KERNEL_GAUSSIAN:
            sqdist_tile(nqb, ntb, d, Qr, Tr, q_norm, t_norm, work)
            smml_expf_neg_scaled(work, NULL, out, n, ks.scale)
        else:
            kernel_tile(ks, nqb, ntb, d, Qr, Tr, q_norm, t_norm, work)
            for k in range(n):
                out[k] = <float> work[k]


# ---------------------------------------------------------------------------
# A bounded cache of kernel rows K(x_i, .) (length m each), least recently used
# out. The caller owns the storage: `data` holds n_slots rows of m values; the
# bookkeeping arrays below are the caller's buffers too (numpy arrays kept
# between calls, or malloc'ed by a solver).
# ---------------------------------------------------------------------------
ctypedef struct RowCache:
    intp_t m                 # row length (= number of training rows)
    intp_t n_slots           # rows the storage holds (>= 2)
    intp_t *slot_of          # (m,) slot holding row i, or -1
    intp_t *owner            # (n_slots,) row held by a slot, or -1
    int64_t *stamp           # (n_slots,) time of last use
    int64_t *tag             # (n_slots,) the caller's validity tag of the row in the slot
    int64_t *state           # (2,) [the cache's time, slots used so far]


cdef inline KernelSpec kernel_spec(int kind, int degree, double scale) noexcept nogil:
    cdef KernelSpec ks
    ks.kind = kind
    ks.degree = degree
    ks.scale = scale
    return ks


cdef inline RowCache row_cache(intp_t m, intp_t[::1] slot_of, intp_t[::1] owner, int64_t[::1] stamp,
                               int64_t[::1] tag, int64_t[::1] cstate) noexcept nogil:
    """The cache over the storage and bookkeeping arrays Python keeps between calls."""
    cdef RowCache c
    c.m = m
    c.n_slots = owner.shape[0]
    c.slot_of = &slot_of[0]
    c.owner = &owner[0]
    c.stamp = &stamp[0]
    c.tag = &tag[0]
    c.state = &cstate[0]
    return c


cdef inline intp_t cache_find(RowCache *c, intp_t i) noexcept nogil:
    """The slot of row i (marked as just used), or -1."""
    cdef intp_t s = c.slot_of[i]
    if s >= 0:
        c.state[0] += 1
        c.stamp[s] = c.state[0]
    return s


cdef inline intp_t cache_claim(RowCache *c, intp_t i) noexcept nogil:
    """A slot for row i (not cached): the next never-used slot, else the least
    recently used one (O(n_slots) scan, small next to computing a row). The
    caller fills the slot's row and sets its tag."""
    cdef intp_t s, best = 0, old
    cdef int64_t oldest
    if c.state[1] < c.n_slots:
        best = <intp_t> c.state[1]
        c.state[1] += 1
    else:
        oldest = c.stamp[0]
        for s in range(1, c.n_slots):
            if c.stamp[s] < oldest:
                oldest = c.stamp[s]
                best = s
        old = c.owner[best]
        if old >= 0:
            c.slot_of[old] = -1
    c.owner[best] = i
    c.slot_of[i] = best
    c.state[0] += 1
    c.stamp[best] = c.state[0]
    return best
