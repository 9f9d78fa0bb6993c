"""An exact kd-tree for k-NN with the notes' distance-tie rule (000, 'The Nearest Neighbour algorithm').

Layout (built by :func:`build`, all arrays allocated by the caller):

- a complete binary tree of depth ``depth`` in implicit numbering (node ``n`` has
  children ``2n + 1`` and ``2n + 2``; the leaves are ``2^depth - 1 .. 2^(depth+1) - 2``);
  a node's points are the rows ``start[n] .. end[n] - 1`` of ``Tt``, a copy of the
  training data reordered so that every leaf's points are contiguous (tree order), and
  ``perm[i]`` is the original training index of row ``i`` of ``Tt``;
- a node is split along the feature of largest spread, by a quickselect at the middle of
  its rows (``mid = start + (end - start) // 2``); when the middle row's value is shared by
  other rows, the split moves to the nearer end of the run of equal values
  (:func:`_tie_boundary`), so no value lies in both children. On distinct values every
  leaf holds ``floor(m / 2^depth)`` or ``ceil(m / 2^depth)`` points; duplicates make
  leaves uneven, some possibly empty (an empty node's box is lo = +inf, hi = -inf);
- every node keeps the tight bounding box ``lo[n], hi[n]`` of its points.

Memory: ``Tt`` (m x d, the data's dtype; every leaf's points feature-major, see
:func:`leaf_blocks`), ``perm`` (m), and per node two intp and two d-vectors of the data's
dtype: with ``2^(depth+1) - 1 <= 4 m / leaf_size`` nodes, at most ``m (d + 1)`` +
``(4 m / leaf_size)(2 + 2 d)`` numbers, i.e. O(m d).

Exactness. A point's key is :func:`smml._core._distances.exact_key` (the same function
as the brute path: direct subtraction in float64, feature by feature in order), computed
for a leaf's points several at a time by :func:`_block_keys` with the same operations in
the same order for each point, so bit for bit the same. A node's
lower bound is computed by :func:`box_bound` with per-feature terms ``lo_f - q_f`` /
``q_f - hi_f`` (0 inside the box), each rounded to float64 by one subtraction, squared
(or taken as is for Manhattan) and summed in feature order, never updated
incrementally. For a point p in the box, ``|p_f - q_f| >= lo_f - q_f >= 0`` (or the
mirror case) exactly, and rounding to nearest is monotone, so every rounded term is <=
the point's rounded term (``fl(q_f - p_f)`` is ``-fl(p_f - q_f)``), its square too, and
each rounded partial sum too (``fl(a + b)`` is monotone in a and b): the bound is <= the
exact key of every point in the box, *in floating point*. (setup.py compiles with
``-ffp-contract=off``, so neither sum is fused into an FMA.)

Search (:func:`knn`). Depth-first, nearer child first, with an explicit stack. A node
or a pushed subtree is pruned only when its bound is *strictly* greater than the current
k-th key ``tau`` (the root of a max-heap of the k best (key, index) pairs seen so far;
infinite until k points are seen). ``tau`` only decreases and never falls below the true
k-th key ``D_k``, so a pruned point has key > D_k and is never needed. Every point with
key == tau that is not in the heap is kept in a *tie list* (a point arriving with key ==
tau, or a root evicted by a smaller key when the new root has the same key); the tie list
is emptied whenever tau decreases. At the end the heap holds the k smallest points and
the tie list every other point with key == D_k, so heap + ties are exactly the k' points
of the notes' rule, whatever the tree's shape, the leaf size or the thread count. The
kernel writes the first ``cap`` of them, sorted by (key, index) (up to 128 by rank,
``smml_rank_sort``; longer results by ``smml_sort_entries``), and ``k'`` itself (which
may exceed ``cap``: with ``keep_over`` the kernel keeps that query's whole sorted result
from the same search and returns it, so that no query is searched twice).

:func:`radius` returns every point with key <= a threshold (prune: bound > threshold),
sorted by (key, index); a depth-0 tree over the data in its own order (perm = identity)
is the brute-force scan.
"""
import numpy as np

from libc.stdlib cimport malloc, calloc, realloc, free, qsort
from libc.math cimport INFINITY
from libc.string cimport memcpy
from libc.stdint cimport uint64_t
from cython.parallel cimport prange, parallel

from smml._core._atomic cimport flag_set
from smml._core._typedefs cimport floating, intp_t
from smml._core._openmp cimport threads_for
from smml._core._distances cimport SQEUCLIDEAN, MANHATTAN, HAMMING
from smml._core._heap cimport Pair, cmp_pair, heap_push, heap_sort
from smml._core._vote cimport majority

cdef extern from "smml_distances.h" nogil:
    void smml_block_keys_d(const double *q, const double *B, intp_t stride, intp_t n,
                           intp_t d, int metric, double *out)
    void smml_block_keys_f(const float *q, const float *B, intp_t stride, intp_t n,
                           intp_t d, int metric, double *out)
    void smml_rank_sort(const double *key, const intp_t *idx, const intp_t *pay, intp_t n,
                        intp_t cap, double *out_key, intp_t *out_idx, intp_t *out_pay)
    intp_t smml_first_below_d(const double *r, intp_t n, double top)
    ctypedef struct Entry "smml_entry":
        # begins as a Pair does (key, original index)
        double key
        intp_t idx          # original training index
        intp_t pos          # row in tree order
    void smml_sort_entries(Entry *a, intp_t n, Entry *tmp)

cdef enum:
    KEY_CHUNK = 128      # points whose keys one block call computes
    RANK_MAX = 128       # results of at most this many points are sorted by rank (smml_rank_sort)


cdef inline void _block_keys(const floating *q, const floating *B, intp_t stride, intp_t n,
                             intp_t d, int metric, double *out) noexcept nogil:
    """out[j] = exact_key(q, point j) for n points of a leaf block (feature f of point j at
    B[f * stride + j]): the same operations in the same order, several points at once."""
    if floating is double:
        smml_block_keys_d(q, B, stride, n, d, metric, out)
    else:
        smml_block_keys_f(q, B, stride, n, d, metric, out)


