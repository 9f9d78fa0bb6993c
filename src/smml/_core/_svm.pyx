# The exact SVM of 003 section 12, solved in the dual by SMO (sequential minimal
# optimisation) with libsvm's second-order working-set selection (Fan, Chen &
# Lin, JMLR 2005, "WSS 2"), shrinking, and a bounded cache of kernel rows.
#
# Dual (with the unpenalised bias b, as libsvm; fit_intercept=True):
#     min_a  1/2 a^T Q a - e^T a   s.t.  0 <= a_t <= C_t,  y^T a = 0,
#     Q_st = y_s y_t K(x_s, x_t).
# Without the bias (fit_intercept=False, 003's objective exactly) the equality
# constraint goes and the working set is one variable (coordinate descent with
# the exact step, greedy on the decrease of the objective).
#
# State: F_t = f(x_t) - y_t = sum_s a_s y_s K(x_s, x_t) - y_t for t active
# (libsvm's y_t G_t); Fbar_t = sum_{s: a_s = C_s} C_s y_s K(x_s, x_t) (libsvm's
# G_bar, to rebuild F of shrunk variables). Stopping rule (libsvm's eps):
# max_{I_up} -F - min_{I_low} -F < eps; without the bias:
# [max_{a_t < C} -G_t]_+ + [max_{a_t > 0} G_t]_+ < eps, G_t = y_t F_t.
#
# Differences from libsvm's code that do not change the iterates' definition:
# - Fbar is updated lazily: a variable reaching / leaving its upper bound only
#   records +-C y in `pend`; the pending rows are applied (blocked) when Fbar is
#   next needed, i.e. when shrunk gradients are rebuilt. No full kernel row is
#   computed during the iterations.
# - The pass that updates F after a step also finds the next i (the first half
#   of WSS 2), so an iteration makes two passes over the active set, not three.
# - On a cache miss, rows are computed in blocks: the missing row and the most
#   violating uncached variables of I_up and I_low (the likely next working
#   sets), one gemm tile per COLS columns (smml._core._kernel_methods.kernel_tile,
#   i.e. the shared distance tile), so X is read once per block, not per row.
#
# Kernel rows K(x_i, .) are float32 (as libsvm's Qfloat) in a least-recently-used
# cache of n_slots rows, full (by training position) or partial (compact over the
# active set); with the bias, on a shrunk active set, F, the flags and K(x_t, x_t) of
# the active positions are kept in active order too. The state, this layout and the
# rows (cache, block fills, the kernel matvec) are in _svm_rows.pxd; this file is the
# solver. When all m rows fit (n_slots = m) Python computes the whole Gram
# matrix once (blocked gemm, OpenMP, exactly symmetric), the rows stay by position
# and the solver never computes a row. An indefinite kernel (user callable) is
# handled as libsvm does: a curvature K_ii + K_jj - 2 K_ij <= 0 is replaced by
# TAU = 1e-12, so every step decreases the objective and the loop ends (plus an
# iteration cap).
#
# Parallelism: OpenMP on the block fills of kernel rows, the blocked kernel
# matvecs of a reconstruction and the Gram matrix (each thread computes whole
# tiles), and, with the bias, on the two selection passes of an iteration over an
# active set of >= 2 x PASS_GRAIN positions (one contiguous chunk per thread, the
# chunks' picks merged in chunk order: _update_up, _low). The iterates do not
# depend on the thread count. Without the bias the passes run on one thread.
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free
from libc.math cimport INFINITY
from libc.stdint cimport int64_t

from smml._core._typedefs cimport floating, intp_t
from smml._core._openmp cimport threads_for
from smml._core._kernel_methods cimport KERNEL_CALLABLE, kernel_spec, row_cache
# the solver's state, the active set's layout and the kernel rows (cache, block fills, matvec)
from smml._core._svm_rows cimport (IN_UP, IN_LOW, MAX_BLOCK, N_LAYOUTS, STAT_SHRINKS, STAT_RECONSTRUCTS,
                                   N_STATS, State, row_entry, new_layout, enter_compact, leave_compact,
                                   F_of, get_row, kernel_matvec)

