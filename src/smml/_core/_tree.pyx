# Tree growth kernel: the exact split scan, in-place node partitioning, node
# storage, depth-first / best-first growth and the parallel growth of subtrees.
# The split costs are in _criterion.pxd, the histograms in _histogram.pxd, the growth
# frontier in _frontier.pxd, the node record in _tree.pxd, prediction in _tree_predict.pyx
# and binning in _binning.pyx.
#
# 000 "Tree Predictors": a tree starts as a single leaf; a leaf is repeatedly
# replaced by an internal node with a binary test and two new leaves.  A node's
# cost is W * psi(p) (W = weight of the examples routed to it), and a split is
# worth c(parent) - c(first child) - c(second child) (the decrease of the
# training objective sum_leaves psi * N_leaf).  With split_score = SCORE_002
# (smml.tree's split_score="002") a split is scored by 002's slide formulas
# instead: psi(I) - psi(I_L) - psi(I_R) (classification) and
# V(I) - (W_L^2 V(I_L) + W_R^2 V(I_R)) / W^2 (regression); exact splitter and
# numerical features only (_scan_exact_002), the default scans untouched.
#
# Everything below runs without the GIL.  The whole growth is one nogil call:
# Python validates inputs and allocates the read-only arrays, the kernel grows
# C buffers and Python gets them as numpy arrays at the end.  What a growth
# reads is in one `Params` (read-only, shared by every thread); what it writes
# is in its own `Scratch` and `NodeStore`, plus the segments [start, end) of the
# shared sample arrays that its nodes own.
#
# Tie rule (documented in smml.tree): among splits with the same cost, the one
# with the lowest feature index wins, and within a feature the lowest threshold
# (numerical) or the shortest prefix of the category ordering (categorical).
# Per-feature searches run in parallel and write one record per feature; the
# argmin over features is serial, so results do not depend on the thread count.
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memset, memcpy
from libc.math cimport INFINITY
from cython.parallel cimport prange, threadid

from smml._core._typedefs cimport intp_t, int32_t, uint8_t, uint16_t, uint32_t, uint64_t
from smml._core._openmp cimport threads_for
from smml._core._criterion cimport (MAXCAT, NWORDS, CRIT_ERROR, CRIT_GINI, CRIT_ENTROPY, CRIT_SQRT, CRIT_MSE,
                                    Targets, SplitRecord, ScanState, cost, cost_lr, init_record)
from smml._core._histogram cimport hist_build, gather_prefetch, scan_numeric, scan_categorical
from smml._core._frontier cimport (Pending, Frontier, frontier_init, frontier_push, frontier_pop,
                                   frontier_free)

cdef extern from "smml_tree.h" nogil:
    int SMML_ISA_AVX512         # smml_platform.h: the widest instruction set level
    intp_t smml_partition_pairs(int32_t* si, int32_t* rs, int32_t* ti, int32_t* tr, const uint8_t* gl,
                                intp_t n, int level)
    intp_t smml_split_sums(int kind, const int32_t* si, const int32_t* rs, intp_t p, intp_t pend,
                           const double* pair, double* st, intp_t* nl, intp_t nn, intp_t msl, double* ca,
                           double* cb, double* cw, uint8_t* cok, intp_t cap, int* stop)
    intp_t smml_first_min(const double* c, intp_t m, double* best)
    intp_t smml_split_sums_k(intp_t K, const int32_t* si, const int32_t* rs, intp_t p, intp_t pend,
                             const double* pair, double* left, double* Wp, intp_t* nl, intp_t nn, intp_t msl,
                             double* ca, double* cw, uint8_t* cok, intp_t cap, int* stop)
    void smml_split_costs_k(intp_t K, const double* ca, const double* WL, const uint8_t* ok, intp_t m,
                            intp_t cap, const double* tot, double WT, double* sums, double* out)
    void smml_split_costs(int kind, const double* a, const double* b, const double* WL, const uint8_t* ok,
                          intp_t m, double ta, double tb, double WT, double* out)

import numpy as np

cdef enum:
    MODE_EXACT = 0
    MODE_HIST = 1
    SCORE_WEIGHTED = 0       # split_score: W psi(I) - W_L psi(I_L) - W_R psi(I_R) (000)
    SCORE_002 = 1            # psi(I) - psi(I_L) - psi(I_R); V(I) - (W_L^2 V_L + W_R^2 V_R) / W^2 (002)
    SCAN_CHUNK = 256         # positions whose costs _scan_exact computes at once
    SCAN_KMAX = 8            # classes up to which it does (gini)
    RADIX_SLOTS = 3 * 2048   # ranked mode: up to 3 digits of up to 11 bits (N < 2**30)
    SMALL_SORT = 24          # ranked mode: nodes up to this size are put in order by insertion

CRITERIA = {"error": CRIT_ERROR, "gini": CRIT_GINI, "entropy": CRIT_ENTROPY,
            "sqrt": CRIT_SQRT, "squared_error": CRIT_MSE}
#: build_tree's split_score codes (smml.tree's split_score parameter)
SPLIT_SCORES = {"weighted": SCORE_WEIGHTED, "002": SCORE_002}

cdef Node _node_example
#: numpy dtype of the node record (derived from the struct in _tree.pxd)
NODE_DTYPE = np.asarray(<Node[:1]>&_node_example).dtype
#: sizeof(Node) in C
NODE_SIZE = sizeof(Node)
#: 64-bit words of a node's row of category bits
CATEGORY_WORDS = NWORDS


cdef struct Params:
    # read-only while a tree grows, shared by every thread
    Targets t                # weights, targets, criterion, min_samples_leaf (_criterion.pxd)
    int mode
    int split_score          # SCORE_WEIGHTED or SCORE_002 (exact mode, numerical features only)
    intp_t n, d
    intp_t V                 # values per node: K classes, or 1 (regression)
    intp_t max_bins, stride  # histogram geometry (_histogram.pxd)
    intp_t grain             # samples x features worth one thread (smml.tree._GRAIN)
    const double* yreg       # (n) regression target
    const double* pair       # (n, 2) two classes: w [y = 0], w [y = 1]; regression: w, w y; K
                             # classes: w, y (the scans' and the node totals' terms, one load per
                             # sample)
    const uint8_t* Xb        # (n, d) codes: hist mode, and categorical features
    const double* edges      # (d, max_bins) threshold of "code <= b"
    const uint8_t* is_cat    # (d)
    intp_t max_features
    intp_t max_depth
    intp_t min_samples_split
    double min_impurity_decrease
    double w_root
    intp_t sums_stride       # doubles of one feature's left / right sums (a cache line apart)
    intp_t cat_stride        # d * MAXCAT with categorical features, else 1
    # shared and written, but a growth writes only the segments [start, end) of its nodes
    const double* Xs         # (d, xs_stride) exact: each numerical feature's values in increasing
                             # order (read only), indexed by the ranks
    intp_t xs_stride
    const double* Xv         # (N, d) or NULL: instead of Xs, the value at rank r of feature f is
    const int32_t* Sg        # Xv[Sg[f, r], f], Sg (d, N) the rows of all N values by increasing
                             # value (a forest's one sort of all rows: no sorted copy of the values)
    intp_t d_xv
    int32_t* Si              # (d, n) exact: sorted sample indices per numerical feature, each
                             # node's segment in increasing order
    int32_t* Rs              # (d, n) exact: the ranks of Si's samples, in Si's order: the first
                             # position in Xs[f] of the sample's value (equal values, equal ranks)
    intp_t* samples          # (n)
    # ranked mode (a forest's trees, MODE_EXACT with Rrow): no per-tree sorted columns; a node's
    # samples of each candidate feature are put in order when it is scanned (_ranked_order), from
    # the ranks of all N rows (shared by the forest's trees)
    int ranked
    intp_t N                 # all rows
    const int32_t* Rrow      # (d, N) the rank of each row's value (Rs's ranks, indexed by row), or
    const uint16_t* Rrow16   # the same as uint16 when N <= 65536 (half the bytes the gathers touch)
    const int32_t* glob      # (n) each sample's row among the N


