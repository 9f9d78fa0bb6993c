"""Mistake and regret bounds of the online learners (smml.linear, smml.kernels).

Linear learners: 000 "Training linear classifiers" (Perceptron convergence theorem); 003
sections 10 (projected online gradient descent, Perceptron mistake bound on any stream) and
12 (Pegasos).

Kernel learners: 003 section 11, the Perceptron's bounds with a kernel K. A predictor g in
H_K is given by its expansion g = sum_s coef_s K(x_s, .) on the points of the stream and the
Gram matrix K_st = K(x_s, x_t) of those points: g(x_t) = (K coef)_t and
||g||_K^2 = coef^T K coef; ||x_t||^2 becomes K(x_t, x_t).
"""
from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from smml._typing import ArrayLike, Estimator, NDArray
from smml._validation import check_positive_int as _check_positive_int

from smml.bounds._checks import _check_pos


# ---- Linear learners (smml.linear) ----------------------------------------------------

def _linear_data(X: ArrayLike, y: ArrayLike,
                 u: Any) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    u = np.asarray(u, dtype=float)
    if X.ndim != 2 or y.ndim != 1 or u.ndim != 1 or X.shape[0] != y.shape[0] or X.shape[1] != u.shape[0]:
        raise ValueError(f"need X (m, d), y (m,) and u (d,); got shapes {X.shape}, {y.shape}, {u.shape}")
    if X.shape[0] == 0 or not (np.all(np.isfinite(X)) and np.all(np.isfinite(u))):
        raise ValueError("X and u must be non-empty and finite")
    if not np.all((y == 1) | (y == -1)):
        raise ValueError("y must hold labels in {-1, +1}")
    return X, y, u


def perceptron_convergence_bound(X: ArrayLike, y: ArrayLike, u: ArrayLike | Estimator | None = None,
                                 fit_intercept: bool = False) -> float:
    """(min_{u: gamma(u) >= 1} ||u||^2)(max_t ||x_t||^2): the Perceptron's update bound.

    000, "Training linear classifiers", Theorem 3 (003 section 9): on a linearly
    separable set the Perceptron makes at most that many updates. Any separator u
    (gamma(u) = min_t y_t u.x_t > 0) rescaled to u / gamma(u) has margin 1, so the
    value returned, (||u|| / gamma(u))^2 max_t ||x_t||^2, is >= the theorem's bound,
    with equality for the max-margin separator (003 section 12).

    Parameters
    ----------
    X : array-like of shape (m, d)
        The training points: the features the Perceptron sees, without the
        constant feature.
    y : array-like of shape (m,)
        Their labels, in {-1, +1}.
    u : None, array-like or fitted :class:`smml.linear.HardMarginSVM`, default=None
        None (default): the max-margin separator of (X, y), computed by
        ``HardMarginSVM(fit_intercept=fit_intercept)``: the theorem's value (to that
        solver's certified relative tolerance, on the safe side: the u used is a
        feasible separator). An array: a given separator, (d,) or (d + 1,) with
        ``fit_intercept`` (its last entry is the weight of the constant feature).
        A fitted HardMarginSVM (binary): its separator, and its ``fit_intercept``.
    fit_intercept : bool, default=False
        The Perceptron adds the constant feature 1 (000 "Hyperplanes"): x_t becomes
        (x_t, 1) in gamma(u) and in max_t ||x_t||^2.

    Returns
    -------
    float
        The bound on the number of updates.

    See Also
    --------
    perceptron_mistake_bound : the bound on any stream, separable or not.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import perceptron_convergence_bound
    >>> X = np.array([[2., 1.], [1., 2.], [-1., -2.], [-2., -1.]])
    >>> y = np.array([1, 1, -1, -1])
    >>> round(perceptron_convergence_bound(X, y, u=np.array([1., 1.])), 4)   # (||u|| / gamma)^2 * 5
    1.1111
    """
    if u is not None and hasattr(u, "coef_") and hasattr(u, "margin_"):
        svm: Any = u
        if np.ndim(svm.margin_) != 0:
            raise ValueError("u must be a binary HardMarginSVM (one separator), not one-vs-rest")
        fit_intercept = bool(svm.fit_intercept)
        u = np.append(svm.coef_[0], svm.intercept_ if fit_intercept else [])
    Xa = np.asarray(X, dtype=float)
    if Xa.ndim == 2 and fit_intercept:
        Xa = np.hstack([Xa, np.ones((Xa.shape[0], 1))])
    if u is None:
        from smml.linear import HardMarginSVM

        _, y_chk, _ = _linear_data(Xa, y, np.zeros(Xa.shape[1] if Xa.ndim == 2 else 0))
        svm = HardMarginSVM(fit_intercept=False).fit(Xa, y_chk)
        if list(svm.classes_) != [-1.0, 1.0]:
            raise ValueError("y must hold both labels -1 and +1")
        u = svm.coef_[0]
    X, y, u = _linear_data(Xa, y, u)
    u, _ = _unit_max(u)     # the value does not depend on u's scale; tiny or huge u would under/overflow
    gamma = float(np.min(y * (X @ u)))
    if not gamma > 0:
        raise ValueError(f"u does not separate the data: its margin min_t y_t u.x_t is {gamma:g} <= 0")
    # divided twice, not by gamma ** 2: a tiny margin gives inf, not a ZeroDivisionError
    return float(u @ u) / gamma / gamma * float(np.max(np.einsum("ij,ij->i", X, X)))


