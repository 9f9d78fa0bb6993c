"""The quantities of the notes added in issue 29 (part 3), against hand computations and
Monte-Carlo simulations on known distributions:

- 001's one-sided Hoeffding bound for a validation set (``hoeffding_one_sided_epsilon``,
  ``hoeffding_upper_bound``);
- the VC-dimension bounds of 001 / 002 (``halfspace_vc_dimension``, ``vc_bound``,
  ``vc_sample_complexity``);
- 003 section 13: the lambda_m schedule of the Gaussian-kernel SVM and the empirical
  epsilon-stability next to ``svm_stability_bound``;
- 000's estimation / approximation / Bayes decomposition (``smml.datasets``,
  ``smml.model_selection.risk_decomposition``).
"""
import doctest
import math

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor

import smml.bounds as B
import smml.datasets as DS
import smml.model_selection as MS
from smml.datasets import KnownDistribution, make_bayes_classification
from smml.model_selection import risk_decomposition


# ---- one-sided Hoeffding (001, Appendix 2 "Wilcoxon Test") --------------------------------

def test_one_sided_epsilon_formula_and_relation_to_the_interval():
    # sqrt(ln(1/0.05) / 2000) = sqrt(2.995732 / 2000) = 0.0387023
    assert B.hoeffding_one_sided_epsilon(1000, 0.05) == pytest.approx(0.038702275602049, rel=1e-12)
    for n in (1, 10, 1000):
        for delta in (0.01, 0.05, 0.3):
            eps = B.hoeffding_one_sided_epsilon(n, delta)
            assert eps == pytest.approx(math.sqrt(math.log(1 / delta) / (2 * n)), rel=1e-15)
            assert math.exp(-2 * n * eps * eps) == pytest.approx(delta, rel=1e-12)   # e^{-2 n eps^2} = delta
            assert eps < B.hoeffding_epsilon(n, delta)                             # one tail is cheaper
            # the one-sided epsilon at delta is the two-sided one at 2 delta
            if 2 * delta < 1:
                assert eps == pytest.approx(B.hoeffding_epsilon(n, 2 * delta), rel=1e-14)


def test_hoeffding_upper_bound_formula_clipping_and_candidates():
    assert B.hoeffding_upper_bound(0.12, 1000, 0.05) == pytest.approx(0.12 + 0.038702275602049, rel=1e-12)
    # N candidates: ln(N / delta); N = 10, delta = 0.05: sqrt(ln 200 / 2000) = 0.0514700
    assert B.hoeffding_upper_bound(0.12, 1000, 0.05, n_candidates=10) == pytest.approx(0.12 + 0.05146998, rel=1e-6)
    assert B.hoeffding_upper_bound(0.99, 10, 0.05) == 1.0
    assert B.hoeffding_upper_bound(0.0, 10 ** 8, 0.05) == pytest.approx(B.hoeffding_one_sided_epsilon(10 ** 8, 0.05))
    # the upper bound is below the two-sided interval's high end
    assert B.hoeffding_upper_bound(0.3, 200, 0.05) < B.hoeffding_interval(0.3, 200, 0.05)[1]
    for bad in (lambda: B.hoeffding_one_sided_epsilon(0), lambda: B.hoeffding_one_sided_epsilon(5, 1.0),
                lambda: B.hoeffding_upper_bound(1.5, 10), lambda: B.hoeffding_upper_bound(float("nan"), 10),
                lambda: B.hoeffding_upper_bound(0.1, 10, n_candidates=0),
                lambda: B.hoeffding_upper_bound(True, 10)):
        with pytest.raises(ValueError):
            bad()


@pytest.mark.parametrize("p", [0.05, 0.3, 0.5])
def test_one_sided_hoeffding_holds_in_simulation(p):
    # Bernoulli(p) losses, n = 200, delta = 0.1: P(p - p_hat > eps) <= delta
    rng = np.random.default_rng(0)
    n, delta = 200, 0.1
    eps = B.hoeffding_one_sided_epsilon(n, delta)
    p_hat = rng.binomial(n, p, size=200_000) / n
    fails = np.mean(p - p_hat > eps)
    assert fails <= delta
    covered = np.mean([p <= B.hoeffding_upper_bound(float(v), n, delta) for v in p_hat[:20_000]])
    assert covered >= 1 - delta


