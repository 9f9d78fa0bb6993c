# Prediction: route rows through a tree's node records (_tree.pxd), the ones the
# growth kernel wrote and smml.tree.Tree holds. (Boosting without categorical tests also
# keeps the records' test fields as flat arrays for sum_trees_levels, derived at fit; forests
# and bagging of smml trees sum their trees' votes or values with forest_sum.)
#
# 000 "Tree Predictors": start at the root; at an internal node go to the child
# its test picks, until a leaf.  The second child of a node is stored right
# after the first, so the child is children_left + (test false), without a
# branch on the outcome.  Rows are routed BLOCK at a time, one level per pass
# over the block: the block's node loads are independent, so their cache misses
# overlap instead of waiting one after another (deep trees do not fit in cache).
from cython.parallel cimport prange

from smml._core._typedefs cimport intp_t, int32_t, uint8_t, uint64_t, floating
from smml._core._criterion cimport MAXCAT, NWORDS
from smml._core._tree cimport Node

cdef enum:
    BLOCK = 8               # rows routed together through one (deep) tree
    SUM_BLOCK = 64          # rows routed together through an ensemble's (shallow) trees: each
                            # pass over the trees' records serves more rows (measured:
                            # bench/gradient_boosting.md); deep forest trees are slower
                            # with large blocks (a block runs to its deepest row): those
                            # keep BLOCK
    MAX_BLOCK = 64


cdef inline intp_t _child(const floating* x, const Node* nd, intp_t node, const uint64_t* bits) noexcept nogil:
    """The child of internal node `node` (record nd) that row x goes to."""
    cdef double v = x[nd.feature]
    cdef intp_t c
    cdef int go_right
    if nd.is_categorical:
        # categories are codes 0..255; unknown categories (-1 or >= 256) go to the second child
        c = <intp_t>v
        go_right = not (0 <= c < MAXCAT and (bits[node * NWORDS + (c >> 6)] >> (c & 63)) & 1)
    elif v != v:
        go_right = not nd.missing_left     # a missing value (NaN): the node's default child
    else:
        go_right = not (v <= nd.threshold)
    return nd.children_left + go_right


cdef inline void _route_block(const floating* X, intp_t ld, intp_t nr, const Node* nodes,
                              const uint64_t* bits, intp_t root, intp_t* out) noexcept nogil:
    """Leaf of each of the nr <= MAX_BLOCK rows X[r * ld : r * ld + d], from node `root`."""
    cdef intp_t node[MAX_BLOCK]
    cdef intp_t r
    cdef const Node* nd
    cdef bint busy = True
    for r in range(nr):
        node[r] = root
    while busy:
        busy = False
        for r in range(nr):
            nd = nodes + node[r]
            if nd.children_left >= 0:
                busy = True
                node[r] = _child(X + r * ld, nd, node[r], bits)
    for r in range(nr):
        out[r] = node[r]


# The records come as their bytes (smml.tree.Tree._records(): the tree's own array, checked
# there once; a typed Node[::1] memoryview would re-check the record format on every call,
# a fixed cost per call (bench/tree.md), and pipelines predict a few rows at a time).

def apply_tree(const floating[:, ::1] X,             # IN (n, d)
               const uint8_t[::1] records,           # IN the tree's Node records, as bytes
               const uint64_t[:, ::1] category_bits, # IN (n_nodes, NWORDS), or (1, NWORDS): no categorical test
               intp_t[::1] out,                      # OUT (n,) leaf index per row
               int n_threads):
    cdef intp_t b, i0, n = X.shape[0], d = X.shape[1], nblk = (n + BLOCK - 1) // BLOCK
    cdef const Node* nd = <const Node*>&records[0]
    cdef const uint64_t* bits = &category_bits[0, 0]
    if n == 0:
        return
    with nogil:
        for b in prange(nblk, num_threads=max(1, n_threads), schedule="static"):
            i0 = b * BLOCK
            _route_block(&X[i0, 0], d, min(<intp_t>BLOCK, n - i0), nd, bits, 0, &out[i0])


