# The data layout of the SMO solver (_svm.pyx) and its kernel rows: the solver's state, the
# active set's position maps and compact copies, the least-recently-used cache of kernel rows
# filled by blocks, and the blocked kernel matvec of a gradient reconstruction. The solver
# (working-set selection, the two-variable step, shrinking) is in _svm.pyx; it reads kernel
# rows only through get_row and F only through F_of / the compact arrays. Inline functions,
# so the solver's loops inline them as before; cimport them, never copy them.
#
# Kernel rows K(x_i, .) are float32 (as libsvm's Qfloat) in a least-recently-used cache
# (_kernel_methods.pxd: RowCache) of n_slots rows of length m. A row is "full" (every
# position, indexed by training position; tag TAG_FULL) or "partial": computed on the active
# positions only and stored compact, entry k for the k-th active position, so that the
# passes read na consecutive floats rather than na scattered ones. Within an epoch (between
# two gradient reconstructions) the active set only shrinks; a partial row computed on an
# earlier active set of the epoch, or a full row, is re-laid compact over the current one in
# place when next used (the last N_LAYOUTS active sets' position maps are kept for this); a
# partial row is invalid once the active set grows back. With the bias, on a shrunk active
# set, F, the flags and K(x_t, x_t) of the active positions are kept in active order too (Fc,
# flc, QDc: enter_compact / leave_compact). On a cache miss, rows are computed in blocks: the
# missing row and the most violating uncached variables of I_up and I_low (the likely next
# working sets), one kernel tile per COLS columns, OpenMP over tiles.
from cython.parallel cimport prange, parallel
from libc.stdlib cimport malloc, free
from libc.math cimport INFINITY
from libc.stdint cimport int64_t

from smml._core._typedefs cimport floating, intp_t
from smml._core._atomic cimport flag_set
from smml._core._blas cimport _gemv
from smml._core._openmp cimport threads_for
from smml._core._heap cimport heap_push, pair_less
from smml._core._kernel_methods cimport (KernelSpec, KERNEL_CALLABLE, kernel_tile_f32, RowCache, cache_find,
                                         cache_claim)

cdef extern from "smml_svm.h" nogil:
    int smml_svm_may_enter(const double *F, const char *flags, intp_t w, double thr_up,
                           double thr_low)

cdef enum:
    IN_UP = 1             # flags: t in I_up (y_t a_t may grow)
    IN_LOW = 2            # flags: t in I_low
    GRAIN = 1 << 16       # least kernel entries per thread (smml._threads.threads_for's rule)
    COLS = 1024           # columns per tile of a row block
    MAX_BLOCK = 64        # most rows per block fill
    TILE_Q = 64           # rows per tile of the blocked kernel matvec
    N_LAYOUTS = 4         # active-set layouts kept to re-compact a partial row from
    PASS_BLOCK = 64       # positions per block of the candidates' prefilter

cdef enum:
    STAT_ROWS = 0         # kernel rows computed
    STAT_FILLS = 1        # block fills (gemm passes over the active rows)
    STAT_SHRINKS = 2      # shrinking passes that removed variables
    STAT_RECONSTRUCTS = 3 # gradient reconstructions
    STAT_RELAID = 4       # cached rows re-laid compact over a smaller active set
    N_STATS = 5

cdef enum:
    TAG_FULL = -1         # the tag of a full row (valid on every active set)