cdef extern from "smml_svm.h" nogil:
    void smml_svm_update_up(double *F, const float *Ki, double ci, const float *Kj, double cj,
                            const char *flags, const intp_t *act, const intp_t *ract, intp_t n,
                            double *best, intp_t *idx)
    void smml_svm_low(const double *F, const double *QD, const float *Ki, const char *flags,
                      const intp_t *act, const intp_t *ract, intp_t n, double Gmax, double Qii,
                      double tau, double *gmax2, double *objmin, intp_t *idx)

cdef double TAU = 1e-12

cdef enum:
    LOWER = 0
    UPPER = 1
    FREE = 2
    PASS_GRAIN = 16384    # least active positions per thread of a selection pass: a pass costs
                          # ~1 ns a position, and a parallel region costs a wake-up of the
                          # sleeping threads (smml/__init__.py: idle OpenMP threads sleep)
    MAX_PASS_THREADS = 8  # most threads of a selection pass


# the selection passes' grain, PASS_GRAIN unless a test sets another (set_pass_grain)
cdef intp_t _pass_grain = PASS_GRAIN


def set_pass_grain(intp_t grain):
    """Tests only: the least active positions per thread of a selection pass (PASS_GRAIN by
    default), so that small problems exercise the split passes; returns the previous value."""
    global _pass_grain
    if grain < 1:
        raise ValueError("set_pass_grain: grain must be >= 1")
    old = _pass_grain
    _pass_grain = grain
    return old

SOLVER_STATS = N_STATS     # entries of smo's stats array (Python callers size it from this)


cdef inline void _set_status(State *st, intp_t t) noexcept nogil:
    cdef char f = 0
    if st.alpha[t] >= st.Cv[t]:
        st.status[t] = UPPER
    elif st.alpha[t] <= 0:
        st.status[t] = LOWER
    else:
        st.status[t] = FREE
    if st.y[t] > 0:
        if st.status[t] != UPPER:
            f = f | IN_UP
        if st.status[t] != LOWER:
            f = f | IN_LOW
    else:
        if st.status[t] != LOWER:
            f = f | IN_UP
        if st.status[t] != UPPER:
            f = f | IN_LOW
    st.flags[t] = f
    if st.compact:
        st.flc[st.kcur[t]] = f


# ---------------------------------------------------------------------------
# Passes over the active set (chunked, merged in chunk order = the serial result)
# ---------------------------------------------------------------------------
cdef inline intp_t _pos(State *st, intp_t k) noexcept nogil:
    return k if st.na == st.m else st.act[k]


cdef void _single_chunk(State *st, intp_t k0, intp_t k1, double *gup, double *glow,
                        double *gain, intp_t *idx) noexcept nogil:
    """No bias: the single variable whose exact step decreases the objective most."""
    cdef intp_t k, t, bi = -1
    cdef double up = -INFINITY, lo = -INFINITY, best = 0.0, gt, q, a, delta, v
    cdef char s
    for k in range(k0, k1):
        t = _pos(st, k)
        gt = st.y[t] * st.F[t]
        s = st.status[t]
        if s != UPPER and -gt > up:
            up = -gt
        if s != LOWER and gt > lo:
            lo = gt
        if (gt < 0 and s != UPPER) or (gt > 0 and s != LOWER):
            q = st.QD[t]
            if q <= 0:
                q = TAU
            a = st.alpha[t] - gt / q
            if a < 0:
                a = 0
            elif a > st.Cv[t]:
                a = st.Cv[t]
            delta = a - st.alpha[t]
            v = -(gt * delta + 0.5 * q * delta * delta)
            if v >= best and v > 0:
                best = v
                bi = t
    gup[0] = up
    glow[0] = lo
    gain[0] = best
    idx[0] = bi


cdef inline const intp_t *_act_or_null(State *st) noexcept nogil:
    """The positions of the active set, NULL when it is every position (contiguous passes)."""
    return NULL if st.na == st.m else st.act


