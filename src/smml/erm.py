"""Empirical risk minimisation over a finite class of predictors (000 "Empirical risk minimization").

000: "Let F be a given set of predictors and l a loss function. The empirical risk
minimizer (ERM) is the learning algorithm that outputs some predictor in F minimizing the
training error", f_hat in argmin_{f in F} l_S(f). For a finite class and a loss with values
in [0, 1], 000's risk analysis bounds what the choice costs: with probability >= 1 - delta
over the training set of size m,

- l_D(h_S) <= min_{h in H} l_D(h) + sqrt((2/m) ln(2|H|/delta))
  (:func:`smml.bounds.erm_finite_class_bound`, the estimation error), and
- |l_S(h) - l_D(h)| <= sqrt(ln(2|H|/delta) / (2m)) for every h in H at once
  (:func:`smml.bounds.finite_class_uniform_bound`), so l_D(h_S) <= l_S(h_S) + that.

The estimators here run ERM over a class you give - a list of predictors, each a callable
``h(X) -> predictions`` (a fitted model's ``predict`` method, a threshold rule, a lookup
table) - and report the training error of every member and both bounds beside the choice.
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Sequence, TypeVar

from numpy.typing import ArrayLike, NDArray

import numpy as np

from smml._validation import Interval, check_is_fitted, encode_classes, validate_X, validate_X_y
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator
from smml.bounds import erm_finite_class_bound, finite_class_uniform_bound
from smml.losses import get_loss

__all__ = ["ERMClassifier", "ERMRegressor"]

_Self = TypeVar("_Self")


class _Constant:
    """x -> c, a member of the class of constant predictors."""

    def __init__(self, value, dtype=None):
        self.value = value
        self.dtype = np.asarray([value]).dtype if dtype is None else np.dtype(dtype)

    def __call__(self, X):
        return np.full(np.shape(X)[0], self.value, dtype=self.dtype)

    def __repr__(self):
        return f"constant({self.value!r})"


def _all_finite_numbers(a):
    """True for a numeric array with no inf or NaN (False for labels that are not numbers)."""
    a = np.asarray(a)
    return a.dtype.kind in "biuf" and bool(np.all(np.isfinite(a)))


class _FiniteClassERM(SmmlEstimator):
    def _check_hypotheses(self):
        H = self.hypotheses
        if isinstance(H, str):
            if H != "constant":
                raise ValueError(f"{type(self).__name__}: hypotheses must be 'constant' or a non-empty sequence "
                                 f"of callables h(X) -> predictions, got {H!r}")
            return None
        try:
            H = list(H)
        except TypeError:
            raise ValueError(f"{type(self).__name__}: hypotheses must be 'constant' or a non-empty sequence of "
                             f"callables h(X) -> predictions, got {type(H).__name__}") from None
        if not H or not all(callable(h) for h in H):
            raise ValueError(f"{type(self).__name__}: hypotheses must be a non-empty sequence of callables "
                             "h(X) -> predictions (for a fitted model pass its predict method)")
        return H

    def _predictions(self, h, X, n):
        p = np.asarray(h(X))
        if p.shape != (n,):
            p = p.reshape(-1) if p.size == n else p
        if p.shape != (n,):
            raise ValueError(f"{type(self).__name__}: the hypothesis {h!r} returned shape {np.shape(p)} "
                             f"for {n} rows; each must return one prediction per row")
        return p

    def _fit(self, X, y, constants):
        H = self._check_hypotheses()
        loss = get_loss(self.loss)
        self.hypotheses_ = ([_Constant(c, np.asarray(constants).dtype) for c in constants] if H is None
                            else H)
        m = X.shape[0]
        errors = np.empty(len(self.hypotheses_))
        in_unit = True
        for k, h in enumerate(self.hypotheses_):       # O(m) memory: one hypothesis at a time
            pred = self._predictions(h, X, m)
            with np.errstate(over="ignore", invalid="ignore"):
                lk = np.asarray(loss(y, pred), dtype=float)
            if lk.shape != (m,):
                raise ValueError(f"{type(self).__name__}: the loss must give one finite value per example")
            if not np.all(np.isfinite(lk)):
                if _all_finite_numbers(y) and _all_finite_numbers(pred):
                    raise ValueError(f"{type(self).__name__}: the loss overflows float64 on these targets and "
                                     f"predictions (largest |y| {np.max(np.abs(y)):.3g}); rescale y")
                raise ValueError(f"{type(self).__name__}: the loss must give one finite value per example")
            errors[k] = lk.mean()
            in_unit = in_unit and bool(np.all((lk >= 0) & (lk <= 1)))
        self.training_errors_ = errors
        self.best_index_ = int(np.argmin(errors))      # f_hat: the first minimiser
        self.best_hypothesis_ = self.hypotheses_[self.best_index_]
        self.training_error_ = float(errors[self.best_index_])
        self.n_hypotheses_ = len(self.hypotheses_)
        if in_unit:
            self.estimation_error_bound_ = erm_finite_class_bound(m, self.n_hypotheses_, self.delta)
            self.uniform_deviation_bound_ = finite_class_uniform_bound(m, self.n_hypotheses_, self.delta)
            self.risk_bound_ = min(1.0, self.training_error_ + self.uniform_deviation_bound_)
        else:       # the bounds of 000 need a loss with values in [0, 1]
            self.estimation_error_bound_ = self.uniform_deviation_bound_ = self.risk_bound_ = None
        return self

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The chosen predictor f_hat on X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points to predict.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            f_hat(x) for every row x of X: the predictions of ``best_hypothesis_``.
        """
        check_is_fitted(self)
        X = validate_X(self, X, reset=False, dtype="float64")
        return self._predictions(self.best_hypothesis_, X, X.shape[0])