ctypedef struct State:
    intp_t m, na, d
    intp_t *act           # (m,) active positions (first na, ascending)
    const double *y       # (m,) +-1
    double *alpha         # (m,)
    double *F             # (m,) f(x_t) - y_t on active t
    double *Fbar          # (m,)
    double *pend          # (m,) pending changes of Fbar: Fbar += sum_s pend_s K(x_s, .)
    const double *QD      # (m,) K(x_t, x_t)
    const double *Cv      # (m,) box C_t
    char *status          # (m,)
    char *flags           # (m,) IN_UP | IN_LOW
    int64_t epoch         # validity tag of partial rows (grows when the active set grows)
    int64_t act_version   # changes with the active set
    int64_t xact_version  # the active set Xact was gathered for
    bint bias
    int n_threads
    intp_t block          # rows per block fill
    KernelSpec ks
    bint row_mode         # rows computed during the solve (else the whole Gram matrix, by position)
    int64_t *lver         # (n_slots,) the active set (act_version) a partial row is compact over
    intp_t *kpos[N_LAYOUTS]       # kpos[v % N_LAYOUTS][t]: t's index in active set v (or -1)
    int64_t kpos_ver[N_LAYOUTS]   # the act_version each kpos array holds (-1: none)
    intp_t *kcur          # kpos of the current active set (NULL when every position is active)
    bint compact          # F, flags, QD of the active set live in Fc, flc, QDc (bias, shrunk)
    double *Fc            # (m,) F of the k-th active position (authoritative while compact)
    char *flc             # (m,) its flags
    double *QDc           # (m,) its K(x_t, x_t)
    const double *xn      # (m,) ||x_t||^2
    double *xn_act        # (m,) gathered ||x||^2 of the active rows
    RowCache cache
    float *rows           # (n_slots, m)
    double s_best         # results of the first half of the selection
    double s_best2
    double s_obj
    intp_t s_idx
    intp_t *blk           # (MAX_BLOCK,) rows of a block fill
    intp_t *blk_slot      # (MAX_BLOCK,)
    double *hval          # (MAX_BLOCK,) candidate heap
    intp_t *hidx
    int64_t *stats        # (N_STATS,) counters
    bint oom              # a work array could not be allocated: the solve stops, smo raises


# ---------------------------------------------------------------------------
# Kernel rows: block fills
# ---------------------------------------------------------------------------
cdef inline bint layout_kept(State *st, int64_t v) noexcept nogil:
    return v >= 0 and st.kpos_ver[v % N_LAYOUTS] == v      # v = -1: over no active set


cdef inline bint row_valid(State *st, intp_t t) noexcept nogil:
    """Row t is cached and usable on the current active set (possibly after re-compaction)."""
    cdef intp_t s = st.cache.slot_of[t]
    if s < 0:
        return False
    if st.cache.tag[s] == TAG_FULL:
        return True
    return st.cache.tag[s] == st.epoch and layout_kept(st, st.lver[s])


cdef inline intp_t row_entry(State *st, intp_t t) noexcept nogil:
    """The entry of active position t in a row usable on the current active set."""
    return st.kcur[t] if st.row_mode and st.kcur != NULL else t


cdef inline void new_layout(State *st) noexcept nogil:
    """After a change of the active set (st.act_version): its kpos array (when shrunk),
    then the compact state (enter_compact)."""
    cdef intp_t t, k, r = st.act_version % N_LAYOUTS
    st.kcur = NULL
    if st.na == st.m:
        return
    if st.kpos[r] == NULL:
        st.kpos[r] = <intp_t *> malloc(st.m * sizeof(intp_t))
        if st.kpos[r] == NULL:
            st.oom = True
            return
    for t in range(st.m):
        st.kpos[r][t] = -1
    for k in range(st.na):
        st.kpos[r][st.act[k]] = k
    st.kpos_ver[r] = st.act_version
    st.kcur = st.kpos[r]
    enter_compact(st)


cdef inline void enter_compact(State *st) noexcept nogil:
    """With the bias on a shrunk active set: F, flags and QD of the active positions
    copied in active order (Fc, flc, QDc), so the passes read them consecutively; Fc is
    then the authoritative F of the active set until leave_compact."""
    cdef intp_t k, t
    if not st.bias or st.kcur == NULL or st.compact:
        return
    for k in range(st.na):
        t = st.act[k]
        st.Fc[k] = st.F[t]
        st.flc[k] = st.flags[t]
        st.QDc[k] = st.QD[t]
    st.compact = True