def perceptron_mistake_bound(X: ArrayLike, y: ArrayLike, u: ArrayLike) -> float:
    """Mistakes of the Perceptron on the stream (x_t, y_t), any u in R^d (003, section 10).

    M <= sum_t h_t(u) + (||u|| X)^2 + ||u|| X sqrt(sum_t h_t(u)), with the hinge
    loss h_t(u) = [1 - y_t u.x_t]_+ and X = max_t ||x_t||. Holds on any
    sequence, separable or not; with a margin-1 separator it is (||u|| X)^2.

    Parameters
    ----------
    X : array-like of shape (m, d)
        The points x_t of the stream.
    y : array-like of shape (m,)
        Their labels, in {-1, +1}.
    u : array-like of shape (d,)
        Any linear predictor to compare with.

    Returns
    -------
    float
        The bound on the number M of mistakes.

    See Also
    --------
    perceptron_convergence_bound : the bound on a linearly separable set.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import perceptron_mistake_bound
    >>> X = np.array([[2., 1.], [1., 2.], [-1., -2.], [-2., -1.]])
    >>> y = np.array([1, 1, -1, -1])
    >>> round(perceptron_mistake_bound(X, y, u=np.array([1/3, 1/3])), 4)   # margin 1: (||u|| X)^2
    1.1111
    >>> round(perceptron_mistake_bound(X, y, u=np.array([0.5, 0.5])), 4)
    2.5
    """
    X, y, u = _linear_data(X, y, u)
    H = float(np.sum(np.maximum(0.0, 1.0 - y * (X @ u))))
    R = float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X))))
    c, s = _unit_max(u)
    nu = s * math.sqrt(float(c @ c))
    return H + (nu * R) * (nu * R) + nu * R * math.sqrt(H)     # (x * x: inf, not OverflowError)


def pegasos_bound(lam: float, n_iter: int, X_norm: float | None = None, G: float | None = None) -> float:
    """E[F(w_bar)] - F(w*) <= G^2 / (2 lam T) (ln T + 1) for Pegasos (003, section 12).

    F(w) = lam/2 ||w||^2 + (1/m) sum_t [1 - y_t w.x_t]_+, w_bar the average of
    the T = n_iter iterates. Pass G (a bound on the norms of the loss
    gradients) or X_norm = max_t ||x_t||, in which case 003's G <= 2X gives
    2 X^2 / (lam T) (ln T + 1).

    Parameters
    ----------
    lam : float > 0
        The regularisation coefficient lambda.
    n_iter : int >= 1
        T, the number of iterations.
    X_norm : float > 0, optional
        max_t ||x_t||; pass it or ``G``, not both.
    G : float > 0, optional
        A bound on the norms of the loss gradients; pass it or ``X_norm``, not both.

    Returns
    -------
    float
        G^2 / (2 lam T) (ln T + 1).

    Examples
    --------
    >>> from smml.bounds import pegasos_bound
    >>> round(pegasos_bound(0.1, 1000, X_norm=1.0), 4)
    0.1582
    >>> pegasos_bound(0.1, 1000, X_norm=1.0) == pegasos_bound(0.1, 1000, G=2.0)   # G <= 2X
    True
    """
    _check_pos("lam", lam)
    _check_positive_int("n_iter", n_iter)
    if (G is None) == (X_norm is None):
        raise ValueError("pass exactly one of G or X_norm")
    if G is None:
        _check_pos("X_norm", X_norm)
        G = 2.0 * cast(float, X_norm)
    else:
        _check_pos("G", G)
    return G * G / (2.0 * lam * n_iter) * (math.log(n_iter) + 1.0)