def test_validation_set_bound_on_a_known_distribution():
    # h(x) = +1 iff x_1 >= 0 on the "diagonal" distribution: h and f* disagree on two
    # triangles of total area 1 of the square's 4, so l_D(h) = noise + (1 - 2 noise) / 4 = 0.3.
    D = KnownDistribution(n_features=2, boundary="diagonal", noise=0.1)

    def h(X):
        return np.where(X[:, 0] >= 0, 1, -1)

    assert D.risk(h, n_samples=400_000, random_state=0) == pytest.approx(0.3, abs=0.004)
    risk, m_v, delta = 0.3, 100, 0.1
    rs = np.random.RandomState(1)
    fails = 0
    n_sets = 2000
    for _ in range(n_sets):
        X, y = D.sample(m_v, rs)
        L_V = float(np.mean(h(X) != y))
        fails += risk > B.hoeffding_upper_bound(L_V, m_v, delta)
    assert fails / n_sets <= delta
    assert fails > 0            # not vacuous: the bound is close to the deviation it controls


# ---- VC dimension (001 Appendix 2; 002 "VC dimension of halfspaces") ------------------------

def test_halfspace_vc_dimension():
    assert B.halfspace_vc_dimension(2) == 3                       # 001's Perceptron in the plane
    assert B.halfspace_vc_dimension(10) == 11                     # 002: d + 1
    assert B.halfspace_vc_dimension(10, fit_intercept=False) == 10
    with pytest.raises(ValueError):
        B.halfspace_vc_dimension(0)


def test_vc_bound_hand_values():
    # explicit constants: 0.1 + sqrt(2 * 3 ln(e 10^4 / 3) / 10^4) + sqrt(ln 20 / (2 10^4))
    a = math.sqrt(6 * (1 + math.log(10_000 / 3)) / 10_000)
    b = math.sqrt(math.log(20) / 20_000)
    assert B.vc_bound(0.1, 10_000, 3, 0.05) == pytest.approx(0.1 + a + b, rel=1e-14)
    assert B.vc_bound(0.1, 10_000, 3, 0.05) == pytest.approx(0.18618, abs=1e-5)
    # 001's form with a given C: 0.1 + sqrt(C (3 + ln 20) / 10^4)
    assert B.vc_bound(0.1, 10_000, 3, 0.05, C=1.0) == pytest.approx(0.1 + math.sqrt((3 + math.log(20)) / 1e4))
    assert B.vc_bound(0.0, 500, 4, 0.1, C=8.0) == pytest.approx(math.sqrt(8 * (4 + math.log(10)) / 500))
    # the default is at most 001's form with C = max(4 ln(e m / d), 1) (sqrt a + sqrt b <= sqrt 2(a + b))
    for m, d, delta in [(100, 3, 0.05), (10_000, 11, 0.01), (50, 50, 0.2)]:
        C = max(4 * math.log(math.e * m / d), 1.0)
        assert B.vc_bound(0.2, m, d, delta) <= B.vc_bound(0.2, m, d, delta, C=C) + 1e-12
    # m < d: only Pi_H(m) <= 2^m holds: sqrt(2 ln 2) + sqrt(ln(1/delta) / (2m))
    assert B.vc_bound(0.0, 5, 10, 0.05) == pytest.approx(math.sqrt(2 * math.log(2)) + math.sqrt(math.log(20) / 10))
    # near m = d, 2^m is the smaller: m = d = 3 -> min(3 ln 2, 3 ln e) = 3 ln 2
    assert B.vc_bound(0.0, 3, 3, 0.05) == pytest.approx(math.sqrt(2 * math.log(2)) + math.sqrt(math.log(20) / 6))
    # d = 0 (one behaviour on every sample): the one-sided Hoeffding bound
    assert B.vc_bound(0.25, 400, 0, 0.05) == pytest.approx(0.25 + B.hoeffding_one_sided_epsilon(400, 0.05))
    # decreasing in m, increasing in d
    vals = [B.vc_bound(0.1, m, 3) for m in (10, 100, 1000, 10_000)]
    assert all(x > y for x, y in zip(vals, vals[1:]))
    assert B.vc_bound(0.1, 1000, 3) < B.vc_bound(0.1, 1000, 30)
    for bad in (lambda: B.vc_bound(1.2, 10, 3), lambda: B.vc_bound(0.1, 0, 3), lambda: B.vc_bound(0.1, 10, -1),
                lambda: B.vc_bound(0.1, 10, 3, C=0.0), lambda: B.vc_bound(0.1, 10, 3, delta=0.0)):
        with pytest.raises(ValueError):
            bad()


