"""smml on a Dask cluster: blockwise prediction, sharded k-NN and k-means on dask arrays.

Needs the optional ``[dask]`` extra (``pip install "smml[dask]"``: dask and
distributed); the rest of smml never imports dask. Every function and estimator
here runs on the active Dask scheduler: the ``distributed.Client`` of an existing
cluster when one was created (``Client("tcp://scheduler:8786")``), else dask's
local threads. Nothing else changes: the same estimators, the same parameters,
the same results, bit for bit, as the in-memory run.

- :func:`predict`, :func:`predict_proba`, :func:`transform`: any FITTED smml
  estimator on a dask array, block by block of rows (each block is predicted by
  the in-memory estimator, which predicts every row independently of the others:
  the result is the in-memory one).
- :class:`KNNClassifier`, :class:`KNNRegressor`: k-NN (000, "The Nearest
  Neighbour algorithm") whose training set stays sharded across the workers:
  on a distributed client one shard per worker (consecutive row blocks of the
  training dask array, about as many rows each), on dask's local schedulers one
  per row block. Each shard finds, for each
  query, its own k' closest points (the k' rule of 000 inside the shard); the
  candidates of all shards are merged with the same rule over their union, so
  every point tied with the global k-th is taken, whichever shard holds it.
- :class:`KMeans`: 001's Lloyd iterations on a dask array; each worker holds
  consecutive row blocks of X and their labels (a Dask actor); each iteration
  every worker computes the per-block partial sums of its blocks with smml's
  compiled kernel and the driver reduces them, in block order, into the new
  centroids.

Meta-parallelism (``cv_estimate``, ``tune``, ``nested_cv_estimate``,
``compare``, ``learning_curve``, bagging and forests) needs nothing from this
module: run it inside ``joblib.parallel_config(backend="dask")`` (a
``distributed.Client`` being active) and joblib sends the folds, candidates or
trees to the cluster's workers.
"""
import asyncio
import contextlib
import numbers

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.sizeof import sizeof as _dask_sizeof
except ImportError as exc:        # pragma: no cover - exercised without the extra only
    raise ImportError("smml.dask needs dask[array] and distributed: install the extra with "
                      "pip install 'smml[dask]'") from exc

from sklearn.base import BaseEstimator   # plumbing: get_params / set_params from the signature
from sklearn.utils.multiclass import check_classification_targets

from smml import cluster as _cluster
from smml import neighbors as _neighbors
from smml._core import _kmeans
from smml._core._utils import col_sums_continued, row_norms_sq
from smml._threads import blas_single_thread, threads_for
from smml._validation import check_is_fitted, check_random_state
from smml.base import store_params

__all__ = ["predict", "predict_proba", "transform", "KNNClassifier", "KNNRegressor", "KMeans"]


# ---- input validation ---------------------------------------------------------------------------

def _check_dask_X(X, n_features=None, name="X", what=None):
    """A 2-d numeric dask array of known chunk sizes, one block of columns; the feature count
    checked against ``n_features``. Finiteness is checked block by block when computed (the
    in-memory estimators validate each block)."""
    if not isinstance(X, da.Array):
        raise TypeError(f"{name} must be a dask array, got {type(X).__name__} "
                        "(use dask.array.from_array, or the in-memory estimator)")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (n_samples, n_features), got a {X.ndim}-d dask array "
                         f"of shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {X.dtype}")
    if any(np.isnan(c) for c in X.chunks[0]) or np.isnan(X.shape[1]):
        raise ValueError(f"{name} has unknown chunk sizes: call {name}.compute_chunk_sizes() first")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {X.shape})")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {what or 'the estimator'} was fitted "
                         f"with {n_features} features")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    return X


def _check_dask_y(y, n, X_chunks):
    """y as a 1-d dask array of n entries chunked as the rows of X."""
    if not isinstance(y, da.Array):
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-d, got shape {y.shape}")
        if y.shape[0] != n:
            raise ValueError(f"X and y have inconsistent numbers of samples: {n} and {y.shape[0]}")
        y = da.from_array(y, chunks=(tuple(X_chunks),))
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got a {y.ndim}-d dask array")
    if y.shape[0] != n:
        raise ValueError(f"X and y have inconsistent numbers of samples: {n} and {y.shape[0]}")
    if y.chunks[0] != tuple(X_chunks):
        y = y.rechunk((X_chunks,))
    return y


