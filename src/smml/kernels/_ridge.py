"""Kernel ridge regression (003 section 11)."""
import warnings
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike
import scipy.linalg

from smml._core import _kernel_methods as _k
from smml._threads import blas_threads
from smml._validation import (BOOL, N_JOBS, Interval, cast_to_model, check_is_fitted, validate_sample_weight, validate_X,
                              validate_X_y)
from smml.base import RegressorMixin, SmmlEstimator, store_params

from smml.kernels._base import KERNEL_SPEC, decision_values, gram, resolve_kernel

_LAPACK_PARALLEL_MIN = 2048     # systems smaller than this are factorised on one thread


_Self = TypeVar("_Self")

class KernelRidge(RegressorMixin, SmmlEstimator):
    """Kernel ridge regression, the closed form of 003 section 11.

    g(x) = y^T (alpha I + K)^{-1} k(x), with K_ij = K(x_i, x_j) and k(x) =
    (K(x_1, x), ..., K(x_m, x)): the ridge predictor of 000 ("Ridge
    Regression") in the space of the kernel. ``dual_coef_`` = (alpha I + K)^{-1} y
    is computed by a Cholesky factorisation (LAPACK, never an explicit
    inverse): LAPACK's mixed-precision driver dsposv factorises in float32 and
    refines the solution in float64 until its residual meets LAPACK's float64
    test, and factorises in float64 itself when the refinement does not
    converge (an ill-conditioned system), so the result has float64 accuracy
    either way. The Gram matrix is built once (lower triangle only, blocked
    gemm, OpenMP).

    alpha is the alpha of scikit-learn's ``KernelRidge`` (sum of squares + alpha
    ||g||_K^2). ``alpha=0`` is allowed. When alpha I + K is not positive
    definite (alpha = 0 with a singular K, or an indefinite user kernel), the
    solution falls back to the minimum-norm least-squares solution
    (pseudo-inverse, SVD: 002 "Singular value decomposition") with a
    warning; ``solver_`` says which was used ("cholesky" or "pseudo_inverse").

    Weights: ``fit(X, y, sample_weight=w)`` minimises sum_i w_i (y_i - g(x_i))^2 +
    alpha ||g||_K^2. Setting the derivative in the coefficients to zero gives
    (W K + alpha I) beta = W y, i.e. (K + alpha W^{-1}) beta = y for positive
    weights; it is solved in the symmetric form beta = W^{1/2} (W^{1/2} K W^{1/2} +
    alpha I)^{-1} W^{1/2} y (scikit-learn's ``KernelRidge(sample_weight)``, one
    Cholesky factorisation). A zero weight drops the row (its beta_i is 0 in the
    formula; it is removed before the solve), an integer weight k is k copies of
    the row (the copies' coefficients add up to the weighted row's).

    Intercept: 003's predictor has none (``fit_intercept=False``, the default,
    as scikit-learn's KernelRidge). ``fit_intercept=True`` adds an unpenalised
    constant as :class:`smml.linear.RidgeRegression` does: the kernel matrix is
    centred in feature space (Kc = (I - 11^T/m) K (I - 11^T/m)) and y on its
    mean; on the linear kernel this equals ``RidgeRegression(fit_intercept=True)``
    (and ``fit_intercept=False`` equals ``RidgeRegression(fit_intercept=False)``).
    With weights the centring is on the weighted means: Kc = (I - 1 p^T) K
    (I - p 1^T), p = w / sum(w), y on its weighted mean.

    float32: the system is solved in float64 whatever the input; a model fitted on
    float32 rows predicts in float32 (the decision values of float32 rows).

    Parameters
    ----------
    alpha : float >= 0, default=1.0
        The penalty on ||g||_K^2 (003's lambda in its kernel ridge closed form).
    kernel : "rbf", "poly", "linear", "gaussian", "polynomial" or callable, default="rbf"
        The kernel (see :class:`KernelPerceptron`).
    degree : int >= 1, default=3
        The degree of the polynomial kernel.
    gamma : float > 0, "scale" or "auto", default="scale"
        scikit-learn's ``gamma`` of the Gaussian kernel exp(-gamma ||x - x'||^2) (003's width
        is 1 / (2 gamma)). ``sklearn.kernel_ridge.KernelRidge`` defaults to the linear kernel
        (and gamma=None, i.e. 1 / n_features); pass ``kernel="rbf", gamma=g`` to both.
    fit_intercept : bool, default=False
        Add an unpenalised constant.
    n_jobs : None or int, default=None
        Threads of the Gram matrix and of ``predict``.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (m,)
        (alpha I + K)^{-1} y (weighted: see above; 0 on rows of weight 0).
    X_fit_ : ndarray of shape (m, n_features)
        The training rows.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    gamma_ : float
        The gamma used (``gamma`` resolved).
    solver_ : str
        ``"cholesky"`` or ``"pseudo_inverse"``.

    See Also
    --------
    sklearn.kernel_ridge.KernelRidge : scikit-learn's kernel ridge regression.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.kernels import KernelRidge
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> y = np.array([1., 3., 5., 7.])
    >>> reg = KernelRidge(alpha=1e-6, kernel="linear", fit_intercept=True).fit(X, y)
    >>> reg.solver_
    'cholesky'
    >>> print(f"{reg.predict([[1.5]])[0]:.3f}")
    4.000
    """

    _parameter_spec = {"alpha": Interval(float, 0, None), **KERNEL_SPEC, "fit_intercept": BOOL,
                       "n_jobs": N_JOBS}

    def __init__(self, alpha: float = 1.0, kernel: str = "rbf", degree: int = 3,
                 gamma: float | str = "scale", fit_intercept: bool = False, n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def _system(self, kern, Xp, norms, fill, nt, p=None, s=None):
        """alpha I + S K S (K centred with fit_intercept; S = diag(s), the square roots of the
        weights), and the weighted row means r = K p of K (p: the normalised weights)."""
        name = type(self).__name__
        K = gram(kern, Xp, a_norms=norms, out_dtype=np.float64, fill=fill, n_threads=nt, name=name)
        r = None
        if self.fit_intercept:
            r = K.mean(axis=0) if p is None else K @ p
            K -= r[None, :]
            K -= r[:, None]
            K += r.mean() if p is None else float(p @ r)
        if s is not None:
            K *= s[:, None]
            K *= s[None, :]
        K.flat[::K.shape[0] + 1] += self.alpha
        return K, r

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Solve (alpha I + K) dual_coef_ = y (weighted, centred with ``fit_intercept``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The targets.
        sample_weight : None or array-like of shape (n_samples,), default=None
            Non-negative weights of the squared errors; a zero weight drops the row.

        Returns
        -------
        self : object
            The fitted KernelRidge.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", y_numeric=True)
        m_all = len(y)
        weighted = sample_weight is not None
        sw = validate_sample_weight(sample_weight, m_all) if weighted else None
        kern = resolve_kernel(self, X, sw)
        Xp = kern.prepare(X.astype(np.float64, copy=False))     # the system in float64 always
        norms = kern.norms(Xp)
        keep = None
        if weighted and not np.all(sw > 0):                  # a zero weight drops the row
            keep = np.flatnonzero(sw > 0)
            Xs, ys, sw = np.ascontiguousarray(Xp[keep]), y[keep], sw[keep]
            ns = norms[keep].copy()
        else:
            Xs, ys, ns = Xp, y, norms
        p = None if not weighted else sw / sw.sum()
        s = None if not weighted else np.sqrt(sw)
        nt = self._n_threads()
        if self.fit_intercept:
            y_mean = float(ys.mean()) if p is None else float(p @ ys)
        else:
            y_mean = 0.0
        yc = np.ascontiguousarray(ys - y_mean)
        rhs = yc if s is None else yc * s
        # the lower triangle suffices for Cholesky; centring and weights need the whole matrix
        fill = 2 if (self.fit_intercept or weighted or kern.func is not None) else 1
        A, r = self._system(kern, Xs, ns, fill, nt, p, s)
        beta = np.empty(len(ys))
        # LAPACK on n_jobs threads; a small system on one (OpenBLAS's threads cost more than
        # they save there, and far more on a busy machine)
        with blas_threads(nt if len(ys) >= _LAPACK_PARALLEL_MIN else 1):
            info, _ = _k.spd_solve(A, rhs.copy(), beta, True)
        self.solver_ = "cholesky"
        if info != 0 or not np.all(np.isfinite(beta)):
            A, r = self._system(kern, Xs, ns, 2, nt, p, s)
            warnings.warn(f"{type(self).__name__}: alpha I + K is not positive definite (alpha="
                          f"{self.alpha!r}); using the minimum-norm least-squares solution "
                          "(pseudo-inverse)", UserWarning, stacklevel=2)
            cond = A.shape[0] * np.finfo(np.float64).eps
            beta = scipy.linalg.lstsq(A, rhs, cond=cond, lapack_driver="gelsd", check_finite=False)[0]
            self.solver_ = "pseudo_inverse"
        if s is not None:
            beta = beta * s
        self.intercept_ = y_mean - float(r @ beta) if self.fit_intercept else 0.0
        if keep is not None:
            full = np.zeros(m_all)
            full[keep] = beta
            beta = full
        self.dual_coef_ = beta
        self.X_fit_ = X
        self._kern = kern
        if X.dtype != np.float64:                              # predict in the input's dtype
            Xp = kern.prepare(X)
            norms = kern.norms(Xp)
        self._Xp = Xp
        self._norms = norms
        return self

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict g(x) = sum_i dual_coef_[i] K(x_i, x) (+ intercept_).

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
        X = validate_X(self, X, reset=False, dtype="floating")
        X = cast_to_model(self, X, self.X_fit_.dtype)
        Qp = self._kern.prepare(X)
        out = decision_values(self._kern, Qp, self._Xp, self._norms, self.dual_coef_[:, None],
                              self._n_threads(), type(self).__name__)
        return out[:, 0] + out.dtype.type(self.intercept_)
