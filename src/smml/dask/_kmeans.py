"""k-means on a dask array: the loop of :mod:`smml._kmeans_loop` (the one
:class:`smml.cluster.KMeans` runs in process), its requests fanned out to groups of
consecutive row blocks (Dask actors on the workers) and their partial sums merged here."""
from __future__ import annotations

import contextlib
from typing import Any, Literal

import numpy as np
import dask
import dask.array as da
from sklearn.base import BaseEstimator   # plumbing: get_params / set_params from the signature

from smml import _kmeans_loop as _loop
from smml import cluster as _cluster
from smml._core import _kmeans  # type: ignore[attr-defined]  # compiled (.so): no stub
from smml._core._sums import col_sums_continued, row_norms_sq
from smml._validation import _aligned
from smml._typing import ArrayLike, RandomStateLike
from smml._threads import blas_single_thread, effective_n_threads, threads_for
from smml._validation import check_random_state
from smml.base import store_params
from smml.dask._actors import _LostWorker, _drive_actors, _drive_local, _gather
from smml.dask._validation import _check_dask_X, _distributed_client, _split_rows, _stacked
from smml._gemm_bounds import euclidean_error_coef as _euclidean_error_coef



def _c_aligned(a, dtype=None):
    """A C-contiguous array the kernels may load at natural alignment: the blocks that reach a
    worker may be views into a received buffer at any offset (a misaligned load is undefined
    behaviour in C: the UBSan build of .ci/sanitize reported them)."""
    return _aligned(np.ascontiguousarray(a, dtype=dtype))

def _chunk_stats(Xb, dtype):
    """Pass 1 of the preparation: the rows' squared norms' max and sum (``_prepare``'s
    centring decision) and a finiteness check."""
    Xb = _c_aligned(Xb, dtype=dtype)
    if not np.all(np.isfinite(Xb)):
        raise ValueError("smml.dask.KMeans: X contains NaN or infinity")
    xn = _chunk_norms(Xb, dtype)
    return float(xn.max()), float(xn.sum())


def _chain_sum(prev, Xb, dtype):
    """Column sums continued row after row from ``prev`` (numpy's own order for
    X.sum(axis=0, dtype=float64) on a C-ordered X with more than one column), without a copy
    of the block."""
    acc = np.array(prev, dtype=np.float64)
    col_sums_continued(_c_aligned(Xb, dtype=dtype), acc)
    return acc


def _chunk_norms(Xb, dtype):
    """The rows' squared norms (in-memory ``_prepare``'s), in ``dtype``."""
    return row_norms_sq(_c_aligned(Xb, dtype=dtype))