cdef struct Scratch:
    # one per thread: everything a growth writes besides its node store and its segments.
    # Allocated by _scratch_init only, freed by _scratch_free only.
    int n_threads            # threads this growth may use inside one node (1 in a deferred subtree)
    uint64_t rng             # max_features draws (splitmix64)
    int pending              # exact: the last partition's sorted arrays not done yet (_sorted_pending)
    intp_t pend_start        # its node's segment
    intp_t pend_end
    intp_t* features         # (d) candidate order (a Fisher-Yates prefix)
    SplitRecord* feat_best   # (d) best split of each candidate
    double* node_tot         # (K + 2) totals of the node being evaluated: class weights, W, S
    double node_q            # regression: sum w y^2 of the node being evaluated (read by the
                             # SCORE_002 scans too)
    intp_t* lo               # (d) lowest bin present in the node's histogram of each feature
    intp_t* hi               # (d) highest bin present
    intp_t* hlist            # (d) candidates scanned through a histogram
    double* hist             # (d, max_bins, stride), all zero between nodes
    double* sums             # (d, sums_stride) per-feature left / right sums
    double* catkey           # (cat_stride) category keys
    intp_t* catord           # (cat_stride) category orders
    uint8_t* goes_left       # (n)
    int32_t* tmp_i           # (n_threads, n + 16)
    int32_t* tmp_r           # (n_threads, n + 16) exact mode: ranks
    int32_t* ord_i           # (n_threads, n + 16) ranked mode: a feature's samples in order, its
    int32_t* ord_r           # (n_threads, n + 16) ranks
    uint64_t* rad            # (n_threads, 2, n + 16) ranked mode: the radix sort's keys
    intp_t* counts           # (n_threads, RADIX_SLOTS) ranked mode: the radix sort's counts


cdef struct NodeStore:
    # a growing tree: node records and their two side arrays, grown together
    Node* nodes
    double* value            # (cap, V) class weights (classification) or mean target
    uint64_t* bits           # (cap, NWORDS) category set of categorical tests
    intp_t count
    intp_t cap
    intp_t V


# ---------------------------------------------------------------------------
# per-thread scratch

cdef inline void* _alloc(size_t nbytes) noexcept nogil:
    # a cache line of slack after the block: no false sharing with the next allocation
    return malloc(nbytes + 64)


cdef int _scratch_init(Scratch* s, const Params* P, int n_threads) noexcept nogil:
    """Allocate every buffer of s (0, or -1 when out of memory: _scratch_free still works)."""
    cdef intp_t d = P.d, n = P.n, j
    memset(s, 0, sizeof(Scratch))
    s.n_threads = n_threads
    s.features = <intp_t*>_alloc(d * sizeof(intp_t))
    s.feat_best = <SplitRecord*>_alloc(d * sizeof(SplitRecord))
    s.node_tot = <double*>_alloc((P.t.K + 2) * sizeof(double))
    s.lo = <intp_t*>_alloc(d * sizeof(intp_t))
    s.hi = <intp_t*>_alloc(d * sizeof(intp_t))
    s.hlist = <intp_t*>_alloc(d * sizeof(intp_t))
    s.hist = <double*>calloc(d * P.max_bins * P.stride + 8, sizeof(double))
    s.sums = <double*>_alloc(d * P.sums_stride * sizeof(double))
    s.catkey = <double*>_alloc(P.cat_stride * sizeof(double))
    s.catord = <intp_t*>_alloc(P.cat_stride * sizeof(intp_t))
    s.goes_left = <uint8_t*>_alloc(n * sizeof(uint8_t))
    # + 16 per thread: smml_partition_pairs stores whole vectors
    s.tmp_i = <int32_t*>_alloc(n_threads * (n + 16) * sizeof(int32_t))
    s.tmp_r = <int32_t*>_alloc((n_threads * (n + 16) if P.mode == MODE_EXACT else 1) * sizeof(int32_t))
    if (s.features == NULL or s.feat_best == NULL or s.node_tot == NULL or s.lo == NULL or s.hi == NULL
            or s.hlist == NULL or s.hist == NULL or s.sums == NULL or s.catkey == NULL or s.catord == NULL
            or s.goes_left == NULL or s.tmp_i == NULL or s.tmp_r == NULL):
        return -1
    if P.ranked:
        s.ord_i = <int32_t*>_alloc(n_threads * (n + 16) * sizeof(int32_t))
        s.ord_r = <int32_t*>_alloc(n_threads * (n + 16) * sizeof(int32_t))
        s.counts = <intp_t*>_alloc(n_threads * RADIX_SLOTS * sizeof(intp_t))
        s.rad = <uint64_t*>_alloc(2 * n_threads * (n + 16) * sizeof(uint64_t))
        if s.ord_i == NULL or s.ord_r == NULL or s.counts == NULL or s.rad == NULL:
            return -1
    for j in range(d):
        s.features[j] = j
    return 0


cdef void _scratch_free(Scratch* s) noexcept nogil:
    free(s.features); free(s.feat_best); free(s.node_tot); free(s.lo); free(s.hi); free(s.hlist)
    free(s.hist); free(s.sums); free(s.catkey); free(s.catord); free(s.goes_left); free(s.tmp_i)
    free(s.tmp_r); free(s.ord_i); free(s.ord_r); free(s.counts)
    free(s.rad)
    memset(s, 0, sizeof(Scratch))


# ---------------------------------------------------------------------------
# node storage

cdef int _store_reserve(NodeStore* s, intp_t need) noexcept nogil:
    """Room for `need` nodes (the capacity doubles, from 64)."""
    cdef intp_t cap = s.cap if s.cap > 0 else 64
    cdef void* p
    if need <= s.cap:
        return 0
    while cap < need:
        cap *= 2
    p = realloc(s.nodes, cap * sizeof(Node))
    if p == NULL: return -1
    s.nodes = <Node*>p
    p = realloc(s.value, cap * s.V * sizeof(double))
    if p == NULL: return -1
    s.value = <double*>p
    p = realloc(s.bits, cap * NWORDS * sizeof(uint64_t))
    if p == NULL: return -1
    s.bits = <uint64_t*>p
    s.cap = cap
    return 0


cdef void _store_free(NodeStore* s) noexcept nogil:
    free(s.nodes); free(s.value); free(s.bits)
    s.nodes = NULL; s.value = NULL; s.bits = NULL
    s.count = 0
    s.cap = 0


cdef int _store_append(NodeStore* G, const NodeStore* L, intp_t g) noexcept nogil:
    """Graft subtree L onto G's leaf g: L's root replaces node g, L's other nodes are
    appended in their order (local j >= 1 becomes G.count - 1 + j, so a node's two
    children stay adjacent)."""
    cdef intp_t base = G.count - 1, j, V = G.V, m = L.count - 1
    cdef Node* nd
    if _store_reserve(G, G.count + m) != 0:
        return -1
    G.nodes[g] = L.nodes[0]
    memcpy(G.nodes + G.count, L.nodes + 1, m * sizeof(Node))
    memcpy(G.value + g * V, L.value, V * sizeof(double))
    memcpy(G.value + G.count * V, L.value + V, m * V * sizeof(double))
    memcpy(G.bits + g * NWORDS, L.bits, NWORDS * sizeof(uint64_t))
    memcpy(G.bits + G.count * NWORDS, L.bits + NWORDS, m * NWORDS * sizeof(uint64_t))
    if G.nodes[g].children_left >= 0:
        G.nodes[g].children_left += <int32_t>base
    for j in range(G.count, G.count + m):
        nd = G.nodes + j
        if nd.children_left >= 0:
            nd.children_left += <int32_t>base
    G.count += m
    return 0


cdef inline void _no_test(Node* nd, uint64_t* bits) noexcept nogil:
    """The test fields of a leaf (its statistics are left as they are); _grow sets them
    when the leaf is split."""
    leaf_test(nd)
    memset(bits, 0, NWORDS * sizeof(uint64_t))


