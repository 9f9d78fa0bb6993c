"""The Perceptron (000 "Linear predictors"; 001; 003 section 9)."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from smml._core import _linear as _k
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, cast_to_model, encode_classes, validate_X,
                               validate_X_y)
from smml.base import ClassifierMixin, SmmlEstimator, store_params

from smml.linear._base import (_BOOL, _CLASS_WEIGHT, _check_rng, _first_chunk, _next_chunk,
                               _raise_divergence, _refuse_overflowing_scores, _row_weights, _scores,
                               _warm_weights)

class Perceptron(ClassifierMixin, SmmlEstimator):
    """The Perceptron of 000, "Training linear classifiers" (also 001, 003 section 9).

    w = 0; epochs over the training set in order (or, with ``shuffle=True``, in
    a new random order per epoch drawn from ``random_state``); whenever
    y_t w.x_t <= 0 the update w <- w + y_t x_t; stop after an epoch without any
    update (``converged_ = True``) or after ``max_iter`` epochs. On a linearly
    separable training set the number of updates is at most
    (min_{u: gamma(u) >= 1} ||u||^2)(max_t ||x_t||^2) (000, Theorem 3; see
    :func:`smml.bounds.perceptron_convergence_bound`).

    More than two classes: one-vs-rest, one Perceptron per class (labels +1 for
    the class, -1 otherwise), prediction by the largest score (first class on
    ties). float32 input is learnt in float32 (no conversion), and float32
    input to ``decision_function`` of a float32 model gives float32 scores.

    Weights (an extension: the notes' Perceptron has none): ``sample_weight``
    makes every update a weighted step, w <- w + s_t y_t x_t (the mistake test
    y_t w.x_t <= 0 is unchanged). Weighted steps rather than weighted sampling
    because the Perceptron is a deterministic pass over the data: sampling
    would make it random. A zero weight drops the row; all-ones weights give
    the unweighted run bit for bit; an integer weight k is NOT k copies of the
    row (k copies visited in turn test the margin again after each update, so
    they may update fewer than k times: the pass is order dependent).
    ``class_weight`` multiplies the sample weight of each row by its class's
    weight (scikit-learn's semantics). ``warm_start=True``: ``fit`` starts
    from the fitted ``coef_`` / ``intercept_`` instead of w = 0 (same classes
    and features needed).

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the constant feature 1 (000, "Hyperplanes").
    max_iter : int, default=1000
        The largest number of epochs (passes over the training set).
    shuffle : bool, default=False
        Visit the examples in a fresh random order every epoch.
    class_weight : None, "balanced" or dict, default=None
        Weights of the classes, multiplying ``sample_weight`` ("balanced":
        n_samples / (n_classes * bincount(y))).
    warm_start : bool, default=False
        ``fit`` continues from the fitted weights instead of w = 0.
    random_state : None, int or Generator, default=None
        Seed of the random orders (used with ``shuffle=True``).
    n_jobs : None or int, default=None
        Threads of ``decision_function`` (training is sequential).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, d) or (n_classes, d)
        The weights (one row per class for one-vs-rest).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The weight of the constant feature.
    n_updates_ : int or ndarray of shape (n_classes,)
        The number of updates (one per class for one-vs-rest).
    n_iter_ : int or ndarray of shape (n_classes,)
        The number of epochs run (one per class for one-vs-rest).
    converged_ : bool or ndarray of shape (n_classes,)
        Whether the last epoch made no update (one per class for one-vs-rest).

    See Also
    --------
    sklearn.linear_model.Perceptron : scikit-learn's Perceptron.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import Perceptron
    >>> X = np.array([[-2., -1.], [-1., -2.], [1., 2.], [2., 1.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = Perceptron().fit(X, y)
    >>> clf.converged_
    True
    >>> clf.predict([[3., 3.], [-3., -3.]]).tolist()
    [1, 0]
    """

    _parameter_spec = {"fit_intercept": _BOOL, "max_iter": Interval(int, 1, None),
                       "shuffle": _BOOL, "class_weight": _CLASS_WEIGHT, "warm_start": _BOOL,
                       "random_state": RANDOM_STATE, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept: bool = True, max_iter: int = 1000, shuffle: bool = False,
                 class_weight: dict | str | None = None, warm_start: bool = False,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def _run(self, X, y_pm, rng, w0=None, sw=None):
        n, d = X.shape
        w = (np.zeros(d + int(self.fit_intercept), dtype=X.dtype) if w0 is None
             else np.array(w0, dtype=X.dtype, copy=True))
        order = np.arange(n, dtype=np.intp)
        updates, epochs, converged = 0, 0, False
        for epoch in range(self.max_iter):
            if self.shuffle:
                order = rng.permutation(n).astype(np.intp, copy=False)
            n_up, status = _k.perceptron_epoch(X, y_pm, order, w, bool(self.fit_intercept), sw)
            epochs += 1
            updates += n_up
            if status:
                _raise_divergence(self, f"in epoch {epochs}", "rescale the features")
            if n_up == 0:
                converged = True
                break
        return w, updates, epochs, converged

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Perceptron:
        """Run the Perceptron (one per class for more than two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples: each update is scaled by its row's weight (None: all ones).

        Returns
        -------
        self : object
            The fitted Perceptron.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        sw, X, y = _row_weights(X, y, sample_weight, self.class_weight)
        classes, y_enc = encode_classes(y)
        d = X.shape[1]
        k = len(classes)
        W0 = None if k == 1 else _warm_weights(self, 1 if k == 2 else k, d + int(self.fit_intercept))
        if W0 is not None and not np.array_equal(classes, self.classes_):
            raise ValueError("Perceptron: warm_start needs the classes of the previous fit")
        self.classes_ = classes
        self.__dict__.pop("_stream_w", None)    # fit starts afresh; a later partial_fit starts a new stream
        rng = _check_rng(self.random_state)
        if k == 1:
            # a single class: every prediction is that class (nothing to learn)
            self.coef_ = np.zeros((1, d), dtype=X.dtype)
            self.intercept_ = np.ones(1, dtype=X.dtype)
            self.n_updates_, self.n_iter_, self.converged_ = 0, 0, True
            return self
        problems = [y_enc == 1] if k == 2 else [y_enc == c for c in range(k)]
        coefs, intercepts, ups, eps, convs = [], [], [], [], []
        for j, pos in enumerate(problems):
            y_pm = np.where(pos, 1, -1).astype(np.int8)
            w, u, e, c = self._run(X, y_pm, rng, None if W0 is None else W0[j], sw)
            coefs.append(w[:d])
            intercepts.append(w[d] if self.fit_intercept else 0.0)
            ups.append(u), eps.append(e), convs.append(c)
        self.coef_ = np.array(coefs, dtype=X.dtype)
        self.intercept_ = np.array(intercepts, dtype=X.dtype)
        _refuse_overflowing_scores(self, X)
        if k == 2:
            self.n_updates_, self.n_iter_, self.converged_ = ups[0], eps[0], convs[0]
        else:
            self.n_updates_ = np.array(ups)
            self.n_iter_ = np.array(eps)
            self.converged_ = np.array(convs)
        return self

    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Perceptron:
        """One pass of the Perceptron over (X, y), from the current weights: the online
        Perceptron of 000 on a stream that arrives in chunks. The rows are visited in order
        (``shuffle=True``: in a random order drawn from the stream's generator, seeded by
        ``random_state`` on the first call), so calls on consecutive chunks equal one call on
        their concatenation, and with ``shuffle=False`` ``fit`` with ``max_iter=1`` on it,
        bit for bit. ``classes`` (every label of the stream) is needed on the first call.
        ``n_updates_`` counts the updates of the whole stream (000's mistake bound applies to
        it), ``n_iter_`` the calls; ``converged_`` says whether the last call made no update.
        ``sample_weight`` / ``class_weight`` (a dict; "balanced" is refused here) scale the
        updates as in ``fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The chunk's examples.
        y : array-like of shape (n_samples,)
            The chunk's labels.
        classes : array-like, default=None
            Every label of the stream; required on the first call.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the chunk's examples (None: all ones).

        Returns
        -------
        self : object
            The updated Perceptron.
        """
        self._validate_params()
        if hasattr(self, "coef_") and "_stream_w" not in self.__dict__:
            # after fit: the stream continues from the fitted weights
            if len(self.classes_) < 2:
                raise ValueError("partial_fit needs at least 2 classes; this Perceptron was fit on one")
            W = np.atleast_2d(self.coef_)
            if self.fit_intercept:
                W = np.hstack([W, np.reshape(self.intercept_, (-1, 1))])
            self._stream_w = np.array(W, copy=True)
            self._stream_rng = _check_rng(self.random_state)
            self._stream_updates = np.atleast_1d(np.array(self.n_updates_, dtype=np.int64)).copy()
            self._stream_calls = int(np.max(self.n_iter_))
        first = "_stream_w" not in self.__dict__
        if first:
            X, y = _first_chunk(self, X, y, classes, "floating")
            n_prob = 1 if len(self.classes_) == 2 else len(self.classes_)
            self._stream_w = np.zeros((n_prob, X.shape[1] + int(self.fit_intercept)), dtype=X.dtype)
            self._stream_rng = _check_rng(self.random_state)
            self._stream_updates = np.zeros(n_prob, dtype=np.int64)
            self._stream_calls = 0
        else:
            X, y = _next_chunk(self, X, y, "floating")
        if len(self._stream_w[0]) != X.shape[1] + int(self.fit_intercept):
            raise ValueError("fit_intercept changed since the first call to partial_fit")
        sw, X, y = _row_weights(X, y, sample_weight, self.class_weight, partial=True)
        X = cast_to_model(self, X, self._stream_w.dtype, order="C")
        y_enc = np.searchsorted(self.classes_, y)
        bad = (y_enc >= len(self.classes_)) | (self.classes_[np.minimum(y_enc, len(self.classes_) - 1)] != y)
        if np.any(bad):
            raise ValueError(f"y contains labels outside classes_ {self.classes_.tolist()}: "
                             f"{np.unique(np.asarray(y)[bad]).tolist()}")
        n, d = X.shape
        order = (self._stream_rng.permutation(n).astype(np.intp, copy=False) if self.shuffle
                 else np.arange(n, dtype=np.intp))
        n_prob = self._stream_w.shape[0]
        ups = np.zeros(n_prob, dtype=np.int64)
        for j in range(n_prob):
            pos = y_enc == (1 if n_prob == 1 else j)
            y_pm = np.where(pos, 1, -1).astype(np.int8)
            w = self._stream_w[j].copy()
            n_up, status = _k.perceptron_epoch(X, y_pm, order, w, bool(self.fit_intercept), sw)
            if status:
                _raise_divergence(self, "in partial_fit", "rescale the features")
            self._stream_w[j] = w
            ups[j] = n_up
        self._stream_updates += ups
        self._stream_calls += 1
        W = self._stream_w
        self.coef_ = np.array(W[:, :d], copy=True)
        self.intercept_ = (np.array(W[:, d], copy=True) if self.fit_intercept
                           else np.zeros(n_prob, dtype=W.dtype))
        if n_prob == 1:
            self.n_updates_ = int(self._stream_updates[0])
            self.n_iter_ = self._stream_calls
            self.converged_ = bool(ups[0] == 0)
        else:
            self.n_updates_ = self._stream_updates.copy()
            self.n_iter_ = np.full(n_prob, self._stream_calls)
            self.converged_ = ups == 0
        return self

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Return w.x' per row (two classes), or per class (one-vs-rest).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The decision values; > 0 means ``classes_[1]`` for two classes.
        """
        s = _scores(self, X)
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict sgn(w.x') with sgn(0) = -1 (two classes), or the class of largest score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted class labels.
        """
        s = _scores(self, X)
        if len(self.classes_) == 1:
            return np.repeat(self.classes_, s.shape[0])
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]
