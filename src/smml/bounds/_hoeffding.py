"""Hoeffding's inequality applied to test errors and to finite classes (000 "Bounding the risk",
"Risk analysis"; 001 Appendix 1).

The two-sided and one-sided intervals of a test or validation error, the test-set size
they need, and the union bound over a finite class of predictors (ERM's estimation error
and the uniform deviation of every h in H).
"""
from __future__ import annotations

import math
import numbers

from smml._validation import check_delta as _check_delta, check_positive_int as _check_positive_int


def hoeffding_epsilon(n: int, delta: float = 0.05) -> float:
    """epsilon = sqrt(ln(2/delta) / (2n)): half-width of the Chernoff-Hoeffding interval.

    000, "Bounding the risk": with probability at least 1 - delta over the draw of
    a test set of size n, |risk - test error| <= sqrt(ln(2/delta) / (2n)) for a
    loss with values in [0, 1].

    Parameters
    ----------
    n : int >= 1
        The size of the test set.
    delta : float in (0, 1), default=0.05
        The confidence parameter: the interval holds with probability >= 1 - delta.

    Returns
    -------
    float
        sqrt(ln(2/delta) / (2n)).

    See Also
    --------
    hoeffding_interval : the test error -/+ this half-width.
    hoeffding_test_size : the n that makes this half-width at most epsilon.

    Examples
    --------
    >>> from smml.bounds import hoeffding_epsilon
    >>> round(hoeffding_epsilon(1000, delta=0.05), 4)
    0.0429
    >>> hoeffding_epsilon(4000) < hoeffding_epsilon(1000)   # 4 times the data: half the width
    True
    """
    _check_positive_int("n", n)
    _check_delta(delta)
    return math.sqrt(math.log(2.0 / delta) / (2.0 * n))


def hoeffding_interval(test_error: float, n: int, delta: float = 0.05) -> tuple[float, float]:
    """(low, high): the Chernoff-Hoeffding confidence interval for the risk.

    000, "Bounding the risk": test_error -/+ sqrt(ln(2/delta) / (2n)), clipped to
    [0, 1] (the loss takes values in [0, 1]). Holds with probability >= 1 - delta.

    Parameters
    ----------
    test_error : float in [0, 1]
        The average loss of the predictor on the test set.
    n : int >= 1
        The size of the test set.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    low : float
        max(0, test_error - sqrt(ln(2/delta) / (2n))).
    high : float
        min(1, test_error + sqrt(ln(2/delta) / (2n))).

    See Also
    --------
    hoeffding_epsilon : the half-width of the interval.

    Examples
    --------
    >>> from smml.bounds import hoeffding_interval
    >>> low, high = hoeffding_interval(0.12, 1000, delta=0.05)
    >>> round(low, 4), round(high, 4)
    (0.0771, 0.1629)
    >>> hoeffding_interval(0.0, 1000)[0]                 # clipped to [0, 1]
    0.0
    """
    if isinstance(test_error, bool) or not isinstance(test_error, numbers.Real) \
            or not 0.0 <= test_error <= 1.0 or math.isnan(test_error):
        raise ValueError(f"test_error must be a number in [0, 1] (a [0, 1]-valued loss), got {test_error!r}")
    eps = hoeffding_epsilon(n, delta)
    test_error = float(test_error)
    return max(0.0, test_error - eps), min(1.0, test_error + eps)


