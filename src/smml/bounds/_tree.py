"""Occam and ERM bounds of tree predictors (000 "Risk analysis for tree predictors"; 003 section 5)."""
from __future__ import annotations

import math
import numbers

from smml._validation import check_delta as _check_delta, check_positive_int as _check_positive_int


def tree_code_length(n_nodes: int, d: int) -> int:
    """|sigma(h)| = (N_h + 1) ceil(log2(d + 3)) + 2 floor(log2 N_h) + 1.

    000, "A more refined bound": the length of an instantaneous (prefix-free) binary
    code for a tree predictor with N_h nodes on d attributes.

    Parameters
    ----------
    n_nodes : int >= 1
        N_h, the number of nodes of the tree.
    d : int >= 1
        The number of attributes.

    Returns
    -------
    int
        |sigma(h)|, in bits.

    Examples
    --------
    >>> from smml.bounds import tree_code_length
    >>> tree_code_length(7, 10)                      # 8 * 4 + 2 * 2 + 1
    37
    """
    _check_positive_int("n_nodes", n_nodes)
    _check_positive_int("d", d)
    # exact integer logs: ceil(log2(d+3)) = bit_length(d+2), floor(log2 N) = bit_length(N)-1
    n_nodes, d = int(n_nodes), int(d)
    return (n_nodes + 1) * (d + 2).bit_length() + 2 * (n_nodes.bit_length() - 1) + 1


def occam_tree_bound(train_error: float, n_nodes: int, d: int, m: int, delta: float = 0.05) -> float:
    """Training error + sqrt((|sigma(h)| + ln(2/delta)) / (2m)).

    000, "A more refined bound": with probability >= 1 - delta over a training set of
    size m, simultaneously for every tree predictor h with N_h nodes on d attributes,
    risk(h) <= training error(h) + sqrt((|sigma(h)| + ln(2/delta)) / (2m)), with
    |sigma(h)| from :func:`tree_code_length` (the notes write |sigma(h)| for
    ln(1/w(h)) = |sigma(h)| ln 2, which only loosens the bound).

    Parameters
    ----------
    train_error : float in [0, 1]
        The training error of h.
    n_nodes : int >= 1
        N_h, the number of nodes of h.
    d : int >= 1
        The number of attributes.
    m : int >= 1
        The training-set size.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    float
        The bound on risk(h) (not clipped).

    See Also
    --------
    tree_code_length : |sigma(h)|.
    erm_tree_bound : the bound for ERM on trees with N nodes.

    Examples
    --------
    >>> from smml.bounds import occam_tree_bound
    >>> round(occam_tree_bound(0.1, n_nodes=7, d=10, m=10_000), 4)
    0.1451
    """
    if isinstance(train_error, bool) or not isinstance(train_error, numbers.Real) \
            or not 0.0 <= train_error <= 1.0:
        raise ValueError(f"train_error must be a number in [0, 1], got {train_error!r}")
    _check_positive_int("m", m)
    _check_delta(delta)
    sigma = tree_code_length(n_nodes, d)
    return train_error + math.sqrt((sigma + math.log(2.0 / delta)) / (2.0 * m))


def erm_tree_bound(m: int, n_nodes: int, d: int, delta: float = 0.05) -> float:
    """sqrt((2/m) (N (1 + ln(2d)) + ln(2/delta))): estimation error of ERM on trees with N nodes.

    000, "Limiting the number of nodes" and 003 section 5: |H_N| <= (2ed)^N, so with
    probability >= 1 - delta, risk(h_S) <= min_{h in H_N} risk(h) + this quantity.

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    n_nodes : int >= 1
        N, the number of nodes of the trees of H_N.
    d : int >= 1
        The number of attributes.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    float
        The bound on risk(h_S) - min_{h in H_N} risk(h).

    Examples
    --------
    >>> from smml.bounds import erm_tree_bound
    >>> round(erm_tree_bound(10_000, n_nodes=7, d=10), 4)
    0.0796
    """
    _check_positive_int("m", m)
    _check_positive_int("n_nodes", n_nodes)
    _check_positive_int("d", d)
    _check_delta(delta)
    return math.sqrt(2.0 / m * (n_nodes * (1.0 + math.log(2.0 * d)) + math.log(2.0 / delta)))