cdef inline const intp_t *_ract_or_null(State *st) noexcept nogil:
    """Where a pass finds active entry k in a kernel row: NULL for entry k (every position
    active, or rows compact over the active set), else act (the whole Gram matrix cached,
    rows by position)."""
    return NULL if st.na == st.m or st.row_mode else st.act


cdef void _update_up(State *st, const float *Ki, double ci, const float *Kj, double cj) noexcept nogil:
    """With the bias: F += ci K_i + cj K_j on the active set (none when Ki is NULL), then
    i = argmax_{I_up} -F (the last on ties, as libsvm's >=) into st.s_best, st.s_idx.

    smml_svm.h's smml_svm_update_up on contiguous chunks of the active set, one per thread
    (PASS_GRAIN positions or more each), the chunks' results merged in chunk order: the
    serial result, for any thread count. Each thread keeps its chunk, so its part of F
    stays in its core's cache from one iteration to the next. On a shrunk active set the
    state is compact (Fc, flc), so the pass reads consecutive values.
    """
    cdef intp_t na = st.na, c, k0, w, roff
    cdef int nt = threads_for(st.n_threads, na, _pass_grain)
    cdef double *F = st.Fc if st.compact else st.F
    cdef const char *fl = st.flc if st.compact else st.flags
    cdef const intp_t *act = NULL if st.compact else _act_or_null(st)
    cdef const intp_t *ract = _ract_or_null(st)
    cdef double b[MAX_PASS_THREADS]
    cdef intp_t bi[MAX_PASS_THREADS]
    if nt > MAX_PASS_THREADS:
        nt = MAX_PASS_THREADS
    if nt <= 1:
        smml_svm_update_up(F, Ki, ci, Kj, cj, fl, act, ract, na, &st.s_best, &st.s_idx)
    else:
        for c in prange(nt, num_threads=nt, schedule="static"):
            k0 = c * na // nt
            w = (c + 1) * na // nt - k0
            roff = k0 if ract == NULL else 0       # rows by entry k: offset to the chunk
            if act != NULL:                        # state by position
                smml_svm_update_up(F, NULL if Ki == NULL else Ki + roff, ci,
                                   NULL if Kj == NULL else Kj + roff, cj, fl, act + k0,
                                   NULL if ract == NULL else ract + k0, w, &b[c], &bi[c])
            else:                                  # state by entry k: offset to the chunk
                smml_svm_update_up(F + k0, NULL if Ki == NULL else Ki + roff, ci,
                                   NULL if Kj == NULL else Kj + roff, cj, fl + k0, NULL,
                                   NULL if ract == NULL else ract + k0, w, &b[c], &bi[c])
                if bi[c] >= 0:
                    bi[c] = bi[c] + k0
        st.s_best = -INFINITY
        st.s_idx = -1
        for c in range(nt):
            if bi[c] >= 0 and b[c] >= st.s_best:
                st.s_best = b[c]
                st.s_idx = bi[c]
    if st.compact and st.s_idx >= 0:
        st.s_idx = st.act[st.s_idx]


