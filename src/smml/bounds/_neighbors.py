"""Risk of nearest-neighbour classifiers (000 "Risk Analysys for Nearest-Neighbor", "Consistency
and nonparametric algorithms"; 002 "Generalization error of 1-NN"; 003 sections 7, 8)."""
from __future__ import annotations

import math
import numbers
from typing import Literal

from smml._validation import check_positive_int as _check_positive_int


def one_nn_risk_bound(bayes_risk: float, c: float, d: int, m: int, epsilon: float | None = None) -> float:
    """Bound on the expected risk of 1-NN, E[l_D(h_S)] over training sets S of size m.

    000, "Risk Analysys for Nearest-Neighbor" (and 003 section 8): for data points in
    X = [-1, 1]^d (000: "max |X| <= 1 with probability one", i.e. every coordinate in
    [-1, 1]), binary labels and a c-Lipschitz conditional probability eta, for every
    0 < epsilon < 1

        E[l_D(h_S)] <= 2 l_D(f*) + c sqrt(d) (epsilon + (2 / (e m)) (2 / epsilon)^d),

    and with epsilon = 2 m^(-1/(d+1)) this gives the notes' final form (the default,
    ``epsilon=None``)

        E[l_D(h_S)] <= 2 l_D(f*) + 4 c sqrt(d) m^(-1/(d+1)).

    The constants come from that domain, of side 2: a point with no training point in
    its cube of side epsilon is at most the diagonal 2 sqrt(d) of [-1, 1]^d from its
    nearest neighbour, and there are r = (2 / epsilon)^d such cubes. 002 ("Generalization
    error of 1-NN") states the theorem on [0, 1]^d with the same final constant 4 c
    sqrt(d); as [0, 1]^d is inside [-1, 1]^d the bound computed here holds there too
    (on [0, 1]^d the same argument gives the smaller sqrt(d) (epsilon + (1 / (e m))
    (1 / epsilon)^d)). Rescale the features into [-1, 1]^d (and eta's Lipschitz
    constant c with them) before using it. (002 prints the exponent as -1/(n+1);
    000's derivation gives -1/(d+1).)

    Parameters
    ----------
    bayes_risk : float in [0, 1/2]
        l_D(f*), the Bayes risk.
    c : float >= 0
        The Lipschitz constant of eta.
    d : int >= 1
        The number of features.
    m : int >= 1
        The training-set size.
    epsilon : None or float in (0, 1), default=None
        The side of the cubes; None for 2 m^(-1/(d+1)), the notes' final form.

    Returns
    -------
    float
        The bound on E[l_D(h_S)].

    Examples
    --------
    >>> from smml.bounds import one_nn_risk_bound
    >>> round(one_nn_risk_bound(0.1, c=1.0, d=2, m=10_000), 4)      # 0.2 + 4 sqrt(2) / 10000^(1/3)
    0.4626
    >>> round(one_nn_risk_bound(0.1, c=1.0, d=2, m=10_000, epsilon=0.1), 4)
    0.383
    """
    if isinstance(bayes_risk, bool) or not isinstance(bayes_risk, numbers.Real) or not 0 <= bayes_risk <= 0.5:
        raise ValueError(f"bayes_risk must be a number in [0, 1/2], got {bayes_risk!r}")
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not (math.isfinite(c) and c >= 0):
        raise ValueError(f"c (the Lipschitz constant of eta) must be a finite number >= 0, got {c!r}")
    _check_positive_int("d", d)
    _check_positive_int("m", m)
    bayes_risk, c = float(bayes_risk), float(c)      # Python floats: a float32 argument kept float32 arithmetic
    if epsilon is None:
        return 2.0 * bayes_risk + 4.0 * c * math.sqrt(d) * float(m) ** (-1.0 / (d + 1))
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon!r}")
    epsilon = float(epsilon)
    # (2/epsilon)^d can overflow for large d: compute it in logs
    log_tail = math.log(2.0 / (math.e * m)) + d * math.log(2.0 / epsilon)
    tail = math.exp(log_tail) if log_tail < 700 else math.inf
    return 2.0 * bayes_risk + c * math.sqrt(d) * (epsilon + tail)


def knn_asymptotic_risk_bound(bayes_risk: float, k: int) -> float:
    """l* + 2 sqrt(l* / k): the limit of the expected risk of k-NN (000 "Consistency").

    000, "Consistency and nonparametric algorithms", (1): for any data distribution,
    lim_{m -> infinity} E[l_D(k-NN(S_m))] <= l_D(f*) + 2 sqrt(l_D(f*) / k) (binary
    classification, zero-one loss; l* = l_D(f*) the Bayes risk, at most 1/2). For a fixed k
    k-NN is not known to be consistent; it is when k = k_m grows with k_m -> infinity and
    k_m = o(m) (see :func:`knn_consistent_k`).

    Parameters
    ----------
    bayes_risk : float in [0, 1/2]
        l* = l_D(f*), the Bayes risk.
    k : int >= 1
        The number of neighbours.

    Returns
    -------
    float
        l* + 2 sqrt(l* / k).

    Examples
    --------
    >>> from smml.bounds import knn_asymptotic_risk_bound
    >>> round(knn_asymptotic_risk_bound(0.04, 16), 4)           # 0.04 + 2 sqrt(0.0025)
    0.14
    """
    if isinstance(bayes_risk, bool) or not isinstance(bayes_risk, numbers.Real) or not 0 <= bayes_risk <= 0.5:
        raise ValueError(f"bayes_risk must be a number in [0, 1/2], got {bayes_risk!r}")
    _check_positive_int("k", k)
    return float(bayes_risk) + 2.0 * math.sqrt(bayes_risk / k)


def knn_consistent_k(m: int, schedule: Literal["sqrt", "log"] = "sqrt") -> int:
    """k_m for a training set of size m, with k_m -> infinity and k_m = o(m) (000; 003 section 7).

    000 / 003 section 7: k-NN is consistent when k is chosen as a function k_m of the
    training-set size with k_m -> infinity and k_m = o(m); the notes' two examples are
    k_m = sqrt(m) (``schedule="sqrt"``) and k_m = log m (``"log"``, natural log). The value
    returned is the integer ceil of that (at least 1, at most m): ceil keeps both conditions.

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    schedule : {"sqrt", "log"}, default="sqrt"
        k_m = ceil(sqrt(m)) or ceil(ln m).

    Returns
    -------
    int
        k_m, between 1 and m.

    Examples
    --------
    >>> from smml.bounds import knn_consistent_k
    >>> knn_consistent_k(1000), knn_consistent_k(1000, schedule="log")
    (32, 7)
    """
    _check_positive_int("m", m)
    if schedule == "sqrt":
        k = math.isqrt(m - 1) + 1 if m > 1 else 1        # ceil(sqrt(m)), exactly in integers
    elif schedule == "log":
        k = math.ceil(math.log(m))
    else:
        raise ValueError(f"schedule must be 'sqrt' or 'log', got {schedule!r}")
    return int(min(max(k, 1), m))
