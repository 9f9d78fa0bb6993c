# Kernels of smml.linear: the sequential learners of the notes (Perceptron,
# LMS, Pegasos, projected online gradient descent) and two parallel kernels
# (the logistic loss and gradient, and decision_function).
#
# Conventions (those of scikit-learn's kernels, e.g. sklearn/cluster/_k_means_lloyd.pyx):
# - Python validates everything and allocates outputs before a kernel runs.
# - The ORDER of examples is drawn in Python (from random_state) and passed in
#   as `order` (intp); the sequential kernels walk it on one thread, nogil.
# - fit_intercept: the constant feature of 000 "Hyperplanes" is NOT
#   materialised; the weight vector has d + 1 entries and w[d] multiplies an
#   implicit x[d] = 1.
# - Numerical failure (overflow, NaN) is reported as a status code (0 = ok,
#   1 = non-finite value met) and raised in Python.
# - Parallel reductions are per fixed-size chunk of rows, combined serially in
#   chunk order: the result is bitwise independent of the thread count.
from cython.parallel cimport prange
from libc.math cimport exp, log1p, sqrt, isfinite, fabs

from libc.stdint cimport int8_t
from smml._core._typedefs cimport floating, float64_t, intp_t
from smml._core._blas cimport _dot, _axpy, _scal
from smml._core._finite cimport all_finite as _all_finite

# rows per chunk of the parallel kernels (fixed: determinism needs it fixed)
cdef enum:
    CHUNK = 512

CHUNK_ROWS = CHUNK

# Software prefetch of the rows of upcoming steps. The sequential kernels know
# their order of examples in advance (`idx`), and on a large X each step reads
# a row at a random place: without help it waits for cache and TLB misses.
# smml_prefetch_step(X0, row_bytes, idx, k, n): before step k of a walk over
# the rows X[idx[0]], .., X[idx[n-1]] of a C-contiguous X starting at X0,
# prefetch every cache line of the row of step k + SMML_PREFETCH_AHEAD (and at
# k = 0 the rows of the first steps). Reads only, no effect on results;
# compiles to nothing where __builtin_prefetch does not exist (e.g. MSVC).
# Written in C and always_inline on purpose: GCC sees a separate function that
# only prefetches as free of side effects and deletes the calls to it (checked
# on gcc 12: a Cython `cdef inline` helper lost every prefetch instruction).
cdef extern from "smml_linear.h":
    void smml_prefetch_step(const char *X0, intp_t row_bytes, const intp_t *idx,
                            intp_t k, intp_t n) noexcept nogil

# loss codes of sgd_steps
LOSS_HINGE = 0
LOSS_LOGISTIC = 1
LOSS_SQUARE = 2
# step-size schedules of sgd_steps
SCHED_SQRT = 0       # eta / sqrt(t)              (003, section 10, convex)
SCHED_STRONG = 1     # 1 / (sigma t)              (003, section 10, sigma-strongly convex)
SCHED_CONST = 2      # eta                        (001, stochastic gradient rule)


def all_finite(const floating[::1] w):
    """True when every entry of w is finite (test hook)."""
    return _all_finite(&w[0], w.shape[0])


# ---------------------------------------------------------------------------
# Perceptron: one epoch of 000 "Training linear classifiers"
# ---------------------------------------------------------------------------
def perceptron_epoch(const floating[:, ::1] X,      # IN  (n, d)
                     const int8_t[::1] y,           # IN  (n,) labels in {-1, +1}
                     const intp_t[::1] order,       # IN  the epoch's order of rows
                     floating[::1] w,               # IN/OUT (d + fit_intercept,)
                     bint fit_intercept,
                     const float64_t[::1] sw=None): # IN  (n,) row weights or None (all 1)
    """One Perceptron epoch: for t in order, if y_t w.x_t <= 0 then w <- w + y_t x_t
    (w <- w + s_t y_t x_t with row weights s: a weighted step).

    Returns (n_updates, status); status 1 if w stopped being finite.
    """
    cdef intp_t n = order.shape[0], d = X.shape[1], k, i
    cdef intp_t n_updates = 0
    cdef floating s, yt
    cdef int status = 0
    cdef const float64_t *swp = NULL
    if sw is not None and sw.shape[0] > 0:
        swp = &sw[0]
    with nogil:
        for k in range(n):
            i = order[k]
            s = _dot(<int>d, &X[i, 0], 1, &w[0], 1)
            if fit_intercept:
                s = s + w[d]
            yt = y[i]
            if yt * s <= 0:
                if swp != NULL:
                    yt = yt * <floating>swp[i]
                _axpy(<int>d, yt, &X[i, 0], 1, &w[0], 1)
                if fit_intercept:
                    w[d] += yt
                n_updates += 1
        if not _all_finite(&w[0], w.shape[0]):
            status = 1
    return n_updates, status


