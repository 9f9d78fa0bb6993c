"""smml.bounds against the notes' formulas (000 "Bounding the risk", ERM on a finite class)."""
import math

import numpy as np
import pytest

from smml.bounds import erm_finite_class_bound, hoeffding_epsilon, hoeffding_interval, hoeffding_test_size


@pytest.mark.parametrize("n", [1, 7, 100, 12345])
@pytest.mark.parametrize("delta", [0.01, 0.05, 0.5, 0.999])
def test_hoeffding_epsilon_formula(n, delta):
    eps = hoeffding_epsilon(n, delta)
    assert eps == pytest.approx(math.sqrt(math.log(2 / delta) / (2 * n)), rel=1e-15)
    # the defining property: 2 e^{-2 eps^2 n} = delta (000, inequality (1))
    assert 2 * math.exp(-2 * eps * eps * n) == pytest.approx(delta, rel=1e-12)


def test_hoeffding_interval_formula_and_clipping():
    n, delta = 400, 0.05
    eps = math.sqrt(math.log(2 / 0.05) / 800)  # = 0.0679...
    assert hoeffding_interval(0.25, n, delta) == pytest.approx((0.25 - eps, 0.25 + eps), rel=1e-15)
    assert hoeffding_interval(0.25, n) == hoeffding_interval(0.25, n, 0.05)
    # clipped to [0, 1]
    assert hoeffding_interval(0.01, n, delta) == (0.0, pytest.approx(0.01 + eps))
    assert hoeffding_interval(0.99, n, delta) == (pytest.approx(0.99 - eps), 1.0)
    assert hoeffding_interval(0.0, 1, 0.05) == (0.0, 1.0)
    assert hoeffding_interval(1, 10 ** 9, 0.05)[1] == 1.0
    lo, hi = hoeffding_interval(0.5, 10 ** 6, 0.05)
    assert lo < 0.5 < hi and hi - lo == pytest.approx(2 * hoeffding_epsilon(10 ** 6, 0.05))


def test_hoeffding_interval_narrows_with_n_and_widens_with_confidence():
    widths = [np.subtract(*hoeffding_interval(0.5, n, 0.05)[::-1]) for n in (10, 100, 1000, 10000)]
    assert all(a > b for a, b in zip(widths, widths[1:]))
    assert widths[0] / widths[1] == pytest.approx(math.sqrt(10))
    w = [np.subtract(*hoeffding_interval(0.5, 1000, d)[::-1]) for d in (0.5, 0.1, 0.01)]
    assert w[0] < w[1] < w[2]


@pytest.mark.parametrize("eps", [0.5, 0.1, 0.05, 0.0679, 0.01, 0.001])
@pytest.mark.parametrize("delta", [0.01, 0.05, 0.2])
def test_test_size_is_the_smallest_n_consistent_with_the_interval(eps, delta):
    n = hoeffding_test_size(eps, delta)
    assert n == max(1, math.ceil(math.log(2 / delta) / (2 * eps ** 2))) or \
        hoeffding_epsilon(n, delta) <= eps < hoeffding_epsilon(n - 1, delta)
    assert hoeffding_epsilon(n, delta) <= eps
    if n > 1:
        assert hoeffding_epsilon(n - 1, delta) > eps
    lo, hi = hoeffding_interval(0.5, n, delta)
    assert hi - 0.5 <= eps


def test_test_size_known_value():
    # ln(2/0.05) / (2 * 0.05^2) = 3.6889 / 0.005 = 737.8 -> 738
    assert hoeffding_test_size(0.05, 0.05) == 738
    assert hoeffding_test_size(10.0, 0.5) == 1
    # epsilon so large that epsilon^2 overflows: still one example (was a ZeroDivisionError)
    assert hoeffding_test_size(1e200, 0.05) == 1
    assert hoeffding_test_size(float("inf"), 0.05) == 1


def test_erm_finite_class_bound_formula():
    m, H, delta = 1000, 2 ** 20, 0.05
    b = erm_finite_class_bound(m, H, delta)
    assert b == pytest.approx(math.sqrt(2 / m * math.log(2 * H / delta)), rel=1e-15)
    # 003 sec. 4: P(l(h_S) - l(h*) > eps) <= 2|H| e^{-m eps^2 / 2}; the bound is where this equals delta
    assert 2 * H * math.exp(-m * b * b / 2) == pytest.approx(delta, rel=1e-10)
    assert erm_finite_class_bound(m, 1, delta) < b < erm_finite_class_bound(m // 4, H, delta)
    assert erm_finite_class_bound(4 * m, H, delta) == pytest.approx(b / 2)


@pytest.mark.parametrize("call, msg", [
    (lambda: hoeffding_epsilon(0, 0.05), "n must be a positive integer"),
    (lambda: hoeffding_epsilon(2.5, 0.05), "n must be a positive integer"),
    (lambda: hoeffding_epsilon(True, 0.05), "n must be a positive integer"),
    (lambda: hoeffding_epsilon(10, 0), r"delta must be a real number in \(0, 1\)"),
    (lambda: hoeffding_epsilon(10, 1), r"delta must be a real number in \(0, 1\)"),
    (lambda: hoeffding_epsilon(10, float("nan")), r"delta must be a real number in \(0, 1\)"),
    (lambda: hoeffding_interval(-0.1, 10), r"test_error must be a number in \[0, 1\]"),
    (lambda: hoeffding_interval(1.5, 10), r"test_error must be a number in \[0, 1\]"),
    (lambda: hoeffding_interval(float("nan"), 10), r"test_error must be a number in \[0, 1\]"),
    (lambda: hoeffding_interval("0.1", 10), r"test_error must be a number in \[0, 1\]"),
    (lambda: hoeffding_interval(0.1, -3), "n must be a positive integer"),
    (lambda: hoeffding_interval(0.1, 10, 2.0), "delta"),
    (lambda: hoeffding_test_size(0, 0.05), "epsilon must be a positive number"),
    (lambda: hoeffding_test_size(-1, 0.05), "epsilon must be a positive number"),
    (lambda: hoeffding_test_size(float("nan"), 0.05), "epsilon must be a positive number"),
    (lambda: hoeffding_test_size(0.1, -0.05), "delta"),
    (lambda: erm_finite_class_bound(0, 10), "m must be a positive integer"),
    (lambda: erm_finite_class_bound(10, 0), "n_hypotheses must be a positive integer"),
    (lambda: erm_finite_class_bound(10, 10, 1.0), "delta"),
])
def test_bad_arguments(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()