def _as_dask(X, n_features, what):
    """(dask array, was it one): an ndarray query set becomes a dask array of one block per
    100,000 rows (numpy in, numpy out)."""
    if isinstance(X, da.Array):
        return _check_dask_X(X, n_features, what=what), True
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d (n_samples, n_features), got shape {X.shape}")
    return _check_dask_X(da.from_array(X, chunks=(100_000, -1)), n_features, what=what), False


# ---- blockwise predict / predict_proba / transform -------------------------------------------

def _call(est, method, Xb):
    return np.asarray(getattr(est, method)(Xb))


def _blockwise(estimator, X, method):
    if not hasattr(estimator, method):
        raise AttributeError(f"{type(estimator).__name__} has no {method}")
    check_is_fitted(estimator)
    X = _check_dask_X(X, getattr(estimator, "n_features_in_", None), what=type(estimator).__name__)
    # one row tells the output's dtype and width (an exception here is the estimator's own)
    probe = _call(estimator, method, X[:1].compute())
    est = dask.delayed(estimator, pure=True)          # one copy in the graph, shared by the blocks
    if probe.ndim == 1:
        return da.map_blocks(_call, est, method, X, dtype=probe.dtype, drop_axis=1,
                             meta=np.empty((0,), dtype=probe.dtype))
    return da.map_blocks(_call, est, method, X, dtype=probe.dtype,
                         chunks=(X.chunks[0], (probe.shape[1],)),
                         meta=np.empty((0, 0), dtype=probe.dtype))


def predict(estimator, X):
    """``estimator.predict`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml estimator
        Any estimator with ``predict``; shipped once to the workers.
    X : dask array of shape (n_samples, n_features)
        Numeric, finite (checked block by block), as many features as the fit.

    Returns
    -------
    dask array of shape (n_samples,)
        The in-memory ``estimator.predict(X)``, row blocks as those of X.
    """
    return _blockwise(estimator, X, "predict")


def predict_proba(estimator, X):
    """``estimator.predict_proba`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml classifier with ``predict_proba``
    X : dask array of shape (n_samples, n_features)

    Returns
    -------
    dask array of shape (n_samples, n_classes)
    """
    return _blockwise(estimator, X, "predict_proba")


def transform(estimator, X):
    """``estimator.transform`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml transformer (e.g. :class:`smml.cluster.KMeans`)
    X : dask array of shape (n_samples, n_features)

    Returns
    -------
    dask array of shape (n_samples, n_outputs)
    """
    return _blockwise(estimator, X, "transform")


# ---- k-NN on a sharded training set -------------------------------------------------------------

class _Shard:
    """One block of the training set on a worker: an in-memory smml k-NN fitted on it (used
    for its search only), its labels and the global index of its first row."""

    def __init__(self, est, y, offset):
        self.est, self.y, self.offset = est, y, offset


_SHARD_PER_WORKER = True      # on a distributed client: one shard per worker (else per row block)


def _labels_summary(yb):
    """Pass 1 of a classifier's fit: the distinct labels of a block and their counts."""
    yb = np.asarray(yb)
    check_classification_targets(yb)
    try:
        return np.unique(yb, return_counts=True)
    except TypeError as exc:
        raise ValueError(f"class labels must be mutually comparable (all numbers or all strings, "
                         f"no None): {exc}") from None


@_dask_sizeof.register(_Shard)
def _sizeof_shard(shard):
    """A shard's bytes (its searcher's arrays and its labels), for the scheduler: reported as
    a few bytes, a shard could be moved to another worker to meet a query block."""
    est = shard.est
    return int(shard.y.nbytes + sum(v.nbytes for v in vars(est).values() if isinstance(v, np.ndarray)))


def _stacked(blocks):
    """Consecutive row blocks as one array (the block itself when there is one: no copy)."""
    blocks = [np.asarray(b) for b in blocks]
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)


def _fit_shard(Xbs, ybs, params, k, offset, classes):
    """Pass 2: the shard's in-memory searcher on its row blocks ``Xbs`` (consecutive; k
    capped at the shard's size: a smaller shard offers all of its points) and its labels
    (class codes, or float64 values)."""
    Xb = _stacked(Xbs)
    yb = _stacked(ybs)
    if classes is not None:
        codes = np.searchsorted(classes, yb)
        yv = np.ascontiguousarray(codes, dtype=np.intp)
    else:
        yv = None
    est = _neighbors.KNNRegressor(**dict(params, k=min(k, Xb.shape[0])))
    est.fit(Xb, np.zeros(Xb.shape[0]) if classes is not None else yb)
    if yv is None:
        yv = est._y
    return _Shard(est, yv, offset)


