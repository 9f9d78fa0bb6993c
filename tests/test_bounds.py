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


# ---- Bayes optimal predictor and Bayes risk (000 "Bayes optimal predictor"; 003 sections 4, 15) --------

from smml import bounds as B  # noqa: E402


def test_bayes_zero_one_square_logistic_on_a_finite_X_by_hand():
    # X = {x1, x2, x3} with P(x) = (0.5, 0.3, 0.2) and eta = P(Y = +1 | x) = (0.9, 0.5, 0.2)
    eta, p_x = [0.9, 0.5, 0.2], [0.5, 0.3, 0.2]
    # zero-one: f* = +1 iff eta >= 1/2 (the tie at x2 goes to +1); risk E[min(eta, 1 - eta)]
    np.testing.assert_array_equal(B.bayes_optimal_predictor("zero_one", eta), [1, 1, -1])
    assert B.bayes_risk("zero_one", eta, p_x=p_x) == pytest.approx(0.5 * 0.1 + 0.3 * 0.5 + 0.2 * 0.2)  # 0.24
    # no predictor does better: all 8 of {-1, +1}^3
    e = np.array(eta)
    risks = [np.dot(p_x, np.where(np.array(bits) == 1, 1 - e, e)) for bits in np.ndindex(2, 2, 2)]
    assert min(risks) == pytest.approx(0.24)
    # square: f* = E[Y | x] = 2 eta - 1, risk E[Var(Y | X)] = E[4 eta (1 - eta)]
    np.testing.assert_allclose(B.bayes_optimal_predictor("square", eta), [0.8, 0.0, -0.6], atol=1e-15)
    assert B.bayes_risk("square", eta, p_x=p_x) == pytest.approx(0.5 * 0.36 + 0.3 * 1.0 + 0.2 * 0.64)  # 0.608
    # logistic: the log-odds ln(eta / (1 - eta)) = (ln 9, 0, -ln 4); risk H(Y | X) in bits (003, log2)
    np.testing.assert_allclose(B.bayes_optimal_predictor("logistic", eta), [math.log(9), 0.0, -math.log(4)],
                               atol=1e-15)

    def H2(p):
        return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
    hy = 0.5 * H2(0.9) + 0.3 * 1.0 + 0.2 * H2(0.2)                                       # 0.67888...
    assert B.bayes_risk("logistic", eta, p_x=p_x) == pytest.approx(hy, rel=1e-14)
    assert B.bayes_risk("logistic", eta, p_x=p_x, base=math.e) == pytest.approx(hy * math.log(2), rel=1e-14)
    # the risk of g* under the log2 logistic loss is that entropy
    g = B.bayes_optimal_predictor("logistic", eta)
    cond = e * np.log2(1 + np.exp(-g)) + (1 - e) * np.log2(1 + np.exp(g))
    assert np.dot(p_x, cond) == pytest.approx(hy, rel=1e-12)
    # sgn(g*) is the zero-one f* where eta != 1/2 (003 section 15)
    assert np.sign(g[[0, 2]]).tolist() == [1.0, -1.0]


def test_bayes_general_label_distributions():
    # Y in {0, 1, 3} with P = (0.2, 0.5, 0.3): mean 1.4, variance 0.2*1.96 + 0.5*0.16 + 0.3*2.56 = 1.24
    assert B.bayes_optimal_predictor("square", y_values=[0, 1, 3], p_y=[0.2, 0.5, 0.3])[0] == pytest.approx(1.4)
    assert B.bayes_risk("square", y_values=[3, 0, 1], p_y=[[0.3, 0.2, 0.5]]) == pytest.approx(1.24)
    # zero-one, three labels: the most probable; a tie goes to the largest label
    P = [[0.4, 0.4, 0.2], [0.1, 0.3, 0.6]]
    np.testing.assert_array_equal(B.bayes_optimal_predictor("zero_one", y_values=[1, 2, 3], p_y=P), [2, 3])
    assert B.bayes_risk("zero_one", y_values=[1, 2, 3], p_y=P, p_x=[0.5, 0.5]) == pytest.approx(0.5)
    # labels -1, +1 through p_y: the binary rules
    assert B.bayes_optimal_predictor("zero_one", y_values=[-1, 1], p_y=[[0.5, 0.5]])[0] == 1
    assert B.bayes_risk("logistic", y_values=[-1, 1], p_y=[[0.5, 0.5]]) == pytest.approx(1.0)
    # deterministic labels: zero risk, infinite log-odds
    assert B.bayes_risk("zero_one", [0.0, 1.0]) == 0 and B.bayes_risk("logistic", [0.0, 1.0]) == 0
    assert B.bayes_optimal_predictor("logistic", [0.0, 1.0]).tolist() == [-math.inf, math.inf]