def sum_trees(const floating[:, ::1] X,             # IN (n, d)
              const uint8_t[::1] records,           # IN the Node records of several trees, concatenated,
                                                    #    children_left as indices into the whole array
              const uint64_t[:, ::1] category_bits, # IN (n_nodes, NWORDS), or (1, NWORDS): no categorical test
              const double[::1] value,              # IN (n_nodes,) value of each node
              const intp_t[::1] roots,              # IN (n_trees,) root of each tree
              const intp_t[::1] column,             # IN (n_trees,) column of out each tree adds to
              double[:, ::1] out,                   # IN/OUT (n, k): out[i, column[t]] += value[leaf of row i in t]
              int n_threads):
    """An ensemble's sum of tree values (boosting): per block of rows, tree after tree, in
    tree order (the same sum for any thread count)."""
    cdef intp_t b, i0, n = X.shape[0], d = X.shape[1], nblk = (n + SUM_BLOCK - 1) // SUM_BLOCK
    cdef intp_t nt = roots.shape[0]
    cdef const Node* nd = <const Node*>&records[0]
    cdef const uint64_t* bits = &category_bits[0, 0]
    if n == 0 or nt == 0:
        return
    with nogil:
        for b in prange(nblk, num_threads=max(1, n_threads), schedule="static"):
            i0 = b * SUM_BLOCK
            _sum_block(&X[i0, 0], d, min(<intp_t>SUM_BLOCK, n - i0), nd, bits, &value[0], &roots[0],
                       &column[0], nt, &out[i0, 0], out.shape[1])


cdef inline void _sum_block(const floating* X, intp_t ld, intp_t nr, const Node* nodes, const uint64_t* bits,
                            const double* value, const intp_t* roots, const intp_t* column, intp_t nt,
                            double* out, intp_t ldo) noexcept nogil:
    cdef intp_t leaf[MAX_BLOCK]
    cdef intp_t t, r
    for t in range(nt):
        _route_block(X, ld, nr, nodes, bits, roots[t], leaf)
        for r in range(nr):
            out[r * ldo + column[t]] += value[leaf[r]]


# A forest (random forest, bagging of smml trees): T deep, fully grown trees, each routing a row
# through ~log2(m) levels of a tree of ~m nodes; the trees together are far larger than the
# cache.  Two things set the speed:
# - a few rows (the common call): one row's walk down one tree is a chain of dependent loads, so
#   the walks of up to PAIR_BLOCK (tree, row) pairs advance together, one level per pass over the
#   walks still going (those that reach a leaf leave the list): their loads overlap.  (One tree
#   at a time, 1 row through 100 trees took several times as long: bench/forest.md.)
# - many rows: tree after tree over many rows, so that each tree is brought into the cache once
#   for all of them (blocks of 8 rows each through every tree, as sum_trees does, were slower
#   on 10,000 rows: bench/forest.md).  So the rows are cut into a few large chunks (at most
#   CHUNK_BYTES of X), each walked by one thread tree after tree, FOREST_ROWS rows of
#   PAIR_BLOCK / FOREST_ROWS trees at a time.
# Each walk prefetches the record of the node it moves to: the pass over the other walks hides the
# load (the A/B: bench/forest.md).
# The leaves' payload sits in the leaves' own (otherwise unused) test fields of the concatenated
# records, read from the record the walk ends on: feature = the column of out, threshold = the
# amount added (a class vote: 1.0; a regression tree: its value).

# A C helper, always_inline: GCC drops the prefetches of a Cython `cdef inline` helper (_linear.pyx)
cdef extern from "smml_prefetch.h":
    void smml_prefetch_node(const char *p) noexcept nogil

cdef enum:
    PAIR_BLOCK = 128        # (tree, row) walks advanced together
    FOREST_ROWS = 32        # rows per group of walks (with PAIR_BLOCK / FOREST_ROWS trees)
    CHUNK_BYTES = 8 << 20   # at most this much of X per chunk of rows walked tree after tree
    CHUNKS_PER_THREAD = 4   # with threads: up to this many chunks per thread (smaller chunks
    MIN_CHUNK = 256         # cost time on one thread: bench/forest.md)


