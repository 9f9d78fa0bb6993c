"""Bayes optimal predictors and risks, and consistent surrogate losses (000 "Bayes optimal
predictor"; 003 sections 4, 15)."""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from smml._typing import ArrayLike, LossLike, NDArray

from smml.bounds._checks import _check_pos


_BAYES_LOSSES = ("zero_one", "square", "logistic")


def _check_loss_name(loss):
    if loss not in _BAYES_LOSSES:
        raise ValueError(f"loss must be one of {_BAYES_LOSSES}, got {loss!r}")


def _check_base(base):
    if isinstance(base, bool) or not isinstance(base, numbers.Real) or not math.isfinite(base) \
            or base <= 0 or base == 1:
        raise ValueError(f"base must be a positive real number other than 1 (2 or math.e), got {base!r}")


def _conditional(eta, X, y_values, p_y):
    """(labels (k,), P(Y = labels_j | X = x_i) as (n, k)) from eta or (y_values, p_y)."""
    if (eta is None) == (p_y is None):
        raise ValueError("pass exactly one of eta (P(Y = +1 | X = x), binary labels -1/+1) or "
                         "p_y (P(Y = y_values[j] | X = x_i)) with y_values")
    if eta is not None:
        if y_values is not None:
            raise ValueError("y_values goes with p_y; with eta the labels are -1 and +1")
        if callable(eta):
            if X is None:
                raise ValueError("eta is a function: pass the points X where to evaluate it")
            eta = eta(X)
        elif X is not None:
            raise ValueError("X is only used when eta is a function")
        e = np.asarray(eta, dtype=float).reshape(-1)
        if e.size == 0 or not np.all(np.isfinite(e)) or np.any(e < 0) or np.any(e > 1):
            raise ValueError("eta must be a non-empty sequence of probabilities in [0, 1]")
        return np.array([-1.0, 1.0]), np.column_stack([1.0 - e, e])
    if y_values is None:
        raise ValueError("p_y needs y_values, the labels its columns refer to")
    yv = np.asarray(y_values, dtype=float).reshape(-1)
    P = np.asarray(p_y, dtype=float)
    if P.ndim == 1:
        P = P[None, :]
    if P.ndim != 2 or P.shape[1] != yv.size or P.shape[0] == 0 or yv.size == 0:
        raise ValueError(f"p_y must be (n_points, {yv.size}) for {yv.size} y_values, got shape {np.shape(p_y)}")
    if not (np.all(np.isfinite(yv)) and np.all(np.isfinite(P))) or np.any(P < 0) \
            or not np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("every row of p_y must be a probability vector (non-negative, summing to 1) "
                         "and y_values finite")
    if len(np.unique(yv)) != yv.size:
        raise ValueError("y_values must be distinct")
    order = np.argsort(yv)
    return yv[order], P[:, order]


def _point_weights(p_x, n):
    if p_x is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(p_x, dtype=float).reshape(-1)
    if w.size != n or not np.all(np.isfinite(w)) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"p_x must hold {n} non-negative probabilities summing to 1")
    return w


def _binary_eta(labels, P, loss):
    if labels.size != 2 or labels[0] != -1.0 or labels[1] != 1.0:
        raise ValueError(f"the {loss} loss needs binary labels -1 and +1 (pass eta)")
    return P[:, 1]


