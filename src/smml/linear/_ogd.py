"""Projected online gradient descent (003 section 10)."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from smml._core import _linear as _k
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, Options, validate_X, validate_X_y)

from smml.linear._base import (_BOOL, _CLASS_WEIGHT, _check_rng, _first_chunk, _next_chunk,
                               _problem_labels, _raise_divergence, _row_weights, _LinearClassifier,
                               _LinearRegressorBase)
from smml.base import store_params

_LOSS_CODES = {"hinge": _k.LOSS_HINGE, "logistic": _k.LOSS_LOGISTIC, "square": _k.LOSS_SQUARE}


class _OGDMixin:
    """Projected OGD of 003, section 10, shared by the classifier and the regressor."""


    def _reset(self, p, n_problems=None):
        """w_1 = 0: one weight vector (p,), or (n_problems, p) for a one-vs-rest classifier."""
        if hasattr(self, "learning_rate_"):
            del self.learning_rate_
        self.w_ = np.zeros(p) if n_problems is None else np.zeros((n_problems, p))
        self.t_ = 0
        self.cumulative_loss_ = 0.0 if n_problems is None else np.zeros(n_problems)
        self._rng = _check_rng(self.random_state)

    def _warm(self, p, n_problems=None):
        """True when ``fit`` continues the stream (``warm_start`` and a fitted w_ of this shape)."""
        if not (self.warm_start and hasattr(self, "w_")):
            return False
        shape = (p,) if n_problems is None else (n_problems, p)
        if self.w_.shape != shape:
            raise ValueError(f"{type(self).__name__}: warm_start needs the classes, features and "
                             "fit_intercept of the previous fit; set warm_start=False to start afresh")
        return True

    def _stream(self, X, y_f, n_epochs, sw=None):
        """n_epochs passes of the stream; y_f (n,) for one problem, (n_problems, n) for one-vs-rest
        (each epoch's order is drawn once and walked by every problem); sw: row weights or None."""
        n, d = X.shape
        fi = bool(self.fit_intercept)
        if self.w_.shape[-1] != d + fi:
            # the kernel writes w[d] when fi: a w_ from another fit_intercept is out of bounds
            raise ValueError(f"{type(self).__name__}: fit_intercept was changed to {self.fit_intercept!r} "
                             "since the first call to partial_fit; call fit (or clone) to restart")
        strong = self.sigma is not None
        sched = _k.SCHED_STRONG if strong else _k.SCHED_SQRT
        l2 = float(self.sigma) if strong else 0.0
        if self.learning_rate == "auto":
            if not hasattr(self, "learning_rate_"):
                self.learning_rate_ = 1.0 / (2.0 * (float(np.max(np.einsum("ij,ij->i", X, X))) + float(fi))
                                             or 1.0)
            eta = self.learning_rate_
        else:
            eta = self.learning_rate_ = float(self.learning_rate)
        radius = 0.0 if self.radius is None else float(self.radius)
        W = self.w_.reshape(-1, d + fi)           # a view: the kernel updates self.w_
        Y = y_f.reshape(-1, n)
        cum = np.array(self.cumulative_loss_, dtype=np.float64).reshape(-1)
        in_order = np.arange(n, dtype=np.intp)
        try:
            for epoch in range(n_epochs):
                order = self._rng.permutation(n).astype(np.intp, copy=False) if self.shuffle else in_order
                for c in range(W.shape[0]):
                    st = _k.sgd_steps(X, Y[c], order, W[c], cum[c:c + 1], _LOSS_CODES[self.loss], sched,
                                      eta, l2, True, radius, self.t_, fi, sw)
                    if st:
                        _raise_divergence(self, f"after step {self.t_}", "lower learning_rate or set a radius")
                self.t_ += n
        finally:
            self.cumulative_loss_ = float(cum[0]) if self.w_.ndim == 1 else cum
        if self.w_.ndim == 1:
            self._set_augmented(self.w_, d)
        else:
            self._set_problems(self.w_, d)
        self.n_steps_ = self.t_
        self.n_iter_ = n_epochs

    @property
    def average_loss_(self) -> float | np.ndarray:
        """cumulative_loss_ / n_steps_: the left side of 003's regret bounds."""
        return self.cumulative_loss_ / max(1, self.n_steps_)


_OGD_SPEC = {"learning_rate": Interval(float, 0, None, "neither"),
             "radius": (Options(None), Interval(float, 0, None, "neither")),
             "sigma": (Options(None), Interval(float, 0, None, "neither")), "max_iter": Interval(int, 1, None),
             "shuffle": _BOOL, "fit_intercept": _BOOL, "warm_start": _BOOL, "random_state": RANDOM_STATE,
             "n_jobs": N_JOBS}


class OnlineGradientDescent(_OGDMixin, _LinearClassifier):
    """Projected online gradient descent (003, section 10) as a binary classifier.

    w_1 = 0; for t = 1, 2, ...: w'_{t+1} = w_t - eta_t grad l_t(w_t) and
    w_{t+1} = argmin_{||w|| <= U} ||w - w'_{t+1}|| (a rescaling onto the ball of
    radius U = ``radius``; ``None`` = no projection, U = infinity), with
    eta_t = eta / sqrt(t) (eta = ``learning_rate``). ``sigma`` (> 0) selects the strongly convex variant:
    each loss becomes the sigma-strongly convex l_t(w) + sigma/2 ||w||^2 and
    eta_t = 1/(sigma t).

    l_t(w) = loss(y_t, w.x_t) for ``loss`` in "hinge" [1 - y z]_+, "logistic"
    ln(1 + e^{-y z}) and "square" (y - z)^2 (``smml.losses``), y in {-1, +1}.
    The stream is the training set in order (or shuffled per epoch), ``max_iter``
    times; ``partial_fit`` continues the stream (t keeps counting).

    The loss suffered is recorded (``cumulative_loss_``, ``average_loss_``); compare with
    :func:`smml.bounds.ogd_regret_bound` / :func:`smml.bounds.ogd_strongly_convex_regret_bound`.

    More than two classes (an extension: the notes' OGD is binary here):
    one-vs-rest, one stream per class (classes_[c] +1, the rest -1) on the
    same order of examples (each epoch's shuffle is drawn once from
    ``random_state`` and walked by every problem, so problem c is exactly the
    binary fit on (X, y == classes_[c]) with the same ``random_state``);
    ``cumulative_loss_`` and ``average_loss_`` are then arrays, one per class,
    and ``predict`` is the class of the largest score (first class on ties).

    Weights (an extension: 003's OGD has none): ``sample_weight`` s makes
    weighted steps, l_t(w) = s_t loss(y_t, w.x_t) (+ sigma/2 ||w||^2), so
    the gradient step of round t is scaled by s_t and ``cumulative_loss_``
    adds s_t loss. Weighted steps rather than weighted sampling because OGD is
    a pass over a stream in its order (003's rounds), which sampling would
    replace by random draws. A zero weight drops the row (no round); all-ones
    weights give the unweighted run bit for bit; an integer weight k is not k
    copies of the row (k copies are k rounds, each from the iterate the
    previous one left, with their own step sizes eta_t: the run is order
    dependent). ``warm_start=True``: ``fit`` continues the stream from the
    fitted w_ (t keeps counting, ``learning_rate_`` is kept), i.e. ``max_iter``
    more passes, as ``partial_fit`` does one.
    ``class_weight`` multiplies the sample weight of each row by its class's
    weight (scikit-learn's semantics).

    Parameters
    ----------
    loss : {"hinge", "logistic", "square"}, default="hinge"
        The loss l_t.
    learning_rate : float, default=1.0
        The step size scale eta of 003: eta_t = eta / sqrt(t).
    radius : None or float, default=None
        The radius U of the ball the weights are projected onto (None: no projection).
    sigma : None or float, default=None
        With sigma > 0, the sigma-strongly convex variant (eta_t = 1/(sigma t)).
    max_iter : int, default=5
        The number of passes of ``fit`` over the training set (epochs).
    shuffle : bool, default=False
        Visit the examples in a fresh random order every epoch.
    fit_intercept : bool, default=True
        Add the constant feature 1.
    class_weight : None, "balanced" or dict, default=None
        Weights of the classes, multiplying ``sample_weight`` ("balanced":
        n_samples / (n_classes * bincount(y))).
    warm_start : bool, default=False
        ``fit`` continues the stream from the fitted weights instead of w_1 = 0.
    random_state : None, int or Generator, default=None
        Seed of the random orders (used with ``shuffle=True``).
    n_jobs : None or int, default=None
        Threads of the predictions.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, d) or (n_classes, d)
        The weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The weight of the constant feature.
    cumulative_loss_ : float or ndarray of shape (n_classes,)
        sum_t l_t(w_t), the loss suffered before each update (one per class for one-vs-rest).
    n_steps_ : int
        The number of rounds T so far.
    n_iter_ : int
        The number of passes of the last call (``max_iter`` for ``fit``, 1 for ``partial_fit``).
    learning_rate_ : float
        The eta used.

    See Also
    --------
    sklearn.linear_model.SGDClassifier : scikit-learn's SGD linear classifiers.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import OnlineGradientDescent
    >>> X = np.array([[-2., -1.], [-1., -2.], [1., 2.], [2., 1.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = OnlineGradientDescent(max_iter=5).fit(X, y)
    >>> clf.n_steps_
    20
    >>> clf.predict([[3., 3.], [-3., -3.]]).tolist()
    [1, 0]
    """

    _parameter_spec = {"loss": Options("hinge", "logistic", "square"), **_OGD_SPEC,
                       "class_weight": _CLASS_WEIGHT}

    def __init__(self, loss: str = "hinge", learning_rate: float = 1.0, radius: float | None = None,
                 sigma: float | None = None, max_iter: int = 5, shuffle: bool = False,
                 fit_intercept: bool = True, class_weight: dict | str | None = None,
                 warm_start: bool = False,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> OnlineGradientDescent:
        """Run ``max_iter`` passes of projected OGD over (X, y) from w_1 = 0.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples: each round's loss is scaled by its row's weight (None: all ones).

        Returns
        -------
        self : object
            The fitted OnlineGradientDescent.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        sw, X, y = _row_weights(X, y, sample_weight, self.class_weight)
        prev = getattr(self, "classes_", None)
        self.classes_, Y = _problem_labels(self, y)
        p, k = X.shape[1] + int(self.fit_intercept), (None if len(Y) == 1 else len(Y))
        if self._warm(p, k):
            if not np.array_equal(prev, self.classes_):
                raise ValueError("OnlineGradientDescent: warm_start needs the classes of the previous fit")
        else:
            self._reset(p, k)
        self._stream(X, Y[0] if len(Y) == 1 else Y, self.max_iter, sw)
        return self

    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> OnlineGradientDescent:
        """One pass over (X, y) as the next rounds of the stream; ``classes`` needed on the first call.

        Calls on consecutive chunks equal one call on their concatenation, and (with
        ``shuffle=False``) ``fit`` with ``max_iter=1`` on it, bit for bit (t counts over the
        whole stream). ``sample_weight`` / a dict ``class_weight`` weight the rounds as in ``fit``
        ("balanced" is refused: one chunk's class counts are not the stream's).

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
            The updated OnlineGradientDescent.
        """
        first = not hasattr(self, "w_")
        self._validate_params()           # every call: set_params may have changed eta, radius, ...
        if first:
            X, y = _first_chunk(self, X, y, classes, "float64")
            k = len(self.classes_)
            self._reset(X.shape[1] + int(self.fit_intercept), None if k == 2 else k)
        else:
            X, y = _next_chunk(self, X, y, "float64")
        sw, X, y = _row_weights(X, y, sample_weight, self.class_weight, partial=True)
        Y = self._problem_targets(y)
        self._stream(X, Y[0] if len(Y) == 1 else Y, 1, sw)
        return self


class OnlineGradientDescentRegressor(_OGDMixin, _LinearRegressorBase):
    """Projected online gradient descent (003, section 10) for regression with the square loss.

    Same algorithm as :class:`OnlineGradientDescent` with l_t(w) = (y_t - w.x_t)^2.
    ``learning_rate="auto"`` (a choice: the square loss has unbounded gradients, so a
    fixed default eta overflows on unscaled data) sets eta = 1 / (2 max_t ||x'_t||^2)
    from the first batch seen (x' with the constant feature): each step is
    then a contraction on the example it uses. ``learning_rate_`` is the value used.

    Weights (an extension: 003's OGD has none): ``sample_weight`` s makes
    weighted steps, l_t(w) = s_t loss(y_t, w.x_t) (+ sigma/2 ||w||^2), so
    the gradient step of round t is scaled by s_t and ``cumulative_loss_``
    adds s_t loss. Weighted steps rather than weighted sampling because OGD is
    a pass over a stream in its order (003's rounds), which sampling would
    replace by random draws. A zero weight drops the row (no round); all-ones
    weights give the unweighted run bit for bit; an integer weight k is not k
    copies of the row (k copies are k rounds, each from the iterate the
    previous one left, with their own step sizes eta_t: the run is order
    dependent). ``warm_start=True``: ``fit`` continues the stream from the
    fitted w_ (t keeps counting, ``learning_rate_`` is kept), i.e. ``max_iter``
    more passes, as ``partial_fit`` does one.

    Parameters
    ----------
    loss : {"square"}, default="square"
        The loss l_t (the square loss only).
    learning_rate : "auto" or float, default="auto"
        The step size scale eta of 003: eta_t = eta / sqrt(t).
    radius : None or float, default=None
        The radius U of the ball the weights are projected onto (None: no projection).
    sigma : None or float, default=None
        With sigma > 0, the sigma-strongly convex variant (eta_t = 1/(sigma t)).
    max_iter : int, default=5
        The number of passes of ``fit`` over the training set (epochs).
    shuffle : bool, default=False
        Visit the examples in a fresh random order every epoch.
    fit_intercept : bool, default=True
        Add the constant feature 1.
    warm_start : bool, default=False
        ``fit`` continues the stream from the fitted weights instead of w_1 = 0.
    random_state : None, int or Generator, default=None
        Seed of the random orders (used with ``shuffle=True``).
    n_jobs : None or int, default=None
        Threads of the predictions.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    learning_rate_ : float
        The eta used.
    n_iter_ : int
        The number of passes of the last call (``max_iter`` for ``fit``, 1 for ``partial_fit``).
    cumulative_loss_ : float
        sum_t l_t(w_t), the loss suffered before each update.
    n_steps_ : int
        The number of rounds T so far.

    See Also
    --------
    sklearn.linear_model.SGDRegressor : scikit-learn's SGD linear regressor.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import OnlineGradientDescentRegressor
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> y = np.array([1., 3., 5., 7.])
    >>> reg = OnlineGradientDescentRegressor(max_iter=200).fit(X, y)
    >>> reg.n_steps_
    800
    >>> print(f"{reg.predict([[1.5]])[0]:.1f}")
    4.0
    """

    _parameter_spec = {"loss": Options("square"), **_OGD_SPEC,
                       "learning_rate": (Options("auto"), Interval(float, 0, None, "neither"))}

    def __init__(self, loss: str = "square", learning_rate: float | str = "auto", radius: float | None = None,
                 sigma: float | None = None, max_iter: int = 5, shuffle: bool = False,
                 fit_intercept: bool = True, warm_start: bool = False,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> OnlineGradientDescentRegressor:
        """Run ``max_iter`` passes of projected OGD over (X, y) from w_1 = 0.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples: each round's loss is scaled by its row's weight (None: all ones).

        Returns
        -------
        self : object
            The fitted OnlineGradientDescentRegressor.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        sw, X, y = _row_weights(X, y, sample_weight)
        if not self._warm(X.shape[1] + int(self.fit_intercept)):
            self._reset(X.shape[1] + int(self.fit_intercept))
        self._stream(X, y, self.max_iter, sw)
        return self

    def partial_fit(self, X: ArrayLike, y: ArrayLike,
                    sample_weight: ArrayLike | None = None) -> OnlineGradientDescentRegressor:
        """One pass over (X, y) as the next rounds of the stream.

        Calls on consecutive chunks equal one call on their concatenation, and (with
        ``shuffle=False``) ``fit`` with ``max_iter=1`` on it, bit for bit (t counts over the
        whole stream; ``learning_rate="auto"`` is set from the first chunk).
        ``sample_weight`` weights the rounds as in ``fit``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The chunk's examples.
        y : array-like of shape (n_samples,)
            The chunk's targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the chunk's examples (None: all ones).

        Returns
        -------
        self : object
            The updated OnlineGradientDescentRegressor.
        """
        self._validate_params()           # every call: set_params may have changed eta, radius, ...
        if not hasattr(self, "w_"):
            X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
            self._reset(X.shape[1] + int(self.fit_intercept))
        else:
            X = validate_X(self, X, reset=False, dtype="float64")
            y = np.ascontiguousarray(y, dtype=np.float64)
            if y.ndim != 1 or len(y) != X.shape[0] or not np.all(np.isfinite(y)):
                raise ValueError(f"y must be 1-d, finite, with {X.shape[0]} entries")
        sw, X, y = _row_weights(X, y, sample_weight)
        self._stream(X, y, 1, sw)
        return self
