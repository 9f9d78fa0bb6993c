"""Shared pieces of the linear learners: errors, label mapping, the binary classifier and regressor bases."""
from __future__ import annotations

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike
import scipy.optimize
import scipy.sparse

from smml._core import _linear as _k
from smml._outputs import check_finite_output, in_input_precision
from smml._random import check_rng as _check_rng  # noqa: F401  (the linear learners import it from here)
from smml._threads import threads_for
from sklearn.utils.class_weight import compute_sample_weight

from smml._validation import (BOOL, InstanceOf, Options, check_is_fitted, drop_zero_weight, validate_X,
                               validate_X_y, validate_sample_weight)
from smml._validation import problem_labels as _problem_labels  # noqa: F401  (the linear learners import it from here)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator
from smml.exceptions import DivergenceError  # noqa: F401  (the linear learners import it from here)

_BOOL = BOOL
#: class_weight: None, "balanced" or a dict {label: weight}
_CLASS_WEIGHT = (Options(None, "balanced"), InstanceOf(dict))
from smml._linear_sums import GRAIN as _GRAIN  # noqa: E402  rows worth one thread of the parallel kernels
from smml._linear_sums import raise_divergence as _raise_divergence  # noqa: E402,F401


# ---- helpers ------------------------------------------------------------------------

def _first_chunk(est, X, y, classes, dtype):
    """The first ``partial_fit`` call of a classifier: (X, y) validated (``n_features_in_``
    set) and ``est.classes_`` from ``classes`` (every label of the stream, at least 2)."""
    if classes is None:
        raise ValueError("classes must be passed on the first call to partial_fit")
    X, y = validate_X_y(est, X, y, dtype=dtype, classifier=True)
    classes = np.unique(np.asarray(classes))
    if len(classes) < 2:
        raise ValueError(f"classes must hold at least 2 labels, got {classes.tolist()}")
    est.classes_ = classes
    return X, y


def _row_weights(X, y, sample_weight, class_weight=None, partial=False):
    """(sw, X, y): the row weights of a fit, validated, with the rows of weight 0 dropped
    from X and y (a zero weight is a removed row), multiplied by the class weights
    (scikit-learn's semantics: ``compute_sample_weight(class_weight, y)`` on the rows kept,
    "balanced" = n_samples / (n_classes * bincount(y))), and ``None`` when every weight is
    1 (so all-ones weights run the unweighted path, bit for bit). ``partial``: a
    ``partial_fit`` call, where "balanced" is refused (as in scikit-learn: one chunk's
    class counts are not the stream's)."""
    sw = None
    if sample_weight is not None:
        sw = validate_sample_weight(sample_weight, X.shape[0])
        sw, X, y = drop_zero_weight(sw, X, y)
    if class_weight is not None:
        if partial and isinstance(class_weight, str):
            raise ValueError("class_weight='balanced' is not supported by partial_fit (the class "
                             "counts of one chunk are not those of the stream); pass a dict, or "
                             "compute the weights with sklearn.utils.class_weight.compute_class_weight")
        cw = compute_sample_weight(class_weight, y)
        sw = cw if sw is None else sw * cw
    if sw is not None:
        if not np.any(sw > 0):
            raise ValueError("the sample weights (times the class weights) sum to zero")
        if np.all(sw == 1.0):
            return None, X, y
        if not np.all(sw > 0):
            keep = sw > 0
            sw, X, y = sw[keep], np.ascontiguousarray(X[keep]), y[keep]
        sw = np.ascontiguousarray(sw, dtype=np.float64)
    return sw, X, y


def _warm_weights(est, n_problems, p):
    """The fitted augmented weights (n_problems, p) to continue from with ``warm_start``, or
    None (not fitted, or fitted on another number of classes / features: start afresh)."""
    if not getattr(est, "warm_start", False) or not hasattr(est, "coef_"):
        return None
    W = np.atleast_2d(est.coef_)
    if est.fit_intercept:
        W = np.hstack([W, np.reshape(est.intercept_, (-1, 1))])
    if W.shape != (n_problems, p):
        raise ValueError(f"{type(est).__name__}: warm_start needs the classes and features of the "
                         f"previous fit (weights of shape {W.shape}, this fit needs "
                         f"{(n_problems, p)}); set warm_start=False to start afresh")
    return np.array(W, dtype=np.float64, copy=True)


def _next_chunk(est, X, y, dtype):
    """A later ``partial_fit`` call: X of the fitted width and a 1-d y of as many entries."""
    X = validate_X(est, X, reset=False, dtype=dtype)
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != X.shape[0]:
        raise ValueError(f"y must be 1-d with {X.shape[0]} entries, got shape {np.shape(y)}")
    return X, y


def _small_change(w, prev, tol):
    """max |w - prev| <= tol * max(1, max |w|) (max-norms: no overflow on huge finite w)."""
    return float(np.max(np.abs(w - prev))) <= tol * max(1.0, float(np.max(np.abs(w))))


def _split_w(w, d, fit_intercept, dtype=None):
    coef = np.array(w[:d], dtype=dtype, copy=True).reshape(1, d)
    intercept = np.array([w[d] if fit_intercept else 0.0], dtype=coef.dtype)
    return coef, intercept