# ---- build ------------------------------------------------------------------------

cdef inline void _swap_rows(floating *T, intp_t *perm, intp_t i, intp_t j, intp_t d) noexcept nogil:
    cdef intp_t f, t
    cdef floating v
    for f in range(d):
        v = T[i * d + f]
        T[i * d + f] = T[j * d + f]
        T[j * d + f] = v
    t = perm[i]
    perm[i] = perm[j]
    perm[j] = t


cdef void _select(floating *T, intp_t *perm, intp_t d, intp_t dim,
                  intp_t lo, intp_t hi, intp_t nth) noexcept nogil:
    """Reorder rows lo .. hi - 1 so that feature ``dim`` is <= at rows < nth and >= at
    rows > nth than at row nth (quickselect, Hoare partition, median-of-3 pivot: equal
    values are split evenly, so duplicates cannot make it quadratic)."""
    cdef intp_t i, j, mid
    cdef floating a, b, c, pivot
    hi -= 1
    while hi > lo:
        mid = lo + (hi - lo) // 2
        a = T[lo * d + dim]
        b = T[mid * d + dim]
        c = T[hi * d + dim]
        if a < b:
            pivot = b if b < c else (c if a < c else a)
        else:
            pivot = a if a < c else (c if b < c else b)
        i = lo
        j = hi
        while i <= j:
            while T[i * d + dim] < pivot:
                i += 1
            while T[j * d + dim] > pivot:
                j -= 1
            if i <= j:
                _swap_rows(T, perm, i, j, d)
                i += 1
                j -= 1
        # rows lo .. j are <= pivot, rows i .. hi are >= pivot, rows j+1 .. i-1 == pivot
        if nth <= j:
            hi = j
        elif nth >= i:
            lo = i
        else:
            return


cdef intp_t _tie_boundary(floating *T, intp_t *perm, intp_t d, intp_t dim,
                          intp_t s, intp_t e, intp_t mid) noexcept nogil:
    """The split row of a node of rows s .. e - 1 after ``_select(..., mid)``: rows equal
    to row mid along ``dim`` are gathered into one run a .. b - 1 around mid (nothing
    moves when row mid's value is unique), and the run's end nearer to mid (a on a tie)
    that leaves both children non-empty is returned, so that no value of ``dim`` lies in
    both children. Without it, duplicated values (lattices, low-cardinality features) put
    the query inside both children's boxes at every level split on its own value, and the
    search visits both: exponentially many leaves in the number of such levels."""
    cdef floating v = T[mid * d + dim]
    cdef intp_t i, j, a, b, n_eq = 0
    for i in range(s, e):
        n_eq += T[i * d + dim] == v
    if n_eq == 1:
        return mid
    # rows s .. mid - 1 are <= v: the equal ones to the end of that range
    i = s
    j = mid - 1
    while i <= j:
        if T[i * d + dim] == v:
            _swap_rows(T, perm, i, j, d)
            j -= 1
        else:
            i += 1
    a = j + 1
    # rows mid + 1 .. e - 1 are >= v: the equal ones to the start of that range
    i = mid + 1
    j = e - 1
    while i <= j:
        if T[i * d + dim] == v:
            i += 1
        else:
            _swap_rows(T, perm, i, j, d)
            j -= 1
    b = i
    if a > s and (b >= e or mid - a <= b - mid):
        return a
    if b < e:
        return b
    return mid          # every row equal along dim (the widest feature): identical points


cdef void _leaf_box(const floating *T, intp_t d, intp_t s, intp_t e,
                    floating *lo, floating *hi) noexcept nogil:
    """The tight box of rows s .. e - 1 (an empty node: lo = +inf, hi = -inf, so its
    bound is infinite for Euclidean and Manhattan keys and no search enters it)."""
    cdef intp_t i, f
    cdef floating v
    if e <= s:
        for f in range(d):
            lo[f] = INFINITY
            hi[f] = -INFINITY
        return
    for f in range(d):
        lo[f] = T[s * d + f]
        hi[f] = T[s * d + f]
    for i in range(s + 1, e):
        for f in range(d):
            v = T[i * d + f]
            if v < lo[f]:
                lo[f] = v
            if v > hi[f]:
                hi[f] = v


def build(floating[:, ::1] Tt, intp_t[::1] perm, intp_t depth,               # IN/OUT data copy, perm
          intp_t[::1] start, intp_t[::1] end,                                # OUT node ranges
          floating[:, ::1] lo, floating[:, ::1] hi,                          # OUT node boxes
          int n_threads):
    """Build the tree in place (see the module doc). ``Tt`` holds a copy of the training
    data and ``perm`` = 0 .. m-1 on entry; both are reordered into tree order. Node arrays
    have 2^(depth+1) - 1 rows; the caller picks depth so that balanced splits would leave
    no leaf empty (ties moved by :func:`_tie_boundary` may still empty some)."""
    cdef intp_t m = Tt.shape[0], d = Tt.shape[1]
    cdef intp_t n_nodes = (<intp_t> 2 << depth) - 1
    cdef intp_t level, first, last, n, s, e, mid, f, best_f, l, r
    cdef floating *T
    cdef floating *lon
    cdef floating *hin
    cdef double spread, best
    if m == 0 or d == 0:
        raise ValueError("build: empty data")
    if perm.shape[0] != m or start.shape[0] != n_nodes or end.shape[0] != n_nodes \
            or lo.shape[0] != n_nodes or hi.shape[0] != n_nodes or lo.shape[1] != d \
            or hi.shape[1] != d or depth < 0 or (m >> depth) < 1:
        raise ValueError("build: bad shapes or depth")
    if n_threads < 1:
        n_threads = 1
    T = &Tt[0, 0]
    start[0] = 0
    end[0] = m
    with nogil:
        for level in range(depth):
            first = (<intp_t> 1 << level) - 1
            last = (<intp_t> 2 << level) - 1
            for n in prange(first, last, schedule="dynamic", num_threads=n_threads):
                s = start[n]
                e = end[n]
                # the feature of largest spread (first one on ties)
                lon = &lo[n, 0]
                hin = &hi[n, 0]
                _leaf_box(T, d, s, e, lon, hin)
                best = -1.0
                best_f = 0
                for f in range(d):
                    spread = <double> hin[f] - <double> lon[f]
                    if spread > best:
                        best = spread
                        best_f = f
                mid = s + (e - s) // 2
                if e - s > 1:
                    _select(T, &perm[0], d, best_f, s, e, mid)
                    mid = _tie_boundary(T, &perm[0], d, best_f, s, e, mid)
                l = 2 * n + 1
                r = l + 1
                start[l] = s
                end[l] = mid
                start[r] = mid
                end[r] = e
        # the leaves' boxes (every internal node got its box, the tight box of its
        # points, above, before it was split)
        first = (<intp_t> 1 << depth) - 1
        for n in prange(first, n_nodes, schedule="static", num_threads=n_threads):
            _leaf_box(T, d, start[n], end[n], &lo[n, 0], &hi[n, 0])


