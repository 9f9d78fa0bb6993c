"""The k-means loop of 001 ("Clustering and the k-means algorithm"), written once for two drivers.

:class:`smml.cluster.KMeans` runs it in process on all the rows; :class:`smml.dask.KMeans`
runs it on groups of consecutive rows held by a cluster's workers. Any smml module may
import this one (a ground-floor module): it holds what both need, and nothing of either.

The loop (:func:`lloyd_loop`) is a generator of requests: it yields ``(name, args)`` and
is sent the request's result, the same whatever holds the rows. The requests:

- ``"start", (cent,)``: a new run from the centroids ``cent``; no labels yet. Result ignored.
- ``"lloyd", (cent,)``: one Lloyd iteration from ``cent``: the assignment step on exact
  distances, every block's partial sums, their merge in block order and the update step.
  Result ``(cent_new, J, n_changed, n_empty, W)``: W the clusters' merged weights.
- ``"sqdist", (C,)``: the exact squared distance of every row to its centroid in C, with
  the labels, rows in order. Result ``(dist, labels, positive)``: ``positive`` the rows of
  positive sample weight (None: every row). ``labels`` may be changed by the loop.
- ``"recompute", (moves, cent_old)``: ``moves`` [(row, cluster), ...] relabel rows (the
  re-seeding), then the update step again from ``cent_old``. Result ``(cent_new, n_empty)``.
- ``"assign", (cent, reassign)``: the final assignment step (labels only if ``reassign``)
  and J computed exactly. Result ``(labels, inertia)``.

A centroid triple ``cent`` is ``(C, Cg, cn)``: the centroids in the compute dtype, their
gemm twin fl(C - m) (C itself when the model is not centred) and the twin's squared norms
(:func:`gemm_centroids`). A driver answers the requests: :func:`run_in_process` with an
:class:`InProcess` group (the kernel's fused iteration over every row) here; smml.dask
fans each request out to its groups and merges their partial sums in block order
(``_kmeans.update_from_blocks``), which gives the same bits.
"""
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from smml._core import _kmeans
from smml._core._sums import row_norms_sq
from smml._gemm_bounds import centre as _centre

__all__ = ["CHUNK_ROWS", "BLOCK_ROWS", "MIN_BLOCKS", "ACC_BUDGET", "GRAIN", "MAX_NORM_SQ", "GEMM_LIMIT32",
           "FAST_TILE", "BOUNDS_MIN_K", "BOUNDS_MIN_WORK", "BOUNDS_MAX_D", "GROUP_SIZE", "GROUPS_MIN_K",
           "GROUPS_MIN_D", "use_bounds", "group_count", "centroid_groups", "block_rows",
           "acc_width", "acc_weights", "check_norms", "centring", "init_array", "n_runs", "Operands", "gemm_centroids",
           "move_to_empty", "warn_empty", "lloyd_loop", "InProcess", "run_in_process"]

# Kernel layout (smml.cluster keeps its own copies, which its tests change)
CHUNK_ROWS = 256             # rows per gemm tile
BLOCK_ROWS = 4096            # rows per block of partial sums (fixed: results do not depend on threads)
MIN_BLOCKS = 32              # fewer rows per block on small data, so that threads share the blocks evenly
ACC_BUDGET = 1 << 22         # at most this many float64 partial sums (n_blocks x acc_width(k, d))
GRAIN = 1 << 18              # multiply-adds (rows x clusters x features) worth a thread
MAX_NORM_SQ = 1e298          # squared norms above this could overflow the float64 distances
GEMM_LIMIT32 = 1e34          # float32 data with squared norms above this is computed in float64
FAST_TILE = True             # the packed-panel AVX2 tile where the CPU has it (else the BLAS tile)
BOUNDS_MIN_K = 64            # distance bounds (Hamerly's test) from this many clusters,
BOUNDS_MIN_WORK = 1280       # when a row's tile costs k (d + 8) >= this,
BOUNDS_MAX_D = 100_000       # up to this many features (the bounds' slack assumes it)
GROUP_SIZE = 16              # centroids per group of the group bounds (Yinyang's test)
GROUPS_MIN_K = 256           # group bounds from this many clusters
GROUPS_MIN_D = 64            # and this many features