cdef void _low(State *st, const float *Ki, intp_t i, double Gmax, double *gmax2, double *objmin,
               intp_t *j) noexcept nogil:
    """The second half of WSS 2 for i: smml_svm.h's smml_svm_low, split as _update_up."""
    cdef intp_t na = st.na, c, k0, w, roff
    cdef int nt = threads_for(st.n_threads, na, _pass_grain)
    cdef const double *F = st.Fc if st.compact else st.F
    cdef const double *QD = st.QDc if st.compact else st.QD
    cdef const char *fl = st.flc if st.compact else st.flags
    cdef const intp_t *act = NULL if st.compact else _act_or_null(st)
    cdef const intp_t *ract = _ract_or_null(st)
    cdef double g[MAX_PASS_THREADS]
    cdef double o[MAX_PASS_THREADS]
    cdef intp_t bj[MAX_PASS_THREADS]
    if nt > MAX_PASS_THREADS:
        nt = MAX_PASS_THREADS
    if nt <= 1:
        smml_svm_low(F, QD, Ki, fl, act, ract, na, Gmax, st.QD[i], TAU, gmax2, objmin, j)
    else:
        for c in prange(nt, num_threads=nt, schedule="static"):
            k0 = c * na // nt
            w = (c + 1) * na // nt - k0
            roff = k0 if ract == NULL else 0
            if act != NULL:
                smml_svm_low(F, QD, Ki + roff, fl, act + k0, NULL if ract == NULL else ract + k0,
                             w, Gmax, st.QD[i], TAU, &g[c], &o[c], &bj[c])
            else:
                smml_svm_low(F + k0, QD + k0, Ki + roff, fl + k0, NULL,
                             NULL if ract == NULL else ract + k0, w, Gmax, st.QD[i], TAU,
                             &g[c], &o[c], &bj[c])
                if bj[c] >= 0:
                    bj[c] = bj[c] + k0
        gmax2[0] = -INFINITY
        objmin[0] = INFINITY
        j[0] = -1
        for c in range(nt):
            if g[c] > gmax2[0]:
                gmax2[0] = g[c]
            if bj[c] >= 0 and o[c] <= objmin[0]:
                objmin[0] = o[c]
                j[0] = bj[c]
    if st.compact and j[0] >= 0:
        j[0] = st.act[j[0]]


cdef void _first_half(State *st) noexcept nogil:
    """The first half of the selection (bias: i; no bias: the variable)."""
    if st.bias:
        _update_up(st, NULL, 0.0, NULL, 0.0)
    else:
        _single_chunk(st, 0, st.na, &st.s_best, &st.s_best2, &st.s_obj, &st.s_idx)


cdef void _update_pass(State *st, const float *Ki, double ci, const float *Kj, double cj) noexcept nogil:
    """F += ci K_i + cj K_j on the active set, then the first half of the next selection
    (with the bias: in the same pass, block by block, _update_up).

    Without the bias the passes run on one thread (a parallel region per pass costs as
    much as the pass on a small active set).
    """
    cdef intp_t k, t, na = st.na
    if st.bias:
        _update_up(st, Ki, ci, Kj, cj)
        return
    if na == st.m:             # nothing shrunk: contiguous (vectorised) loops
        for t in range(na):
            st.F[t] += ci * <double> Ki[t]
    elif st.row_mode:          # rows compact over the active set
        for k in range(na):
            st.F[st.act[k]] += ci * <double> Ki[k]
    else:
        for k in range(na):
            t = st.act[k]
            st.F[t] += ci * <double> Ki[t]
    _first_half(st)


cdef int _select(State *st, const floating *X, floating *Xact, floating *XR, double eps,
                 intp_t *out_i, intp_t *out_j, float **Ki) noexcept nogil:
    """(i, j) of the next step from the first half's results; 1 if the active set
    is optimal to eps."""
    cdef intp_t i = st.s_idx, j = -1
    cdef double Gmax = st.s_best, Gmax2 = -INFINITY, objmin = INFINITY
    if not st.bias:
        Gmax = Gmax if Gmax > 0 else 0.0
        Gmax2 = st.s_best2 if st.s_best2 > 0 else 0.0
        if Gmax + Gmax2 < eps or i < 0:
            return 1
        Ki[0] = get_row(st, X, Xact, XR, i)
        if Ki[0] == NULL:            # out of memory (st.oom)
            return 1
        out_i[0] = i
        out_j[0] = -1
        return 0
    if i < 0:
        return 1
    Ki[0] = get_row(st, X, Xact, XR, i)
    if Ki[0] == NULL:                # out of memory (st.oom)
        return 1
    _low(st, Ki[0], i, Gmax, &Gmax2, &objmin, &j)
    if Gmax + Gmax2 < eps or j < 0:
        return 1
    out_i[0] = i
    out_j[0] = j
    return 0


