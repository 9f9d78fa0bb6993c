"""Linear predictors of the notes: Perceptron, least squares, ridge, LMS,
logistic regression, Pegasos, projected online gradient descent and the two
linear programs.

Sources: 000, "Linear predictors" ("Hyperplanes", "Training linear
classifiers", "Linear regression", "Ridge Regression"); 001 (LMS / Widrow-Hoff,
normal equations, logistic regression); 002, "Linear predictors" (linear
programs, pseudo-inverse, ridge, logistic regression, absolute-loss LP);
003, sections 9, 10, 12 and 15.

Intercept: ``fit_intercept=True`` adds the constant feature of 000
"Hyperplanes" (x' = (x_1, ..., x_d, 1)), so every learner that works on the
augmented vector (Perceptron, Pegasos, OGD, the LP classifier) treats the
intercept as one more weight: it is updated, projected and - for Pegasos and
the strongly convex OGD - penalised like the others. The constant column is
never materialised; the kernels keep its weight at ``w[d]``. The exceptions,
documented in each class, are the least-squares family (ridge leaves the
intercept unpenalised, as scikit-learn does) and logistic regression (intercept
unpenalised, as the issue and scikit-learn do).

Labels: binary classifiers map ``classes_[0]`` to -1 and ``classes_[1]`` to +1
and predict with sgn(w.x) where sgn(0) = -1 (000, "Linear predictors"), i.e.
a score of exactly 0 gives ``classes_[0]``.

Every sequential learner draws the order of the examples in Python from
``random_state`` and runs a compiled nogil kernel on it
(``smml._core._linear``); ``smml.reference.linear`` holds the plain-Python
twins that the tests compare with on the same order.
"""
import warnings

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse
from sklearn.utils.multiclass import type_of_target

from smml._core import _linear as _k
from smml._threads import blas_single_thread
from smml._tour import TourEntry
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, Options, check_is_fitted,
                              check_random_state, encode_classes, validate_X, validate_X_y)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator

__all__ = ["Perceptron", "LinearRegression", "RidgeRegression", "LMSRegressor",
           "LogisticRegression", "Pegasos", "OnlineGradientDescent",
           "OnlineGradientDescentRegressor", "LinearProgramClassifier", "LADRegressor",
           "DivergenceError", "NotSeparableError"]

_BOOL = Options(True, False)
_PEGASOS_CHUNK = 1 << 16     # steps drawn per call of the Pegasos / OGD kernels


class DivergenceError(ValueError, FloatingPointError):
    """A sequential learner produced a non-finite weight (overflow / NaN)."""


class NotSeparableError(ValueError):
    """The linear program y_t w.x_t >= 1 has no solution."""


# ---- helpers ------------------------------------------------------------------------

def _check_rng(random_state):
    """The random source of the sequential learners: a Generator is used as it is (so a
    caller can replay the exact example order from the same Generator, as the tests
    against ``smml.reference`` do); anything else goes through the shared
    :func:`smml._validation.check_random_state`."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return check_random_state(random_state)


def _draw_integers(rng, m, size):
    if isinstance(rng, np.random.Generator):
        return rng.integers(0, m, size=size)
    return rng.randint(0, m, size=size)


def _raise_divergence(est, where, hint):
    raise DivergenceError(f"{type(est).__name__}: the weights became non-finite (overflow or NaN) "
                          f"{where}; {hint}")


def _binary_labels(est, y):
    """classes_ and labels in {-1, +1} (float64 and int8); binary classifiers only."""
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    classes, y_enc = encode_classes(y)
    if len(classes) == 1:
        raise ValueError(f"{type(est).__name__} needs samples of 2 classes; "
                         f"the data contain only one class: {classes[0]!r}")
    if y_type != "binary" or len(classes) != 2:
        raise ValueError("Only binary classification is supported. The type of the target "
                         f"is {y_type} ({len(classes)} classes); wrap the estimator in "
                         "sklearn.multiclass.OneVsRestClassifier for more classes.")
    y_pm = np.where(y_enc == 1, 1.0, -1.0)
    return classes, y_pm, y_pm.astype(np.int8)


def _small_change(w, prev, tol):
    """max |w - prev| <= tol * max(1, max |w|) (max-norms: no overflow on huge finite w)."""
    return float(np.max(np.abs(w - prev))) <= tol * max(1.0, float(np.max(np.abs(w))))


def _split_w(w, d, fit_intercept, dtype=None):
    coef = np.array(w[:d], dtype=dtype, copy=True).reshape(1, d)
    intercept = np.array([w[d] if fit_intercept else 0.0], dtype=coef.dtype)
    return coef, intercept


def _scores(est, X):
    """decision values X @ coef_.T + intercept_ through the parallel kernel, (n, k)."""
    check_is_fitted(est)
    X = validate_X(est, X, reset=False, dtype="floating")
    dtype = np.result_type(X.dtype, est.coef_.dtype)
    X = np.ascontiguousarray(X, dtype=dtype)
    W = np.ascontiguousarray(est.coef_, dtype=dtype)
    b = np.ascontiguousarray(est.intercept_, dtype=dtype)
    out = np.empty((X.shape[0], W.shape[0]), dtype=dtype)
    _k.decision_function(X, W, b, out, est._n_threads())
    return out


def _centered_gram(X, y, fit_intercept):
    """(A, b, X_mean, y_mean) with A = Xc^T Xc and b = Xc^T yc for the centred data.

    Avoids the n x d centred copy: A = X^T X - n mu mu^T (BLAS syrk on X itself)
    when every column's mean is at most its standard deviation (diag(Xc^T Xc)
    >= diag(X^T X) / 2, so the subtraction loses at most one bit); otherwise the
    data are centred explicitly. Overflow is not warned about here: the callers
    check the result is finite and raise a ValueError naming the problem.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return _centered_gram_unchecked(X, y, fit_intercept)


