"""Pegasos (003 section 12)."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from smml._core import _linear as _k
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, validate_X, validate_X_y)

from smml._random import STEP_CHUNK, draw_integers
from smml._random import step_indices as _step_indices
from smml.linear._base import (_BOOL, _CLASS_WEIGHT, _check_rng, _first_chunk,
                               _next_chunk, _problem_labels, _raise_divergence,
                               _refuse_overflowing_scores, _row_weights, _LinearClassifier)
from smml.base import store_params

def _weighted_step_indices(rng, sw, n_steps, chunk=STEP_CHUNK):
    """The examples of steps 1..n_steps drawn with replacement with probabilities s_i / sum s.

    Integer weights: one uniform integer j in [0, sum s) per step (the very draws of
    :func:`smml._random.step_indices` on sum s rows) mapped to the row whose block of the
    repeated data ``np.repeat(X, s)`` holds j, so the fit equals the fit on the repeated rows
    bit for bit. Other weights: one uniform real in [0, sum s) per step, mapped the same way.
    """
    cum = np.cumsum(sw)
    total = float(cum[-1])
    integral = bool(np.all(sw == np.floor(sw))) and total < 2.0 ** 53
    done = 0
    while done < n_steps:
        c = min(chunk, n_steps - done)
        u = draw_integers(rng, int(total), c) if integral else rng.random(c) * total
        idx = np.searchsorted(cum, u, side="right")
        yield np.minimum(idx, len(sw) - 1).astype(np.intp, copy=False)
        done += c


class Pegasos(_LinearClassifier):
    """Pegasos for the SVM objective F(w) = alpha/2 ||w||^2 + (1/m) sum_t [1 - y_t w.x_t]_+.

    ``alpha`` is 003's lambda (same value, same meaning; scikit-learn's name for
    the regularisation strength) and ``max_iter`` is 003's T, the number of
    steps (not of epochs).

    Exactly 003, section 12: w_1 = 0; at step t = 1..T draw one training
    example (x, y) uniformly at random (from ``random_state``) and set
    w_{t+1} = (1 - 1/t) w_t + (1/(lambda t)) y x I{1 - y w_t.x > 0}
    (eta_t = 1/(lambda t), lambda = ``alpha``). The kernel keeps w = s v so the
    shrink costs O(1) and a step O(d). ``average=True`` returns
    w_bar = (1/T) sum_{t=1}^T w_t, the iterate of the bound
    E[F(w_bar)] <= F(w*) + (G^2 / (2 lambda T)) (ln T + 1)
    (:func:`smml.bounds.pegasos_bound`); otherwise the last iterate w_{T+1}.

    Weights (an extension): ``fit`` with ``sample_weight`` s uses weighted
    sampling: step t draws example i with probability s_i / sum s, so it is
    Pegasos on the objective alpha/2 ||w||^2 + (1/sum s) sum_i s_i hinge_i (the
    objective of the data with row i repeated s_i times). Sampling rather than
    weighted steps keeps 003's step size 1/(lambda t) and its bound; and with
    integer weights the draws are those of the repeated data (see
    ``_weighted_step_indices``): a fit with integer weights equals the fit on
    ``np.repeat(X, s)`` bit for bit. A zero weight drops the row; all-ones
    weights give the unweighted run bit for bit. ``partial_fit`` walks the
    stream in order (nothing is sampled), so there a weight scales the hinge
    term of the step instead (a weighted step: (1/(lambda t)) s_t y x). ``class_weight``
    multiplies the sample weight of each row by its class's weight
    (scikit-learn's semantics). ``warm_start=True``: ``fit`` continues the
    previous run (its iterate, its running average and its step counter t, so
    the step sizes keep decreasing as 1/(lambda t)) for ``max_iter`` more steps.

    With ``fit_intercept`` the constant feature is part of x, so its weight is
    penalised as well (unlike scikit-learn's SGDClassifier).

    More than two classes (an extension: the notes define the binary SVM):
    one-vs-rest, one Pegasos run per class (classes_[c] +1, the rest -1), all
    on the SAME draws: the example of step t is drawn once from
    ``random_state`` and used by every problem, so problem c is exactly the
    binary fit on (X, y == classes_[c]) with the same ``random_state``.
    ``predict`` is the class of the largest score (first class on ties).

    Parameters
    ----------
    alpha : float, default=1e-3
        The regularisation strength alpha > 0 (003's lambda).
    max_iter : int, default=10000
        The number of steps T (003's T; steps, not epochs).
    average : bool, default=False
        Return the average iterate w_bar instead of the last one.
    fit_intercept : bool, default=True
        Add the constant feature 1 (its weight is penalised).
    class_weight : None, "balanced" or dict, default=None
        Weights of the classes, multiplying ``sample_weight`` ("balanced":
        n_samples / (n_classes * bincount(y))).
    warm_start : bool, default=False
        ``fit`` continues the previous run (t keeps counting) instead of starting from w_1 = 0.
    random_state : None, int or Generator, default=None
        Seed of the uniform draws of the examples.
    n_jobs : None or int, default=None
        Threads of ``decision_function``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, d) or (n_classes, d)
        The weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The weight of the constant feature.
    n_iter_ : int
        The number of steps taken (all of them, with ``warm_start`` or ``partial_fit``).

    See Also
    --------
    sklearn.linear_model.SGDClassifier : scikit-learn's SGD linear classifiers (hinge loss: a linear SVM).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import Pegasos
    >>> X = np.array([[-2., -1.], [-1., -2.], [1., 2.], [2., 1.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = Pegasos(alpha=0.1, max_iter=1000, random_state=0).fit(X, y)
    >>> clf.predict([[3., 3.], [-3., -3.]]).tolist()
    [1, 0]
    >>> clf.n_iter_
    1000
    """

    _parameter_spec = {"alpha": Interval(float, 0, None, "neither"), "max_iter": Interval(int, 1, None),
                       "average": _BOOL, "fit_intercept": _BOOL, "class_weight": _CLASS_WEIGHT,
                       "warm_start": _BOOL, "random_state": RANDOM_STATE, "n_jobs": N_JOBS}

    def __init__(self, alpha: float = 1e-3, max_iter: int = 10000, average: bool = False,
                 fit_intercept: bool = True, class_weight: dict | str | None = None,
                 warm_start: bool = False,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Pegasos:
        """Run ``max_iter`` steps of Pegasos from w_1 = 0 (one run per class for one-vs-rest).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples: the probabilities of the draws (None: uniform).

        Returns
        -------
        self : object
            The fitted Pegasos.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        sw, X, y = _row_weights(X, y, sample_weight, self.class_weight)
        warm = self.warm_start and hasattr(self, "_pegasos_state")
        prev_classes = self.classes_ if warm else None
        self.classes_, Y = _problem_labels(self, y)
        Y8 = Y.astype(np.int8)
        n, d = X.shape
        k = Y.shape[0]
        fi = bool(self.fit_intercept)
        rng = _check_rng(self.random_state)
        if warm:
            V, U, state = (a.copy() for a in self._pegasos_state)
            if (not np.array_equal(prev_classes, self.classes_) or V.shape != (k, d + fi)
                    or getattr(self, "_pegasos_average", bool(self.average)) != bool(self.average)):
                raise ValueError("Pegasos: warm_start needs the classes, features, fit_intercept and "
                                 "average of the previous fit; set warm_start=False to start afresh")
        else:
            V = np.zeros((k, d + fi))
            U = np.zeros((k, d + fi))
            state = np.tile([1.0, 0.0, 0.0], (k, 1))
        steps = (_step_indices(rng, n, self.max_iter) if sw is None
                 else _weighted_step_indices(rng, sw, self.max_iter))
        for idx in steps:
            for c in range(k):          # one-vs-rest: every problem takes the same steps
                if _k.pegasos_steps(X, Y8[c], idx, V[c], U[c], state[c], float(self.alpha), fi,
                                    bool(self.average)):
                    _raise_divergence(self, f"by step {int(state[c, 1])}", "rescale the features")
        self.__dict__.pop("_stream_state", None)   # fit starts afresh
        self._finish(V, U, state, d)
        _refuse_overflowing_scores(self, X)
        return self

    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Pegasos:
        """The next ``len(X)`` steps of Pegasos on a stream: step t uses the t-th example of
        the stream (the rows of the calls, in order) instead of a uniform draw from a fixed
        training set (003 section 12's update, step size eta_t = 1/(lambda t), t counting over
        the whole stream). Calls on consecutive chunks equal one call on their
        concatenation, bit for bit. ``classes`` (every label of the stream) is needed on the
        first call; a fitted model continues from its fit (its T steps, its running sum for
        ``average=True``). ``n_iter_`` counts every step so far, and the bound of
        :func:`smml.bounds.pegasos_bound` reads with T = ``n_iter_`` when the stream is
        drawn i.i.d. ``sample_weight`` s (and a dict ``class_weight``) make weighted steps:
        the hinge term of step t is scaled by s_t (a zero weight drops the row).

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
            The updated Pegasos.
        """
        self._validate_params()
        if "_stream_state" not in self.__dict__:
            if hasattr(self, "_pegasos_state"):
                V, U, state = (a.copy() for a in self._pegasos_state)
                d = self.n_features_in_
            else:
                X, y = _first_chunk(self, X, y, classes, "float64")
                d = X.shape[1]
                k = 1 if len(self.classes_) == 2 else len(self.classes_)
                fi = int(bool(self.fit_intercept))
                V, U = np.zeros((k, d + fi)), np.zeros((k, d + fi))
                state = np.tile([1.0, 0.0, 0.0], (k, 1))
            self._stream_state = (V, U, state, bool(self.fit_intercept), bool(self.average))
        X, y = _next_chunk(self, X, y, "float64")
        sw, X, y = _row_weights(X, y, sample_weight, self.class_weight, partial=True)
        V, U, state, fi, avg = self._stream_state
        if fi != bool(self.fit_intercept) or avg != bool(self.average):
            raise ValueError("fit_intercept / average changed since the stream began: refit")
        Y = self._problem_targets(y).astype(np.int8)
        idx = np.arange(X.shape[0], dtype=np.intp)
        for c in range(V.shape[0]):
            if _k.pegasos_steps(X, Y[c], idx, V[c], U[c], state[c], float(self.alpha), fi, avg, sw):
                _raise_divergence(self, f"by step {int(state[c, 1])}", "rescale the features")
        self._finish(V, U, state, X.shape[1])
        return self

    def _finish(self, V, U, state, d):
        T = int(state[0, 1])
        W = (U + state[:, 2:3] * V) / max(T, 1) if self.average else state[:, 0:1] * V
        self._set_problems(W, d)
        self.n_iter_ = T
        self._pegasos_state = (V, U, state)
        self._pegasos_average = bool(self.average)

    def objective(self, X: ArrayLike, y: ArrayLike) -> float | np.ndarray:
        """F(w) = alpha/2 ||w||^2 + mean hinge loss of the fitted w on (X, y) (003, section 12).

        One-vs-rest: an array, F of each class's problem.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.
        y : array-like of shape (n_samples,)
            Their labels (in ``classes_``).

        Returns
        -------
        value : float or ndarray of shape (n_classes,)
            F(w) (one per class for one-vs-rest).
        """
        from smml.losses import hinge
        Y = self._problem_targets(y)
        W = self._augmented_weights()
        S = self.decision_function(X).reshape(Y.shape[1], -1)
        vals = np.array([0.5 * self.alpha * (W[c] @ W[c]) + np.mean(hinge(Y[c], S[:, c])) for c in range(len(Y))])
        return float(vals[0]) if len(Y) == 1 else vals