def _refuse_overflowing_scores(est, X):
    """Raise a ValueError at fit when the fitted model's scores w.x + b of its own training
    rows X overflow (it would accept the fit and then fail to score its training data).
    |w.x + b| <= ||w||_1 max|x| + |b| settles it in two reductions over X; only where that bound
    overflows are the scores computed (the compiled decision function)."""
    if X.size == 0:
        return
    W = np.atleast_2d(np.asarray(est.coef_, dtype=np.float64))
    b = np.abs(np.atleast_1d(np.asarray(est.intercept_, dtype=np.float64)))
    dtype = np.result_type(X.dtype, np.asarray(est.coef_).dtype)
    top = float(np.finfo(dtype).max)      # a Python float: comparing bound with a float32 scalar casts bound
    with np.errstate(over="ignore", invalid="ignore"):
        xmax = max(abs(float(np.max(X))), abs(float(np.min(X))))
        bound = float(np.max(np.sum(np.abs(W), axis=1) * xmax + b))
    if bound <= top:
        return
    try:
        _scores(est, X)
    except ValueError:
        raise ValueError(f"{type(est).__name__}: the fitted weights overflow {dtype.name} on the training rows "
                         f"(w.x + b; features up to {xmax:.3g}); rescale the features or the targets") from None


def _scores(est, X):
    """decision values X @ coef_.T + intercept_ through the parallel kernel, (n, k)."""
    check_is_fitted(est)
    X = validate_X(est, X, reset=False, dtype="floating")
    X0_dtype = X.dtype
    # computed in the wider of the two precisions, returned in the input's (in_input_precision)
    dtype = np.result_type(X.dtype, est.coef_.dtype)
    X = np.ascontiguousarray(X, dtype=dtype)
    W = np.ascontiguousarray(est.coef_, dtype=dtype)
    b = np.ascontiguousarray(est.intercept_, dtype=dtype)
    out = np.empty((X.shape[0], W.shape[0]), dtype=dtype)
    _k.decision_function(X, W, b, out, threads_for(est._n_threads, X.shape[0], _GRAIN))
    return in_input_precision(check_finite_output(est, out, "w.x + b"), X0_dtype)


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


class _LinearClassifier(ClassifierMixin, SmmlEstimator):
    """A linear classifier that is binary on two classes and one-vs-rest on more.

    Two classes: one weight vector, predict = sgn(w.x') with sgn(0) = -1 (000). More
    classes (an extension beyond the notes' binary definitions): one binary problem per
    class c (classes_[c] against the rest, labels +1 / -1), ``coef_`` (n_classes, d),
    ``intercept_`` (n_classes,), ``decision_function`` (n, n_classes) and predict = the
    class of the largest score (ties: the first class in ``classes_``).
    """

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
        """Two classes: classes_[1] where w.x' > 0, else classes_[0] (sgn(0) = -1, 000 "Linear
        predictors"). More: the class of the largest score (first class on ties).

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
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]

    def _set_augmented(self, w, d):
        """coef_ (1, d) and intercept_ (1,) from the augmented weight vector w."""
        self.coef_, self.intercept_ = _split_w(w, d, self.fit_intercept)

    def _set_problems(self, W, d):
        """coef_ / intercept_ from the augmented weights of the problems, W (n_problems, d + fi)."""
        if W.shape[0] == 1:
            self._set_augmented(W[0], d)
            return
        self.coef_ = np.array(W[:, :d], copy=True)
        self.intercept_ = (np.array(W[:, d], copy=True) if self.fit_intercept
                           else np.zeros(W.shape[0], dtype=self.coef_.dtype))

    def _augmented_weights(self):
        """The fitted weights as (n_problems, d + fit_intercept)."""
        W = np.atleast_2d(self.coef_)
        if self.fit_intercept:
            W = np.hstack([W, np.reshape(self.intercept_, (-1, 1))])
        return W

    def _problem_targets(self, y):
        """Labels y as the +1 / -1 targets of each problem (n_problems, n); others are an error."""
        check_is_fitted(self)
        y = np.asarray(y)
        hits = np.array([np.asarray(y == c, dtype=bool).reshape(-1) for c in self.classes_])
        if not np.all(hits.any(axis=0)):
            raise ValueError(f"y contains labels outside classes_ {self.classes_.tolist()}")
        if len(self.classes_) == 2:
            return np.where(hits[1], 1.0, -1.0)[None, :]
        return np.where(hits, 1.0, -1.0)


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

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict w.x + b for each row.

        float32 input gives float32 predictions (the float64 result rounded once; float64
        where a value lies beyond float32's range).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted values.
        """
        check_is_fitted(self)
        return self._linear_predict(validate_X(self, X, reset=False, dtype="floating"))

    def _linear_predict(self, X):
        """w.x + b for each row of a validated, C-contiguous float X (the compiled kernel, in
        float64), returned in X's precision (:func:`smml._outputs.in_input_precision`)."""
        dtype = X.dtype
        X = np.ascontiguousarray(X, dtype=np.float64)
        out = np.empty((X.shape[0], 1))
        _k.decision_function(X, self.coef_.reshape(1, -1), np.array([self.intercept_]), out,
                             threads_for(self._n_threads, X.shape[0], _GRAIN))
        return in_input_precision(check_finite_output(self, out[:, 0], "w.x + b"), dtype)