def bayes_optimal_predictor(loss: Literal["zero_one", "square", "logistic"] = "zero_one",
                            eta: ArrayLike | Callable[..., Any] | None = None, *, X: ArrayLike | None = None,
                            y_values: ArrayLike | None = None, p_y: ArrayLike | None = None) -> NDArray[Any]:
    """f*(x) = argmin_{y_hat} E[l(Y, y_hat) | X = x] on given points x (000; 003 sections 4, 15).

    The distribution of Y given X = x is passed for a finite set of points x_1..x_n (or
    for sample points, see :func:`bayes_risk`), either as

    - ``eta``: eta(x_i) = P(Y = +1 | X = x_i) for labels in {-1, +1} (a sequence, or a
      function applied to the points ``X``), or
    - ``y_values`` (k distinct reals) and ``p_y`` (n, k): p_y[i, j] = P(Y = y_values[j] | X = x_i).

    Losses (000 "Bayes optimal predictor"; 003 sections 4 and 15):

    - ``"zero_one"``: f*(x) = -1 if eta(x) < 1/2, +1 if eta(x) >= 1/2 (the notes' rule: a
      tie eta = 1/2 goes to +1). With ``p_y``: the most probable label, a tie going to the
      largest label (+1 for labels -1, +1, as the binary rule).
    - ``"square"``: f*(x) = E[Y | X = x] (2 eta(x) - 1 for labels -1, +1).
    - ``"logistic"`` (binary): the log-odds g*(x) = ln(eta(x) / (1 - eta(x))), with -inf / +inf
      where eta is 0 / 1; sgn(g*) is the zero-one f* (003 section 15).

    Returns an array with f*(x_i) for each point.

    Parameters
    ----------
    loss : {"zero_one", "square", "logistic"}, default="zero_one"
        The loss whose Bayes optimal predictor is computed.
    eta : array-like of shape (n,) or callable, optional
        eta(x_i) = P(Y = +1 | X = x_i), or a function returning it for the points ``X``.
        Pass it or ``p_y``, not both.
    X : array-like, optional
        The points where the function ``eta`` is evaluated (only with a callable ``eta``).
    y_values : array-like of shape (k,), optional
        The labels the columns of ``p_y`` refer to.
    p_y : array-like of shape (n, k), optional
        p_y[i, j] = P(Y = y_values[j] | X = x_i).

    Returns
    -------
    ndarray of shape (n,)
        f*(x_i) for each point.

    See Also
    --------
    bayes_risk : the risk of this predictor.

    Examples
    --------
    >>> from smml.bounds import bayes_optimal_predictor
    >>> bayes_optimal_predictor("zero_one", eta=[0.2, 0.5, 0.9]).tolist()   # a tie goes to +1
    [-1.0, 1.0, 1.0]
    >>> [round(v, 3) for v in bayes_optimal_predictor("square", eta=[0.2, 0.5, 0.9]).tolist()]
    [-0.6, 0.0, 0.8]
    """
    _check_loss_name(loss)
    labels, P = _conditional(eta, X, y_values, p_y)
    if loss == "zero_one":
        if labels.size == 2:        # binary: the notes' threshold, computed from eta itself
            return np.where(P[:, 1] >= 0.5, labels[1], labels[0])
        k = labels.size - 1 - np.argmax(P[:, ::-1], axis=1)     # the largest label among the tied
        return labels[k]
    if loss == "square":
        return P @ labels
    e = _binary_eta(labels, P, loss)
    with np.errstate(divide="ignore"):
        return np.log(e) - np.log1p(-e)


def bayes_risk(loss: Literal["zero_one", "square", "logistic"] = "zero_one",
               eta: ArrayLike | Callable[..., Any] | None = None, *, X: ArrayLike | None = None,
               p_x: ArrayLike | None = None, y_values: ArrayLike | None = None, p_y: ArrayLike | None = None,
               base: float = 2) -> float:
    """The Bayes risk l_D(f*) = E[min_{y_hat} E[l(Y, y_hat) | X]] (000; 003 sections 4, 15).

    The conditional distribution of Y is given as in :func:`bayes_optimal_predictor`;
    ``p_x`` gives the probabilities of the points x_1..x_n (a finite X). With ``p_x=None``
    every point has weight 1/n: pass points X_1..X_n drawn from D_X and the result is the
    sample mean, an unbiased estimate of the Bayes risk (e.g. ``eta`` a function and ``X``
    the sample).

    - ``"zero_one"``: E[min(eta(X), 1 - eta(X))] (000, 003 section 4); with ``p_y``,
      E[1 - max_j p_y(X)].
    - ``"square"``: E[Var(Y | X)] (000: the expected conditional variance;
      4 eta (1 - eta) for labels -1, +1).
    - ``"logistic"`` (binary): H(Y | X) = E[-eta log eta - (1 - eta) log(1 - eta)], the
      conditional entropy, for the loss log_base(1 + e^{-y y_hat}); ``base=2`` is 003 section
      15's log2 (bits), ``base=math.e`` the natural-log loss of 002 and ``smml.losses.logistic``.

    Parameters
    ----------
    loss : {"zero_one", "square", "logistic"}, default="zero_one"
        The loss.
    eta : array-like of shape (n,) or callable, optional
        eta(x_i) = P(Y = +1 | X = x_i), or a function returning it for the points ``X``.
        Pass it or ``p_y``, not both.
    X : array-like, optional
        The points where the function ``eta`` is evaluated (only with a callable ``eta``).
    p_x : array-like of shape (n,), optional
        The probabilities of the points; None for weight 1/n each.
    y_values : array-like of shape (k,), optional
        The labels the columns of ``p_y`` refer to.
    p_y : array-like of shape (n, k), optional
        p_y[i, j] = P(Y = y_values[j] | X = x_i).
    base : float > 0, not 1, default=2
        The base of the logarithm of the logistic loss.

    Returns
    -------
    float
        The Bayes risk (or its sample-mean estimate).

    See Also
    --------
    bayes_optimal_predictor : f* itself.

    Examples
    --------
    >>> from smml.bounds import bayes_risk
    >>> round(bayes_risk("zero_one", eta=[0.2, 0.5, 0.9]), 4)     # mean of 0.2, 0.5, 0.1
    0.2667
    >>> bayes_risk("logistic", eta=[0.5])                          # one bit of entropy
    1.0
    """
    _check_loss_name(loss)
    labels, P = _conditional(eta, X, y_values, p_y)
    w = _point_weights(p_x, P.shape[0])
    if loss == "zero_one":
        if labels.size == 2:
            cond = np.minimum(P[:, 0], P[:, 1])
        else:
            cond = 1.0 - P.max(axis=1)
    elif loss == "square":
        mean = P @ labels
        cond = np.einsum("ij,ij->i", P, (labels[None, :] - mean[:, None]) ** 2)
    else:
        _check_base(base)
        e = _binary_eta(labels, P, loss)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -(np.where(e > 0, e * np.log(e), 0.0) + np.where(e < 1, (1 - e) * np.log1p(-e), 0.0))
        cond = h / math.log(base)
    return float(w @ cond)