def _shard_rows(shard):
    return shard.est.n_samples_fit_


def _search_shard(shard, Qb, k):
    """The shard's taken points (its own k' rule) for each query: (counts, global indices,
    exact keys, labels), rows in query order, each sorted by (key, index)."""
    est = shard.est
    Q0, Qm = est._queries(Qb)
    kk = min(k, est.n_samples_fit_)
    counts, idx, keys = [], [], []
    for _, taken in est._search(Q0, kk, est._n_threads(), in_order=True, Qm=Qm):
        indptr, i, key = taken.csr()
        counts.append(np.diff(indptr))
        idx.append(i)
        keys.append(key)
    idx = np.concatenate(idx)
    return (np.concatenate(counts), idx + shard.offset, np.concatenate(keys), shard.y[idx])


_MERGE_PAD = 4     # the padded matrix of _merge_taken: at most this many cells per candidate


def _merge_taken(parts, k, nb):
    """The notes' k' rule over the union of the shards' candidates: per query every candidate
    whose key is <= the k-th smallest key (000, "The Nearest Neighbour algorithm"). Each
    shard offered all of its points with keys <= its own k-th smallest key, which is >= the
    global k-th: every globally taken point is among the candidates, ties included.
    Returns (rows, global indices, keys, labels) sorted by (query, key, index)."""
    counts = [np.asarray(p[0]) for p in parts]
    rows = np.concatenate([np.repeat(np.arange(nb), c) for c in counts])
    idx = np.concatenate([p[1] for p in parts])
    keys = np.concatenate([p[2] for p in parts])
    labs = np.concatenate([p[3] for p in parts])
    width = [int(c.max()) if c.size else 0 for c in counts]
    if nb == 0:
        return rows, idx, keys, labs
    if nb * sum(width) <= _MERGE_PAD * keys.size:
        # the k-th smallest key of each query from the shards' candidates side by side (a
        # matrix padded with +inf), then only the kept candidates are sorted
        M = np.full((nb, sum(width)), np.inf)
        col = base = 0
        for c, w in zip(counts, width):
            n = int(c.sum())
            first = np.repeat(np.cumsum(c) - c, c)
            M[rows[base:base + n], col + np.arange(n) - first] = keys[base:base + n]
            col += w
            base += n
        kth = np.partition(M, k - 1, axis=1)[:, k - 1]
        keep = keys <= kth[rows]
        rows, idx, keys, labs = rows[keep], idx[keep], keys[keep], labs[keep]
        order = np.lexsort((idx, keys, rows))
        return rows[order], idx[order], keys[order], labs[order]
    # a query with many tied candidates would make the matrix wide: sort them all
    order = np.lexsort((idx, keys, rows))
    rows, idx, keys, labs = rows[order], idx[order], keys[order], labs[order]
    start = np.searchsorted(rows, np.arange(nb))
    kth = keys[start + (k - 1)]
    keep = keys <= kth[rows]
    return rows[keep], idx[keep], keys[keep], labs[keep]


def _knn_block(decider, kind, k, nb, *parts):
    # the in-memory estimator's own steps, on the merged points (sorted as its search
    # returns them: by query, key, index)
    rows, _, keys, labs = _merge_taken(parts, k, nb)
    if kind == "regress":
        return decider._mean_label(rows, labs, keys, nb)
    votes = decider._class_votes(rows, labs, keys, nb)
    if kind == "predict":
        return decider.classes_[decider._decide(votes)]
    return decider._proba(votes)