def test_vc_sample_complexity_hand_value():
    # max((4 / 0.1) log2(40), (8 * 3 / 0.1) log2(130)) = max(212.9, 1685.4) -> 1686
    assert B.vc_sample_complexity(0.1, 3, 0.05) == 1686
    # the delta term wins for a tiny delta: (4 / 0.5) log2(2 / 1e-300) = 8 * 997.6 = 7981.1 -> 7982
    assert B.vc_sample_complexity(0.5, 1, 1e-300) == math.ceil(8 * math.log2(2e300))
    m = B.vc_sample_complexity(0.05, 7, 0.01)
    need = max(4 / 0.05 * math.log2(200), 8 * 7 / 0.05 * math.log2(260))
    assert m - 1 < need <= m
    assert B.vc_sample_complexity(0.05, 7) > B.vc_sample_complexity(0.1, 7) > B.vc_sample_complexity(0.1, 3)
    for bad in (lambda: B.vc_sample_complexity(0.0, 3), lambda: B.vc_sample_complexity(1.0, 3),
                lambda: B.vc_sample_complexity(0.1, 0)):
        with pytest.raises(ValueError):
            bad()


def _threshold_sup_deviation(X, y, noise):
    """sup over the class {x -> s sgn(x - theta)} (halfspaces of R^1 with a bias, VC dimension 2)
    of l_D(h) - l_S(h), exactly, on D = "axis" in d = 1 (f*(x) = +1 iff x >= 0, X uniform on [-1, 1]).

    h_{theta,+}(x) = +1 iff x > theta disagrees with f* on a mass |theta| / 2, so
    l_D = noise + (1 - 2 noise) |theta| / 2 (convex in theta); h_{theta,-} = -h_{theta,+} has
    l_D = noise + (1 - 2 noise) (1 - |theta| / 2) (concave). l_S is constant for theta in each
    [x_(k), x_(k+1)): the sup over theta there is at an end (s = +) or at the point nearest 0 (s = -)."""
    order = np.argsort(X, axis=1)
    xs = np.take_along_axis(X, order, axis=1)
    ys = np.take_along_axis(y, order, axis=1)
    n_draws, m = X.shape
    # errors of h_{theta,+} with k points <= theta: #{i <= k: y = +1} + #{i > k: y = -1}
    pos_left = np.concatenate([np.zeros((n_draws, 1)), np.cumsum(ys == 1, axis=1)], axis=1)
    neg_right = np.concatenate([np.cumsum((ys == -1)[:, ::-1], axis=1)[:, ::-1], np.zeros((n_draws, 1))], axis=1)
    err_plus = (pos_left + neg_right) / m
    err_minus = 1.0 - err_plus
    lo = np.concatenate([-np.ones((n_draws, 1)), xs], axis=1)
    hi = np.concatenate([xs, np.ones((n_draws, 1))], axis=1)
    s = 1 - 2 * noise
    ld_plus = noise + s * np.maximum(np.abs(lo), np.abs(hi)) / 2
    ld_minus = noise + s * (1 - np.abs(np.clip(0.0, lo, hi)) / 2)
    return np.maximum((ld_plus - err_plus).max(axis=1), (ld_minus - err_minus).max(axis=1))


