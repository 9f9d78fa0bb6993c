"""k-NN on a training set sharded across the workers: each shard a :class:`smml.neighbors.Shard`
(searched on its worker), the shards' candidates merged by
:func:`smml.neighbors.merge_shard_candidates` and decided by the in-memory estimator
(:func:`smml.neighbors.decide_candidates`)."""
from __future__ import annotations

import numbers
import sys
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import numpy as np
import dask
import dask.array as da
from dask.sizeof import sizeof as _dask_sizeof
from sklearn.base import BaseEstimator   # plumbing: get_params / set_params from the signature
from sklearn.utils.multiclass import check_classification_targets

from smml import neighbors as _neighbors
from smml._typing import ArrayLike, NDArray
from smml.base import store_params

_Self = TypeVar("_Self")
from smml.dask._validation import _as_dask, _check_dask_X, _check_dask_y, _distributed_client, _split_rows, _stacked


def _package():
    """``smml.dask`` (its switches ``_SHARD_PER_WORKER`` and ``_MERGE_PAD`` are read at each use)."""
    return sys.modules["smml.dask"]


def _labels_summary(yb):
    """Pass 1 of a classifier's fit: the distinct labels of a block and their counts."""
    yb = np.asarray(yb)
    check_classification_targets(yb)
    try:
        return np.unique(yb, return_counts=True)
    except TypeError as exc:
        raise ValueError(f"class labels must be mutually comparable (all numbers or all strings, "
                         f"no None): {exc}") from None


@_dask_sizeof.register(_neighbors.Shard)
def _sizeof_shard(shard):
    """A shard's bytes (its searcher's arrays and its labels), for the scheduler: reported as
    a few bytes, a shard could be moved to another worker to meet a query block."""
    return shard.nbytes


def _fit_shard(Xbs, ybs, params, k, offset, classes):
    """Pass 2: the shard on its row blocks ``Xbs`` (consecutive) and their labels (class
    codes into ``classes``, or float64 values)."""
    return _neighbors.Shard(_stacked(Xbs), _stacked(ybs), params, k, offset, classes)


def _shard_rows(shard):
    return shard.n_rows


def _search_shard(shard, Qb, k):
    """The shard's taken points (its own k' rule) for each query (:meth:`Shard.search`)."""
    return shard.search(Qb, k)


def _merge_taken(parts, k, nb):
    """The notes' k' rule over the union of the shards' candidates
    (:func:`smml.neighbors.merge_shard_candidates`, padded matrix per ``smml.dask._MERGE_PAD``).
    Returns (rows, global indices, keys, labels) sorted by (query, key, index)."""
    return _neighbors.merge_shard_candidates(parts, k, nb, pad=_package()._MERGE_PAD)


def _knn_block(decider, kind, k, nb, *parts):
    # the in-memory estimator's own steps, on the merged points (sorted as its search
    # returns them: by query, key, index)
    rows, _, keys, labs = _merge_taken(parts, k, nb)
    return _neighbors.decide_candidates(decider, kind, rows, labs, keys, nb)


_Self = TypeVar("_Self", bound="_DaskKNNBase")