def _centered_gram_unchecked(X, y, fit_intercept):
    if not fit_intercept:
        return X.T @ X, X.T @ y, np.zeros(X.shape[1]), 0.0
    n = X.shape[0]
    mu = X.mean(axis=0)
    y_mean = float(y.mean())
    A = X.T @ X
    dA = np.diag(A).copy()
    A -= n * np.outer(mu, mu)
    if np.all(np.diag(A) >= 0.5 * dA):
        b = X.T @ y - n * y_mean * mu
        return A, b, mu, y_mean
    Xc, yc = X - mu, y - y_mean
    return Xc.T @ Xc, Xc.T @ yc, mu, y_mean


def _lstsq(X, y):
    """Minimum-norm least squares (SVD, gelsd); singular values below max(n, d) eps s_max
    count as zero (the centred data lose one rank to rounding noise that must not be inverted)."""
    cond = max(X.shape) * np.finfo(np.float64).eps
    return scipy.linalg.lstsq(X, y, cond=cond, lapack_driver="gelsd", check_finite=False)[0]


def _center(X, y, fit_intercept):
    if fit_intercept:
        X_mean = X.mean(axis=0)
        y_mean = float(y.mean())
        return X - X_mean, y - y_mean, X_mean, y_mean
    return X, y, np.zeros(X.shape[1]), 0.0


class _BinaryLinearClassifier(ClassifierMixin, SmmlEstimator):
    """decision_function / predict of a binary linear classifier (sgn(0) = -1)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def decision_function(self, X):
        """w.x' (with the constant feature), one value per row; > 0 means classes_[1]."""
        return _scores(self, X)[:, 0]

    def predict(self, X):
        """classes_[1] where w.x' > 0, else classes_[0] (sgn(0) = -1, 000 "Linear predictors")."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(np.intp)]

    def _set_augmented(self, w, d):
        """coef_ (1, d) and intercept_ (1,) from the augmented weight vector w."""
        self.coef_, self.intercept_ = _split_w(w, d, self.fit_intercept)

    def _pm(self, y):
        """Labels y mapped to +1 (classes_[1]) / -1 (classes_[0]); others are an error."""
        check_is_fitted(self)
        y = np.asarray(y)
        pos = y == self.classes_[1]
        if not np.all(pos | (y == self.classes_[0])):
            raise ValueError(f"y contains labels outside classes_ {self.classes_.tolist()}")
        return np.where(pos, 1.0, -1.0)


# ---- Perceptron -------------------------------------------------------------------

class Perceptron(ClassifierMixin, SmmlEstimator):
    """The Perceptron of 000, "Training linear classifiers" (also 001, 003 section 9).

    w = 0; epochs over the training set in order (or, with ``shuffle=True``, in
    a new random order per epoch drawn from ``random_state``); whenever
    y_t w.x_t <= 0 the update w <- w + y_t x_t; stop after an epoch without any
    update (``converged_ = True``) or after ``max_epochs`` epochs. On a linearly
    separable training set the number of updates is at most
    (min_{u: gamma(u) >= 1} ||u||^2)(max_t ||x_t||^2) (000, Theorem 3; see
    :func:`smml.bounds.perceptron_convergence_bound`).

    More than two classes: one-vs-rest, one Perceptron per class (labels +1 for
    the class, -1 otherwise), prediction by the largest score (first class on
    ties). float32 input is learnt in float32 (no conversion).

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the constant feature 1 (000, "Hyperplanes").
    max_epochs : int, default=1000
    shuffle : bool, default=False
        Visit the examples in a fresh random order every epoch.
    random_state : None, int or Generator
    n_jobs : None or int
        Threads of ``decision_function`` (training is sequential).

    Attributes
    ----------
    coef_ : (1, d) or (n_classes, d); intercept_ : (1,) or (n_classes,)
    n_updates_, n_epochs_, converged_ : int/bool for two classes, arrays
        (one per class) for one-vs-rest.
    """

    _parameter_spec = {"fit_intercept": _BOOL, "max_epochs": Interval(int, 1, None),
                       "shuffle": _BOOL, "random_state": RANDOM_STATE, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept=True, max_epochs=1000, shuffle=False, random_state=None,
                 n_jobs=None):
        self.fit_intercept = fit_intercept
        self.max_epochs = max_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _run(self, X, y_pm, rng):
        n, d = X.shape
        w = np.zeros(d + int(self.fit_intercept), dtype=X.dtype)
        order = np.arange(n, dtype=np.intp)
        updates, epochs, converged = 0, 0, False
        for epoch in range(self.max_epochs):
            if self.shuffle:
                order = rng.permutation(n).astype(np.intp, copy=False)
            n_up, status = _k.perceptron_epoch(X, y_pm, order, w, bool(self.fit_intercept))
            epochs += 1
            updates += n_up
            if status:
                _raise_divergence(self, f"in epoch {epochs}", "rescale the features")
            if n_up == 0:
                converged = True
                break
        return w, updates, epochs, converged

    def fit(self, X, y):
        """Run the Perceptron (one per class for more than two classes)."""
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        self.classes_, y_enc = encode_classes(y)
        rng = _check_rng(self.random_state)
        d = X.shape[1]
        k = len(self.classes_)
        if k == 1:
            # a single class: every prediction is that class (nothing to learn)
            self.coef_ = np.zeros((1, d), dtype=X.dtype)
            self.intercept_ = np.ones(1, dtype=X.dtype)
            self.n_updates_, self.n_epochs_, self.converged_ = 0, 0, True
            return self
        problems = [y_enc == 1] if k == 2 else [y_enc == c for c in range(k)]
        coefs, intercepts, ups, eps, convs = [], [], [], [], []
        for pos in problems:
            y_pm = np.where(pos, 1, -1).astype(np.int8)
            w, u, e, c = self._run(X, y_pm, rng)
            coefs.append(w[:d])
            intercepts.append(w[d] if self.fit_intercept else 0.0)
            ups.append(u), eps.append(e), convs.append(c)
        self.coef_ = np.array(coefs, dtype=X.dtype)
        self.intercept_ = np.array(intercepts, dtype=X.dtype)
        if k == 2:
            self.n_updates_, self.n_epochs_, self.converged_ = ups[0], eps[0], convs[0]
        else:
            self.n_updates_ = np.array(ups)
            self.n_epochs_ = np.array(eps)
            self.converged_ = np.array(convs)
        return self

    def decision_function(self, X):
        """w.x' per row (two classes: shape (n,)), or per class (one-vs-rest: (n, n_classes))."""
        s = _scores(self, X)
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X):
        """sgn(w.x') with sgn(0) = -1 (two classes), or the class of largest score."""
        s = _scores(self, X)
        if len(self.classes_) == 1:
            return np.repeat(self.classes_, s.shape[0])
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]


