"""The k-NN estimators: :class:`KNNClassifier` (the notes' majority vote, ``default_label_``
on ties) and :class:`KNNRegressor` (the mean label), on the search of
``smml.neighbors._search``. See the package docstring for the rules.
"""
from __future__ import annotations

from typing import Any, TypeVar

from numpy.typing import ArrayLike, NDArray

import numpy as np

from smml._core import _knn
from smml._outputs import sum_scale
from smml._threads import threads_for
from smml._validation import encode_classes, validate_X_y
from smml.base import ClassifierMixin, RegressorMixin
from smml.neighbors._search import _KNNBase

_Self = TypeVar("_Self")

_VOTE_GRAIN = 1 << 16           # compiled vote: queries worth a thread of their own (~10 ns each)

_DOC_PARAMS = """
    Parameters
    ----------
    n_neighbors : int, default=1
        n_neighbors, the notes' k: the number of neighbours (000: k <= m, the training set
        size; checked in fit). The notes' k' rule (000, 'The Nearest Neighbour algorithm')
        takes k' >= k points: every point tied with the k-th.
    metric : {"euclidean", "manhattan", "mahalanobis", "hamming"}, default="euclidean"
        002, 'Nearest neighbors': Euclidean ||x - y|| (the fast gemm path); Manhattan
        sum |x_i - y_i|; Mahalanobis sqrt((x - y)^T S^-1 (x - y)) with S^-1 from
        ``metric_params={"VI": S^-1}`` or ``{"V": S}``, else S = the training sample
        covariance (pseudo-inverse if singular). The points are ranked on the key
        (x - y)^T S^-1 (x - y) computed as defined, so points at equal distance tie (the
        candidates are found through x -> x L with L L^T = S^-1, a filter only); Hamming,
        the number of coordinates that differ.
    weights : {"uniform", "distance", "slide"} or callable, default="uniform"
        002, 'Weighted nearest neighbors'. "distance" (the default reading of the slide):
        the taken points count with weights proportional to 1 / distance; if any taken
        point is at distance 0 exactly, only the points at distance 0 count, each with
        weight 1. "slide": the formula as the slide prints it, h(x) = sum_i delta_i /
        (sum_j delta_j) y_i over the taken points: each point counts in proportion to its
        distance, so the *farthest* taken points weigh the most and a point at distance 0
        not at all (the vote leans away from the query; with k = 1 it is plain 1-NN); if
        every taken point is at distance 0 they count equally. A callable (002: "possible
        to extend to arbitrary weights") receives the 1-d array of distances of all taken
        points of a block of queries and returns their non-negative weights (same shape).
    metric_params : dict or None
        For metric="mahalanobis": ``{"VI": inverse covariance}`` or ``{"V": covariance}``.
    algorithm : {"auto", "brute", "tree"}, default="auto"
        How the neighbours are found; the result is the same, bit for bit, whichever is
        used (both compare the same exact keys, see ``smml._core._kdtree``).
        "brute" scans every training point (the Euclidean / Mahalanobis distances through
        a gemm candidate filter, re-ranked exactly). "tree" searches an exact kd-tree built
        at fit (leaves of at most 16 d points, within [32, 128]; extra memory: a reordered
        copy of the training data, m indices (and for the classifier m class codes), and
        fewer than m / 8 nodes of 2 indices and 2 d-vectors, i.e. O(m d)).
        "auto" picks by metric, dimension d, training size m and number of queries, from
        measurements on a 2-core x86-64 machine (bench/README.md): for Euclidean and
        Mahalanobis the tree up to d = 6, for d = 7..10 the tree when m >= 2^(d+8),
        otherwise both: queries go through the tree, which counts the distances and box
        bounds it computes, until a cost model of the two structures picks the one for
        the rest and for later calls (after 8 queries when one is estimated over twice as
        cheap, else after 128, over one or several calls; up to d = 10 a call of at most
        64 queries always takes the tree). Clustered or tie-heavy data favour the tree,
        spread-out data brute force, at every d: the same choice on every run. For
        Manhattan the tree up to d = 48 (its leaves' keys,
        computed several points at a time, beat the exact direct scan even where it
        prunes little); brute force for Hamming.
    n_jobs : int or None
        OpenMP threads (None or -1: all usable cores). Results do not depend on it.
"""


