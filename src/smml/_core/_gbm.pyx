# Second-order gradient boosting (002 section 3.2 "XGBoost"): the per-round
# gradients and hessians, the growth of one regression tree on them from
# histograms, and the update of the scores F by the new tree.  Everything runs
# without the GIL; Python (smml.ensemble._gradient_boosting) validates inputs,
# bins the features once and loops over the rounds.
#
# 002 "XGBoost": each round replaces l(y_i, F_t(x_i) + f(x_i)) by its Taylor
# expansion l + g_i f(x_i) + 1/2 h_i f(x_i)^2 and adds Omega(f) = gamma L_f +
# 1/2 lambda sum_j w_j^2.  For a fixed tree the best leaf values are
# w_j* = -G_j / (H_j + lambda) and the objective obj* = -1/2 sum_j G_j^2 /
# (H_j + lambda) + gamma L_f; a leaf is split where
#     gain = 1/2 [G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda) - (G_L+G_R)^2/(H_L+H_R+lambda)]
# is largest, and only when gain > gamma, i.e. when the split lowers obj* (a
# split adds one leaf: obj* changes by gamma - gain).
#
# The histograms and their scans are the tree kernel's (_histogram.pxd: a
# (-, sum h, sum g) histogram per feature (no counts), scanned with Targets.reg_lambda
# and min_child_weight); the node record is the tree's (_tree.pxd), so
# prediction is _tree_predict.pyx.  What is specific here: a node keeps its
# histogram until it is split, the smaller child's histogram is built from its
# rows and the larger one's is the parent's minus it (hist_subtract); children
# at the depth limit get none.
#
# Order of growth: without a leaf limit the tree does not depend on the order its
# nodes are split in, so the first levels are grown a level at a time, all the
# histograms and scans of a level in one parallel region ((node, block of features)
# tasks: one fork-join a level, not one a node), and once a level is wide (4 nodes
# to split per thread) the subtrees under it are grown depth-first, a subtree per
# task (each thread's histograms stay in its cache, no fork-join below); the nodes
# are then renumbered in depth-first order (000 "Tree Predictors": the ids the
# node-by-node kernel gives).  With max_leaf_nodes the growth is best-first, node by
# node (the order decides which leaves are split).
#
# Determinism: a feature's histogram is built by one thread in row order, the
# argmin over features is serial (ties: lowest feature, then lowest bin /
# shortest category prefix), the children's sums of g and h are read from the
# split node's histogram (_child_sums: the gradients are fixed point, see
# quantize, so every sum of them is exact and equals the rows' sums in any
# order), the loss is summed over fixed blocks: results do not depend on the
# thread count.
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memset
from libc.math cimport fabs, INFINITY, nearbyint
from cython.parallel cimport parallel, prange

from smml._core._typedefs cimport intp_t, int32_t, int64_t, uint8_t, uint64_t
from smml._core._openmp cimport threads_for, omp_get_thread_num
from smml._core._atomic cimport flag_set
from smml._core._criterion cimport MAXCAT, NWORDS, Targets, SplitRecord, ScanState, init_record, init_scan
from smml._core._histogram cimport (bin_empty, gather_prefetch, hist_build, hist_subtract, scan_bins,
                                    scan_categorical, smml_hist_row_hg)
from smml._core._frontier cimport (Pending, Frontier, frontier_init, frontier_push, frontier_pop,
                                   frontier_free)
from smml._core._tree cimport Node, leaf_test
from smml._core._tree import NODE_DTYPE

import numpy as np

cdef enum:
    STRIDE = 2              # histogram bin: sum h, sum g (_histogram.pxd, Targets.no_counts)
    EXP_GRAIN = 16384       # least rows x classes per thread of the per-row exp / log loops
    PART_GRAIN = 16384      # least rows per thread of a node's partition
    MAX_PART_THREADS = 8
    SUBTREES_PER_THREAD = 4 # a level with this many nodes to split per thread: a subtree per task
    LEVEL_BYTES = 1 << 25   # most bytes of histograms alive in level-wise growth (_grow_levels)
    PASS_BYTES = 1 << 18    # most bytes of histograms one pass over a node's rows fills (_block_pass)
    ROW_CHUNK = 4096        # least rows of a chunk of a row-parallel histogram (_row_mode)
    ROW_PASS_BYTES = 1 << 17  # most bytes of a row-parallel chunk's histograms (_row_mode)
    CHUNKS_PER_THREAD = 4   # chunks a thread of a row-parallel histogram gets, at most (balance)

cdef enum:
    LOSS_SQUARED = 0
    LOSS_LOGISTIC = 1
    LOSS_SOFTMAX = 2

LOSSES = {"squared_error": LOSS_SQUARED, "log_loss": LOSS_LOGISTIC, "softmax": LOSS_SOFTMAX}

# ---------------------------------------------------------------------------
# gradients and hessians (002 "XGBoost": g_i, h_i of the loss at F_t(x_i))

cdef enum:
    LOSS_BLOCK = 4096       # rows per partial sum of the loss (fixed: the sum is the same on any thread count)


cdef extern from "smml_gbm.h" nogil:
    enum: SMML_GBM_CHUNK
    double smml_gbm_logistic_block(const double* F, const double* y, const double* sw, double* G,
                                   double* H, intp_t n, int want_loss)
    double smml_gbm_softmax_block(const double* F, intp_t K, const double* y, const double* sw,
                                  double* G, double* H, intp_t ld, intp_t n, int want_loss, double* ex)


cdef double _abs_max_range(const double* v, intp_t a, intp_t b) noexcept nogil:
    cdef intp_t i
    cdef double m = 0.0, x
    for i in range(a, b):
        x = fabs(v[i])
        m = x if x > m else m          # a select, not a branch per value
    return m


cdef double _loss_pass(int loss, const double[::1] y, const double[:, ::1] F, const double[::1] sw,
                       double* G, double* H, intp_t ld, int nt, bint want_loss,
                       double* maxima=NULL, bint write_h=True) except? -1.0:
    """The gradients (into G, H, (K, ld) row-major, unless G is NULL) and / or the loss sum,
    over blocks of LOSS_BLOCK rows, the blocks' sums added in block order: the same values
    on any thread count, and the same loss sum with or without the gradients.  ``maxima``
    (with G): (K, 2) out, each class's max |g| and max |h|, taken from each block while it is
    still in cache (maxima do not depend on the order).  ``write_h`` False (the square loss
    only): H is left as it is (h = 2 w does not change from round to round) and its maxima
    are 0."""
    cdef intp_t n = F.shape[0], K = F.shape[1], nb, b, i, r0, r1, k
    cdef double acc, w, v
    cdef double* part
    cdef double* bmax = NULL
    cdef double* ex
    cdef int failed[1]
    failed[0] = 0
    if n == 0:
        if maxima != NULL:
            memset(maxima, 0, 2 * K * sizeof(double))
        return 0.0
    nb = (n + LOSS_BLOCK - 1) // LOSS_BLOCK
    part = <double*>malloc(nb * sizeof(double))
    if part == NULL:
        raise MemoryError("smml.ensemble: could not allocate the loss partial sums")
    if maxima != NULL and G != NULL:
        bmax = <double*>malloc(nb * 2 * K * sizeof(double))
        if bmax == NULL:
            free(part)
            raise MemoryError("smml.ensemble: could not allocate the gradients' maxima")
    with nogil, parallel(num_threads=nt):
        ex = NULL
        if loss == LOSS_SOFTMAX:
            ex = <double*>malloc(K * SMML_GBM_CHUNK * sizeof(double))
        for b in prange(nb, schedule="static"):
            r0 = b * LOSS_BLOCK
            r1 = min(r0 + LOSS_BLOCK, n)
            acc = 0.0
            if loss == LOSS_SQUARED:
                for i in range(r0, r1):
                    w = sw[i]
                    if G != NULL:
                        G[i] = -2.0 * w * (y[i] - F[i, 0])
                        if write_h:
                            H[i] = 2.0 * w
                    v = (y[i] - F[i, 0]) * (y[i] - F[i, 0])
                    acc = acc + w * v
            elif loss == LOSS_LOGISTIC:
                acc = smml_gbm_logistic_block(&F[r0, 0], &y[r0], &sw[r0], G + r0 if G != NULL else NULL,
                                              H + r0 if G != NULL else NULL, r1 - r0, want_loss)
            elif ex == NULL:
                flag_set(failed)                # any thread: atomic (_atomic.pxd)
            else:
                acc = smml_gbm_softmax_block(&F[r0, 0], K, &y[r0], &sw[r0], G + r0 if G != NULL else NULL,
                                             H + r0 if G != NULL else NULL, ld, r1 - r0, want_loss, ex)
            part[b] = acc
            if bmax != NULL:
                for k in range(K):
                    bmax[(b * K + k) * 2] = _abs_max_range(G + k * ld, r0, r1)
                    bmax[(b * K + k) * 2 + 1] = _abs_max_range(H + k * ld, r0, r1) if write_h else 0.0
        free(ex)
    acc = 0.0
    for b in range(nb):
        acc = acc + part[b]
    free(part)
    if bmax != NULL:
        for k in range(2 * K):
            v = 0.0
            for b in range(nb):
                v = bmax[b * 2 * K + k] if bmax[b * 2 * K + k] > v else v
            maxima[k] = v
        free(bmax)
    if failed[0]:
        raise MemoryError("smml.ensemble: could not allocate the softmax scratch")
    return acc if want_loss else 0.0


def gradients(int loss,
              const double[::1] y,          # IN (n,) target; class index (0/1 or 0..K-1) for the classifiers
              const double[:, ::1] F,       # IN (n, K) current scores
              const double[::1] sw,         # IN (n,) sample weights
              double[:, ::1] G,             # OUT (K, n) w g_i
              double[:, ::1] H,             # OUT (K, n) w h_i
              int n_threads,
              bint want_loss=False,
              double[:, ::1] maxima=None,   # OUT (K, 2) per class max |w g_i|, max |w h_i|, or None
              bint hess=True):              # False (square loss): H as it is, its maxima 0
    """Squared error (002 "Quadratic loss"): l = (y - y')^2, g = -2 (y - F), h = 2.
    Logistic (002 "Logistic loss", natural log): l = -(1-y) log(1-p) - y log p with
    p = 1 / (1 + e^-F): g = p - y, h = p (1 - p).  Softmax (K classes): p_k = e^F_k / sum e^F,
    l = -log p_y: g_k = p_k - [y = k], h_k = p_k (1 - p_k) (the diagonal of the Hessian).
    Each multiplied by the sample weight.

    ``want_loss``: also return sum_i w_i l(y_i, F_i), the value :func:`loss_sum` returns
    (bit for bit: the same terms, the same blocks), from the exponentials the gradients
    compute anyway (a boosting round's training loss is the next round's gradients' F).
    The exponential and logarithm of the logistic and softmax losses are ``smml_gbm.h``'s
    vectorised ones (within about 1 ulp of libm's); each row's e^-|F| or e^(F_k - max F)
    is computed once.  ``maxima``: each class's largest |w g_i| and |w h_i| (``abs_max`` of the
    rows of G and H), found while the gradients are made.  ``hess`` False: the square loss's
    h = 2 w are not written again (H keeps the values of a call before, as the fit quantized
    them; its maxima are given as 0)."""
    cdef intp_t n = F.shape[0], K = F.shape[1]
    if G.shape[0] != K or H.shape[0] != K or G.shape[1] != n or H.shape[1] != n or y.shape[0] != n \
            or sw.shape[0] != n:
        raise ValueError("gradients: shapes disagree")
    if maxima is not None and (maxima.shape[0] != K or maxima.shape[1] != 2):
        raise ValueError("gradients: maxima must be (K, 2)")
    if n == 0:
        if maxima is not None:
            maxima[:, :] = 0.0
        return 0.0
    if not hess and loss != LOSS_SQUARED:
        raise ValueError("gradients: hess=False is for the square loss (its h does not change)")
    return _loss_pass(loss, y, F, sw, &G[0, 0], &H[0, 0], n, threads_for(n_threads, n * K, EXP_GRAIN),
                      want_loss, &maxima[0, 0] if maxima is not None else NULL, hess)


