# Kernels of smml.kernels (003 section 11): blocked Gram matrices, blocked
# decision values sum_s c_s K(x_s, x), and the sequential kernel learners
# (the kernel Perceptron of 003's Algorithm 4 and kernel Pegasos, 003 section
# 12) on a bounded cache of kernel rows.
#
# Conventions (see /work/shared/STYLE.md and smml._core._kernel_methods.pxd):
# - Python validates everything and allocates every output before a kernel
#   runs; the order of examples / the Pegasos draws come from Python.
# - Tiles go through kernel_tile (smml._core._kernel_methods.pxd), i.e. through the
#   shared distance tile of smml._core._distances: one gemm per tile (a gemv
#   per row for a few rows), so BLAS must be pinned to one thread around the
#   parallel kernels (smml._threads.blas_single_thread).
# - Memory: per thread one tile; never n_queries x n_train.
# - The sequential learners keep g[t] = sum_{s in S} y_s K(x_s, x_t) for every
#   training point t, updated by one kernel row per mistake (rows come from a
#   least-recently-used cache of at most n_slots rows). With a user callable
#   kernel the loop is resumable: it returns the row it is missing, Python
#   computes that row into the cache, and calls again from the same position.
from cython.parallel cimport prange, parallel
from smml._core._atomic cimport flag_set
from libc.stdlib cimport malloc, free
from libc.math cimport sqrt, isfinite
from libc.stdint cimport int8_t, int64_t

from smml._core._typedefs cimport floating, intp_t
from smml._core._blas cimport _gemm
from smml._core._kernel_methods cimport (KernelSpec, KERNEL_CALLABLE, kernel_tile, kernel_tile_f32, kernel_self,
                                  RowCache, cache_find, cache_claim)

ctypedef fused out_t:
    float
    double

cdef enum:
    GRAM_TILE = 128     # side of a Gram matrix tile
    DEC_Q = 128         # query rows per decision block
    DEC_S = 512         # support vectors per decision block


cdef inline void _tile_pair(intp_t t, intp_t *bi, intp_t *bj) noexcept nogil:
    """The t-th tile (bi, bj), bj <= bi, of the lower triangle in row order."""
    cdef intp_t i = <intp_t> ((sqrt(8.0 * <double> t + 1.0) - 1.0) * 0.5)
    while i * (i + 1) // 2 > t:
        i -= 1
    while (i + 1) * (i + 2) // 2 <= t:
        i += 1
    bi[0] = i
    bj[0] = t - i * (i + 1) // 2