class KNNClassifier(ClassifierMixin, _KNNBase):
    _tree_labels = True
    __doc__ = """k-NN classifier (000, 'The Nearest Neighbour algorithm'; 002, 'Nearest neighbors').

    Predicts the majority label of the k' nearest training points (k' >= k takes every
    point tied with the k-th); a tie in the vote predicts ``default_label_``, the most
    frequent training label (the smallest in sorted order if several are equally frequent).
    With weights, a tie is exact equality of the weighted sums. ``predict_proba`` is the
    (weighted) share of each class among the taken points, so its argmax can differ from
    ``predict`` exactly when the vote is tied.
""" + _DOC_PARAMS + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    default_label_ : object
        The label predicted on vote ties.
    n_samples_fit_ : int
        Number of training points kept (zero-weight points dropped).
    algorithm_ : {"tree", "brute", "both"}
        The structures built at fit (see ``algorithm``).
    VI_ : ndarray of shape (n_features, n_features)
        The inverse covariance used (metric="mahalanobis" only).

    See Also
    --------
    sklearn.neighbors.KNeighborsClassifier : scikit-learn's k-NN classifier (exactly k
        neighbours, no k' rule for ties).
    smml.dask.KNNClassifier : the same classifier with a training set sharded on Dask.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.neighbors import KNNClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> clf = KNNClassifier(n_neighbors=3).fit(X, y)
    >>> clf.predict([[1.5], [9.0]]).tolist()
    [0, 1]
    >>> clf.predict_proba([[5.0]]).round(3).tolist()   # 0.0 and 10.0 tie for 3rd: k' = 4
    [[0.75, 0.25]]
    """

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Store the training set (and build the search structures).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,)
            Training labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Each training point's vote is multiplied by its weight (times its distance
            weight); the neighbours themselves are chosen by distance alone, so a weight k
            is not k copies of the point (copies would also fill the k nearest); a zero
            weight drops the point.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        X, y = self._take_weights(X, y, sample_weight)
        self.classes_, self._y = encode_classes(y)
        counts = np.bincount(self._y, weights=self._sw, minlength=self.classes_.size)
        self._default = int(np.argmax(counts))     # first maximum: smallest label in sorted order
        self.default_label_ = self.classes_[self._default]
        return self._fit(X, y)

    def _counts_only(self):
        """Whether a vote only counts the taken points (uniform weights, no sample weights):
        the kd-tree can then count them per class itself (``_kdtree.knn_votes``)."""
        uniform = isinstance(self.weights, str) and self.weights == "uniform"
        return uniform and self.__dict__.get("_sw") is None

    def _votes(self, taken, nb):
        _, idx, keys = taken.csr()
        sw = self.__dict__.get("_sw")
        return self._class_votes(np.repeat(np.arange(nb), taken.counts), self._y[idx], keys, nb,
                                 None if sw is None else sw[idx])

    def _class_votes(self, rows, codes, keys, nb, sw=None):
        """(nb, n_classes) (weighted) votes of taken points given by their query row, class
        code and key, summed in the order given (also smml.dask's merge of shards); with
        the points' sample weights ``sw``, in the order of (row, key, class, weight), so the
        order of the training rows cannot change a vote's last bit."""
        nc = self.classes_.size
        if sw is not None:
            order = np.lexsort((sw, codes, keys, rows))
            rows, codes, keys, sw = rows[order], codes[order], keys[order], sw[order]
        w = self._neighbour_weights(keys, rows, nb)
        if sw is not None:
            w = sw if w is None else w * sw
        return np.bincount(rows * nc + codes, weights=w, minlength=nb * nc).reshape(nb, nc)

    def _proba(self, votes):
        """Each class's share of the votes (uniform where a weights callable gave all zeros)."""
        total = votes.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = votes / total
        p[total[:, 0] == 0] = 1.0 / self.classes_.size
        return p

    def _decide(self, votes):
        pred = np.argmax(votes, axis=1)
        best = votes[np.arange(votes.shape[0]), pred]
        tied = (votes == best[:, None]).sum(axis=1) > 1
        pred[tied] = self._default
        return pred

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The notes' k-NN prediction for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The query points.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The majority label of each query's taken points (``default_label_`` on ties).
        """
        Q0, Qm, k = self._fitted_queries(X)
        pred = np.empty(Q0.shape[0], dtype=np.intp)
        counts_only = self._counts_only()
        n_threads = self._n_threads()
        for rows, taken in self._search(Q0, k, n_threads, Qm=Qm, votes=counts_only):
            nb = taken.counts.shape[0]
            if taken.votes is not None:                # the kd-tree counted them and voted
                pred[rows] = taken.pred
            elif counts_only and taken.idx is not None:
                # the compiled vote (same rule as _decide)
                out = pred[rows] if isinstance(rows, slice) else np.empty(nb, dtype=np.intp)
                if taken.lab is not None:              # the codes themselves: y = identity
                    codes, y = taken.lab, np.arange(self.classes_.size, dtype=np.intp)
                else:
                    codes, y = taken.idx, self._y
                _knn.vote_uniform(codes, taken.counts, y, self.classes_.size,
                                  self._default, out, threads_for(n_threads, nb, _VOTE_GRAIN))
                if np.any(out < 0):
                    raise MemoryError("k-NN vote: could not allocate the per-thread counts")
                if not isinstance(rows, slice):
                    pred[rows] = out
            else:
                pred[rows] = self._decide(self._votes(taken, nb))
        return self.classes_[pred]

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """(Weighted) fraction of the taken points in each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The query points.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Class shares, columns in the order of ``classes_``.
        """
        Q0, Qm, k = self._fitted_queries(X)
        proba = np.empty((Q0.shape[0], self.classes_.size), dtype=np.float64)
        for rows, taken in self._search(Q0, k, self._n_threads(), Qm=Qm, votes=self._counts_only()):
            votes = taken.votes if taken.votes is not None else self._votes(taken, taken.counts.shape[0])
            proba[rows] = self._proba(votes)
        return proba


class KNNRegressor(RegressorMixin, _KNNBase):
    __doc__ = """k-NN regressor (000, 'The Nearest Neighbour algorithm'; 002, 'Nearest neighbors').

    Predicts the average label of the k' nearest training points (k' >= k takes every
    point tied with the k-th), weighted by 1 / distance for weights="distance". The sum
    runs over the taken points in the order of (distance, label), so the prediction does
    not depend on the order of the training rows, not even in its last bit.