def hoeffding_one_sided_epsilon(n: int, delta: float = 0.05) -> float:
    """epsilon = sqrt(ln(1/delta) / (2n)): the one-sided Chernoff-Hoeffding deviation.

    001, Appendix 2, "Wilcoxon Test" (the bound for a validation set that follows
    the VC bound): L_D(h) <= L_V(h) + sqrt(ln(1/delta) / (2 m_v)), with L_V(h) the
    error of h on a validation (dev) set of m_v = n examples that were not used to
    choose h. It is the Hoeffding inequality of 001, Appendix 1, taken on one side
    only, P(l_D(h) - l_V(h) > epsilon) <= e^{-2 n epsilon^2} (a loss with values in
    [0, 1]), set equal to delta. An upper bound alone spends all of delta on one
    tail, so ln(1/delta) replaces the ln(2/delta) of the two-sided
    :func:`hoeffding_epsilon`.

    Parameters
    ----------
    n : int >= 1
        The size m_v of the validation (or test) set.
    delta : float in (0, 1), default=0.05
        The confidence parameter: the bound holds with probability >= 1 - delta.

    Returns
    -------
    float
        sqrt(ln(1/delta) / (2n)).

    See Also
    --------
    hoeffding_upper_bound : the validation error plus this epsilon.
    hoeffding_epsilon : the two-sided half-width, sqrt(ln(2/delta) / (2n)).

    Examples
    --------
    >>> from smml.bounds import hoeffding_one_sided_epsilon, hoeffding_epsilon
    >>> round(hoeffding_one_sided_epsilon(1000, 0.05), 4)
    0.0387
    >>> round(hoeffding_epsilon(1000, 0.05), 4)
    0.0429
    """
    _check_positive_int("n", n)
    _check_delta(delta)
    return math.sqrt(math.log(1.0 / delta) / (2.0 * n))


def hoeffding_upper_bound(validation_error: float, n: int, delta: float = 0.05, n_candidates: int = 1) -> float:
    """L_V(h) + sqrt(ln(N/delta) / (2n)): an upper confidence bound on the risk from a dev set.

    001, Appendix 2, "Wilcoxon Test": for a predictor h fixed before the validation
    (dev) set is drawn, with probability >= 1 - delta over a validation set of
    n = m_v examples, l_D(h) <= L_V(h) + sqrt(ln(1/delta) / (2 m_v)) (the notes'
    formula; :func:`hoeffding_one_sided_epsilon` is its second term). The loss must
    take values in [0, 1]. The value is clipped to 1, as :func:`hoeffding_interval`
    clips its high end.

    ``n_candidates`` = N > 1 is for a dev set that was also used to *choose* h among
    N predictors (000, "Tuning hyperparameters on a given training set": the best
    theta of a grid Theta_0 with |Theta_0| = N): the bound for one fixed h then
    does not apply to the chosen one, and the union bound over the N candidates (the
    step of 000's "Risk analysis" for a finite class) gives
    sqrt(ln(N/delta) / (2 m_v)) instead, valid for all N at once. N = 1 (default) is
    001's formula.

    Parameters
    ----------
    validation_error : float in [0, 1]
        L_V(h), the average loss of h on the validation set.
    n : int >= 1
        The size m_v of the validation set.
    delta : float in (0, 1), default=0.05
        The confidence parameter.
    n_candidates : int >= 1, default=1
        How many predictors the validation set was used to choose among.

    Returns
    -------
    float
        min(1, validation_error + sqrt(ln(n_candidates / delta) / (2n))).

    Examples
    --------
    >>> from smml.bounds import hoeffding_upper_bound
    >>> round(hoeffding_upper_bound(0.12, 1000, delta=0.05), 4)
    0.1587
    >>> round(hoeffding_upper_bound(0.12, 1000, delta=0.05, n_candidates=10), 4)
    0.1715
    """
    if isinstance(validation_error, bool) or not isinstance(validation_error, numbers.Real) \
            or math.isnan(validation_error) or not 0.0 <= validation_error <= 1.0:
        raise ValueError("validation_error must be a number in [0, 1] (a [0, 1]-valued loss), "
                         f"got {validation_error!r}")
    _check_positive_int("n", n)
    _check_delta(delta)
    _check_positive_int("n_candidates", n_candidates)
    eps = math.sqrt(math.log(n_candidates / delta) / (2.0 * n))
    return min(1.0, float(validation_error) + eps)