# ---------------------------------------------------------------------------
# LMS / Widrow-Hoff, stochastic mode (001, "Least Mean Squares")
# ---------------------------------------------------------------------------
def lms_epoch(const float64_t[:, ::1] X,            # IN  (n, d)
              const float64_t[::1] y,               # IN  (n,)
              const intp_t[::1] order,              # IN
              float64_t[::1] w,                     # IN/OUT (d + fit_intercept,)
              double lr, bint fit_intercept,
              const float64_t[::1] sw=None):        # IN  (n,) row weights or None (all 1)
    """One epoch of theta <- theta + lr (y_i - theta.x_i) x_i (times s_i with row weights s).
    Returns status."""
    cdef intp_t n = order.shape[0], d = X.shape[1], k, i
    cdef double r
    cdef int status = 0
    cdef const float64_t *swp = NULL
    if sw is not None and sw.shape[0] > 0:
        swp = &sw[0]
    with nogil:
        for k in range(n):
            i = order[k]
            r = _dot(<int>d, &X[i, 0], 1, &w[0], 1)
            if fit_intercept:
                r = r + w[d]
            r = y[i] - r
            if not isfinite(r):
                status = 1
                break
            if swp != NULL:
                r = r * swp[i]
            _axpy(<int>d, lr * r, &X[i, 0], 1, &w[0], 1)
            if fit_intercept:
                w[d] += lr * r
        if status == 0 and not _all_finite(&w[0], w.shape[0]):
            status = 1
    return status


# ---------------------------------------------------------------------------
# Pegasos (003, section 12) with the scaled vector w = s v
# ---------------------------------------------------------------------------
def pegasos_steps(const float64_t[:, ::1] X,        # IN  (n, d)
                  const int8_t[::1] y,              # IN  labels in {-1, +1}
                  const intp_t[::1] idx,            # IN  the examples of steps t0+1 .. t0+len(idx)
                  float64_t[::1] v,                 # IN/OUT w = s v   (d + fit_intercept,)
                  float64_t[::1] u,                 # IN/OUT sum_{k<=t} w_k = u + acc v
                  float64_t[::1] state,             # IN/OUT [s, t, acc]
                  double lam, bint fit_intercept, bint average,
                  const float64_t[::1] sw=None):    # IN  (n,) row weights or None (all 1)
    """Steps of w_{t+1} = (1 - 1/t) w_t + (1/(lam t)) y x I{1 - y w_t.x > 0}
    (the hinge term times s_i with row weights s: a weighted step).

    O(d) per step: the shrink (1 - 1/t) only touches the scalar s; the running
    sum of the iterates w_1..w_t (for the averaged iterate) is u + acc v, kept
    exact under the changes of v. The rows of the next steps are prefetched
    (the order is known). Returns status.
    """
    cdef intp_t n = idx.shape[0], d = X.shape[1], p = v.shape[0], k, i, j
    cdef intp_t row_bytes = d * <intp_t>sizeof(float64_t)
    cdef double s = state[0], acc = state[2], margin, c, eta, yt
    cdef intp_t t = <intp_t>state[1]
    cdef int status = 0
    cdef const char *X0 = <const char *>&X[0, 0]
    cdef const intp_t *ix
    cdef const float64_t *swp = NULL
    if n == 0:
        return 0
    if sw is not None and sw.shape[0] > 0:
        swp = &sw[0]
    ix = &idx[0]
    with nogil:
        for k in range(n):
            smml_prefetch_step(X0, row_bytes, ix, k, n)
            i = ix[k]
            t = t + 1
            yt = y[i]
            margin = _dot(<int>d, &X[i, 0], 1, &v[0], 1)
            if fit_intercept:
                margin = margin + v[d]
            margin = yt * s * margin
            if average:
                acc = acc + s                      # the sum now includes w_t = s v
            # shrink: w <- (1 - 1/t) w
            if t == 1:
                # w_2 = 0 * w_1 + ...: reset the representation
                if average:
                    for j in range(p):
                        u[j] += acc * v[j]
                    acc = 0.0
                for j in range(p):
                    v[j] = 0.0
                s = 1.0
            else:
                s = s * (1.0 - 1.0 / <double>t)
                if s < 1e-9:
                    # fold s into v to keep v bounded
                    _scal(<int>p, s, &v[0], 1)
                    acc = acc / s
                    s = 1.0
            if margin < 1.0:
                eta = 1.0 / (lam * <double>t)
                c = eta * yt / s
                if swp != NULL:
                    c = c * swp[i]
                _axpy(<int>d, c, &X[i, 0], 1, &v[0], 1)
                if fit_intercept:
                    v[d] += c
                if average and acc != 0.0:
                    _axpy(<int>d, -acc * c, &X[i, 0], 1, &u[0], 1)
                    if fit_intercept:
                        u[d] -= acc * c
        if not (_all_finite(&v[0], p) and _all_finite(&u[0], p) and isfinite(s) and isfinite(acc)):
            status = 1
    state[0] = s
    state[1] = <double>t
    state[2] = acc
    return status