def ogd_regret_bound(U: float, G: float, T: int) -> float:
    """U G sqrt(8 / T): average regret of projected OGD with eta_t = eta/sqrt(t) (003, section 10).

    (1/T) sum_t l_t(w_t) <= min_{||u|| <= U} (1/T) sum_t l_t(u) + U G sqrt(8/T),
    for convex losses with ||grad l_t(w_t)|| <= G, on the ball of radius U.

    Parameters
    ----------
    U : float > 0
        The radius of the ball of comparison vectors u.
    G : float > 0
        A bound on the gradient norms ||grad l_t(w_t)||.
    T : int >= 1
        The number of rounds.

    Returns
    -------
    float
        U G sqrt(8 / T).

    Examples
    --------
    >>> from smml.bounds import ogd_regret_bound
    >>> round(ogd_regret_bound(1.0, 1.0, 800), 4)
    0.1
    """
    _check_pos("U", U)
    _check_pos("G", G)
    _check_positive_int("T", T)
    return U * G * math.sqrt(8.0 / T)


def ogd_strongly_convex_regret_bound(G: float, sigma: float, T: int) -> float:
    """G^2 / (2 sigma) ln(T + 1) / T: average regret of OGD with eta_t = 1/(sigma t) (003, section 10).

    For sigma-strongly convex losses with ||grad l_t(w_t)|| <= G.

    Parameters
    ----------
    G : float > 0
        A bound on the gradient norms ||grad l_t(w_t)||.
    sigma : float > 0
        The strong-convexity constant of the losses.
    T : int >= 1
        The number of rounds.

    Returns
    -------
    float
        G^2 / (2 sigma) ln(T + 1) / T.

    See Also
    --------
    ogd_regret_bound : the bound for convex losses, of order 1 / sqrt(T).

    Examples
    --------
    >>> from smml.bounds import ogd_strongly_convex_regret_bound
    >>> round(ogd_strongly_convex_regret_bound(1.0, 1.0, 1000), 4)
    0.0035
    """
    _check_pos("G", G)
    _check_pos("sigma", sigma)
    _check_positive_int("T", T)
    return G * G / (2.0 * sigma) * math.log(T + 1.0) / T


# ---- Kernel learners (smml.kernels) ---------------------------------------------

def _unit_max(v):
    """(v / max |v|, max |v|), (v, 0) when v is zero: norms and quadratic forms of the first
    neither overflow nor underflow (u = 1e200 gave nan, u = 1e-200 gave 0)."""
    s = float(np.max(np.abs(v))) if v.size else 0.0
    return (v / s if s > 0 else v), s


def _kernel_data(K: ArrayLike, y: ArrayLike, coef: ArrayLike) -> tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float, float]:
    """(K, y, coef, c, s, c^T K c) checked, with (c, s) = :func:`_unit_max` (coef): ||g||_K = s sqrt(c^T K c)."""
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    coef = np.asarray(coef, dtype=float)
    m = y.shape[0] if y.ndim == 1 else -1
    if K.shape != (m, m) or coef.shape != (m,) or m == 0:
        raise ValueError(f"need the Gram matrix K (m, m), y (m,) and coef (m,); got shapes {K.shape}, "
                         f"{y.shape}, {coef.shape}")
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(coef))):
        raise ValueError("K and coef must be finite")
    if not np.all((y == 1) | (y == -1)):
        raise ValueError("y must hold labels in {-1, +1}")
    c, s = _unit_max(coef)
    n2 = float(c @ K @ c)
    if n2 < 0:
        raise ValueError(f"coef^T K coef = {n2:g} (coef scaled to max |coef| = 1) < 0: K is not positive "
                         "semidefinite")
    return K, y, coef, c, s, n2