# ---------------------------------------------------------------------------
# Gram matrices
# ---------------------------------------------------------------------------
def gram(const floating[:, ::1] X,          # IN  (n, d)
         const floating[:, ::1] Y,          # IN  (p, d); Y is X when fill > 0
         int kind, int degree, double scale,
         const double[::1] xn,              # IN  (n,) ||x||^2 (Gaussian, or fill > 0)
         const double[::1] yn,              # IN  (p,) ||y||^2 (Gaussian)
         out_t[:, ::1] out,                 # OUT (n, p)
         int fill, int n_threads):
    """out[i, j] = K(X[i], Y[j]) by tiles (OpenMP over tiles, one gemm per tile).

    fill = 0: every entry. With Y is X: fill = 1 computes the lower triangle
    j <= i only (what a Cholesky factorisation reads), fill = 2 the lower
    triangle mirrored into the upper one (exactly symmetric); both set the
    diagonal to K(x, x) computed exactly (kernel_self). The tile arithmetic is
    in X's dtype; a float32 output gets its values through kernel_tile_f32 (the
    Gaussian's exp in float32 arithmetic, as stored).
    Returns the number of entries written that are not finite (overflow).
    """
    cdef intp_t n = X.shape[0], p = Y.shape[0], d = X.shape[1]
    cdef intp_t nbi = (n + GRAM_TILE - 1) // GRAM_TILE, nbj = (p + GRAM_TILE - 1) // GRAM_TILE
    cdef intp_t n_tiles, t, bi = 0, bj = 0, i0, j0, nqb, ntb, a, b, bmax, a0, ab, bb
    cdef KernelSpec ks = kernel_spec(kind, degree, scale)
    cdef floating *buf
    cdef float *fbuf
    cdef out_t v
    cdef intp_t bad = 0
    cdef int oom = 0
    cdef int *p_oom = &oom              # written through a pointer: shared, not thread-private
    if n == 0 or p == 0:
        return 0
    n_tiles = nbi * (nbi + 1) // 2 if fill > 0 else nbi * nbj
    with nogil, parallel(num_threads=n_threads):
        buf = <floating *> malloc(GRAM_TILE * GRAM_TILE * sizeof(floating))
        fbuf = <float *> malloc(GRAM_TILE * GRAM_TILE * sizeof(float))
        if buf == NULL or fbuf == NULL:
            flag_set(p_oom)                 # any thread: atomic (_atomic.pxd)
        for t in prange(n_tiles, schedule="dynamic"):
            if buf == NULL or fbuf == NULL:
                continue
            if fill > 0:
                _tile_pair(t, &bi, &bj)
            else:
                bi = t // nbj
                bj = t - bi * nbj
            i0 = bi * GRAM_TILE
            j0 = bj * GRAM_TILE
            nqb = min(<intp_t> GRAM_TILE, n - i0)
            ntb = min(<intp_t> GRAM_TILE, p - j0)
            if out_t is float:
                kernel_tile_f32(&ks, <int> nqb, <int> ntb, <int> d, &X[i0, 0], &Y[j0, 0],
                                &xn[i0], &yn[j0], buf, fbuf)
            else:
                kernel_tile(&ks, <int> nqb, <int> ntb, <int> d, &X[i0, 0], &Y[j0, 0],
                            &xn[i0], &yn[j0], buf)
            for a in range(nqb):
                bmax = ntb
                if fill > 0 and bi == bj:
                    bmax = a + 1          # the diagonal tile: its lower half only
                for b in range(bmax):
                    v = <out_t> fbuf[a * ntb + b] if out_t is float else <out_t> buf[a * ntb + b]
                    if not isfinite(v):
                        bad += 1
                    out[i0 + a, j0 + b] = v
            if fill == 2:
                # the mirror image, by 16 x 16 blocks (a cache line of the tile read, of the
                # output written, at a time)
                for bb in range(0, ntb, 16):
                    for ab in range(0, nqb, 16):
                        for b in range(bb, min(bb + 16, ntb)):
                            a0 = ab
                            if bi == bj and a0 <= b:
                                a0 = b + 1        # the diagonal tile: mirror its lower half
                            if out_t is float:
                                for a in range(a0, min(ab + 16, nqb)):
                                    out[j0 + b, i0 + a] = fbuf[a * ntb + b]
                            else:
                                for a in range(a0, min(ab + 16, nqb)):
                                    out[j0 + b, i0 + a] = <out_t> buf[a * ntb + b]
            if fill > 0 and bi == bj:
                for a in range(nqb):
                    out[i0 + a, i0 + a] = <out_t> kernel_self(&ks, xn[i0 + a])
        free(buf)
        free(fbuf)
    if oom:
        raise MemoryError("kernel matrix: cannot allocate the per-thread tiles")
    return bad


def gram_diag(const double[::1] xn, int kind, int degree, double scale, double[::1] out):
    """out[i] = K(x_i, x_i) from the squared norms, exactly (kernel_self)."""
    cdef KernelSpec ks = kernel_spec(kind, degree, scale)
    cdef intp_t i
    with nogil:
        for i in range(xn.shape[0]):
            out[i] = kernel_self(&ks, xn[i])