# ---------------------------------------------------------------------------
# Projected online gradient descent (003, section 10) and SGD steps
# ---------------------------------------------------------------------------
cdef inline double _loss_and_slope(int loss, double z, double y, double *g) noexcept nogil:
    """Loss l(y, z) of the prediction z and its derivative in z (written to g)."""
    cdef double m, e
    if loss == 0:        # hinge max(0, 1 - y z)
        m = 1.0 - y * z
        if m > 0.0:
            g[0] = -y
            return m
        g[0] = 0.0
        return 0.0
    elif loss == 1:      # logistic ln(1 + e^{-y z})
        m = y * z
        if m > 0.0:
            e = exp(-m)
            g[0] = -y * e / (1.0 + e)
            return log1p(e)
        e = exp(m)
        g[0] = -y / (1.0 + e)
        return -m + log1p(e)
    else:                # square (z - y)^2
        m = z - y
        g[0] = 2.0 * m
        return m * m


def sgd_steps(const float64_t[:, ::1] X,            # IN  (n, d)
              const float64_t[::1] y,               # IN  labels {-1,+1} (hinge/logistic) or reals
              const intp_t[::1] idx,                # IN  the examples of steps t0+1 .. t0+len(idx)
              float64_t[::1] w,                     # IN/OUT (d + fit_intercept,)
              float64_t[::1] cum,                   # IN/OUT [cumulative loss of w_t on example t]
              int loss, int schedule, double eta, double l2, bint reg_intercept,
              double radius, intp_t t0, bint fit_intercept,
              const float64_t[::1] sw=None):        # IN  (n,) row weights or None (all 1)
    """Steps w' = w_t - eta_t grad l_t(w_t); w_{t+1} = projection of w' on {||w|| <= radius}.

    l_t(w) = loss(y_t, w.x_t) + l2/2 ||w||^2 (the intercept weight is left out
    of the penalty unless reg_intercept). eta_t follows `schedule`. cum[0]
    accumulates l_t(w_t) (the loss suffered before the update, as in the
    regret). radius <= 0 means no projection. The rows of the next steps are
    prefetched (a shuffled order reads X at random places). With row weights s
    the loss term of l_t is s_t loss(y_t, w.x_t) (its gradient scaled by s_t: a
    weighted step). Returns status.
    """
    cdef intp_t n = idx.shape[0], d = X.shape[1], p = w.shape[0], k, i
    cdef intp_t p_reg = p if (reg_intercept or not fit_intercept) else d
    cdef intp_t row_bytes = d * <intp_t>sizeof(float64_t)
    cdef double z, g = 0.0, lt, eta_t, nrm, total = cum[0], t
    cdef int status = 0
    cdef const char *X0 = <const char *>&X[0, 0]
    cdef const intp_t *ix
    cdef const float64_t *swp = NULL
    if n == 0:
        return 0
    if sw is not None and sw.shape[0] > 0:
        swp = &sw[0]
    ix = &idx[0]
    with nogil:
        for k in range(n):
            smml_prefetch_step(X0, row_bytes, ix, k, n)
            i = ix[k]
            t = <double>(t0 + k + 1)
            z = _dot(<int>d, &X[i, 0], 1, &w[0], 1)
            if fit_intercept:
                z = z + w[d]
            if not isfinite(z):
                status = 1
                break
            lt = _loss_and_slope(loss, z, y[i], &g)
            if swp != NULL:
                lt = lt * swp[i]
                g = g * swp[i]
            if l2 > 0.0:
                lt = lt + 0.5 * l2 * _dot(<int>p_reg, &w[0], 1, &w[0], 1)
            total = total + lt
            if schedule == 0:
                eta_t = eta / sqrt(t)
            elif schedule == 1:
                eta_t = 1.0 / (l2 * t)
            else:
                eta_t = eta
            if l2 > 0.0:
                _scal(<int>p_reg, 1.0 - eta_t * l2, &w[0], 1)
            if g != 0.0:
                _axpy(<int>d, -eta_t * g, &X[i, 0], 1, &w[0], 1)
                if fit_intercept:
                    w[d] -= eta_t * g
            if radius > 0.0:
                nrm = sqrt(_dot(<int>p, &w[0], 1, &w[0], 1))
                if nrm > radius:
                    _scal(<int>p, radius / nrm, &w[0], 1)
        if status == 0 and not (_all_finite(&w[0], p) and isfinite(total)):
            status = 1
    cum[0] = total
    return status


