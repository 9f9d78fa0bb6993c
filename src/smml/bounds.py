"""Risk bounds of the course notes, as plain functions.

Each function cites the section of the notes that states the bound. Sections
are appended per family (trees, linear learners, ensembles) below.
"""
import math
import numbers

__all__ = ["hoeffding_epsilon", "hoeffding_interval", "hoeffding_test_size", "erm_finite_class_bound"]


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be a real number in (0, 1), got {delta!r}")


def _check_positive_int(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")


def hoeffding_epsilon(n, delta=0.05):
    """epsilon = sqrt(ln(2/delta) / (2n)): half-width of the Chernoff-Hoeffding interval.

    000, "Bounding the risk": with probability at least 1 - delta over the draw of
    a test set of size n, |risk - test error| <= sqrt(ln(2/delta) / (2n)) for a
    loss with values in [0, 1].
    """
    _check_positive_int("n", n)
    _check_delta(delta)
    return math.sqrt(math.log(2.0 / delta) / (2.0 * n))


def hoeffding_interval(test_error, n, delta=0.05):
    """(low, high): the Chernoff-Hoeffding confidence interval for the risk.

    000, "Bounding the risk": test_error -/+ sqrt(ln(2/delta) / (2n)), clipped to
    [0, 1] (the loss takes values in [0, 1]). Holds with probability >= 1 - delta.
    """
    if isinstance(test_error, bool) or not isinstance(test_error, numbers.Real) \
            or not 0.0 <= test_error <= 1.0 or math.isnan(test_error):
        raise ValueError(f"test_error must be a number in [0, 1] (a [0, 1]-valued loss), got {test_error!r}")
    eps = hoeffding_epsilon(n, delta)
    return max(0.0, test_error - eps), min(1.0, test_error + eps)


def hoeffding_test_size(epsilon, delta=0.05):
    """Smallest test-set size n with sqrt(ln(2/delta) / (2n)) <= epsilon.

    000, "Bounding the risk", solved for n: n = ceil(ln(2/delta) / (2 epsilon^2)).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be a positive number, got {epsilon!r}")
    _check_delta(delta)
    n = max(1, math.ceil(math.log(2.0 / delta) / (2.0 * epsilon * epsilon)))  # huge epsilon: n = 1, not 0
    # guard the ceil against rounding: the returned n must satisfy the inequality
    while n > 1 and math.sqrt(math.log(2.0 / delta) / (2.0 * (n - 1))) <= epsilon:
        n -= 1
    while math.sqrt(math.log(2.0 / delta) / (2.0 * n)) > epsilon:
        n += 1
    return max(1, n)


def erm_finite_class_bound(m, n_hypotheses, delta=0.05):
    """sqrt((2/m) ln(2|H|/delta)): estimation-error bound of ERM on a finite class H.

    003, section 4 ("Write the upper bound on the estimation error of ERM run on a
    finite class"): with probability >= 1 - delta over a training set of size m,
    risk(h_S) <= risk(h*) + sqrt((2/m) ln(2|H|/delta)).
    """
    _check_positive_int("m", m)
    _check_positive_int("n_hypotheses", n_hypotheses)
    _check_delta(delta)
    return math.sqrt(2.0 / m * math.log(2.0 * n_hypotheses / delta))
