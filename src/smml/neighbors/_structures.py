"""The k-NN search's data structures: the exact kd-tree built at fit (and the one-leaf
'tree' of the exact brute-force scan), the taken points of a block of queries (:class:`_Taken`,
CSR or padded rows), the Mahalanobis operands (:class:`_Scaled` and the rigorous bound of the
transform's rounding) and the radius threshold of ``radius_neighbors``. Used by the search
(``smml.neighbors._search``); see the package docstring for the rules.
"""
from __future__ import annotations

import numpy as np

from smml._core import _kdtree
from smml._threads import threads_for

_BUILD_GRAIN = 1 << 15          # kd-tree build: training points worth a thread of their own


def _build_tree(T0, leaf_size, n_threads):
    """The kd-tree of ``smml._core._kdtree`` over the rows of T0: (Tb, perm, start, end, lo, hi),
    Tb the rows in tree order with every leaf's points feature-major (``_kdtree.leaf_blocks``).

    Depth: the least with ceil(m / 2^depth) <= leaf_size, so on distinct values every
    leaf holds floor(m / 2^depth) >= 1 or ceil(m / 2^depth) <= leaf_size points (a split
    never separates equal values of its feature, so duplicates make leaves uneven). Extra memory: a
    reordered copy of T0 (two while building), m indices and 2^(depth+1) - 1 < 4 m /
    leaf_size nodes of 2 indices and 2 d-vectors.
    """
    m, d = T0.shape
    depth = 0
    while -(-m // (1 << depth)) > leaf_size:
        depth += 1
    n_nodes = (2 << depth) - 1
    Tt = np.array(T0, order="C", copy=True)
    perm = np.arange(m, dtype=np.intp)
    start = np.empty(n_nodes, dtype=np.intp)
    end = np.empty(n_nodes, dtype=np.intp)
    lo = np.empty((n_nodes, d), dtype=T0.dtype)
    hi = np.empty((n_nodes, d), dtype=T0.dtype)
    _kdtree.build(Tt, perm, depth, start, end, lo, hi, threads_for(n_threads, m, _BUILD_GRAIN))
    Tb = np.empty_like(Tt)
    _kdtree.leaf_blocks(Tt, start, end, Tb, n_threads)
    return Tb, perm, start, end, lo, hi


def _split_planes(lo, hi):
    """(feature, value) of each internal node of a tree of :func:`_build_tree`: the feature
    of largest spread of its box (the one it was split on) and the middle of the gap
    between its children along it (for ``_kdtree.query_order``, where only speed depends
    on them). Duplicates can leave a node empty (box lo = +inf, hi = -inf): the value is
    then the other child's side, or 0 when both are empty."""
    n_int = lo.shape[0] // 2
    spread = hi[:n_int].astype(np.float64) - lo[:n_int]
    dim = np.argmax(spread, axis=1).astype(np.intp)
    left = 2 * np.arange(n_int) + 1
    a = hi[left, dim].astype(np.float64)
    b = lo[left + 1, dim].astype(np.float64)
    fa, fb = np.isfinite(a), np.isfinite(b)
    val = np.where(fa, a, np.where(fb, b, 0.0))
    both = fa & fb
    val[both] = a[both] / 2 + b[both] / 2
    return dim, val


def _leaf_size(d):
    """Points per kd-tree leaf: 16 d within [32, 128]. Measured (``bench/bench_knn.py
    --leaf``, bench/README.md) with the leaves' keys computed several points at a time:
    32-64 best at d = 2-4, 128 at d = 8 (a leaf's keys cost less than the box bounds that
    smaller leaves would add)."""
    return int(min(128, max(32, 16 * d)))


def _column_range(A):
    """(min, max) of each column of A (n x d, C order). With few columns numpy's axis-0
    reduction walks rows of d elements (0.7 ms each on 20,000 x 2); the transposed copy
    reduces along contiguous rows instead."""
    if A.shape[1] < 16 and A.shape[0] > 64:
        At = np.ascontiguousarray(A.T)
        return At.min(axis=1), At.max(axis=1)
    return A.min(axis=0), A.max(axis=0)


def _flat_tree(T0):
    """A depth-0 'tree' over T0 in its own order (a feature-major copy of T0): the exact
    brute-force scan of ``radius_neighbors`` and of k-NN without the gemm filter."""
    m, d = T0.shape
    lo, hi = _column_range(T0)
    # one leaf of all m rows, stored feature-major (see _kdtree.leaf_blocks)
    return (np.ascontiguousarray(T0.T).reshape(m, d), np.arange(m, dtype=np.intp),
            np.array([0], dtype=np.intp), np.array([m], dtype=np.intp), lo[None, :], hi[None, :])


def _csr_skeleton(counts, key, idx, skip_rows=None):
    """CSR (indptr, indices, keys) of the first ``counts[i]`` entries of row i of the padded
    (key, idx) arrays; the entries of the rows ``skip_rows`` are left for the caller to fill."""
    nb = counts.shape[0]
    indptr = np.zeros(nb + 1, dtype=np.intp)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(indptr[-1], dtype=np.intp)
    keys = np.empty(indptr[-1], dtype=np.float64)
    use = counts.copy()
    if skip_rows is not None:
        use[skip_rows] = 0
    r, c = np.nonzero(np.arange(key.shape[1]) < use[:, None])
    pos = indptr[r] + c
    indices[pos] = idx[r, c]
    keys[pos] = key[r, c]
    return indptr, indices, keys


def _csr(counts, key, idx, extra_rows=None, extra_key=None, extra_idx=None):
    """CSR (indptr, indices, keys) of the first ``counts[i]`` entries of row i of the padded
    (key, idx) arrays, taken from (extra_key, extra_idx) for the rows ``extra_rows``."""
    indptr, indices, keys = _csr_skeleton(counts, key, idx, extra_rows)
    if extra_rows is not None and extra_rows.size:
        r, c = np.nonzero(np.arange(extra_key.shape[1]) < counts[extra_rows][:, None])
        pos = indptr[extra_rows[r]] + c
        indices[pos] = extra_idx[r, c]
        keys[pos] = extra_key[r, c]
    return indptr, indices, keys


def _mahalanobis_error_coef(L, M):
    """c such that c (||q~|| + max ||x~||)^2 rigorously bounds |a - E| for every query q and
    training point x: a the Euclidean key of the transformed rows z = fl(x~ L) (x~ = (x - mu)
    / s, in float64: the search's dtype for Mahalanobis), E the exact Mahalanobis key (x - q)^T VI (x - q) computed as
    defined (``_knn.mahalanobis_pairs``), M = s^2 VI, L L^T ~ M (an eigendecomposition).

    With S = ||x~|| + ||q~|| (>= ||(x - q) / s||), u = 2^-53, lam = ||L||_F^2 (>= ||L||_2^2)
    and c_t = (d + 4.01) u:
    - the transform: ||z_x - (x~ L)|| <= c_t ||x~|| ||L||_F (the centring and the d-term dot
      products in float64), so the squared distance of the
      rounded rows is within (2 c_t + c_t^2) lam S^2 of that of the exact ones;
    - the factorisation: |delta^T (L L^T - M) delta| <= ||L L^T - M||_F S^2 (measured, plus
      the rounding of the measurement, 2 (d + 2) u lam + 2 u ||M||_F);
    - E's own rounding (d^2 products and sums, the rounded differences): (d^2 + 3) u |M|_F S^2;
    - a's rounding (d squared differences summed in float64): (d + 4) u lam (1 + c_t)^2 S^2.
    The sum, doubled."""
    d = L.shape[0]
    u = 2.0 ** -53
    lam = float(np.sum(L * L))
    m_norm = float(np.linalg.norm(M))
    ct = (d + 3) * u + 1.01 * u
    resid = float(np.linalg.norm(L @ L.T - M)) * 1.01 + 2 * (d + 2) * u * lam + 2 * u * m_norm
    total = (resid + (d * d + 3) * u * m_norm + (2 * ct + ct * ct) * lam
             + (d + 4) * u * lam * (1 + ct) ** 2)
    return 2.0 * total


class _Scaled:
    """Mahalanobis rows as the exact keys read them: ``X`` = rows / s (float64, C order; s a
    power of two, so exactly the rows scaled) and ``radius`` = ||X - mu / s|| (the filter's
    error bound grows with it)."""

    __slots__ = ("X", "radius")

    def __init__(self, X, radius):
        self.X, self.radius = X, radius

    @classmethod
    def of(cls, A, scale, mu_s):
        """(the rows A as a _Scaled, their centred rows X - mu / s for the transform)."""
        X = np.ascontiguousarray(A, dtype=np.float64)
        if scale != 1.0:
            X = X / scale
        C = X - mu_s
        return cls(X, np.sqrt(np.einsum("ij,ij->i", C, C))), C


def _padded(taken):
    """(idx, key) of a :class:`_Taken` as padded rows (width: the largest count; -1 / inf)."""
    indptr, idx, key = taken.csr()
    counts = np.diff(indptr)
    width = max(1, int(counts.max()) if counts.size else 1)
    P = np.full((counts.size, width), -1, dtype=np.intp)
    K = np.full((counts.size, width), np.inf)
    r = np.repeat(np.arange(counts.size), counts)
    c = np.arange(idx.size) - indptr[r]
    P[r, c] = idx
    K[r, c] = key
    return P, K


class _Taken:
    """The taken points (the notes' k' closest) of a block of queries.

    ``counts[i]`` = k' of query i. When every query's points fit the kernel's padded rows,
    ``key`` / ``idx`` are those (n_queries, width) rows (sorted by (key, index), padded
    with inf / -1) and the compiled vote can read them; otherwise they are None. ``lab``
    (the kd-tree's classifiers) holds the class codes of ``idx`` in the same layout, or
    None. ``csr()`` gives (indptr, indices, keys) in every case but one: a counts-only vote
    (``_kdtree.knn_votes``) gives ``votes`` ((n_queries, n_classes) class counts of the taken
    points), ``pred`` (the vote's class codes) and ``counts``, nothing per point.
    """

    def __init__(self, counts, key=None, idx=None, csr=None, lab=None, votes=None, pred=None):
        self.counts, self.key, self.idx, self._csr, self.lab = counts, key, idx, csr, lab
        self.votes, self.pred = votes, pred

    def csr(self):
        if self._csr is None:
            self._csr = _csr(self.counts, self.key, self.idx)
        return self._csr


def _with_over(counts, key, idx, lab, over):
    """The :class:`_Taken` of a kd-tree search (``_kdtree.knn`` with ``keep_over``) of which
    some queries had more than ``cap`` (the padded rows' width) points: ``over`` is the
    kernel's ("padded", key, idx, lab) or ("csr", rows, indptr, keys, indices, labels)."""
    if over[0] == "padded":
        return _Taken(counts, over[1], over[2], lab=over[3])
    rows, ptr, okey, oidx = over[1:5]
    indptr, indices, keys = _csr_skeleton(counts, key, idx, rows)
    pos = np.repeat(indptr[rows] - ptr[:-1], np.diff(ptr)) + np.arange(ptr[-1])
    indices[pos] = oidx
    keys[pos] = okey
    return _Taken(counts, csr=(indptr, indices, keys))


def _sqrt_threshold(r):
    """The largest double K with fl(sqrt(K)) <= r: fl(sqrt(key)) <= r  <=>  key <= K
    (sqrt is correctly rounded, hence monotone). Keys stay below ``_MAX_KEY`` = 1e300, whose
    root is 1e150: any r above that takes every point (K = inf)."""
    if r > 1e151:
        return np.inf
    K = r * r
    while K > 0 and np.sqrt(K) > r:
        K = np.nextafter(K, -np.inf)
    while np.sqrt(np.nextafter(K, np.inf)) <= r:
        K = np.nextafter(K, np.inf)
    return float(K)