def make_leaves(uint8_t[::1] records,              # IN/OUT Node records, as bytes
                uint64_t[:, ::1] category_bits,    # IN/OUT (n_nodes, NWORDS)
                const intp_t[::1] which):          # IN nodes to turn into leaves (< n_nodes)
    """Turn nodes into leaves (pruning): the same test fields as a fresh leaf."""
    cdef Node* nodes = <Node*>&records[0]
    cdef intp_t j
    for j in range(which.shape[0]):
        _no_test(nodes + which[j], &category_bits[which[j], 0])


cdef intp_t _new_node(const Params* P, Scratch* S, NodeStore* store, intp_t start, intp_t end,
                      intp_t depth) noexcept nogil:
    """Create a leaf for samples[start:end]; fill its record, value and category bits; leave
    its totals in S.node_tot (and S.node_q).  Returns the node id, -1 when out of memory."""
    cdef intp_t K = P.t.K, node, p, i, k, V = P.V
    cdef double W = 0.0, Ssum = 0.0, Q = 0.0, wi, yi, c0, c1, t0 = 0.0, t1 = 0.0
    cdef double* tot = S.node_tot
    cdef Node* nd
    if _store_reserve(store, store.count + 1) != 0:
        return -1
    node = store.count
    store.count += 1
    for k in range(K):
        tot[k] = 0.0
    if K == 2:          # the same sums without a store per sample: + 0.0 for the other class
        for p in range(start, end):
            i = P.samples[p]
            c0 = P.pair[2 * i]
            c1 = P.pair[2 * i + 1]
            W += c0 + c1
            t0 += c0
            t1 += c1
        tot[0] = t0
        tot[1] = t1
    else:
        for p in range(start, end):
            i = P.samples[p]
            wi = P.t.w[i]
            W += wi
            if K > 0:
                tot[P.t.ycls[i]] += wi
            else:
                yi = P.yreg[i]
                Ssum += P.t.wy[i]
                Q += P.t.wy[i] * yi
    tot[K] = W
    tot[K + 1] = Ssum
    nd = store.nodes + node
    _no_test(nd, store.bits + node * NWORDS)
    nd.weighted_n_node_samples = W
    nd.n_node_samples = end - start
    nd.depth = <int32_t>depth
    if K > 0:
        for k in range(K):
            store.value[node * V + k] = tot[k]
        nd.impurity = cost(tot, K, W, P.t.criterion) / W if W > 0.0 else 0.0
    else:
        store.value[node] = Ssum / W if W > 0.0 else 0.0
        nd.impurity = (Q - Ssum * Ssum / W) / W if W > 0.0 else 0.0
        if nd.impurity < 0.0:
            nd.impurity = 0.0
        S.node_q = Q        # node's sum w y^2, read by _evaluate right after
    return node


# ---------------------------------------------------------------------------
# split search for one feature