cdef inline void leave_compact(State *st) noexcept nogil:
    """F of the active positions written back from Fc (before F is read by position)."""
    cdef intp_t k
    if not st.compact:
        return
    for k in range(st.na):
        st.F[st.act[k]] = st.Fc[k]
    st.compact = False


cdef inline double F_of(State *st, intp_t t) noexcept nogil:
    """F of active position t."""
    return st.Fc[st.kcur[t]] if st.compact else st.F[t]


cdef inline void compact_row(State *st, float *row, intp_t s) noexcept nogil:
    """Re-lay row (slot s, full or compact over an earlier, larger active set of this
    epoch) compact over the current active set, in place: the active sets only shrink
    within an epoch and act is ascending, so entry k is read from an index >= k."""
    cdef intp_t k
    cdef const intp_t *old
    if st.cache.tag[s] == TAG_FULL:
        for k in range(st.na):
            row[k] = row[st.act[k]]
    else:
        old = st.kpos[st.lver[s] % N_LAYOUTS]
        for k in range(st.na):
            row[k] = row[old[st.act[k]]]
    st.cache.tag[s] = st.epoch
    st.lver[s] = st.act_version
    st.stats[STAT_RELAID] += 1


cdef inline void gather_active(State *st, const floating *X, floating *Xact) noexcept nogil:
    cdef intp_t k, f
    if st.xact_version == st.act_version:
        return
    for k in range(st.na):
        for f in range(st.d):
            Xact[k * st.d + f] = X[st.act[k] * st.d + f]
        st.xn_act[k] = st.xn[st.act[k]]
    st.xact_version = st.act_version


cdef inline intp_t block_candidates(State *st, intp_t first) noexcept nogil:
    """The rows of a block fill: `first`, then the most violating uncached active
    variables (smallest F in I_up, largest F in I_low, alternately)."""
    cdef intp_t nb = 1, half = (st.block - 1) // 2, hs_up = 0, hs_low = 0, k, t, r
    cdef double *hv_up = st.hval
    cdef intp_t *hi_up = st.hidx
    cdef double *hv_low = st.hval + MAX_BLOCK // 2
    cdef intp_t *hi_low = st.hidx + MAX_BLOCK // 2
    cdef double v
    st.blk[0] = first
    if half <= 0:
        return 1
    cdef const double *F = st.Fc if st.compact else st.F
    cdef const char *fl = st.flc if st.compact else st.flags
    cdef bint consecutive = st.compact or st.na == st.m    # F, fl by entry k
    cdef intp_t q, k0 = 0, w
    while k0 < st.na:
        w = min(<intp_t> PASS_BLOCK, st.na - k0)
        # skip a block none of whose values can enter a heap (smml_svm.h, branch-free)
        if consecutive and not smml_svm_may_enter(
                F + k0, fl + k0, w, hv_up[0] if hs_up == half else INFINITY,
                hv_low[0] if hs_low == half else INFINITY):
            k0 += w
            continue
        for k in range(k0, k0 + w):
            t = st.act[k]
            q = k if consecutive else t
            if t == first or row_valid(st, t):
                continue
            if fl[q] & IN_UP:
                v = F[q]                      # most violating in I_up: smallest F
                if hs_up < half or pair_less(v, t, hv_up[0], hi_up[0]):
                    heap_push(hv_up, hi_up, &hs_up, half, v, t)
            if fl[q] & IN_LOW:
                v = -F[q]                     # in I_low: largest F
                if hs_low < half or pair_less(v, t, hv_low[0], hi_low[0]):
                    heap_push(hv_low, hi_low, &hs_low, half, v, t)
        k0 += w
    for r in range(hs_up):
        st.blk[nb] = hi_up[r]
        nb += 1
    for r in range(hs_low):
        t = hi_low[r]
        for k in range(1, nb):                # in both heaps: once
            if st.blk[k] == t:
                t = -1
                break
        if t >= 0:
            st.blk[nb] = t
            nb += 1
    return nb