class _DaskKNNBase(BaseEstimator):
    """k-NN on a training set sharded across the workers (see the module doc)."""

    _classifier = False

    def __init__(self, n_neighbors: int = 1,
                 metric: Literal["euclidean", "manhattan", "mahalanobis", "hamming"] = "euclidean",
                 weights: Literal["uniform", "distance", "slide"] | Callable[..., Any] = "uniform",
                 metric_params: dict[str, Any] | None = None,
                 algorithm: Literal["auto", "brute", "tree"] = "auto", n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def __repr__(self):
        return f"smml.dask.{type(self).__name__}(n_neighbors={self.n_neighbors!r}, metric={self.metric!r})"

    def fit(self: _Self, X: da.Array, y: da.Array | ArrayLike) -> _Self:
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
        self : object
            The fitted estimator.
        """
        params = self.get_params()
        decider = _neighbors.shard_decider(params, self._classifier)   # the parameters checked
        if self.metric == "mahalanobis" and not self.metric_params:
            raise ValueError("smml.dask k-NN with metric='mahalanobis' needs metric_params={'VI': ...} "
                             "or {'V': ...}: the covariance of the whole sharded training set is not "
                             "estimated")
        X = _check_dask_X(X)
        n, d = X.shape
        if self.n_neighbors > n:
            raise ValueError(f"n_neighbors={self.n_neighbors} is larger than the number of training "
                             f"points, n_samples={n} (000: k cannot be taken larger than the size of "
                             "the training set)")
        y = _check_dask_y(y, n, X.chunks[0])
        classes = None
        if self._classifier:
            summaries = dask.compute(*[dask.delayed(_labels_summary)(yb) for yb in y.to_delayed()])
            classes = np.unique(np.concatenate([u for u, _ in summaries]))
            counts = np.zeros(classes.size, dtype=np.int64)
            for u, c in summaries:
                counts[np.searchsorted(classes, u)] += c
            self.classes_ = classes
            self.default_label_ = _neighbors.set_decider_classes(decider, classes, counts)
        sizes = [int(c) for c in X.chunks[0]]
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        xs, ys = list(X.to_delayed().ravel()), list(y.to_delayed())
        client = _distributed_client()
        workers = sorted(client.nthreads()) if client is not None and _package()._SHARD_PER_WORKER else []
        if workers:
            # one shard per worker, of consecutive row blocks: a worker searches one index
            # (a shard's search has fixed costs of its own), and the shards are spread
            bounds = _split_rows(sizes, len(workers))
        else:                       # dask's local schedulers (or no worker known yet)
            bounds = list(range(len(sizes) + 1))
        shards = [dask.delayed(_fit_shard)(xs[lo:hi], ys[lo:hi], params, self.n_neighbors, int(offsets[lo]), classes)
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
        k = int(self.n_neighbors)
        if not (isinstance(self.n_neighbors, numbers.Integral) and 1 <= k <= self.n_samples_fit_):
            raise ValueError(f"n_neighbors must be an integer in [1, n_samples_fit_={self.n_samples_fit_}], "
                             f"got {self.n_neighbors!r}")
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
    n_neighbors : int, default=1
        n_neighbors, the notes' k: the number of neighbours (k' >= k takes every point tied
        with the k-th).
    metric : {"euclidean", "manhattan", "mahalanobis", "hamming"}, default="euclidean"
        As :class:`smml.neighbors.KNNClassifier` (Mahalanobis needs ``metric_params``).
    weights : {"uniform", "distance"} or callable, default="uniform"
        As :class:`smml.neighbors.KNNClassifier`.
    metric_params : dict or None, default=None
        For metric="mahalanobis": ``{"VI": inverse covariance}`` or ``{"V": covariance}``.
    algorithm : {"auto", "brute", "tree"}, default="auto"
        The search structure of each shard (chosen per shard with "auto").
    n_jobs : int or None, default=None
        OpenMP threads of each shard's search on its worker.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    default_label_ : object
        The label predicted on vote ties.
    shards_ : list
        Distributed Futures (one shard per worker) or, on dask's local schedulers,
        persisted dask Delayed (one per row block of X).
    shard_sizes_ : tuple of int
        The number of training rows of each shard.
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features.

    See Also
    --------
    smml.neighbors.KNNClassifier : the in-memory classifier (the same predictions).
    sklearn.neighbors.KNeighborsClassifier : scikit-learn's k-NN classifier.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from smml.dask import KNNClassifier
    >>> Xd = da.from_array(np.array([[0.0], [1.0], [10.0], [11.0]]), chunks=2)
    >>> yd = da.from_array(np.array([0, 0, 1, 1]), chunks=2)
    >>> clf = KNNClassifier(n_neighbors=1).fit(Xd, yd)
    >>> clf.shard_sizes_
    (2, 2)
    >>> clf.predict(np.array([[0.5], [9.0]])).tolist()
    [0, 1]
    """

    _classifier = True

    def predict(self, X: da.Array | ArrayLike) -> da.Array | NDArray[Any]:
        """The k-NN prediction of each row.

        Parameters
        ----------
        X : dask array or array-like of shape (n_queries, n_features)
            The query points.

        Returns
        -------
        y_pred : dask array or ndarray of shape (n_queries,)
            A lazy dask array for a dask X, else an ndarray.
        """
        return self._run(X, "predict")

    def predict_proba(self, X: da.Array | ArrayLike) -> da.Array | NDArray[np.float64]:
        """The (weighted) share of each class among the taken points.

        Parameters
        ----------
        X : dask array or array-like of shape (n_queries, n_features)
            The query points.

        Returns
        -------
        proba : dask array or ndarray of shape (n_queries, n_classes)
            Class shares, columns as ``classes_`` (lazy for a dask X).
        """
        return self._run(X, "proba")


class KNNRegressor(_DaskKNNBase):
    """k-NN regressor on a training set sharded across a Dask cluster.

    The parameters and the predictions (bit for bit) of
    :class:`smml.neighbors.KNNRegressor`: the (weighted) mean label of the taken points
    (000's k' rule across shards), summed in the order of (distance, label).

    Parameters
    ----------
    n_neighbors : int, default=1
        n_neighbors, the notes' k: the number of neighbours (k' >= k takes every point tied
        with the k-th).
    metric : {"euclidean", "manhattan", "mahalanobis", "hamming"}, default="euclidean"
        As :class:`smml.neighbors.KNNRegressor` (Mahalanobis needs ``metric_params``).
    weights : {"uniform", "distance"} or callable, default="uniform"
        As :class:`smml.neighbors.KNNRegressor`.
    metric_params : dict or None, default=None
        For metric="mahalanobis": ``{"VI": inverse covariance}`` or ``{"V": covariance}``.
    algorithm : {"auto", "brute", "tree"}, default="auto"
        The search structure of each shard (chosen per shard with "auto").
    n_jobs : int or None, default=None
        OpenMP threads of each shard's search on its worker.

    Attributes
    ----------
    shards_ : list
        Distributed Futures or persisted dask Delayed (see :class:`KNNClassifier`).
    shard_sizes_ : tuple of int
        The number of training rows of each shard.
    n_samples_fit_ : int
        Number of training points.
    n_features_in_ : int
        Number of features.

    See Also
    --------
    smml.neighbors.KNNRegressor : the in-memory regressor (the same predictions).
    sklearn.neighbors.KNeighborsRegressor : scikit-learn's k-NN regressor.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from smml.dask import KNNRegressor
    >>> Xd = da.from_array(np.array([[0.0], [1.0], [10.0], [11.0]]), chunks=2)
    >>> yd = da.from_array(np.array([0.0, 1.0, 10.0, 11.0]), chunks=2)
    >>> reg = KNNRegressor(n_neighbors=2).fit(Xd, yd)
    >>> reg.predict(np.array([[0.4], [10.6]])).round(3).tolist()
    [0.5, 10.5]
    """

    def predict(self, X: da.Array | ArrayLike) -> da.Array | NDArray[Any]:
        """The (weighted) mean label of the taken points of each row.

        Parameters
        ----------
        X : dask array or array-like of shape (n_queries, n_features)
            The query points.

        Returns
        -------
        y_pred : dask array or ndarray of shape (n_queries,)
            A lazy dask array for a dask X, else an ndarray.
        """
        return self._run(X, "regress")


