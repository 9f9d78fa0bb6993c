"""Shared pieces of the linear learners: errors, label mapping, the binary classifier and regressor bases."""

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse
from sklearn.utils.multiclass import type_of_target

from smml._core import _linear as _k
from smml._validation import (Options, check_is_fitted,
                              check_random_state, encode_classes, validate_X)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator



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
