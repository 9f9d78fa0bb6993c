"""Logistic regression (001; 002; 003 section 15)."""
from __future__ import annotations

import contextlib

import numpy as np
from numpy.typing import ArrayLike
import scipy.optimize
from scipy.special import expit, logsumexp, softmax

from smml._core import _linear as _k
from smml._threads import blas_single_thread, threads_for
from smml._validation import N_JOBS, RANDOM_STATE, Interval, Options, encode_classes, validate_X_y

from smml.linear._base import (_BOOL, _CLASS_WEIGHT, _GRAIN, _check_rng, _problem_labels, _raise_divergence,
                               _row_weights, _small_change, _warm_weights, _LinearClassifier)
from smml.base import store_params
from smml._linear_sums import softmax_finish as _softmax_finish, softmax_sums as _softmax_sums


#: from this many n * d * n_classes on, the softmax loss's matrix products may use BLAS threads
_SOFTMAX_THREADED_WORK = 1 << 24


class LogisticRegression(_LinearClassifier):
    """Logistic regression: min_w (1/m) sum_t ln(1 + e^{-y_t w.x_t}) + alpha/2 ||w||^2.

    The logistic loss with the natural log, as in 002 ("Logistic regression");
    003, section 15 writes it with log2, which multiplies the loss by the
    constant 1/ln 2 (the same minimiser when alpha is scaled by ln 2). ``alpha``
    is 003's lambda (same value, same meaning; scikit-learn's name). The
    regulariser is 003 section 15's alpha/2 ||w||^2; the intercept (the weight of
    the constant feature) is not penalised. Equivalent to scikit-learn's
    ``LogisticRegression(C=1 / (alpha m))``.

    ``solver="lbfgs"``: scipy's L-BFGS-B on the compiled loss-and-gradient kernel
    (OpenMP over rows, thread-count independent result). ``solver="sgd"``: the
    stochastic gradient rule of 001, theta <- theta + lr ((y_i - h(x_i)) x_i -
    alpha theta) (the alpha term leaves the intercept out), epochs in a random
    order drawn from ``random_state``.

    Labels of any type; ``classes_[1]`` is the positive class (y = 1 of 001).
    ``max_iter``: L-BFGS iterations, or SGD epochs.

    More than two classes (an extension: the notes define the binary problem only):

    - ``multi_class="ovr"`` (default): one binary logistic regression per class
      (classes_[c] against the rest), each the problem above; ``predict`` is the
      class of the largest score w_c.x' (first class on ties) and ``predict_proba``
      the per-class probabilities 1/(1 + e^{-w_c.x'}) normalised to sum to 1 (as
      scikit-learn's one-vs-rest). With ``solver="sgd"`` the problems share the
      random draws: every epoch draws one order from ``random_state`` and each
      still-running problem walks it, so problem c is exactly the binary fit on
      (X, y == classes_[c]) with the same ``random_state``.
    - ``multi_class="softmax"``: multinomial logistic regression,
      min_W (1/m) sum_t -ln softmax(W x'_t)_{y_t} + alpha/2 ||W||_F^2 (intercepts
      not penalised; scikit-learn's multinomial ``LogisticRegression(C=1/(alpha m))``),
      solved by L-BFGS-B (``solver="lbfgs"`` only). The objective does not change
      when one constant is added to every intercept; the intercepts returned sum
      to 0. ``predict_proba`` = softmax of the scores.

    Two classes always give the binary problem above, whatever ``multi_class``.

    ``class_weight`` (None, "balanced" or a dict) multiplies the sample weight
    of each row by its class's weight (scikit-learn's semantics; "balanced"
    gives n_samples / (n_classes * bincount(y))), as the weighted loss of
    ``fit`` defines. ``warm_start=True``: ``fit`` starts from the fitted
    ``coef_`` / ``intercept_`` (L-BFGS: its initial point, so it reaches the same
    optimum; SGD: its first iterate) instead of 0.

    Parameters
    ----------
    alpha : float, default=1e-3
        The regularisation strength alpha >= 0 (003's lambda).
    fit_intercept : bool, default=True
        Add the constant feature 1 (its weight is not penalised).
    solver : {"lbfgs", "sgd"}, default="lbfgs"
        L-BFGS-B or 001's stochastic gradient rule.
    multi_class : {"ovr", "softmax"}, default="ovr"
        One-vs-rest or multinomial for more than two classes.
    max_iter : int, default=1000
        L-BFGS iterations, or SGD epochs.
    tol : float, default=1e-6
        The stopping tolerance.
    learning_rate : float, default=0.01
        The step size of ``solver="sgd"``.
    class_weight : None, "balanced" or dict, default=None
        Weights of the classes, multiplying ``sample_weight``.
    warm_start : bool, default=False
        ``fit`` starts from the fitted weights instead of 0.
    random_state : None, int or Generator, default=None
        Seed of the random orders of ``solver="sgd"``.
    n_jobs : None or int, default=None
        Threads of the loss kernel and of ``decision_function``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, d) or (n_classes, d)
        The weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts.
    n_iter_ : int or ndarray of shape (n_classes,)
        Iterations (or epochs) run; one per class for one-vs-rest.

    See Also
    --------
    sklearn.linear_model.LogisticRegression : scikit-learn's logistic regression.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import LogisticRegression
    >>> X = np.array([[-2., -1.], [-1., -2.], [1., 2.], [2., 1.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = LogisticRegression(alpha=0.1).fit(X, y)
    >>> clf.predict([[3., 3.], [-3., -3.]]).tolist()
    [1, 0]
    >>> clf.predict_proba(X).shape
    (4, 2)
    """

    _parameter_spec = {"alpha": Interval(float, 0, None), "fit_intercept": _BOOL,
                       "solver": Options("lbfgs", "sgd"), "multi_class": Options("ovr", "softmax"),
                       "max_iter": Interval(int, 1, None),
                       "tol": Interval(float, 0, None), "learning_rate": Interval(float, 0, None, "neither"),
                       "class_weight": _CLASS_WEIGHT, "warm_start": _BOOL,
                       "random_state": RANDOM_STATE, "n_jobs": N_JOBS}

    def __init__(self, alpha: float = 1e-3, fit_intercept: bool = True, solver: str = "lbfgs",
                 multi_class: str = "ovr", max_iter: int = 1000, tol: float = 1e-6,
                 learning_rate: float = 0.01, class_weight: dict | str | None = None,
                 warm_start: bool = False,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def _loss_grad(self, X, y_pm, n_threads, sw=None):
        """f(w) -> (objective, gradient) on the compiled kernel."""
        n_chunks = _k.n_chunks_for(X.shape[0])
        slabs = np.empty((n_chunks, X.shape[1] + 2))
        n_threads = threads_for(n_threads, n_chunks * _k.CHUNK_ROWS, _GRAIN)
        fi = bool(self.fit_intercept)
        lam = float(self.alpha)

        def fun(w):
            w = np.ascontiguousarray(w, dtype=np.float64)
            g = np.empty_like(w)
            val, bad = _k.logistic_loss_grad(X, y_pm, w, g, slabs, lam, fi, n_threads, sw)
            if bad:
                _raise_divergence(self, "while evaluating the loss", "rescale the features")
            return val, g
        return fun

    def _options(self):
        return {"maxiter": self.max_iter, "gtol": self.tol, "ftol": 64 * np.finfo(float).eps, "maxls": 50}

    def _lbfgs(self, X, y_pm, sw=None, w0=None):
        fun = self._loss_grad(X, y_pm, self._n_threads(), sw)
        if w0 is None:
            w0 = np.zeros(X.shape[1] + bool(self.fit_intercept))
        # L-BFGS works on (d+1)-vectors: BLAS threads there only cost (and the
        # kernel's per-row dot/axpy are single-threaded BLAS called from OpenMP threads)
        with blas_single_thread():
            res = scipy.optimize.minimize(fun, w0, jac=True, method="L-BFGS-B", options=self._options())
        return res.x, int(res.nit)

    def _sgd(self, X, Y, sw=None, W0=None):
        """001's SGD rule on every problem; each epoch draws one order, shared by the problems.
        With row weights s, each epoch draws its n rows with replacement with probabilities
        s_t / sum s (weighted sampling: the weighted objective's stochastic gradient)."""
        n, d = X.shape
        fi = bool(self.fit_intercept)
        rng = _check_rng(self.random_state)
        W = np.zeros((Y.shape[0], d + fi)) if W0 is None else W0
        cum = np.zeros(1)
        n_iter = np.zeros(Y.shape[0], dtype=int)
        running = list(range(Y.shape[0]))
        for epoch in range(self.max_iter):
            order = (rng.permutation(n) if sw is None
                     else rng.choice(n, n, replace=True, p=sw / sw.sum())).astype(np.intp, copy=False)
            still = []
            for c in running:
                w = W[c]
                prev = w.copy()
                st = _k.sgd_steps(X, Y[c], order, w, cum, _k.LOSS_LOGISTIC, _k.SCHED_CONST,
                                  float(self.learning_rate), float(self.alpha), False, 0.0, 0, fi)
                n_iter[c] += 1
                if st:
                    _raise_divergence(self, f"in SGD epoch {n_iter[c]}", "lower learning_rate")
                if not _small_change(w, prev, self.tol):
                    still.append(c)
            running = still
            if not running:
                break
        return W, n_iter

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> LogisticRegression:
        """Minimise the objective; with ``sample_weight`` the loss is the weighted mean
        sum_t s_t l_t / sum_t s_t (an integer weight counts a row that many times, a zero
        weight drops it). ``solver="sgd"`` samples the rows with probabilities s_t / sum s.
        ``class_weight`` multiplies each row's weight by its class's weight.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples (None: all ones).

        Returns
        -------
        self : object
            The fitted LogisticRegression.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        sw, X, y = _row_weights(X, y, sample_weight, self.class_weight)
        prev = getattr(self, "classes_", None)
        was_softmax = getattr(self, "_softmax", False)
        self.classes_, Y = _problem_labels(self, y)
        d = X.shape[1]
        K = len(self.classes_)
        softmax_now = K > 2 and self.multi_class == "softmax"
        W0 = None
        if self.warm_start and hasattr(self, "coef_"):
            if not np.array_equal(prev, self.classes_) or was_softmax != softmax_now:
                raise ValueError("LogisticRegression: warm_start needs the classes and multi_class of the "
                                 "previous fit; set warm_start=False to start afresh")
            W0 = _warm_weights(self, Y.shape[0] if not softmax_now else K, d + int(self.fit_intercept))
        self._softmax = softmax_now
        if self._softmax:
            if self.solver != "lbfgs":
                raise ValueError("LogisticRegression: multi_class='softmax' is solved by L-BFGS only; "
                                 "use solver='lbfgs' (or multi_class='ovr' with solver='sgd')")
            self._fit_softmax(X, encode_classes(y)[1], K, sw, W0)
            return self
        if self.solver == "lbfgs":
            fits = [self._lbfgs(X, y_pm, sw, None if W0 is None else W0[c]) for c, y_pm in enumerate(Y)]
            W = np.array([w for w, _ in fits])
            n_iter = np.array([it for _, it in fits])
        else:
            W, n_iter = self._sgd(X, Y, sw, W0)
        self.n_iter_ = int(n_iter[0]) if K == 2 else n_iter
        self._set_problems(W, d)
        return self

    # ---- multinomial (softmax) ----------------------------------------------------------
    def _fit_softmax(self, X, yk, K, sw=None, W0=None):
        n, d = X.shape
        # row weights of the mean (1/n each, or s_t / sum s)
        rw = None if sw is None else sw / sw.sum()
        fi = bool(self.fit_intercept)
        lam = float(self.alpha)

        def fun(theta):
            return _softmax_finish(self, *_softmax_sums(X, yk, theta, K, fi, n, rw), theta, K, d, n,
                                   rw is None, lam)

        # small problems: BLAS threads only cost (a thread team per tiny product)
        limit = blas_single_thread() if n * d * K < _SOFTMAX_THREADED_WORK else contextlib.nullcontext()
        with limit:
            x0 = (np.zeros(K * (d + fi)) if W0 is None
                  else np.concatenate([W0[:, :d].ravel(), W0[:, d] if fi else []]))
            res = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", options=self._options())
        self.coef_ = res.x[:K * d].reshape(K, d).copy()
        b = res.x[K * d:] if fi else np.zeros(K)
        self.intercept_ = b - b.mean()        # the objective is invariant to a common shift
        self.n_iter_ = int(res.nit)

    # ---- probabilities and the objective -------------------------------------------------
    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Two classes: [P(classes_[0] | x), P(classes_[1] | x)] with P(classes_[1] | x) = 1/(1 + e^{-w.x'}).

        One-vs-rest: the per-class sigmoids normalised to sum to 1; softmax: softmax of the scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The class probabilities, columns in the order of ``classes_``.
        """
        s = self.decision_function(X)
        if s.ndim == 1:
            p = expit(s)
            return np.column_stack([1.0 - p, p])
        if getattr(self, "_softmax", False):
            return softmax(s, axis=1)
        p = expit(s)
        return p / p.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """The logarithm of ``predict_proba``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            The log class probabilities, columns in the order of ``classes_``.
        """
        return np.log(self.predict_proba(X))

    def objective(self, X: ArrayLike, y: ArrayLike) -> float | np.ndarray:
        """The minimised objective at the fitted weights, on (X, y).

        Two classes: a float. One-vs-rest: an array, the binary objective of each class's
        problem. Softmax: the multinomial objective (a float).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.
        y : array-like of shape (n_samples,)
            Their labels (in ``classes_``).

        Returns
        -------
        value : float or ndarray of shape (n_classes,)
            The objective (one per class for one-vs-rest).
        """
        from smml.losses import logistic
        if getattr(self, "_softmax", False):
            Y = self._problem_targets(y)
            S = self.decision_function(X)
            ce = logsumexp(S, axis=1) - S[Y.T > 0]
            return float(np.mean(ce) + 0.5 * self.alpha * np.sum(self.coef_ ** 2))
        Y = self._problem_targets(y)
        S = self.decision_function(X).reshape(len(Y[0]), -1)
        vals = np.array([float(np.mean(logistic(Y[c], S[:, c])) + 0.5 * self.alpha * (self.coef_[c] @ self.coef_[c]))
                         for c in range(Y.shape[0])])
        return float(vals[0]) if Y.shape[0] == 1 else vals
