"""The kernels of 003 section 11 as functions returning Gram matrices."""
import numbers

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_array

from smml._threads import effective_n_threads

from smml.kernels._base import MAX_DEGREE, Kernel, gram


def _pair(X, Y, name):
    X = check_array(X, dtype=[np.float64, np.float32], ensure_all_finite=True, input_name="X")
    if Y is None:
        return X, None
    Y = check_array(Y, dtype=[np.float64, np.float32], ensure_all_finite=True, input_name="Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"{name}: X has {X.shape[1]} features but Y has {Y.shape[1]}")
    if X.dtype != Y.dtype:
        X, Y = X.astype(np.float64), Y.astype(np.float64)
    return X, Y


def _kernel_matrix(kern, X, Y, n_jobs, name):
    nt = effective_n_threads(n_jobs)
    if kern.code == 2:
        kern.center = X.mean(axis=0, dtype=np.float64)
        if not np.all(np.isfinite(kern.center)):
            kern.center = None
    Xp = kern.prepare(X)
    Yp = None if Y is None else kern.prepare(Y)
    return gram(kern, Xp, Yp, fill=2, n_threads=nt, name=name)


def linear_kernel(X: ArrayLike, Y: ArrayLike | None = None, n_jobs: int | None = None) -> np.ndarray:
    """K(x, x') = x.x' for every row of X against every row of Y (default: X).

    float32 when X (and Y) are float32, else float64; blocked gemm, OpenMP.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        The first rows.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        The second rows (None: X).
    n_jobs : None or int, default=None
        Threads of the computation.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix K[i, j] = K(X[i], Y[j]); float32 for float32 input, else float64.

    See Also
    --------
    sklearn.metrics.pairwise.linear_kernel : scikit-learn's linear kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.kernels import linear_kernel
    >>> X = np.array([[0., 1.], [1., 0.]])
    >>> linear_kernel(X).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    X, Y = _pair(X, Y, "linear_kernel")
    return _kernel_matrix(Kernel("linear"), X, Y, n_jobs, "linear_kernel")


def polynomial_kernel(X: ArrayLike, Y: ArrayLike | None = None, degree: int = 3, n_jobs: int | None = None) -> np.ndarray:
    """K_n(x, x') = (1 + x.x')^n, 003 section 11 (n = ``degree``, a positive integer).

    scikit-learn's ``polynomial_kernel(X, Y, degree=n, gamma=1, coef0=1)`` is the same kernel.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        The first rows.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        The second rows (None: X).
    degree : int, default=3
        The degree n, a positive integer.
    n_jobs : None or int, default=None
        Threads of the computation.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix K[i, j] = K(X[i], Y[j]); float32 for float32 input, else float64.

    See Also
    --------
    sklearn.metrics.pairwise.polynomial_kernel : scikit-learn's polynomial kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.kernels import polynomial_kernel
    >>> X = np.array([[0., 1.], [1., 0.]])
    >>> polynomial_kernel(X, degree=2).tolist()
    [[4.0, 1.0], [1.0, 4.0]]
    """
    if (isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1
            or degree > MAX_DEGREE):
        raise ValueError(f"polynomial_kernel: degree must be an integer in [1, {MAX_DEGREE}], got {degree!r}")
    X, Y = _pair(X, Y, "polynomial_kernel")
    return _kernel_matrix(Kernel("polynomial", degree=degree), X, Y, n_jobs, "polynomial_kernel")


def gaussian_kernel(X: ArrayLike, Y: ArrayLike | None = None, gamma: float = 0.5, n_jobs: int | None = None) -> np.ndarray:
    """K(x, x') = exp(-gamma ||x - x'||^2), the Gaussian kernel of 003 section 11 (gamma > 0).

    ``gamma`` is scikit-learn's (``sklearn.metrics.pairwise.rbf_kernel(X, Y, gamma=gamma)`` is
    the same matrix). 003 writes the kernel with a *width*: K_g(x, x') = exp(-||x - x'||^2 / (2 g)),
    so 003's width g is 1 / (2 gamma) and gamma = 1 / (2 g); the default gamma = 0.5 is 003's
    width g = 1.
    The squared distances are ||x||^2 + ||x'||^2 - 2 x.x' on rows centred on
    X's mean (a blocked gemm; centring leaves every distance unchanged and
    avoids cancellation between large norms).

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        The first rows.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        The second rows (None: X).
    gamma : float, default=0.5
        The coefficient gamma > 0 of ||x - x'||^2 (scikit-learn's; 003's width is 1 / (2 gamma)).
    n_jobs : None or int, default=None
        Threads of the computation.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix K[i, j] = K(X[i], Y[j]); float32 for float32 input, else float64.

    See Also
    --------
    sklearn.metrics.pairwise.rbf_kernel : scikit-learn's Gaussian kernel (the same gamma).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.kernels import gaussian_kernel
    >>> X = np.array([[0., 1.], [1., 0.]])
    >>> K = gaussian_kernel(X, gamma=1.0)
    >>> print(f"{K[0, 0]:.3f} {K[0, 1]:.3f}")
    1.000 0.135
    """
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not (
            np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gaussian_kernel: gamma must be a positive number, got {gamma!r}")
    X, Y = _pair(X, Y, "gaussian_kernel")
    return _kernel_matrix(Kernel("gaussian", gamma=gamma), X, Y, n_jobs, "gaussian_kernel")