cdef inline void fill_block(State *st, const floating *X, floating *Xact, floating *XR,
                      intp_t nb) noexcept nogil:
    """Compute rows st.blk[:nb] (on every position, or compact on the active ones when the
    active set is shrunk) into freshly claimed cache slots: one kernel tile per COLS
    columns, OpenMP over tiles."""
    cdef intp_t r, f, n, ncol, c, c0, cw, k, s
    cdef bint partial = st.na < st.m
    cdef const floating *T
    cdef const double *tn
    cdef floating *tile
    cdef float *ftile
    cdef double xr_norm[MAX_BLOCK]
    cdef int nt
    cdef float *row
    for r in range(nb):
        for f in range(st.d):
            XR[r * st.d + f] = X[st.blk[r] * st.d + f]
        xr_norm[r] = st.xn[st.blk[r]]
        s = st.cache.slot_of[st.blk[r]]
        if s < 0:
            s = cache_claim(&st.cache, st.blk[r])
        st.blk_slot[r] = s
        st.cache.tag[s] = TAG_FULL if not partial else st.epoch
        st.lver[s] = st.act_version
    if partial:
        gather_active(st, X, Xact)
        T = Xact
        tn = st.xn_act
        n = st.na
    else:
        T = X
        tn = st.xn
        n = st.m
    ncol = (n + COLS - 1) // COLS
    nt = threads_for(st.n_threads, n * nb, GRAIN)
    with parallel(num_threads=nt):
        tile = <floating *> malloc(MAX_BLOCK * COLS * sizeof(floating))
        ftile = <float *> malloc(MAX_BLOCK * COLS * sizeof(float))
        if tile == NULL or ftile == NULL:
            flag_set(<int *> &st.oom)        # any thread: atomic (_atomic.pxd)
        for c in prange(ncol, schedule="static"):
            if tile == NULL or ftile == NULL:
                continue
            c0 = c * COLS
            cw = min(<intp_t> COLS, n - c0)
            kernel_tile_f32(&st.ks, <int> nb, <int> cw, <int> st.d, XR, T + c0 * st.d, xr_norm,
                            tn + c0, tile, ftile)
            for r in range(nb):             # (a partial row: compact, in active order)
                row = st.rows + st.blk_slot[r] * st.m
                for k in range(cw):
                    row[c0 + k] = ftile[r * cw + k]
        free(tile)
        free(ftile)
    for r in range(nb):
        row = st.rows + st.blk_slot[r] * st.m
        row[row_entry(st, st.blk[r])] = <float> st.QD[st.blk[r]]     # exact K(x_i, x_i)
    st.stats[STAT_ROWS] += nb
    st.stats[STAT_FILLS] += 1


cdef inline float *get_row(State *st, const floating *X, floating *Xact, floating *XR,
                     intp_t i) noexcept nogil:
    """The cached row of i, usable on the active set (a block fill on a miss): by position
    when every position is active or the whole Gram matrix is cached, else compact over
    the active set (entry row_entry(st, t) for position t)."""
    cdef intp_t s = cache_find(&st.cache, i), nb
    cdef float *row
    if s >= 0:
        row = st.rows + s * st.m
        if st.cache.tag[s] == TAG_FULL:
            if st.row_mode and st.kcur != NULL:
                compact_row(st, row, s)
            return row
        if st.cache.tag[s] == st.epoch and layout_kept(st, st.lver[s]):
            if st.lver[s] != st.act_version:
                compact_row(st, row, s)
            return row
    if st.ks.kind == KERNEL_CALLABLE:
        return NULL                  # cannot happen: a callable's Gram matrix is all cached
    nb = block_candidates(st, i)
    fill_block(st, X, Xact, XR, nb)
    if st.oom:
        return NULL
    s = cache_find(&st.cache, i)     # (marks i as the most recently used)
    return st.rows + s * st.m