def hoeffding_test_size(epsilon: float, delta: float = 0.05) -> int:
    """Smallest test-set size n with sqrt(ln(2/delta) / (2n)) <= epsilon.

    000, "Bounding the risk", solved for n: n = ceil(ln(2/delta) / (2 epsilon^2)).

    Parameters
    ----------
    epsilon : float > 0
        The half-width of the interval to reach.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    int
        The smallest n >= 1 with :func:`hoeffding_epsilon` (n, delta) <= epsilon.

    Raises
    ------
    ValueError
        When epsilon is so small that ln(2/delta) / (2 epsilon^2) exceeds 1e300 (float64 cannot
        count such an n).

    Examples
    --------
    >>> from smml.bounds import hoeffding_test_size, hoeffding_epsilon
    >>> n = hoeffding_test_size(0.05, delta=0.05)
    >>> n
    738
    >>> hoeffding_epsilon(n) <= 0.05 < hoeffding_epsilon(n - 1)
    True
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be a positive number, got {epsilon!r}")
    _check_delta(delta)
    epsilon = float(epsilon)        # a Python float: a float32 one kept float32 arithmetic
    L = math.log(2.0 / delta)
    guess = L / (2.0 * epsilon) / epsilon
    if not guess < 1e300:
        raise ValueError(f"epsilon={epsilon!r} is too small: the test size ln(2/delta) / (2 epsilon^2) = "
                         f"{guess:.3g} exceeds what float64 can count")

    def ok(n):              # hoeffding_epsilon(n, delta) <= epsilon, the same arithmetic
        return math.sqrt(L / (2.0 * n)) <= epsilon

    # the smallest n >= 1 with ok(n) (monotone in n), by bisection between 0 and an n that holds
    # (the formula's ceiling, doubled while rounding fails it): rounding cannot make it wrong,
    # nor, past 2^53, loop for ever by steps of 1; at most ~1000 steps
    hi = max(1, math.ceil(guess))
    while not ok(hi):
        hi *= 2
    lo = 0                  # ok(hi) holds, ok(lo) does not (0: no sample)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def erm_finite_class_bound(m: int, n_hypotheses: int, delta: float = 0.05) -> float:
    """sqrt((2/m) ln(2|H|/delta)): estimation-error bound of ERM on a finite class H.

    003, section 4 ("Write the upper bound on the estimation error of ERM run on a
    finite class"): with probability >= 1 - delta over a training set of size m,
    risk(h_S) <= risk(h*) + sqrt((2/m) ln(2|H|/delta)).

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    n_hypotheses : int >= 1
        |H|, the number of predictors in the class.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    float
        sqrt((2/m) ln(2|H|/delta)), the bound on risk(h_S) - risk(h*).

    See Also
    --------
    finite_class_uniform_bound : the deviation |l_S(h) - l_D(h)| for every h at once.
    smml.erm.ERMClassifier : ERM on a finite class, reporting this bound.

    Examples
    --------
    >>> from smml.bounds import erm_finite_class_bound
    >>> round(erm_finite_class_bound(1000, 100, delta=0.05), 4)
    0.1288
    >>> erm_finite_class_bound(1000, 10_000) > erm_finite_class_bound(1000, 100)   # larger class
    True
    """
    _check_positive_int("m", m)
    _check_positive_int("n_hypotheses", n_hypotheses)
    _check_delta(delta)
    return math.sqrt(2.0 / m * math.log(2.0 * n_hypotheses / delta))


def finite_class_uniform_bound(m: int, n_hypotheses: int, delta: float = 0.05) -> float:
    """sqrt(ln(2|H|/delta) / (2m)): |l_S(h) - l_D(h)| for every h of a finite class at once.

    000 "Risk analysis" (ERM on a finite class, the step (2) of the proof): with
    probability >= 1 - delta over a training set of size m, every h in H has
    |l_S(h) - l_D(h)| <= sqrt(ln(2|H|/delta) / (2m)) (a loss with values in [0, 1]); hence
    l_D(h_S) <= l_S(h_S) + this for the ERM predictor h_S (see :class:`smml.erm.ERMClassifier`).

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    n_hypotheses : int >= 1
        |H|, the number of predictors in the class.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    float
        sqrt(ln(2|H|/delta) / (2m)).

    See Also
    --------
    erm_finite_class_bound : the estimation-error bound of ERM.

    Examples
    --------
    >>> from smml.bounds import finite_class_uniform_bound
    >>> round(finite_class_uniform_bound(1000, 100, delta=0.05), 4)
    0.0644
    """
    _check_positive_int("m", m)
    _check_positive_int("n_hypotheses", n_hypotheses)
    _check_delta(delta)
    return math.sqrt(math.log(2.0 * n_hypotheses / delta) / (2.0 * m))