# ---------------------------------------------------------------------------
# Logistic regression: mean loss and gradient, OpenMP over row chunks
# ---------------------------------------------------------------------------
cdef void _logistic_chunk(const float64_t[:, ::1] X, const float64_t[::1] y,
                          const float64_t[::1] w, intp_t start, intp_t stop,
                          bint fit_intercept, float64_t *slab, int *bad,
                          const float64_t *sw) noexcept nogil:
    # slab: [grad_0..grad_{d-1}, grad_b, loss]; sw: row weights (NULL: all 1)
    cdef intp_t d = X.shape[1], i, j
    cdef double z, g, l
    for j in range(d + 2):
        slab[j] = 0.0
    for i in range(start, stop):
        z = _dot(<int>d, &X[i, 0], 1, &w[0], 1)
        if fit_intercept:
            z = z + w[d]
        if not isfinite(z):
            bad[0] = 1
            return
        l = _loss_and_slope(1, z, y[i], &g)      # 1: the logistic loss ln(1 + e^{-y z})
        if sw != NULL:
            l = l * sw[i]
            g = g * sw[i]
        slab[d + 1] += l
        if g != 0.0:
            _axpy(<int>d, g, &X[i, 0], 1, slab, 1)
            slab[d] += g


cdef int _logistic_fold(const float64_t[:, ::1] X, const float64_t[::1] y, const float64_t[::1] w,
                        float64_t[::1] grad, float64_t[:, ::1] slabs, bint fit_intercept, int n_threads,
                        const float64_t *swp, int[::1] chunk_bad, double *total) noexcept nogil:
    # the chunks' sums (OpenMP over chunks) added in chunk order into grad and total;
    # returns 1 when a chunk met a non-finite score
    cdef intp_t n = X.shape[0], d = X.shape[1], n_chunks = slabs.shape[0], c, j, stop
    cdef intp_t p = w.shape[0]
    cdef int bad = 0
    for c in prange(n_chunks, schedule="static", num_threads=n_threads):
        stop = (c + 1) * CHUNK
        if stop > n:
            stop = n
        _logistic_chunk(X, y, w, c * CHUNK, stop, fit_intercept, &slabs[c, 0], &chunk_bad[c], swp)
    for j in range(p):
        grad[j] = 0.0
    total[0] = 0.0
    for c in range(n_chunks):
        if chunk_bad[c]:
            bad = 1
        for j in range(d):
            grad[j] += slabs[c, j]
        if fit_intercept:
            grad[d] += slabs[c, d]
        total[0] += slabs[c, d + 1]
    return bad