class _DaskKNNBase(BaseEstimator):
    """k-NN on a training set sharded across the workers (see the module doc)."""

    _classifier = False
    _local = _neighbors.KNNRegressor

    def __init__(self, k=1, metric="euclidean", weights="uniform", metric_params=None,
                 algorithm="auto", n_jobs=None):
        store_params(self, locals())

    def __repr__(self):
        return f"smml.dask.{type(self).__name__}(k={self.k!r}, metric={self.metric!r})"

    def fit(self, X, y):
        """Shard the training set: one in-memory searcher per worker on a distributed
        client (consecutive row blocks of X, about as many rows each, one shard on each
        worker), else one per row block (``dask.persist``), kept on the workers.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)
            The training points, numeric and finite.
        y : dask array or array-like of shape (n_samples,)
            The labels.

        Returns
        -------
        self
        """
        params = self.get_params()
        decider = self._local(**params)
        decider._validate_params()            # the in-memory estimator's parameter checks
        if self.metric == "mahalanobis" and not self.metric_params:
            raise ValueError("smml.dask k-NN with metric='mahalanobis' needs metric_params={'VI': ...} "
                             "or {'V': ...}: the covariance of the whole sharded training set is not "
                             "estimated")
        X = _check_dask_X(X)
        n, d = X.shape
        if self.k > n:
            raise ValueError(f"k={self.k} is larger than the number of training points, n_samples={n} "
                             "(000: k cannot be taken larger than the size of the training set)")
        y = _check_dask_y(y, n, X.chunks[0])
        classes = None
        if self._classifier:
            summaries = dask.compute(*[dask.delayed(_labels_summary)(yb) for yb in y.to_delayed()])
            classes = np.unique(np.concatenate([u for u, _ in summaries]))
            counts = np.zeros(classes.size, dtype=np.int64)
            for u, c in summaries:
                counts[np.searchsorted(classes, u)] += c
            self.classes_ = classes
            decider.classes_ = classes
            decider._default = int(np.argmax(counts))     # first maximum: smallest label
            self.default_label_ = classes[decider._default]
        decider._metric = self.metric
        sizes = [int(c) for c in X.chunks[0]]
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        xs, ys = list(X.to_delayed().ravel()), list(y.to_delayed())
        client = _distributed_client()
        workers = sorted(client.nthreads()) if client is not None and _SHARD_PER_WORKER else []
        if workers:
            # one shard per worker, of consecutive row blocks: a worker searches one index
            # (a shard's search has fixed costs of its own), and the shards are spread
            bounds = _split_rows(sizes, len(workers))
        else:                       # dask's local schedulers (or no worker known yet)
            bounds = list(range(len(sizes) + 1))
        shards = [dask.delayed(_fit_shard)(xs[lo:hi], ys[lo:hi], params, self.k, int(offsets[lo]), classes)
                  for lo, hi in zip(bounds[:-1], bounds[1:])]
        if not workers:
            self.shards_ = list(dask.persist(*shards))
        else:
            self.shards_ = [client.compute(sh, workers=[w], allow_other_workers=True)
                            for sh, w in zip(shards, workers)]
        # surface a shard's error (bad values, labels) now rather than at the first predict
        dask.compute(*[dask.delayed(_shard_rows)(s) for s in self.shards_])
        self.shard_sizes_ = tuple(int(offsets[hi] - offsets[lo]) for lo, hi in zip(bounds[:-1], bounds[1:]))
        self.n_samples_fit_ = int(n)
        self.n_features_in_ = int(d)
        self._decider = decider
        return self

    def _run(self, X, kind):
        if not hasattr(self, "shards_"):
            raise ValueError(f"this smml.dask.{type(self).__name__} is not fitted yet: call fit first")
        Xd, lazy = _as_dask(X, self.n_features_in_, f"smml.dask.{type(self).__name__}")
        k = int(self.k)
        if not (isinstance(self.k, numbers.Integral) and 1 <= k <= self.n_samples_fit_):
            raise ValueError(f"k must be an integer in [1, n_samples_fit_={self.n_samples_fit_}], got {self.k!r}")
        dec = dask.delayed(self._decider, pure=True)
        blocks = []
        for qb, nb in zip(Xd.to_delayed().ravel(), Xd.chunks[0]):
            parts = [dask.delayed(_search_shard)(s, qb, k) for s in self.shards_]
            out = dask.delayed(_knn_block)(dec, kind, k, nb, *parts)
            if kind == "proba":
                shape, dtype = (nb, self.classes_.size), np.float64
            else:
                shape = (nb,)
                dtype = self.classes_.dtype if kind == "predict" else np.float64
            blocks.append(da.from_delayed(out, shape=shape, dtype=dtype))
        res = da.concatenate(blocks, axis=0)
        return res if lazy else res.compute()