cdef inline void _route_pairs(const floating* X, intp_t ld, intp_t nr, intp_t ng, const Node* nodes,
                              const uint64_t* bits, const intp_t* roots, intp_t* out) noexcept nogil:
    """Leaf of each (tree, row) pair, out[t * nr + r], for the nr rows X[r * ld : r * ld + d] and
    the ng trees of roots (nr * ng <= PAIR_BLOCK); the same leaves as _route_block."""
    cdef intp_t node[PAIR_BLOCK]
    cdef intp_t pair[PAIR_BLOCK]
    cdef intp_t xoff[PAIR_BLOCK]
    cdef intp_t p, w, t, r, v, m = 0
    cdef const Node* nd
    for t in range(ng):
        for r in range(nr):
            node[m] = roots[t]
            pair[m] = m
            xoff[m] = r * ld
            m += 1
    while m > 0:
        w = 0
        for p in range(m):
            v = node[p]
            nd = nodes + v
            if nd.children_left >= 0:
                v = _child(X + xoff[p], nd, v, bits)
                smml_prefetch_node(<const char*>(nodes + v))
                node[w] = v
                pair[w] = pair[p]
                xoff[w] = xoff[p]
                w += 1
            else:
                out[pair[p]] = v
        m = w


def forest_sum(const floating[:, ::1] X,             # IN (n, d)
               const uint8_t[::1] records,           # IN the Node records of the trees, concatenated,
                                                     #    children_left as indices into the whole array;
                                                     #    at a leaf, feature = a column of out (0 <= .. < k)
                                                     #    and threshold = what the leaf adds to it
               const uint64_t[:, ::1] category_bits, # IN (n_nodes, NWORDS), or (1, NWORDS) when no
                                                     #    record is categorical (never read then)
               const intp_t[::1] roots,              # IN (n_trees,) root of each tree
               double[:, ::1] out,                   # IN/OUT (n, k): out[i, leaf.feature] += leaf.threshold
               int n_threads):                       #    for the leaf of row i in each tree
    """A forest's votes (leaf payload: the class voted for, 1.0) or sum of tree values (the
    column 0, the leaf's value): each row's additions are made tree after tree in tree order,
    by one thread, so the sums are those of a loop over the trees, for any thread count."""
    cdef intp_t b, i0, n = X.shape[0], d = X.shape[1], nt = roots.shape[0]
    cdef intp_t nthr = max(1, n_threads)
    cdef intp_t cap = max(<intp_t>1024, <intp_t>CHUNK_BYTES // (max(d, <intp_t>1) * <intp_t>sizeof(floating)))
    cdef intp_t nchunk, size
    if n == 0 or nt == 0:
        return
    # chunks of at most cap rows; with threads, at least one per thread and up to CHUNKS_PER_THREAD
    # of MIN_CHUNK rows or more, handed out as the threads get free (a loaded core holds back
    # one chunk, not half of the rows)
    nchunk = (n + cap - 1) // cap
    if nthr > 1:
        nchunk = max(nchunk, min(nthr, n), min(CHUNKS_PER_THREAD * nthr, n // MIN_CHUNK))
    size = (n + nchunk - 1) // nchunk
    nchunk = (n + size - 1) // size
    cdef const Node* nd = <const Node*>&records[0]
    cdef const uint64_t* bits = &category_bits[0, 0]
    with nogil:
        for b in prange(nchunk, num_threads=nthr, schedule="dynamic"):
            i0 = b * size
            _forest_chunk(&X[i0, 0], d, min(size, n - i0), nd, bits, &roots[0], nt,
                          &out[i0, 0], out.shape[1])


cdef void _forest_chunk(const floating* X, intp_t ld, intp_t n, const Node* nodes, const uint64_t* bits,
                        const intp_t* roots, intp_t nt, double* out, intp_t ldo) noexcept nogil:
    """The n rows of X tree after tree: groups of G trees (in tree order), each walked by the rows
    R at a time; a row gets its trees' payloads in tree order."""
    cdef intp_t leaf[PAIR_BLOCK]
    cdef intp_t R = min(n, <intp_t>FOREST_ROWS)
    cdef intp_t G = PAIR_BLOCK // R
    cdef intp_t t0 = 0, r0, g, nr, t, r
    cdef const Node* nd
    while t0 < nt:
        g = min(G, nt - t0)
        r0 = 0
        while r0 < n:
            nr = min(R, n - r0)
            _route_pairs(X + r0 * ld, ld, nr, g, nodes, bits, roots + t0, leaf)
            for t in range(g):
                for r in range(nr):
                    nd = nodes + leaf[t * nr + r]
                    out[(r0 + r) * ldo + nd.feature] += nd.threshold
            r0 += R
        t0 += G


def sum_trees_levels(const floating[:, ::1] X,    # IN (n, d)
                     const int32_t[::1] feat,         # IN (n_nodes,) tested feature (0 at a leaf)
                     const double[::1] thr,           # IN (n_nodes,) threshold (+inf at a leaf)
                     const int32_t[::1] left,         # IN (n_nodes,) first child (the node itself at a leaf)
                     const uint8_t[::1] miss_right,   # IN (n_nodes,) 1: a NaN goes to the second child
                     const double[::1] value,         # IN (n_nodes,)
                     const intp_t[::1] roots,         # IN (n_trees,)
                     const intp_t[::1] depth,         # IN (n_trees,) depth of each tree's deepest leaf
                     const intp_t[::1] column,        # IN (n_trees,)
                     double[:, ::1] out,              # IN/OUT (n, k) as sum_trees
                     int n_threads):
    """sum_trees for ensembles without categorical tests, from per-node arrays (the records'
    test fields, split by _gradient_boosting._pack): each tree is walked for exactly its depth,
    a leaf routing to itself (threshold +inf, NaN to the first child), so the level loop has no
    test for "already at a leaf" and no branch at all. The same child as _child for every node
    and row (x <= thr: first child; NaN: the node's missing side), so the same leaves and, in
    the same tree order, the same sums."""
    cdef intp_t b, i0, n = X.shape[0], d = X.shape[1], nblk = (n + SUM_BLOCK - 1) // SUM_BLOCK
    cdef intp_t nt = roots.shape[0]
    if n == 0 or nt == 0:
        return
    with nogil:
        for b in prange(nblk, num_threads=max(1, n_threads), schedule="static"):
            i0 = b * SUM_BLOCK
            _sum_block_levels(&X[i0, 0], d, min(<intp_t>SUM_BLOCK, n - i0), &feat[0], &thr[0], &left[0],
                              &miss_right[0], &value[0], &roots[0], &depth[0], &column[0], nt,
                              &out[i0, 0], out.shape[1])


cdef inline void _sum_block_levels(const floating* X, intp_t ld, intp_t nr, const int32_t* feat,
                                   const double* thr, const int32_t* left, const uint8_t* miss_right,
                                   const double* value, const intp_t* roots, const intp_t* depth,
                                   const intp_t* column, intp_t nt, double* out, intp_t ldo) noexcept nogil:
    cdef intp_t node[MAX_BLOCK]
    cdef intp_t t, r, lev, nd
    cdef double v
    for t in range(nt):
        for r in range(nr):
            node[r] = roots[t]
        for lev in range(depth[t]):
            for r in range(nr):
                nd = node[r]
                v = X[r * ld + feat[nd]]
                # second child unless v <= thr; a NaN (not <= anything) goes back to the first
                # child unless its missing side is the second. Integer arithmetic on the two
                # comparisons: a branch on them would be mispredicted on about half the rows.
                node[r] = (left[nd] + <intp_t> (not (v <= thr[nd]))
                           - <intp_t> ((<int> (v != v)) & (1 - <int> miss_right[nd])))
        for r in range(nr):
            out[r * ldo + column[t]] += value[node[r]]


def path_sums(const floating[:, ::1] X,          # IN (n, d)
              const double[:, ::1] T,             # IN (n, k) per-row quantities to add along the path
              const uint8_t[::1] records,         # IN the tree's Node records, as bytes
              const uint64_t[:, ::1] category_bits,
              double[:, ::1] out):                # OUT (n_nodes, k) sums over the rows routed through each node
    """Serial (a plain sum per node, deterministic)."""
    cdef intp_t i, j, node, n = X.shape[0], k = T.shape[1]
    cdef const Node* nodes = <const Node*>&records[0]
    cdef const uint64_t* bits = &category_bits[0, 0]
    with nogil:
        for i in range(n):
            node = 0
            while True:
                for j in range(k):
                    out[node, j] += T[i, j]
                if nodes[node].children_left < 0:
                    break
                node = _child(&X[i, 0], &nodes[node], node, bits)