# ---------------------------------------------------------------------------
# Shrinking and gradient reconstruction (libsvm's do_shrinking / reconstruct_gradient)
# ---------------------------------------------------------------------------
cdef void _violations(State *st, double *g1, double *g2) noexcept nogil:
    """bias: (max_{I_up} -F, max_{I_low} F); no bias: ([max_{a<C} -G]_+, [max_{a>0} G]_+)."""
    cdef intp_t k, t
    cdef double a = -INFINITY, b = -INFINITY, gt
    for k in range(st.na):
        t = _pos(st, k)
        if st.bias:
            if (st.flags[t] & IN_UP) and -st.F[t] > a:
                a = -st.F[t]
            if (st.flags[t] & IN_LOW) and st.F[t] > b:
                b = st.F[t]
        else:
            gt = st.y[t] * st.F[t]
            if st.status[t] != UPPER and -gt > a:
                a = -gt
            if st.status[t] != LOWER and gt > b:
                b = gt
    if not st.bias:
        a = a if a > 0 else 0.0
        b = b if b > 0 else 0.0
    g1[0] = a
    g2[0] = b


cdef inline bint _shrinkable(State *st, intp_t t, double g1, double g2) noexcept nogil:
    cdef double gt
    if st.status[t] == FREE:
        return False
    if st.bias:
        if not (st.flags[t] & IN_LOW):         # in I_up only
            return st.F[t] > g2
        if not (st.flags[t] & IN_UP):          # in I_low only
            return -st.F[t] > g1
        return False
    gt = st.y[t] * st.F[t]
    if st.status[t] == LOWER:
        return gt > g2
    return -gt > g1


cdef void _flush_pending(State *st, const floating *X) noexcept nogil:
    """Fbar += sum_s pend_s K(x_s, .) over every position; pend = 0."""
    cdef intp_t n = 0, t
    cdef intp_t *S = <intp_t *> malloc(st.m * sizeof(intp_t))
    cdef double *cs = <double *> malloc(st.m * sizeof(double))
    cdef intp_t *T = <intp_t *> malloc(st.m * sizeof(intp_t))
    if S == NULL or cs == NULL or T == NULL:
        st.oom = True
        free(S)
        free(cs)
        free(T)
        return
    for t in range(st.m):
        T[t] = t
        if st.pend[t] != 0:
            S[n] = t
            cs[n] = st.pend[t]
            st.pend[t] = 0
            n += 1
    kernel_matvec(st, X, S, cs, n, T, st.m, st.Fbar)
    free(S)
    free(cs)
    free(T)


cdef void _reconstruct(State *st, const floating *X) noexcept nogil:
    """F of the shrunk variables from Fbar and the free ones; then every variable is active."""
    cdef intp_t m = st.m, na = st.na, k, t, s, n_free = 0, n_in = m - na
    cdef intp_t *inact
    cdef intp_t *free_idx
    cdef double *free_c
    cdef char *is_act
    leave_compact(st)
    if na == m:
        return
    st.stats[STAT_RECONSTRUCTS] += 1
    _flush_pending(st, X)
    inact = <intp_t *> malloc(n_in * sizeof(intp_t))
    free_idx = <intp_t *> malloc(na * sizeof(intp_t))
    free_c = <double *> malloc(na * sizeof(double))
    is_act = <char *> malloc(m * sizeof(char))
    if st.oom or inact == NULL or free_idx == NULL or free_c == NULL or is_act == NULL:
        st.oom = True
        free(inact)
        free(free_idx)
        free(free_c)
        free(is_act)
        return
    for t in range(m):
        is_act[t] = 0
    for k in range(na):
        t = st.act[k]
        is_act[t] = 1
        if st.status[t] == FREE:
            free_idx[n_free] = t
            free_c[n_free] = st.alpha[t] * st.y[t]
            n_free += 1
    s = 0
    for t in range(m):
        if not is_act[t]:
            inact[s] = t
            s += 1
            st.F[t] = st.Fbar[t] - st.y[t]
    kernel_matvec(st, X, free_idx, free_c, n_free, inact, n_in, st.F)
    free(inact)
    free(free_idx)
    free(free_c)
    free(is_act)
    for t in range(m):
        st.act[t] = t
    st.na = m
    st.epoch += 1
    st.act_version += 1
    new_layout(st)


