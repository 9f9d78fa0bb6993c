"""Every loss of the course notes, as a vectorised function ``loss(y, y_pred)``.

Each function takes the true labels ``y`` and the predictions ``y_pred`` (two
1-d sequences of the same, non-zero length) and returns the per-example losses
``l(y_t, y_pred_t)`` as a float64 numpy array; the mean of that array is the
empirical risk (see :func:`smml.model_selection.empirical_risk`).

Sources: 000, "Loss functions" (zero-one, cost-sensitive, absolute, square,
logarithmic); 003, sections 10 and 12 (hinge), 15 (logistic, base 2; and the
surrogate losses of SVM and AdaBoost); 002, "Logistic loss" (natural log) and
the AdaBoost slides (exponential loss). Margin losses (hinge, logistic,
exponential) take labels in {-1, +1} and a real-valued prediction.

Bad input (different lengths, not 1-d, empty, NaN/inf, labels outside the
loss's label set, predictions outside its domain) raises a ``ValueError`` that
names the problem.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from smml._typing import ArrayLike, LossFunction, LossLike, NDArray

__all__ = ["zero_one", "cost_sensitive", "absolute", "square", "logarithmic",
           "hinge", "logistic", "exponential", "LOSSES", "get_loss"]


# ---- input checks -------------------------------------------------------------

def _as_1d(name: str, a: ArrayLike) -> NDArray[Any]:
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got an array of shape {a.shape}")
    return a


def _pair(y: ArrayLike, y_pred: ArrayLike, numeric: bool = True) -> tuple[NDArray[Any], NDArray[Any]]:
    """Check shapes (and finiteness for numeric losses); return two arrays."""
    y = _as_1d("y", y)
    y_pred = _as_1d("y_pred", y_pred)
    if y.shape[0] != y_pred.shape[0]:
        raise ValueError(f"y and y_pred have different lengths: {y.shape[0]} != {y_pred.shape[0]}")
    if y.shape[0] == 0:
        raise ValueError("y and y_pred are empty: a loss needs at least one example")
    if numeric:
        y = _to_float("y", y)
        y_pred = _to_float("y_pred", y_pred)
    return y, y_pred


def _to_float(name: str, a: NDArray[Any]) -> NDArray[np.float64]:
    if a.dtype.kind not in "biuf":
        try:
            a = a.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numeric for this loss, got dtype {a.dtype}") from None
    a = np.asarray(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity")
    return a


def _check_finite_if_numeric(name, a):
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity")
    if a.dtype.kind == "O":
        for v in a:
            if isinstance(v, numbers.Real) and not isinstance(v, bool) and not math.isfinite(v):
                raise ValueError(f"{name} contains NaN or infinity")


def _check_margin_labels(y):
    bad = (y != 1.0) & (y != -1.0)
    if np.any(bad):
        vals = np.unique(y[bad])[:5]
        raise ValueError(
            f"margin losses need labels y in {{-1, +1}}; y contains {vals.tolist()}"
            " (encode a binary problem as -1/+1 first)")


# ---- losses of 000, "Loss functions" -----------------------------------------

def zero_one(y: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Zero-one loss: 0 if ``y_pred == y``, 1 otherwise.

    000, "Loss functions". Labels may be of any type (numbers, strings, ...);
    numeric labels must be finite.

    Parameters
    ----------
    y : 1-d array-like
        True labels.
    y_pred : 1-d array-like
        Predicted labels, of the same length as ``y``.

    Returns
    -------
    ndarray of shape (n,), float64
        The per-example losses, 0.0 or 1.0.

    See Also
    --------
    sklearn.metrics.zero_one_loss : The mean (or count) of these losses.

    Examples
    --------
    >>> from smml.losses import zero_one
    >>> print(zero_one([0, 1, 2], [0, 2, 2]).tolist())
    [0.0, 1.0, 0.0]
    >>> print(zero_one(["a", "b"], ["a", "a"]).tolist())
    [0.0, 1.0]
    """
    y, y_pred = _pair(y, y_pred, numeric=False)
    _check_finite_if_numeric("y", y)
    _check_finite_if_numeric("y_pred", y_pred)
    num = "biuf"
    if (y.dtype.kind in num) == (y_pred.dtype.kind in num) and y.dtype.kind != "O" \
            and y_pred.dtype.kind != "O":
        ne = y != y_pred
    else:  # mixed kinds (e.g. str vs int): compare element by element as Python objects
        ne = np.fromiter((a != b for a, b in zip(y.tolist(), y_pred.tolist())), dtype=bool,
                         count=y.shape[0])
    return np.asarray(ne, dtype=np.float64)