# ---------------------------------------------------------------------------
# Decision values: out = K(Xq, S) @ coef, blocked
# ---------------------------------------------------------------------------
def decision(const floating[:, ::1] Xq,     # IN  (nq, d)
             const floating[:, ::1] S,      # IN  (ns, d) support vectors
             int kind, int degree, double scale,
             const double[::1] qn,          # IN  (nq,) ||x||^2 (Gaussian)
             const double[::1] sn,          # IN  (ns,)
             const floating[:, ::1] coef,   # IN  (ns, k)
             floating[:, ::1] out,          # OUT (nq, k)
             int n_threads):
    """out[q, c] = sum_s K(Xq[q], S[s]) coef[s, c].

    OpenMP over blocks of DEC_Q queries; each block walks the support vectors
    in blocks of DEC_S in order (one kernel tile, one gemm into the block's
    rows), so the result does not depend on the thread count. Memory: one
    DEC_Q x DEC_S tile per thread.
    """
    cdef intp_t nq = Xq.shape[0], ns = S.shape[0], d = Xq.shape[1], k = coef.shape[1]
    cdef intp_t nbq = (nq + DEC_Q - 1) // DEC_Q, qb, q0, s0, nqb, nsb, a, c
    cdef KernelSpec ks = kernel_spec(kind, degree, scale)
    cdef floating *buf
    cdef floating one = 1.0
    cdef int oom = 0
    cdef int *p_oom = &oom              # written through a pointer: shared, not thread-private
    if nq == 0:
        return
    if ns == 0:
        with nogil:
            for a in range(nq):
                for c in range(k):
                    out[a, c] = 0.0
        return
    with nogil, parallel(num_threads=n_threads):
        buf = <floating *> malloc(DEC_Q * DEC_S * sizeof(floating))
        if buf == NULL:
            flag_set(p_oom)                 # any thread: atomic (_atomic.pxd)
        for qb in prange(nbq, schedule="static"):
            if buf == NULL:
                continue
            q0 = qb * DEC_Q
            nqb = min(<intp_t> DEC_Q, nq - q0)
            for a in range(nqb):
                for c in range(k):
                    out[q0 + a, c] = 0.0
            s0 = 0
            while s0 < ns:
                nsb = min(<intp_t> DEC_S, ns - s0)
                kernel_tile(&ks, <int> nqb, <int> nsb, <int> d, &Xq[q0, 0], &S[s0, 0],
                            &qn[q0], &sn[s0], buf)
                _gemm(False, False, <int> nqb, <int> k, <int> nsb, one, buf, <int> nsb,
                      &coef[s0, 0], <int> k, one, &out[q0, 0], <int> k)
                s0 = s0 + nsb
        free(buf)
    if oom:
        raise MemoryError("kernel decision function: cannot allocate the per-thread tiles")


# ---------------------------------------------------------------------------
# The row cache of the sequential learners
# ---------------------------------------------------------------------------
cdef extern from "smml_platform.h":
    int smml_no_hugepages(void *p, size_t n) noexcept nogil
    bint SMML_LINUX


def no_hugepages(unsigned char[::1] buf):
    """Ask the kernel (Linux) to back `buf` with ordinary pages, not transparent huge pages.

    For a kernel-row cache, whose pages are first touched one row at a time during a solve:
    numpy marks large buffers MADV_HUGEPAGE, and under the common THP setting
    (defrag=madvise) a fault on such a buffer compacts memory to make a huge page, which
    stalled KernelSVC fits with a 1 GB cache for much of their time (bench/kernels.md).
    Returns True when the advice was taken (always False off Linux)."""
    if buf.shape[0] == 0:
        return False
    return smml_no_hugepages(<void *> &buf[0], <size_t> buf.shape[0]) == 0 and SMML_LINUX


def cache_put(intp_t i, intp_t[::1] slot_of, intp_t[::1] owner, int64_t[::1] stamp,
              int64_t[::1] tag, int64_t[::1] cstate):
    """Claim a cache slot for row i (evicting the least recently used row); Python
    then writes K(x_i, .) into it (user callable kernels). Returns the slot."""
    cdef RowCache c = row_cache(slot_of.shape[0], slot_of, owner, stamp, tag, cstate)
    cdef intp_t s = cache_find(&c, i)
    if s < 0:
        s = cache_claim(&c, i)
    c.tag[s] = 1
    return s


cdef inline floating *_row(RowCache *c, floating *rows, intp_t i, const KernelSpec *ks,
                           const floating *X, const double *xn, intp_t d) noexcept nogil:
    """The cached row K(x_i, .) (computed on a miss), or NULL if it is missing and
    the kernel is a user callable."""
    cdef intp_t s = cache_find(c, i)
    cdef floating *r
    if s >= 0:
        return rows + s * c.m
    if ks.kind == KERNEL_CALLABLE:
        return NULL
    s = cache_claim(c, i)
    r = rows + s * c.m
    kernel_tile(ks, 1, <int> c.m, <int> d, X + i * d, X, xn + i, xn, r)
    c.tag[s] = 1
    return r