def leaf_blocks(const floating[:, ::1] Tt, const intp_t[::1] start, const intp_t[::1] end,  # IN
                floating[:, ::1] Tb,                                                      # OUT
                int n_threads):
    """The search's layout of the tree-ordered data ``Tt``: every leaf's points stored
    feature-major in place of its rows, i.e. for a leaf of rows s .. e - 1, feature f of
    row j is at flat position ``s d + f (e - s) + (j - s)`` of ``Tb`` (so a leaf's keys are
    computed several points at a time, :func:`_block_keys`)."""
    cdef intp_t m = Tt.shape[0], d = Tt.shape[1], n_nodes = start.shape[0], depth = 0
    cdef intp_t first_leaf, n, s, e, f, j
    cdef const floating *T
    cdef floating *B
    while ((<intp_t> 2 << depth) - 1) < n_nodes:
        depth += 1
    if ((<intp_t> 2 << depth) - 1) != n_nodes or end.shape[0] != n_nodes \
            or Tb.shape[0] != m or Tb.shape[1] != d:
        raise ValueError("leaf_blocks: bad shapes")
    first_leaf = (<intp_t> 1 << depth) - 1
    e = 0
    for n in range(first_leaf, n_nodes):
        if start[n] != e or end[n] < start[n]:
            raise ValueError("leaf_blocks: the leaves must tile the rows in order")
        e = end[n]
    if e != m:
        raise ValueError("leaf_blocks: the leaves must tile the rows in order")
    if m == 0 or d == 0:
        return
    T = &Tt[0, 0]
    B = &Tb[0, 0]
    with nogil:
        for n in prange(first_leaf, n_nodes, schedule="static",
                        num_threads=threads_for(n_threads, m * d, 1 << 18)):
            s = start[n]
            e = end[n]
            for f in range(d):
                for j in range(s, e):
                    B[s * d + f * (e - s) + (j - s)] = T[j * d + f]


# ---- search -------------------------------------------------------------------------

cdef inline double box_bound(const floating *q, const floating *lo, const floating *hi,
                             intp_t d, int metric) noexcept nogil:
    """A lower bound, in floating point, on ``exact_key(q, p)`` for every p in the box
    (see the module doc for why the rounding cannot break it)."""
    cdef double s = 0.0, t, a
    cdef intp_t f
    for f in range(d):
        a = <double> q[f]
        if a < <double> lo[f]:
            t = <double> lo[f] - a
        elif a > <double> hi[f]:
            t = a - <double> hi[f]
        else:
            continue
        if metric == SQEUCLIDEAN:
            s = s + t * t
        elif metric == MANHATTAN:
            s = s + t
        else:
            s = s + 1.0         # Hamming: q_f is outside [lo_f, hi_f], so every p_f differs
    return s


ctypedef struct KState:
    # knn keeps points by their row in tree order (perm[row] is read for the few results
    # only, at the end); radius by their original index
    double *hv          # max-heap of the k best (key, row) pairs
    intp_t *hi
    intp_t hs
    Pair *ties          # every other point seen with key == the heap's root key
    intp_t n_ties
    intp_t ties_cap
    Entry *buf          # heap + ties, sorted at the end (more than RANK_MAX of them)
    Entry *buf_tmp      # the sort's scratch (buf_cap records)
    intp_t buf_cap
    intp_t *stack
    double *sbound
    double *keys        # KEY_CHUNK keys of a leaf's points
    double *rk          # RANK_MAX (key, original index, row) gathered for smml_rank_sort
    intp_t *ri
    intp_t *rp
    intp_t *op          # the rows of the sorted results
    double *sk          # RANK_MAX sorted keys / original indices (a result longer than cap)
    intp_t *si
    intp_t n_keys       # keys computed by the last search (its work, see knn's out_work)
    intp_t n_bounds     # box bounds computed by the last search
    int failed


cdef inline void _add_tie(KState *st, double v, intp_t i) noexcept nogil:
    cdef Pair *p
    cdef intp_t c
    if st.n_ties == st.ties_cap:
        c = 2 * st.ties_cap + 16
        p = <Pair *> realloc(st.ties, c * sizeof(Pair))
        if p == NULL:
            st.failed = 1
            return
        st.ties = p
        st.ties_cap = c
    st.ties[st.n_ties].key = v
    st.ties[st.n_ties].idx = i
    st.n_ties += 1