class _Group:
    """Consecutive chunks of X (the first starting on a block boundary) and their labels, for
    a whole fit. On a distributed cluster each worker holds one group as a Dask actor: the
    driver calls it directly (no task graph, no scheduler round trip) once per Lloyd
    iteration and gets back what the reduce needs; the data and the labels stay on the
    worker. On dask's local schedulers one group of this process holds every chunk.

    Each method runs the in-memory kernel once over the group's rows (its blocks are the
    in-memory run's), on ``n_threads`` threads (a worker's threads; the results do not depend
    on the count)."""

    def __init__(self, shift, dtype, in_dtype, k, block, coef, round32, n_threads, first, *chunks):
        X = _stacked(chunks)
        self.ops = _loop.Operands(_c_aligned(X, dtype=in_dtype), shift, dtype)
        n, d = self.ops.X.shape
        self.k, self.block, self.coef, self.round32, self.first = k, block, coef, round32, first
        self.centred = shift is not None
        self.mean = np.zeros(d) if shift is None else np.asarray(shift, dtype=np.float64)
        if n_threads is None:          # an actor: the worker's threads
            from distributed import get_worker
            n_threads = get_worker().state.nthreads
        self.nt = max(1, int(n_threads))
        nb = -(-n // block)
        self.acc = np.empty((nb, _loop.acc_width(k, d)))
        self.anch = np.empty((nb, k), dtype=np.intp)
        self.counts = np.empty((nb, 2), dtype=np.intp)
        self.labels = np.full(n, -1, dtype=np.int32)

    def _blas(self):
        return blas_single_thread(work=None) if self.nt > 1 else contextlib.nullcontext()

    def _sums(self, changed):
        """What the reduce needs: every block's sums, the group's merged anchors (the
        kernel's ``anch[0]``) with the anchor rows' values, and the labels changed. The first
        group's blocks are merged here, in block order as the kernel merges them (its sums
        start the merge): it sends one row instead of one per block."""
        a = self.anch[0].copy()
        acc = self.acc
        if self.first:
            s = acc[0].copy()
            for b in range(1, acc.shape[0]):
                s += acc[b]
            acc = s[None, :]
        return acc, a, self.ops.X[a[a >= 0]], changed

    def start(self):
        """A new run: no labels yet (the request's centroids are not needed here)."""
        self.labels.fill(-1)

    def lloyd(self, cent):
        """One Lloyd iteration's assignment step and partial sums (``lloyd_iter`` without its
        update step)."""
        C, Cg, cn = cent
        ops, k = self.ops, self.k
        with self._blas():
            _, n_chg, _, _ = _kmeans.lloyd_iter(
                ops.Xg, ops.X, ops.xn, np.empty(0), Cg, C, cn, self.mean, self.centred, self.round32,
                self.coef, self.labels, np.empty_like(Cg), np.empty_like(C), np.empty(k), self.acc,
                self.anch, self.counts, self.block, _loop.CHUNK_ROWS, _loop.FAST_TILE,
                self.nt, False)
        return self._sums(n_chg)

    def sqdist(self, C):
        """The exact squared distances of the rows to their centroids, and the labels."""
        dist = np.empty(self.ops.X.shape[0])
        _kmeans.sqdist_to_assigned(self.ops.X, C, self.labels, dist, self.nt)
        return dist, self.labels

    def recompute(self, rows, new, cent):
        """The update step's partial sums after the re-seeding moved ``rows`` (local) to
        clusters ``new``."""
        C, Cg, cn = cent
        ops, k = self.ops, self.k
        self.labels[rows] = new
        with self._blas():
            _kmeans.recompute_centroids(ops.Xg, ops.X, ops.xn, np.empty(0), self.labels, Cg, C, cn,
                                        self.mean, self.centred, self.round32, np.empty_like(Cg),
                                        np.empty_like(C), np.empty(k), self.acc, self.anch,
                                        self.counts, self.block, self.nt, False)
        return self._sums(0)

    def assign(self, cent, reassign):
        """The final assignment step: labels (``reassign``) and J of each block, computed
        exactly (the driver adds the blocks' J in order across the groups)."""
        C, Cg, cn = cent
        ops = self.ops
        Js = np.empty(self.acc.shape[0])
        with self._blas():
            _kmeans.assign(ops.Xg, ops.X, ops.xn, np.empty(0), Cg, C, cn, self.coef, self.labels,
                           reassign, True, self.block, _loop.CHUNK_ROWS, _loop.FAST_TILE,
                           self.nt, Js)
        return self.labels, Js


def _reduce(parts, cent, shift, round32):
    """The update step from the groups' partial sums (``_Group._sums``, groups in row order):
    the in-memory kernel's own merge (blocks in order), objective and update
    (``_kmeans.update_from_blocks``). ``cent``: the centroids of the assignment; ``shift``,
    ``round32``: the fit's centring (None: not centred) and rounding. Returns the new
    centroids, J of the assignment step, the labels changed, the empty clusters and the
    merged weights W."""
    C, Cg, cn = cent
    k, d = C.shape
    mean = np.zeros(d) if shift is None else shift
    acc = np.concatenate([p[0] for p in parts])
    # each group's merged anchors on its first block (-1: no member on the others), as rows
    # of V, which holds the anchor rows' values
    anch = np.full((acc.shape[0], k), -1, dtype=np.intp)
    V = np.concatenate([p[2] for p in parts] + [np.zeros((1, d), dtype=C.dtype)])
    b = v = 0
    for p in parts:
        live = p[1] >= 0
        anch[b] = p[1]
        anch[b, live] = v + np.arange(int(live.sum()))
        b += p[0].shape[0]
        v += int(live.sum())
    C_new, Cg_new, cn_new = np.empty_like(C), np.empty_like(Cg), np.empty(k)
    J, n_empty = _kmeans.update_from_blocks(V, acc, anch, Cg, C, cn, mean, shift is not None,
                                            round32, Cg_new, C_new, cn_new)
    changed = sum(int(p[3]) for p in parts)
    return (C_new, Cg_new, cn_new), J, changed, n_empty, _loop.acc_weights(acc[0], d)


def _fanned(loop, n_groups, shift, round32):
    """The requests of ``loop`` (:func:`smml._kmeans_loop.lloyd_loop`) as calls to every group
    (a generator of (method name, one argument tuple per group), sent the groups' results in
    group order), their results merged here into the loop's answers: the groups' partial
    sums by :func:`_reduce`, the rows in group order. Returns the loop's result."""
    sizes = None
    try:
        name, args = next(loop)
        while True:
            if name == "start":
                yield "start", [()] * n_groups
                res = None
            elif name == "lloyd":
                parts = yield "lloyd", [args] * n_groups
                res = _reduce(parts, args[0], shift, round32)
            elif name == "sqdist":
                got = yield "sqdist", [args] * n_groups
                sizes = [len(g[0]) for g in got]
                res = (np.concatenate([g[0] for g in got]), np.concatenate([g[1] for g in got]), None)
            elif name == "recompute":
                moves, cent_old = args
                moves = dict(moves)
                bounds = np.concatenate(([0], np.cumsum(sizes)))
                rows = np.array(sorted(moves), dtype=np.intp)
                per = []
                for c in range(n_groups):
                    sel = rows[(rows >= bounds[c]) & (rows < bounds[c + 1])]
                    per.append((sel - bounds[c], np.array([moves[int(i)] for i in sel], dtype=np.int32),
                                cent_old))
                parts = yield "recompute", per
                cent, _, _, still, _ = _reduce(parts, cent_old, shift, round32)
                res = (cent, still)
            elif name == "assign":
                outs = yield "assign", [args] * n_groups
                inertia = 0.0
                for _, Js in outs:          # the blocks' J in order, across the groups
                    for J in Js:
                        inertia = inertia + J
                res = ([np.array(lab) for lab, _ in outs], inertia)    # copies: a local group keeps its own
            else:                           # pragma: no cover - the loop's requests are the above
                raise ValueError(f"unknown k-means request {name!r}")
            name, args = loop.send(res)
    except StopIteration as stop:
        return stop.value


class KMeans(BaseEstimator):
    """k-means (001 "Clustering and the k-means algorithm") on a dask array, on the cluster.

    The algorithm, its rules (ties, empty clusters, the cluster of copies of one row,
    convergence) and its results are those of :class:`smml.cluster.KMeans`, bit for bit
    from the same initial centroids: the loop is the in-memory estimator's own
    (``smml._kmeans_loop``), and the rows are cut into the in-memory kernel's blocks
    (X is rechunked so that every chunk starts on a block boundary). On a distributed
    client each worker holds, for the whole fit, a group of consecutive chunks (about as
    many rows per worker) and their labels, as a Dask actor. Each iteration the driver
    calls every group once, directly (no task graph: the scheduler is not involved): the
    group runs smml's compiled Lloyd kernel over its rows (assignment on exact distances
    and each block's partial sums S, W, Q; the first group also merges its own blocks)
    and returns the sums; the driver merges them in block order and computes the new
    centroids with the kernel's own update step. On dask's local schedulers one group of
    this process holds every chunk.
    Re-seeding an empty cluster (rare) gathers the distances of the points to their
    centroids (one float per row) to choose the farthest points, as the in-memory rule
    does. The labels come back to the driver once, at the end (``labels_`` is then
    scattered to the workers). A worker lost during the fit loses its group's labels: the
    fit starts again on new groups (the same result), once; a second loss raises
    ``RuntimeError``.

    Parameters
    ----------
    n_clusters : int, default=8
        k; at most the number of samples.
    init : {"random"} or array of shape (n_clusters, n_features), default="random"
        "random": 001's k distinct training examples, drawn as the in-memory estimator
        draws them from ``random_state`` (the same rows). "k-means++" is not offered
        here (it needs k passes over the data): pass its centroids as an array.
    n_init : "auto" or int, default="auto"
        Runs from different initial centroids, the best kept ("auto": 10 for "random",
        1 for an array).
    max_iter : int, default=300
        Iterations per run.
    tol : float, default=1e-4
        Relative decrease of J at or below which a run stops (0: until the labels stop
        changing).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the initial centroids (the same rows as the in-memory estimator).
    n_jobs : None or int, default=None
        Threads on dask's local schedulers (as :class:`smml.cluster.KMeans`). On a
        distributed cluster each worker's group runs on that worker's threads
        (``nthreads``). The results do not depend on either.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centroids.
    labels_ : dask array of shape (n_samples,), int32
        Each row's cluster, persisted on the workers.
    inertia_ : float
        J(labels_, cluster_centers_).
    inertia_path_ : ndarray of shape (n_iter_,)
        J at each iteration's assignment step (kept run).
    n_iter_ : int
        Iterations of the kept run.
    converged_ : bool
        Whether the kept run stopped because its labels stopped changing.
    local_ : smml.cluster.KMeans
        The fitted model as an in-memory estimator (``predict``, ``transform``, ``score``).

    See Also
    --------
    smml.cluster.KMeans : the in-memory estimator (the same results).
    dask_ml.cluster.KMeans : dask-ml's k-means (k-means|| initialisation).

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from smml.dask import KMeans
    >>> Xd = da.from_array(np.array([[0.0], [1.0], [10.0], [11.0]]), chunks=2)
    >>> km = KMeans(n_clusters=2, n_init=1, random_state=0).fit(Xd)
    >>> sorted(km.cluster_centers_.tolist())
    [[0.5], [10.5]]
    >>> labels = km.labels_.compute()
    >>> bool(labels[0] == labels[1] and labels[1] != labels[2])
    True
    >>> print(f"{km.inertia_:.3f}")
    1.000
    """

    def __init__(self, n_clusters: int = 8, *, init: Literal["random"] | ArrayLike = "random",
                 n_init: Literal["auto"] | int = "auto", max_iter: int = 300, tol: float = 1e-4,
                 random_state: RandomStateLike = None, n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def __repr__(self):
        return f"smml.dask.KMeans(n_clusters={self.n_clusters!r})"

    def fit(self, X: da.Array, y: None = None) -> KMeans:
        """Run k-means on the dask array X (``n_init`` runs, the best kept). y is ignored.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)
            Numeric and finite; float32 stays float32, anything else becomes float64.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        params = self.get_params()
        _cluster.check_kmeans_params(params)
        if isinstance(self.init, str) and self.init == "k-means++":
            raise ValueError("smml.dask.KMeans: init='k-means++' is not offered on dask arrays; use "
                             "init='random' or pass initial centroids as an array")
        X = _check_dask_X(X)
        in_dtype = np.float32 if X.dtype == np.float32 else np.float64
        n, d = X.shape
        k = self.n_clusters
        if k > n:
            raise ValueError(f"n_clusters={k} is larger than the number of samples, n_samples={n}")
        init_C = None if isinstance(self.init, str) else _loop.init_array(self.init, k, d, in_dtype)
        block = _loop.block_rows(n, k, d)
        # chunks on block boundaries, about as many as the user's
        per = max(1, int(round(float(np.mean(X.chunks[0])) / block))) * block
        if any(c % block for c in X.chunks[0][:-1]):
            X = X.rechunk({0: per, 1: -1})
        chunks = X.to_delayed().ravel()

        # the centring decision and the shift, as the in-memory estimator computes them
        stats = dask.compute(*[dask.delayed(_chunk_stats)(c, in_dtype) for c in chunks])
        top = max(s[0] for s in stats)
        _loop.check_norms(top)
        if d == 1:              # numpy sums one column pairwise: take it whole
            mean = X.astype(in_dtype).compute().mean(axis=0, dtype=np.float64)
        else:
            s = dask.delayed(np.zeros(d))
            for c in chunks:
                s = dask.delayed(_chain_sum)(s, c, in_dtype)
            mean = s.compute() / n
        offset = float(mean @ mean)
        factor = 1.0 if in_dtype == np.float64 else 64.0
        mean_norm = sum(s[1] for s in stats) / n
        spread = mean_norm - offset
        if abs(offset - factor * spread) <= 1e-9 * (abs(offset) + factor * abs(spread)):
            # too close to call with a differently rounded mean of the norms: the exact one
            xn = np.concatenate(dask.compute(*[dask.delayed(_chunk_norms)(c, in_dtype) for c in chunks]))
            mean_norm = float(xn.mean())
        fit = _loop.centring(mean, mean_norm, top, in_dtype)         # (shift, round32, compute dtype)
        rng = check_random_state(self.random_state)
        starts = []               # every run's initial centroids, drawn as the in-memory fit draws them
        for _ in range(_loop.n_runs(self.init, self.n_init, stacklevel=3)):
            if isinstance(self.init, str):         # "random": the rows the in-memory fit draws
                idx = rng.choice(np.arange(n), k, replace=False)
                starts.append(X[idx].astype(in_dtype).compute())
            else:
                starts.append(init_C)
        for attempt in range(2):
            try:
                groups, keep = self._groups(fit, chunks, X.chunks[0], in_dtype, block, n, d)
                best: Any = None
                for C0 in starts:
                    run = self._run(fit, groups, C0)
                    if best is None or run[2] < best[2]:
                        best = run
                break
            except _LostWorker as exc:
                # the groups are state on the workers (the labels): a lost one cannot be
                # rebuilt from a task graph; the fit starts again once on new groups (the
                # same result), then gives up
                if attempt:
                    raise RuntimeError("smml.dask.KMeans: a worker holding part of X was lost during "
                                       "the fit, twice; nothing was fitted") from exc
            finally:
                groups = keep = None
        sizes = X.chunks[0]
        labels = np.concatenate(best[1])
        cuts = np.cumsum(sizes)[:-1]
        parts = np.split(labels, cuts)
        client = _distributed_client()
        if client is not None:        # the labels go back to the workers, one piece per chunk
            parts = client.scatter(parts)
            st = [da.from_delayed(p, shape=(c,), dtype=np.int32) for p, c in zip(parts, sizes)]
        else:
            st = [da.from_array(p, chunks=c) for p, c in zip(parts, sizes)]
        C, _, inertia, path, n_iter, converged, n_empty = best
        _loop.warn_empty(k, n_empty)
        self.cluster_centers_ = C.astype(in_dtype)
        self.labels_ = da.concatenate(st)
        self.inertia_ = float(inertia)
        self.inertia_path_ = path
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self.n_features_in_ = int(d)
        self.local_ = _cluster.fitted_kmeans(params, self.cluster_centers_, self.inertia_, path, self.n_iter_,
                                             self.converged_, *fit)
        return self

    def _groups(self, fit, chunks, sizes, in_dtype, block, n, d):
        """The fit's groups of consecutive chunks: one Dask actor per worker on a distributed
        cluster (about as many rows each), else one group of this process. Returns them and
        the actors' futures (which keep the actors alive)."""
        client = _distributed_client()
        k = self.n_clusters
        shift, round32, dtype = fit
        coef = _euclidean_error_coef(d, dtype)
        args = (shift, dtype, in_dtype, k, block, coef, round32)
        if client is None:
            nt = threads_for(effective_n_threads(self.n_jobs), n * k * d, _loop.GRAIN)
            return [_Group(*args, nt, True, *dask.compute(*chunks))], None
        workers = sorted(client.nthreads())
        bounds = _split_rows([int(c) for c in sizes], max(1, len(workers)))
        keep = []
        for g in range(len(bounds) - 1):
            # on its worker (elsewhere if that one is gone; anywhere if no worker is known yet)
            where = dict(workers=[workers[g]], allow_other_workers=True) if workers else {}
            xs = client.compute(list(chunks[bounds[g]:bounds[g + 1]]), **where)
            keep.append(client.submit(_Group, *args, None, g == 0, *xs, actor=True, pure=False, **where))
        return _gather(keep), keep

    def _run(self, fit, groups, C0):
        """One run of the loop (:func:`smml._kmeans_loop.lloyd_loop`) on the groups, its
        requests fanned out (``_fanned``): the groups called directly in this process, or,
        on a cluster, from the client's event loop (``_drive_actors``)."""
        shift, round32, dtype = fit
        cent = _loop.gemm_centroids(C0, shift, dtype, round32)
        steps = _fanned(_loop.lloyd_loop(cent, self.max_iter, self.tol), len(groups), shift, round32)
        client = _distributed_client()
        if client is None:
            return _drive_local(steps, groups)
        return client.sync(_drive_actors, steps, groups)