def _cost_table(cost, labels):
    """(labels list, (L, L) float64 matrix) from a matrix + labels or a dict of dicts."""
    if isinstance(cost, dict):
        if labels is None:
            seen = []
            for a, row in cost.items():
                if not isinstance(row, dict):
                    raise ValueError("cost as a dict must map each true label to a dict "
                                     "{predicted label: cost}")
                for b in (a, *row.keys()):
                    if b not in seen:
                        seen.append(b)
            labels = seen
        labels = list(labels)
        L = len(labels)
        C = np.zeros((L, L))
        for i, a in enumerate(labels):
            row = cost.get(a, {})
            for j, b in enumerate(labels):
                if b in row:
                    C[i, j] = row[b]
                elif i != j:
                    raise ValueError(f"cost has no entry for true label {a!r} predicted as {b!r}"
                                     " (only the diagonal l(y, y) = 0 may be left out)")
    else:
        C = np.asarray(cost)
        if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] == 0:
            raise ValueError(f"cost must be a square (L, L) matrix, got shape {C.shape}")
        try:
            C = C.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("cost must contain numbers") from None
        L = C.shape[0]
        labels = list(range(L)) if labels is None else list(np.asarray(labels).tolist())
        if len(labels) != L:
            raise ValueError(f"cost is {L} x {L} but {len(labels)} labels were given")
    if len(set(labels)) != len(labels):
        raise ValueError(f"labels must be distinct, got {labels}")
    if not np.all(np.isfinite(C)):
        raise ValueError("cost contains NaN or infinity")
    if np.any(C < 0):
        raise ValueError("cost must be non-negative (000, 'Loss functions': the loss is nonnegative)")
    if np.any(np.diag(C) != 0):
        raise ValueError("cost must have a zero diagonal (000, 'Loss functions': l(y, y) = 0)")
    return labels, C


def _index_of(name, a, labels):
    index = {lab: i for i, lab in enumerate(labels)}
    out = np.empty(a.shape[0], dtype=np.intp)
    for t, v in enumerate(a.tolist()):
        i = index.get(v)
        if i is None:
            raise ValueError(f"{name} contains the label {v!r}, which is not among the cost's labels {labels}")
        out[t] = i
    return out


def cost_sensitive(y: ArrayLike, y_pred: ArrayLike, cost: ArrayLike | Mapping[Any, Mapping[Any, float]],
                   labels: Sequence[Any] | None = None) -> NDArray[np.float64]:
    """Cost-sensitive classification loss from a cost matrix.

    000, "Loss functions": ``cost[i][j]`` is the loss of predicting
    ``labels[j]`` when the true label is ``labels[i]``; as the notes require,
    the diagonal is zero (l(y, y) = 0) and every cost is non-negative. The
    spam example of the notes is ``cost_sensitive(y, y_pred, [[0, 1], [2, 0]],
    labels=["spam", "nonspam"])`` (a false positive costs 2, a false negative 1).

    Parameters
    ----------
    y, y_pred : 1-d sequences of labels.
    cost : (L, L) array-like, or dict of dicts ``{true: {predicted: cost}}``
        (diagonal entries may be omitted in a dict; they are 0).
    labels : sequence of L labels, optional
        Row/column labels of a matrix ``cost``; default ``0, ..., L-1``. With a
        dict ``cost`` the default is the labels the dict mentions.

    Returns
    -------
    ndarray of shape (n,), float64
        The per-example losses ``cost[y_t][y_pred_t]``.

    See Also
    --------
    zero_one : The special case of a cost of 1 for every mistake.

    Examples
    --------
    >>> from smml.losses import cost_sensitive
    >>> y = ["spam", "spam", "nonspam"]
    >>> y_pred = ["spam", "nonspam", "spam"]
    >>> cost = [[0, 1], [2, 0]]
    >>> print(cost_sensitive(y, y_pred, cost, labels=["spam", "nonspam"]).tolist())
    [0.0, 1.0, 2.0]
    >>> print(cost_sensitive([0, 1], [1, 0], {0: {1: 5}, 1: {0: 1}}).tolist())
    [5.0, 1.0]
    """
    labels, C = _cost_table(cost, labels)
    y, y_pred = _pair(y, y_pred, numeric=False)
    i = _index_of("y", y, labels)
    j = _index_of("y_pred", y_pred, labels)
    return C[i, j]