class ERMClassifier(ClassifierMixin, _FiniteClassERM):
    """ERM over a finite class of classifiers (000 "Empirical risk minimization").

    f_hat = argmin_{h in H} l_S(h) with the zero-one loss (or ``loss``, a name of
    :data:`smml.losses.LOSSES` or a callable ``loss(y, y_pred)``); ties: the first
    minimiser in the order of ``hypotheses``. The training error and the finite-class
    bounds of 000 are reported beside the choice (module docstring).

    Parameters
    ----------
    hypotheses : "constant" or a sequence of callables
        H. "constant": the constant classifiers, one per label seen in training (ERM is
        then the majority label). Otherwise each h maps an (n, d) float64 array to n labels.
        Callables are not cloned: pass ``model.predict`` for a fitted ``model``.
    loss : str or callable, default="zero_one"
        The loss l of the training error l_S(h).
    delta : float in (0, 1), default=0.05
        Confidence of the bounds.

    Attributes
    ----------
    hypotheses_ : list of callable
        The class H as used (for "constant": one constant predictor per training label).
    training_errors_ : ndarray of shape (n_hypotheses_,)
        l_S(h) for every h of H, in order.
    best_index_ : int
        The index in ``hypotheses_`` of f_hat, the first minimiser of the training error.
    best_hypothesis_ : callable
        f_hat itself, ``hypotheses_[best_index_]``.
    training_error_ : float
        l_S(f_hat).
    n_hypotheses_ : int
        |H|.
    estimation_error_bound_ : float or None
        sqrt((2/m) ln(2|H|/delta)) (000: l_D(f_hat) <= min_H l_D + this).
    uniform_deviation_bound_ : float or None
        sqrt(ln(2|H|/delta) / (2m)) (000: |l_S(h) - l_D(h)| <= this for all h).
    risk_bound_ : float or None
        min(1, training_error_ + uniform_deviation_bound_), a bound on l_D(f_hat).
        The three bounds hold with probability >= 1 - delta and need a loss with values in
        [0, 1] on the training set; otherwise they are None.

    See Also
    --------
    ERMRegressor : ERM over a finite class of real-valued predictors.
    smml.bounds.erm_finite_class_bound : the estimation-error bound.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.erm import ERMClassifier
    >>> X = np.array([[0.], [1.], [2.], [3.], [4.], [5.]])
    >>> y = np.array([0, 0, 0, 1, 1, 0])
    >>> stumps = [lambda X, t=t: (X[:, 0] >= t).astype(int) for t in (0.5, 2.5, 4.5)]
    >>> clf = ERMClassifier(hypotheses=stumps).fit(X, y)
    >>> clf.best_index_, [round(e, 3) for e in clf.training_errors_.tolist()]
    (1, [0.5, 0.167, 0.5])
    >>> clf.predict(X).tolist()
    [0, 0, 0, 1, 1, 1]
    >>> round(clf.risk_bound_, 3)                # l_S(f_hat) + sqrt(ln(2|H|/delta) / (2m))
    0.798
    """

    _parameter_spec = {"delta": Interval(float, 0, 1, "neither")}

    def __init__(self, hypotheses: Literal["constant"] | Sequence[Callable[..., Any]] = "constant",
                 loss: str | Callable[..., Any] = "zero_one", delta: float = 0.05) -> None:
        self.hypotheses = hypotheses
        self.loss = loss
        self.delta = delta

    def fit(self: _Self, X: ArrayLike, y: ArrayLike) -> _Self:
        """Run ERM on the training set: choose the h of H with the least training error.

        Parameters
        ----------
        X : array-like of shape (m, d)
            The training points.
        y : array-like of shape (m,)
            Their labels.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, _ = encode_classes(y)
        return self._fit(X, y, self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True      # the constant class is the majority rule
        return tags


class ERMRegressor(RegressorMixin, _FiniteClassERM):
    """ERM over a finite class of real-valued predictors (000 "Empirical risk minimization").

    As :class:`ERMClassifier` with the square loss by default ("absolute", or any loss of
    :data:`smml.losses.LOSSES` / a callable). "constant": one constant predictor per
    distinct training target (|H| m loss evaluations). The bounds are reported only when every loss value on the
    training set lies in [0, 1] (000's bounds are for such losses).

    Parameters
    ----------
    hypotheses : "constant" or a sequence of callables
        H. "constant": the constant predictors, one per distinct training target.
        Otherwise each h maps an (n, d) float64 array to n real predictions.
        Callables are not cloned: pass ``model.predict`` for a fitted ``model``.
    loss : str or callable, default="square"
        The loss l of the training error l_S(h).
    delta : float in (0, 1), default=0.05
        Confidence of the bounds.

    Attributes
    ----------
    hypotheses_ : list of callable
        The class H as used (for "constant": one constant predictor per distinct training target).
    training_errors_ : ndarray of shape (n_hypotheses_,)
        l_S(h) for every h of H, in order.
    best_index_ : int
        The index in ``hypotheses_`` of f_hat, the first minimiser of the training error.
    best_hypothesis_ : callable
        f_hat itself, ``hypotheses_[best_index_]``.
    training_error_ : float
        l_S(f_hat).
    n_hypotheses_ : int
        |H|.
    estimation_error_bound_ : float or None
        sqrt((2/m) ln(2|H|/delta)) (000: l_D(f_hat) <= min_H l_D + this).
    uniform_deviation_bound_ : float or None
        sqrt(ln(2|H|/delta) / (2m)) (000: |l_S(h) - l_D(h)| <= this for all h).
    risk_bound_ : float or None
        min(1, training_error_ + uniform_deviation_bound_), a bound on l_D(f_hat).
        The three bounds hold with probability >= 1 - delta and need a loss with values in
        [0, 1] on the training set; otherwise they are None.

    See Also
    --------
    ERMClassifier : ERM over a finite class of classifiers.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.erm import ERMRegressor
    >>> X = np.zeros((4, 1))
    >>> y = np.array([0.0, 0.2, 0.4, 0.5])
    >>> reg = ERMRegressor(loss="absolute").fit(X, y)    # the best constant among 0, 0.2, 0.4, 0.5
    >>> round(float(reg.predict(X[:1])[0]), 3), round(reg.training_error_, 3)
    (0.2, 0.175)
    >>> reg.risk_bound_ is not None                    # every |y - c| lies in [0, 1]
    True
    """

    _parameter_spec = {"delta": Interval(float, 0, 1, "neither")}

    def __init__(self, hypotheses: Literal["constant"] | Sequence[Callable[..., Any]] = "constant",
                 loss: str | Callable[..., Any] = "square", delta: float = 0.05) -> None:
        self.hypotheses = hypotheses
        self.loss = loss
        self.delta = delta

    def fit(self: _Self, X: ArrayLike, y: ArrayLike) -> _Self:
        """Run ERM on the training set: choose the h of H with the least training error.

        Parameters
        ----------
        X : array-like of shape (m, d)
            The training points.
        y : array-like of shape (m,)
            Their real targets.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        return self._fit(X, y, np.unique(y))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        return tags

