"""Pegasos (003 section 12)."""

import numpy as np

from smml._core import _linear as _k
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, validate_X, validate_X_y)

from smml._random import step_indices as _step_indices
from smml.linear._base import (_BOOL, _check_rng, _first_chunk,
                               _next_chunk, _problem_labels,
                               _raise_divergence, _LinearClassifier)
from smml.base import store_params

class Pegasos(_LinearClassifier):
    """Pegasos for the SVM objective F(w) = lam/2 ||w||^2 + (1/m) sum_t [1 - y_t w.x_t]_+.

    Exactly 003, section 12: w_1 = 0; at step t = 1..n_iter draw one training
    example (x, y) uniformly at random (from ``random_state``) and set
    w_{t+1} = (1 - 1/t) w_t + (1/(lam t)) y x I{1 - y w_t.x > 0}
    (eta_t = 1/(lam t)). The kernel keeps w = s v so the shrink costs O(1) and a
    step O(d). ``average=True`` returns w_bar = (1/T) sum_{t=1}^T w_t, the
    iterate of the bound E[F(w_bar)] <= F(w*) + (G^2 / (2 lam T)) (ln T + 1)
    (:func:`smml.bounds.pegasos_bound`); otherwise the last iterate w_{T+1}.

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
    lam : float, default=1e-3
        The regularisation strength lam > 0.
    n_iter : int, default=10000
        The number of steps T.
    average : bool, default=False
        Return the average iterate w_bar instead of the last one.
    fit_intercept : bool, default=True
        Add the constant feature 1 (its weight is penalised).
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
        The number of steps taken.

    See Also
    --------
    sklearn.linear_model.SGDClassifier : scikit-learn's SGD linear classifiers (hinge loss: a linear SVM).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import Pegasos
    >>> X = np.array([[-2., -1.], [-1., -2.], [1., 2.], [2., 1.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = Pegasos(lam=0.1, n_iter=1000, random_state=0).fit(X, y)
    >>> clf.predict([[3., 3.], [-3., -3.]]).tolist()
    [1, 0]
    >>> clf.n_iter_
    1000
    """

    _parameter_spec = {"lam": Interval(float, 0, None, "neither"), "n_iter": Interval(int, 1, None),
                       "average": _BOOL, "fit_intercept": _BOOL, "random_state": RANDOM_STATE,
                       "n_jobs": N_JOBS}

    def __init__(self, lam=1e-3, n_iter=10000, average=False, fit_intercept=True, random_state=None,
                 n_jobs=None):
        store_params(self, locals())

    def fit(self, X, y):
        """Run ``n_iter`` steps of Pegasos from w_1 = 0 (one run per class for one-vs-rest).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.

        Returns
        -------
        self : object
            The fitted Pegasos.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, Y = _problem_labels(self, y)
        Y8 = Y.astype(np.int8)
        n, d = X.shape
        k = Y.shape[0]
        fi = bool(self.fit_intercept)
        rng = _check_rng(self.random_state)
        V = np.zeros((k, d + fi))
        U = np.zeros((k, d + fi))
        state = np.tile([1.0, 0.0, 0.0], (k, 1))
        for idx in _step_indices(rng, n, self.n_iter):
            for c in range(k):          # one-vs-rest: every problem takes the same steps
                if _k.pegasos_steps(X, Y8[c], idx, V[c], U[c], state[c], float(self.lam), fi,
                                    bool(self.average)):
                    _raise_divergence(self, f"by step {int(state[c, 1])}", "rescale the features")
        self.__dict__.pop("_stream_state", None)   # fit starts afresh
        self._finish(V, U, state, d)
        return self

    def partial_fit(self, X, y, classes=None):
        """The next ``len(X)`` steps of Pegasos on a stream: step t uses the t-th example of
        the stream (the rows of the calls, in order) instead of a uniform draw from a fixed
        training set (003 section 12's update, step size eta_t = 1/(lam t), t counting over
        the whole stream). Calls on consecutive chunks equal one call on their
        concatenation, bit for bit. ``classes`` (every label of the stream) is needed on the
        first call; a fitted model continues from its fit (its T steps, its running sum for
        ``average=True``). ``n_iter_`` counts every step so far, and the bound of
        :func:`smml.bounds.pegasos_bound` reads with T = ``n_iter_`` when the stream is
        drawn i.i.d.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The chunk's examples.
        y : array-like of shape (n_samples,)
            The chunk's labels.
        classes : array-like, default=None
            Every label of the stream; required on the first call.

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
        V, U, state, fi, avg = self._stream_state
        if fi != bool(self.fit_intercept) or avg != bool(self.average):
            raise ValueError("fit_intercept / average changed since the stream began: refit")
        Y = self._problem_targets(y).astype(np.int8)
        idx = np.arange(X.shape[0], dtype=np.intp)
        for c in range(V.shape[0]):
            if _k.pegasos_steps(X, Y[c], idx, V[c], U[c], state[c], float(self.lam), fi, avg):
                _raise_divergence(self, f"by step {int(state[c, 1])}", "rescale the features")
        self._finish(V, U, state, X.shape[1])
        return self

    def _finish(self, V, U, state, d):
        T = int(state[0, 1])
        W = (U + state[:, 2:3] * V) / max(T, 1) if self.average else state[:, 0:1] * V
        self._set_problems(W, d)
        self.n_iter_ = T
        self._pegasos_state = (V, U, state)

    def objective(self, X, y):
        """F(w) = lam/2 ||w||^2 + mean hinge loss of the fitted w on (X, y) (003, section 12).

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
        vals = np.array([0.5 * self.lam * (W[c] @ W[c]) + np.mean(hinge(Y[c], S[:, c])) for c in range(len(Y))])
        return float(vals[0]) if len(Y) == 1 else vals