cdef void _shrink(State *st, const floating *X, double eps, bint *unshrunk) noexcept nogil:
    cdef double g1, g2
    cdef intp_t k, n = 0, t
    leave_compact(st)
    _violations(st, &g1, &g2)
    if not unshrunk[0] and g1 + g2 <= 10.0 * eps:
        unshrunk[0] = True
        _reconstruct(st, X)
        _violations(st, &g1, &g2)
    for k in range(st.na):
        t = _pos(st, k)
        if not _shrinkable(st, t, g1, g2):
            st.act[n] = t
            n += 1
    if n != st.na:
        st.na = n
        st.act_version += 1
        new_layout(st)
        st.stats[STAT_SHRINKS] += 1
    enter_compact(st)


# ---------------------------------------------------------------------------
# One step
# ---------------------------------------------------------------------------
cdef void _pending_bound(State *st, intp_t i, char old_status) noexcept nogil:
    """Record Fbar += / -= C_i y_i K(x_i, .) when a_i reaches / leaves its upper bound."""
    if (old_status == UPPER) == (st.status[i] == UPPER):
        return
    if old_status == UPPER:
        st.pend[i] -= st.Cv[i] * st.y[i]
    else:
        st.pend[i] += st.Cv[i] * st.y[i]


cdef void _pair_step(State *st, intp_t i, intp_t j, const float *Ki) noexcept nogil:
    """libsvm's analytic two-variable update (Solver::Solve), on a_i, a_j."""
    cdef double Ci = st.Cv[i], Cj = st.Cv[j], quad, delta, diff, s
    cdef double Gi = st.y[i] * F_of(st, i), Gj = st.y[j] * F_of(st, j)
    cdef double *a = st.alpha
    quad = st.QD[i] + st.QD[j] - 2.0 * <double> Ki[row_entry(st, j)]
    if quad <= 0:
        quad = TAU
    if st.y[i] != st.y[j]:
        delta = (-Gi - Gj) / quad
        diff = a[i] - a[j]
        a[i] += delta
        a[j] += delta
        if diff > 0:
            if a[j] < 0:
                a[j] = 0
                a[i] = diff
        else:
            if a[i] < 0:
                a[i] = 0
                a[j] = -diff
        if diff > Ci - Cj:
            if a[i] > Ci:
                a[i] = Ci
                a[j] = Ci - diff
        else:
            if a[j] > Cj:
                a[j] = Cj
                a[i] = Cj + diff
    else:
        delta = (Gi - Gj) / quad
        s = a[i] + a[j]
        a[i] -= delta
        a[j] += delta
        if s > Ci:
            if a[i] > Ci:
                a[i] = Ci
                a[j] = s - Ci
        else:
            if a[j] < 0:
                a[j] = 0
                a[i] = s
        if s > Cj:
            if a[j] > Cj:
                a[j] = Cj
                a[i] = s - Cj
        else:
            if a[i] < 0:
                a[i] = 0
                a[j] = s


# ---------------------------------------------------------------------------
# The solver
# ---------------------------------------------------------------------------
cdef void _report(object report, int64_t it, intp_t na) noexcept:
    """report(it, na), its exceptions ignored (a progress bar must not stop the solver)."""
    try:
        report(it, na)
    except Exception:
        pass