def test_vc_bound_holds_in_simulation():
    # every threshold classifier at once: P(sup_h l_D(h) - l_S(h) > vc_bound - l_S) <= delta
    D = KnownDistribution(n_features=1, boundary="axis", noise=0.2)
    rs = np.random.RandomState(0)
    n_draws, m, delta = 2000, 100, 0.1
    X = rs.uniform(-1, 1, size=(n_draws, m))
    y = np.where(rs.uniform(size=(n_draws, m)) < D.noise, -1, 1) * np.where(X >= 0, 1, -1)
    sup = _threshold_sup_deviation(X, y, D.noise)
    d = B.halfspace_vc_dimension(1)                                   # 2
    eps = B.vc_bound(0.0, m, d, delta)                                # the bound minus the training error
    assert np.mean(sup > eps) <= delta
    assert np.all(sup > 0) and sup.mean() > 0.03                     # the deviation being bounded is real
    # spot check of the exact sup against a fine grid of thresholds on one draw
    grid = np.linspace(-1, 1, 20_001)
    x0, y0 = X[0], y[0]
    pred = np.where(x0[None, :] > grid[:, None], 1, -1)
    ls_plus = np.mean(pred != y0[None, :], axis=1)
    ld_plus = D.noise + (1 - 2 * D.noise) * np.abs(grid) / 2
    ld_minus = D.noise + (1 - 2 * D.noise) * (1 - np.abs(grid) / 2)
    grid_sup = max(np.max(ld_plus - ls_plus), np.max(ld_minus - (1 - ls_plus)))
    assert grid_sup <= sup[0] + 1e-12 and grid_sup == pytest.approx(sup[0], abs=1e-3)


def test_vc_sample_complexity_suffices_in_simulation():
    # realizable thresholds (noise 0, VC dimension 2); the consistent learner puts theta midway
    # between the largest negative and the smallest positive point; its risk is |theta| / 2.
    eps, delta = 0.1, 0.1
    m = B.vc_sample_complexity(eps, B.halfspace_vc_dimension(1), delta)
    rs = np.random.RandomState(0)
    X = rs.uniform(-1, 1, size=(500, m))
    neg = np.where(X < 0, X, -1.0).max(axis=1)
    pos = np.where(X >= 0, X, 1.0).min(axis=1)
    risk = np.abs((neg + pos) / 2) / 2
    assert np.mean(risk > eps) <= delta


# ---- 003 section 13: lambda_m for the Gaussian-kernel SVM, stability --------------------------

def test_svm_consistent_lambda_values_and_conditions():
    assert B.svm_consistent_lambda(16) == pytest.approx(0.5, rel=1e-15)          # 16^(-1/4)
    assert B.svm_consistent_lambda(1) == 1.0
    assert B.svm_consistent_lambda(100, exponent=0.4, scale=2.0) == pytest.approx(2 * 100 ** -0.4)
    ms = np.array([10, 10 ** 2, 10 ** 4, 10 ** 6, 10 ** 8])
    for exponent in (0.01, 0.25, 0.49):
        lam = np.array([B.svm_consistent_lambda(int(m), exponent) for m in ms])
        assert np.all(np.diff(lam) < 0)                            # o(1): decreasing to 0
        assert np.all(np.diff(lam * np.sqrt(ms)) > 0)              # omega(m^(-1/2)): lam sqrt(m) grows
        # and the stability bound 4 X^2 / (lam_m m) (X = 1, Gaussian kernel) vanishes
        eps = [B.svm_stability_bound(float(v), int(m), X_norm=1.0) for v, m in zip(lam, ms)]
        assert all(a > b for a, b in zip(eps, eps[1:]))
    assert B.svm_consistent_lambda(10 ** 8) == pytest.approx(0.01)
    for bad in (0.0, 0.5, 0.7, -0.1, True):
        with pytest.raises(ValueError):
            B.svm_consistent_lambda(100, exponent=bad)
    with pytest.raises(ValueError):
        B.svm_consistent_lambda(100, scale=0.0)


def test_svm_with_the_consistent_schedule_approaches_the_bayes_risk():
    from smml.kernels import KernelSVC

    D = KnownDistribution(n_features=2, boundary="ball", noise=0.1)

    def svm(m):
        # 003's SVM as written (no bias): with an unpenalised bias and lam_1 = 1 the small
        # samples give a constant predictor
        # 003's lambda_m is C = 1 / (lambda_m m); 003's width 0.1 is gamma = 1 / (2 * 0.1)
        return KernelSVC(C=1 / (B.svm_consistent_lambda(m) * m), kernel="rbf", gamma=5.0, tol=1e-4,
                         fit_intercept=False)

    r = risk_decomposition(svm, D, train_sizes=(25, 400), n_repeats=3, best_in_class_risk=D.bayes_risk,
                           n_test=5000, random_state=0)
    assert r.approximation_error == 0.0                # a consistent algorithm: h* taken as f*
    assert r.estimation_error[1] < r.estimation_error[0]
    assert r.risks[1] < 0.2