# ---------------------------------------------------------------------------
# Kernel Perceptron (003 section 11, Algorithm 4)
# ---------------------------------------------------------------------------
def perceptron_run(const floating[:, ::1] X,       # IN  (m, d)
                   const double[::1] xn,           # IN  (m,) ||x||^2 (Gaussian)
                   int kind, int degree, double scale,
                   const int8_t[::1] y,            # IN  labels in {-1, +1}
                   const intp_t[::1] order,        # IN  the epoch's order of the examples
                   intp_t start,                   # IN  first position of `order` to visit
                   double[::1] g,                  # IN/OUT (m,) sum_{s in S} y_s K(x_s, x_t)
                   int64_t[::1] counts,            # IN/OUT (m,) multiplicity of t in S
                   floating[:, ::1] rows,          # IN/OUT (n_slots, m) cached rows
                   intp_t[::1] slot_of, intp_t[::1] owner, int64_t[::1] stamp,
                   int64_t[::1] tag, int64_t[::1] cstate,
                   intp_t[::1] ring,               # IN/OUT (budget,) S in order of arrival
                   int64_t[::1] ring_state):       # IN/OUT [oldest position, |S|]
    """Algorithm 4 on the examples order[start:], one at a time: y_hat =
    sgn(g[t]) with sgn(0) = -1; on y_hat != y_t, t joins S (g += y_t K(x_t, .)).

    With a budget B = len(ring) > 0, S keeps its B most recent members: when
    |S| = B, the oldest member s leaves first (g -= y_s K(x_s, .)).

    Returns (position reached, missing row or -1, mistakes made). A missing row
    (user callable kernel) stops the walk before the mistake at that position is
    applied; the caller fills the row and calls again from that position.
    """
    cdef intp_t m = X.shape[0], d = X.shape[1], n = order.shape[0], B = ring.shape[0]
    cdef intp_t k, t, j, old = -1, head, size, need = -1
    cdef intp_t mistakes = 0
    cdef double yt, yo
    cdef floating *rt
    cdef floating *ro
    cdef KernelSpec ks = kernel_spec(kind, degree, scale)
    cdef RowCache c = row_cache(m, slot_of, owner, stamp, tag, cstate)
    k = start
    with nogil:
        while k < n:
            t = order[k]
            yt = y[t]
            if (g[t] > 0.0) == (yt > 0.0):
                k += 1
                continue
            # a mistake: S <- S + {t} (after the oldest member leaves a full budget)
            head = ring_state[0]
            size = ring_state[1]
            ro = NULL
            if B > 0 and size == B:
                old = ring[head]
                ro = _row(&c, &rows[0, 0], old, &ks, &X[0, 0], &xn[0], d)
                if ro == NULL:
                    need = old
                    break
            rt = _row(&c, &rows[0, 0], t, &ks, &X[0, 0], &xn[0], d)
            if rt == NULL:
                need = t
                break
            if B > 0 and size == B:
                # rt may have taken ro's slot only if n_slots < 2 (never: Python keeps >= 2)
                yo = y[old]
                for j in range(m):
                    g[j] -= yo * ro[j]
                counts[old] -= 1
                ring[head] = t
                ring_state[0] = (head + 1) % B
            elif B > 0:
                ring[(head + size) % B] = t
                ring_state[1] = size + 1
            for j in range(m):
                g[j] += yt * rt[j]
            counts[t] += 1
            mistakes += 1
            k += 1
    return k, need, mistakes