""" + _DOC_PARAMS + """
    Attributes
    ----------
    n_samples_fit_ : int
        Number of training points kept (zero-weight points dropped).
    algorithm_ : {"tree", "brute", "both"}
        The structures built at fit (see ``algorithm``).
    VI_ : ndarray of shape (n_features, n_features)
        The inverse covariance used (metric="mahalanobis" only).

    See Also
    --------
    sklearn.neighbors.KNeighborsRegressor : scikit-learn's k-NN regressor (exactly k
        neighbours, no k' rule for ties).
    smml.dask.KNNRegressor : the same regressor with a training set sharded on Dask.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.neighbors import KNNRegressor
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0.0, 1.0, 4.0, 9.0])
    >>> reg = KNNRegressor(n_neighbors=2).fit(X, y)
    >>> reg.predict([[0.4], [2.6]]).round(3).tolist()
    [0.5, 6.5]
    """

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Store the training set (and build the search structures).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training points.
        y : array-like of shape (n_samples,)
            Training targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Each point's label enters the mean with its weight (times its distance
            weight); the neighbours are chosen by distance alone (a weight k is not k
            copies); a zero weight drops the point.

        Returns
        -------
        self : object
            The fitted regressor.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", y_numeric=True)
        X, y = self._take_weights(X, y, sample_weight)
        self._y = np.ascontiguousarray(y, dtype=np.float64)
        return self._fit(X, y)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The (weighted) mean label of the taken points, for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The query points.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predictions (float64).
        """
        Q0, Qm, k = self._fitted_queries(X)
        pred = np.empty(Q0.shape[0], dtype=np.float64)
        for block, taken in self._search(Q0, k, self._n_threads(), Qm=Qm):
            nb = taken.counts.shape[0]
            _, idx, keys = taken.csr()
            sw = self.__dict__.get("_sw")
            pred[block] = self._mean_label(np.repeat(np.arange(nb), taken.counts), self._y[idx], keys, nb,
                                           None if sw is None else sw[idx])
        return pred

    def _mean_label(self, rows, yv, keys, nb, sw=None):
        """The (weighted) mean of the labels yv of taken points given by their query row and
        key, summed in the order of (row, key, label[, sample weight]) whatever order they
        come in (also smml.dask's merge of shards)."""
        order = np.lexsort((yv, keys, rows) if sw is None else (sw, yv, keys, rows))
        rows, yv, keys = rows[order], yv[order], keys[order]
        w = self._neighbour_weights(keys, rows, nb)
        if sw is not None:
            sw = sw[order]
            w = sw if w is None else w * sw
        if w is None:
            count = np.bincount(rows, minlength=nb)
            with np.errstate(over="ignore", invalid="ignore"):
                mean = np.bincount(rows, weights=yv, minlength=nb) / count
            if not np.isfinite(mean).all():     # finite labels whose sum overflowed (sum_scale)
                s = sum_scale(count.max())
                mean = np.bincount(rows, weights=yv * s, minlength=nb) / count / s
            return mean
        den = np.bincount(rows, weights=w, minlength=nb)
        if np.any(den == 0):
            raise ValueError("the weights of all taken neighbours of a query are zero")
        with np.errstate(over="ignore", invalid="ignore"):
            mean = np.bincount(rows, weights=w * yv, minlength=nb) / den
        if not np.isfinite(mean).all():
            # the weighted sums overflowed: labels scaled by sum_scale and the weights by a power
            # of two putting the largest at 1 (the ratio keeps its bits where it was finite)
            s = sum_scale(np.bincount(rows, minlength=nb).max())
            ws = w * 2.0 ** -np.frexp(np.max(w))[1]
            num = np.bincount(rows, weights=ws * (yv * s), minlength=nb)
            mean = num / np.bincount(rows, weights=ws, minlength=nb) / s
        return mean