cdef inline void _offer(KState *st, intp_t k, double v, intp_t i) noexcept nogil:
    """Offer a point with key v <= the root key (or any key while the heap is not full)."""
    cdef double old
    cdef intp_t old_i
    if st.hs < k:
        heap_push(st.hv, st.hi, &st.hs, k, v, i)
    elif v < st.hv[0]:
        old = st.hv[0]
        old_i = st.hi[0]
        heap_push(st.hv, st.hi, &st.hs, k, v, i)
        if st.hv[0] == old:
            _add_tie(st, old, old_i)        # still tied with the (unchanged) k-th key
        else:
            st.n_ties = 0                   # tau decreased: the old ties are farther
    else:
        _add_tie(st, v, i)                  # v == tau


cdef inline intp_t _chunk_keys(const floating *q, const floating *T, intp_t s, intp_t e,
                              intp_t j0, intp_t d, int metric, double *keys) noexcept nogil:
    """The exact keys of the next rows j0 .. j0 + n - 1 (n <= KEY_CHUNK returned) of the
    leaf of rows s .. e - 1, stored feature-major (see :func:`leaf_blocks`)."""
    cdef intp_t n = e - j0 if e - j0 < KEY_CHUNK else KEY_CHUNK
    _block_keys(q, T + s * d + (j0 - s), e - s, n, d, metric, keys)
    return n


cdef inline double _next_up(double x) noexcept nogil:
    """nextafter(x, +inf) for a finite x >= 0 (a key), without a libm call on every leaf
    block: the next bit pattern (+0.0 and -0.0 give the smallest subnormal)."""
    cdef uint64_t b
    if x == 0.0:
        return 4.9406564584124654e-324
    memcpy(&b, &x, sizeof(double))
    b += 1
    memcpy(&x, &b, sizeof(double))
    return x


cdef inline double _tau(const KState *st, intp_t k) noexcept nogil:
    return st.hv[0] if st.hs == k else INFINITY


cdef void _knn_one(const floating *q, const floating *T,
                   const intp_t *start, const intp_t *end,
                   const floating *lo, const floating *hi, intp_t d, intp_t first_leaf,
                   int metric, intp_t k, KState *st) noexcept nogil:
    cdef intp_t top, node, near, far, l, j0, n, c
    cdef double b, bn, bf, tau
    st.hs = 0
    st.n_ties = 0
    st.n_keys = 0
    st.n_bounds = 0
    st.stack[0] = 0
    st.sbound[0] = 0.0
    top = 1
    while top > 0:
        top -= 1
        node = st.stack[top]
        if st.sbound[top] > _tau(st, k):
            continue
        while node < first_leaf:
            l = 2 * node + 1
            bn = box_bound(q, lo + l * d, hi + l * d, d, metric)
            bf = box_bound(q, lo + (l + 1) * d, hi + (l + 1) * d, d, metric)
            st.n_bounds += 2
            if bn <= bf:
                near = l
                far = l + 1
            else:
                near = l + 1
                far = l
                b = bn
                bn = bf
                bf = b
            tau = _tau(st, k)
            if bf <= tau:
                st.stack[top] = far
                st.sbound[top] = bf
                top += 1
            if bn > tau:
                node = -1
                break
            node = near
        if node < 0:
            continue
        j0 = start[node]
        while j0 < end[node]:
            n = _chunk_keys(q, T, start[node], end[node], j0, d, metric, st.keys)
            st.n_keys += n
            c = 0
            while c < n:
                if st.hs == k and st.hv[0] < INFINITY:
                    # the next key <= tau (x <= tau iff x < the next double above tau: keys are
                    # never NaN; an infinite tau takes every key); few keys pass
                    c = c + smml_first_below_d(st.keys + c, n - c, _next_up(st.hv[0]))
                    if c == n:
                        break
                _offer(st, k, st.keys[c], j0 + c)
                c += 1
            j0 += n
        if st.failed:
            return


cdef intp_t _finish(KState *st, intp_t k, const intp_t *perm, const intp_t *ytree,
                    double *out_key, intp_t *out_idx, intp_t *out_lab,
                    intp_t cap, Entry **over) noexcept nogil:
    """Sort heap + ties by (key, original index), write the first ``cap`` (and their labels
    ``ytree[row]`` if ``out_lab`` is not NULL); return k' (may be > cap). With ``over`` not
    NULL, a result longer than ``cap`` is also kept whole, sorted, in a new array
    ``over[0]`` (the caller frees it), so that it need not be searched again."""
    cdef intp_t n = st.hs + st.n_ties, c, w
    cdef Entry *p
    cdef Entry *o = NULL
    w = n if n < cap else cap
    if n > cap and over != NULL:
        o = <Entry *> malloc(n * sizeof(Entry))
        if o == NULL:
            st.failed = 1
            return 0
        over[0] = o
    if n <= RANK_MAX:
        for c in range(st.hs):
            st.rk[c] = st.hv[c]
            st.rp[c] = st.hi[c]
            st.ri[c] = perm[st.hi[c]]
        for c in range(st.n_ties):
            st.rk[st.hs + c] = st.ties[c].key
            st.rp[st.hs + c] = st.ties[c].idx
            st.ri[st.hs + c] = perm[st.ties[c].idx]
        if o == NULL:
            smml_rank_sort(st.rk, st.ri, st.rp, n, cap, out_key, out_idx, st.op)
        else:
            smml_rank_sort(st.rk, st.ri, st.rp, n, n, st.sk, st.si, st.op)
            for c in range(n):
                o[c].key = st.sk[c]
                o[c].idx = st.si[c]
                o[c].pos = st.op[c]
            for c in range(w):
                out_key[c] = st.sk[c]
                out_idx[c] = st.si[c]
        if out_lab != NULL:
            for c in range(w):
                out_lab[c] = ytree[st.op[c]]
    else:
        if n > st.buf_cap:
            p = <Entry *> realloc(st.buf, n * sizeof(Entry))
            if p == NULL:
                st.failed = 1
                return 0
            st.buf = p
            p = <Entry *> realloc(st.buf_tmp, n * sizeof(Entry))
            if p == NULL:
                st.failed = 1
                return 0
            st.buf_tmp = p
            st.buf_cap = n
        for c in range(st.hs):
            st.buf[c].key = st.hv[c]
            st.buf[c].pos = st.hi[c]
        for c in range(st.n_ties):
            st.buf[st.hs + c].key = st.ties[c].key
            st.buf[st.hs + c].pos = st.ties[c].idx
        for c in range(n):
            st.buf[c].idx = perm[st.buf[c].pos]
        smml_sort_entries(st.buf, n, st.buf_tmp)
        for c in range(w):
            out_key[c] = st.buf[c].key
            out_idx[c] = st.buf[c].idx
            if out_lab != NULL:
                out_lab[c] = ytree[st.buf[c].pos]
        if o != NULL:
            memcpy(o, st.buf, n * sizeof(Entry))
    for c in range(w, cap):
        out_key[c] = INFINITY
        out_idx[c] = -1
        if out_lab != NULL:
            out_lab[c] = -1
    return n