# ---------------------------------------------------------------------------
# Kernel Pegasos (003 section 12; Shalev-Shwartz et al. 2011, kernel form)
# ---------------------------------------------------------------------------
def pegasos_run(const floating[:, ::1] X,          # IN  (m, d)
                const double[::1] xn,              # IN  (m,)
                int kind, int degree, double scale,
                const int8_t[::1] y,               # IN  labels in {-1, +1}
                const intp_t[::1] idx,             # IN  the examples of the next steps
                intp_t start,                      # IN  first position of idx to run
                double lam,
                double[::1] g,                     # IN/OUT (m,) sum_j a_j y_j K(x_j, x_t)
                int64_t[::1] counts,               # IN/OUT (m,) a_j: steps at j with a hinge loss > 0
                double[::1] hsum,                  # IN/OUT (m,) sum over those steps k of H_{k-1}
                double[::1] tstate,                # IN/OUT [t (steps done), H_t = 1 + 1/2 + .. + 1/t]
                floating[:, ::1] rows,             # IN/OUT cache (n_slots, m)
                intp_t[::1] slot_of, intp_t[::1] owner, int64_t[::1] stamp,
                int64_t[::1] tag, int64_t[::1] cstate):
    """Pegasos steps t = t0+1, ...: with w_t = (1/(lam (t-1))) sum_j a_j y_j K(x_j, .)
    (w_1 = 0), the drawn example i has a hinge loss > 0 iff y_i w_t(x_i) < 1;
    then a_i += 1 (w_{t+1} = (1 - 1/t) w_t + (1/(lam t)) y_i K(x_i, .) I{...}).

    Returns (position reached, missing row or -1); see perceptron_run.
    """
    cdef intp_t m = X.shape[0], d = X.shape[1], n = idx.shape[0]
    cdef intp_t k, i, j, need = -1
    cdef double t = tstate[0], H = tstate[1], margin, yi
    cdef floating *ri
    cdef KernelSpec ks = kernel_spec(kind, degree, scale)
    cdef RowCache c = row_cache(m, slot_of, owner, stamp, tag, cstate)
    k = start
    with nogil:
        while k < n:
            i = idx[k]
            yi = y[i]
            # step t + 1: w_{t+1} from a_j after t steps; w_1 = 0
            if t == 0.0:
                margin = 0.0
            else:
                margin = yi * g[i] / (lam * t)
            if margin < 1.0:
                ri = _row(&c, &rows[0, 0], i, &ks, &X[0, 0], &xn[0], d)
                if ri == NULL:
                    need = i
                    break
                counts[i] += 1
                hsum[i] += H             # H_{(t+1)-1}
                for j in range(m):
                    g[j] += yi * ri[j]
            t = t + 1.0
            H = H + 1.0 / t
            k += 1
    tstate[0] = t
    tstate[1] = H
    return k, need


# ---------------------------------------------------------------------------
# Symmetric positive definite solve: LAPACK's mixed-precision driver dsposv
# ---------------------------------------------------------------------------
from scipy.linalg.cython_lapack cimport dsposv, dpotrf, dpotrs


def spd_solve(double[:, ::1] A,          # IN/OUT (n, n) C order; its lower triangle is read
              double[::1] b,             # IN  (n,)
              double[::1] x,             # OUT (n,)
              bint mixed):
    """Solve A x = b for a symmetric positive definite A (LAPACK, no inverse).

    A C-ordered matrix whose lower triangle holds A is, to LAPACK (column
    major), the upper triangle of the same matrix: uplo = 'U', no copy.
    mixed=True: dsposv, a Cholesky factorisation in float32 refined in
    float64 until the residual meets LAPACK's float64 test (||r|| <=
    sqrt(n) ||x|| ||A|| eps64); when the refinement does not converge it
    factorises in float64 itself (dpotrf + dpotrs). mixed=False: dpotrf +
    dpotrs. A is overwritten. Returns (info, iter): info > 0 if A is not
    positive definite (to working precision); iter < 0 if dsposv fell back to
    float64.
    """
    cdef int n = <int> A.shape[0], nrhs = 1, info = 0, it = 0
    cdef char uplo = b'U'
    cdef double *work
    cdef float *swork
    if n == 0:
        return 0, 0
    if mixed:
        work = <double *> malloc(<size_t> n * sizeof(double))
        swork = <float *> malloc(<size_t> n * (n + 1) * sizeof(float))
        if work == NULL or swork == NULL:
            free(work)
            free(swork)
            mixed = False
        else:
            with nogil:
                dsposv(&uplo, &n, &nrhs, &A[0, 0], &n, &b[0], &n, &x[0], &n, work, swork, &it, &info)
            free(work)
            free(swork)
            return info, it
    with nogil:
        dpotrf(&uplo, &n, &A[0, 0], &n, &info)
    if info != 0:
        return info, 0
    with nogil:
        for it in range(n):
            x[it] = b[it]
        it = 0
        dpotrs(&uplo, &n, &nrhs, &A[0, 0], &n, &x[0], &n, &info)
    return info, 0
