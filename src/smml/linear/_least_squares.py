"""Least squares, ridge and LMS (000 "Linear regression", "Ridge Regression"; 001; 002)."""
from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike
import scipy.linalg
import scipy.optimize
import scipy.sparse

from smml._core import _linear as _k
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, Options, drop_zero_weight, validate_X,
                               validate_X_y, validate_sample_weight)

from smml.linear._base import (_BOOL, _center, _centered_gram, _check_rng, _lstsq, _raise_divergence,
                               _refuse_overflowing_scores, _row_weights, _small_change, _warm_weights,
                               _LinearRegressorBase)
from smml.base import store_params

def _weighted_rows(X, y, sample_weight, fit_intercept):
    """(X', y', shift): rows whose plain least squares is the weighted one. No weights, or
    only ones once the zero weights are dropped: the rows themselves and shift None (the
    unweighted path, bit for bit; a zero weight is a dropped row). Otherwise the rows
    centred at the weighted means (when ``fit_intercept``) and scaled by sqrt(s_i), and
    shift = (weighted mean of X, weighted mean of y), the intercept's centre."""
    if sample_weight is None:
        return X, y, None
    sw = validate_sample_weight(sample_weight, X.shape[0])
    sw, X, y = drop_zero_weight(sw, X, y)
    if np.all(sw == 1.0):
        return X, y, None
    if fit_intercept:
        total = sw.sum()
        X_mean = (sw @ X) / total
        y_mean = float(sw @ y) / total
    else:
        X_mean, y_mean = np.zeros(X.shape[1]), 0.0
    r = np.sqrt(sw)
    with np.errstate(over="ignore", invalid="ignore"):
        return (X - X_mean) * r[:, None], (y - y_mean) * r, (X_mean, y_mean)


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

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the constant feature 1; its weight is the intercept.
    n_jobs : None or int, default=None
        Threads of ``predict``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    solver_ : str
        ``"normal_equations"`` or ``"pseudo_inverse"``.

    See Also
    --------
    sklearn.linear_model.LinearRegression : scikit-learn's least squares.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import LinearRegression
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> y = np.array([1., 3., 5., 7.])
    >>> reg = LinearRegression().fit(X, y)
    >>> print(f"{reg.coef_[0]:.3f} {reg.intercept_:.3f}")
    2.000 1.000
    >>> reg.solver_
    'normal_equations'
    """

    _parameter_spec = {"fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept: bool = True, n_jobs: int | None = None) -> None:
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> LinearRegression:
        """Least squares; with ``sample_weight`` the weighted sum of squares sum_i s_i (y_i -
        w.x_i - b)^2 (an integer weight counts a row that many times; a zero weight drops it).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples (None: all ones).

        Returns
        -------
        self : object
            The fitted LinearRegression.
        """
        self._validate_params()
        X0, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        X, y, shift = _weighted_rows(X0, y, sample_weight, self.fit_intercept)
        # (LinearRegression's own solve, also when RidgeRegression(alpha=0) comes here)
        w, X_mean, y_mean = LinearRegression._solve(self, X, y, self.fit_intercept and shift is None)
        self._set(w, *(shift or (X_mean, y_mean)))
        _refuse_overflowing_scores(self, X0)
        return self

    def _solve(self, X, y, fit_intercept):
        """(w, X_mean, y_mean) of the least-squares problem, centring when ``fit_intercept``."""
        if X.shape[1] > X.shape[0]:
            # d > m: S^T S (d x d) is singular anyway (and may not fit in memory)
            Xc, yc, X_mean, y_mean = _center(X, y, fit_intercept)
            self.solver_ = "pseudo_inverse"
            return _lstsq(Xc, yc), X_mean, y_mean
        A, b, X_mean, y_mean = _centered_gram(X, y, fit_intercept)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
                w = scipy.linalg.solve(A, b, assume_a="pos", check_finite=False)
            self.solver_ = "normal_equations"
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning, ValueError):
            Xc, yc, _, _ = _center(X, y, fit_intercept)
            w = _lstsq(Xc, yc)
            self.solver_ = "pseudo_inverse"
        return w, X_mean, y_mean


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

    Parameters
    ----------
    alpha : float, default=1.0
        The penalty alpha >= 0 on ||w||^2.
    fit_intercept : bool, default=True
        Add the constant feature 1 (its weight is not penalised).
    n_jobs : None or int, default=None
        Threads of ``predict``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    solver_ : str
        ``"closed_form"`` (or LinearRegression's solver when ``alpha=0``).

    See Also
    --------
    sklearn.linear_model.Ridge : scikit-learn's ridge regression.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import RidgeRegression
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> y = np.array([1., 3., 5., 7.])
    >>> reg = RidgeRegression(alpha=1.0).fit(X, y)
    >>> print(f"{reg.coef_[0]:.3f} {reg.intercept_:.3f}")
    1.667 1.500
    """

    _parameter_spec = {"alpha": Interval(float, 0, None), "fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, alpha: float = 1.0, fit_intercept: bool = True, n_jobs: int | None = None) -> None:
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> RidgeRegression:
        """The closed form; with ``sample_weight`` it minimises sum_i s_i (y_i - w.x_i - b)^2 +
        alpha ||w||^2 (scikit-learn's weighted ridge).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples (None: all ones).

        Returns
        -------
        self : object
            The fitted RidgeRegression.
        """
        self._validate_params()
        if self.alpha == 0:
            return LinearRegression.fit(self, X, y, sample_weight)
        X0, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        X, y, shift = _weighted_rows(X0, y, sample_weight, self.fit_intercept)
        w, X_mean, y_mean = self._solve(X, y, self.fit_intercept and shift is None)
        self.solver_ = "closed_form"
        self._set(w, *(shift or (X_mean, y_mean)))
        _refuse_overflowing_scores(self, X0)
        return self

    def _solve(self, X, y, fit_intercept):
        if X.shape[1] > X.shape[0]:
            # d > m: the same w by (alpha I + S^T S)^-1 S^T = S^T (alpha I + S S^T)^-1 (m x m)
            Xc, yc, X_mean, y_mean = _center(X, y, fit_intercept)
            with np.errstate(over="ignore", invalid="ignore"):
                K = Xc @ Xc.T
            self._check_gram(K, yc)
            K.flat[::K.shape[0] + 1] += self.alpha
            w = Xc.T @ scipy.linalg.solve(K, yc, assume_a="pos", check_finite=False)
        else:
            A, b, X_mean, y_mean = _centered_gram(X, y, fit_intercept)
            w = self._ridge_solve(A, b, self.alpha)
        return w, X_mean, y_mean

    def _ridge_solve(self, A, b, alpha):
        """w = (A + alpha I)^-1 b for the (centred) Gram matrix A = S^T S and b = S^T y (A is
        changed in place); also smml.dask's RidgeRegression's solve of the summed blocks."""
        self._check_gram(A, b)
        A.flat[::A.shape[0] + 1] += alpha
        return scipy.linalg.solve(A, b, assume_a="pos", check_finite=False)

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
    Starts from theta = 0 (``warm_start=True``: from the fitted ``coef_`` /
    ``intercept_``). Stops after ``max_iter`` passes or when a pass
    changes theta by at most ``tol * max(1, ||theta||)`` (``converged_``).

    Weights (an extension: 001's rule has none): with ``sample_weight`` s the
    batch rule is the gradient step of the weighted sum of squares,
    theta <- theta + lr sum_i s_i (y_i - theta.x_i) x_i, so an integer weight k
    is k copies of the row (up to the rounding of the sums; ``learning_rate="auto"``
    uses sum_i s_i ||x_i||^2, the Frobenius norm of the repeated data). The
    stochastic rule makes weighted steps, theta <- theta + lr s_i (y_i -
    theta.x_i) x_i (the stochastic gradient of the same weighted sum; weighted
    steps rather than weighted sampling because 001's rule is a pass over the
    examples in turn): there an integer weight k is not k copies, which would
    be k steps each from the theta the previous one left (order dependent). A
    zero weight drops the row; all-ones weights give the unweighted run bit
    for bit.

    ``learning_rate="auto"`` (a choice; 001 leaves it to the user): batch,
    1 / ||S||_F^2 (<= 1 / lambda_max(S^T S), so the iteration converges);
    stochastic, 1 / max_i ||x_i||^2. A learning rate that makes the iterates
    overflow raises :class:`DivergenceError`. The intercept is the weight of
    the constant feature, learnt like the others.

    Parameters
    ----------
    mode : {"batch", "stochastic"}, default="batch"
        The batch rule (one update per pass) or the stochastic one (one per example).
    learning_rate : "auto" or float, default="auto"
        The step size lr > 0.
    max_iter : int, default=1000
        The largest number of passes (epochs).
    tol : float, default=1e-6
        Stop when a pass changes theta by at most ``tol * max(1, ||theta||)``.
    shuffle : bool, default=False
        Stochastic mode: visit the examples in a fresh random order every epoch.
    fit_intercept : bool, default=True
        Add the constant feature 1.
    warm_start : bool, default=False
        ``fit`` starts from the fitted weights instead of theta = 0.
    random_state : None, int or Generator, default=None
        Seed of the random orders.
    n_jobs : None or int, default=None
        Threads of ``predict``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    learning_rate_ : float
        The learning rate used.
    n_iter_ : int
        The number of passes run.
    converged_ : bool
        Whether the last pass changed theta by at most the tolerance.

    See Also
    --------
    sklearn.linear_model.SGDRegressor : scikit-learn's stochastic gradient descent regressor.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import LMSRegressor
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> y = np.array([1., 3., 5., 7.])
    >>> reg = LMSRegressor(max_iter=5000).fit(X, y)
    >>> reg.converged_
    True
    >>> print(f"{reg.coef_[0]:.3f} {reg.intercept_:.3f}")
    2.000 1.000
    """

    _parameter_spec = {"mode": Options("batch", "stochastic"),
                       "learning_rate": (Options("auto"), Interval(float, 0, None, "neither")),
                       "max_iter": Interval(int, 1, None), "tol": Interval(float, 0, None),
                       "shuffle": _BOOL, "fit_intercept": _BOOL, "warm_start": _BOOL,
                       "random_state": RANDOM_STATE, "n_jobs": N_JOBS}

    def __init__(self, mode: str = "batch", learning_rate: float | str = "auto", max_iter: int = 1000,
                 tol: float = 1e-6, shuffle: bool = False, fit_intercept: bool = True,
                 warm_start: bool = False,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def _lr(self, X, sw=None):
        if self.learning_rate != "auto":
            return float(self.learning_rate)
        sq = np.einsum("ij,ij->i", X, X) + float(self.fit_intercept)
        if self.mode == "batch":
            total = sq.sum() if sw is None else sq @ sw
        else:
            total = sq.max() if sw is None else (sq * sw).max()
        return 1.0 / total if total > 0 else 1.0

    def _pass(self, X, y, w, lr, order, sw=None):
        """One pass of 001's rule over (X, y), updating w in place: one batch iteration, or the
        stochastic rule over the rows in ``order``. Returns True when w stopped being finite."""
        d = X.shape[1]
        fi = bool(self.fit_intercept)
        if self.mode == "batch":
            with np.errstate(all="ignore"):
                r = y - (X @ w[:d] + (w[d] if fi else 0.0))
                if sw is not None:
                    r = r * sw
                w[:d] += lr * (X.T @ r)
                if fi:
                    w[d] += lr * r.sum()
            return not np.all(np.isfinite(w))
        return bool(_k.lms_epoch(X, y, order, w, lr, fi, sw))

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> LMSRegressor:
        """Run 001's LMS rule from theta = 0 (see the class docstring for the stopping rule).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the examples (None: all ones; see the class docstring).

        Returns
        -------
        self : object
            The fitted LMSRegressor.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        sw, X, y = _row_weights(X, y, sample_weight)
        n, d = X.shape
        fi = bool(self.fit_intercept)
        w0 = _warm_weights(self, 1, d + fi)
        lr = self._lr(X, sw)
        self.learning_rate_ = lr
        w = np.zeros(d + fi) if w0 is None else w0[0]
        rng = _check_rng(self.random_state)
        order = np.arange(n, dtype=np.intp)
        self.converged_ = False
        self.n_iter_ = 0
        for epoch in range(self.max_iter):
            prev = w.copy()
            if self.mode != "batch" and self.shuffle:
                order = rng.permutation(n).astype(np.intp, copy=False)
            status = self._pass(X, y, w, lr, order, sw)
            self.n_iter_ += 1
            if status:
                _raise_divergence(self, f"in epoch {self.n_iter_} (learning_rate={lr:g})",
                                  "lower learning_rate (the batch rule converges for learning_rate "
                                  "< 2 / lambda_max(S^T S)) or use learning_rate='auto'")
            if _small_change(w, prev, self.tol):
                self.converged_ = True
                break
        self._set_augmented(w, d)
        self._lms_w, self._lms_rng = w, rng     # partial_fit continues from here
        return self

    def partial_fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> LMSRegressor:
        """The next pass of 001's LMS rule over the chunk (X, y), from the current theta: with
        ``mode="stochastic"`` the online Widrow-Hoff rule, one update per row in order (with
        ``shuffle``, a random order from the stream's generator); with ``mode="batch"`` one
        iteration of the batch rule on the chunk. ``learning_rate="auto"`` is computed from
        the first chunk (``learning_rate_``) and kept. Stochastic calls on consecutive chunks
        equal one call on their concatenation, and ``fit`` with ``max_iter=1`` at the same
        learning rate, bit for bit. ``n_iter_`` counts the calls. ``sample_weight`` weights
        the rows as in ``fit``.

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
            The updated LMSRegressor.
        """
        self._validate_params()
        fi = bool(self.fit_intercept)
        if "_lms_w" not in self.__dict__:
            X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
            sw, X, y = _row_weights(X, y, sample_weight)
            self.learning_rate_ = self._lr(X, sw)
            self._lms_w = np.zeros(X.shape[1] + fi)
            self.n_iter_ = 0
            self.converged_ = False
        else:
            X = validate_X(self, X, reset=False, dtype="float64")
            y = np.ascontiguousarray(y, dtype=np.float64)
            if y.ndim != 1 or len(y) != X.shape[0] or not np.all(np.isfinite(y)):
                raise ValueError(f"y must be 1-d, finite, with {X.shape[0]} entries")
            sw, X, y = _row_weights(X, y, sample_weight)
        if "_lms_rng" not in self.__dict__:
            self._lms_rng = _check_rng(self.random_state)
        w = self._lms_w.copy()
        n, d = X.shape
        if w.shape[0] != d + fi:
            raise ValueError("fit_intercept changed since the stream began: refit")
        lr = self.learning_rate_
        prev = w.copy()
        order = (self._lms_rng.permutation(n).astype(np.intp, copy=False)
                 if self.mode != "batch" and self.shuffle else np.arange(n, dtype=np.intp))
        status = self._pass(X, y, w, lr, order, sw)
        self.n_iter_ += 1
        if status:
            _raise_divergence(self, f"in partial_fit call {self.n_iter_} (learning_rate={lr:g})",
                              "lower learning_rate")
        self.converged_ = _small_change(w, prev, self.tol)
        self._lms_w = w
        self._set_augmented(w, d)
        return self