def smo(const floating[:, ::1] X,          # IN  (m, d) training rows (unused for a callable)
        const double[::1] xn,              # IN  (m,) ||x_t||^2
        int kind, int degree, double scale,
        const double[::1] y,               # IN  (m,) labels +-1
        const double[::1] Cv,              # IN  (m,) upper bounds C_t > 0
        const double[::1] QD,              # IN  (m,) K(x_t, x_t)
        float[:, ::1] rows,                # IN/OUT (n_slots, m) the row cache storage
        intp_t[::1] slot_of, intp_t[::1] owner, int64_t[::1] stamp,
        int64_t[::1] tag, int64_t[::1] cstate,   # cache bookkeeping; cstate [time, used, epoch]
        double[::1] alpha,                 # OUT (m,)
        double[::1] F,                     # OUT (m,) f(x_t) - y_t (no bias)
        int64_t[::1] stats,                # OUT (5,) rows computed, block fills, shrinks, reconstructs, re-laid rows
        bint bias, double eps, bint shrinking, int64_t max_iter, int n_threads,
        int block=16, intp_t shrink_every=1000, object report=None, int64_t report_every=1000):
    """Solve the SVM dual. Returns (n_iter, rho, reached_max_iter); the bias is b = -rho.

    ``report``: None, or a callable ``report(steps, n_active)`` called with the GIL every
    ``report_every`` SMO steps (a progress bar; its exceptions are ignored). None: the loop
    never takes the GIL."""
    cdef intp_t m = y.shape[0], d = X.shape[1], t, i = -1, j = -1
    cdef State st
    cdef int64_t it = 0, counter
    cdef bint unshrunk = False, hit_max = False, fresh = False
    cdef float *Ki = NULL
    cdef float *Kj = NULL
    cdef double oi, oj, ub = INFINITY, lb = -INFINITY, sum_free = 0.0, rho = 0.0, yF
    cdef intp_t n_free = 0
    cdef char si, sj
    cdef floating *Xact = NULL
    cdef floating *XR = NULL
    cdef const floating *X0 = &X[0, 0]
    cdef intp_t n_slots = owner.shape[0]
    cdef bint row_mode = kind != KERNEL_CALLABLE and n_slots < m
    cdef bint reporting = report is not None
    if report_every < 1:
        raise ValueError("smo: report_every must be >= 1")

    st.m = m
    st.d = d
    st.na = m
    st.y = &y[0]
    st.alpha = &alpha[0]
    st.F = &F[0]
    st.QD = &QD[0]
    st.Cv = &Cv[0]
    st.bias = bias
    st.n_threads = n_threads
    st.ks = kernel_spec(kind, degree, scale)
    st.xn = &xn[0]
    st.rows = &rows[0, 0]
    st.cache = row_cache(m, slot_of, owner, stamp, tag, cstate)
    st.stats = &stats[0]
    st.oom = False
    if stats.shape[0] < N_STATS:
        raise ValueError(f"smo: stats needs {N_STATS} entries")
    for t in range(N_STATS):
        stats[t] = 0
    # block fills of at most a quarter of the cache (the rows in use are never evicted)
    st.block = min(<intp_t> min(block, <int> MAX_BLOCK), max(<intp_t> 1, n_slots // 4))
    cstate[2] += 1                       # partial rows of an earlier solve are stale
    st.epoch = cstate[2]
    st.act_version = 0
    st.xact_version = -1
    st.row_mode = row_mode
    st.kcur = NULL
    st.compact = False
    st.Fc = <double *> malloc(m * sizeof(double))
    st.flc = <char *> malloc(m * sizeof(char))
    st.QDc = <double *> malloc(m * sizeof(double))
    for t in range(N_LAYOUTS):
        st.kpos[t] = NULL
        st.kpos_ver[t] = -1
    st.lver = <int64_t *> malloc(n_slots * sizeof(int64_t))
    st.act = <intp_t *> malloc(m * sizeof(intp_t))
    st.Fbar = <double *> malloc(m * sizeof(double))
    st.pend = <double *> malloc(m * sizeof(double))
    st.status = <char *> malloc(m * sizeof(char))
    st.flags = <char *> malloc(m * sizeof(char))
    st.xn_act = <double *> malloc(m * sizeof(double))
    st.blk = <intp_t *> malloc(MAX_BLOCK * sizeof(intp_t))
    st.blk_slot = <intp_t *> malloc(MAX_BLOCK * sizeof(intp_t))
    st.hval = <double *> malloc(MAX_BLOCK * sizeof(double))
    st.hidx = <intp_t *> malloc(MAX_BLOCK * sizeof(intp_t))
    if row_mode:
        Xact = <floating *> malloc(m * d * sizeof(floating))
        XR = <floating *> malloc(MAX_BLOCK * d * sizeof(floating))
    if (st.act == NULL or st.Fbar == NULL or st.pend == NULL or st.status == NULL
            or st.flags == NULL or st.xn_act == NULL or st.blk == NULL or st.blk_slot == NULL
            or st.hval == NULL or st.hidx == NULL or st.lver == NULL
            or st.Fc == NULL or st.flc == NULL or st.QDc == NULL
            or (row_mode and (Xact == NULL or XR == NULL))):
        _free_state(&st, Xact, XR)
        raise MemoryError("KernelSVC: cannot allocate the solver's work arrays")

    with nogil:
        for t in range(n_slots):
            st.lver[t] = -1
        for t in range(m):
            st.act[t] = t
            alpha[t] = 0.0
            F[t] = -y[t]
            st.Fbar[t] = 0.0
            st.pend[t] = 0.0
            _set_status(&st, t)
        counter = min(m, shrink_every) + 1
        while True:
            if it >= max_iter:
                hit_max = True
                break
            counter -= 1
            if counter == 0:
                counter = min(m, shrink_every)
                if shrinking:
                    _shrink(&st, X0, eps, &unshrunk)
                    fresh = False
                    if st.oom:
                        break
            if not fresh:
                _first_half(&st)
            if _select(&st, X0, Xact, XR, eps, &i, &j, &Ki) != 0:
                if st.na == m or st.oom:
                    break
                _reconstruct(&st, X0)
                if st.oom:
                    break
                _first_half(&st)
                if _select(&st, X0, Xact, XR, eps, &i, &j, &Ki) != 0:
                    break
                counter = 1              # shrink at the next iteration
            it += 1
            if reporting and it % report_every == 0:
                with gil:
                    _report(report, it, st.na)
            if bias:
                Kj = get_row(&st, X0, Xact, XR, j)
                if Kj == NULL:           # out of memory (st.oom)
                    break
                Ki = get_row(&st, X0, Xact, XR, i)   # (still cached: just used)
                oi = alpha[i]
                oj = alpha[j]
                _pair_step(&st, i, j, Ki)
                si = st.status[i]
                sj = st.status[j]
                _set_status(&st, i)
                _set_status(&st, j)
                _pending_bound(&st, i, si)
                _pending_bound(&st, j, sj)
                _update_pass(&st, Ki, y[i] * (alpha[i] - oi), Kj, y[j] * (alpha[j] - oj))
            else:
                oi = alpha[i]
                alpha[i] = oi - y[i] * F[i] / (QD[i] if QD[i] > 0 else TAU)
                if alpha[i] < 0:
                    alpha[i] = 0
                elif alpha[i] > Cv[i]:
                    alpha[i] = Cv[i]
                si = st.status[i]
                _set_status(&st, i)
                _pending_bound(&st, i, si)
                _update_pass(&st, Ki, y[i] * (alpha[i] - oi), NULL, 0.0)
            fresh = True
        if not st.oom:
            _reconstruct(&st, X0)
        if bias and not st.oom:
            # libsvm's calculate_rho: the mean of F over the free variables, else the
            # middle of the feasible interval
            for t in range(m):
                yF = F[t]
                if st.status[t] == UPPER:
                    if y[t] < 0:
                        ub = min(ub, yF)
                    else:
                        lb = max(lb, yF)
                elif st.status[t] == LOWER:
                    if y[t] > 0:
                        ub = min(ub, yF)
                    else:
                        lb = max(lb, yF)
                else:
                    n_free += 1
                    sum_free += yF
            if n_free > 0:
                rho = sum_free / n_free
            else:
                rho = (ub + lb) / 2
    _free_state(&st, Xact, XR)
    if st.oom:
        raise MemoryError("KernelSVC: out of memory during the solve (kernel tiles or "
                          "gradient reconstruction)")
    return it, rho, hit_max


cdef void _free_state(State *st, void *Xact, void *XR) noexcept:
    cdef int t
    free(st.act); free(st.Fbar); free(st.pend); free(st.status); free(st.flags); free(st.xn_act)
    free(st.blk); free(st.blk_slot); free(st.hval); free(st.hidx); free(st.lver)
    free(st.Fc); free(st.flc); free(st.QDc)
    for t in range(N_LAYOUTS):
        free(st.kpos[t])
    free(Xact); free(XR)