cdef KState *_new_state(intp_t k, intp_t depth) noexcept nogil:
    """Per-thread search buffers (NULL if out of memory)."""
    cdef KState *st = <KState *> malloc(sizeof(KState))
    if st == NULL:
        return NULL
    st.hv = <double *> malloc((k if k > 0 else 1) * sizeof(double))
    st.hi = <intp_t *> malloc((k if k > 0 else 1) * sizeof(intp_t))
    st.stack = <intp_t *> malloc((depth + 2) * sizeof(intp_t))
    st.sbound = <double *> malloc((depth + 2) * sizeof(double))
    st.buf = <Entry *> malloc((k if k > 0 else 1) * sizeof(Entry))
    st.buf_tmp = <Entry *> malloc((k if k > 0 else 1) * sizeof(Entry))
    st.buf_cap = k if k > 0 else 1
    st.keys = <double *> malloc(KEY_CHUNK * sizeof(double))
    st.rk = <double *> malloc(RANK_MAX * sizeof(double))
    st.ri = <intp_t *> malloc(RANK_MAX * sizeof(intp_t))
    st.rp = <intp_t *> malloc(RANK_MAX * sizeof(intp_t))
    st.op = <intp_t *> malloc(RANK_MAX * sizeof(intp_t))
    st.sk = <double *> malloc(RANK_MAX * sizeof(double))
    st.si = <intp_t *> malloc(RANK_MAX * sizeof(intp_t))
    st.ties = NULL
    st.ties_cap = 0
    st.n_ties = 0
    st.hs = 0
    st.failed = 0
    if st.hv == NULL or st.hi == NULL or st.stack == NULL or st.sbound == NULL or st.buf == NULL \
            or st.buf_tmp == NULL \
            or st.keys == NULL or st.rk == NULL or st.ri == NULL or st.rp == NULL \
            or st.op == NULL or st.sk == NULL or st.si == NULL:
        st.failed = 1
    return st


cdef void _free_state(KState *st) noexcept nogil:
    if st != NULL:
        free(st.hv)
        free(st.hi)
        free(st.stack)
        free(st.sbound)
        free(st.ties)
        free(st.buf)
        free(st.buf_tmp)
        free(st.keys)
        free(st.rk)
        free(st.ri)
        free(st.rp)
        free(st.op)
        free(st.sk)
        free(st.si)
        free(st)


def _check_tree(str name, intp_t q_width, intp_t m, intp_t d, intp_t n_perm, intp_t n_start,
                intp_t n_end, intp_t n_lo, intp_t lo_width, intp_t n_hi, intp_t hi_width, int metric):
    """The tree's depth, after checking the shapes of a query call (ValueError if bad)."""
    cdef intp_t depth = 0
    while ((<intp_t> 2 << depth) - 1) < n_start:
        depth += 1
    if ((<intp_t> 2 << depth) - 1) != n_start or n_end != n_start or n_lo != n_start \
            or n_hi != n_start or lo_width != d or hi_width != d or q_width != d or n_perm != m:
        raise ValueError(f"{name}: bad shapes")
    if metric not in (SQEUCLIDEAN, MANHATTAN, HAMMING):
        raise ValueError(f"{name}: unknown metric code")
    return depth


cdef int _search_all(const floating *Q, intp_t nq, const floating *T, const intp_t *perm,
                     const intp_t *start, const intp_t *end, const floating *lo, const floating *hi,
                     intp_t d, intp_t depth, int metric, intp_t k, int n_threads,
                     intp_t *out_cnt, intp_t *wk, const intp_t *yt,
                     double *out_key, intp_t *out_idx, intp_t *out_lab, intp_t cap, Entry **over,
                     intp_t *votes, intp_t nc, intp_t default, intp_t *pred) noexcept nogil:
    """Search every query (rows of Q, d wide) on threads, each with its own buffers; per
    query either its sorted points (:func:`_finish` into out_key / out_idx / out_lab, over)
    or, with ``votes`` not NULL, its class counts (nc per query, codes ``yt``) and the vote
    (``pred``, :func:`majority`). k' into out_cnt, the work into wk (unless NULL). Returns 1
    if a thread could not allocate its buffers, 2 if a taken point's class code is outside
    0 .. nc - 1 (checked on the taken points only: no pass over all the codes per call),
    else 0."""
    cdef intp_t first_leaf = (<intp_t> 1 << depth) - 1, i, c, code
    cdef intp_t *v
    cdef KState *st
    cdef int failed[1]
    cdef int bad[1]
    failed[0] = 0
    bad[0] = 0
    st = NULL
    with parallel(num_threads=threads_for(n_threads, nq, 1)):
        st = _new_state(k, depth)
        for i in prange(nq, schedule="dynamic", chunksize=32):
            if st == NULL or st.failed:
                flag_set(failed)
                continue
            _knn_one(Q + i * d, T, start, end, lo, hi, d, first_leaf, metric, k, st)
            if votes == NULL:
                out_cnt[i] = _finish(st, k, perm, yt, out_key + i * cap, out_idx + i * cap,
                                     out_lab + i * cap if out_lab != NULL else NULL, cap,
                                     over + i if over != NULL else NULL)
            elif not st.failed:
                v = votes + i * nc
                for c in range(nc):
                    v[c] = 0
                for c in range(st.hs + st.n_ties):
                    code = yt[st.hi[c]] if c < st.hs else yt[st.ties[c - st.hs].idx]
                    if code < 0 or code >= nc:
                        flag_set(bad)
                        break
                    v[code] += 1
                out_cnt[i] = st.hs + st.n_ties
                pred[i] = majority(v, nc, default)
            if wk != NULL:
                wk[2 * i] = st.n_keys
                wk[2 * i + 1] = st.n_bounds
            if st.failed:
                flag_set(failed)
        _free_state(st)
    return 1 if failed[0] else 2 * bad[0]


