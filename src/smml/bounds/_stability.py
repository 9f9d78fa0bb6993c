"""Stability of regularised ERM and the SVM's consistent regularisation (003 section 13)."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from smml._typing import ArrayLike, Estimator, LossLike, RandomStateLike
from smml._validation import check_positive_int as _check_positive_int

from smml.bounds._checks import _check_pos


def svm_stability_bound(lam: float, m: int, L: float | None = None, X_norm: float | None = None) -> float:
    """epsilon = (2L)^2 / (lam m): the stability of regularised ERM, e.g. the SVM (003 section 13).

    003 section 13: if l(., z) is convex and L-Lipschitz, A(S) = argmin_w l_S(w) + lam/2 ||w||^2
    is (2L)^2 / (lam m)-stable for every lam > 0: E[l(h_{S^(t)}, Z_t) - l(h_S, Z_t)] <= epsilon
    for every t. For the SVM (hinge loss) L = X, the radius of the ball holding the data
    points, so epsilon = 4 X^2 / (lam m). Pass ``L`` or ``X_norm`` (= max_t ||x_t||).

    Parameters
    ----------
    lam : float > 0
        The regularisation coefficient lambda.
    m : int >= 1
        The training-set size.
    L : float > 0, optional
        The Lipschitz constant of the loss; pass it or ``X_norm``, not both.
    X_norm : float > 0, optional
        max_t ||x_t|| (the SVM: L = X); pass it or ``L``, not both.

    Returns
    -------
    float
        (2L)^2 / (lam m).

    See Also
    --------
    empirical_stability : a Monte-Carlo estimate to compare with.

    Examples
    --------
    >>> from smml.bounds import svm_stability_bound
    >>> round(svm_stability_bound(0.1, 1000, X_norm=1.0), 4)     # 4 X^2 / (lam m)
    0.04
    """
    _check_pos("lam", lam)
    _check_positive_int("m", m)
    if (L is None) == (X_norm is None):
        raise ValueError("pass exactly one of L (the Lipschitz constant) or X_norm (for the SVM, L = X)")
    L = X_norm if L is None else L
    _check_pos("L" if X_norm is None else "X_norm", L)
    L2 = 2.0 * cast(float, L)
    return L2 * L2 / (lam * m)        # a float product: inf past float64 (** raised OverflowError)


def svm_consistent_lambda(m: int, exponent: float = 0.25, scale: float = 1.0) -> float:
    """lam_m = scale * m^(-exponent): a regularisation schedule that makes the Gaussian-kernel SVM consistent.

    003 section 13 ("the mathematical conditions on the regularization coefficient
    lambda ensuring consistency for the SVM algorithm with Gaussian kernel"): with
    lambda chosen as a function lam_m of the training-set size m, the SVM with a
    Gaussian kernel is consistent if, as m -> infinity,

        lam_m = o(1)   and   lam_m = omega(m^(-1/2)),

    i.e. lam_m -> 0 and lam_m sqrt(m) -> infinity. The notes give the conditions, not
    a schedule; lam_m = scale m^(-exponent) meets both exactly when
    0 < exponent < 1/2 (lam_m sqrt(m) = scale m^(1/2 - exponent)), which is checked.
    The default exponent 1/4 is the middle of that range: lam_m tends to 0 and
    lam_m sqrt(m) to infinity at the same rate m^(1/4). With it the stability of
    :func:`svm_stability_bound` is epsilon = 4 X^2 / (lam_m m) = (4 X^2 / scale)
    m^(exponent - 1) -> 0 (X = 1 for the Gaussian kernel, K(x, x) = 1). The notes
    keep the kernel's width gamma fixed: so does this schedule. Use it as
    ``KernelSVC(kernel="gaussian", gamma=..., lam=svm_consistent_lambda(m),
    fit_intercept=False)``: 003's lam and 003's SVM, without a bias (C = 1 / (lam m)
    in libsvm's form).

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    exponent : float in (0, 1/2), default=0.25
        The rate at which lam_m decreases.
    scale : float > 0, default=1.0
        lam_1; the conditions hold for any positive scale, which the notes leave
        free: it sets lam at a given m (tune it, e.g. by CV, on the problem at hand).

    Returns
    -------
    float
        lam_m = scale * m^(-exponent).

    Examples
    --------
    >>> from smml.bounds import svm_consistent_lambda
    >>> svm_consistent_lambda(10_000)             # 10000^(-1/4)
    0.1
    >>> svm_consistent_lambda(10_000, exponent=0.4, scale=2.0) < svm_consistent_lambda(10_000)
    True
    """
    _check_positive_int("m", m)
    if isinstance(exponent, bool) or not isinstance(exponent, numbers.Real) or not 0 < exponent < 0.5:
        raise ValueError("exponent must be in (0, 1/2): lam_m = m^(-exponent) is o(1) only for exponent > 0 "
                         f"and omega(m^(-1/2)) only for exponent < 1/2; got {exponent!r}")
    _check_pos("scale", scale)
    return float(scale) * float(m) ** (-float(exponent))


@dataclass
class StabilityEstimate:
    """Outcome of :func:`empirical_stability`.

    A dataclass: each parameter is also the attribute of the same name.

    Parameters
    ----------
    epsilon : float
        The estimate of E[l(h_{S^(t)}, Z_t) - l(h_S, Z_t)]: the mean of ``differences``.
    std_error : float
        The standard error of that mean, std(differences) / sqrt(n_draws) (0 for one draw).
    differences : ndarray of shape (n_draws,)
        l(h_{S^(t)}, Z_t) - l(h_S, Z_t) for each draw.
    m : int
        The training-set size.
    train_indices : ndarray of shape (n_draws, m)
        The rows of (X, y) forming S in each draw.
    t : ndarray of shape (n_draws,)
        The position in S of the replaced example Z_t (its row is ``train_indices[i, t[i]]``).
    replacement : ndarray of shape (n_draws,)
        The row of (X, y) of the new example Z'_t.

    See Also
    --------
    empirical_stability : the function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import StabilityEstimate
    >>> d = np.array([0.02, 0.04])
    >>> est = StabilityEstimate(epsilon=float(d.mean()), std_error=0.01, differences=d, m=3,
    ...                         train_indices=np.array([[0, 1, 2], [1, 2, 3]]), t=np.array([0, 2]),
    ...                         replacement=np.array([4, 0]))
    >>> round(est.epsilon, 3), est.train_indices.shape
    (0.03, (2, 3))
    """
    epsilon: float
    std_error: float
    differences: np.ndarray
    m: int
    train_indices: np.ndarray
    t: np.ndarray
    replacement: np.ndarray


_MARGIN_LOSS_NAMES = ("hinge", "logistic", "exponential")


def _is_margin_loss(loss):
    from smml import losses as _losses

    if isinstance(loss, str):
        return loss in _MARGIN_LOSS_NAMES
    fn = getattr(loss, "func", loss)                 # functools.partial(logistic, base=2)
    return any(fn is getattr(_losses, name) for name in _MARGIN_LOSS_NAMES)


def empirical_stability(estimator: Estimator, X: ArrayLike, y: ArrayLike, loss: LossLike = "hinge", n_draws: int = 20,
                        m: int | None = None,
                        method: Literal["auto", "predict", "decision_function", "predict_proba"] = "auto",
                        random_state: RandomStateLike = None) -> StabilityEstimate:
    """Monte-Carlo estimate of the epsilon of epsilon-stability: refit with one example replaced.

    003 section 13 ("the definition of epsilon-stability"): A is epsilon-stable for
    training sets of size m if E[l(h_{S^(t)}, Z_t) - l(h_S, Z_t)] <= epsilon for every
    t, where h_S = A(S), S = (Z_1, ..., Z_m) is drawn i.i.d. from D and S^(t) is S with
    Z_t replaced by an independent Z'_t from D. The expectation is over S and Z'_t.
    Compare the estimate with :func:`svm_stability_bound`, which 003 proves for
    A(S) = argmin_w l_S(w) + lam/2 ||w||^2 with l(., z) convex and L-Lipschitz
    (e.g. the SVM, L = X, the radius of the data).

    (X, y) is used as a pool of examples drawn i.i.d. from D. Each draw takes m + 1
    distinct rows at random (the first m are S, the last is Z'_t; rows picked without
    replacement from an i.i.d. pool are again i.i.d. from D), a position t uniformly in
    1..m, fits clones (``sklearn.base.clone``) of ``estimator`` on S and on S^(t), and
    records l(h_{S^(t)}, Z_t) - l(h_S, Z_t); the estimate is the mean over the
    ``n_draws`` draws, an unbiased estimate of the expectation above (the draws share
    rows of the pool, so ``std_error`` is only indicative). The definition's
    expectation is the same for every t, so drawing t is no restriction.

    What is compared is the algorithm as run: a learner that only approximates the
    argmin (Pegasos, a loose ``tol``) or derives hyper-parameters from its training
    set (``gamma="scale"``, an unpenalised intercept) is not exactly the algorithm of
    003's theorem.

    Parameters
    ----------
    estimator : estimator
        The learner A (unfitted; cloned for each fit).
    X : array-like of shape (n, d)
        The pool of examples, n >= m + 1.
    y : array-like of shape (n,)
        Their labels. With a margin loss and ``method="decision_function"`` the labels
        are mapped to -1 / +1 as the classifiers do (the larger of the two labels is +1).
    loss : str or callable, default="hinge"
        A name of :data:`smml.losses.LOSSES` or ``loss(y, y_pred)`` returning per-example
        losses; the loss of the theorem (the hinge loss of the SVM on g(x), not the
        zero-one loss of its sign).
    n_draws : int >= 1, default=20
        The number of (S, t, Z'_t) draws; each costs two fits.
    m : None or int >= 1, default=None
        The training-set size; None for n - 1 (all the pool but the replacement).
    method : {"auto", "predict", "decision_function", "predict_proba"}, default="auto"
        What the loss is applied to. "auto": ``decision_function`` for a margin loss
        (hinge, logistic, exponential) when the estimator has it, else ``predict``.
    random_state : int, RandomState instance or None
        Seeds the draws.

    Returns
    -------
    StabilityEstimate
        The estimate, its standard error, the per-draw differences and the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import empirical_stability, svm_stability_bound
    >>> from smml.kernels import KernelSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.standard_normal(200) > 0, 1, -1)
    >>> svm = KernelSVC(C=1 / (0.5 * 40), kernel="rbf", gamma=0.5, fit_intercept=False, tol=1e-6)
    >>> est = empirical_stability(svm, X, y, loss="hinge", n_draws=10, m=40, random_state=0)
    >>> bool(est.epsilon <= svm_stability_bound(0.5, 40, X_norm=1.0))   # K(x, x) = 1: X = 1
    True
    """
    from sklearn.base import clone

    from smml.losses import get_loss

    loss_fn = get_loss(loss)
    _check_positive_int("n_draws", n_draws)
    if method not in ("auto", "predict", "decision_function", "predict_proba"):
        raise ValueError(f"method must be 'auto', 'predict', 'decision_function' or 'predict_proba', got {method!r}")
    y_arr = np.asarray(y)
    if y_arr.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y_arr.shape}")
    n = y_arr.shape[0]
    if hasattr(X, "iloc"):
        X = cast(Any, X).to_numpy()
    X_arr = np.asarray(X)
    if X_arr.shape[0] != n:
        raise ValueError(f"X and y have different numbers of rows: {X_arr.shape[0]} != {n}")
    if m is None:
        m = n - 1
    _check_positive_int("m", m)
    if m + 1 > n:
        raise ValueError(f"a draw needs m + 1 = {m + 1} distinct examples, the pool has {n}")
    if method == "auto":
        method = "decision_function" if _is_margin_loss(loss) and hasattr(estimator, "decision_function") \
            else "predict"
    y_loss = y_arr
    if method == "decision_function" and _is_margin_loss(loss):
        labels = np.unique(y_arr)
        if labels.size == 2:
            y_loss = np.where(y_arr == labels[1], 1.0, -1.0)

    def _output(est, x):
        out = getattr(est, method)(x)
        if method == "predict_proba":
            out = np.asarray(out)
            if out.ndim != 2 or out.shape[1] != 2:
                raise ValueError("method='predict_proba' is supported for binary problems only")
            out = out[:, 1]
        return np.asarray(out).reshape(-1)

    def _loss(target, pred):
        v = np.asarray(loss_fn(np.asarray([target]), pred), dtype=np.float64).reshape(-1)
        if v.shape != (1,):
            raise ValueError(f"the loss must return one value per example, got shape {v.shape}")
        return float(v[0])

    from smml._validation import check_random_state

    rs = check_random_state(random_state)
    diffs = np.empty(n_draws)
    train = np.empty((n_draws, m), dtype=np.intp)
    ts = np.empty(n_draws, dtype=np.intp)
    repl = np.empty(n_draws, dtype=np.intp)
    for i in range(n_draws):
        rows = rs.choice(n, size=m + 1, replace=False)
        S, z_new = rows[:m], rows[m]
        t = int(rs.randint(m))
        S_t = S.copy()
        S_t[t] = z_new
        z = S[t]
        x_t = X_arr[z:z + 1]
        h_S = clone(estimator).fit(X_arr[S], y_arr[S])
        h_St = clone(estimator).fit(X_arr[S_t], y_arr[S_t])
        diffs[i] = _loss(y_loss[z], _output(h_St, x_t)) - _loss(y_loss[z], _output(h_S, x_t))
        train[i], ts[i], repl[i] = S, t, z_new
    se = float(np.std(diffs, ddof=1) / math.sqrt(n_draws)) if n_draws > 1 else 0.0
    return StabilityEstimate(epsilon=float(np.mean(diffs)), std_error=se, differences=diffs, m=int(m),
                             train_indices=train, t=ts, replacement=repl)