def kernel_perceptron_convergence_bound(K: ArrayLike, y: ArrayLike, coef: ArrayLike) -> float:
    """||g||_K^2 max_t K(x_t, x_t) for the margin-1 rescaling of a separating g (003 section 11).

    003, "mistake bound of the Perceptron convergence theorem when run with a
    kernel K": the kernel Perceptron makes at most ||g||_K^2 max_t K(x_t, x_t)
    mistakes on a training set for any g in H_K with y_t g(x_t) >= 1 for all t.
    A g that separates (gamma = min_t y_t g(x_t) > 0) rescaled to g / gamma has
    margin 1, so the value returned is (||g||_K^2 / gamma^2) max_t K(x_t, x_t).
    ``K`` is the Gram matrix of the training points, g = sum_s coef_s K(x_s, .).

    Parameters
    ----------
    K : array-like of shape (m, m)
        The Gram matrix K_st = K(x_s, x_t) of the points.
    y : array-like of shape (m,)
        Their labels, in {-1, +1}.
    coef : array-like of shape (m,)
        The expansion g = sum_s coef_s K(x_s, .) of the predictor g.

    Returns
    -------
    float
        (||g||_K^2 / gamma^2) max_t K(x_t, x_t).

    See Also
    --------
    perceptron_convergence_bound : the same bound without a kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import kernel_perceptron_convergence_bound
    >>> X = np.array([[2., 1.], [1., 2.], [-1., -2.], [-2., -1.]])
    >>> y = np.array([1, 1, -1, -1])
    >>> K = X @ X.T                                  # the linear kernel
    >>> coef = np.array([1/6, 1/6, 0., 0.])          # g(x) = (x_1 + x_2) / 2, margin 1.5
    >>> round(kernel_perceptron_convergence_bound(K, y, coef), 4)
    1.1111
    """
    # the value does not depend on g's scale: computed for c = coef / max |coef|
    K, y, _, coef, _, norm2 = _kernel_data(K, y, coef)
    gamma = float(np.min(y * (K @ coef)))
    if not gamma > 0:
        raise ValueError(f"g does not separate the data: its margin min_t y_t g(x_t) is {gamma:g} <= 0")
    return norm2 / gamma / gamma * float(np.max(np.diag(K)))      # a tiny margin: inf, not ZeroDivisionError


def kernel_perceptron_mistake_bound(K: ArrayLike, y: ArrayLike, coef: ArrayLike) -> float:
    """Mistakes of the kernel Perceptron on the stream (x_t, y_t), any g in H_K (003 section 11).

    M <= sum_t h_t(g) + (||g||_K X)^2 + ||g||_K X sqrt(sum_t h_t(g)), with the hinge
    loss h_t(g) = [1 - y_t g(x_t)]_+ and X = max_t sqrt(K(x_t, x_t)) (the largest
    norm ||phi_K(x_t)||_K). ``K`` is the Gram matrix of the stream's points.

    Parameters
    ----------
    K : array-like of shape (m, m)
        The Gram matrix K_st = K(x_s, x_t) of the points.
    y : array-like of shape (m,)
        Their labels, in {-1, +1}.
    coef : array-like of shape (m,)
        The expansion g = sum_s coef_s K(x_s, .) of the predictor g.

    Returns
    -------
    float
        The bound on the number M of mistakes.

    See Also
    --------
    perceptron_mistake_bound : the same bound without a kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import kernel_perceptron_mistake_bound
    >>> X = np.array([[2., 1.], [1., 2.], [-1., -2.], [-2., -1.]])
    >>> y = np.array([1, 1, -1, -1])
    >>> K = X @ X.T                                  # the linear kernel
    >>> round(kernel_perceptron_mistake_bound(K, y, np.array([1/9, 1/9, 0., 0.])), 4)   # margin 1
    1.1111
    >>> round(kernel_perceptron_mistake_bound(K, y, np.array([1/6, 1/6, 0., 0.])), 4)
    2.5
    """
    K, y, coef, _, s, n2 = _kernel_data(K, y, coef)
    H = float(np.sum(np.maximum(0.0, 1.0 - y * (K @ coef))))
    R = math.sqrt(max(0.0, float(np.max(np.diag(K)))))
    nu = s * math.sqrt(n2)
    return H + (nu * R) * (nu * R) + nu * R * math.sqrt(H)     # (x * x: inf, not OverflowError)