def knn(const floating[:, ::1] Q, const floating[:, ::1] Tt, const intp_t[::1] perm,   # IN
        const intp_t[::1] start, const intp_t[::1] end,                                 # IN tree
        const floating[:, ::1] lo, const floating[:, ::1] hi,                           # IN boxes
        int metric, intp_t k, intp_t cap,
        double[:, ::1] out_key, intp_t[:, ::1] out_idx,                                 # OUT (nq, cap)
        intp_t[::1] out_cnt,                                                            # OUT k'
        int n_threads,
        const intp_t[::1] ytree=None, intp_t[:, ::1] out_lab=None,                     # IN / OUT labels
        intp_t[:, ::1] out_work=None, bint keep_over=False, intp_t widen=0):           # OUT work / over
    """The notes' k' nearest points of every query (see the module doc): the first ``cap``
    sorted by (exact key, original index) in ``out_key`` / ``out_idx`` (padded with inf /
    -1), and k' in ``out_cnt`` (a query with k' > cap must be asked again with cap >= k',
    unless ``keep_over``). With ``ytree`` (the points' labels in tree order, ``y[perm]``)
    and ``out_lab`` (nq, cap), the labels of the written points too (padded with -1): read
    from the tree-ordered copy, near each other, rather than from y at scattered original
    indices.

    ``out_work`` (nq, 2): the keys and the box bounds each query's search computed (its
    work, deterministic: the same for any thread count). With ``keep_over``, the whole
    results of the queries with k' > cap are kept from the same search (none is searched
    again) and returned: when the largest k' is at most ``widen``, as ``("padded", keys,
    indices, labels or None)``, every query's row padded (inf / -1) to that width; else as
    ``("csr", rows, indptr, keys, indices, labels or None)``, query ``rows[j]``'s k' points
    at ``indptr[j] .. indptr[j + 1] - 1``; both sorted as above. None when no query has
    k' > cap, or without ``keep_over``."""
    cdef intp_t nq = Q.shape[0], m = Tt.shape[0], d = Tt.shape[1]
    cdef intp_t n_nodes = start.shape[0], depth, i, j, c, n_over, total, width
    cdef const intp_t *yt = NULL
    cdef intp_t *wk = NULL
    cdef Entry **over = NULL
    cdef Entry *o
    cdef intp_t[::1] o_rows, o_ptr, o_idx, o_lab
    cdef double[::1] o_key
    cdef double[:, ::1] w_key
    cdef intp_t[:, ::1] w_idx, w_lab
    cdef int failed[1]
    if (ytree is None) != (out_lab is None):
        raise ValueError("knn: give both ytree and out_lab, or neither")
    if ytree is not None:
        if ytree.shape[0] != Tt.shape[0] or out_lab.shape[0] != nq or out_lab.shape[1] != cap:
            raise ValueError("knn: bad label shapes")
        yt = &ytree[0]
    if out_work is not None and (out_work.shape[0] != nq or out_work.shape[1] != 2):
        raise ValueError("knn: bad out_work shape")
    if nq == 0:
        return None
    if out_work is not None:
        wk = &out_work[0, 0]
    depth = _check_tree("knn", Q.shape[1], m, d, perm.shape[0], n_nodes, end.shape[0],
                        lo.shape[0], lo.shape[1], hi.shape[0], hi.shape[1], metric)
    if out_key.shape[0] != nq or out_idx.shape[0] != nq or out_cnt.shape[0] != nq \
            or out_key.shape[1] != cap or out_idx.shape[1] != cap:
        raise ValueError("knn: bad shapes")
    if k < 1 or cap < 1 or k > m:
        raise ValueError("knn: bad k/cap")
    if keep_over:
        over = <Entry **> calloc(nq, sizeof(Entry *))
        if over == NULL:
            raise MemoryError("kdtree.knn: out of memory")
    with nogil:
        failed[0] = _search_all(&Q[0, 0], nq, &Tt[0, 0], &perm[0], &start[0], &end[0], &lo[0, 0],
                                &hi[0, 0], d, depth, metric, k, n_threads, &out_cnt[0], wk, yt,
                                &out_key[0, 0], &out_idx[0, 0], &out_lab[0, 0] if yt != NULL else NULL,
                                cap, over, NULL, 0, 0, NULL)
    if failed[0] or not keep_over:
        if over != NULL:
            for i in range(nq):
                free(over[i])
            free(over)
        if failed[0]:
            raise MemoryError("kdtree.knn: could not allocate the per-thread buffers")
        return None
    n_over = 0
    total = 0
    width = cap
    with nogil:
        for i in range(nq):
            if over[i] != NULL:
                n_over += 1
                total += out_cnt[i]
                if out_cnt[i] > width:
                    width = out_cnt[i]
    if n_over == 0:
        free(over)
        return None
    if width <= widen:
        # every row padded to the largest k', in one pass
        K = np.empty((nq, width), dtype=np.float64)
        P = np.empty((nq, width), dtype=np.intp)
        L = np.empty((nq, width), dtype=np.intp) if yt != NULL else None
        w_key, w_idx = K, P
        if yt != NULL:
            w_lab = L
        with nogil:
            for i in range(nq):
                o = over[i]
                if o == NULL:
                    memcpy(&w_key[i, 0], &out_key[i, 0], cap * sizeof(double))
                    memcpy(&w_idx[i, 0], &out_idx[i, 0], cap * sizeof(intp_t))
                    if yt != NULL:
                        memcpy(&w_lab[i, 0], &out_lab[i, 0], cap * sizeof(intp_t))
                    c = cap
                else:
                    for c in range(out_cnt[i]):
                        w_key[i, c] = o[c].key
                        w_idx[i, c] = o[c].idx
                        if yt != NULL:
                            w_lab[i, c] = yt[o[c].pos]
                    c = out_cnt[i]
                    free(o)
                for c in range(c, width):
                    w_key[i, c] = INFINITY
                    w_idx[i, c] = -1
                    if yt != NULL:
                        w_lab[i, c] = -1
            free(over)
        return "padded", K, P, L
    rows = np.empty(n_over, dtype=np.intp)
    ptr = np.zeros(n_over + 1, dtype=np.intp)
    keys = np.empty(total, dtype=np.float64)
    idx = np.empty(total, dtype=np.intp)
    lab = np.empty(total, dtype=np.intp) if yt != NULL else None
    o_rows, o_ptr, o_key, o_idx = rows, ptr, keys, idx
    if yt != NULL:
        o_lab = lab
    j = 0
    with nogil:
        for i in range(nq):
            o = over[i]
            if o == NULL:
                continue
            o_rows[j] = i
            for c in range(out_cnt[i]):
                o_key[o_ptr[j] + c] = o[c].key
                o_idx[o_ptr[j] + c] = o[c].idx
                if yt != NULL:
                    o_lab[o_ptr[j] + c] = yt[o[c].pos]
            o_ptr[j + 1] = o_ptr[j] + out_cnt[i]
            j += 1
            free(o)
        free(over)
    return "csr", rows, ptr, keys, idx, lab