# ---- least squares ------------------------------------------------------------------

class _LinearRegressorBase(RegressorMixin, SmmlEstimator):
    """predict = w.x + b through the parallel kernel; ``coef_`` (d,), ``intercept_`` float."""

    def _set(self, w, X_mean, y_mean):
        self.coef_ = np.asarray(w, dtype=np.float64)
        with np.errstate(all="ignore"):
            self.intercept_ = float(y_mean - X_mean @ self.coef_) if self.fit_intercept else 0.0
        if not (np.all(np.isfinite(self.coef_)) and np.isfinite(self.intercept_)):
            raise ValueError(f"{type(self).__name__}: the solution overflows float64 (the weights "
                             "are too large to represent); rescale the features or the targets")

    def _set_augmented(self, w, d):
        self.coef_ = np.array(w[:d], dtype=np.float64)
        self.intercept_ = float(w[d]) if self.fit_intercept else 0.0

    def predict(self, X):
        """w.x + b for each row."""
        check_is_fitted(self)
        X = validate_X(self, X, reset=False, dtype="float64")
        out = np.empty((X.shape[0], 1))
        _k.decision_function(X, self.coef_.reshape(1, -1), np.array([self.intercept_]), out,
                             self._n_threads())
        return out[:, 0]


class LinearRegression(_LinearRegressorBase):
    """Least squares: the ERM of the square loss (000, "Linear regression"; 001, normal equations).

    Solves the normal equations (S^T S) w = S^T y with a LAPACK Cholesky solve
    (never an explicit inverse). When S^T S is singular or numerically so
    (LAPACK reports it not positive definite or ill-conditioned), uses the
    pseudo-inverse of 002 ("Singular value decomposition"): w = (S^T S)^+ S^T y,
    computed as the minimum-norm least-squares solution ``scipy.linalg.lstsq``
    (SVD, LAPACK gelsd) - the same vector, without forming S^T S.

    With ``fit_intercept`` the constant feature is added; its weight is the
    intercept. It is computed by centring X and y (the least-squares solution
    with a constant column equals the centred solution, intercept
    = mean(y) - mean(X).w).

    Attributes: ``coef_`` (d,), ``intercept_`` (float), ``solver_``
    ("normal_equations" or "pseudo_inverse").
    """

    _parameter_spec = {"fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept=True, n_jobs=None):
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        if X.shape[1] > X.shape[0]:
            # d > m: S^T S (d x d) is singular anyway (and may not fit in memory)
            Xc, yc, X_mean, y_mean = _center(X, y, self.fit_intercept)
            w = _lstsq(Xc, yc)
            self.solver_ = "pseudo_inverse"
            self._set(w, X_mean, y_mean)
            return self
        A, b, X_mean, y_mean = _centered_gram(X, y, self.fit_intercept)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
                w = scipy.linalg.solve(A, b, assume_a="pos", check_finite=False)
            self.solver_ = "normal_equations"
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning, ValueError):
            Xc, yc, _, _ = _center(X, y, self.fit_intercept)
            w = _lstsq(Xc, yc)
            self.solver_ = "pseudo_inverse"
        self._set(w, X_mean, y_mean)
        return self