def use_bounds(k, d, min_k=BOUNDS_MIN_K, min_work=BOUNDS_MIN_WORK, max_d=BOUNDS_MAX_D):
    """Whether the in-process loop keeps distance bounds (two float32 per row) to skip the
    rows they prove still nearest to their centroid. A skipped row saves its tile row,
    about k (d + 8) operations; every row pays the test, and a computed row the second
    smallest distance, its two bounds and its gather. Interleaved A/B, 100,000 rows, 20
    iterations (bench/cluster.md): the bounds lose at k <= 32 (0.64x at d = 2, k = 16;
    0.75x at d = 16, k = 32) and at k = 64 with d <= 8 (0.85x at d = 2), gain from k = 64,
    d = 16 (1.4x) and k = 128, d = 2 (1.5x) up to 2x (k = 64, d = 256)."""
    return k >= min_k and k * (d + 8) >= min_work and d <= max_d


def group_count(k, d, size=GROUP_SIZE, min_k=GROUPS_MIN_K, min_d=GROUPS_MIN_D):
    """Groups of the group bounds (Yinyang's test, ``_kmeans._row_groups``) for k clusters of d
    features: one per ``size`` centroids from ``min_k`` clusters and ``min_d`` features, else 0
    (Hamerly's single bound). A row keeps that many float32 bounds instead of one. A row that
    fails the test is computed against the groups its bound reaches, one tile row each, instead
    of one tile row of every centroid: that pays where a row's distances cost much.
    ``bench/ab_kmeans_bounds.py --groups`` (100,000 rows, 20 iterations, 2 threads, k // 16
    groups forced on; bench/cluster.md): Hamerly's time / the groups' 1.19-1.62 (float32) and
    1.49-1.95 (float64) at k = 256, d = 64..256; at k = 128 0.91-1.09 (float32), 1.06-1.30
    (float64); 0.43-0.97 at d <= 32 or k = 64 (float32), where the test and the group loops cost
    more than the tile rows they save."""
    return k // size if k >= min_k and d >= min_d else 0


def centroid_groups(C, t, iters=5):
    """Each centroid's group (int32, 0 .. t' - 1, t' <= t: a group left empty is dropped and the
    others renumbered in order): ``iters`` Lloyd iterations on the k centroids themselves from
    t of them evenly spaced by index, so that a group holds neighbouring centroids (its bound
    then moves by their largest drift only). Depends on C alone; the labels of the fit do not
    depend on the groups at all."""
    C = np.asarray(C, dtype=np.float64)
    k = len(C)
    G = C[np.linspace(0, k - 1, t).round().astype(np.intp)].copy()
    cn = np.einsum("ij,ij->i", C, C)
    gid = np.zeros(k, dtype=np.intp)
    for _ in range(iters):
        D = cn[:, None] - 2.0 * C @ G.T + np.einsum("ij,ij->i", G, G)[None, :]
        gid = D.argmin(1)
        for g in range(t):
            members = gid == g
            if members.any():
                G[g] = C[members].mean(0)
    return np.unique(gid, return_inverse=True)[1].astype(np.int32).reshape(k)