def test_bayes_risk_of_a_function_eta_on_samples():
    # eta(x) = x on X uniform in [0, 1]: E[min(x, 1-x)] = 1/4, E[4x(1-x)] = 2/3, E[H2(x)] = 1/(2 ln 2)
    x = (np.arange(200000) + 0.5) / 200000            # midpoints: the sample mean is a midpoint rule
    assert B.bayes_risk("zero_one", lambda v: v, X=x) == pytest.approx(0.25, abs=1e-9)
    assert B.bayes_risk("square", lambda v: v, X=x) == pytest.approx(2 / 3, abs=1e-9)
    assert B.bayes_risk("logistic", lambda v: v, X=x) == pytest.approx(1 / (2 * math.log(2)), abs=1e-6)


def test_bayes_bad_inputs():
    for bad in (lambda: B.bayes_risk("zero_one"), lambda: B.bayes_risk("zero_one", [0.5], p_y=[[1.0]]),
                lambda: B.bayes_risk("zero_one", [1.5]), lambda: B.bayes_risk("zero_one", [np.nan]),
                lambda: B.bayes_risk("zero_one", []), lambda: B.bayes_risk("hinge", [0.5]),
                lambda: B.bayes_risk("zero_one", [0.5, 0.5], p_x=[0.5]),
                lambda: B.bayes_risk("zero_one", [0.5, 0.5], p_x=[0.7, 0.7]),
                lambda: B.bayes_risk("zero_one", lambda v: v),
                lambda: B.bayes_risk("zero_one", [0.5], X=[1.0]),
                lambda: B.bayes_risk("square", p_y=[[0.5, 0.5]]),
                lambda: B.bayes_risk("square", y_values=[1, 1], p_y=[[0.5, 0.5]]),
                lambda: B.bayes_risk("square", y_values=[0, 1], p_y=[[0.5, 0.6]]),
                lambda: B.bayes_risk("square", y_values=[0, 1, 2], p_y=[[0.5, 0.5]]),
                lambda: B.bayes_risk("logistic", y_values=[0, 1], p_y=[[0.5, 0.5]]),
                lambda: B.bayes_risk("logistic", [0.5], base=1)):
        with pytest.raises(ValueError):
            bad()


# ---- surrogate losses, stability, k-NN consistency (003 sections 13, 15; 000) --------------------------

def test_surrogate_consistency_condition():
    from smml import losses
    assert B.surrogate_consistency_condition("hinge") == (True, {-1: -1.0, 1: -1.0})
    assert B.surrogate_consistency_condition("exponential") == (True, {-1: -1.0, 1: -1.0})
    assert B.surrogate_consistency_condition("square") == (True, {-1: -2.0, 1: -2.0})
    ok, s = B.surrogate_consistency_condition("logistic", base=2)
    assert ok and s[1] == pytest.approx(-1 / (2 * math.log(2)))
    assert B.surrogate_consistency_condition("zero_one")[0] is False
    # numerically, on the library's losses: the same slopes
    for name, slope in (("hinge", -1.0), ("logistic", -0.5), ("exponential", -1.0), ("square", -2.0)):
        ok, s = B.surrogate_consistency_condition(losses.LOSSES[name])
        assert ok and s[-1] == pytest.approx(slope, rel=1e-5) and s[1] == pytest.approx(slope, rel=1e-5)
    # the zero-one loss in margin form I{y y_hat <= 0}: a step at 0, no derivative
    ok, s = B.surrogate_consistency_condition(lambda y, p: (y * p <= 0).astype(float))
    assert not ok and s == {-1: None, 1: None}
    # increasing in the margin: the condition fails
    assert B.surrogate_consistency_condition(lambda y, p: np.exp(y * p))[0] is False
    with pytest.raises(ValueError):
        B.surrogate_consistency_condition("absolute")