def knn_votes(const floating[:, ::1] Q, const floating[:, ::1] Tt, const intp_t[::1] perm,  # IN
              const intp_t[::1] start, const intp_t[::1] end,                                # IN tree
              const floating[:, ::1] lo, const floating[:, ::1] hi,                          # IN boxes
              int metric, intp_t k,
              const intp_t[::1] ytree,                 # IN the points' class codes in tree order
              intp_t[:, ::1] out_votes,                # OUT (nq, n_classes): taken points per class
              intp_t[::1] out_cnt,                     # OUT k'
              intp_t default, intp_t[::1] out_pred,    # IN the tie's class / OUT the vote's class
              int n_threads, intp_t[:, ::1] out_work=None):
    """The class counts of every query's k' nearest points (the same search as :func:`knn`,
    the same points), for a vote that only counts them (uniform weights): nothing is sorted
    or written per point, so results of many tied points (duplicates) cost no more than
    their search. ``out_pred``: 000's majority vote on them, the class with the most points
    or ``default`` when several tie for the most (``_knn.vote_uniform``'s rule). ``out_work``
    as in :func:`knn`."""
    cdef intp_t nq = Q.shape[0], m = Tt.shape[0], d = Tt.shape[1], nc = out_votes.shape[1]
    cdef intp_t n_nodes = start.shape[0], depth
    cdef intp_t *wk = NULL
    cdef int failed[1]
    depth = _check_tree("knn_votes", Q.shape[1], m, d, perm.shape[0], n_nodes, end.shape[0],
                        lo.shape[0], lo.shape[1], hi.shape[0], hi.shape[1], metric)
    if ytree.shape[0] != m or out_votes.shape[0] != nq or out_cnt.shape[0] != nq or nc < 1 \
            or out_pred.shape[0] != nq:
        raise ValueError("knn_votes: bad shapes")
    if k < 1 or k > m:
        raise ValueError("knn_votes: bad k")
    if out_work is not None:
        if out_work.shape[0] != nq or out_work.shape[1] != 2:
            raise ValueError("knn_votes: bad out_work shape")
        if nq:
            wk = &out_work[0, 0]
    if nq == 0:
        return
    with nogil:
        failed[0] = _search_all(&Q[0, 0], nq, &Tt[0, 0], &perm[0], &start[0], &end[0], &lo[0, 0],
                                &hi[0, 0], d, depth, metric, k, n_threads, &out_cnt[0], wk, &ytree[0],
                                NULL, NULL, NULL, 0, NULL, &out_votes[0, 0], nc, default, &out_pred[0])
    if failed[0] == 2:
        raise ValueError("knn_votes: a class code is out of range")
    if failed[0]:
        raise MemoryError("kdtree.knn_votes: could not allocate the per-thread buffers")


cdef void _radius_one(const floating *q, const floating *T, const intp_t *perm,
                      const intp_t *start, const intp_t *end,
                      const floating *lo, const floating *hi, intp_t d, intp_t first_leaf,
                      int metric, double thr, KState *st) noexcept nogil:
    """Every point with key <= thr into st.ties (unsorted)."""
    cdef intp_t top, node, l, j0, n, c
    st.n_ties = 0
    st.stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = st.stack[top]
        if box_bound(q, lo + node * d, hi + node * d, d, metric) > thr:
            continue
        if node < first_leaf:
            l = 2 * node + 1
            st.stack[top] = l + 1
            st.stack[top + 1] = l
            top += 2
            continue
        j0 = start[node]
        while j0 < end[node]:
            n = _chunk_keys(q, T, start[node], end[node], j0, d, metric, st.keys)
            for c in range(n):
                if st.keys[c] <= thr:
                    _add_tie(st, st.keys[c], perm[j0 + c])
            j0 += n
        if st.failed:
            return