cdef double _weight_sum(const float64_t[::1] sw, intp_t n) except? -1:
    cdef double wsum = 0.0
    cdef intp_t j
    if sw.shape[0] != n:
        raise ValueError("logistic_loss_grad: sw must have one weight per row")
    for j in range(n):
        wsum += sw[j]
    return wsum


def logistic_loss_grad(const float64_t[:, ::1] X,   # IN  (n, d)
                       const float64_t[::1] y,      # IN  labels in {-1, +1}
                       const float64_t[::1] w,      # IN  (d + fit_intercept,)
                       float64_t[::1] grad,         # OUT (d + fit_intercept,)
                       float64_t[:, ::1] slabs,     # scratch (n_chunks, d + 2)
                       double lam, bint fit_intercept, int n_threads,
                       const float64_t[::1] sw=None):  # IN  (n,) row weights, or None
    """Mean logistic loss (natural log) + lam/2 ||w||^2 (intercept unpenalised), and its gradient.
    With ``sw``, the weighted mean sum_i s_i l_i / sum_i s_i (an integer weight counts a row
    that many times).

    Returns (value, status). Rows are cut into fixed chunks of CHUNK rows; each
    chunk's sums go to its own slab and the slabs are added in chunk order, so
    the result does not depend on the thread count. The sums are those of
    ``logistic_loss_sums``, then scaled by 1/n (or 1/sum s) and penalised by
    ``logistic_finish``.
    """
    cdef intp_t n = X.shape[0]
    cdef int bad = 0
    cdef double total = 0.0, wsum = <double>n
    cdef const float64_t *swp = NULL
    import numpy as np
    if sw is not None:
        wsum = _weight_sum(sw, n)
        if not wsum > 0.0:
            raise ValueError("logistic_loss_grad: the weights must have a positive sum")
        swp = &sw[0] if n else NULL
    cdef int[::1] chunk_bad = np.zeros(slabs.shape[0], dtype=np.intc)
    with nogil:
        bad = _logistic_fold(X, y, w, grad, slabs, fit_intercept, n_threads, swp, chunk_bad, &total)
    return logistic_finish(total, wsum, w, grad, lam, X.shape[1]), bad


def logistic_loss_sums(const float64_t[:, ::1] X,   # IN  (n, d)
                       const float64_t[::1] y,      # IN  labels in {-1, +1}
                       const float64_t[::1] w,      # IN  (d + fit_intercept,)
                       float64_t[::1] grad,         # OUT (d + fit_intercept,) sum_i s_i dl_i/dw
                       float64_t[:, ::1] slabs,     # scratch (n_chunks, d + 2)
                       bint fit_intercept, int n_threads,
                       const float64_t[::1] sw=None):  # IN  (n,) row weights, or None
    """The unscaled sums of ``logistic_loss_grad``: sum_i s_i l_i (returned) and its gradient
    (in ``grad``), no penalty, with the same chunks added in the same order; and sum_i s_i
    (n without weights, summed in row order). smml.dask adds these sums of consecutive row
    blocks in block order and finishes with ``logistic_finish``: on one block, the in-memory
    value and gradient bit for bit.

    Returns (loss_sum, weight_sum, status).
    """
    cdef intp_t n = X.shape[0]
    cdef int bad = 0
    cdef double total = 0.0, wsum = <double>n
    cdef const float64_t *swp = NULL
    import numpy as np
    if sw is not None:
        wsum = _weight_sum(sw, n)
        swp = &sw[0] if n else NULL
    cdef int[::1] chunk_bad = np.zeros(slabs.shape[0], dtype=np.intc)
    with nogil:
        bad = _logistic_fold(X, y, w, grad, slabs, fit_intercept, n_threads, swp, chunk_bad, &total)
    return total, wsum, bad