def test_svm_stability_knn_and_finite_class_bounds():
    assert B.svm_stability_bound(0.5, 10, X_norm=2.0) == pytest.approx(16 / 5)        # (2 * 2)^2 / (0.5 * 10)
    assert B.svm_stability_bound(0.5, 10, L=1.0) == pytest.approx(4 / 5)
    assert B.knn_asymptotic_risk_bound(0.1, 10) == pytest.approx(0.3)                  # 0.1 + 2 sqrt(0.01)
    assert B.knn_asymptotic_risk_bound(0.0, 3) == 0.0
    assert B.knn_asymptotic_risk_bound(0.25, 1) == pytest.approx(1.25)
    assert [B.knn_consistent_k(m) for m in (1, 2, 100, 101, 10**12)] == [1, 2, 10, 11, 10**6]
    assert [B.knn_consistent_k(m, "log") for m in (1, 2, 100, 10**6)] == [1, 1, 5, 14]
    ms = [10**j for j in range(1, 9)]
    for sched in ("sqrt", "log"):
        ks = [B.knn_consistent_k(m, sched) for m in ms]
        assert all(a < b for a, b in zip(ks, ks[1:]))                  # k_m -> infinity
        assert all(k / m > k2 / m2 for k, m, k2, m2 in zip(ks, ms, ks[1:], ms[1:]))   # k_m / m -> 0
    assert B.finite_class_uniform_bound(100, 10, 0.05) == pytest.approx(math.sqrt(math.log(400) / 200))
    # sqrt((2/m) ln(2|H|/delta)) = 2 sqrt(ln(2|H|/delta) / (2m)): the estimation bound is twice the uniform one
    assert B.erm_finite_class_bound(100, 10, 0.05) == pytest.approx(2 * B.finite_class_uniform_bound(100, 10, 0.05))
    for bad in (lambda: B.svm_stability_bound(0.0, 10, L=1.0), lambda: B.svm_stability_bound(1.0, 10),
                lambda: B.svm_stability_bound(1.0, 10, L=1.0, X_norm=1.0), lambda: B.knn_asymptotic_risk_bound(0.6, 3),
                lambda: B.knn_asymptotic_risk_bound(0.1, 0), lambda: B.knn_consistent_k(0),
                lambda: B.knn_consistent_k(10, "linear"), lambda: B.finite_class_uniform_bound(10, 0)):
        with pytest.raises(ValueError):
            bad()


# ---- the package (issue 31: smml/bounds.py became smml/bounds/, one private module per concern) ------

def test_the_package_keeps_every_name_and_the_path_files_record(tmp_path):
    import pickle
    import typing

    import smml
    from smml._discovery import model_types

    for name in B.__all__:
        obj = getattr(B, name)
        assert obj.__module__.startswith("smml.bounds"), name
        assert obj.__doc__ and (isinstance(obj, type)        # each bound cites its notes; the result class is not one
                                or any(note in obj.__doc__ for note in ("000", "001", "002", "003"))), name
    # what smml.save / pickle record is smml.bounds.StabilityEstimate, as before the split
    assert model_types()["smml.bounds.StabilityEstimate"] is B.StabilityEstimate
    assert not any(k.startswith("smml.bounds._") for k in model_types())
    est = B.StabilityEstimate(epsilon=0.03, std_error=0.01, differences=np.array([0.02, 0.04]), m=3,
                              train_indices=np.array([[0, 1, 2], [1, 2, 3]]), t=np.array([0, 2]),
                              replacement=np.array([4, 0]))
    blob = pickle.dumps(est)
    assert b"smml.bounds" in blob and b"_stability" not in blob
    smml.save(est, tmp_path / "est.smml")
    for back in (pickle.loads(blob), smml.load(tmp_path / "est.smml")):
        assert type(back) is B.StabilityEstimate and back.epsilon == 0.03 and back.m == 3
        np.testing.assert_array_equal(back.train_indices, est.train_indices)
    # the dataclass's annotations resolve under the module path it is recorded at
    assert typing.get_type_hints(B.StabilityEstimate)["differences"] is np.ndarray