cdef inline uint64_t _rng_next(uint64_t* state) noexcept nogil:
    # splitmix64
    state[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef void _scan_exact(const Params* P, Scratch* S, intp_t f, const int32_t* si, const int32_t* rs,
                      intp_t start, intp_t end, SplitRecord* out) noexcept nogil:
    """Scan numerical feature f over positions [start, end) of its samples in increasing order
    (si) and their ranks (rs). Equal values have equal ranks: a threshold goes only between
    different ranks, and its value comes from the root's sorted values (Xs[f, rank])."""
    cdef intp_t K = P.t.K, p, i, nL, nn = end - start, k
    cdef double* left = S.sums + f * P.sums_stride
    cdef double* right = left + K
    cdef double WL = 0.0, WT = S.node_tot[K], SL = 0.0, ST = S.node_tot[K + 1], c, wi
    cdef intp_t msl = P.t.min_samples_leaf
    cdef intp_t best_p = -1
    cdef double best = INFINITY
    cdef double ca[SCAN_CHUNK]
    cdef double cb[SCAN_CHUNK]
    cdef double cw[SCAN_CHUNK]
    cdef double cc[SCAN_CHUNK]
    cdef uint8_t cok[SCAN_CHUNK]
    cdef double run[3]
    cdef double cak[SCAN_KMAX * SCAN_CHUNK]
    cdef double csum[2 * SCAN_CHUNK]
    cdef intp_t m, j, p0
    cdef int stop = 0, kind = 0 if K == 2 else 1      # smml_split_sums / _costs: two classes, regression
    init_record(out)
    if rs[start] >= rs[end - 1]:
        return   # constant feature in this node
    nL = 0
    if K == 0 or (K <= SCAN_KMAX and P.t.criterion == CRIT_GINI):
        # the sums position by position (in order, as the loop below), then the costs of a
        # chunk of positions at once (the same values as cost_lr / score_reg, as vectors), then
        # the first smallest among the candidates: the same split as the loop below
        run[0] = run[1] = run[2] = 0.0
        for k in range(K):
            left[k] = 0.0
        p = start
        while p < end - 1 and not stop:
            p0 = p
            if K <= 2:          # regression, two classes: the sums in registers
                m = smml_split_sums(kind, si, rs, p, end - 1, P.pair, run, &nL, nn, msl, ca, cb, cw, cok,
                                    SCAN_CHUNK, &stop)
                smml_split_costs(kind, ca, cb, cw, cok, m, ST if K == 0 else S.node_tot[0],
                                 S.node_tot[1] if K == 2 else 0.0, WT, cc)
            else:
                m = smml_split_sums_k(K, si, rs, p, end - 1, P.pair, left, &WL, &nL, nn, msl, cak, cw,
                                      cok, SCAN_CHUNK, &stop)
                smml_split_costs_k(K, cak, cw, cok, m, SCAN_CHUNK, S.node_tot, WT, csum, cc)
            p += m
            j = smml_first_min(cc, m, &best)
            if j >= 0:
                best_p = p0 + j
    else:
        for k in range(K):
            left[k] = 0.0
        for p in range(start, end - 1):
            i = si[p]
            wi = P.t.w[i]
            left[P.t.ycls[i]] += wi
            WL += wi
            nL += 1
            if rs[p + 1] <= rs[p]:
                continue
            if nL < msl:
                continue
            if nn - nL < msl:
                break
            c = cost_lr(left, S.node_tot, K, WL, WT - WL, P.t.criterion, right)
            if c < best:
                best = c
                best_p = p
    if best_p < 0:
        return
    out.feature = f
    out.n_left = best_p + 1 - start
    out.bin = best_p
    out.threshold = _rank_pair(rs, best_p)
    out.cost = best


cdef inline double _sq_sse(double S, double Q, double W) noexcept nogil:
    """W^2 V = W (Q - S^2 / W) for a side with weight W, sum w y S and sum w y^2 Q (>= 0)."""
    cdef double v
    if W <= 0.0:
        return 0.0
    v = Q - S * S / W
    return W * v if v > 0.0 else 0.0


cdef void _scan_exact_002(const Params* P, Scratch* S, intp_t f, const int32_t* si, const int32_t* rs,
                          intp_t start, intp_t end, SplitRecord* out) noexcept nogil:
    """_scan_exact for split_score="002" (002's slide formulas): the cost minimised is
    psi(I_L) + psi(I_R) (classification; psi = c / W) or W_L^2 V(I_L) + W_R^2 V(I_R)
    (regression), the same candidates and tie rule (first smallest) as _scan_exact.  A plain
    loop: the default scans are not touched by this mode."""
    cdef intp_t K = P.t.K, p, i, nL = 0, nn = end - start, k
    cdef double* left = S.sums + f * P.sums_stride
    cdef double* right = left + K
    cdef double WL = 0.0, WR, WT = S.node_tot[K], SL = 0.0, ST = S.node_tot[K + 1], QL = 0.0
    cdef double QT = S.node_q, c, wi, cl, cr
    cdef intp_t msl = P.t.min_samples_leaf
    cdef intp_t best_p = -1
    cdef double best = INFINITY
    init_record(out)
    if rs[start] >= rs[end - 1]:
        return   # constant feature in this node
    for k in range(K):
        left[k] = 0.0
    for p in range(start, end - 1):
        i = si[p]
        wi = P.t.w[i]
        if K > 0:
            left[P.t.ycls[i]] += wi
        else:
            SL += P.t.wy[i]
            QL += P.t.wy[i] * P.yreg[i]
        WL += wi
        nL += 1
        if rs[p + 1] <= rs[p]:
            continue
        if nL < msl:
            continue
        if nn - nL < msl:
            break
        WR = WT - WL
        if K > 0:
            for k in range(K):
                right[k] = S.node_tot[k] - left[k]
            cl = cost(left, K, WL, P.t.criterion)
            cr = cost(right, K, WR, P.t.criterion)
            c = (cl / WL if WL > 0.0 else 0.0) + (cr / WR if WR > 0.0 else 0.0)
        else:
            c = _sq_sse(SL, QL, WL) + _sq_sse(ST - SL, QT - QL, WR)
        if c < best:
            best = c
            best_p = p
    if best_p < 0:
        return
    out.feature = f
    out.n_left = best_p + 1 - start
    out.bin = best_p
    out.threshold = _rank_pair(rs, best_p)
    out.cost = best


cdef inline double _rank_pair(const int32_t* rs, intp_t p) noexcept nogil:
    """The ranks at sorted positions p and p + 1 (rs), packed into the bits of a double
    (rs[p] in the high word): a split's threshold until _resolve_thresholds. The value
    lookups miss the cache (a forest's go through Sg into Xv; in the ranked mode, _row_pair's
    rows into Xv): made for all nodes at the end of the growth, independent of each other,
    their misses overlap."""
    cdef uint64_t u = ((<uint64_t><uint32_t>rs[p]) << 32) | <uint64_t><uint32_t>rs[p + 1]
    cdef double x
    memcpy(&x, &u, sizeof(double))
    return x


cdef inline double _row_pair(const Params* P, const int32_t* si, intp_t p) noexcept nogil:
    """Ranked mode: the rows of the samples at positions p and p + 1, packed as _rank_pair."""
    cdef uint64_t u = ((<uint64_t><uint32_t>P.glob[si[p]]) << 32) | <uint64_t><uint32_t>P.glob[si[p + 1]]
    cdef double x
    memcpy(&x, &u, sizeof(double))
    return x


cdef void _resolve_thresholds(const Params* P, Node* nodes, intp_t m) noexcept nogil:
    """Exact mode: each numerical split's threshold from its two ranks (_rank_pair): the
    midpoint of the values at the two ranks (the lower one where the midpoint rounds onto
    the upper)."""
    cdef intp_t j, f, ra, rb
    cdef uint64_t u
    cdef double a, b, thr
    for j in range(m):
        if nodes[j].feature < 0 or nodes[j].is_categorical:
            continue
        f = nodes[j].feature
        memcpy(&u, &nodes[j].threshold, sizeof(double))
        ra = <intp_t>(u >> 32)
        rb = <intp_t>(u & <uint64_t>0xFFFFFFFF)
        if P.ranked:                    # two rows (_row_pair)
            a = P.Xv[ra * P.d_xv + f]
            b = P.Xv[rb * P.d_xv + f]
        elif P.Xv != NULL:
            a = P.Xv[<intp_t>P.Sg[f * P.xs_stride + ra] * P.d_xv + f]
            b = P.Xv[<intp_t>P.Sg[f * P.xs_stride + rb] * P.d_xv + f]
        else:
            a = P.Xs[f * P.xs_stride + ra]
            b = P.Xs[f * P.xs_stride + rb]
        thr = a / 2.0 + b / 2.0
        if thr >= b or thr < a:
            thr = a
        nodes[j].threshold = thr


cdef void _scan_hist(const Params* P, Scratch* S, intp_t f, intp_t start, intp_t end,
                     SplitRecord* out) noexcept nogil:
    """Numerical feature from its histogram (then cleared)."""
    cdef intp_t st_ = P.stride, lo = S.lo[f], hi = S.hi[f]
    cdef double* h = S.hist + f * P.max_bins * st_
    cdef double* left = S.sums + f * P.sums_stride
    cdef ScanState st
    init_record(out)
    scan_numeric(&P.t, S.node_tot, h, st_, lo, hi, end - start, left, left + P.t.K, &st)
    memset(h + lo * st_, 0, (hi - lo + 1) * st_ * sizeof(double))
    if st.best_idx < 0:
        return
    out.feature = f
    out.n_left = st.best_nl
    out.bin = st.best_idx
    out.threshold = P.edges[f * P.max_bins + st.best_idx]
    out.cost = st.best


cdef void _scan_cat(const Params* P, Scratch* S, intp_t f, intp_t start, intp_t end,
                    SplitRecord* out) noexcept nogil:
    """Categorical feature from its histogram (then cleared): best prefix of the ordering."""
    cdef intp_t st_ = P.stride, lo = S.lo[f], hi = S.hi[f], j, b
    cdef double* h = S.hist + f * P.max_bins * st_
    cdef double* left = S.sums + f * P.sums_stride
    cdef intp_t* order = S.catord + f * MAXCAT
    cdef ScanState st
    init_record(out)
    scan_categorical(&P.t, S.node_tot, h, st_, lo, hi, end - start, left, left + P.t.K,
                     S.catkey + f * MAXCAT, order, &st)
    memset(h + lo * st_, 0, (hi - lo + 1) * st_ * sizeof(double))
    if st.best_idx < 0:
        return
    out.feature = f
    out.n_left = st.best_nl
    out.is_cat = 1
    out.cost = st.best
    for j in range(st.best_idx + 1):
        b = order[j]
        out.cat_bits[b >> 6] |= (<uint64_t>1) << (b & 63)


cdef void _scan_feature(const Params* P, Scratch* S, intp_t f, intp_t start, intp_t end, int tid,
                        SplitRecord* out) noexcept nogil:
    cdef const int32_t* si
    cdef const int32_t* rs
    if P.is_cat[f]:
        _scan_cat(P, S, f, start, end, out)
        return
    if P.mode != MODE_EXACT:
        _scan_hist(P, S, f, start, end, out)
        return
    if P.ranked:                            # the node's samples put in order now (thread tid's)
        _ranked_order(P, S, f, start, end, tid)
        si = S.ord_i + tid * (P.n + 16)
        rs = S.ord_r + tid * (P.n + 16)
        end -= start
        start = 0
    else:                                   # the node's segment of the sorted columns
        si = P.Si + f * P.n
        rs = P.Rs + f * P.n
    if P.split_score == SCORE_002:          # smml.tree checks: 002's formulas
        _scan_exact_002(P, S, f, si, rs, start, end, out)
    else:
        _scan_exact(P, S, f, si, rs, start, end, out)
    if P.ranked and out.feature >= 0:
        # the rows on either side of the threshold (_resolve_thresholds reads their values)
        # and, in bin, the first child's last rank (_partition)
        out.threshold = _row_pair(P, si, out.bin)
        out.bin = rs[out.bin]


cdef inline int32_t _rank_of(const Params* P, intp_t f, intp_t g) noexcept nogil:
    """Ranked mode: the rank of row g's value of feature f."""
    if P.Rrow16 != NULL:
        return P.Rrow16[f * P.N + g]
    return P.Rrow[f * P.N + g]


cdef void _ranked_order(const Params* P, Scratch* S, intp_t f, intp_t start, intp_t end,
                        int tid) noexcept nogil:
    """Ranked mode: the node's samples by increasing rank of feature f, equal ranks by sample
    (the order of the sorted columns of the other mode: the same splits), into thread tid's
    ord_i and their ranks into ord_r: the keys (rank - the node's lowest rank) << 32 | sample
    sorted (insertion, or an LSD radix sort on the rank bits with the cheapest number of
    digits). Its samples are in increasing order (a stable partition of 0..n-1), so equal
    ranks stay by sample. (Walking all N rows in the order of f and keeping the node's, for
    large nodes, measured level with sorting them: not kept, bench/forest.md.)"""
    cdef intp_t n = P.n, nn = end - start, q, j, i, g, dg, c, t
    cdef intp_t stride = n + 16
    cdef int32_t* oi = S.ord_i + tid * stride
    cdef int32_t* orr = S.ord_r + tid * stride
    cdef uint64_t* ka = S.rad + 2 * tid * stride
    cdef uint64_t* kb = ka + stride
    cdef uint64_t* ks
    cdef uint64_t* kd
    cdef uint64_t* kx
    cdef intp_t* cnt = S.counts + tid * RADIX_SLOTS
    cdef const intp_t* smp = P.samples + start
    cdef uint64_t key, lo_mask = 0xFFFFFFFF
    cdef int32_t r, lo, hi
    cdef int passes, bits, best_passes, shift
    cdef intp_t cost_, best_cost, nb
    lo = _rank_of(P, f, P.glob[smp[0]])
    hi = lo
    for j in range(nn):
        i = smp[j]
        r = _rank_of(P, f, P.glob[i])
        orr[j] = r
        lo = r if r < lo else lo
        hi = r if r > hi else hi
    if hi == lo:                        # constant in the node: in order already
        for j in range(nn):
            oi[j] = <int32_t>smp[j]
        return
    for j in range(nn):
        ka[j] = ((<uint64_t>(orr[j] - lo)) << 32) | <uint64_t>smp[j]
    if nn <= SMALL_SORT:
        for j in range(1, nn):
            key = ka[j]
            q = j
            while q > 0 and ka[q - 1] > key:
                ka[q] = ka[q - 1]
                q -= 1
            ka[q] = key
        ks = ka
    else:
        # the number of digits with the least work: passes x (nn + 2^digit bits)
        bits = 0
        while ((<intp_t>1) << bits) <= <intp_t>(hi - lo):
            bits += 1
        best_passes = 0
        best_cost = 0
        for passes in range(1, 4):
            nb = (bits + passes - 1) // passes
            if nb > 11:
                continue
            cost_ = passes * (nn + ((<intp_t>1) << nb))
            if best_passes == 0 or cost_ < best_cost:
                best_passes = passes
                best_cost = cost_
        passes = best_passes
        nb = (bits + passes - 1) // passes
        c = (<intp_t>1) << nb
        memset(cnt, 0, passes * c * sizeof(intp_t))
        for j in range(nn):
            g = <intp_t>(ka[j] >> 32)
            for t in range(passes):
                cnt[t * c + ((g >> (t * nb)) & (c - 1))] += 1
        for t in range(passes):
            q = 0
            for j in range(c):
                dg = cnt[t * c + j]
                cnt[t * c + j] = q
                q += dg
        ks = ka
        kd = kb
        for t in range(passes):
            shift = <int>(32 + t * nb)
            for j in range(nn):
                key = ks[j]
                g = <intp_t>((key >> shift) & <uint64_t>(c - 1)) + t * c
                q = cnt[g]
                cnt[g] = q + 1
                kd[q] = key
            kx = ks
            ks = kd
            kd = kx
    for j in range(nn):
        key = ks[j]
        oi[j] = <int32_t>(key & lo_mask)
        orr[j] = <int32_t>(key >> 32) + lo


cdef void _evaluate(const Params* P, Scratch* S, intp_t start, intp_t end, intp_t depth,
                    SplitRecord* best) noexcept nogil:
    """Best split of a freshly created leaf (S.node_tot holds its totals)."""
    cdef intp_t K = P.t.K, nn = end - start, j, f, mf, d = P.d, t, tmp, nh, nb
    cdef int nt
    cdef double parent_cost, scale, W = S.node_tot[K], Ssum = S.node_tot[K + 1]
    cdef SplitRecord* r
    init_record(best)
    if P.max_depth >= 0 and depth >= P.max_depth:
        return
    if nn < P.min_samples_split or nn < 2 * P.t.min_samples_leaf:
        return
    if K > 0:
        parent_cost = cost(S.node_tot, K, W, P.t.criterion)
        scale = W
    else:
        parent_cost = -(Ssum * Ssum / W) if W > 0.0 else 0.0
        scale = S.node_q                # sum w y^2 of the node
        if scale - Ssum * Ssum / W <= 1e-12 * scale:
            return                      # constant target: nothing to decrease
    if K > 0 and parent_cost <= 1e-12 * scale:
        return                          # pure leaf
    _sorted_pending(P, S)               # exact: the parent's partition of the sorted arrays
    # candidate features (000/002: CART tries a random subset of directions)
    mf = P.max_features
    if mf < d:
        for j in range(mf):
            t = j + <intp_t>(_rng_next(&S.rng) % <uint64_t>(d - j))
            tmp = S.features[j]
            S.features[j] = S.features[t]
            S.features[t] = tmp
    else:
        mf = d
    # histograms of the candidates that need one (hist mode: all; exact: categorical)
    nh = 0
    for j in range(mf):
        f = S.features[j]
        if P.mode == MODE_HIST or P.is_cat[f]:
            S.hlist[nh] = f
            nh += 1
    nt = threads_for(S.n_threads, nn * mf, P.grain)
    if nh > 0:
        if nt > 1 and nh >= 2:
            nb = min(nt, nh)
            for j in prange(nb, num_threads=nb, schedule="static"):
                hist_build(&P.t, S.hist, P.max_bins, P.stride, S.lo, S.hi, S.hlist, (j * nh) // nb,
                           ((j + 1) * nh) // nb, P.Xb, d, P.samples, start, end,
                           gather_prefetch(P.n, d, end - start))
        else:
            hist_build(&P.t, S.hist, P.max_bins, P.stride, S.lo, S.hi, S.hlist, 0, nh,
                       P.Xb, d, P.samples, start, end, gather_prefetch(P.n, d, end - start))
    if nt > 1:
        for j in prange(mf, num_threads=nt, schedule="dynamic"):
            _scan_feature(P, S, S.features[j], start, end, threadid(), &S.feat_best[j])
    else:
        for j in range(mf):
            _scan_feature(P, S, S.features[j], start, end, 0, &S.feat_best[j])
    for j in range(mf):
        r = &S.feat_best[j]
        if r.feature < 0:
            continue
        if r.cost < best.cost or (r.cost == best.cost and r.feature < best.feature):
            best[0] = r[0]
    if best.feature < 0:
        return
    if P.split_score == SCORE_002:
        # 002's score: psi(I) - psi(I_L) - psi(I_R), or V(I) - (W_L^2 V_L + W_R^2 V_R) / W^2;
        # made when it exceeds the rounding tolerance (1e-12 psi units, 1e-12 the node's mean
        # w y^2) and is at least min_impurity_decrease (002's gamma, not scaled by any weight)
        if K > 0:
            best.improvement = parent_cost / W - best.cost
            scale = 1.0
        else:
            parent_cost = (S.node_q - Ssum * Ssum / W) / W
            if parent_cost < 0.0:
                parent_cost = 0.0
            best.improvement = parent_cost - best.cost / (W * W)
            scale = S.node_q / W
        if not (best.improvement > 1e-12 * scale) or best.improvement < P.min_impurity_decrease:
            best.feature = -1
        return
    best.improvement = parent_cost - best.cost
    if not (best.improvement > 1e-12 * scale) or best.improvement < P.min_impurity_decrease * P.w_root:
        best.feature = -1    # 000: no split decreases the training objective (or not enough)


# ---------------------------------------------------------------------------
# partitioning

cdef void _partition(const Params* P, Scratch* S, SplitRecord* s, intp_t start, intp_t end) noexcept nogil:
    """Route the node's samples: first child first, stable, in place."""
    cdef intp_t p, i, q, r, f = s.feature, n = P.n, b, j, d = P.d, g
    cdef int nt
    cdef const uint8_t* xb
    cdef int32_t* ti
    cdef int32_t* si
    cdef int32_t ra
    # 1. goes_left per sample
    if s.is_cat:
        xb = P.Xb + f
        for p in range(start, end):
            i = P.samples[p]
            b = xb[i * d]
            S.goes_left[i] = (s.cat_bits[b >> 6] >> (b & 63)) & 1
    elif P.mode == MODE_HIST:
        xb = P.Xb + f
        for p in range(start, end):
            i = P.samples[p]
            S.goes_left[i] = xb[i * d] <= s.bin
    elif P.ranked:
        # the first child: ranks up to its last one (_scan_feature leaves it in bin)
        ra = <int32_t>s.bin
        for p in range(start, end):
            i = P.samples[p]
            S.goes_left[i] = _rank_of(P, f, P.glob[i]) <= ra
    else:
        si = P.Si + f * n
        for p in range(start, end):
            S.goes_left[si[p]] = p <= s.bin
    # 2. samples (stable; no branch per sample: each is written to both sides' next slots
    #    and only its side advances, q <= p)
    ti = S.tmp_i
    q = start
    r = 0
    for p in range(start, end):
        i = P.samples[p]
        g = S.goes_left[i]
        P.samples[q] = i
        ti[r] = <int32_t>i
        q += g
        r += 1 - g
    for p in range(r):
        P.samples[q + p] = ti[p]
    # 3. exact: the sorted arrays, when a child is evaluated (_sorted_pending)
    if P.mode == MODE_EXACT and not P.ranked:
        S.pending = 1
        S.pend_start = start
        S.pend_end = end


cdef void _sorted_pending(const Params* P, Scratch* S) noexcept nogil:
    """The last partition's sorted arrays of every numerical feature (parallel over features),
    if not done yet: the first child that is evaluated (or grown later) asks for them, so a
    split whose two children are leaves leaves them as they are (nothing reads them again). A
    feature constant in the node stays as it is too: constant in every descendant, it is
    never scanned below it (each descendant's segment holds one rank only)."""
    cdef intp_t start = S.pend_start, end = S.pend_end, j, d = P.d
    cdef int nt
    if not S.pending:
        return
    S.pending = 0
    nt = threads_for(S.n_threads, (end - start) * d, P.grain)
    if nt > 1:
        for j in prange(d, num_threads=nt, schedule="static"):
            if not P.is_cat[j] and P.Rs[j * P.n + start] != P.Rs[j * P.n + end - 1]:
                _partition_sorted(P, S, j, start, end, threadid())
    else:
        for j in range(d):
            if not P.is_cat[j] and P.Rs[j * P.n + start] != P.Rs[j * P.n + end - 1]:
                _partition_sorted(P, S, j, start, end, 0)


def partition_pairs(int32_t[::1] si, int32_t[::1] rs, const uint8_t[::1] goes_left, int level):
    """Test access to smml_tree.h's smml_partition_pairs (every code path): si, rs rearranged in
    place, the pairs of samples with goes_left first, each side in order; returns how many.
    level: the widest path allowed (0 portable, 1 AVX2, 2 AVX-512; smml_isa() lowers it)."""
    cdef intp_t n = si.shape[0], q, p
    if rs.shape[0] != n or goes_left.shape[0] < 1:
        raise ValueError("partition_pairs: si and rs differ in length")
    for q in range(n):
        if not 0 <= si[q] < goes_left.shape[0]:
            raise ValueError("partition_pairs: a sample outside goes_left")
    gl = np.zeros(goes_left.shape[0] + 4, np.uint8)
    gl[:goes_left.shape[0]] = goes_left
    ti = np.empty(n + 16, np.int32)
    tr = np.empty(n + 16, np.int32)
    cdef uint8_t[::1] g = gl
    cdef int32_t[::1] a = ti
    cdef int32_t[::1] b = tr
    with nogil:
        q = smml_partition_pairs(&si[0] if n else NULL, &rs[0] if n else NULL, &a[0], &b[0], &g[0], n,
                                 level)
    return q


def first_min(const double[::1] c, double best):
    """Test access to smml_tree.h's smml_first_min (the exact scan's choice in a chunk of
    costs): (j, best), j the first position of the smallest value below best, -1 if none."""
    cdef intp_t j
    with nogil:
        j = smml_first_min(&c[0] if c.shape[0] else NULL, c.shape[0], &best)
    return j, best


cdef void _partition_sorted(const Params* P, Scratch* S, intp_t f, intp_t start, intp_t end,
                            int tid) noexcept nogil:
    """Feature f's sorted samples of the node and their ranks, each child's in order
    (smml_tree.h's smml_partition_pairs; goes_left has _alloc's slack for its gathers)."""
    cdef intp_t n = P.n, r = end - start
    cdef int32_t* si = P.Si + f * n + start
    cdef int32_t* rs = P.Rs + f * n + start
    cdef int32_t* ti = S.tmp_i + tid * (n + 16)
    cdef int32_t* tr = S.tmp_r + tid * (n + 16)
    smml_partition_pairs(si, rs, ti, tr, S.goes_left, r, SMML_ISA_AVX512)    # the widest smml_isa() allows


# ---------------------------------------------------------------------------
# growth

cdef struct Deferred:
    intp_t node              # global id of the leaf whose subtree is grown later
    intp_t start
    intp_t end
    intp_t depth


cdef struct DeferList:
    Deferred* items
    intp_t size
    intp_t cap


cdef int _grow(const Params* P, Scratch* S, NodeStore* store, intp_t start, intp_t end, intp_t depth0,
               int best_first, intp_t max_leaf_nodes, intp_t cutoff, DeferList* defer) noexcept nogil:
    """000 'Tree Predictors': start from one leaf, repeatedly replace a leaf by an
    internal node and two leaves.  Depth-first (a stack) or best-first (a heap on
    the decrease of the training objective).

    With cutoff > 0, a new leaf with fewer than ``cutoff`` examples is not expanded
    here: it goes to ``defer`` and its subtree is grown on its own later (possibly on
    another thread).  The rule depends on sizes only, never on the thread count."""
    cdef Frontier F
    cdef intp_t n_leaves = 1, node, mid, c
    cdef Pending cur
    cdef Pending kids[2]
    cdef SplitRecord sp
    cdef Node* nd
    cdef void* p
    frontier_init(&F)
    node = _new_node(P, S, store, start, end, depth0)
    if node < 0:
        frontier_free(&F)
        return -1
    _evaluate(P, S, start, end, depth0, &cur.split)
    if cur.split.feature >= 0:
        cur.node = node; cur.start = start; cur.end = end; cur.depth = depth0
        if frontier_push(&F, &cur, best_first) != 0:
            frontier_free(&F)
            return -1
    while F.size > 0:
        if max_leaf_nodes > 0 and n_leaves >= max_leaf_nodes:
            break
        frontier_pop(&F, &cur, best_first)
        sp = cur.split
        _partition(P, S, &sp, cur.start, cur.end)
        mid = cur.start + sp.n_left
        node = cur.node
        nd = store.nodes + node
        nd.feature = <int32_t>sp.feature
        nd.threshold = sp.threshold
        nd.is_categorical = sp.is_cat
        nd.missing_left = 0
        nd.improvement = sp.improvement
        memcpy(store.bits + node * NWORDS, sp.cat_bits, NWORDS * sizeof(uint64_t))
        n_leaves += 1
        # first child, then second child (node ids in creation order: the second child is
        # always stored right after the first)
        kids[0].start = cur.start; kids[0].end = mid
        kids[1].start = mid; kids[1].end = cur.end
        for c in range(2):
            kids[c].depth = cur.depth + 1
            kids[c].node = _new_node(P, S, store, kids[c].start, kids[c].end, kids[c].depth)
            if kids[c].node < 0:
                frontier_free(&F)
                return -1
            if cutoff > 0 and kids[c].end - kids[c].start < cutoff:
                _sorted_pending(P, S)          # grown later, from its sorted arrays
                kids[c].split.feature = -1
                if defer.size >= defer.cap:
                    defer.cap = 2 * defer.cap + 16
                    p = realloc(defer.items, defer.cap * sizeof(Deferred))
                    if p == NULL:
                        frontier_free(&F)
                        return -1
                    defer.items = <Deferred*>p
                defer.items[defer.size].node = kids[c].node
                defer.items[defer.size].start = kids[c].start
                defer.items[defer.size].end = kids[c].end
                defer.items[defer.size].depth = kids[c].depth
                defer.size += 1
            else:
                _evaluate(P, S, kids[c].start, kids[c].end, kids[c].depth, &kids[c].split)
        S.pending = 0                      # neither child evaluated: nothing reads them again
        store.nodes[node].children_left = <int32_t>kids[0].node
        for c in range(1, -1, -1):     # depth-first: second child below the first (expanded first)
            if kids[c].split.feature >= 0:
                if frontier_push(&F, &kids[c], best_first) != 0:
                    frontier_free(&F)
                    return -1
    frontier_free(&F)
    return 0


cdef struct PaddedScratch:
    Scratch s
    char pad[64]             # threads write their own rng: no false sharing between them


cdef struct PaddedStore:
    NodeStore s
    int failed
    char pad[64]


cdef int _grow_deferred(const Params* P, NodeStore* G, DeferList* defer, int best_first, uint64_t seed,
                        int n_threads) noexcept nogil:
    """Grow every deferred subtree into its own node store (in parallel over subtrees,
    dynamic schedule, each thread with its own scratch), then graft them onto G in list
    order: the result does not depend on the number of threads.  max_features draws come
    from a generator seeded by (seed, subtree index)."""
    cdef intp_t nd = defer.size, s
    cdef int nt, t, tid, rc = 0
    cdef PaddedScratch* scr = NULL
    cdef PaddedStore* stores = NULL
    cdef Scratch* S
    # the deferred subtrees hold at most n x d work in all: a thread for every 4 grains of it
    nt = threads_for(n_threads if n_threads < nd else <int>nd, P.n * P.d, 4 * P.grain)
    scr = <PaddedScratch*>calloc(nt, sizeof(PaddedScratch))
    stores = <PaddedStore*>calloc(nd, sizeof(PaddedStore))
    if scr == NULL or stores == NULL:
        rc = -1
    else:
        for t in range(nt):
            if _scratch_init(&scr[t].s, P, 1) != 0:
                rc = -1
        for s in range(nd):
            stores[s].s.V = P.V
    if rc == 0:
        for s in prange(nd, num_threads=nt, schedule="dynamic"):
            tid = threadid()
            S = &scr[tid].s
            _scratch_reseed(S, P.d, seed ^ (<uint64_t>(s + 1) * <uint64_t>0x9E3779B97F4A7C15))
            if _grow(P, S, &stores[s].s, defer.items[s].start, defer.items[s].end,
                     defer.items[s].depth, best_first, 0, 0, NULL) != 0:
                stores[s].failed = 1
        for s in range(nd):
            if stores[s].failed or rc != 0:
                rc = -1
            elif _store_append(G, &stores[s].s, defer.items[s].node) != 0:
                rc = -1
    if scr != NULL:
        for t in range(nt):
            _scratch_free(&scr[t].s)
    if stores != NULL:
        for s in range(nd):
            _store_free(&stores[s].s)
    free(scr)
    free(stores)
    return rc


cdef inline void _scratch_reseed(Scratch* S, intp_t d, uint64_t rng) noexcept nogil:
    """Start a new growth: candidate order 0..d-1 and a fresh generator."""
    cdef intp_t j
    for j in range(d):
        S.features[j] = j
    S.rng = rng
    S.pending = 0


# ---------------------------------------------------------------------------
# Python entry point

def sorted_subset(const int32_t[:, ::1] Si,      # IN (d, N) each column's rows by increasing value
                  const int32_t[:, ::1] Rs,      # IN (d, N) their ranks (first_positions)
                  const int32_t[::1] local):     # IN (N,) a row's index in the subset, or -1
    """A subset of the rows sorted, from the sort of all of them: each column's rows and
    ranks restricted to the subset's rows (renumbered by ``local``), in the same relative
    order. Returns (order, ranks), both (d, n_sub) int32, n_sub the rows with ``local >= 0``:
    ``build_tree``'s Si and Rs, with the values of all the rows as its Xs."""
    cdef intp_t d = Si.shape[0], N = Si.shape[1], f, p, q, j, n_sub = 0
    if Rs.shape[0] != d or Rs.shape[1] != N or local.shape[0] != N:
        raise ValueError("sorted_subset: Si, Rs and local do not match")
    for p in range(N):
        n_sub += local[p] >= 0
    for p in range(N):
        if local[p] >= n_sub:
            raise ValueError("sorted_subset: a subset index past the subset's rows")
    # one slot of slack: a row left out is written at the next free slot (no branch per row)
    # and overwritten by the next kept row; after a column's last kept row that slot is the
    # next column's first (written over when that column starts), after the last column the slack
    rows = np.empty(d * n_sub + 1, np.int32)
    ranks = np.empty(d * n_sub + 1, np.int32)
    cdef int32_t[::1] r = rows
    cdef int32_t[::1] k = ranks
    with nogil:
        for f in range(d):
            q = f * n_sub
            for p in range(N):
                j = local[Si[f, p]]
                r[q] = <int32_t>j
                k[q] = Rs[f, p]
                q += j >= 0
    return rows[:d * n_sub].reshape(d, n_sub), ranks[:d * n_sub].reshape(d, n_sub)


def first_positions(const double[:, ::1] Xs, int n_threads=1):
    """Each column's ranks: at position p of the increasing values Xs[f], the first position
    of that value (equal values, equal ranks). (d, N) int32."""
    cdef intp_t d = Xs.shape[0], N = Xs.shape[1]
    out = np.empty((d, N), np.int32)
    cdef int32_t[:, ::1] o = out
    if d and N:
        with nogil:
            _first_positions(&Xs[0, 0], N, d, NULL, &o[0, 0], threads_for(n_threads, N * d, 1 << 16))
    return out


cdef void _first_positions(const double* Xs, intp_t n, intp_t d, const uint8_t* skip, int32_t* rs,
                           int nt) noexcept nogil:
    """rs[f, p]: the first position in Xs[f] (increasing values, n per column) of the value at
    position p; columns with skip[f] are left alone."""
    cdef intp_t f, p, first
    cdef const double* xs
    for f in prange(d, num_threads=nt, schedule="static"):
        if skip != NULL and skip[f]:
            continue
        xs = Xs + f * n
        first = 0
        for p in range(n):
            if p > 0 and xs[p] > xs[p - 1]:
                first = p
            rs[f * n + p] = <int32_t>first


def build_tree(int mode, int criterion, intp_t n_classes,
               const double[:, ::1] Xs,        # IN exact: sorted values per feature (d, n), or with Rs
                                               # (d, N): the values its ranks index
               int32_t[:, ::1] Si,             # IN/OUT exact: sorted sample indices per feature (d, n); scratch
               int32_t[:, ::1] Rs,             # IN/OUT exact: their ranks (d, n) (first_positions), or
                                               # (0, 0): computed here from Xs; scratch
               const uint8_t[:, ::1] Xb,       # IN codes (n, d): hist mode, and categorical features
               const double[:, ::1] edges,     # IN (d, hist_bins): threshold of "code <= b"
               const uint8_t[::1] is_cat,      # IN (d,)
               const intp_t[::1] ycls,         # IN (n,) class index (classification)
               const double[::1] yreg,         # IN (n,) target (regression)
               const double[::1] sample_weight,  # IN (n,)
               intp_t max_depth, intp_t min_samples_split, intp_t min_samples_leaf,
               double min_impurity_decrease, intp_t max_leaf_nodes, intp_t max_features,
               bint best_first, unsigned long long seed, int n_threads, intp_t grain,
               intp_t decompose_min, int split_score=SCORE_WEIGHTED,
               const double[:, ::1] Xv=None,   # IN with Sg, exact with Rs given: the values of the
               const int32_t[:, ::1] Sg=None,  # N rows (N, d) and each column's rows by increasing
                                               # value (d, N), in place of Xs (see Params.Xv)
               Rrow=None,                      # IN with Xv, no Sg: ranked mode (Params.ranked), the
               const int32_t[::1] glob=None):  # rank of each row's value (d, N) and each sample's
                                               # row (n,); Si and Rs are then not read. Rrow:
                                               # int32, or uint16 when N <= 65536
    """Grow one tree; return (nodes, value, category_bits): the NODE_DTYPE records, the
    (n_nodes, V) values and the (n_nodes, CATEGORY_WORDS) category bits.

    Every input is validated by smml.tree before this call (shapes, codes below
    hist_bins, class indices below n_classes, non-negative weights, n < 2**30).
    ``grain``: samples x features worth a thread of its own (threads_for).
    ``split_score``: 0 (000's weighted decrease) or 1 (002's slide formulas; exact mode and
    numerical features only, which smml.tree checks: the improvement is then the score).
    With ``Rrow`` and ``glob`` (ranked mode) the tree keeps no sorted columns of its own: each
    node puts its samples of each candidate feature in order when it scans it, from the ranks
    of all N rows; the same tree as with the sorted columns of its samples (stable: equal
    values by row; ``glob`` increasing). Thresholds are read from Xv's rows.
    """
    cdef Params P
    cdef Scratch S0
    cdef NodeStore G
    cdef DeferList defer
    cdef intp_t n = sample_weight.shape[0], d = is_cat.shape[0], K = n_classes, j, m
    cdef const uint16_t[:, ::1] r16
    cdef const int32_t[:, ::1] r32
    cdef int rc
    cdef intp_t dummy_i = 0, cutoff
    cdef double* wy = NULL
    cdef int32_t* rk = NULL                 # Rs, when computed here
    cdef double* pair = NULL
    cdef bint own_ranks
    memset(&P, 0, sizeof(Params))
    memset(&S0, 0, sizeof(Scratch))
    memset(&G, 0, sizeof(NodeStore))
    memset(&defer, 0, sizeof(DeferList))
    n_threads = max(1, n_threads)
    P.t.K = K
    P.t.criterion = criterion
    P.t.min_samples_leaf = max(1, min_samples_leaf)
    P.t.w = &sample_weight[0]
    P.t.ycls = &ycls[0] if K > 0 else &dummy_i
    P.mode = mode
    if split_score != SCORE_WEIGHTED:
        if mode != MODE_EXACT:
            raise ValueError("build_tree: split_score 002 needs the exact splitter")
        for j in range(d):
            if is_cat[j]:
                raise ValueError("build_tree: split_score 002 does not score categorical features")
    P.split_score = SCORE_002 if split_score != SCORE_WEIGHTED else SCORE_WEIGHTED
    P.n = n
    P.d = d
    P.V = K if K > 0 else 1
    P.max_bins = edges.shape[1]
    P.stride = 2 + P.V
    P.grain = max(1, grain)
    P.yreg = &yreg[0]
    P.Xb = &Xb[0, 0]
    P.edges = &edges[0, 0]
    P.is_cat = &is_cat[0]
    P.max_features = max_features if 0 < max_features <= d else d
    P.max_depth = max_depth
    P.min_samples_split = max(2, min_samples_split)
    P.min_impurity_decrease = min_impurity_decrease
    P.w_root = 0.0
    for j in range(n):
        P.w_root += sample_weight[j]
    # per-feature running sums, a cache line apart: features scanned on different threads
    # must not share a line (false sharing)
    P.sums_stride = ((2 * K + 2 + 7) // 8) * 8 + 8
    P.cat_stride = 1                      # the category-ordering buffers serve categorical features only
    for j in range(d):
        if is_cat[j]:
            P.cat_stride = d * MAXCAT
    P.Xs = &Xs[0, 0]
    P.xs_stride = Xs.shape[1]
    if (Rrow is None) != (glob is None):
        raise ValueError("build_tree: give both Rrow and glob, or neither")
    if Rrow is None and (Xv is None) != (Sg is None):
        raise ValueError("build_tree: give both Xv and Sg, or neither")
    if Rrow is not None:
        if mode != MODE_EXACT or Xv is None or Sg is not None or Xv.shape[1] != d or Xv.shape[0] == 0 \
                or Rrow.ndim != 2 or Rrow.shape[0] != d or Rrow.shape[1] != Xv.shape[0] or glob.shape[0] != n:
            raise ValueError("build_tree: Xv / Rrow / glob do not match (exact mode, no Sg, (N, d) / (d, N) / (n,))")
        if isinstance(Rrow, np.ndarray) and Rrow.dtype == np.uint16 and Xv.shape[0] <= 65536:
            r16 = Rrow
            P.Rrow16 = &r16[0, 0]
        else:
            r32 = Rrow
            P.Rrow = &r32[0, 0]
        for j in range(n):
            if not 0 <= glob[j] < Xv.shape[0]:
                raise ValueError("build_tree: a sample's row outside the N rows")
        P.ranked = 1
        P.N = Xv.shape[0]
        P.Xv = &Xv[0, 0]
        P.d_xv = d
        P.glob = &glob[0]
    elif Xv is not None:
        if mode != MODE_EXACT or Rs.shape[0] == 0 or Sg.shape[0] != d or Xv.shape[1] != d \
                or Sg.shape[1] != Xv.shape[0] or Xv.shape[0] == 0:
            raise ValueError("build_tree: Xv / Sg do not match (exact mode with ranks, (N, d) / (d, N))")
        P.Xv = &Xv[0, 0]
        P.Sg = &Sg[0, 0]
        P.d_xv = d
        P.xs_stride = Sg.shape[1]
    P.Si = &Si[0, 0]
    G.V = P.V
    try:
        P.samples = <intp_t*>malloc(n * sizeof(intp_t))
        wy = <double*>malloc((n if K == 0 else 1) * sizeof(double))
        own_ranks = mode == MODE_EXACT and Rs.shape[0] == 0 and not P.ranked
        rk = <int32_t*>malloc((d * n if own_ranks else 1) * sizeof(int32_t))
        if (P.samples == NULL or wy == NULL or rk == NULL
                or _scratch_init(&S0, &P, n_threads) != 0):
            raise MemoryError("smml.tree: could not allocate the growth buffers")
        if own_ranks:
            P.Rs = rk
            with nogil:
                _first_positions(P.Xs, n, d, P.is_cat, rk, threads_for(n_threads, n * d, P.grain))
        elif mode == MODE_EXACT and not P.ranked:
            P.Rs = &Rs[0, 0]
        if K == 0:
            for j in range(n):
                wy[j] = sample_weight[j] * yreg[j]
        P.t.wy = wy
        pair = <double*>malloc(2 * n * sizeof(double))
        if pair == NULL:
            raise MemoryError("smml.tree: could not allocate the growth buffers")
        for j in range(n):
            if K == 0:
                pair[2 * j] = sample_weight[j]
                pair[2 * j + 1] = wy[j]
            elif K == 2:
                pair[2 * j] = sample_weight[j] if ycls[j] == 0 else 0.0
                pair[2 * j + 1] = sample_weight[j] if ycls[j] == 1 else 0.0
            else:
                pair[2 * j] = sample_weight[j]
                pair[2 * j + 1] = <double>ycls[j]
        P.pair = pair
        S0.rng = seed
        for j in range(n):
            P.samples[j] = j
        # Subtrees below `cutoff` examples are grown independently, on several threads
        # when there are several (only without max_leaf_nodes, whose count is global; only
        # from decompose_min samples on, so small problems keep the plain growth order).
        cutoff = 0
        if max_leaf_nodes <= 0 and n >= decompose_min:
            cutoff = max(2, n // 16)
        with nogil:
            rc = _grow(&P, &S0, &G, 0, n, 0, best_first, max_leaf_nodes, cutoff, &defer)
            _scratch_free(&S0)
            if rc == 0 and defer.size > 0:
                rc = _grow_deferred(&P, &G, &defer, best_first, seed, n_threads)
        if rc != 0:
            raise MemoryError("smml.tree: out of memory while growing the tree")
        m = G.count
        if mode == MODE_EXACT:
            with nogil:
                _resolve_thresholds(&P, G.nodes, m)
        nodes = np.asarray(<Node[:m]>G.nodes).copy()
        value = np.asarray(<double[:m * P.V]>G.value).copy().reshape(m, P.V)
        bits = np.asarray(<uint64_t[:m * NWORDS]>G.bits).copy().reshape(m, NWORDS)
        return nodes, value, bits
    finally:
        _scratch_free(&S0)
        _store_free(&G)
        free(P.samples)
        free(wy)
        free(rk)
        free(pair)
        free(defer.items)