class KNNClassifier(_DaskKNNBase):
    """k-NN classifier on a training set sharded across a Dask cluster.

    The parameters are those of :class:`smml.neighbors.KNNClassifier`, and so are the
    predictions, bit for bit: the k' rule of 000 ("The Nearest Neighbour algorithm";
    every point tied with the k-th is taken, across shards) and the default label on
    vote ties (``default_label_``, the most frequent training label, the smallest on
    equal counts). ``metric="mahalanobis"`` needs ``metric_params``.

    Parameters
    ----------
    k : int, default=1
    metric : {"euclidean", "manhattan", "mahalanobis", "hamming"}, default="euclidean"
    weights : {"uniform", "distance"} or callable, default="uniform"
    metric_params : dict or None
    algorithm : {"auto", "brute", "tree"}, default="auto"
        The search structure of each shard (chosen per shard with "auto").
    n_jobs : int or None
        OpenMP threads of each shard's search on its worker.

    Attributes
    ----------
    classes_ : ndarray
    default_label_ : the label predicted on vote ties
    shards_ : list of distributed Futures (one shard per worker) or, on dask's local
        schedulers, of persisted dask Delayed (one per row block of X)
    shard_sizes_ : tuple of int
    n_samples_fit_, n_features_in_ : int
    """

    _classifier = True
    _local = _neighbors.KNNClassifier

    def predict(self, X):
        """The k-NN prediction of each row.

        Parameters
        ----------
        X : dask array or array-like of shape (n_queries, n_features)

        Returns
        -------
        dask array (for a dask X, lazy) or ndarray of shape (n_queries,)
        """
        return self._run(X, "predict")

    def predict_proba(self, X):
        """The (weighted) share of each class among the taken points.

        Parameters
        ----------
        X : dask array or array-like of shape (n_queries, n_features)

        Returns
        -------
        dask array or ndarray of shape (n_queries, n_classes)
        """
        return self._run(X, "proba")


class KNNRegressor(_DaskKNNBase):
    """k-NN regressor on a training set sharded across a Dask cluster.

    The parameters and the predictions (bit for bit) of
    :class:`smml.neighbors.KNNRegressor`: the (weighted) mean label of the taken points
    (000's k' rule across shards), summed in the order of (distance, label).

    Parameters
    ----------
    k : int, default=1
    metric : {"euclidean", "manhattan", "mahalanobis", "hamming"}, default="euclidean"
    weights : {"uniform", "distance"} or callable, default="uniform"
    metric_params : dict or None
    algorithm : {"auto", "brute", "tree"}, default="auto"
    n_jobs : int or None

    Attributes
    ----------
    shards_ : list of distributed Futures or persisted dask Delayed (see KNNClassifier)
    shard_sizes_ : tuple of int
    n_samples_fit_, n_features_in_ : int
    """

    def predict(self, X):
        """The (weighted) mean label of the taken points of each row.

        Parameters
        ----------
        X : dask array or array-like of shape (n_queries, n_features)

        Returns
        -------
        dask array or ndarray of shape (n_queries,)
        """
        return self._run(X, "regress")


# ---- k-means on a dask array -------------------------------------------------------------------

def _chunk_stats(Xb, dtype):
    """Pass 1 of the preparation: the rows' squared norms' max and sum (``_prepare``'s
    centring decision) and a finiteness check."""
    Xb = np.ascontiguousarray(Xb, dtype=dtype)
    if not np.all(np.isfinite(Xb)):
        raise ValueError("smml.dask.KMeans: X contains NaN or infinity")
    xn = _chunk_norms(Xb, dtype)
    return float(xn.max()), float(xn.sum())


def _chain_sum(prev, Xb, dtype):
    """Column sums continued row after row from ``prev`` (numpy's own order for
    X.sum(axis=0, dtype=float64) on a C-ordered X with more than one column), without a copy
    of the block."""
    acc = np.array(prev, dtype=np.float64)
    col_sums_continued(np.ascontiguousarray(Xb, dtype=dtype), acc)
    return acc


