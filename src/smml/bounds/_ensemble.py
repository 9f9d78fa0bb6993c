"""Training-error bounds of AdaBoost and of a majority vote (002 "Training error of AdaBoost";
003 section 16)."""
from __future__ import annotations

import math
import numbers

import numpy as np

from smml._typing import ArrayLike
from smml._validation import check_positive_int as _check_positive_int


def _edges(edges):
    g = np.asarray(edges, dtype=float).reshape(-1)
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(np.abs(g) > 0.5):
        raise ValueError("edges gamma_i = 1/2 - epsilon_i must be a non-empty sequence of numbers in [-1/2, 1/2]")
    return g


def adaboost_training_error_bound(edges: ArrayLike) -> tuple[float, float]:
    """(prod_i sqrt(1 - 4 gamma_i^2), exp(-2 sum_i gamma_i^2)): AdaBoost's training-error bounds.

    002, "Training error of AdaBoost" (Proposition): with gamma_i = 1/2 - epsilon_i
    the edge of the i-th weak learner, the training error (weighted by P_1) of
    sign(sum_i w_i h_i) is at most prod_i sqrt(1 - 4 gamma_i^2), which is at most
    exp(-2 sum_i gamma_i^2) (003 section 16: l_S(f) <= e^{-2 T gamma^2} when every
    gamma_i >= gamma). Returns both, the first <= the second.

    Parameters
    ----------
    edges : array-like of float in [-1/2, 1/2]
        The edges gamma_i = 1/2 - epsilon_i of the weak learners, one per round.

    Returns
    -------
    product : float
        prod_i sqrt(1 - 4 gamma_i^2).
    exponential : float
        exp(-2 sum_i gamma_i^2).

    Examples
    --------
    >>> from smml.bounds import adaboost_training_error_bound
    >>> prod, expo = adaboost_training_error_bound([0.1, 0.2, 0.3])
    >>> round(prod, 4), round(expo, 4)
    (0.7184, 0.7558)
    """
    g = _edges(edges)
    g2 = np.minimum(g * g, 0.25)
    return float(np.prod(np.sqrt(1.0 - 4.0 * g2))), float(np.exp(-2.0 * g2.sum()))


def adaboost_rounds_for_zero_error(m: int, gamma: float) -> float:
    """ln(m) / (2 gamma^2): rounds after which AdaBoost's training error is 0.

    003 section 16 ("How many rounds of AdaBoost are sufficient to achieve zero
    training error"): if |gamma_i| >= gamma for every round, the training error
    is below e^{-2 T gamma^2}, and a training error below 1/m on m examples is
    0; so T > ln(m) / (2 gamma^2) rounds suffice. Returns the real number
    ln(m) / (2 gamma^2); the smallest sufficient integer T is floor of it plus 1.

    Parameters
    ----------
    m : int >= 1
        The number of training examples.
    gamma : float in (0, 1/2]
        A lower bound on the edges |gamma_i| of every round.

    Returns
    -------
    float
        ln(m) / (2 gamma^2) (inf when that exceeds float64).

    Examples
    --------
    >>> import math
    >>> from smml.bounds import adaboost_rounds_for_zero_error
    >>> T = adaboost_rounds_for_zero_error(1000, 0.1)
    >>> round(T, 2), math.floor(T) + 1              # the smallest sufficient number of rounds
    (345.39, 346)
    """
    _check_positive_int("m", m)
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 < gamma <= 0.5:
        raise ValueError(f"gamma must be a number in (0, 1/2], got {gamma!r}")
    return math.log(m) / (2.0 * gamma) / gamma      # inf, not a ZeroDivisionError, when it overflows


def majority_vote_bound(T: int, gamma: float) -> float:
    """exp(-2 T gamma^2): training error of a majority vote of T independent classifiers.

    003 section 16 ("Write the upper bound on the training error achieved by
    Bagging when the errors of the classifiers are independent"): if the
    training errors of h_1..h_T are independent and each is at most
    1/2 - gamma, the majority vote f = sgn(sum_i h_i) has l_S(f) <= e^{-2 T gamma^2}.

    Parameters
    ----------
    T : int >= 1
        The number of classifiers voting.
    gamma : float in [0, 1/2]
        Each classifier's training error is at most 1/2 - gamma.

    Returns
    -------
    float
        exp(-2 T gamma^2).

    Examples
    --------
    >>> from smml.bounds import majority_vote_bound
    >>> round(majority_vote_bound(100, 0.1), 4)
    0.1353
    """
    _check_positive_int("T", T)
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 <= gamma <= 0.5:
        raise ValueError(f"gamma must be a number in [0, 1/2], got {gamma!r}")
    return math.exp(-2.0 * T * gamma * gamma)