def test_empirical_stability_by_hand_with_the_mean_predictor():
    # A(S) = mean of the labels, square loss: everything can be recomputed from the draws
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = rng.normal(size=30)
    est = B.empirical_stability(DummyRegressor(strategy="mean"), X, y, loss="square", n_draws=7, m=12,
                                random_state=5)
    assert est.m == 12 and est.differences.shape == (7,) and est.train_indices.shape == (7, 12)
    for i in range(7):
        S = est.train_indices[i]
        z, z_new = S[est.t[i]], est.replacement[i]
        assert len(set(S.tolist()) | {int(z_new)}) == 13            # m + 1 distinct examples
        mean_S = y[S].mean()
        mean_St = mean_S + (y[z_new] - y[z]) / 12                    # one label replaced
        assert est.differences[i] == pytest.approx((y[z] - mean_St) ** 2 - (y[z] - mean_S) ** 2, rel=1e-12)
    assert est.epsilon == pytest.approx(est.differences.mean())
    assert est.std_error == pytest.approx(est.differences.std(ddof=1) / math.sqrt(7))
    # same seed, same draws; m defaults to n - 1
    again = B.empirical_stability(DummyRegressor(), X, y, loss="square", n_draws=7, m=12, random_state=5)
    np.testing.assert_array_equal(again.differences, est.differences)
    assert B.empirical_stability(DummyRegressor(), X, y, loss="square", n_draws=2, random_state=0).m == 29