def radius(const floating[:, ::1] Q, const floating[:, ::1] Tt, const intp_t[::1] perm,  # IN
           const intp_t[::1] start, const intp_t[::1] end,                                # IN tree
           const floating[:, ::1] lo, const floating[:, ::1] hi,                          # IN boxes
           int metric, double thr,
           intp_t[::1] indptr,            # OUT counts (fill False) / IN offsets, nq + 1 (fill True)
           intp_t[::1] out_idx, double[::1] out_key,   # OUT (fill True): indptr[nq] entries
           bint fill, int n_threads,
           const double[::1] thr_q=None):      # IN  optional: query i's own threshold
    """Every training point with exact key <= ``thr`` (or ``thr_q[i]`` for query i when
    given), per query: with ``fill`` False the counts go to ``indptr[1:]``; with ``fill``
    True (``indptr`` the CSR offsets of those counts) the points are written, each query's
    sorted by (key, original index)."""
    cdef intp_t nq = Q.shape[0], m = Tt.shape[0], d = Tt.shape[1]
    cdef intp_t n_nodes = start.shape[0], depth, first_leaf, i, c, n
    cdef const double *tq = NULL
    cdef KState *st
    cdef int failed[1]
    cdef int changed[1]
    if indptr.shape[0] != nq + 1:
        raise ValueError("radius: bad indptr")
    if thr_q is not None:
        if thr_q.shape[0] != nq:
            raise ValueError("radius: bad thr_q")
        if nq:
            tq = &thr_q[0]
    if nq == 0:
        return
    depth = _check_tree("radius", Q.shape[1], m, d, perm.shape[0], n_nodes, end.shape[0],
                        lo.shape[0], lo.shape[1], hi.shape[0], hi.shape[1], metric)
    if fill and (indptr[0] != 0 or out_idx.shape[0] < indptr[nq] or out_key.shape[0] < indptr[nq]):
        raise ValueError("radius: bad output sizes")
    first_leaf = (<intp_t> 1 << depth) - 1
    n_threads = threads_for(n_threads, nq, 1)
    failed[0] = 0
    changed[0] = 0
    st = NULL
    with nogil, parallel(num_threads=n_threads):
        st = _new_state(1, 2 * depth + 2)
        for i in prange(nq, schedule="dynamic", chunksize=16):
            if st == NULL or st.failed:
                flag_set(failed)
                continue
            _radius_one(&Q[i, 0], &Tt[0, 0], &perm[0], &start[0], &end[0], &lo[0, 0], &hi[0, 0],
                        d, first_leaf, metric, tq[i] if tq != NULL else thr, st)
            if st.failed:
                flag_set(failed)
                continue
            n = st.n_ties
            if not fill:
                indptr[i + 1] = n
            elif n != indptr[i + 1] - indptr[i]:
                flag_set(changed)
            else:
                if n > 1:       # st.ties is NULL until a first tie, and qsort takes no NULL
                    qsort(st.ties, n, sizeof(Pair), cmp_pair)
                for c in range(n):
                    out_key[indptr[i] + c] = st.ties[c].key
                    out_idx[indptr[i] + c] = st.ties[c].idx
        _free_state(st)
    if changed[0]:
        raise RuntimeError("kdtree.radius: counts changed between the two passes")
    if failed[0]:
        raise MemoryError("kdtree.radius: could not allocate the per-thread buffers")


def query_order(const floating[:, ::1] Q, const intp_t[::1] split_dim,                 # IN
                const double[::1] split_val,                                            # IN
                intp_t[::1] order,                                                      # OUT
                int n_threads):
    """A search order of the queries for cache locality: by the leaf each query reaches
    descending to child ``2n + 1 + (q[split_dim[n]] > split_val[n])`` from every internal
    node n, leaves in tree order, queries of one leaf in their own order (a counting sort:
    deterministic). Any order gives the same results; this one makes consecutive queries
    visit the same leaves."""
    cdef intp_t nq = Q.shape[0], d = Q.shape[1], first_leaf = split_dim.shape[0]
    cdef intp_t n_leaves, i, node, c, f
    cdef intp_t *leaf
    cdef intp_t *count
    if split_val.shape[0] != first_leaf or order.shape[0] != nq:
        raise ValueError("query_order: bad shapes")
    n_leaves = first_leaf + 1
    if n_leaves & first_leaf:
        raise ValueError("query_order: the split arrays must describe a complete binary tree")
    for node in range(first_leaf):
        f = split_dim[node]
        if f < 0 or f >= d:
            raise ValueError("query_order: split feature out of range")
    if nq == 0:
        return
    leaf = <intp_t *> malloc(nq * sizeof(intp_t))
    count = <intp_t *> malloc((n_leaves + 1) * sizeof(intp_t))
    if leaf == NULL or count == NULL:
        free(leaf)
        free(count)
        raise MemoryError("query_order: out of memory")
    with nogil:
        for i in prange(nq, schedule="static", num_threads=threads_for(n_threads, nq, 4096)):
            node = 0
            while node < first_leaf:
                node = 2 * node + 1 + (<double> Q[i, split_dim[node]] > split_val[node])
            leaf[i] = node - first_leaf
        for c in range(n_leaves + 1):
            count[c] = 0
        for i in range(nq):
            count[leaf[i] + 1] += 1
        for c in range(n_leaves):
            count[c + 1] += count[c]
        for i in range(nq):
            order[count[leaf[i]]] = i
            count[leaf[i]] += 1
    free(leaf)
    free(count)


def box_bound_of(const floating[::1] q, const floating[::1] lo, const floating[::1] hi, int metric):
    """:func:`box_bound` of one query and one box (a test hook)."""
    if lo.shape[0] != q.shape[0] or hi.shape[0] != q.shape[0] or q.shape[0] == 0:
        raise ValueError("box_bound_of: bad shapes")
    if metric not in (SQEUCLIDEAN, MANHATTAN, HAMMING):
        raise ValueError("box_bound_of: unknown metric code")
    return box_bound(&q[0], &lo[0], &hi[0], q.shape[0], metric)