_MARGIN_SLOPES = {"hinge": -1.0, "exponential": -1.0, "square": -2.0}


def surrogate_consistency_condition(loss: LossLike, base: float = math.e,
                                    h: float = 1e-6) -> tuple[bool, dict[int, float | None]]:
    """003 section 15's sufficient condition for a consistent surrogate loss: l'(y, 0) < 0.

    "If a surrogate loss l: {-1, 1} x R -> R is such that for all y in {-1, 1} the derivative
    l'(y, 0) exists and satisfies l'(y, 0) < 0, then l is consistent" (for the convex
    surrogates of that section). l'(y, 0) is the derivative in the margin: of
    z -> l(y, y z) at z = 0, i.e. y d/dy_hat l(y, y_hat) at y_hat = 0 (with the derivative
    in y_hat itself the hinge loss would fail the condition at y = -1, yet it is consistent).

    ``loss``: a name - "hinge" (slope -1), "logistic" (-1/(2 ln base); ``base`` as in
    :func:`smml.losses.logistic`), "exponential" (-1), "square" ((y - y_hat)^2 on labels
    -1, +1: -2), "zero_one" (I{y_hat != y}, a step: the derivative is 0, the condition
    fails) - or a callable ``loss(y, y_pred)`` (vectorised, as ``smml.losses``), whose
    derivative is estimated by one-sided difference quotients with step ``h``: it "exists"
    when the two sides agree to 1e-4 relative (a numerical check, not a proof).

    Returns ``(holds, slopes)``: whether the condition holds, and {-1: l'(-1, 0), +1: l'(+1, 0)}
    (``None`` where no derivative exists). ``holds=False`` only says that this sufficient
    condition fails, not that the loss is inconsistent.

    Parameters
    ----------
    loss : str or callable
        A loss name ("hinge", "logistic", "exponential", "square", "zero_one") or a
        callable ``loss(y, y_pred)``.
    base : float > 0, not 1, default=math.e
        The base of the logarithm of the logistic loss.
    h : float > 0, default=1e-6
        The step of the difference quotients for a callable loss.

    Returns
    -------
    holds : bool
        Whether l'(y, 0) < 0 for both labels.
    slopes : dict
        {-1: l'(-1, 0), +1: l'(+1, 0)}, None where no derivative exists.

    Examples
    --------
    >>> from smml.bounds import surrogate_consistency_condition
    >>> surrogate_consistency_condition("hinge")
    (True, {-1: -1.0, 1: -1.0})
    >>> surrogate_consistency_condition("zero_one")[0]
    False
    """
    slopes: dict[int, float | None]
    if isinstance(loss, str):
        if loss in _MARGIN_SLOPES:
            s = _MARGIN_SLOPES[loss]
            slopes = {-1: s, 1: s}
        elif loss == "logistic":
            _check_base(base)
            s = -0.5 / math.log(base)
            slopes = {-1: s, 1: s}
        elif loss == "zero_one":
            slopes = {-1: 0.0, 1: 0.0}
        else:
            raise ValueError("loss must be 'hinge', 'logistic', 'exponential', 'square', 'zero_one' or a "
                             f"callable loss(y, y_pred), got {loss!r}")
    elif callable(loss):
        _check_pos("h", h)
        slopes = {}
        for y in (-1, 1):
            z = np.array([-h, 0.0, h])
            v = np.asarray(loss(np.full(3, float(y)), y * z), dtype=float).reshape(-1)
            if v.shape != (3,) or not np.all(np.isfinite(v)):
                raise ValueError("the loss must return 3 finite values for 3 examples")
            left, right = (v[1] - v[0]) / h, (v[2] - v[1]) / h
            ok = abs(left - right) <= 1e-4 * max(1.0, abs(left), abs(right))
            slopes[y] = 0.5 * (left + right) if ok else None
    else:
        raise ValueError(f"loss must be a name or a callable loss(y, y_pred), got {loss!r}")
    holds = all(s is not None and s < 0 for s in slopes.values())
    return holds, slopes