def test_empirical_stability_of_the_gaussian_svm_is_below_the_bound():
    # 003 section 13's assumptions: A(S) = argmin (1/m) sum hinge + lam/2 ||g||^2 (fit_intercept=False,
    # a fixed kernel width), hinge convex and Lipschitz with L = X = max sqrt(K(x, x)) = 1.
    from smml.kernels import KernelSVC

    X, y, _ = make_bayes_classification(300, boundary="ball", noise=0.1, random_state=0)
    m = 40
    for lam in (0.2, 1.0):
        # C = 1 / (lam m): every fit is on m rows; 003's width 0.5 is gamma = 1
        svm = KernelSVC(C=1 / (lam * m), kernel="rbf", gamma=1.0, fit_intercept=False, tol=1e-8)
        est = B.empirical_stability(svm, X, y, loss="hinge", n_draws=30, m=m, random_state=1)
        bound = B.svm_stability_bound(lam, m, X_norm=1.0)
        assert 0 < est.epsilon + 3 * est.std_error <= bound
        assert est.epsilon > 0                    # h_S has seen Z_t: its loss there is smaller on average
    # labels in {0, 1}: mapped to -1 / +1 as the classifier does, same estimate
    svm = KernelSVC(C=1 / m, kernel="rbf", gamma=1.0, fit_intercept=False, tol=1e-8)
    a = B.empirical_stability(svm, X, y, n_draws=5, m=m, random_state=2)
    b = B.empirical_stability(svm, X, (y + 1) // 2, n_draws=5, m=m, random_state=2)
    np.testing.assert_allclose(a.differences, b.differences, rtol=1e-12, atol=1e-12)


def test_empirical_stability_of_regularised_logistic_regression_is_below_the_bound():
    # logistic loss ln(1 + e^{-y w.x}): convex, differentiable, L = max ||x|| = 1 after scaling
    from smml.linear import LogisticRegression

    X, y, _ = make_bayes_classification(300, boundary="diagonal", noise=0.1, random_state=4)
    X = X / np.sqrt(2)                                     # ||x|| <= 1 on [-1, 1]^2
    m, lam = 40, 0.5
    est = B.empirical_stability(LogisticRegression(alpha=lam, fit_intercept=False, tol=1e-10), X, y,
                                loss="logistic", n_draws=30, m=m, random_state=0)
    assert 0 < est.epsilon <= B.svm_stability_bound(lam, m, L=1.0)


def test_empirical_stability_errors():
    X = np.zeros((5, 1))
    y = np.arange(5.0)
    for bad in (lambda: B.empirical_stability(DummyRegressor(), X, y, loss="square", m=5),
                lambda: B.empirical_stability(DummyRegressor(), X, y, loss="square", n_draws=0),
                lambda: B.empirical_stability(DummyRegressor(), X, y, loss="square", method="score"),
                lambda: B.empirical_stability(DummyRegressor(), X, y[:4], loss="square"),
                lambda: B.empirical_stability(DummyRegressor(), X, y, loss="nope")):
        with pytest.raises(ValueError):
            bad()


# ---- one_nn_risk_bound's domain (000 "Risk Analysys for Nearest-Neighbor") -----------------

def test_one_nn_risk_bound_names_the_domain_of_000():
    doc = B.one_nn_risk_bound.__doc__
    assert "[-1, 1]^d" in doc and "2 sqrt(d)" in doc
    # the epsilon form at epsilon = 2 m^(-1/(d+1)) is below the final form (000's step (4))
    for d, m in [(1, 100), (3, 10_000)]:
        eps = 2 * m ** (-1 / (d + 1))
        if eps < 1:
            assert B.one_nn_risk_bound(0.1, 1.0, d, m, epsilon=eps) <= B.one_nn_risk_bound(0.1, 1.0, d, m) + 1e-12


# ---- the synthetic distributions (smml.datasets) ------------------------------------------------

def test_known_distribution_rules_eta_and_bayes_risk():
    pts = np.array([[0.5, -0.2], [-0.5, 0.2], [0.1, -0.3], [0.0, 0.0], [0.7, 0.7], [-0.2, -0.9]])
    expect = {"axis": [1, -1, 1, 1, 1, -1], "diagonal": [1, -1, -1, 1, 1, -1],
              "ball": [1, 1, 1, 1, -1, -1], "xor": [-1, -1, -1, 1, 1, 1]}
    for boundary, f in expect.items():
        D = KnownDistribution(n_features=2, boundary=boundary, noise=0.25)
        np.testing.assert_array_equal(D.bayes_predictor(pts), f)
        np.testing.assert_allclose(D.eta(pts), np.where(np.array(f) == 1, 0.75, 0.25))
        # the Bayes predictor of 000 (+1 iff eta >= 1/2) is the rule, the Bayes risk is the noise
        np.testing.assert_array_equal(B.bayes_optimal_predictor(eta=D.eta(pts)), f)
        assert B.bayes_risk(eta=D.eta(pts)) == pytest.approx(0.25) == D.bayes_risk
        assert D.risk(D.bayes_predictor, X=pts) == pytest.approx(0.25)


def test_known_distribution_risk_of_simple_predictors_by_hand():
    nu = 0.1
    # the constant -1 disagrees with f* where f* = +1: P = 1/2 (axis), pi 0.75^2 / 4 (ball, d = 2)
    for boundary, p_plus in [("axis", 0.5), ("diagonal", 0.5), ("xor", 0.5), ("ball", math.pi * 0.5625 / 4)]:
        D = KnownDistribution(n_features=2, boundary=boundary, noise=nu)
        r = D.risk(lambda X: -np.ones(len(X)), n_samples=200_000, random_state=0)
        assert r == pytest.approx(nu + (1 - 2 * nu) * p_plus, abs=0.004)


def test_make_bayes_classification_sample():
    X, y, D = make_bayes_classification(20_000, n_features=3, boundary="ball", noise=0.2, random_state=0)
    assert X.shape == (20_000, 3) and y.shape == (20_000,) and set(np.unique(y)) == {-1, 1}
    assert X.min() >= -1 and X.max() <= 1
    assert D.bayes_risk == 0.2 and D.n_features == 3
    assert np.mean(y != D.bayes_predictor(X)) == pytest.approx(0.2, abs=0.01)    # flipped labels
    X2, y2, _ = make_bayes_classification(20_000, n_features=3, boundary="ball", noise=0.2, random_state=0)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    _, y0, D0 = make_bayes_classification(500, noise=0.0, random_state=1)
    assert D0.bayes_risk == 0.0
    for bad in (dict(boundary="moon"), dict(noise=0.5), dict(noise=-0.1), dict(n_features=0),
                dict(n_features=1, boundary="xor"), dict(n_samples=0)):
        with pytest.raises(ValueError):
            make_bayes_classification(**bad)
    with pytest.raises(ValueError):
        D.bayes_predictor(np.zeros((3, 2)))


# ---- the decomposition of 000 "Overfitting and underfitting" ------------------------------------

def test_risk_decomposition_of_a_stump_against_the_hand_computed_best_in_class():
    # depth-1 trees on the diagonal rule: the best split x_1 >= c disagrees with f* on an area
    # (1 - c)^2 / 2 + (1 + c)^2 / 2 = 1 + c^2 of 4, minimal at c = 0: l_D(h*) = nu + (1 - 2 nu) / 4 = 0.3
    from smml.tree import TreeClassifier

    D = KnownDistribution(n_features=2, boundary="diagonal", noise=0.1)
    r = risk_decomposition(TreeClassifier(max_depth=1), D, train_sizes=(20, 200, 2000), n_repeats=4,
                           reference_size=20_000, n_test=20_000, random_state=0)
    assert r.bayes_error == 0.1
    assert r.best_in_class_risk == pytest.approx(0.3, abs=0.01)
    assert r.approximation_error == pytest.approx(0.2, abs=0.01)
    np.testing.assert_allclose(r.risks, r.estimation_error + r.approximation_error + r.bayes_error, atol=1e-15)
    np.testing.assert_allclose(r.risks, r.risks_per_repeat.mean(axis=1))
    assert r.estimation_error[0] > r.estimation_error[-1]
    assert abs(r.estimation_error[-1]) < 0.01
    assert np.all(r.train_errors < r.risks)                   # optimistic training error
    # with the exact best-in-class risk given, no reference fit
    g = risk_decomposition(TreeClassifier(max_depth=1), D, train_sizes=[20, 2000], n_repeats=4,
                           best_in_class_risk=0.3, n_test=20_000, random_state=0)
    assert g.reference_size is None and g.approximation_error == pytest.approx(0.2)
    assert np.all(g.estimation_error > -0.01)


def test_risk_decomposition_for_knn_and_trees_as_m_grows():
    from smml.neighbors import KNNClassifier
    from smml.tree import TreeClassifier

    D = KnownDistribution(n_features=2, boundary="ball", noise=0.1)
    kw = dict(train_sizes=(25, 400, 1600), n_repeats=2, reference_size=5000, n_test=5000, random_state=0)
    one_nn = risk_decomposition(KNNClassifier(n_neighbors=1), D, **kw)
    # 1-NN: asymptotically between l* and 2 l* (000): the large-sample proxy for h* is near 2 nu (1 - nu)
    assert D.bayes_risk < one_nn.best_in_class_risk <= 2 * D.bayes_risk + 0.03
    assert one_nn.estimation_error[0] > one_nn.estimation_error[-1]
    # k_m = sqrt(m) (consistent, 000): closer to the Bayes risk at the largest size than 1-NN
    knn = risk_decomposition(lambda m: KNNClassifier(n_neighbors=B.knn_consistent_k(m)), D, **kw)
    assert knn.risks[-1] < one_nn.risks[-1]
    # a depth-2 tree cannot follow the ball: large approximation error; a full tree much smaller
    shallow = risk_decomposition(TreeClassifier(max_depth=2), D, **kw)
    deep = risk_decomposition(TreeClassifier(), D, **kw)
    assert shallow.approximation_error > 0.05 > deep.approximation_error - 0.05
    assert deep.approximation_error < shallow.approximation_error


def test_risk_decomposition_errors():
    from smml.tree import TreeClassifier

    D = KnownDistribution(n_features=2, boundary="axis", noise=0.1)
    for bad in (dict(train_sizes=[]), dict(train_sizes=[0, 5]), dict(train_sizes=[0.5]), dict(n_repeats=0),
                dict(n_test=0), dict(reference_size=0), dict(best_in_class_risk=1.5)):
        with pytest.raises(ValueError):
            risk_decomposition(TreeClassifier(), D, **bad)
    with pytest.raises(ValueError):
        risk_decomposition(TreeClassifier(), object())
    with pytest.raises(ValueError):
        risk_decomposition(lambda m: 3, D, train_sizes=[5], best_in_class_risk=0.1, n_test=10)


# ---- docs: names exported, examples run ------------------------------------------------------

NEW = [(B, "hoeffding_one_sided_epsilon"), (B, "hoeffding_upper_bound"), (B, "halfspace_vc_dimension"),
       (B, "vc_bound"), (B, "vc_sample_complexity"), (B, "svm_consistent_lambda"), (B, "empirical_stability"),
       (B, "StabilityEstimate"), (DS, "make_bayes_classification"), (DS, "KnownDistribution"),
       (MS, "risk_decomposition"), (MS, "RiskDecompositionResult")]


@pytest.mark.parametrize("mod, name", NEW, ids=[n for _, n in NEW])
def test_new_names_are_public_documented_and_their_examples_run(mod, name):
    assert name in mod.__all__
    obj = getattr(mod, name)
    doc = obj.__doc__
    assert doc and doc.strip().splitlines()[0].strip()               # a summary line (numpydoc SS01)
    assert any(src in doc for src in ("000", "001", "002", "003")) or isinstance(obj, type)
    if "Examples" in doc:
        finder = doctest.DocTestFinder(recurse=False)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        for test in finder.find(obj, name, globs={}):
            runner.run(test)
        assert runner.failures == 0


@pytest.mark.filterwarnings("error")
def test_extreme_arguments_give_the_float_answer_or_a_clear_error():
    # regressions found by fuzzing the public bounds with extreme finite arguments
    import math
    import subprocess
    import sys
    from smml.bounds import (adaboost_rounds_for_zero_error, hoeffding_test_size,
                             kernel_perceptron_convergence_bound, kernel_perceptron_mistake_bound,
                             perceptron_convergence_bound, perceptron_mistake_bound, svm_stability_bound)
    # hoeffding_test_size(1e-20) looped for ever (steps of 1 past 2^53); now the smallest n, found by
    # bisection, for any epsilon whose n float64 can count, and a ValueError beyond (in a child with
    # a deadline, so that a regression fails instead of hanging the run)
    code = """if True:
        import math
        from smml.bounds import hoeffding_epsilon, hoeffding_test_size
        for eps in (1e-5, 1e-10, 1e-20, 1e-140):
            n = hoeffding_test_size(eps)
            assert hoeffding_epsilon(n) <= eps < hoeffding_epsilon(n // 2)
            assert abs(n / (math.log(2 / 0.05) / (2 * eps * eps)) - 1) < 1e-9     # the formula's ceiling
        assert [hoeffding_test_size(e) for e in (0.05, 0.5, 10.0)] == [738, 8, 1]
        print("ok")"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
    with pytest.raises(ValueError, match="too small"):
        hoeffding_test_size(1e-150)
    # a float32 epsilon made the tail's sum float32 ("overflow encountered in cast")
    from smml.bounds import one_nn_risk_bound
    assert one_nn_risk_bound(0.1, 1.0, 200, 10, epsilon=np.float32(0.5)) == one_nn_risk_bound(0.1, 1.0, 200, 10, 0.5)
    assert hoeffding_test_size(np.float32(0.5)) == 8
    assert one_nn_risk_bound(0.1, 1.0, 2, 10_000, epsilon=np.float32(0.5)) == one_nn_risk_bound(0.1, 1.0, 2, 10_000, 0.5)
    # ZeroDivisionError / OverflowError before: the float answer, inf
    assert adaboost_rounds_for_zero_error(1000, 1e-300) == math.inf
    assert svm_stability_bound(0.1, 1000, L=1e200) == math.inf
    # scale-free bounds of a separator u / g: the same for any scale (u = 1e-200 gave 0.0)
    X, y = np.array([[1.0, 0.0], [-1.0, 0.0]]), np.array([1, -1])
    for s in (1e-200, 1.0, 1e200):
        assert perceptron_convergence_bound(X, y, u=np.array([s, 0.0])) == 1.0
        assert kernel_perceptron_convergence_bound(X @ X.T, y, np.array([s, 0.0])) == 1.0
    # the mistake bounds depend on the scale: H + (||u|| R)^2 + ||u|| R sqrt(H) (u = 1e200 gave nan)
    for f, a in ((perceptron_mistake_bound, X), (kernel_perceptron_mistake_bound, X @ X.T)):
        assert f(a, y, np.array([1e200, 0.0])) == math.inf
        assert f(a, y, np.array([1e-200, 0.0])) == 2.0
