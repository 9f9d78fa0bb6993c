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
  Neighbour algorithm") whose training set stays sharded across the workers,
  one shard per row block of the training dask array. Each shard finds, for each
  query, its own k' closest points (the k' rule of 000 inside the shard); the
  candidates of all shards are merged with the same rule over their union, so
  every point tied with the global k-th is taken, whichever shard holds it.
- :class:`KMeans`: 001's Lloyd iterations on a dask array; each iteration every
  worker computes the per-block partial sums of its blocks with smml's compiled
  kernel and one task reduces them, in block order, into the new centroids.

Meta-parallelism (``cv_estimate``, ``tune``, ``nested_cv_estimate``,
``compare``, ``learning_curve``, bagging and forests) needs nothing from this
module: run it inside ``joblib.parallel_config(backend="dask")`` (a
``distributed.Client`` being active) and joblib sends the folds, candidates or
trees to the cluster's workers.
"""
import numbers
import warnings

import numpy as np

try:
    import dask
    import dask.array as da
except ImportError as exc:        # pragma: no cover - exercised without the extra only
    raise ImportError("smml.dask needs dask[array] and distributed: install the extra with "
                      "pip install 'smml[dask]'") from exc

from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets

from smml import cluster as _cluster
from smml import neighbors as _neighbors
from smml._core import _kmeans
from smml._core._utils import row_norms_sq
from smml._validation import check_is_fitted, check_random_state

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
        y = da.from_array(y, chunks=(X_chunks,))
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


def _labels_summary(yb):
    """Pass 1 of a classifier's fit: the distinct labels of a block and their counts."""
    yb = np.asarray(yb)
    check_classification_targets(yb)
    try:
        return np.unique(yb, return_counts=True)
    except TypeError as exc:
        raise ValueError(f"class labels must be mutually comparable (all numbers or all strings, "
                         f"no None): {exc}") from None


def _fit_shard(Xb, yb, params, k, offset, classes):
    """Pass 2: the shard's in-memory searcher (k capped at the shard's size: a smaller shard
    offers all of its points) and its labels (class codes, or float64 values)."""
    yb = np.asarray(yb)
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


def _search_shard(shard, Qb, k):
    """The shard's taken points (its own k' rule) for each query: (counts, global indices,
    exact keys, labels), rows in query order, each sorted by (key, index)."""
    est = shard.est
    Q0 = est._queries(Qb)
    kk = min(k, est.n_samples_fit_)
    counts, idx, keys = [], [], []
    for _, _, taken in est._search(Q0, kk, est._n_threads()):
        indptr, i, key = taken.csr()
        counts.append(np.diff(indptr))
        idx.append(i)
        keys.append(key)
    idx = np.concatenate(idx)
    return (np.concatenate(counts), idx + shard.offset, np.concatenate(keys), shard.y[idx])


def _merge_taken(parts, k, nb):
    """The notes' k' rule over the union of the shards' candidates: per query every candidate
    whose key is <= the k-th smallest key (000, "The Nearest Neighbour algorithm"). Each
    shard offered all of its points with keys <= its own k-th smallest key, which is >= the
    global k-th: every globally taken point is among the candidates, ties included.
    Returns (rows, global indices, keys, labels) sorted by (query, key, index)."""
    rows = np.concatenate([np.repeat(np.arange(nb), c) for c, _, _, _ in parts])
    idx = np.concatenate([p[1] for p in parts])
    keys = np.concatenate([p[2] for p in parts])
    labs = np.concatenate([p[3] for p in parts])
    order = np.lexsort((idx, keys, rows))
    rows, idx, keys, labs = rows[order], idx[order], keys[order], labs[order]
    start = np.searchsorted(rows, np.arange(nb))
    kth = keys[start + (k - 1)]
    keep = keys <= kth[rows]
    return rows[keep], idx[keep], keys[keep], labs[keep]


def _knn_block(decider, kind, k, nb, *parts):
    rows, _, keys, labs = _merge_taken(parts, k, nb)
    if kind == "regress":
        # as KNNRegressor.predict: the taken labels summed in the order of (key, label)
        order = np.lexsort((labs, keys, rows))
        rows, yv, keys = rows[order], labs[order], keys[order]
        w = decider._neighbour_weights(keys, rows, nb)
        if w is None:
            return np.bincount(rows, weights=yv, minlength=nb) / np.bincount(rows, minlength=nb)
        den = np.bincount(rows, weights=w, minlength=nb)
        if np.any(den == 0):
            raise ValueError("the weights of all taken neighbours of a query are zero")
        return np.bincount(rows, weights=w * yv, minlength=nb) / den
    # as KNNClassifier._votes (the same order of the weighted sums: by key, then index)
    nc = decider.classes_.size
    w = decider._neighbour_weights(keys, rows, nb)
    votes = np.bincount(rows * nc + labs, weights=w, minlength=nb * nc).reshape(nb, nc)
    if kind == "predict":
        return decider.classes_[decider._decide(votes)]
    total = votes.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = votes / total
    p[total[:, 0] == 0] = 1.0 / nc
    return p


class _DaskKNNBase:
    """k-NN on a training set sharded across the workers (see the module doc)."""

    _classifier = False
    _local = _neighbors.KNNRegressor

    def __init__(self, k=1, metric="euclidean", weights="uniform", metric_params=None,
                 algorithm="auto", n_jobs=None):
        self.k = k
        self.metric = metric
        self.weights = weights
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.n_jobs = n_jobs

    def get_params(self, deep=True):
        return {"k": self.k, "metric": self.metric, "weights": self.weights,
                "metric_params": self.metric_params, "algorithm": self.algorithm, "n_jobs": self.n_jobs}

    def set_params(self, **params):
        for key, value in params.items():
            if key not in self.get_params():
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}")
            setattr(self, key, value)
        return self

    def __repr__(self):
        return f"smml.dask.{type(self).__name__}(k={self.k!r}, metric={self.metric!r})"

    def fit(self, X, y):
        """Shard the training set: one in-memory searcher per row block of X, kept on the
        workers (``dask.persist``).

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)
            The training points, numeric and finite; each row block is a shard.
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
        offsets = np.concatenate(([0], np.cumsum(X.chunks[0])[:-1]))
        shards = [dask.delayed(_fit_shard)(xb, yb, params, self.k, int(o), classes)
                  for xb, yb, o in zip(X.to_delayed().ravel(), y.to_delayed(), offsets)]
        self.shards_ = list(dask.persist(*shards))
        self.shard_sizes_ = tuple(int(c) for c in X.chunks[0])
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
    shards_ : list of dask Delayed, the persisted shards (one per row block of X)
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
    shards_ : list of dask Delayed
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