def loss_sum(int loss,
             const double[::1] y,           # IN (n,) target; class index for the classifiers
             const double[:, ::1] F,        # IN (n, K) scores
             const double[::1] sw,          # IN (n,) sample weights
             int n_threads):
    """sum_i w_i l(y_i, F_i) for the losses of ``gradients``: (y - F)^2; log(1 + e^F) - y F
    (the logistic loss, computed as max(F, 0) + log1p(e^-|F|) - y F); log sum_k e^F_k - F_y.
    Partial sums over fixed blocks of rows, added in block order: the result does not depend
    on the thread count."""
    cdef intp_t n = F.shape[0], K = F.shape[1]
    if y.shape[0] != n or sw.shape[0] != n:
        raise ValueError("loss_sum: shapes disagree")
    return _loss_pass(loss, y, F, sw, NULL, NULL, n, threads_for(n_threads, n * K, EXP_GRAIN), True)


# ---------------------------------------------------------------------------
# growth of one tree

cdef struct HistBuf:
    double* h               # (d, max_bins, STRIDE); zero outside the bins lo..hi of each feature
    intp_t* lo              # (d) lowest bin that may be non-zero
    intp_t* hi              # (d) highest
    HistBuf* next_free


cdef void _free_bufs(HistBuf** bufs, intp_t n) noexcept nogil:
    cdef intp_t j
    for j in range(n):
        if bufs[j] != NULL:
            free(bufs[j].h); free(bufs[j].lo); free(bufs[j].hi)
            free(bufs[j])
    free(bufs)


cdef class HistPool:
    """Clean histogram buffers handed from one ``grow_tree`` call to the next (one fit's trees:
    the same features and bins), so that a tree does not allocate and zero its buffers again
    (level-wise growth keeps a level's histograms alive at once: tens to hundreds of buffers of
    d x max_bins x 2 doubles).  A buffer comes back clean (_hist_put clears the bins it used);
    a call that fails drops the pool's buffers.  One fit's own: not shared between threads."""
    cdef HistBuf** bufs
    cdef intp_t n
    cdef intp_t d, max_bins

    def __dealloc__(self):
        _free_bufs(self.bufs, self.n)
        self.bufs = NULL
        self.n = 0


cdef struct Params:
    Targets t               # w = hessians, wy = gradients, K = 0, reg_lambda, min_child_weight
    intp_t d, max_bins
    const uint8_t* Xb       # (n, d) codes
    const uint8_t* Xbt      # (d, n) the same codes by column (the partitions read one feature), or NULL
    intp_t n
    const double* edges     # (d, max_bins) threshold of "code <= b"
    const uint8_t* is_cat   # (d)
    const intp_t* nan_code  # (d) the code of a missing value (NaN), -1: no missing value in training
    const intp_t* feats     # (mf) candidate features of this tree, ascending
    intp_t mf
    double gamma
    double lr
    intp_t max_depth        # -1: none
    intp_t max_leaf_nodes   # 0: none
    int n_threads
    intp_t grain
    intp_t row_chunk        # least rows of a row-parallel chunk (0: histograms feature-parallel only)
    intp_t* rows            # (m) the tree's rows; nodes own segments [start, end)


cdef struct Scratch:
    SplitRecord* feat_best  # (mf)
    double* dummy           # (16) the class sums of the scans (K = 0: unused)
    double* catkey          # (mf, MAXCAT)
    intp_t* catord          # (mf, MAXCAT)
    intp_t* tmp             # (m)
    HistBuf* free_list
    HistBuf** all_bufs      # every buffer allocated, to free at the end
    intp_t n_bufs, cap_bufs
    RowJob* jobs            # (max_jobs) a row-parallel pass's chunks
    intp_t max_jobs


cdef struct RowJob:
    # a chunk of a row-parallel histogram: rows[start:end] into buf (all candidate features)
    intp_t start
    intp_t end
    HistBuf* buf
    bint own                # buf is the chunk's own (back to the free list after the sums)
    bint pf                 # prefetch (gather_prefetch of its node: a chunk is as sparse as the node)


cdef HistBuf* _hist_get(const Params* P, Scratch* S) noexcept nogil:
    """A zero histogram buffer (from the free list, or a new one); NULL when out of memory."""
    cdef HistBuf* b = S.free_list
    cdef intp_t j
    if b != NULL:
        S.free_list = b.next_free
        return b
    if S.n_bufs >= S.cap_bufs:
        return NULL
    b = <HistBuf*>calloc(1, sizeof(HistBuf))
    if b == NULL:
        return NULL
    S.all_bufs[S.n_bufs] = b
    S.n_bufs += 1
    # (calloc's alignment, 16 bytes on the 64-bit targets: every (sum h, sum g) bin is aligned)
    b.h = <double*>calloc(P.d * P.max_bins * STRIDE + 8, sizeof(double))
    b.lo = <intp_t*>malloc(P.d * sizeof(intp_t))
    b.hi = <intp_t*>malloc(P.d * sizeof(intp_t))
    if b.h == NULL or b.lo == NULL or b.hi == NULL:
        return NULL
    for j in range(P.d):
        b.lo[j] = 0
        b.hi[j] = -1
    return b


cdef void _hist_put(const Params* P, Scratch* S, HistBuf* b) noexcept nogil:
    """Clear the bins b used and return it to the free list."""
    cdef intp_t j, f
    if b == NULL:
        return
    for j in range(P.mf):
        f = P.feats[j]
        if b.hi[f] >= b.lo[f]:
            memset(b.h + (f * P.max_bins + b.lo[f]) * STRIDE, 0,
                   (b.hi[f] - b.lo[f] + 1) * STRIDE * sizeof(double))
        b.lo[f] = 0
        b.hi[f] = -1
    b.next_free = S.free_list
    S.free_list = b


cdef void _scan_one(const Params* P, Scratch* S, const HistBuf* b, const double* tot, intp_t j,
                    intp_t nn, SplitRecord* out, double* key, intp_t* order) noexcept nogil:
    """Best split of candidate feature feats[j] from its histogram (_histogram.pxd scans);
    key, order: MAXCAT scratch values of the categorical scan (the caller's own).

    Missing values (a numerical feature with nan_code >= 0, its last code): the scan over the
    codes sends them to the second child ("code <= b" is false for them: the candidates are
    every finite cut and finite | missing); when the node has missing rows, a second scan sends
    them to the first child (candidates: missing | finite, then missing and "code <= b" |
    the rest), and wins only when clearly better (by a relative 1e-12, as between features):
    the direction a missing value takes is learned per split, as xgboost's and LightGBM's."""
    cdef intp_t f = P.feats[j], k, c, nc, top
    cdef const double* h = b.h + f * P.max_bins * STRIDE
    cdef ScanState st
    cdef ScanState sm
    cdef bint miss_left = False
    init_record(out)
    if P.is_cat[f]:
        scan_categorical(&P.t, tot, h, STRIDE, b.lo[f], b.hi[f], nn, S.dummy, S.dummy,
                         key, order, &st)
    else:
        init_scan(&P.t, tot, &st)
        scan_bins(&P.t, tot, h, STRIDE, b.lo[f], b.hi[f], 0, nn, S.dummy, S.dummy, &st)
        nc = P.nan_code[f]
        if nc >= 0 and b.hi[f] == nc and b.lo[f] < nc and not bin_empty(&P.t, h + nc * STRIDE):
            # the node has missing and finite rows: missing values to the first child
            top = nc - 1                     # the highest finite code present
            while top > b.lo[f] and bin_empty(&P.t, h + top * STRIDE):
                top -= 1
            init_scan(&P.t, tot, &sm)
            # candidate index = (last finite code on the first side) + 1; 0: missing values only
            if not scan_bins(&P.t, tot, h, STRIDE, nc, nc + 1, -nc, nn, S.dummy, S.dummy, &sm):
                scan_bins(&P.t, tot, h, STRIDE, b.lo[f], top, 1, nn, S.dummy, S.dummy, &sm)
            if sm.best_idx >= 0 and (st.best_idx < 0 or sm.best < st.best - 1e-12 * fabs(st.best)):
                st = sm
                miss_left = True
    if st.best_idx < 0:
        return
    out.feature = f
    out.n_left = st.best_nl             # (no counts in boosting: 0)
    out.cost = st.best
    if P.is_cat[f]:
        out.is_cat = 1
        for k in range(st.best_idx + 1):
            c = order[k]
            out.cat_bits[c >> 6] |= (<uint64_t>1) << (c & 63)
    elif miss_left:
        out.missing_left = 1
        out.bin = st.best_idx - 1
        out.threshold = P.edges[f * P.max_bins + out.bin] if out.bin >= 0 else -INFINITY
    else:
        out.bin = st.best_idx
        out.threshold = P.edges[f * P.max_bins + st.best_idx]


