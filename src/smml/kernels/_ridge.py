"""Kernel ridge regression (003 section 11)."""
import warnings

import numpy as np
import scipy.linalg

from smml._core import _kernel_methods as _k
from smml._threads import blas_threads
from smml._validation import BOOL, N_JOBS, Interval, check_is_fitted, validate_X, validate_X_y
from smml.base import RegressorMixin, SmmlEstimator, store_params

from smml.kernels._base import KERNEL_SPEC, decision_values, gram, resolve_kernel

_LAPACK_PARALLEL_MIN = 2048     # systems smaller than this are factorised on one thread


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

    Intercept: 003's predictor has none (``fit_intercept=False``, the default,
    as scikit-learn's KernelRidge). ``fit_intercept=True`` adds an unpenalised
    constant as :class:`smml.linear.RidgeRegression` does: the kernel matrix is
    centred in feature space (Kc = (I - 11^T/m) K (I - 11^T/m)) and y on its
    mean; on the linear kernel this equals ``RidgeRegression(fit_intercept=True)``
    (and ``fit_intercept=False`` equals ``RidgeRegression(fit_intercept=False)``).

    Parameters
    ----------
    alpha : float >= 0, default=1.0
        The penalty on ||g||_K^2.
    kernel : "linear", "polynomial", "gaussian" or callable, default="gaussian"
        The kernel (see :class:`KernelPerceptron`).
    degree : int >= 1, default=3
        The degree of the polynomial kernel.
    gamma : float > 0 or "scale", default="scale"
        003's Gaussian width (scikit-learn's ``gamma`` is 1 / (2 gamma)).
    fit_intercept : bool, default=False
        Add an unpenalised constant.
    n_jobs : None or int, default=None
        Threads of the Gram matrix and of ``predict``.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (m,)
        (alpha I + K)^{-1} y.
    X_fit_ : ndarray of shape (m, n_features)
        The training rows.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    gamma_ : float
        The Gaussian width used (``gamma`` resolved).
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

    def __init__(self, alpha=1.0, kernel="gaussian", degree=3, gamma="scale", fit_intercept=False,
                 n_jobs=None):
        store_params(self, locals())

    def _system(self, kern, Xp, norms, fill, nt):
        """alpha I + K (centred with fit_intercept), and the row means r of K."""
        name = type(self).__name__
        K = gram(kern, Xp, a_norms=norms, out_dtype=np.float64, fill=fill, n_threads=nt, name=name)
        r = None
        if self.fit_intercept:
            r = K.mean(axis=0)
            K -= r[None, :]
            K -= r[:, None]
            K += r.mean()
        K.flat[::K.shape[0] + 1] += self.alpha
        return K, r

    def fit(self, X, y):
        """Solve (alpha I + K) dual_coef_ = y (centred with ``fit_intercept``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The targets.

        Returns
        -------
        self : object
            The fitted KernelRidge.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        kern = resolve_kernel(self, X)
        Xp = kern.prepare(X)
        norms = kern.norms(Xp)
        nt = self._n_threads()
        y_mean = float(y.mean()) if self.fit_intercept else 0.0
        yc = np.ascontiguousarray(y - y_mean)
        # the lower triangle suffices for Cholesky; centring needs the whole matrix
        fill = 2 if (self.fit_intercept or kern.func is not None) else 1
        A, r = self._system(kern, Xp, norms, fill, nt)
        beta = np.empty(len(y))
        # LAPACK on n_jobs threads; a small system on one (OpenBLAS's threads cost more than
        # they save there, and far more on a busy machine)
        with blas_threads(nt if len(y) >= _LAPACK_PARALLEL_MIN else 1):
            info, _ = _k.spd_solve(A, yc.copy(), beta, True)
        self.solver_ = "cholesky"
        if info != 0 or not np.all(np.isfinite(beta)):
            A, r = self._system(kern, Xp, norms, 2, nt)
            warnings.warn(f"{type(self).__name__}: alpha I + K is not positive definite (alpha="
                          f"{self.alpha!r}); using the minimum-norm least-squares solution "
                          "(pseudo-inverse)", UserWarning, stacklevel=2)
            cond = A.shape[0] * np.finfo(np.float64).eps
            beta = scipy.linalg.lstsq(A, yc, cond=cond, lapack_driver="gelsd", check_finite=False)[0]
            self.solver_ = "pseudo_inverse"
        self.dual_coef_ = beta
        self.X_fit_ = X
        self.intercept_ = y_mean - float(r @ beta) if self.fit_intercept else 0.0
        self._kern = kern
        self._Xp = Xp
        self._norms = norms
        return self

    def predict(self, X):
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
        X = validate_X(self, X, reset=False, dtype="float64")
        Qp = self._kern.prepare(X)
        out = decision_values(self._kern, Qp, self._Xp, self._norms, self.dual_coef_[:, None],
                              self._n_threads(), type(self).__name__)
        return out[:, 0] + self.intercept_