def block_rows(n, k, d, base=BLOCK_ROWS, chunk=CHUNK_ROWS, budget=ACC_BUDGET, min_blocks=MIN_BLOCKS):
    """Rows per block: ``base``, fewer on small data (the fewest whole chunks that cut the n
    rows into at most ``min_blocks`` blocks, when that is under ``base``), more when
    n_blocks x :func:`acc_width` would pass the budget; a multiple of ``chunk``. Depends on the
    shapes only, never on the thread count.

    Blocks are the unit of work of a thread (dynamic schedule): 20,000 rows in blocks of
    4,096 were 5 blocks, 3 on one thread and 2 on the other, a 2-thread iteration a fifth
    longer than an even split; 27 blocks of 768 rows (14 and 13): under 4% longer."""
    max_blocks = max(1, budget // acc_width(k, d))
    rows = max(min(base, -(-n // min_blocks)), -(-n // max_blocks), 1)
    return int(-(-rows // chunk) * chunk)


def acc_width(k, d):
    """Doubles of one block's partial sums: k records [S_j (d) | W_j | Q_j | zeros] of
    ``_kmeans.record_width(d)`` doubles (d + 2 rounded up to a multiple of 4)."""
    return k * _kmeans.record_width(d)


def acc_weights(row, d):
    """The clusters' weights W_j (a copy) from a row of partial sums (:func:`acc_width`)."""
    return row[d::_kmeans.record_width(d)].copy()       # a row of k records: k weights


def check_norms(top, limit=MAX_NORM_SQ):
    """Raise if the largest squared row norm ``top`` could overflow the float64 distances."""
    if not top < limit:
        raise ValueError(f"KMeans: the squared distances overflow float64 (a row has squared norm "
                         f"{top:.3g}); rescale the features")


def centring(mean, mean_norm, top, dtype, gemm_limit32=GEMM_LIMIT32):
    """The training data's centring: ``(shift, round32, compute dtype)``.

    The gemm runs on X - m (m = ``mean``, the float64 column means) when the offset
    ||m||^2 exceeds the spread ``mean_norm`` - ||m||^2 (float64 data; ``mean_norm`` the
    mean squared row norm) or 64 times the spread (float32 data). Centred float32 data is
    computed in float64, and so is float32 data whose largest squared norm ``top`` passes
    ``gemm_limit32``. ``shift`` is the mean (None: not centred)."""
    offset = float(mean @ mean)
    spread = mean_norm - offset
    centre = offset > (1.0 if dtype == np.float64 else 64.0) * spread
    round32 = dtype == np.float32 and (centre or not top < gemm_limit32)
    return (mean if centre else None), round32, (np.float64 if round32 else dtype)


def init_array(init, k, d, dtype):
    """The initial centroids given as an array, checked and cast to ``dtype``."""
    C = np.asarray(init)
    if C.dtype.kind not in "biuf" or C.ndim != 2:
        raise ValueError(f"init must be 'random', 'k-means++' or a 2-d numeric array, got {C!r}")
    if C.shape != (k, d):
        raise ValueError(f"init has shape {C.shape}, expected (n_clusters, n_features) = ({k}, {d})")
    C = C.astype(np.float64)
    if not np.all(np.isfinite(C)):
        raise ValueError("init contains NaN or infinity")
    with np.errstate(over="ignore"):
        C = C.astype(dtype)
    if not np.all(np.isfinite(C)):
        raise ValueError(f"init overflows {np.dtype(dtype).name}")
    return C


def n_runs(init, n_init, stacklevel):
    """The number of runs (``n_init``; "auto": 10 for init="random", else 1; an array: 1,
    with a warning at ``stacklevel`` if another count was asked for)."""
    array_init = not isinstance(init, str)
    if n_init == "auto":
        return 10 if (isinstance(init, str) and init == "random") else 1
    if array_init and n_init != 1:
        warnings.warn(f"init is an array of centroids: one run instead of n_init={n_init}",
                      RuntimeWarning, stacklevel=stacklevel)
        return 1
    return n_init


class Operands:
    """What the kernels read for a data set X: the gemm operand Xg (X, or X - m rounded to
    the compute dtype when the model is centred), the raw X and the squared norms of Xg."""

    def __init__(self, X, shift, dtype, xn=None):
        self.X = np.ascontiguousarray(X, dtype=dtype)
        if shift is None:
            self.Xg = self.X
            self.xn = row_norms_sq(self.X) if xn is None else xn
        else:
            self.Xg, self.xn = _centre(self.X, shift, dtype)


def gemm_centroids(C, shift, dtype, round32):
    """The centroid triple (C in the compute dtype, its gemm twin fl(C - m), squared norms
    of the twin); ``round32``: the twin is rounded to float32 first."""
    C = np.ascontiguousarray(C, dtype=dtype)
    if shift is None:
        Cg = C
    else:
        Cg = np.subtract(C, shift, dtype=np.float64)
        if round32:
            Cg = Cg.astype(np.float32)
        Cg = np.ascontiguousarray(Cg, dtype=dtype)
    return C, Cg, row_norms_sq(Cg)


def move_to_empty(labels, cand, members, empty):
    """Give each empty cluster j (in order) the next candidate row, farthest first (``cand``),
    whose cluster keeps at least one other member; ``labels`` and ``members`` are updated in
    place.  Returns the moves [(row, j), ...]."""
    moves, pos = [], 0
    for j in empty:
        while pos < len(cand) and members[labels[cand[pos]]] < 2:
            pos += 1
        if pos == len(cand):
            break
        i = cand[pos]
        pos += 1
        members[labels[i]] -= 1
        members[j] += 1
        labels[i] = j
        moves.append((int(i), int(j)))
    return moves


def warn_empty(k, n_empty):
    """The warning of a fit whose best run ended with ``n_empty`` empty clusters (none if 0);
    its stack level points at the caller of the ``fit`` that calls this."""
    if n_empty:
        warnings.warn(f"KMeans: only {k - n_empty} of n_clusters={k} clusters are non-empty "
                      "(fewer distinct points than clusters?)", ConvergenceWarning, stacklevel=3)


# ---- the loop ---------------------------------------------------------------------------------

def lloyd_loop(cent, max_iter, tol):
    """One run of the notes' loop from the centroid triple ``cent`` (a generator of requests,
    see the module doc). Each iteration: assignment and update ("lloyd"); empty clusters
    re-seeded at the farthest points; stop when no label changed and no point was moved
    (converged), when J decreased by at most ``tol`` times its previous value (tol > 0),
    or after ``max_iter`` iterations; then a final assignment step (labels re-assigned
    unless converged). Returns (C, labels, inertia, path, n_iter, converged, n_empty)."""
    path = []
    converged = False
    n_empty = 0
    it = 0
    yield "start", (cent,)
    while it < max_iter:
        cent_new, J, n_changed, n_empty, W = yield "lloyd", (cent,)
        it += 1
        path.append(J)
        moved = 0
        if n_empty:
            moved, n_empty, cent_new = yield from _reseed(cent, cent_new, W)
        cent = cent_new
        if n_changed == 0 and moved == 0:
            converged = True
            break
        if tol > 0 and len(path) > 1 and path[-2] - J <= tol * path[-2]:
            break
    labels, inertia = yield "assign", (cent, not converged)
    return cent[0], labels, inertia, np.array(path), it, converged, n_empty


def _reseed(cent_old, cent_new, W):
    """The empty clusters (W not positive), in index order, take the points farthest (exact
    distance) from the centroid they were assigned to, farthest first, lowest row on ties,
    skipping points at distance 0 (or of zero weight) and last members; then the means
    again. Returns (points moved, clusters still empty, centroids)."""
    empty = np.flatnonzero(~(W > 0))
    dist, labels, positive = yield "sqdist", (cent_old[0],)
    if positive is None:
        cand = np.flatnonzero(dist > 0)
        members = np.bincount(labels, minlength=len(W))
    else:
        cand = np.flatnonzero(positive & (dist > 0))
        members = np.bincount(labels[positive], minlength=len(W))
    cand = cand[np.lexsort((cand, -dist[cand]))]       # farthest first, lowest index on ties
    moves = move_to_empty(labels, cand, members, empty)
    if not moves:
        return 0, len(empty), cent_new
    cent, still = yield "recompute", (moves, cent_old)
    return len(moves), still, cent


# ---- the in-process driver -----------------------------------------------------------------------

class InProcess:
    """Every row as one group, in this process: each request is one call of the compiled
    kernel (``"lloyd"``: ``_kmeans.lloyd_iter``, assignment, block sums, merge and update in
    one call). Two centroid triples are used in turn (a request writes into the one it
    was not given).

    Parameters: the :class:`Operands`, the sample weights (None: none), the fit's shift
    and float32 rounding, k, rows per block, rows per gemm tile, the fast tile switch, the
    gemm error coefficient and the thread count."""

    def __init__(self, ops, w, shift, round32, k, block, chunk_rows, fast_tile, coef, nt, bounds=None,
                 groups=None):
        self.ops, self.shift, self.round32, self.k = ops, shift, round32, k
        self.bounds = use_bounds(k, ops.X.shape[1]) if bounds is None else bounds
        # bounds per row: Hamerly's one (0) or one per group of centroids (Yinyang's test)
        self.n_groups = (group_count(k, ops.X.shape[1]) if groups is None else groups) if self.bounds else 0
        self.block, self.chunk_rows, self.fast_tile, self.coef, self.nt = block, chunk_rows, fast_tile, coef, nt
        self.wk = np.empty(0) if w is None else w
        self.positive = None if w is None else w > 0
        self.centred = shift is not None
        self.mean = np.zeros(ops.X.shape[1]) if shift is None else shift

    def start(self, cent):
        n, d = self.ops.X.shape
        k = self.k
        n_blocks = -(-n // self.block)
        self.acc = np.empty((n_blocks, acc_width(k, d)))
        self.counts = np.empty((n_blocks, 2), dtype=np.intp)
        self.anch = np.empty((n_blocks, k), dtype=np.intp)
        C, Cg, _ = cent
        C_new = np.empty_like(C)
        Cg_new = C_new if not self.centred else np.empty_like(Cg)
        self.pair = (cent, (C_new, Cg_new, np.empty(k)))
        self.labels = np.full(n, -1, dtype=np.int32)
        # distance bounds of the labels, valid for the centroids of the last Lloyd call
        self.ub = np.empty(n, dtype=np.float32) if self.bounds else None
        self.groups = centroid_groups(cent[0], self.n_groups) if self.n_groups else None
        t = 1 if self.groups is None else int(self.groups.max()) + 1
        self.lb = np.empty(n * t, dtype=np.float32) if self.bounds else None
        self.valid = False

    def _other(self, cent):
        a, b = self.pair
        return b if cent[0] is a[0] else a

    def lloyd(self, cent):
        C, Cg, cn = cent
        C_new, Cg_new, cn_new = out = self._other(cent)
        ops, k, d = self.ops, self.k, self.ops.X.shape[1]
        J, n_changed, _, n_empty = _kmeans.lloyd_iter(
            ops.Xg, ops.X, ops.xn, self.wk, Cg, C, cn, self.mean, self.centred, self.round32, self.coef,
            self.labels, Cg_new, C_new, cn_new, self.acc, self.anch, self.counts, self.block,
            self.chunk_rows, self.fast_tile, self.nt, True, self.ub, self.lb,
            C_new if self.valid else None,       # C_new still holds the previous call's centroids
            self.groups)
        self.valid = self.bounds
        return out, J, n_changed, n_empty, acc_weights(self.acc[0], d)

    def sqdist(self, C):
        dist = np.empty(self.ops.X.shape[0])
        _kmeans.sqdist_to_assigned(self.ops.X, C, self.labels, dist, self.nt)
        return dist, self.labels.copy(), self.positive

    def recompute(self, moves, cent_old):
        self.valid = False          # moved rows: their bounds are another centroid's
        for i, j in moves:
            self.labels[i] = j
        C, Cg, cn = cent_old
        C_new, Cg_new, cn_new = out = self._other(cent_old)
        ops = self.ops
        still = _kmeans.recompute_centroids(ops.Xg, ops.X, ops.xn, self.wk, self.labels, Cg, C, cn,
                                            self.mean, self.centred, self.round32, Cg_new, C_new, cn_new,
                                            self.acc, self.anch, self.counts, self.block, self.nt)
        return out, still

    def assign(self, cent, reassign):
        C, Cg, cn = cent
        ops = self.ops
        inertia, _ = _kmeans.assign(ops.Xg, ops.X, ops.xn, self.wk, Cg, C, cn, self.coef, self.labels,
                                    reassign, True, self.block, self.chunk_rows, self.fast_tile, self.nt)
        return self.labels, inertia


def run_in_process(loop, group, on_lloyd=None):
    """Answer a loop's requests (:func:`lloyd_loop`) with ``group``'s methods; the loop's result.
    ``on_lloyd(iteration, J)``, if given, is called after each Lloyd iteration (a progress bar)."""
    try:
        name, args = next(loop)
        if on_lloyd is None:
            while True:
                name, args = loop.send(getattr(group, name)(*args))
        it = 0
        while True:
            out = getattr(group, name)(*args)
            if name == "lloyd":
                it += 1
                on_lloyd(it, out[1])
            name, args = loop.send(out)
    except StopIteration as stop:
        return stop.value