class RidgeRegression(LinearRegression):
    """Ridge regression, the closed form w = (alpha I + S^T S)^{-1} S^T y of 000, "Ridge Regression".

    Minimises ||S w - y||^2 + alpha ||w||^2 (sum of squares, 000's form). The
    system is solved by Cholesky (LAPACK); alpha > 0 makes it positive definite.

    alpha: the same alpha as scikit-learn's ``Ridge(alpha)``; 002 writes the
    objective as (1/n) sum (y_i - w.x_i)^2 + lambda ||w||^2, whose minimiser
    solves (X^T X + n lambda I) w = X^T y: alpha = n lambda.

    Intercept: with ``fit_intercept`` the constant feature is added but its
    weight is NOT penalised (as in scikit-learn): X and y are centred, the
    closed form is applied to the centred data and intercept = mean(y) -
    mean(X).w. To penalise it as in the plain augmented form of 000, add a
    column of ones yourself and pass ``fit_intercept=False``.
    ``alpha=0`` is allowed and gives :class:`LinearRegression`.
    """

    _parameter_spec = {"alpha": Interval(float, 0, None), "fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, alpha=1.0, fit_intercept=True, n_jobs=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        if self.alpha == 0:
            return LinearRegression.fit(self, X, y)
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        if X.shape[1] > X.shape[0]:
            # d > m: the same w by (alpha I + S^T S)^-1 S^T = S^T (alpha I + S S^T)^-1 (m x m)
            Xc, yc, X_mean, y_mean = _center(X, y, self.fit_intercept)
            with np.errstate(over="ignore", invalid="ignore"):
                K = Xc @ Xc.T
            self._check_gram(K, yc)
            K.flat[::K.shape[0] + 1] += self.alpha
            w = Xc.T @ scipy.linalg.solve(K, yc, assume_a="pos", check_finite=False)
        else:
            A, b, X_mean, y_mean = _centered_gram(X, y, self.fit_intercept)
            self._check_gram(A, b)
            A.flat[::A.shape[0] + 1] += self.alpha
            w = scipy.linalg.solve(A, b, assume_a="pos", check_finite=False)
        self.solver_ = "closed_form"
        self._set(w, X_mean, y_mean)
        return self

    def _check_gram(self, A, b):
        # an overflowing Gram matrix made the (unchecked) solve return garbage weights
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
            raise ValueError(f"{type(self).__name__}: S^T S overflows float64 (features or targets "
                             "of magnitude ~1e154 or more); rescale the features")


class LMSRegressor(LinearRegression):
    """LMS / Widrow-Hoff rule of 001, "Least Mean Squares (LMS) Algorithm".

    ``mode="batch"``: theta <- theta + lr sum_i (y_i - theta.x_i) x_i (the sum,
    as 001 writes it) per iteration; ``mode="stochastic"``: for each example
    in turn theta <- theta + lr (y_i - theta.x_i) x_i, epochs in order or (with
    ``shuffle``) in a random order per epoch ("it is typical to shuffle").
    Starts from theta = 0. Stops after ``max_epochs`` passes or when a pass
    changes theta by at most ``tol * max(1, ||theta||)`` (``converged_``).

    ``learning_rate="auto"`` (a choice; 001 leaves it to the user): batch,
    1 / ||S||_F^2 (<= 1 / lambda_max(S^T S), so the iteration converges);
    stochastic, 1 / max_i ||x_i||^2. A learning rate that makes the iterates
    overflow raises :class:`DivergenceError`. The intercept is the weight of
    the constant feature, learnt like the others.
    """

    _parameter_spec = {"mode": Options("batch", "stochastic"),
                       "learning_rate": (Options("auto"), Interval(float, 0, None, "neither")),
                       "max_epochs": Interval(int, 1, None), "tol": Interval(float, 0, None),
                       "shuffle": _BOOL, "fit_intercept": _BOOL, "random_state": RANDOM_STATE,
                       "n_jobs": N_JOBS}

    def __init__(self, mode="batch", learning_rate="auto", max_epochs=1000, tol=1e-6, shuffle=False,
                 fit_intercept=True, random_state=None, n_jobs=None):
        self.mode = mode
        self.learning_rate = learning_rate
        self.max_epochs = max_epochs
        self.tol = tol
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _lr(self, X):
        if self.learning_rate != "auto":
            return float(self.learning_rate)
        sq = np.einsum("ij,ij->i", X, X) + float(self.fit_intercept)
        total = sq.sum() if self.mode == "batch" else sq.max()
        return 1.0 / total if total > 0 else 1.0

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        n, d = X.shape
        fi = bool(self.fit_intercept)
        lr = self._lr(X)
        self.learning_rate_ = lr
        w = np.zeros(d + fi)
        rng = _check_rng(self.random_state)
        order = np.arange(n, dtype=np.intp)
        self.converged_ = False
        self.n_epochs_ = 0
        for epoch in range(self.max_epochs):
            prev = w.copy()
            if self.mode == "batch":
                with np.errstate(all="ignore"):
                    r = y - (X @ w[:d] + (w[d] if fi else 0.0))
                    w[:d] += lr * (X.T @ r)
                    if fi:
                        w[d] += lr * r.sum()
                status = not np.all(np.isfinite(w))
            else:
                if self.shuffle:
                    order = rng.permutation(n).astype(np.intp, copy=False)
                status = _k.lms_epoch(X, y, order, w, lr, fi)
            self.n_epochs_ += 1
            if status:
                _raise_divergence(self, f"in epoch {self.n_epochs_} (learning_rate={lr:g})",
                                  "lower learning_rate (the batch rule converges for learning_rate "
                                  "< 2 / lambda_max(S^T S)) or use learning_rate='auto'")
            if _small_change(w, prev, self.tol):
                self.converged_ = True
                break
        self._set_augmented(w, d)
        return self


# ---- logistic regression ---------------------------------------------------------------

class LogisticRegression(_BinaryLinearClassifier):
    """Binary logistic regression: min_w (1/m) sum_t ln(1 + e^{-y_t w.x_t}) + lam/2 ||w||^2.

    The logistic loss with the natural log, as in 002 ("Logistic regression");
    003, section 15 writes it with log2, which multiplies the loss by the
    constant 1/ln 2 (the same minimiser when lam is scaled by ln 2). The
    regulariser is 003 section 15's lam/2 ||w||^2; the intercept (the weight of
    the constant feature) is not penalised. Equivalent to scikit-learn's
    ``LogisticRegression(C=1 / (lam m))``.

    ``solver="lbfgs"``: scipy's L-BFGS-B on the compiled loss-and-gradient kernel
    (OpenMP over rows, thread-count independent result). ``solver="sgd"``: the
    stochastic gradient rule of 001, theta <- theta + lr ((y_i - h(x_i)) x_i -
    lam theta) (the lam term leaves the intercept out), epochs in a random
    order drawn from ``random_state``.

    Labels of any type; ``classes_[1]`` is the positive class (y = 1 of 001).
    ``max_iter``: L-BFGS iterations, or SGD epochs.
    """

    _parameter_spec = {"lam": Interval(float, 0, None), "fit_intercept": _BOOL,
                       "solver": Options("lbfgs", "sgd"), "max_iter": Interval(int, 1, None),
                       "tol": Interval(float, 0, None), "learning_rate": Interval(float, 0, None, "neither"),
                       "random_state": RANDOM_STATE, "n_jobs": N_JOBS}

    def __init__(self, lam=1e-3, fit_intercept=True, solver="lbfgs", max_iter=1000, tol=1e-6,
                 learning_rate=0.01, random_state=None, n_jobs=None):
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _loss_grad(self, X, y_pm, n_threads):
        """f(w) -> (objective, gradient) on the compiled kernel."""
        n_chunks = _k.n_chunks_for(X.shape[0])
        slabs = np.empty((n_chunks, X.shape[1] + 2))
        n_threads = max(1, min(n_threads, n_chunks // 2))   # small problems: no thread team
        fi = bool(self.fit_intercept)
        lam = float(self.lam)

        def fun(w):
            w = np.ascontiguousarray(w, dtype=np.float64)
            g = np.empty_like(w)
            val, bad = _k.logistic_loss_grad(X, y_pm, w, g, slabs, lam, fi, n_threads)
            if bad:
                _raise_divergence(self, "while evaluating the loss", "rescale the features")
            return val, g
        return fun

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, y_pm, _ = _binary_labels(self, y)
        n, d = X.shape
        fi = bool(self.fit_intercept)
        w0 = np.zeros(d + fi)
        if self.solver == "lbfgs":
            fun = self._loss_grad(X, y_pm, self._n_threads())
            # L-BFGS works on (d+1)-vectors: BLAS threads there only cost (and the
            # kernel's per-row dot/axpy are single-threaded BLAS called from OpenMP threads)
            with blas_single_thread():
                res = scipy.optimize.minimize(fun, w0, jac=True, method="L-BFGS-B",
                                              options={"maxiter": self.max_iter, "gtol": self.tol,
                                                       "ftol": 64 * np.finfo(float).eps, "maxls": 50})
            w = res.x
            self.n_iter_ = int(res.nit)
        else:
            rng = _check_rng(self.random_state)
            w = w0
            cum = np.zeros(1)
            self.n_iter_ = 0
            for epoch in range(self.max_iter):
                prev = w.copy()
                order = rng.permutation(n).astype(np.intp, copy=False)
                st = _k.sgd_steps(X, y_pm, order, w, cum, _k.LOSS_LOGISTIC, _k.SCHED_CONST,
                                  float(self.learning_rate), float(self.lam), False, 0.0, 0, fi)
                self.n_iter_ += 1
                if st:
                    _raise_divergence(self, f"in SGD epoch {self.n_iter_}", "lower learning_rate")
                if _small_change(w, prev, self.tol):
                    break
        self.coef_, self.intercept_ = _split_w(w, d, fi)
        return self

    def predict_proba(self, X):
        """[P(classes_[0] | x), P(classes_[1] | x)] with P(classes_[1] | x) = 1/(1 + e^{-w.x'})."""
        from scipy.special import expit
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def objective(self, X, y):
        """The minimised objective at the fitted weights, on (X, y)."""
        from smml.losses import logistic
        y_pm = self._pm(y)
        w = self.coef_.ravel()
        return float(np.mean(logistic(y_pm, self.decision_function(X))) + 0.5 * self.lam * (w @ w))


# ---- Pegasos ----------------------------------------------------------------------------

def _step_indices(rng, m, n_steps, chunk=_PEGASOS_CHUNK):
    """The examples of steps 1..n_steps, drawn uniformly with replacement, in chunks."""
    done = 0
    while done < n_steps:
        c = min(chunk, n_steps - done)
        yield _draw_integers(rng, m, c).astype(np.intp, copy=False)
        done += c


class Pegasos(_BinaryLinearClassifier):
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
    """

    _parameter_spec = {"lam": Interval(float, 0, None, "neither"), "n_iter": Interval(int, 1, None),
                       "average": _BOOL, "fit_intercept": _BOOL, "random_state": RANDOM_STATE,
                       "n_jobs": N_JOBS}

    def __init__(self, lam=1e-3, n_iter=10000, average=False, fit_intercept=True, random_state=None,
                 n_jobs=None):
        self.lam = lam
        self.n_iter = n_iter
        self.average = average
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, _, y8 = _binary_labels(self, y)
        n, d = X.shape
        fi = bool(self.fit_intercept)
        rng = _check_rng(self.random_state)
        v = np.zeros(d + fi)
        u = np.zeros(d + fi)
        state = np.array([1.0, 0.0, 0.0])
        for idx in _step_indices(rng, n, self.n_iter):
            if _k.pegasos_steps(X, y8, idx, v, u, state, float(self.lam), fi, bool(self.average)):
                _raise_divergence(self, f"by step {int(state[1])}", "rescale the features")
        T = int(state[1])
        w = (u + state[2] * v) / T if self.average else state[0] * v
        self.coef_, self.intercept_ = _split_w(w, d, fi)
        self.n_iter_ = T
        return self

    def objective(self, X, y):
        """F(w) = lam/2 ||w||^2 + mean hinge loss of the fitted w on (X, y) (003, section 12)."""
        from smml.losses import hinge
        y_pm = self._pm(y)
        w = np.append(self.coef_.ravel(), self.intercept_ if self.fit_intercept else [])
        return float(0.5 * self.lam * (w @ w) + np.mean(hinge(y_pm, self.decision_function(X))))


# ---- online gradient descent ----------------------------------------------------------------

_LOSS_CODES = {"hinge": _k.LOSS_HINGE, "logistic": _k.LOSS_LOGISTIC, "square": _k.LOSS_SQUARE}


class _OGDMixin:
    """Projected OGD of 003, section 10, shared by the classifier and the regressor."""


    def _reset(self, p):
        if hasattr(self, "eta_"):
            del self.eta_
        self.w_ = np.zeros(p)
        self.t_ = 0
        self.cumulative_loss_ = 0.0
        self._rng = _check_rng(self.random_state)

    def _stream(self, X, y_f, n_epochs):
        n, d = X.shape
        fi = bool(self.fit_intercept)
        if self.w_.shape[0] != d + fi:
            # the kernel writes w[d] when fi: a w_ from another fit_intercept is out of bounds
            raise ValueError(f"{type(self).__name__}: fit_intercept was changed to {self.fit_intercept!r} "
                             "since the first call to partial_fit; call fit (or clone) to restart")
        strong = self.sigma is not None
        sched = _k.SCHED_STRONG if strong else _k.SCHED_SQRT
        l2 = float(self.sigma) if strong else 0.0
        if self.eta == "auto":
            if not hasattr(self, "eta_"):
                self.eta_ = 1.0 / (2.0 * (float(np.max(np.einsum("ij,ij->i", X, X))) + float(fi)) or 1.0)
            eta = self.eta_
        else:
            eta = self.eta_ = float(self.eta)
        radius = 0.0 if self.radius is None else float(self.radius)
        cum = np.array([self.cumulative_loss_])
        in_order = np.arange(n, dtype=np.intp)
        for epoch in range(n_epochs):
            order = self._rng.permutation(n).astype(np.intp, copy=False) if self.shuffle else in_order
            st = _k.sgd_steps(X, y_f, order, self.w_, cum, _LOSS_CODES[self.loss], sched,
                              eta, l2, True, radius, self.t_, fi)
            if st:
                self.cumulative_loss_ = float(cum[0])
                _raise_divergence(self, f"after step {self.t_}", "lower eta or set a radius")
            self.t_ += n
        self.cumulative_loss_ = float(cum[0])
        self._set_augmented(self.w_, d)
        self.n_steps_ = self.t_

    @property
    def average_loss_(self):
        """cumulative_loss_ / n_steps_: the left side of 003's regret bounds."""
        return self.cumulative_loss_ / max(1, self.n_steps_)


_OGD_SPEC = {"eta": Interval(float, 0, None, "neither"), "radius": (Options(None), Interval(float, 0, None, "neither")),
             "sigma": (Options(None), Interval(float, 0, None, "neither")), "n_epochs": Interval(int, 1, None),
             "shuffle": _BOOL, "fit_intercept": _BOOL, "random_state": RANDOM_STATE, "n_jobs": N_JOBS}


class OnlineGradientDescent(_OGDMixin, _BinaryLinearClassifier):
    """Projected online gradient descent (003, section 10) as a binary classifier.

    w_1 = 0; for t = 1, 2, ...: w'_{t+1} = w_t - eta_t grad l_t(w_t) and
    w_{t+1} = argmin_{||w|| <= U} ||w - w'_{t+1}|| (a rescaling onto the ball of
    radius U = ``radius``; ``None`` = no projection, U = infinity), with
    eta_t = eta / sqrt(t). ``sigma`` (> 0) selects the strongly convex variant:
    each loss becomes the sigma-strongly convex l_t(w) + sigma/2 ||w||^2 and
    eta_t = 1/(sigma t).

    l_t(w) = loss(y_t, w.x_t) for ``loss`` in "hinge" [1 - y z]_+, "logistic"
    ln(1 + e^{-y z}) and "square" (y - z)^2 (``smml.losses``), y in {-1, +1}.
    The stream is the training set in order (or shuffled per epoch), ``n_epochs``
    times; ``partial_fit`` continues the stream (t keeps counting).

    Attributes: ``cumulative_loss_`` = sum_t l_t(w_t) (loss suffered before each
    update), ``n_steps_`` = T, ``average_loss_``; compare with
    :func:`smml.bounds.ogd_regret_bound` / :func:`smml.bounds.ogd_strongly_convex_regret_bound`.
    """

    _parameter_spec = {"loss": Options("hinge", "logistic", "square"), **_OGD_SPEC}

    def __init__(self, loss="hinge", eta=1.0, radius=None, sigma=None, n_epochs=5, shuffle=False,
                 fit_intercept=True, random_state=None, n_jobs=None):
        self.loss = loss
        self.eta = eta
        self.radius = radius
        self.sigma = sigma
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, y_pm, _ = _binary_labels(self, y)
        self._reset(X.shape[1] + int(self.fit_intercept))
        self._stream(X, y_pm, self.n_epochs)
        return self

    def partial_fit(self, X, y, classes=None):
        """One pass over (X, y) as the next rounds of the stream; ``classes`` needed on the first call."""
        first = not hasattr(self, "w_")
        self._validate_params()           # every call: set_params may have changed eta, radius, ...
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
            classes = np.unique(np.asarray(classes))
            if len(classes) != 2:
                raise ValueError("Only binary classification is supported: classes must hold 2 labels, "
                                 f"got {classes.tolist()}")
            self.classes_ = classes
            self._reset(X.shape[1] + int(self.fit_intercept))
        else:
            X = validate_X(self, X, reset=False, dtype="float64")
            y = np.asarray(y)
            if y.ndim != 1 or len(y) != X.shape[0]:
                raise ValueError(f"y must be 1-d with {X.shape[0]} entries, got shape {np.shape(y)}")
        y_pm = self._pm(y)
        self._stream(X, y_pm, 1)
        return self


class OnlineGradientDescentRegressor(_OGDMixin, _LinearRegressorBase):
    """Projected online gradient descent (003, section 10) for regression with the square loss.

    Same algorithm as :class:`OnlineGradientDescent` with l_t(w) = (y_t - w.x_t)^2.
    ``eta="auto"`` (a choice: the square loss has unbounded gradients, so a
    fixed default eta overflows on unscaled data) sets eta = 1 / (2 max_t ||x'_t||^2)
    from the first batch seen (x' with the constant feature): each step is
    then a contraction on the example it uses. ``eta_`` is the value used.
    """

    _parameter_spec = {"loss": Options("square"), **_OGD_SPEC,
                       "eta": (Options("auto"), Interval(float, 0, None, "neither"))}

    def __init__(self, loss="square", eta="auto", radius=None, sigma=None, n_epochs=5, shuffle=False,
                 fit_intercept=True, random_state=None, n_jobs=None):
        self.loss = loss
        self.eta = eta
        self.radius = radius
        self.sigma = sigma
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        self._reset(X.shape[1] + int(self.fit_intercept))
        self._stream(X, y, self.n_epochs)
        return self

    def partial_fit(self, X, y):
        """One pass over (X, y) as the next rounds of the stream."""
        self._validate_params()           # every call: set_params may have changed eta, radius, ...
        if not hasattr(self, "w_"):
            X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
            self._reset(X.shape[1] + int(self.fit_intercept))
        else:
            X = validate_X(self, X, reset=False, dtype="float64")
            y = np.ascontiguousarray(y, dtype=np.float64)
            if y.ndim != 1 or len(y) != X.shape[0] or not np.all(np.isfinite(y)):
                raise ValueError(f"y must be 1-d, finite, with {X.shape[0]} entries")
        self._stream(X, y, 1)
        return self


# ---- linear programs ----------------------------------------------------------------------

def _augment(X, fit_intercept):
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X


def _pow2_scale(A, axis=0):
    """Powers of two near max |A| (per column by default; 1 where all zero).

    HiGHS treats coefficients beyond ~1e15 as infinite and drops those below ~1e-9,
    so both linear programs are solved on exactly rescaled data (a power of two
    rescales without rounding) and the weights are scaled back.
    """
    amax = np.max(np.abs(A), axis=axis)
    with np.errstate(divide="ignore"):
        e = np.where(amax > 0, np.ceil(np.log2(np.where(amax > 0, amax, 1.0))), 0.0)
    return np.ldexp(1.0, e.astype(int))


def _check_lp_weights(est, w):
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{type(est).__name__}: the solution overflows float64 (the weights are too "
                         "large to represent); rescale the features")


class LinearProgramClassifier(_BinaryLinearClassifier):
    """ERM on linearly separable data as a linear program (000 "Training linear classifiers"; 002).

    Finds w with y_t w.x_t >= 1 for every t (002: maximise <u, w> subject to
    A w <= v with A_{t,j} = -y_t x_{t,j}, v = -1 and u = 0), solved by
    ``scipy.optimize.linprog`` (HiGHS). Raises :class:`NotSeparableError` (a
    ``ValueError``) when the system has no solution, i.e. the training set is
    not linearly separable (with the constant feature if ``fit_intercept``).
    """

    _parameter_spec = {"fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept=True, n_jobs=None):
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, y_pm, _ = _binary_labels(self, y)
        A = _augment(X, self.fit_intercept)
        p = A.shape[1]
        scale = _pow2_scale(A)
        A = A / scale               # y_t w.x_t >= 1 <=> y_t (w * scale).(x_t / scale) >= 1
        res = scipy.optimize.linprog(np.zeros(p), A_ub=-(y_pm[:, None] * A), b_ub=-np.ones(len(y_pm)),
                                     bounds=[(None, None)] * p, method="highs")
        if res.status == 2:
            raise NotSeparableError(
                "LinearProgramClassifier: the training set is not linearly separable (the linear program "
                "y_t w.x_t >= 1 for all t has no solution); use Pegasos, LogisticRegression or the "
                "Perceptron with max_epochs instead")
        if res.status != 0:
            raise ValueError(f"LinearProgramClassifier: linprog failed: {res.message}")
        with np.errstate(over="ignore"):
            w = res.x / scale
        _check_lp_weights(self, w)
        self.coef_, self.intercept_ = _split_w(w, X.shape[1], self.fit_intercept)
        return self


class LADRegressor(_LinearRegressorBase):
    """Least absolute deviations: ERM of the absolute loss as the linear program of 002's exercise.

    Variables v = (w, s) in R^{d+n}; minimise sum_i s_i subject to
    [-X -I; X -I] v <= (-y, y) (so s_i >= |y_i - w.x_i|), solved by
    ``scipy.optimize.linprog`` (HiGHS) with a sparse constraint matrix.
    The intercept is the weight of the constant feature.
    """

    _parameter_spec = {"fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept=True, n_jobs=None):
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        A = _augment(X, self.fit_intercept)
        n, p = A.shape
        scale, y_scale = _pow2_scale(A), float(_pow2_scale(y, axis=None))
        A, y = A / scale, y / y_scale       # exact rescaling; the weights are scaled back below
        eye = scipy.sparse.identity(n, format="csr")
        As = scipy.sparse.csr_matrix(A)
        A_ub = scipy.sparse.vstack([scipy.sparse.hstack([-As, -eye]), scipy.sparse.hstack([As, -eye])],
                                   format="csr")
        b_ub = np.concatenate([-y, y])
        c = np.concatenate([np.zeros(p), np.ones(n)])
        res = scipy.optimize.linprog(c, A_ub=A_ub, b_ub=b_ub,
                                     bounds=[(None, None)] * p + [(0, None)] * n, method="highs")
        if res.status != 0:
            raise ValueError(f"LADRegressor: linprog failed: {res.message}")
        with np.errstate(over="ignore"):
            w = res.x[:p] * y_scale / scale
        _check_lp_weights(self, w)
        self._set_augmented(w, X.shape[1])
        self.training_absolute_loss_ = float(res.fun) * y_scale / n
        return self


# ---- smml tour ----------------------------------------------------------------------------

def _ref(name, **kw):
    def make():
        from smml.reference import linear as R
        return getattr(R, name)(**kw)
    return make


TOUR = [
    TourEntry("Perceptron", lambda: Perceptron(max_epochs=50), ("breast_cancer", "iris", "wine"),
              reference=_ref("Perceptron", max_epochs=50)),
    TourEntry("LogisticRegression", lambda: LogisticRegression(lam=1e-2), ("breast_cancer",),
              reference=_ref("LogisticRegression", lam=1e-2)),
    TourEntry("Pegasos", lambda: Pegasos(lam=1e-2, n_iter=20000, random_state=0), ("breast_cancer",),
              reference=_ref("Pegasos", lam=1e-2, n_iter=20000, random_state=0)),
    TourEntry("OnlineGradientDescent", lambda: OnlineGradientDescent(radius=10.0), ("breast_cancer",),
              reference=_ref("OnlineGradientDescent", radius=10.0)),
    TourEntry("LinearRegression", LinearRegression, ("diabetes",), reference=_ref("LinearRegression")),
    TourEntry("RidgeRegression", lambda: RidgeRegression(alpha=1.0), ("diabetes",),
              reference=_ref("RidgeRegression", alpha=1.0)),
    TourEntry("LMSRegressor", lambda: LMSRegressor(mode="stochastic", max_epochs=200), ("diabetes",),
              reference=_ref("LMSRegressor", mode="stochastic", max_epochs=200)),
    TourEntry("LADRegressor", LADRegressor, ("diabetes",)),
]