cdef void _block_pass(const Params* P, Scratch* S, HistBuf* hs, intp_t start, intp_t end,
                      HistBuf* parent, bint scan_small, bint scan_big, intp_t nn_small, intp_t nn_big,
                      const double* tot_small, const double* tot_big, intp_t j0, intp_t j1,
                      SplitRecord* fb, double* key, intp_t* order) noexcept nogil:
    """Candidate features feats[j0:j1]: the histograms of rows[start:end] into hs (zero before);
    parent -= hs when a parent is given (it becomes the sibling's histogram); then the scans of
    hs (into fb[j]) and of the sibling (into fb[mf + j]) that are asked for (key, order: the
    categorical scans' scratch, MAXCAT each, this call's own).

    The histograms are filled a block of features at a time, one pass over the rows each, the
    block's histograms at most PASS_BYTES (half the L2 cache of the CPUs this was measured on):
    with all of a wide block's histograms at once (500 features: 2 MB), most bin updates miss
    the cache."""
    cdef intp_t jb, per = max(<intp_t>1, PASS_BYTES // (P.max_bins * STRIDE * <intp_t>sizeof(double)))
    cdef bint pf = gather_prefetch(P.n, P.d, end - start)
    jb = j0
    while jb < j1:
        hist_build(&P.t, hs.h, P.max_bins, STRIDE, hs.lo, hs.hi, P.feats, jb, min(jb + per, j1), P.Xb, P.d,
                   P.rows, start, end, pf)
        jb += per
    _finish_pass(P, S, hs, parent, scan_small, scan_big, nn_small, nn_big, tot_small, tot_big, j0, j1, fb, key,
                 order)


cdef void _finish_pass(const Params* P, Scratch* S, HistBuf* hs, HistBuf* parent, bint scan_small,
                       bint scan_big, intp_t nn_small, intp_t nn_big, const double* tot_small,
                       const double* tot_big, intp_t j0, intp_t j1, SplitRecord* fb, double* key,
                       intp_t* order) noexcept nogil:
    """_block_pass once hs is built: the sibling subtraction and the scans of features
    feats[j0:j1]."""
    cdef intp_t j
    if parent != NULL:
        hist_subtract(parent.h, hs.h, P.max_bins, STRIDE, parent.lo, parent.hi, P.feats, j0, j1)
    for j in range(j0, j1):
        if scan_small:
            _scan_one(P, S, hs, tot_small, j, nn_small, &fb[j], key, order)
        if scan_big:
            _scan_one(P, S, parent, tot_big, j, nn_big, &fb[P.mf + j], key, order)


cdef inline bint _row_mode(const Params* P) noexcept nogil:
    """Whether a large node's histogram is built by row chunks (a thread a chunk, all features:
    the chunks' histograms then summed) rather than by blocks of features (a thread a block,
    all rows).  By features, every thread reads every row's index, h and g: on few features
    that read is most of the pass.  Row chunks need all the candidates' histograms in a buffer
    per chunk, at most ROW_PASS_BYTES (half a block pass's: the chunks' buffers and their sums
    stay in the cache).  Measured (bench_grid cells, 2 threads, 100 rounds, interleaved): 1.01-1.26x
    at 8 and 32 features (500,000 x 32, 5 classes, depth 3: 1.26x); at 64 features (256 KB a
    chunk) 0.97-1.14x, so not there.  The sums are exact in any order (fixed-point g and h,
    _exact_sums), so both build the same histograms, bit for bit."""
    return (P.row_chunk > 0 and P.n_threads > 1
            and P.mf * P.max_bins * STRIDE * <intp_t>sizeof(double) <= ROW_PASS_BYTES)


cdef intp_t _chunk_rows(const Params* P, intp_t rows, int nt) noexcept nogil:
    """Rows of a chunk when rows in all are split between nt threads: CHUNKS_PER_THREAD chunks a
    thread, at least P.row_chunk rows each."""
    cdef intp_t per = nt * CHUNKS_PER_THREAD
    return max(P.row_chunk, (rows + per - 1) // per)


cdef intp_t _add_jobs(const Params* P, Scratch* S, HistBuf* hs, intp_t start, intp_t end, intp_t chunk,
                      intp_t nj) noexcept nogil:
    """Jobs S.jobs[nj:] for rows[start:end] in chunks of about ``chunk`` rows, the first into
    hs, the others into buffers of their own; returns the new number of jobs, or -1 (no buffer:
    the ones taken are given back)."""
    cdef intp_t nn = end - start, k = max(<intp_t>1, nn // chunk), c
    cdef bint pf = gather_prefetch(P.n, P.d, nn)
    k = max(<intp_t>1, min(k, S.max_jobs - nj))     # (max_jobs: room for every pair's first)
    for c in range(k):
        S.jobs[nj + c].start = start + (c * nn) // k
        S.jobs[nj + c].end = start + ((c + 1) * nn) // k
        S.jobs[nj + c].pf = pf
        S.jobs[nj + c].own = c > 0
        if c == 0:
            S.jobs[nj].buf = hs
        else:
            S.jobs[nj + c].buf = _hist_get(P, S)
            if S.jobs[nj + c].buf == NULL:
                S.jobs[nj + c].own = False
                _put_jobs(P, S, nj, nj + c)
                return -1
    return nj + k


cdef void _put_jobs(const Params* P, Scratch* S, intp_t j0, intp_t j1) noexcept nogil:
    """The chunks' own buffers of jobs j0..j1 - 1 back to the free list (cleared)."""
    cdef intp_t j
    for j in range(j0, j1):
        if S.jobs[j].own:
            _hist_put(P, S, S.jobs[j].buf)
            S.jobs[j].own = False


cdef void _run_job(const Params* P, const RowJob* jb) noexcept nogil:
    hist_build(&P.t, jb.buf.h, P.max_bins, STRIDE, jb.buf.lo, jb.buf.hi, P.feats, 0, P.mf, P.Xb, P.d, P.rows,
               jb.start, jb.end, jb.pf)


cdef void _merge_jobs(const Params* P, HistBuf* hs, const RowJob* jobs, intp_t nj, intp_t j0,
                      intp_t j1) noexcept nogil:
    """hs += the chunk histograms jobs[0:nj].buf over features feats[j0:j1], then each
    feature's lo / hi: its first and last non-empty bin (what one pass over all the rows finds;
    every sum is exact, so hs is that pass's histogram)."""
    cdef intp_t j, f, c, q, q0, q1, lo, hi
    cdef const HistBuf* b
    cdef double* h
    for j in range(j0, j1):
        f = P.feats[j]
        lo = hs.lo[f]
        hi = hs.hi[f]
        for c in range(nj):
            b = jobs[c].buf
            if b.hi[f] < b.lo[f]:
                continue
            q0 = (f * P.max_bins + b.lo[f]) * STRIDE
            q1 = (f * P.max_bins + b.hi[f] + 1) * STRIDE
            for q in range(q0, q1):
                hs.h[q] += b.h[q]
            lo = min(lo, b.lo[f])
            hi = max(hi, b.hi[f])
        h = hs.h + f * P.max_bins * STRIDE
        while lo <= hi and bin_empty(&P.t, h + lo * STRIDE):
            lo += 1
        while hi >= lo and bin_empty(&P.t, h + hi * STRIDE):
            hi -= 1
        if hi < lo:
            lo = MAXCAT
            hi = -1
        hs.lo[f] = lo
        hs.hi[f] = hi


cdef void _node_pass(const Params* P, Scratch* S, HistBuf* hs, intp_t start, intp_t end,
                     HistBuf* parent, bint scan_small, bint scan_big, intp_t nn_big,
                     const double* tot_small, const double* tot_big) noexcept nogil:
    """_block_pass over all candidate features: one parallel region per split (a block of
    features per thread: histogram, subtraction and scans), when the work is worth it; on few
    features (_row_mode) a region of row chunks for the histogram, then one of feature blocks
    for the sums of the chunks, the subtraction and the scans.  Each feature's histogram is the
    same, bit for bit, and each scan is computed by one thread in a fixed order: results do not
    depend on the thread count."""
    cdef intp_t nn = end - start, j, nb, work, nj
    cdef int nt
    work = nn * P.mf + (<intp_t>scan_small + <intp_t>scan_big + (1 if parent != NULL else 0)) * P.mf * P.max_bins
    nt = threads_for(P.n_threads, work, P.grain)
    if nt > 1 and _row_mode(P) and nn >= 2 * P.row_chunk:
        nj = _add_jobs(P, S, hs, start, end, _chunk_rows(P, nn, nt), 0)
        if nj > 1:
            for j in prange(nj, num_threads=nt, schedule="dynamic"):
                _run_job(P, &S.jobs[j])
            # the chunks' sums, the subtraction and the scans: a block of features a thread
            nb = min(<intp_t>threads_for(P.n_threads, (nj + 2) * P.mf * P.max_bins, P.grain), P.mf)
            for j in prange(nb, num_threads=nb, schedule="static"):
                _merge_jobs(P, hs, S.jobs + 1, nj - 1, (j * P.mf) // nb, ((j + 1) * P.mf) // nb)
                _finish_pass(P, S, hs, parent, scan_small, scan_big, nn, nn_big, tot_small, tot_big,
                             (j * P.mf) // nb, ((j + 1) * P.mf) // nb, S.feat_best,
                             S.catkey + j * MAXCAT, S.catord + j * MAXCAT)
            _put_jobs(P, S, 0, nj)
            return
        # (no buffer for a chunk, or a single chunk: by features)
    if nt > 1 and P.mf >= 2:
        nb = min(<intp_t>nt, P.mf)
        for j in prange(nb, num_threads=nb, schedule="static"):
            _block_pass(P, S, hs, start, end, parent, scan_small, scan_big, nn, nn_big, tot_small,
                        tot_big, (j * P.mf) // nb, ((j + 1) * P.mf) // nb, S.feat_best,
                        S.catkey + j * MAXCAT, S.catord + j * MAXCAT)
    else:
        _block_pass(P, S, hs, start, end, parent, scan_small, scan_big, nn, nn_big, tot_small,
                    tot_big, 0, P.mf, S.feat_best, S.catkey, S.catord)


cdef void _pick(const Params* P, const SplitRecord* feat_best, double Gs, double Hs,
                SplitRecord* best) noexcept nogil:
    """The node's best split from its per-feature scans (lowest -(G_L^2/(H_L+lambda) +
    G_R^2/(H_R+lambda)); ties, up to a relative 1e-12: lowest feature), kept only when
    gain > gamma (002 "XGBoost"); best.improvement = gain.  A gain within 1e-12 of the
    children's score is rounding (a split that cannot lower obj*): none."""
    cdef intp_t j
    cdef double parent, gain, lam = P.t.reg_lambda
    cdef const SplitRecord* r
    init_record(best)
    for j in range(P.mf):
        r = &feat_best[j]
        if r.feature < 0:
            continue
        # features in ascending order: a later one wins only when clearly better, so splits whose
        # costs differ by rounding only (two features cutting the same rows, sums added in other
        # orders) go to the lowest feature
        if best.feature < 0 or r.cost < best.cost - 1e-12 * fabs(best.cost):
            best[0] = r[0]
    if best.feature < 0:
        return
    parent = Gs * Gs / (Hs + lam) if Hs + lam > 0.0 else 0.0
    gain = 0.5 * (-best.cost - parent)
    best.improvement = gain
    if not (gain > P.gamma) or not (gain > 1e-12 * -best.cost):
        best.feature = -1


cdef void _totals_range(const Params* P, intp_t start, intp_t end, double* Gs, double* Hs) noexcept nogil:
    cdef intp_t p, i
    cdef double g = 0.0, h = 0.0
    for p in range(start, end):
        i = P.rows[p]
        g += P.t.wy[i]
        h += P.t.w[i]
    Gs[0] = g
    Hs[0] = h


cdef void _totals(const Params* P, intp_t start, intp_t end, double* Gs, double* Hs) noexcept nogil:
    """The sums of g and h over rows[start:end]: in ranges on the threads when there are many
    (every sum of fixed-point values is exact: the same sums as one pass)."""
    cdef intp_t nn = end - start, c
    cdef int nt = threads_for(P.n_threads, nn, PART_GRAIN)
    cdef double* part = NULL
    if nt > 1:
        part = <double*>malloc(2 * nt * sizeof(double))
    if part == NULL:
        _totals_range(P, start, end, Gs, Hs)
        return
    for c in prange(nt, num_threads=nt, schedule="static"):
        _totals_range(P, start + c * nn // nt, start + (c + 1) * nn // nt, &part[2 * c], &part[2 * c + 1])
    Gs[0] = 0.0
    Hs[0] = 0.0
    for c in range(nt):
        Gs[0] += part[2 * c]
        Hs[0] += part[2 * c + 1]
    free(part)


cdef inline intp_t _goes_first(const SplitRecord* sp, intp_t c, intp_t nc) noexcept nogil:
    """1 if a row of code c goes to the first child of split sp, else 0, without a branch on c
    (the test on is_cat is the same for every row of the split): a category in cat_bits; a
    missing value (code nc) to the learned side; else code <= bin."""
    cdef intp_t isnan
    if sp.is_cat:
        return (sp.cat_bits[c >> 6] >> (c & 63)) & 1
    isnan = c == nc
    return isnan * (<intp_t> sp.missing_left) + (1 - isnan) * (c <= sp.bin)


cdef void _child_sums(const Params* P, const HistBuf* b, const SplitRecord* sp, double* KG,
                      double* KH) noexcept nogil:
    """KG, KH: each child's sums of gradients and hessians (002 "XGBoost"'s G_j, H_j) from the
    node's histogram b (bins of the split feature that go first, and the others), not from its
    rows: the gradients are fixed point (``quantize``), so every sum of them is exact in any
    order and these are the rows' sums bit for bit, at the cost of one feature's bins."""
    cdef intp_t f = sp.feature, c, nc = P.nan_code[sp.feature]
    cdef const double* hb
    cdef double g1 = 0.0, h1 = 0.0, g2 = 0.0, h2 = 0.0
    for c in range(b.lo[f], b.hi[f] + 1):
        hb = b.h + (f * P.max_bins + c) * STRIDE
        if _goes_first(sp, c, nc):
            h1 += hb[0]
            g1 += hb[1]
        else:
            h2 += hb[0]
            g2 += hb[1]
    KG[0] = g1
    KH[0] = h1
    KG[1] = g2
    KH[1] = h2


cdef intp_t _partition_into_tmp(const Params* P, Scratch* S, const SplitRecord* sp, intp_t a,
                                intp_t b) noexcept nogil:
    """rows[a:b] into tmp[a:b]: the rows of the first child from tmp[a] up (in their order),
    the others from tmp[b - 1] down (in reverse order); returns how many go first."""
    cdef intp_t p, i, q = a, r = b - 1, f = sp.feature, d = P.d, nc = P.nan_code[sp.feature], left
    # the split feature's codes: one column of Xbt when given (a byte a row: the reads stay
    # in cache on tall data; 1,000,000 x 28, depth 6: 0.83x the fit's CPU), else strided in
    # the rows of Xb
    cdef const uint8_t* col = P.Xb + f if P.Xbt == NULL else P.Xbt + f * P.n
    cdef intp_t step = d if P.Xbt == NULL else 1
    # branch-free (which side a row goes is as random as the data): each row is written to
    # both free ends and only its own side's end moves (the free slots tmp[q..r] hold both
    # until the last row)
    for p in range(a, b):
        i = P.rows[p]
        left = _goes_first(sp, col[i * step], nc)
        S.tmp[q] = i
        S.tmp[r] = i
        q += left
        r -= 1 - left
    return q - a


cdef void _gather_range(const Params* P, Scratch* S, intp_t a, intp_t b, intp_t cnt, intp_t first,
                        intp_t second) noexcept nogil:
    """A range's sides from tmp[a:b] (_partition_into_tmp) back into rows: its first side's
    cnt rows at rows[first:], its second side's (in their order again) at rows[second:]."""
    cdef intp_t j, nr = b - a - cnt
    memcpy(P.rows + first, S.tmp + a, cnt * sizeof(intp_t))
    for j in range(nr):
        P.rows[second + j] = S.tmp[b - 1 - j]


cdef intp_t _partition(const Params* P, Scratch* S, const SplitRecord* sp, intp_t start,
                       intp_t end) noexcept nogil:
    """Rows of the first child first, both sides in their order; returns where the second starts.

    A node of nn rows is cut into nc = min(nn // PART_GRAIN, MAX_PART_THREADS) ranges (at least
    one), partitioned apart into tmp (on up to nc threads), then each range's first side and
    second side are copied back to their places (first sides, then second sides, in range
    order; in parallel too: a serial copy of a tall node's rows left the other threads idle):
    the same rows in the same order as one pass, on any thread count.  One thread: one range."""
    cdef intp_t nn = end - start, c, q, nr
    cdef intp_t nc = min(max(nn // PART_GRAIN, <intp_t> 1), <intp_t> MAX_PART_THREADS)
    cdef intp_t cnt[MAX_PART_THREADS]
    cdef intp_t first[MAX_PART_THREADS]
    cdef intp_t second[MAX_PART_THREADS]
    cdef int nt = threads_for(P.n_threads, nn, PART_GRAIN)
    if nt > nc:
        nt = <int> nc
    if nt <= 1:
        # one thread: one range (the ranges' concatenation is its order)
        q = _partition_into_tmp(P, S, sp, start, end)
        _gather_range(P, S, start, end, q, start, start + q)
        return start + q
    for c in prange(nc, num_threads=nt, schedule="static"):
        cnt[c] = _partition_into_tmp(P, S, sp, start + c * nn // nc, start + (c + 1) * nn // nc)
    q = start
    for c in range(nc):
        first[c] = q
        q += cnt[c]
    nr = q
    for c in range(nc):
        second[c] = nr
        nr += (start + (c + 1) * nn // nc) - (start + c * nn // nc) - cnt[c]
    for c in prange(nc, num_threads=nt, schedule="static"):
        _gather_range(P, S, start + c * nn // nc, start + (c + 1) * nn // nc, cnt[c], first[c], second[c])
    return q


cdef void _set_node(const Params* P, Node* nd, double* value, intp_t start, intp_t end, intp_t depth,
                    double Gs, double Hs) noexcept nogil:
    """A leaf: w* = -G / (H + lambda) times the learning rate (002 "XGBoost")."""
    cdef double den = Hs + P.t.reg_lambda
    leaf_test(nd)
    nd.impurity = 0.0
    nd.weighted_n_node_samples = Hs
    nd.n_node_samples = end - start
    nd.depth = <int32_t>depth
    value[0] = P.lr * (-Gs / den) if den > 0.0 else 0.0


cdef inline bint _can_split(const Params* P, intp_t depth, intp_t nn, double Hs) noexcept nogil:
    if P.max_depth >= 0 and depth >= P.max_depth:
        return False
    return nn >= 2 and Hs >= 2.0 * P.t.min_child_weight


# ---------------------------------------------------------------------------
# level-wise growth (no leaf limit): one parallel region per level for all its histograms

cdef struct Pair:
    # a node of the level being split: its children's histograms and scans
    intp_t q                # the node's index in Level.lev
    intp_t small            # 0 / 1: the child whose histogram is built from its rows
    intp_t start, end       # that child's rows
    intp_t nn_big           # the other child's number of rows
    intp_t kid              # id of the first child
    bint need[2]            # the child may be split (it gets a histogram and a scan)
    HistBuf* hs             # the smaller child's histogram (new)
    HistBuf* parent         # the node's histogram, to become the larger child's (NULL: not needed)
    double tot[4]           # (sum h, sum g) of the smaller child, then of the larger
    intp_t work             # its histogram's rows x features plus its scans' features x bins
    intp_t job0             # row-parallel level (_row_mode): its chunks S.jobs[job0:job0 + njob]
    intp_t njob             # (0: its histogram is built by its tasks, by features)


cdef struct Task:
    intp_t pair
    intp_t j0               # candidate features feats[j0:j1]
    intp_t j1


cdef struct Level:
    intp_t cap              # most nodes split at once level-wise (their children's histograms alive)
    Pending* lev            # (2 cap) the nodes of the level to split (a level wider than cap
                            # is not split here: _subtrees, or the depth-first frontier)
    Pending* nxt            # (2 cap) the next level's (lev and nxt swap)
    double* kg              # (2 cap) the children's sums of g
    double* kh              # (2 cap) and of h
    intp_t* mid             # (2 cap) where the second child's rows start (_subtrees: a subtree's
                            # first id)
    intp_t* order           # (2 cap) _subtrees: the order of the tasks
    Pair* pairs             # (cap)
    Task* tasks             # (cap min(n_threads, mf))
    SplitRecord* fb         # (cap, 2, mf) the pairs' per-feature scans: the smaller child's, the larger's


cdef void _pair_task(const Params* P, Scratch* S, const Level* L, const Task* tk, int tid) noexcept nogil:
    """One task of a level's region: features feats[j0:j1] of one pair (histogram of the smaller
    child, subtraction from the parent's, scans of both), the categorical scratch the thread's."""
    cdef const Pair* pr = &L.pairs[tk.pair]
    cdef intp_t small = pr.small, big = 1 - pr.small
    if pr.njob > 0:
        # (built by row chunks: their sums, then the subtraction and the scans)
        _merge_jobs(P, pr.hs, S.jobs + pr.job0 + 1, pr.njob - 1, tk.j0, tk.j1)
        _finish_pass(P, S, pr.hs, pr.parent, pr.need[small], pr.need[big], pr.end - pr.start, pr.nn_big,
                     pr.tot, pr.tot + 2, tk.j0, tk.j1, L.fb + tk.pair * 2 * P.mf,
                     S.catkey + tid * MAXCAT, S.catord + tid * MAXCAT)
        return
    _block_pass(P, S, pr.hs, pr.start, pr.end, pr.parent, pr.need[small], pr.need[big], pr.end - pr.start,
                pr.nn_big, pr.tot, pr.tot + 2, tk.j0, tk.j1, L.fb + tk.pair * 2 * P.mf,
                S.catkey + tid * MAXCAT, S.catord + tid * MAXCAT)


cdef void _record_split(Node* nodes, uint64_t* bits, int32_t* split_bin, const Pending* cur,
                        intp_t first) noexcept nogil:
    """Node cur.node becomes cur.split's test, its children first and first + 1."""
    cdef Node* nd = &nodes[cur.node]
    cdef intp_t w
    nd.feature = <int32_t>cur.split.feature
    nd.threshold = cur.split.threshold
    nd.is_categorical = cur.split.is_cat
    nd.missing_left = cur.split.missing_left
    nd.improvement = cur.split.improvement
    nd.children_left = <int32_t>first
    split_bin[cur.node] = <int32_t>cur.split.bin
    for w in range(NWORDS):
        bits[cur.node * NWORDS + w] = cur.split.cat_bits[w]


cdef int _grow_levels(const Params* P, Scratch* S, Level* L, Node* nodes, double* value, uint64_t* bits,
                      int32_t* split_bin, intp_t* seg, HistBuf** hist, intp_t nl, intp_t* count,
                      Frontier* front) noexcept nogil:
    """Split the nodes L.lev[0:nl] (each with its split and its histogram) and their descendants
    level by level, while a level has at most L.cap nodes to split; the nodes of a wider level go
    to the depth-first frontier.  Without a leaf limit every node with a split is split, whatever
    the order: the tree is the depth-first one (its node ids are renumbered in depth-first order
    afterwards, _renumber).  Per level: the partitions of the nodes (a node per task; a large
    node's own parallel _partition), then ONE parallel region for every histogram and scan of the
    level (tasks: (node, block of features)), then the picks; on few features (_row_mode) the
    histograms first, in a region of their own by row chunks, and the region of (node, block of
    features) tasks sums the chunks before the subtraction and the scans.  Every sum is exact
    (fixed point) and each scan is one thread's: results do not depend on the thread count.
    Returns 0, or -1 (out of memory)."""
    cdef intp_t q, c, nn, small, big, np_, nt_, t, nb, b, kid, work, part_rows, nxt_n, nj, chunk, hrows
    cdef int nt
    cdef Pending* cur
    cdef Pending* tmp_lev
    cdef Pair* pr
    cdef Pending kids[2]
    while nl > 0:
        if P.max_depth >= 0 and (nl > L.cap or nl >= SUBTREES_PER_THREAD * <intp_t>P.n_threads):
            # wide enough: a subtree per task (each thread's depth-first growth keeps its
            # histograms in its cache)
            return _subtrees(P, S, L, nodes, value, bits, split_bin, seg, hist, nl, count)
        if nl > L.cap:
            for q in range(nl - 1, -1, -1):     # (any order: the ids are renumbered)
                if frontier_push(front, &L.lev[q], False) != 0:
                    return -1
            return 0
        # the children's sums from the nodes' histograms, and the partitions
        part_rows = 0
        for q in range(nl):
            cur = &L.lev[q]
            _child_sums(P, hist[cur.node], &cur.split, L.kg + 2 * q, L.kh + 2 * q)
            nn = cur.end - cur.start
            if nn >= 2 * PART_GRAIN:
                L.mid[q] = _partition(P, S, &cur.split, cur.start, cur.end)    # (its own threads)
            else:
                part_rows += nn
        nt = threads_for(P.n_threads, part_rows, PART_GRAIN)
        if nt > 1:
            for q in prange(nl, num_threads=nt, schedule="dynamic"):
                if L.lev[q].end - L.lev[q].start < 2 * PART_GRAIN:
                    L.mid[q] = _partition(P, S, &L.lev[q].split, L.lev[q].start, L.lev[q].end)
        else:
            for q in range(nl):
                if L.lev[q].end - L.lev[q].start < 2 * PART_GRAIN:
                    L.mid[q] = _partition(P, S, &L.lev[q].split, L.lev[q].start, L.lev[q].end)
        # the children, and the pairs whose children need histograms
        np_ = 0
        work = 0
        for q in range(nl):
            cur = &L.lev[q]
            kid = count[0]
            count[0] += 2
            _record_split(nodes, bits, split_bin, cur, kid)
            kids[0].start = cur.start; kids[0].end = L.mid[q]
            kids[1].start = L.mid[q]; kids[1].end = cur.end
            pr = &L.pairs[np_]
            for c in range(2):
                hist[kid + c] = NULL
                seg[2 * (kid + c)] = kids[c].start
                seg[2 * (kid + c) + 1] = kids[c].end
                _set_node(P, &nodes[kid + c], &value[kid + c], kids[c].start, kids[c].end, cur.depth + 1,
                          L.kg[2 * q + c], L.kh[2 * q + c])
                pr.need[c] = _can_split(P, cur.depth + 1, kids[c].end - kids[c].start, L.kh[2 * q + c])
            if not (pr.need[0] or pr.need[1]):
                _hist_put(P, S, hist[cur.node])
                hist[cur.node] = NULL
                continue
            small = 0 if kids[0].end - kids[0].start <= kids[1].end - kids[1].start else 1
            big = 1 - small
            pr.q = q
            pr.small = small
            pr.start = kids[small].start
            pr.end = kids[small].end
            pr.nn_big = kids[big].end - kids[big].start
            pr.kid = kid
            pr.hs = _hist_get(P, S)
            if pr.hs == NULL:
                return -1
            pr.parent = hist[cur.node] if pr.need[big] else NULL
            pr.tot[0] = L.kh[2 * q + small]
            pr.tot[1] = L.kg[2 * q + small]
            pr.tot[2] = L.kh[2 * q + big]
            pr.tot[3] = L.kg[2 * q + big]
            pr.work = (kids[small].end - kids[small].start) * P.mf \
                + (<intp_t>pr.need[0] + <intp_t>pr.need[1] + <intp_t>pr.need[big]) * P.mf * P.max_bins
            pr.njob = 0
            work += pr.work
            np_ += 1
        nt = threads_for(P.n_threads, work, P.grain)
        if nt > 1 and _row_mode(P):
            # few features: the smaller children's histograms by row chunks, the level's rows
            # shared evenly between the threads (a region of their own), every pair's chunks
            # then summed by its tasks below
            hrows = 0
            for t in range(np_):
                hrows += L.pairs[t].end - L.pairs[t].start
            chunk = _chunk_rows(P, hrows, nt)
            nj = 0
            work = 0
            for t in range(np_):
                pr = &L.pairs[t]
                pr.job0 = nj
                nj = _add_jobs(P, S, pr.hs, pr.start, pr.end, chunk, nj)
                if nj < 0:
                    _put_jobs(P, S, 0, pr.job0)
                    return -1
                pr.njob = nj - pr.job0
                pr.work = (pr.njob - 1 + <intp_t>pr.need[0] + <intp_t>pr.need[1] + <intp_t>pr.need[1 - pr.small]) \
                    * P.mf * P.max_bins
                work += pr.work
            for t in prange(nj, num_threads=nt, schedule="dynamic"):
                _run_job(P, &S.jobs[t])
        # one region for all the histograms and scans of the level: (pair, block of features)
        # tasks, a pair cut into as many blocks as its share of the level's work needs threads
        # (a pair's rows are read once per block: two pairs of equal work on two threads are
        # two tasks, not four); row chunks built above: their sums, subtractions and scans
        nt = threads_for(P.n_threads, work, P.grain)
        nt_ = 0
        for t in range(np_):
            pr = &L.pairs[t]
            nb = 1
            if pr.work >= P.grain:
                nb = min((<intp_t>nt * pr.work + work - 1) // work, <intp_t>nt, P.mf)
            for b in range(nb):
                L.tasks[nt_].pair = t
                L.tasks[nt_].j0 = (b * P.mf) // nb
                L.tasks[nt_].j1 = ((b + 1) * P.mf) // nb
                nt_ += 1
        if nt > 1:
            for t in prange(nt_, num_threads=nt, schedule="dynamic"):
                _pair_task(P, S, L, &L.tasks[t], omp_get_thread_num())
        else:
            for t in range(nt_):
                _pair_task(P, S, L, &L.tasks[t], 0)
        if np_ > 0 and L.pairs[0].njob > 0:
            _put_jobs(P, S, 0, L.pairs[np_ - 1].job0 + L.pairs[np_ - 1].njob)
        # the picks: the next level
        nxt_n = 0
        for t in range(np_):
            pr = &L.pairs[t]
            q = pr.q
            small = pr.small
            big = 1 - small
            if pr.need[big]:
                hist[pr.kid + big] = pr.parent
            else:
                _hist_put(P, S, hist[L.lev[q].node])
            hist[L.lev[q].node] = NULL
            if pr.need[small]:
                hist[pr.kid + small] = pr.hs
            else:
                _hist_put(P, S, pr.hs)
            for c in range(2):
                if not pr.need[c]:
                    continue
                cur = &L.nxt[nxt_n]
                cur.node = pr.kid + c
                cur.start = L.lev[q].start if c == 0 else L.mid[q]
                cur.end = L.mid[q] if c == 0 else L.lev[q].end
                cur.depth = L.lev[q].depth + 1
                _pick(P, L.fb + t * 2 * P.mf + (0 if c == small else P.mf), L.kg[2 * q + c], L.kh[2 * q + c],
                      &cur.split)
                if cur.split.feature >= 0:
                    nxt_n += 1
                else:
                    _hist_put(P, S, hist[pr.kid + c])
                    hist[pr.kid + c] = NULL
        tmp_lev = L.lev
        L.lev = L.nxt
        L.nxt = tmp_lev
        nl = nxt_n
    return 0


cdef int _renumber(Node* nodes, double* value, uint64_t* bits, int32_t* split_bin, intp_t* seg,
                   intp_t* n_nodes) noexcept nogil:
    """Renumber the nodes reachable from node 0 (ids below n_nodes[0], some unused) in the order
    depth-first growth creates them (a split node's children get the next two ids when it is
    expanded, the first child expanded first): the ids of the depth-first kernel whatever the
    order the nodes were grown in; n_nodes[0] becomes their number.  Returns 0, or -1 (out of
    memory)."""
    cdef intp_t n = n_nodes[0]
    cdef intp_t* new_id = <intp_t*>malloc(n * sizeof(intp_t))
    cdef intp_t* stack = <intp_t*>malloc(n * sizeof(intp_t))
    cdef Node* n2 = <Node*>malloc(n * sizeof(Node))
    cdef double* v2 = <double*>malloc(n * sizeof(double))
    cdef uint64_t* b2 = <uint64_t*>malloc(n * NWORDS * sizeof(uint64_t))
    cdef int32_t* s2 = <int32_t*>malloc(n * sizeof(int32_t))
    cdef intp_t* g2 = <intp_t*>malloc(2 * n * sizeof(intp_t))
    cdef intp_t top, x, c, cnt = 1, y
    if new_id == NULL or stack == NULL or n2 == NULL or v2 == NULL or b2 == NULL or s2 == NULL or g2 == NULL:
        free(new_id); free(stack); free(n2); free(v2); free(b2); free(s2); free(g2)
        return -1
    new_id[0] = 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        x = stack[top]
        y = new_id[x]
        n2[y] = nodes[x]
        c = nodes[x].children_left
        if c >= 0:
            new_id[c] = cnt
            new_id[c + 1] = cnt + 1
            n2[y].children_left = <int32_t>cnt
            cnt += 2
            stack[top] = c + 1
            stack[top + 1] = c
            top += 2
        v2[y] = value[x]
        memcpy(b2 + y * NWORDS, bits + x * NWORDS, NWORDS * sizeof(uint64_t))
        s2[y] = split_bin[x]
        g2[2 * y] = seg[2 * x]
        g2[2 * y + 1] = seg[2 * x + 1]
    memcpy(nodes, n2, cnt * sizeof(Node))
    memcpy(value, v2, cnt * sizeof(double))
    memcpy(bits, b2, cnt * NWORDS * sizeof(uint64_t))
    memcpy(split_bin, s2, cnt * sizeof(int32_t))
    memcpy(seg, g2, 2 * cnt * sizeof(intp_t))
    n_nodes[0] = cnt
    free(new_id); free(stack); free(n2); free(v2); free(b2); free(s2); free(g2)
    return 0


cdef int _depth_first(const Params* P, Scratch* S, Frontier* front, bint heap, Node* nodes, double* value,
                      uint64_t* bits, int32_t* split_bin, intp_t* seg, HistBuf** hist, intp_t* count,
                      intp_t* n_leaves) noexcept nogil:
    """Split the leaves of the frontier until it is empty (or, best-first, the leaf limit is
    reached); children get the ids count[0], count[0] + 1, ...  Returns 0, or -1 (out of memory)."""
    cdef intp_t c, small, big, mid
    cdef Pending cur
    cdef Pending kids[2]
    cdef double KG[2]
    cdef double KH[2]
    cdef bint need[2]
    cdef double tot[2]
    cdef double tot_big[2]
    cdef HistBuf* hs
    while front.size > 0:
        if heap and n_leaves[0] >= P.max_leaf_nodes:
            break
        frontier_pop(front, &cur, heap)
        _child_sums(P, hist[cur.node], &cur.split, KG, KH)
        mid = _partition(P, S, &cur.split, cur.start, cur.end)
        _record_split(nodes, bits, split_bin, &cur, count[0])
        n_leaves[0] += 1
        kids[0].start = cur.start; kids[0].end = mid
        kids[1].start = mid; kids[1].end = cur.end
        for c in range(2):
            kids[c].node = count[0] + c
            kids[c].depth = cur.depth + 1
            hist[kids[c].node] = NULL
            seg[2 * kids[c].node] = kids[c].start
            seg[2 * kids[c].node + 1] = kids[c].end
            _set_node(P, &nodes[kids[c].node], &value[kids[c].node], kids[c].start, kids[c].end,
                      kids[c].depth, KG[c], KH[c])
            need[c] = _can_split(P, kids[c].depth, kids[c].end - kids[c].start, KH[c])
        count[0] += 2
        # histograms: the smaller child's from its rows, the larger one's by subtraction; the
        # scans of both in the same pass (feat_best[0:mf] the smaller's, [mf:2 mf] the larger's)
        kids[0].split.feature = -1
        kids[1].split.feature = -1
        if need[0] or need[1]:
            small = 0 if kids[0].end - kids[0].start <= kids[1].end - kids[1].start else 1
            big = 1 - small
            hs = _hist_get(P, S)
            if hs == NULL:
                return -1
            tot[0] = KH[small]
            tot[1] = KG[small]
            tot_big[0] = KH[big]
            tot_big[1] = KG[big]
            _node_pass(P, S, hs, kids[small].start, kids[small].end, hist[cur.node] if need[big] else NULL,
                       need[small], need[big], kids[big].end - kids[big].start, tot, tot_big)
            if need[big]:
                hist[kids[big].node] = hist[cur.node]
            else:
                _hist_put(P, S, hist[cur.node])
            if need[small]:
                hist[kids[small].node] = hs
            else:
                _hist_put(P, S, hs)
            for c in range(2):
                if need[c]:
                    _pick(P, S.feat_best + (0 if c == small else P.mf), KG[c], KH[c], &kids[c].split)
                    if kids[c].split.feature < 0:
                        _hist_put(P, S, hist[kids[c].node])
        else:
            _hist_put(P, S, hist[cur.node])
        for c in range(1, -1, -1):      # depth-first: the first child is expanded first
            if kids[c].split.feature >= 0:
                if frontier_push(front, &kids[c], heap) != 0:
                    return -1
    return 0


cdef int _subtree(const Params* P, Scratch* S, const Pending* root, Node* nodes, double* value, uint64_t* bits,
                  int32_t* split_bin, intp_t* seg, HistBuf** hist, intp_t first) noexcept nogil:
    """Grow the subtree under root depth-first on this thread (P: one thread; S: the thread's
    scratch), its nodes' ids from first on.  Returns 0, or -1 (out of memory)."""
    cdef Frontier front
    cdef intp_t count = first, n_leaves = 0
    cdef int rc
    frontier_init(&front)
    rc = frontier_push(&front, root, False)
    if rc == 0:
        rc = _depth_first(P, S, &front, False, nodes, value, bits, split_bin, seg, hist, &count, &n_leaves)
    frontier_free(&front)
    return rc


cdef int _subtrees(const Params* P, Scratch* S, Level* L, Node* nodes, double* value, uint64_t* bits,
                   int32_t* split_bin, intp_t* seg, HistBuf** hist, intp_t nl, intp_t* count) noexcept nogil:
    """The subtrees under the nodes L.lev[0:nl] (a level, max_depth set), each grown depth-first
    by one thread, the subtrees shared between the threads.  Each subtree's ids are a range of
    its own, as large as the subtree may grow (2 min(rows, 2^(levels left)) - 2 children; all of
    them fit in the tree's 2 L - 1 nodes), so the ids do not depend on which thread grows what;
    _renumber then gives the depth-first ones.  A thread's scratch gets the buffers a subtree's
    depth-first growth may hold at once (levels below + 3) beforehand.  Returns 0, or -1."""
    cdef Params P1 = P[0]
    cdef Scratch* TS
    cdef intp_t q, left = P.max_depth - L.lev[0].depth, k, t, nn, rows = 0, x, deep = 0
    cdef int nt, failed[1]
    cdef HistBuf* b
    failed[0] = 0
    P1.n_threads = 1
    for q in range(nl):
        L.mid[q] = count[0]             # (the first id of the subtree's range)
        nn = L.lev[q].end - L.lev[q].start
        rows += nn
        deep = max(deep, min(left, nn - 1))    # (a subtree of nn rows is at most nn - 1 levels deep)
        if left < 40 and (<intp_t>1 << left) < nn:
            nn = <intp_t>1 << left
        count[0] += 2 * nn - 2
        # the tasks largest first (fewer idle threads at the end): L.order by rows, descending
        k = q
        while k > 0 and L.lev[L.order[k - 1]].end - L.lev[L.order[k - 1]].start < L.lev[q].end - L.lev[q].start:
            L.order[k] = L.order[k - 1]
            k -= 1
        L.order[k] = q
    nt = threads_for(P.n_threads, rows * P.mf, P.grain)
    if nt > nl:
        nt = <int>nl
    TS = <Scratch*>calloc(nt, sizeof(Scratch))
    if TS == NULL:
        return -1
    for t in range(nt):
        TS[t].dummy = S.dummy
        TS[t].tmp = S.tmp
        TS[t].feat_best = <SplitRecord*>malloc(2 * P.mf * sizeof(SplitRecord))
        TS[t].catkey = <double*>malloc(P.mf * MAXCAT * sizeof(double))
        TS[t].catord = <intp_t*>malloc(P.mf * MAXCAT * sizeof(intp_t))
        if TS[t].feat_best == NULL or TS[t].catkey == NULL or TS[t].catord == NULL:
            failed[0] = 1
        for k in range(deep + 3):
            b = _hist_get(P, S)
            if b == NULL:
                failed[0] = 1
                break
            b.next_free = TS[t].free_list
            TS[t].free_list = b
    if not failed[0]:
        if nt > 1:
            for x in prange(nl, num_threads=nt, schedule="dynamic", chunksize=1):
                if _subtree(&P1, &TS[omp_get_thread_num()], &L.lev[L.order[x]], nodes, value, bits,
                            split_bin, seg, hist, L.mid[L.order[x]]) != 0:
                    flag_set(failed)
        else:
            for q in range(nl):
                if _subtree(&P1, &TS[0], &L.lev[q], nodes, value, bits, split_bin, seg, hist, L.mid[q]) != 0:
                    failed[0] = 1
                    break
    for t in range(nt):                 # the threads' buffers back to the tree's free list
        while TS[t].free_list != NULL:
            b = TS[t].free_list
            TS[t].free_list = b.next_free
            b.next_free = S.free_list
            S.free_list = b
        free(TS[t].feat_best); free(TS[t].catkey); free(TS[t].catord)
    free(TS)
    return -1 if failed[0] else 0


cdef int _grow(const Params* P, Scratch* S, Level* L, Node* nodes, double* value, uint64_t* bits,
               int32_t* split_bin, intp_t* seg, HistBuf** hist, intp_t m, intp_t* n_nodes) noexcept nogil:
    """000 "Tree Predictors" growth on the boosting objective: depth-first without a leaf
    limit, best-first (largest gain) with max_leaf_nodes.  A leaf of the frontier keeps its
    histogram until it is split (hist[node]).  Without a leaf limit the tree is the same in any
    order of growth: the first levels are grown one parallel region each (_grow_levels), the
    subtrees below them on a thread each (_subtrees), and the ids renumbered to the depth-first
    ones (_renumber).  Returns 0, or -1 (out of memory)."""
    cdef Frontier front
    cdef intp_t count = 1, n_leaves = 1
    cdef bint heap = P.max_leaf_nodes > 0
    cdef int rc = 0
    cdef Pending cur
    cdef double Gs, Hs
    cdef double tot[2]
    frontier_init(&front)
    _totals(P, 0, m, &Gs, &Hs)
    _set_node(P, &nodes[0], &value[0], 0, m, 0, Gs, Hs)
    seg[0] = 0
    seg[1] = m
    if _can_split(P, 0, m, Hs):
        hist[0] = _hist_get(P, S)
        if hist[0] == NULL:
            return -1
        tot[0] = Hs
        tot[1] = Gs
        _node_pass(P, S, hist[0], 0, m, NULL, True, False, 0, tot, NULL)
        _pick(P, S.feat_best, Gs, Hs, &cur.split)
        if cur.split.feature >= 0:
            cur.node = 0; cur.start = 0; cur.end = m; cur.depth = 0
            if not heap:
                L.lev[0] = cur
                rc = _grow_levels(P, S, L, nodes, value, bits, split_bin, seg, hist, 1, &count, &front)
            else:
                rc = frontier_push(&front, &cur, heap)
        else:
            _hist_put(P, S, hist[0])
    if rc == 0:
        rc = _depth_first(P, S, &front, heap, nodes, value, bits, split_bin, seg, hist, &count, &n_leaves)
    # the leaves left in the frontier (leaf limit reached) keep their histograms until here
    while rc == 0 and front.size > 0:
        frontier_pop(&front, &cur, heap)
        _hist_put(P, S, hist[cur.node])
    frontier_free(&front)
    if rc != 0:
        return rc
    n_nodes[0] = count
    if not heap:
        return _renumber(nodes, value, bits, split_bin, seg, n_nodes)
    return 0


def grow_tree(const uint8_t[:, ::1] Xb,        # IN (n, d) codes
              const double[:, ::1] edges,      # IN (d, max_bins) threshold of "code <= b"
              const uint8_t[::1] is_cat,       # IN (d,)
              const intp_t[::1] nan_code,      # IN (d,) code of a missing value; -1: none in training
              const double[::1] grad,          # IN (n,) w g_i, fixed point (quantize: exact sums)
              const double[::1] hess,          # IN (n,) w h_i (>= 0), fixed point
              intp_t[::1] rows,                # IN/OUT (m,) the rows of this tree (distinct, < n); reordered
              const intp_t[::1] feats,         # IN (mf,) candidate features, ascending, distinct, < d
              double[:, ::1] F, intp_t k_col,  # IN/OUT (n, K) scores: F[i, k_col] += the new tree's value
                                               # for every row i of ``rows`` (routing the others is the caller's)
              double reg_lambda, double gamma, double min_child_weight, double learning_rate,
              intp_t max_depth, intp_t max_leaf_nodes, int n_threads, intp_t grain,
              HistPool pool=None, intp_t level_bytes=LEVEL_BYTES,
              const uint8_t[:, ::1] Xbt=None,    # IN (d, n) Xb transposed (the partitions read it), or None
              bint assign=False,                 # F[i, k_col] = the value instead of +=
              intp_t row_chunk=ROW_CHUNK,        # least rows of a row-parallel chunk (0: none)
              bint fill_rows=False):             # rows[p] = p first (the tree's rows are all of them)
    # (assign: F may be the tree's own grad viewed (n, 1): the values are written after the
    # growth, which reads grad no more)
    """Grow one boosting tree; return (nodes, value, category_bits, split_bin): NODE_DTYPE
    records, the (n_nodes, 1) node values (learning_rate * w*), the (n_nodes, NWORDS)
    category sets and the (n_nodes,) code threshold of each numerical test ("code <= bin").
    The rows of the tree get their leaf's value added to F[:, k_col] from the leaves' row
    segments (the rows the tests sent there: the value routing them would give).
    ``pool``: a :class:`HistPool` the calls of one fit share (their histogram buffers are
    reused), or None.  ``level_bytes``: the most bytes of histograms level-wise growth keeps
    alive (a wider level goes on in subtrees, or depth-first); the tree does not depend on it
    (tests make it small to take those paths).  ``row_chunk``: the least rows of a chunk of a
    row-parallel histogram (few features, _row_mode; 0: feature blocks only); nor on it.
    ``fill_rows``: rows is first set to 0, 1, ..., m - 1 here, on the threads (a tree on all
    the rows: no serial copy of them by the caller).

    Every input is validated by smml.ensemble before this call."""
    cdef Params P
    cdef Scratch S
    cdef Level L
    cdef intp_t m = rows.shape[0], cap, n_nodes = 0, j, n_leaf_cap, n_scratch, nb
    cdef int rc
    cdef bint clean = False
    cdef HistBuf* b
    cdef Node* nodes = NULL
    cdef double* value = NULL
    cdef uint64_t* bits = NULL
    cdef int32_t* sbin = NULL
    cdef intp_t* seg = NULL
    cdef HistBuf** node_hist = NULL
    cdef intp_t node, p
    cdef double v
    cdef uint8_t[::1] ob
    cdef double[:, ::1] ov
    cdef uint64_t[:, ::1] obits
    cdef int32_t[::1] obin
    memset(&P, 0, sizeof(Params))
    memset(&S, 0, sizeof(Scratch))
    memset(&L, 0, sizeof(Level))
    P.t.K = 0
    P.t.min_samples_leaf = 1
    P.t.no_counts = 1            # one store less per value; a side without rows has G = H = 0: no gain
    P.t.reg_lambda = reg_lambda
    P.t.min_child_weight = min_child_weight
    P.t.w = &hess[0]
    P.t.wy = &grad[0]
    P.d = Xb.shape[1]
    P.max_bins = edges.shape[1]
    P.Xb = &Xb[0, 0]
    P.n = Xb.shape[0]
    P.Xbt = NULL
    if Xbt is not None:
        if Xbt.shape[0] != Xb.shape[1] or Xbt.shape[1] != Xb.shape[0]:
            raise ValueError("grow_tree: Xbt must be Xb transposed, shape (d, n)")
        P.Xbt = &Xbt[0, 0]
    P.edges = &edges[0, 0]
    P.is_cat = &is_cat[0]
    P.nan_code = &nan_code[0]
    P.feats = &feats[0]
    P.mf = feats.shape[0]
    P.gamma = gamma
    P.lr = learning_rate
    P.max_depth = max_depth
    P.max_leaf_nodes = max_leaf_nodes
    P.n_threads = max(1, n_threads)
    P.grain = max(1, grain)
    P.row_chunk = max(0, row_chunk)
    P.rows = &rows[0]
    if fill_rows:
        nb = (m + PART_GRAIN - 1) // PART_GRAIN
        with nogil:
            for j in prange(nb, num_threads=threads_for(P.n_threads, m, PART_GRAIN), schedule="static"):
                for p in range(j * PART_GRAIN, min(m, (j + 1) * PART_GRAIN)):
                    rows[p] = p
    # at most 2 L - 1 nodes for L leaves; L <= m, <= 2^max_depth, <= max_leaf_nodes
    n_leaf_cap = m
    if max_depth >= 0 and max_depth < 40 and (<intp_t>1 << max_depth) < n_leaf_cap:
        n_leaf_cap = <intp_t>1 << max_depth
    if max_leaf_nodes > 0 and max_leaf_nodes < n_leaf_cap:
        n_leaf_cap = max_leaf_nodes
    cap = 2 * n_leaf_cap + 1
    # level-wise growth (no leaf limit): at most L.cap nodes split per level, so that their
    # children's histograms (2 L.cap buffers) take at most LEVEL_BYTES
    L.cap = 0 if max_leaf_nodes > 0 else max(<intp_t>1, min(n_leaf_cap, level_bytes
                                                        // (2 * P.d * P.max_bins * STRIDE * <intp_t>sizeof(double))))
    n_scratch = max(P.mf, <intp_t>P.n_threads)      # categorical scratch: per feature, per thread
    try:
        nodes = <Node*>calloc(cap, sizeof(Node))
        value = <double*>calloc(cap, sizeof(double))
        bits = <uint64_t*>calloc(cap * NWORDS, sizeof(uint64_t))
        sbin = <int32_t*>calloc(cap, sizeof(int32_t))
        seg = <intp_t*>malloc(2 * cap * sizeof(intp_t))
        node_hist = <HistBuf**>calloc(cap, sizeof(HistBuf*))
        S.feat_best = <SplitRecord*>malloc(2 * P.mf * sizeof(SplitRecord))
        S.dummy = <double*>calloc(16, sizeof(double))
        S.catkey = <double*>malloc(n_scratch * MAXCAT * sizeof(double))
        S.catord = <intp_t*>malloc(n_scratch * MAXCAT * sizeof(intp_t))
        S.tmp = <intp_t*>malloc(m * sizeof(intp_t))
        if L.cap > 0:
            L.lev = <Pending*>malloc(2 * L.cap * sizeof(Pending))
            L.nxt = <Pending*>malloc(2 * L.cap * sizeof(Pending))
            L.kg = <double*>malloc(2 * L.cap * sizeof(double))
            L.kh = <double*>malloc(2 * L.cap * sizeof(double))
            L.mid = <intp_t*>malloc(2 * L.cap * sizeof(intp_t))
            L.order = <intp_t*>malloc(2 * L.cap * sizeof(intp_t))
            L.pairs = <Pair*>malloc(L.cap * sizeof(Pair))
            L.tasks = <Task*>malloc(L.cap * min(<intp_t>P.n_threads, P.mf) * sizeof(Task))
            L.fb = <SplitRecord*>malloc(L.cap * 2 * P.mf * sizeof(SplitRecord))
            if (L.lev == NULL or L.nxt == NULL or L.kg == NULL or L.kh == NULL or L.mid == NULL or L.order == NULL
                    or L.pairs == NULL or L.tasks == NULL or L.fb == NULL):
                raise MemoryError("smml.ensemble: could not allocate the boosting buffers")
        # row-parallel chunks: a level's pairs' first ones, and the threads' share
        S.max_jobs = max(L.cap, <intp_t>1) + P.n_threads * CHUNKS_PER_THREAD + 2
        S.jobs = <RowJob*>calloc(S.max_jobs, sizeof(RowJob))
        # buffers alive at once: the frontier's (<= leaves), two more, the chunks'
        S.cap_bufs = n_leaf_cap + 3 + P.n_threads * CHUNKS_PER_THREAD + 2
        if max_depth >= 0:              # _subtrees: each thread's depth-first buffers
            S.cap_bufs += P.n_threads * (min(max_depth, <intp_t>62) + 3)
        if pool is not None and (pool.d != P.d or pool.max_bins != P.max_bins):
            _free_bufs(pool.bufs, pool.n)
            pool.bufs = NULL
            pool.n = 0
        if pool is not None and pool.n > S.cap_bufs:
            S.cap_bufs = pool.n
        S.all_bufs = <HistBuf**>calloc(S.cap_bufs, sizeof(HistBuf*))
        if pool is not None and S.all_bufs != NULL:
            # the pool's buffers (clean) become this call's free list
            for j in range(pool.n - 1, -1, -1):
                b = pool.bufs[j]
                S.all_bufs[j] = b
                b.next_free = S.free_list
                S.free_list = b
            S.n_bufs = pool.n
            free(pool.bufs)
            pool.bufs = NULL
            pool.n = 0
            pool.d = P.d
            pool.max_bins = P.max_bins
        if (nodes == NULL or value == NULL or bits == NULL or sbin == NULL or seg == NULL or node_hist == NULL
                or S.feat_best == NULL
                or S.dummy == NULL or S.catkey == NULL or S.catord == NULL or S.tmp == NULL
                or S.all_bufs == NULL or S.jobs == NULL):
            raise MemoryError("smml.ensemble: could not allocate the boosting buffers")
        for j in range(cap):
            sbin[j] = -1
        with nogil:
            rc = _grow(&P, &S, &L, nodes, value, bits, sbin, seg, node_hist, m, &n_nodes)
            if rc == 0:
                # the leaves' segments are disjoint: each F entry is updated once, on any thread
                # (a multiclass fit passes its class's gradient row, done with, not F's column k:
                # _gradient_boosting._InProcess.tree)
                for node in prange(n_nodes, num_threads=threads_for(P.n_threads, m, PART_GRAIN),
                                   schedule="dynamic"):
                    if nodes[node].children_left < 0:
                        v = value[node]
                        if assign:
                            for p in range(seg[2 * node], seg[2 * node + 1]):
                                F[rows[p], k_col] = v
                        else:
                            for p in range(seg[2 * node], seg[2 * node + 1]):
                                F[rows[p], k_col] += v
        if rc != 0:
            raise MemoryError("smml.ensemble: out of memory while growing a boosting tree")
        # every buffer back on the free list (cleared): the pool keeps them for the next tree
        j = 0
        b = S.free_list
        while b != NULL:
            j += 1
            b = b.next_free
        clean = j == S.n_bufs
        # plain copies into new arrays (a memoryview of the Node struct would rebuild its
        # dtype from the buffer format on every call)
        out_nodes = np.empty(n_nodes, dtype=NODE_DTYPE)
        ob = out_nodes.view(np.uint8)
        memcpy(&ob[0], nodes, n_nodes * sizeof(Node))
        out_value = np.empty((n_nodes, 1))
        ov = out_value
        memcpy(&ov[0, 0], value, n_nodes * sizeof(double))
        out_bits = np.empty((n_nodes, NWORDS), dtype=np.uint64)
        obits = out_bits
        memcpy(&obits[0, 0], bits, n_nodes * NWORDS * sizeof(uint64_t))
        out_bin = np.empty(n_nodes, dtype=np.int32)
        obin = out_bin
        memcpy(&obin[0], sbin, n_nodes * sizeof(int32_t))
        return out_nodes, out_value, out_bits, out_bin
    finally:
        if clean and pool is not None:
            pool.bufs = S.all_bufs
            pool.n = S.n_bufs
        else:
            _free_bufs(S.all_bufs, S.n_bufs)
        free(nodes); free(value); free(bits); free(sbin); free(seg); free(node_hist)
        free(S.feat_best); free(S.dummy); free(S.catkey); free(S.catord); free(S.tmp); free(S.jobs)
        free(L.lev); free(L.nxt); free(L.kg); free(L.kh); free(L.mid); free(L.order); free(L.pairs); free(L.tasks)
        free(L.fb)


# ---------------------------------------------------------------------------
# score update: F[:, k] += value of the leaf each binned row reaches

def add_tree_codes(const uint8_t[:, ::1] Xb,       # IN (n, d) codes (training or validation rows)
                   const intp_t[::1] which,        # IN the rows of Xb to route (distinct, < n)
                   const uint8_t[::1] records,     # IN the tree's Node records, as bytes
                   const int32_t[::1] split_bin,   # IN (n_nodes,) code threshold of numerical tests
                   const intp_t[::1] nan_code,     # IN (d,) code of a missing value; -1: none in training
                   const uint64_t[:, ::1] category_bits,
                   const double[:, ::1] value,     # IN (n_nodes, 1)
                   double[:, ::1] F, intp_t k,     # IN/OUT (n, K): column k gets the tree's values
                   int n_threads):
    """Route rows by their codes ("code <= bin" is "x <= threshold": smml.tree.bin_edges)."""
    cdef intp_t n = which.shape[0], d = Xb.shape[1], i, q, node, b
    cdef const Node* nd = <const Node*>&records[0]
    cdef const uint64_t* bits = &category_bits[0, 0]
    cdef int nt = threads_for(n_threads, n, 8192)
    cdef bint left
    with nogil:
        for q in prange(n, num_threads=nt, schedule="static"):
            i = which[q]
            node = 0
            while nd[node].children_left >= 0:
                b = Xb[i, nd[node].feature]
                if nd[node].is_categorical:
                    left = (bits[node * NWORDS + (b >> 6)] >> (b & 63)) & 1
                elif b == nan_code[nd[node].feature]:
                    left = nd[node].missing_left
                else:
                    left = b <= split_bin[node]
                node = nd[node].children_left + (0 if left else 1)
            F[i, k] += value[node, 0]


# ---------------------------------------------------------------------------
# exact (fixed-point) gradients, and the kernel's split choice over given histograms
# (smml.dask's distributed boosting: the workers' histograms are summed, the splits chosen here)

NWORDS_ = NWORDS


cdef enum:
    ROUND_BLOCK = 16384     # rows per block of quantize (a thread's share: whole blocks)


def abs_max(const double[::1] v):
    """max_i |v_i| (0 for an empty v): order-independent, so a cluster's workers' maxima
    combine to the in-memory one.  (The fit takes its maxima from the gradient pass itself,
    ``gradients(..., maxima)``; this is for a caller that holds the values only.)"""
    cdef intp_t n = v.shape[0]
    cdef double m = 0.0
    if n > 0:
        with nogil:
            m = _abs_max_range(&v[0], 0, n)
    return m


cdef void _quantize_range(double* v, intp_t a, intp_t b, double scale) noexcept nogil:
    """v[a:b] rounded, 256 values at a time: tested, then rounded while still in L1 (one pass
    over memory)."""
    cdef intp_t i, c, e
    cdef double inv = 1.0 / scale, x
    cdef double big = 6755399441055744.0       # 1.5 * 2^52
    cdef double lim = 2251799813685248.0       # 2^51
    cdef bint small
    for c in range(a, b, 256):
        e = min(c + 256, b)
        small = True
        for i in range(c, e):
            small = small & (fabs(v[i] * scale) < lim)
        if small:
            for i in range(c, e):
                x = v[i] * scale
                v[i] = ((x + big) - big) * inv
        else:
            for i in range(c, e):
                v[i] = nearbyint(v[i] * scale) * inv


def quantize(double[::1] v, double scale, int n_threads=1):
    """v_i <- rint(v_i * scale) / scale in place (scale a power of two: both products exact).
    With scale <= 2^51 / (n max|v|), every sum of any subset of the n values, in any order
    and grouping, is exact (an integer times 1/scale below 2^53 / scale): histograms summed
    over any chunking, any thread count, or by sibling subtraction agree bit for bit.

    The rounding is (x + 1.5 2^52) - 1.5 2^52: for |x| < 2^51 (what the scale guarantees) the
    sum lies in [2^52, 2^53), whose spacing is 1, so it rounds x to the nearest integer, ties
    to even, exactly as ``nearbyint`` in the default rounding mode, without a libm call per
    value (a plain add and subtract, which vectorise). A block of values with a larger |x| (a
    scale the caller did not bound) takes ``nearbyint``: both round alike, so the result does
    not depend on the blocks, nor on the n_threads threads that share them."""
    cdef intp_t n = v.shape[0], nb = (n + ROUND_BLOCK - 1) // ROUND_BLOCK, b
    cdef int nt = threads_for(n_threads, n, 2 * ROUND_BLOCK)
    if n == 0:
        return
    with nogil:
        if nt > 1:
            for b in prange(nb, num_threads=nt, schedule="static"):
                _quantize_range(&v[0], b * ROUND_BLOCK, min(n, (b + 1) * ROUND_BLOCK), scale)
        else:
            for b in range(nb):
                _quantize_range(&v[0], b * ROUND_BLOCK, min(n, (b + 1) * ROUND_BLOCK), scale)


def best_splits(const double[:, :, :, ::1] hist,   # IN (M, d, max_bins, 2) histograms: (sum h, sum g)
                const intp_t[::1] which,           # IN (m,) the histogram (row of hist) of each node
                const double[:, ::1] tot,          # IN (m, 2) per node: (sum h, sum g)
                const intp_t[::1] nn,              # IN (m,) rows per node
                const double[:, ::1] edges,        # IN (d, max_bins) threshold of "code <= b"
                const uint8_t[::1] is_cat,         # IN (d,)
                const intp_t[::1] nan_code,        # IN (d,)
                const intp_t[::1] feats,           # IN (mf,) candidate features, ascending
                double reg_lambda, double gamma, double min_child_weight):
    """The best split of each node from its histogram: the growth kernel's own scans
    (``_scan_one``) and choice (``_pick``), so a histogram equal to the one ``grow_tree``
    builds gives the split ``grow_tree`` makes.  Node i's histogram is ``hist[which[i]]`` (the
    caller keeps a level's summed and subtracted histograms in one array, unscanned rows
    included, and copies none of them).  Returns (feature, bin, threshold,
    missing_left, improvement) arrays of m entries (feature -1: no split).  The lowest and
    highest bin scanned are the lowest and highest non-empty ones (the kernel's may extend
    over empty bins, which every scan skips)."""
    cdef Params P
    cdef Scratch S
    cdef HistBuf b
    cdef SplitRecord rec
    cdef intp_t M = hist.shape[0], m = which.shape[0], d = hist.shape[1], mb = hist.shape[2], node, j, f, q
    cdef const double* hb
    cdef double t2[2]
    if hist.shape[3] != STRIDE or edges.shape[0] != d or edges.shape[1] != mb or tot.shape[0] != m \
            or nn.shape[0] != m or is_cat.shape[0] != d or nan_code.shape[0] != d:
        raise ValueError("best_splits: shapes disagree")
    for node in range(m):
        if not 0 <= which[node] < M:
            raise ValueError("best_splits: a histogram index is out of range")
    out_f = np.full(m, -1, np.intp)
    out_b = np.full(m, -1, np.intp)
    out_t = np.zeros(m)
    out_m = np.zeros(m, np.uint8)
    out_i = np.zeros(m)
    cdef intp_t[::1] of = out_f, ob = out_b
    cdef double[::1] ot = out_t, oi = out_i
    cdef uint8_t[::1] om = out_m
    memset(&P, 0, sizeof(Params))
    memset(&S, 0, sizeof(Scratch))
    P.t.K = 0
    P.t.min_samples_leaf = 1
    P.t.no_counts = 1
    P.t.reg_lambda = reg_lambda
    P.t.min_child_weight = min_child_weight
    P.d = d
    P.max_bins = mb
    P.edges = &edges[0, 0]
    P.is_cat = &is_cat[0]
    P.nan_code = &nan_code[0]
    P.feats = &feats[0]
    P.mf = feats.shape[0]
    P.gamma = gamma
    try:
        S.feat_best = <SplitRecord*>malloc(P.mf * sizeof(SplitRecord))
        S.dummy = <double*>calloc(16, sizeof(double))
        S.catkey = <double*>malloc(P.mf * MAXCAT * sizeof(double))
        S.catord = <intp_t*>malloc(P.mf * MAXCAT * sizeof(intp_t))
        b.lo = <intp_t*>malloc(d * sizeof(intp_t))
        b.hi = <intp_t*>malloc(d * sizeof(intp_t))
        if S.feat_best == NULL or S.dummy == NULL or S.catkey == NULL or S.catord == NULL \
                or b.lo == NULL or b.hi == NULL:
            raise MemoryError("best_splits: out of memory")
        with nogil:
            for node in range(m):
                b.h = <double*>&hist[which[node], 0, 0, 0]
                for j in range(P.mf):
                    f = P.feats[j]
                    b.lo[f] = 0
                    b.hi[f] = -1
                    for q in range(mb):
                        hb = b.h + (f * mb + q) * STRIDE
                        if not (hb[0] == 0.0 and hb[1] == 0.0):
                            if b.hi[f] < 0:
                                b.lo[f] = q
                            b.hi[f] = q
                t2[0] = tot[node, 0]
                t2[1] = tot[node, 1]
                for j in range(P.mf):
                    _scan_one(&P, &S, &b, t2, j, nn[node], &S.feat_best[j], S.catkey, S.catord)
                _pick(&P, S.feat_best, t2[1], t2[0], &rec)
                if rec.feature >= 0:
                    of[node] = rec.feature
                    ob[node] = rec.bin
                    ot[node] = rec.threshold
                    om[node] = rec.missing_left
                    oi[node] = rec.improvement
    finally:
        free(S.feat_best); free(S.dummy); free(S.catkey); free(S.catord); free(b.lo); free(b.hi)
    return out_f, out_b, out_t, out_m, out_i


def level_histograms(const uint8_t[:, ::1] Xb,       # IN (n, d) codes
                     const int32_t[::1] slot,        # IN (n,) each row's histogram (-1: none)
                     const double[::1] grad,         # IN (n,) w g_i (quantized)
                     const double[::1] hess,         # IN (n,) w h_i (quantized)
                     double[:, :, :, ::1] out,       # OUT (m, d, nb, 2): (sum h, sum g), zero before
                     int64_t[::1] counts):           # OUT (m,) rows per histogram, zero before
    """The histograms of all the nodes of a tree level asked for (smml.dask's workers), in one
    pass over the rows in their order: each row asked for adds its (h, g) to its histogram's
    bins.  The rows are read as they lie in memory (codes, gradients, hessians streamed), the
    m histograms written at random: at the deep levels, where a node's rows are scattered over
    the block, this is 1.4-2.3x faster than gathering each node's rows in turn (one core,
    500,000 rows, 16-32 histograms).  With quantized gradients the sums are exact: any row
    order gives the same values.  The growth kernel's layout (two values a bin): the driver sums
    the workers' histograms and ``best_splits`` scans the sums as they are."""
    cdef intp_t n = Xb.shape[0], d = Xb.shape[1], nb = out.shape[2], i, s
    if out.shape[0] == 0:
        return
    with nogil:
        for i in range(n):
            s = slot[i]
            if s < 0:
                continue
            counts[s] += 1
            smml_hist_row_hg(&out[s, 0, 0, 0], nb * 2, &Xb[i, 0], d, hess[i], grad[i])


def route_level(const uint8_t[:, ::1] Xb,            # IN (n, d) codes
                int32_t[::1] node,                   # IN/OUT (n,) each row's node (the driver's ids)
                const intp_t[::1] feature,           # IN per node id: tested feature, -1: not split
                const int32_t[::1] split_bin,        # IN per node id: "code <= bin"
                const uint8_t[::1] missing_left,     # IN per node id
                const intp_t[::1] nan_code,          # IN (d,)
                const int32_t[::1] first_child,      # IN per node id: the id of its first child
                const int32_t[::1] child_slot,       # IN per node id: its histogram slot, -1: none
                int32_t[::1] slot,                   # OUT (n,) the slot of the row's new node, -1: none
                int64_t[::1] counts,                 # OUT per node id: its rows after the move, zero before
                const double[::1] grad=None,         # IN (n,) w g_i (quantized), with out
                const double[::1] hess=None,         # IN (n,) w h_i (quantized), with out
                double[:, :, :, ::1] out=None):      # OUT (m, d, nb, 2) the slots' histograms, zero before
    """Move each row of a split node to its child (the kernel's _goes_first rule: a missing
    value to the learned side, else "code <= bin"); rows of unsplit nodes stay (slot -1).
    Counts every node's rows in the same pass.  With ``out``, a row whose new node has a
    slot adds its (h, g) to that slot's histogram in the same pass too (what
    ``level_histograms`` would add after the move: one pass over the rows a level, not two)."""
    cdef intp_t n = Xb.shape[0], d = Xb.shape[1], i, s, f, c, left, cs, nb = 0, per = 0
    cdef double* o = NULL
    if out is not None and out.shape[0] > 0:
        if out.shape[1] != d or out.shape[3] != 2 or grad is None or hess is None \
                or grad.shape[0] != n or hess.shape[0] != n:
            raise ValueError("route_level: shapes disagree")
        nb = out.shape[2]
        per = d * nb * 2
        o = &out[0, 0, 0, 0]
    with nogil:
        for i in range(n):
            s = node[i]
            f = feature[s]
            if f < 0:
                slot[i] = -1
                counts[s] += 1
                continue
            c = Xb[i, f]
            if c == nan_code[f]:
                left = missing_left[s]
            else:
                left = c <= split_bin[s]
            s = first_child[s] + (0 if left else 1)
            node[i] = <int32_t>s
            cs = child_slot[s]
            slot[i] = <int32_t>cs
            counts[s] += 1
            if o != NULL and cs >= 0:
                smml_hist_row_hg(o + cs * per, nb * 2, &Xb[i, 0], d, hess[i], grad[i])


def fold_scores(double[:, ::1] F,          # IN/OUT (n, K) scores
                const double[:, ::1] D,    # (K, n) a round's tree values per class
                int n_threads):
    """F[i, k] += D[k, i]: a multiclass round's trees write their values into D's rows (one
    class a row, contiguous, where F's column k puts each row's entry on its own cache line),
    folded into F once a round (bit for bit the same F as adding each tree's values to F:
    D[k, i] is the one value its row got from class k's tree)."""
    cdef intp_t n = F.shape[0], K = F.shape[1], b, nb, i, k, r0, r1
    if D.shape[0] != K or D.shape[1] != n:
        raise ValueError("fold_scores: shapes disagree")
    nb = (n + LOSS_BLOCK - 1) // LOSS_BLOCK
    cdef int nt = threads_for(n_threads, n * K, EXP_GRAIN)
    with nogil:
        for b in prange(nb, num_threads=max(nt, 1), schedule="static"):
            r0 = b * LOSS_BLOCK
            r1 = min(r0 + LOSS_BLOCK, n)
            for k in range(K):
                for i in range(r0, r1):
                    F[i, k] += D[k, i]


def add_leaf_values(int32_t[::1] leaf, const double[::1] value, double[:, ::1] F, intp_t k):
    """F[i, k] += value[leaf[i]] for each row (leaf -1: unchanged)."""
    cdef intp_t n = leaf.shape[0], i
    with nogil:
        for i in range(n):
            if leaf[i] >= 0:
                F[i, k] += value[leaf[i]]