def _chunk_norms(Xb, dtype):
    """The rows' squared norms (in-memory ``_prepare``'s), in ``dtype``."""
    return row_norms_sq(np.ascontiguousarray(Xb, dtype=dtype))


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
        self.ops = _cluster._Operands(np.ascontiguousarray(X, dtype=in_dtype), shift, dtype)
        n, d = self.ops.X.shape
        self.k, self.block, self.coef, self.round32, self.first = k, block, coef, round32, first
        self.centred = shift is not None
        self.mean = np.zeros(d) if shift is None else np.asarray(shift, dtype=np.float64)
        if n_threads is None:          # an actor: the worker's threads
            from distributed import get_worker
            n_threads = get_worker().state.nthreads
        self.nt = max(1, int(n_threads))
        nb = -(-n // block)
        self.acc = np.empty((nb, k * (d + 2)))
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
        """A new run: no labels yet."""
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
                self.anch, self.counts, self.block, _cluster._CHUNK_ROWS, _cluster._FAST_TILE,
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
                           reassign, True, self.block, _cluster._CHUNK_ROWS, _cluster._FAST_TILE,
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
    return (C_new, Cg_new, cn_new), J, changed, n_empty, acc[0, k * d:k * d + k].copy()


class _LostWorker(Exception):
    """A worker holding a group died (its actor cannot be reached)."""


def _gather(futs):
    """The results of futures (the groups' construction): a lost worker becomes
    ``_LostWorker``."""
    out = []
    for f in futs:
        with _lost_as_error():
            out.append(f.result())
    return out


@contextlib.contextmanager
def _lost_as_error():
    """A worker lost under this block (its comm closed, its tasks cancelled) becomes
    ``_LostWorker``."""
    lost = (OSError,) + _cancelled_errors()          # CommClosedError is an OSError
    try:
        yield
    except lost as exc:
        raise _LostWorker(str(exc)) from exc


def _drive_local(steps, groups):
    """Run a generator of group calls (``KMeans._steps``) on groups of this process."""
    try:
        name, args = next(steps)
        while True:
            name, args = steps.send([getattr(g, name)(*a) for g, a in zip(groups, args)])
    except StopIteration as stop:
        return stop.value


async def _drive_actors(steps, groups):
    """Run a generator of group calls (``KMeans._steps``) on the groups' actors, from the
    client's event loop: the calls to all groups go out at once and are awaited here,
    without a hand-over to another thread per call. ``separate_thread=False``: a worker
    runs the method (one kernel call, the GIL released inside) on its event loop instead of
    handing it to its actor thread and back. Both hand-overs cost about 2 ms per iteration
    on 2 local workers (``bench/bench_dask.py --only kmeans``: 1.21-1.29x the in-memory fit
    with ``.result()`` per call in the driver's thread, 1.16-1.17x so)."""
    try:
        name, args = next(steps)
        while True:
            with _lost_as_error():
                out = await asyncio.gather(*[getattr(g, name)(*a, separate_thread=False)
                                             for g, a in zip(groups, args)])
            name, args = steps.send(list(out))
    except StopIteration as stop:
        return stop.value


def _cancelled_errors():
    try:
        from distributed.client import FutureCancelledError
        from distributed import KilledWorker
    except ImportError:           # pragma: no cover - distributed is part of the extra
        return ()
    return (FutureCancelledError, KilledWorker)


def _distributed_client():
    """The ``distributed.Client`` that ``dask.compute`` would use, or None (dask's local
    schedulers)."""
    try:
        from distributed import Client
    except ImportError:       # pragma: no cover - distributed is part of the extra
        return None
    c = getattr(dask.base.get_scheduler(), "__self__", None)
    return c if isinstance(c, Client) else None


def _split_rows(sizes, parts):
    """Cut consecutive chunks of ``sizes`` rows into at most ``parts`` groups of consecutive
    chunks, as even in rows as the chunk boundaries allow. Returns the groups' first chunks
    and the number of chunks (ascending, no empty group)."""
    ends = np.concatenate(([0], np.cumsum(sizes)))
    bounds = [0]
    for g in range(1, parts):
        c = int(np.argmin(np.abs(ends - ends[-1] * g / parts)))
        if bounds[-1] < c < len(sizes):
            bounds.append(c)
    bounds.append(len(sizes))
    return bounds


class KMeans(BaseEstimator):
    """k-means (001 "Clustering and the k-means algorithm") on a dask array, on the cluster.

    The algorithm, its rules (ties, empty clusters, the cluster of copies of one row,
    convergence) and its results are those of :class:`smml.cluster.KMeans`, bit for bit
    from the same initial centroids: the rows are cut into the in-memory kernel's blocks
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
    init : {"random"} or array of shape (n_clusters, n_features), default="random"
        "random": 001's k distinct training examples, drawn as the in-memory estimator
        draws them from ``random_state`` (the same rows). "k-means++" is not offered
        here (it needs k passes over the data): pass its centroids as an array.
    n_init : "auto" or int, default="auto"
    max_iter : int, default=300
    tol : float, default=1e-4
    random_state : None, int, RandomState or Generator
    n_jobs : None or int
        Threads on dask's local schedulers (as :class:`smml.cluster.KMeans`). On a
        distributed cluster each worker's group runs on that worker's threads
        (``nthreads``). The results do not depend on either.

    Attributes
    ----------
    cluster_centers_ : ndarray (n_clusters, n_features)
    labels_ : dask array (n_samples,) of int32, persisted on the workers
    inertia_ : float
    inertia_path_ : ndarray
    n_iter_ : int
    converged_ : bool
    local_ : smml.cluster.KMeans
        The fitted model as an in-memory estimator (``predict``, ``transform``, ``score``).
    """

    def __init__(self, n_clusters=8, *, init="random", n_init="auto", max_iter=300, tol=1e-4,
                 random_state=None, n_jobs=None):
        store_params(self, locals())

    def __repr__(self):
        return f"smml.dask.KMeans(n_clusters={self.n_clusters!r})"

    def fit(self, X, y=None):
        """Run k-means on the dask array X (``n_init`` runs, the best kept). y is ignored.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)
            Numeric and finite; float32 stays float32, anything else becomes float64.
        y : ignored

        Returns
        -------
        self
        """
        local = _cluster.KMeans(**self.get_params())
        local._validate_params()
        if isinstance(self.init, str) and self.init == "k-means++":
            raise ValueError("smml.dask.KMeans: init='k-means++' is not offered on dask arrays; use "
                             "init='random' or pass initial centroids as an array")
        X = _check_dask_X(X)
        in_dtype = np.float32 if X.dtype == np.float32 else np.float64
        n, d = X.shape
        k = self.n_clusters
        if k > n:
            raise ValueError(f"n_clusters={k} is larger than the number of samples, n_samples={n}")
        if not isinstance(self.init, str):
            local._init_C = local._init_array(d, in_dtype)
        block = _cluster._block_rows(n, k, d)
        # chunks on block boundaries, about as many as the user's
        per = max(1, int(round(float(np.mean(X.chunks[0])) / block))) * block
        if any(c % block for c in X.chunks[0][:-1]):
            X = X.rechunk({0: per, 1: -1})
        chunks = X.to_delayed().ravel()

        # _prepare: the centring decision and the shift, as the in-memory estimator computes them
        stats = dask.compute(*[dask.delayed(_chunk_stats)(c, in_dtype) for c in chunks])
        top = max(s[0] for s in stats)
        if not top < _cluster._MAX_NORM_SQ:
            raise ValueError(f"KMeans: the squared distances overflow float64 (a row has squared norm "
                             f"{top:.3g}); rescale the features")
        if d == 1:              # numpy sums one column pairwise: take it whole
            mean = X.astype(in_dtype).compute().mean(axis=0, dtype=np.float64)
        else:
            s = dask.delayed(np.zeros(d))
            for c in chunks:
                s = dask.delayed(_chain_sum)(s, c, in_dtype)
            mean = s.compute() / n
        offset = float(mean @ mean)
        factor = 1.0 if in_dtype == np.float64 else 64.0
        spread = sum(s[1] for s in stats) / n - offset
        if abs(offset - factor * spread) <= 1e-9 * (abs(offset) + factor * abs(spread)):
            # too close to call with a differently rounded mean of the norms: the exact one
            xn = np.concatenate(dask.compute(*[dask.delayed(_chunk_norms)(c, in_dtype) for c in chunks]))
            spread = float(xn.mean()) - offset
        centre = offset > factor * spread
        local._shift = mean if centre else None
        local._round32 = in_dtype == np.float32 and (centre or not top < _cluster._GEMM_LIMIT32)
        local._dtype = np.float64 if local._round32 else in_dtype
        rng = check_random_state(self.random_state)
        starts = []               # every run's initial centroids, drawn as the in-memory fit draws them
        for _ in range(local._n_runs()):
            if isinstance(self.init, str):         # "random": the rows the in-memory fit draws
                idx = rng.choice(np.arange(n), k, replace=False)
                starts.append(X[idx].astype(in_dtype).compute())
            else:
                starts.append(local._init_C)
        for attempt in range(2):
            try:
                groups, keep = self._groups(local, chunks, X.chunks[0], in_dtype, block, n, d)
                best = None
                for C0 in starts:
                    run = self._run(local, groups, C0)
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
        _cluster._warn_empty(k, n_empty)
        self.cluster_centers_ = C.astype(in_dtype)
        self.labels_ = da.concatenate(st)
        self.inertia_ = float(inertia)
        self.inertia_path_ = path
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self.n_features_in_ = int(d)
        local.cluster_centers_ = self.cluster_centers_
        local.labels_ = None
        local.inertia_ = self.inertia_
        local.inertia_path_ = path
        local.n_iter_ = self.n_iter_
        local.converged_ = self.converged_
        local.n_features_in_ = int(d)
        local._n_features_out = k
        local._predict_cache = {}
        local.__dict__.pop("_init_C", None)
        self.local_ = local
        return self

    def _groups(self, local, chunks, sizes, in_dtype, block, n, d):
        """The fit's groups of consecutive chunks: one Dask actor per worker on a distributed
        cluster (about as many rows each), else one group of this process. Returns them and
        the actors' futures (which keep the actors alive)."""
        client = _distributed_client()
        k = self.n_clusters
        coef = _neighbors._euclidean_error_coef(d, local._dtype)
        args = (local._shift, local._dtype, in_dtype, k, block, coef, local._round32)
        if client is None:
            nt = threads_for(local._n_threads(), n * k * d, _cluster._GRAIN)
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

    def _run(self, local, groups, C0):
        """One run of the notes' loop on the groups (``_steps``): called directly in this
        process, or, on a cluster, from the client's event loop (``_drive_actors``)."""
        steps = self._steps(local, len(groups), C0)
        client = _distributed_client()
        if client is None:
            return _drive_local(steps, groups)
        return client.sync(_drive_actors, steps, groups)

    def _steps(self, local, n_groups, C0):
        """One run of the notes' loop (``smml.cluster.KMeans._run``, step for step), as a
        generator: it yields the groups' calls (a method name and one argument tuple per
        group), is sent their results (groups in order) and returns the run. Each
        iteration: one call per group (assignment and partial sums), then the reduce here."""
        shift, round32 = local._shift, local._round32
        C, Cg, cn = local._gemm_centroids(C0)
        cent = (C, C if shift is None else Cg, cn)
        path = []
        converged = False
        n_empty = 0
        it = 0
        yield "start", [()] * n_groups
        while it < self.max_iter:
            parts = yield "lloyd", [(cent,)] * n_groups
            cent_new, J, n_changed, n_empty, W = _reduce(parts, cent, shift, round32)
            it += 1
            path.append(J)
            moved = 0
            if n_empty:
                moved, n_empty, cent_new = yield from self._reseed(n_groups, cent, cent_new, W, shift,
                                                                   round32)
            cent = cent_new
            if n_changed == 0 and moved == 0:
                converged = True
                break
            if self.tol > 0 and len(path) > 1 and path[-2] - J <= self.tol * path[-2]:
                break
        outs = yield "assign", [(cent, not converged)] * n_groups
        inertia = 0.0
        for _, Js in outs:
            for J in Js:
                inertia = inertia + J
        labels = [np.array(lab) for lab, _ in outs]       # copies: a local group keeps its own
        return cent[0], labels, inertia, np.array(path), it, converged, n_empty

    def _reseed(self, n_groups, cent_old, cent_new, W, shift, round32):
        """``smml.cluster.KMeans._reseed`` (a generator of group calls, as ``_steps``): the
        empty clusters take the farthest points (exact distances to the centroids they were
        assigned to, farthest first, lowest row on ties, skipping points at distance 0 and
        last members), then the means again."""
        empty = np.flatnonzero(~(W > 0))
        got = yield "sqdist", [(cent_old[0],)] * n_groups
        dist = np.concatenate([g[0] for g in got])
        labels = np.concatenate([g[1] for g in got])
        cand = np.flatnonzero(dist > 0)
        cand = cand[np.lexsort((cand, -dist[cand]))]
        members = np.bincount(labels, minlength=len(W))
        moves = dict(_cluster._move_to_empty(labels, cand, members, empty))
        moved = len(moves)
        if not moved:
            return 0, len(empty), cent_new
        sizes = [len(g[0]) for g in got]
        bounds = np.concatenate(([0], np.cumsum(sizes)))
        rows = np.array(sorted(moves), dtype=np.intp)
        args = []
        for c in range(n_groups):
            sel = rows[(rows >= bounds[c]) & (rows < bounds[c + 1])]
            args.append((sel - bounds[c], np.array([moves[int(i)] for i in sel], dtype=np.int32),
                         cent_old))
        parts = yield "recompute", args
        cent, _, _, still, _ = _reduce(parts, cent_old, shift, round32)
        return moved, still, cent