# ---------------------------------------------------------------------------
# sum_s c_s K(x_s, x_t) for t in T, s in S: blocked (tiles of TILE_Q x COLS)
# ---------------------------------------------------------------------------
cdef inline void kernel_matvec(State *st, const floating *X, const intp_t *S, const double *cs, intp_t nS,
                         const intp_t *T, intp_t nT, double *out) noexcept nogil:
    """out[T[k]] += sum_r cs[r] K(x_{S[r]}, x_{T[k]}): from cached full rows when
    every row of S is cached full, else by tiles (gemm) over gathered rows."""
    cdef intp_t r, k, f, nb, b0, c, c0, cw, s, q
    cdef floating *XS
    cdef floating *XT
    cdef double *sn
    cdef double *tnrm
    cdef floating *tile
    cdef float *ftile
    cdef floating *acc
    cdef floating *csf
    cdef float *row
    cdef bint all_cached = True
    cdef int nt
    if nS == 0 or nT == 0:
        return
    for r in range(nS):
        s = st.cache.slot_of[S[r]]
        if s < 0 or st.cache.tag[s] != TAG_FULL:
            all_cached = False
            break
    if all_cached:
        for r in range(nS):
            row = st.rows + st.cache.slot_of[S[r]] * st.m
            for k in range(nT):
                out[T[k]] += cs[r] * <double> row[T[k]]
        return
    XS = <floating *> malloc(nS * st.d * sizeof(floating))
    sn = <double *> malloc(nS * sizeof(double))
    csf = <floating *> malloc(nS * sizeof(floating))
    if XS == NULL or sn == NULL or csf == NULL:
        st.oom = True
        free(XS)
        free(sn)
        free(csf)
        return
    for r in range(nS):
        for f in range(st.d):
            XS[r * st.d + f] = X[S[r] * st.d + f]
        sn[r] = st.xn[S[r]]
        csf[r] = <floating> cs[r]
    nb = (nT + TILE_Q - 1) // TILE_Q
    nt = threads_for(st.n_threads, nT * nS, GRAIN)
    with parallel(num_threads=nt):
        XT = <floating *> malloc(TILE_Q * st.d * sizeof(floating))
        tnrm = <double *> malloc(TILE_Q * sizeof(double))
        tile = <floating *> malloc(TILE_Q * COLS * sizeof(floating))
        ftile = <float *> malloc(TILE_Q * COLS * sizeof(float))
        acc = <floating *> malloc(TILE_Q * sizeof(floating))
        if XT == NULL or tnrm == NULL or tile == NULL or ftile == NULL or acc == NULL:
            flag_set(<int *> &st.oom)        # any thread: atomic (_atomic.pxd)
        for c in prange(nb, schedule="dynamic"):
            if XT == NULL or tnrm == NULL or tile == NULL or ftile == NULL or acc == NULL:
                continue
            b0 = c * TILE_Q
            cw = min(<intp_t> TILE_Q, nT - b0)
            for k in range(cw):
                for f in range(st.d):
                    XT[k * st.d + f] = X[T[b0 + k] * st.d + f]
                tnrm[k] = st.xn[T[b0 + k]]
                acc[k] = 0
            c0 = 0
            while c0 < nS:
                r = min(<intp_t> COLS, nS - c0)
                # the kernel values as the cache holds them (float32), summed in X's dtype
                if floating is float:       # float32 values straight into the tile gemv reads
                    kernel_tile_f32(&st.ks, <int> cw, <int> r, <int> st.d, XT, XS + c0 * st.d, tnrm,
                                    sn + c0, tile, tile)
                else:                       # rounded through float32, summed in float64
                    kernel_tile_f32(&st.ks, <int> cw, <int> r, <int> st.d, XT, XS + c0 * st.d, tnrm,
                                    sn + c0, tile, ftile)
                    for q in range(cw * r):
                        tile[q] = ftile[q]
                _gemv(False, <int> cw, <int> r, <floating> 1.0, tile, <int> r, csf + c0, 1,
                      <floating> 1.0, acc, 1)
                c0 = c0 + r
            for k in range(cw):
                out[T[b0 + k]] += <double> acc[k]
        free(XT)
        free(tnrm)
        free(tile)
        free(ftile)
        free(acc)
    free(XS)
    free(sn)
    free(csf)