def logistic_finish(double total, double wsum, const float64_t[::1] w, float64_t[::1] grad,
                    double lam, intp_t d):
    """The objective from the sums: total / wsum + lam/2 ||w[:d]||^2, and ``grad`` scaled by
    1/wsum plus lam w[:d] in place (the intercept w[d], if any, is not penalised)."""
    cdef intp_t p = w.shape[0], j
    cdef double inv_n = 1.0 / wsum, reg = 0.0
    for j in range(p):
        grad[j] *= inv_n
    for j in range(d):
        grad[j] += lam * w[j]
        reg += w[j] * w[j]
    return total * inv_n + 0.5 * lam * reg


def n_chunks_for(intp_t n):
    """Number of CHUNK-row chunks covering n rows."""
    return (n + CHUNK - 1) // CHUNK


# ---------------------------------------------------------------------------
# decision_function: OpenMP over rows
# ---------------------------------------------------------------------------
def decision_function(const floating[:, ::1] X,     # IN  (n, d)
                      const floating[:, ::1] W,     # IN  (k, d)
                      const floating[::1] b,        # IN  (k,)
                      floating[:, ::1] out,         # OUT (n, k)
                      int n_threads):
    """out[i, c] = W[c] . X[i] + b[c]. Each entry is computed alone (thread-count independent)."""
    cdef intp_t n = X.shape[0], d = X.shape[1], k = W.shape[0], i, c
    with nogil:
        for i in prange(n, schedule="static", num_threads=n_threads):
            for c in range(k):
                out[i, c] = _dot(<int>d, &X[i, 0], 1, &W[c, 0], 1) + b[c]


# ---------------------------------------------------------------------------
# Hard-margin SVM (003 section 12): coordinate ascent on the dual
# ---------------------------------------------------------------------------
def hard_margin_epoch(const float64_t[:, ::1] X,    # IN  (n, d)
                      const float64_t[::1] y,       # IN  labels in {-1, +1}
                      const intp_t[::1] order,      # IN  the epoch's order of rows
                      const float64_t[::1] qdiag,   # IN  ||x'_t||^2 > 0 (with the constant feature)
                      float64_t[::1] alpha,         # IN/OUT dual variables, >= 0
                      float64_t[::1] w,             # IN/OUT sum_t alpha_t y_t x'_t  (d + fit_intercept,)
                      bint fit_intercept):
    """One pass of exact coordinate ascent on the dual of min 1/2 ||w||^2 s.t. y_t w.x'_t >= 1.

    Dual: max_{alpha >= 0} sum_t alpha_t - 1/2 ||sum_t alpha_t y_t x'_t||^2. For t in order,
    alpha_t is set to the maximiser of the dual in alpha_t alone,
    max(0, alpha_t - (y_t w.x'_t - 1) / ||x'_t||^2), and w follows. Returns
    (largest projected-gradient violation seen, status); status 1 if w stopped being finite.
    """
    cdef intp_t n = order.shape[0], d = X.shape[1], k, i
    cdef double g, a_old, a_new, delta, viol = 0.0, pg
    cdef int status = 0
    with nogil:
        for k in range(n):
            i = order[k]
            g = _dot(<int>d, &X[i, 0], 1, &w[0], 1)
            if fit_intercept:
                g = g + w[d]
            g = y[i] * g - 1.0                     # the dual gradient is -g
            a_old = alpha[i]
            pg = g if a_old > 0.0 else (g if g < 0.0 else 0.0)
            if fabs(pg) > viol:
                viol = fabs(pg)
            a_new = a_old - g / qdiag[i]
            if a_new < 0.0:
                a_new = 0.0
            delta = a_new - a_old
            if delta != 0.0:
                alpha[i] = a_new
                _axpy(<int>d, delta * y[i], &X[i, 0], 1, &w[0], 1)
                if fit_intercept:
                    w[d] += delta * y[i]
        if not _all_finite(&w[0], w.shape[0]):
            status = 1
    return viol, status