def absolute(y: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Absolute loss |y - y_pred|.

    000, "Loss functions" (regression).

    Parameters
    ----------
    y : 1-d array-like of float
        True values.
    y_pred : 1-d array-like of float
        Predicted values, of the same length as ``y``.

    Returns
    -------
    ndarray of shape (n,), float64
        The per-example losses.

    See Also
    --------
    sklearn.metrics.mean_absolute_error : The mean of these losses.

    Examples
    --------
    >>> from smml.losses import absolute
    >>> print(absolute([1.0, 2.0, 3.0], [1.5, 2.0, 1.0]).tolist())
    [0.5, 0.0, 2.0]
    """
    y, y_pred = _pair(y, y_pred)
    return np.abs(y - y_pred)


def square(y: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Square (quadratic) loss (y - y_pred)^2.

    000, "Loss functions" (regression).

    Parameters
    ----------
    y : 1-d array-like of float
        True values.
    y_pred : 1-d array-like of float
        Predicted values, of the same length as ``y``.

    Returns
    -------
    ndarray of shape (n,), float64
        The per-example losses.

    See Also
    --------
    sklearn.metrics.mean_squared_error : The mean of these losses.

    Examples
    --------
    >>> from smml.losses import square
    >>> print(square([1.0, 2.0, 3.0], [1.5, 2.0, 1.0]).tolist())
    [0.25, 0.0, 4.0]
    """
    y, y_pred = _pair(y, y_pred)
    d = y - y_pred
    return d * d


def logarithmic(y: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Logarithmic loss: ln(1/y_pred) if y = 1, ln(1/(1 - y_pred)) if y = 0.

    000, "Loss functions" (natural log; also 002, "Logistic loss", written
    -(1-y) log(1-y') - y log y'). Labels y in {0, 1}; the prediction is a
    probability and must lie strictly in (0, 1), where the loss is finite.

    Parameters
    ----------
    y : 1-d array-like
        True labels, each 0 or 1.
    y_pred : 1-d array-like of float
        Predicted probabilities of the label 1, each strictly in (0, 1).

    Returns
    -------
    ndarray of shape (n,), float64
        The per-example losses (natural log).

    See Also
    --------
    sklearn.metrics.log_loss : The mean of these losses.

    Examples
    --------
    >>> from smml.losses import logarithmic
    >>> loss = logarithmic([1, 0, 1], [0.5, 0.5, 0.9])
    >>> print([f"{v:.3f}" for v in loss])
    ['0.693', '0.693', '0.105']
    """
    y, y_pred = _pair(y, y_pred)
    bad = (y != 0.0) & (y != 1.0)
    if np.any(bad):
        raise ValueError(f"logarithmic loss needs labels y in {{0, 1}}; y contains "
                         f"{np.unique(y[bad])[:5].tolist()}")
    out = (y_pred <= 0.0) | (y_pred >= 1.0)
    if np.any(out):
        raise ValueError(f"logarithmic loss needs predictions strictly in (0, 1) (the loss is infinite "
                         f"at 0 and 1); y_pred contains {np.unique(y_pred[out])[:5].tolist()}")
    return np.where(y == 1.0, -np.log(y_pred), -np.log1p(-y_pred))


# ---- margin (surrogate) losses: y in {-1, +1}, real prediction -------------------

def hinge(y: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Hinge loss max(0, 1 - y y_pred), y in {-1, +1}.

    003, section 10 ("Write the formula for the hinge loss") and section 12
    (the SVM objective); the surrogate loss of SVM in section 15.

    Parameters
    ----------
    y : 1-d array-like
        True labels, each -1 or +1.
    y_pred : 1-d array-like of float
        Real-valued predictions (e.g. ``w . x``), of the same length as ``y``.

    Returns
    -------
    ndarray of shape (n,), float64
        The per-example losses.

    See Also
    --------
    sklearn.metrics.hinge_loss : The mean of these losses.

    Examples
    --------
    >>> from smml.losses import hinge
    >>> print(hinge([1, -1, 1], [2.0, 0.5, -1.0]).tolist())
    [0.0, 1.5, 2.0]
    """
    y, y_pred = _pair(y, y_pred)
    _check_margin_labels(y)
    return np.maximum(0.0, 1.0 - y * y_pred)


def logistic(y: ArrayLike, y_pred: ArrayLike, base: float = math.e) -> NDArray[np.float64]:
    """Logistic loss log_base(1 + e^{-y y_pred}), y in {-1, +1}.

    Natural log by default, as in 002 ("Logistic regression": x -> log(1 + e^{-x}));
    ``base=2`` gives the log2 version of 003, section 15. Computed stably as
    ``logaddexp(0, -y y_pred) / ln(base)`` (no overflow for large margins).

    Parameters
    ----------
    y : 1-d array-like
        True labels, each -1 or +1.
    y_pred : 1-d array-like of float
        Real-valued predictions (e.g. ``w . x``), of the same length as ``y``.
    base : float, default math.e
        Base of the logarithm: a positive real number other than 1.

    Returns
    -------
    ndarray of shape (n,), float64
        The per-example losses.

    See Also
    --------
    sklearn.metrics.log_loss : The same loss written for probabilities.

    Examples
    --------
    >>> from smml.losses import logistic
    >>> print([f"{v:.3f}" for v in logistic([1, -1], [0.0, 2.0])])
    ['0.693', '2.127']
    >>> print([f"{v:.3f}" for v in logistic([1, -1], [0.0, 2.0], base=2)])
    ['1.000', '3.069']
    """
    if isinstance(base, bool) or not isinstance(base, numbers.Real) or not math.isfinite(base) \
            or base <= 0 or base == 1:
        raise ValueError(f"base must be a positive real number other than 1 (e.g. math.e or 2), got {base!r}")
    y, y_pred = _pair(y, y_pred)
    _check_margin_labels(y)
    out = np.logaddexp(0.0, -y * y_pred)
    if base != math.e:
        out = out / math.log(base)
    return out


def exponential(y: ArrayLike, y_pred: ArrayLike) -> NDArray[np.float64]:
    """Exponential (boosting) loss e^{-y y_pred}, y in {-1, +1}.

    003, section 15 (the surrogate loss of AdaBoost) and 002, AdaBoost
    ("training error with exponential loss"). Large negative margins overflow
    to ``inf`` (numpy's usual behaviour, with a RuntimeWarning).

    Parameters
    ----------
    y : 1-d array-like
        True labels, each -1 or +1.
    y_pred : 1-d array-like of float
        Real-valued predictions (e.g. ``w . x``), of the same length as ``y``.

    Returns
    -------
    ndarray of shape (n,), float64
        The per-example losses.

    Examples
    --------
    >>> from smml.losses import exponential
    >>> print([f"{v:.3f}" for v in exponential([1, -1, 1], [0.0, 1.0, 2.0])])
    ['1.000', '2.718', '0.135']
    """
    y, y_pred = _pair(y, y_pred)
    _check_margin_labels(y)
    return np.exp(-y * y_pred)


#: the losses by name (``cost_sensitive`` needs a cost: pass it with functools.partial)
LOSSES = {"zero_one": zero_one, "absolute": absolute, "square": square, "logarithmic": logarithmic,
          "hinge": hinge, "logistic": logistic, "exponential": exponential}


def get_loss(loss: LossLike) -> LossFunction:
    """A loss function from a name in :data:`LOSSES` or a callable ``loss(y, y_pred)``.

    Parameters
    ----------
    loss : str or callable
        A name in :data:`LOSSES` (``"zero_one"``, ``"square"``, ...), or a callable
        ``loss(y, y_pred)`` returning per-example losses, returned unchanged.
        ``"cost_sensitive"`` needs a cost: pass
        ``functools.partial(cost_sensitive, cost=..., labels=...)`` instead.

    Returns
    -------
    callable
        The loss function ``loss(y, y_pred)``.

    Examples
    --------
    >>> from smml.losses import get_loss
    >>> loss = get_loss("square")
    >>> print(loss.__name__, loss([1.0, 2.0], [0.0, 2.0]).tolist())
    square [1.0, 0.0]
    >>> get_loss(abs) is abs
    True
    """
    if callable(loss):
        return loss
    if isinstance(loss, str):
        if loss == "cost_sensitive":
            raise ValueError("loss='cost_sensitive' needs a cost matrix: pass "
                             "functools.partial(smml.losses.cost_sensitive, cost=..., labels=...)")
        if loss in LOSSES:
            return LOSSES[loss]
    raise ValueError(f"loss must be one of {sorted(LOSSES)} or a callable loss(y, y_pred), got {loss!r}")
