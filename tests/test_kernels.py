"""Tests of smml.kernels against the notes (003 sections 11-12), the plain-Python
references, smml.linear and scikit-learn."""
import os
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.metrics.pairwise import polynomial_kernel as sk_poly, rbf_kernel
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

import smml.bounds as B
import smml.kernels as K
from smml._core import _kernel_methods as CK
from smml._core._sums import row_norms_sq
from smml.linear import Pegasos, RidgeRegression
from smml.linear._base import _check_rng
from smml.linear._pegasos import _step_indices
from smml.reference import kernels as R


# ---- data -------------------------------------------------------------------------------

def xor_data(rng, n=80, d=4, flip=0.0):
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    if flip:
        f = rng.random(n) < flip
        y[f] *= -1
    return X, y


def sphere_data(rng, n=300, d=5):
    X = rng.standard_normal((n, d))
    return X, np.where((X ** 2).sum(1) > d, 1, -1)


def gauss_gram(X, gamma):
    """exp(-gamma ||x - x'||^2), scikit-learn's gamma (as smml's)."""
    return rbf_kernel(X, gamma=gamma)


def primal_C(Km, y, coef, b, C):
    """libsvm's primal value 1/2 ||g||^2 + C sum hinge, float64, from the exact Gram matrix."""
    f = Km @ coef
    return 0.5 * coef @ f + C * np.maximum(0.0, 1.0 - y * (f + b)).sum()


def full_coef(est, m, problem=0):
    c = np.zeros(m)
    c[est.support_] = est.dual_coef_[problem]
    return c


# ---- scikit-learn compatibility -----------------------------------------------------------

ESTIMATORS = [K.KernelPerceptron(), K.KernelPerceptron(shuffle=True, random_state=0, budget=20),
              K.KernelRidge(), K.KernelRidge(kernel="polynomial", degree=2, fit_intercept=True),
              K.KernelPegasos(random_state=0), K.KernelPegasos(average=True, kernel="linear", random_state=0),
              K.KernelSVC(), K.KernelSVC(fit_intercept=False, cache_size=0.001),
              K.KernelSVC(class_weight="balanced", gamma="auto")]

_NO_BUDGET_STREAM = ("partial_fit does not take a budget (the stream would have to replay the "
                     "budget's removals, summed in fit's order); KernelPerceptron(budget=None) "
                     "passes this check")
_SVC_WEIGHTS = ("SMO stops at tol: a weight k (one dual variable boxed by k C) and k copies (k "
                "variables boxed by C) reach the same optimum only to tol, not to this check's "
                "1e-7 (scikit-learn's SVC fails this check for the same reason); the equivalence "
                "is tested at tol=1e-10 in test_svc_sample_weight_*")


def _expected_failed(est):
    if isinstance(est, K.KernelPerceptron) and est.budget is not None:
        return {c: _NO_BUDGET_STREAM for c in ["check_fit_score_takes_y", "check_n_features_in_after_fitting",
                                               "check_estimators_partial_fit_n_features"]}
    if isinstance(est, K.KernelSVC):
        return {"check_sample_weight_equivalence_on_dense_data": _SVC_WEIGHTS}
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---- kernel functions ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_functions_match_definitions(rng, dtype):
    X = rng.standard_normal((70, 6)).astype(dtype)
    Y = rng.standard_normal((40, 6)).astype(dtype)
    X64, Y64 = X.astype(float), Y.astype(float)
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    G = K.gaussian_kernel(X, Y, gamma=1 / 3.4)         # 003's width 1.7
    assert G.dtype == dtype and G.shape == (70, 40)
    assert_allclose(G, rbf_kernel(X64, Y64, gamma=1 / 3.4), rtol=rtol, atol=1e-7 if dtype == np.float32 else 0)
    assert_allclose(K.polynomial_kernel(X, Y, degree=3), sk_poly(X64, Y64, degree=3, gamma=1, coef0=1),
                    rtol=rtol * 10, atol=1e-4 if dtype == np.float32 else 0)
    assert_allclose(K.linear_kernel(X, Y), X64 @ Y64.T, rtol=rtol, atol=1e-12 if dtype == np.float64 else 1e-5)
    # against the plain definitions, entry by entry
    Kr = R.gram(X64[:8], Y64[:5], R.make_kernel("gaussian", gamma=1.7))
    assert_allclose(G[:8, :5], Kr, rtol=rtol)
    Kr = R.gram(X64[:8], Y64[:5], R.make_kernel("polynomial", degree=3))
    assert_allclose(K.polynomial_kernel(X, Y, degree=3)[:8, :5], Kr, rtol=rtol * 10)


def test_gram_symmetric_exact_diagonal(rng):
    X = 1e3 + rng.standard_normal((300, 5))          # large offset: centring keeps the Gaussian accurate
    G = K.gaussian_kernel(X, gamma=1.0)
    assert_array_equal(G, G.T)
    assert_array_equal(np.diag(G), 1.0)
    assert_allclose(G, gauss_gram(X - X.mean(0), 1.0), rtol=1e-12, atol=1e-300)
    P = K.polynomial_kernel(X[:50] / 1e3, degree=2)
    assert_array_equal(P, P.T)


def test_vectorised_exp_is_accurate(rng):
    # the tile's exp: within 1 ulp of libm's on normal results, libm's beyond. With X = 0 the
    # tile's argument is exactly -gamma (y * y), y * y rounded as row_norms_sq rounds it
    import math
    y = np.sqrt(np.concatenate([rng.uniform(0, 1400, 3000), [0.0, 1e-300, 1416.0, 1417.0, 1490.0, 1e6]]))
    G = K.gaussian_kernel(np.zeros((1, 1)), y[:, None], gamma=1.0)[0]
    ref = np.array([math.exp(-(v * v)) for v in y])
    normal = ref > np.finfo(float).tiny
    assert np.all(np.abs(G[normal] - ref[normal]) <= np.spacing(ref[normal]))
    assert_array_equal(G[~normal], ref[~normal])


def test_gram_kernel_fill_modes_and_threads(rng):
    X = rng.standard_normal((301, 7))
    xn = row_norms_sq(X)
    full = np.empty((301, 301))
    CK.gram(X, X, 2, 1, 0.3, xn, xn, full, 0, 1)
    mirrored = np.empty((301, 301))
    CK.gram(X, X, 2, 1, 0.3, xn, xn, mirrored, 2, 2)
    lower = np.full((301, 301), np.nan)
    CK.gram(X, X, 2, 1, 0.3, xn, xn, lower, 1, 2)
    assert_allclose(mirrored, full, rtol=1e-14)
    assert_array_equal(np.tril(lower), np.tril(mirrored))
    assert np.all(np.isnan(np.triu(lower, 1)[np.triu_indices(301, 1)]))
    coef = rng.standard_normal((301, 3))
    outs = []
    for nt in (1, 2, 3):
        out = np.empty((301, 3))
        CK.decision(X, X, 2, 1, 0.3, xn, xn, coef, out, nt)
        outs.append(out)
    assert_array_equal(outs[0], outs[1])
    assert_array_equal(outs[0], outs[2])
    assert_allclose(outs[0], full @ coef, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda X: K.gaussian_kernel(X, gamma=0.0), lambda X: K.gaussian_kernel(X, gamma=-1.0),
    lambda X: K.gaussian_kernel(X, gamma=np.nan), lambda X: K.polynomial_kernel(X, degree=0),
    lambda X: K.polynomial_kernel(X, degree=2.5), lambda X: K.polynomial_kernel(X, degree=True),
    lambda X: K.polynomial_kernel(X, degree=2 ** 40),
    lambda X: K.linear_kernel(X, X[:, :2]), lambda X: K.linear_kernel(np.where(X > 0, np.nan, X)),
])
def test_kernel_functions_reject_bad_input(call):
    with pytest.raises(ValueError):
        call(np.random.default_rng(0).standard_normal((5, 3)))


# ---- kernel Perceptron (Algorithm 4) ---------------------------------------------------------

def _ref_perceptron(X, y, est, orders):
    yy = np.where(y == est.classes_[1], 1, -1)
    width = 1.0 / (2.0 * est.gamma_)              # the reference keeps 003's width
    name = {"rbf": "gaussian", "poly": "polynomial"}.get(est.kernel, est.kernel)
    Kf = R.make_kernel(name, est.degree, width)
    return R.kernel_perceptron(X, list(yy), orders, Kf, budget=est.budget)


@pytest.mark.parametrize("kernel", ["rbf", "gaussian", "poly", "polynomial", "linear"])
def test_kernel_perceptron_matches_algorithm_4(rng, kernel):
    X, y = xor_data(rng, 60, 3, flip=0.05)
    est = K.KernelPerceptron(kernel=kernel, degree=2, gamma=1 / 3, max_iter=6).fit(X, y)
    S, mistakes, epochs = _ref_perceptron(X, y, est, [list(range(60))] * 6)
    counts = np.bincount(S, minlength=60)
    assert est.n_mistakes_ == mistakes and est.n_iter_ == epochs
    assert_array_equal(est.support_, np.flatnonzero(counts))
    assert_array_equal(est.support_counts_, counts[counts > 0])
    yy = np.where(y == 1, 1, -1)
    assert_array_equal(est.dual_coef_[0], (counts * yy)[counts > 0])


def test_kernel_perceptron_shuffle_budget_and_tiny_cache(rng):
    X, y = xor_data(rng, 50, 3, flip=0.1)
    kw = dict(gamma=0.5, max_iter=5, shuffle=True, budget=7)
    est = K.KernelPerceptron(random_state=np.random.default_rng(11), **kw).fit(X, y)
    r = np.random.default_rng(11)
    orders = [list(r.permutation(50)) for _ in range(5)]
    S, mistakes, epochs = _ref_perceptron(X, y, est, orders)
    assert len(S) == 7 and est.support_counts_.sum() == 7
    assert est.n_mistakes_ == mistakes
    assert_array_equal(est.support_, np.unique(S))
    # a 2-row cache (rows evicted and recomputed all the time) changes nothing
    small = K.KernelPerceptron(random_state=np.random.default_rng(11), cache_size=1e-6, **kw).fit(X, y)
    assert_array_equal(small.dual_coef_, est.dual_coef_)
    assert small.n_mistakes_ == est.n_mistakes_
    # a budget larger than S can ever grow (m * max_iter) is no budget
    kw_nb = dict(gamma=0.5, max_iter=5)
    big = K.KernelPerceptron(budget=2 ** 60, **kw_nb).fit(X, y)
    none = K.KernelPerceptron(**kw_nb).fit(X, y)
    assert_array_equal(big.dual_coef_, none.dual_coef_)


def test_kernel_perceptron_sgn_zero_is_minus_one():
    # Algorithm 4: the first example meets S = {} (score 0, y_hat = -1): a mistake only if y = +1
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    est = K.KernelPerceptron(kernel="linear", max_iter=1).fit(X, ["neg", "pos"])
    assert est.n_mistakes_ == 1 and list(est.support_) == [1]
    est = K.KernelPerceptron(kernel="linear", max_iter=1).fit(X[::-1], ["pos", "neg"])
    assert est.n_mistakes_ == 1
    # score exactly 0 on a new point orthogonal to the support: classes_[0]
    assert est.predict([[0.0, 0.0]])[0] == "neg"
    assert est.decision_function([[0.0, 0.0]])[0] == 0.0


def test_kernel_perceptron_predicts_like_reference(rng):
    X, y = xor_data(rng, 60, 3)
    y = np.array(["a", "b"])[(y > 0).astype(int)]
    est = K.KernelPerceptron(max_iter=30).fit(X, y)
    ref = R.KernelPerceptron(max_epochs=30).fit(X, y)          # the reference keeps the notes' names
    Xt = rng.standard_normal((40, 3))
    assert_array_equal(est.predict(Xt), ref.predict(Xt))
    assert_array_equal(est.predict(X), ref.predict(X))


def test_kernel_perceptron_user_kernel_resumes(rng):
    X, y = xor_data(rng, 40, 3, flip=0.1)
    calls = []

    def kern(A, B):
        calls.append(A.shape[0])
        return rbf_kernel(A, B, gamma=0.25)

    a = K.KernelPerceptron(kernel=kern, max_iter=4, cache_size=1e-6).fit(X, y)
    b = K.KernelPerceptron(gamma=0.25, max_iter=4).fit(X, y)
    assert len(calls) > 0
    assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-10, atol=1e-10)


def test_kernel_perceptron_mistake_bounds(rng):
    # separable with margin in H_K: g from a hard-margin SVM without bias
    X, y = xor_data(rng, 60, 2)
    gamma = 1.0
    svm = K.KernelSVC(C=1e6, gamma=gamma, fit_intercept=False, tol=1e-6).fit(X, y)
    Km = gauss_gram(X, gamma)
    yy = np.where(y == 1, 1.0, -1.0)
    coef = full_coef(svm, 60)
    bound = B.kernel_perceptron_convergence_bound(Km, yy, coef)
    est = K.KernelPerceptron(gamma=gamma, max_iter=10_000).fit(X, y)
    assert est.converged_ and est.n_mistakes_ <= bound
    # any stream, any g: one epoch, the hinge-loss bound
    Xn, yn = xor_data(rng, 80, 2, flip=0.2)
    Kn = gauss_gram(Xn, gamma)
    ynn = np.where(yn == 1, 1.0, -1.0)
    one = K.KernelPerceptron(gamma=gamma, max_iter=1).fit(Xn, yn)
    for c in (np.zeros(80), 0.1 * ynn, full_coef(K.KernelSVC(gamma=gamma, fit_intercept=False).fit(Xn, yn), 80)):
        assert one.n_mistakes_ <= B.kernel_perceptron_mistake_bound(Kn, ynn, c)


def test_kernel_perceptron_bound_checks_inputs():
    Km = np.eye(2)
    with pytest.raises(ValueError, match="separate"):
        B.kernel_perceptron_convergence_bound(Km, [1, -1], [-1.0, 1.0])
    with pytest.raises(ValueError, match="labels"):
        B.kernel_perceptron_mistake_bound(Km, [1, 0], [1.0, 1.0])
    with pytest.raises(ValueError, match="shapes"):
        B.kernel_perceptron_mistake_bound(Km, [1, -1, 1], [1.0, 1.0])
    with pytest.raises(ValueError, match="semidefinite"):
        B.kernel_perceptron_mistake_bound(-Km, [1, -1], [1.0, 1.0])
    # margins 2, ||g||^2 = 8, max K_tt = 1: 8 / 2^2 = 2
    assert B.kernel_perceptron_convergence_bound(Km, [1, -1], [2.0, -2.0]) == pytest.approx(2.0)


def test_kernel_perceptron_multiclass(rng):
    X = rng.standard_normal((90, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    est = K.KernelPerceptron(gamma=1.0, max_iter=50).fit(X, y)
    assert est.dual_coef_.shape[0] == 3 and est.decision_function(X).shape == (90, 3)
    assert est.n_mistakes_.shape == (3,)
    assert est.score(X, y) > 0.9


# ---- kernel Pegasos ------------------------------------------------------------------------

@pytest.mark.parametrize("average", [False, True])
def test_kernel_pegasos_equals_linear_pegasos(rng, average):
    X, y = xor_data(rng, 70, 4)
    y = np.where(X @ [1.0, -2.0, 0.5, 0.3] > 0, 1, -1)
    lin = Pegasos(alpha=0.05, max_iter=700, average=average, fit_intercept=False, random_state=5).fit(X, y)
    ker = K.KernelPegasos(alpha=0.05, max_iter=700, average=average, kernel="linear", random_state=5).fit(X, y)
    w = ker.dual_coef_[0] @ X[ker.support_]
    assert_allclose(w, lin.coef_[0], rtol=1e-11, atol=1e-12)
    Xt = rng.standard_normal((30, 4))
    assert_allclose(ker.decision_function(Xt), lin.decision_function(Xt), rtol=1e-10, atol=1e-12)
    assert ker.n_iter_ == lin.n_iter_ == 700


def test_kernel_pegasos_step_for_step_like_pegasos(rng):
    # the same violations at every step: kernel Pegasos after T steps equals linear Pegasos after T
    X, y = xor_data(rng, 40, 3)
    y = np.where(X[:, 0] > 0, 1, -1)
    for T in (1, 2, 3, 10, 57):
        lin = Pegasos(alpha=0.1, max_iter=T, fit_intercept=False, random_state=2).fit(X, y)
        ker = K.KernelPegasos(alpha=0.1, max_iter=T, kernel="linear", random_state=2).fit(X, y)
        assert_allclose(ker.dual_coef_[0] @ X[ker.support_], lin.coef_[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("average", [False, True])
def test_kernel_pegasos_matches_reference_rule(rng, average):
    X, y = xor_data(rng, 50, 3, flip=0.1)
    yy = np.where(y == 1, 1.0, -1.0)
    est = K.KernelPegasos(alpha=0.02, max_iter=400, average=average, gamma=1 / 2.6, random_state=9).fit(X, y)
    steps = np.concatenate(list(_step_indices(_check_rng(9), 50, 400)))
    g = R.kernel_pegasos(X, yy, [int(i) for i in steps], 0.02, R.make_kernel("gaussian", gamma=1.3),
                         average=average)
    ref = np.zeros(50)
    for j, c in g.items():
        ref[j] = c
    assert_allclose(full_coef(est, 50), ref, rtol=1e-10, atol=1e-13)


def test_kernel_pegasos_user_kernel_and_small_cache(rng):
    X, y = xor_data(rng, 40, 3, flip=0.1)
    a = K.KernelPegasos(alpha=0.01, max_iter=300, kernel=lambda A, B: (1 + A @ B.T) ** 2, random_state=0,
                        cache_size=1e-6).fit(X, y)
    b = K.KernelPegasos(alpha=0.01, max_iter=300, kernel="poly", degree=2, random_state=0).fit(X, y)
    assert_allclose(a.dual_coef_, b.dual_coef_, rtol=1e-12)
    assert_array_equal(a.support_, b.support_)


def test_kernel_pegasos_reaches_the_svm_objective(rng):
    X, y = sphere_data(rng, 150, 3)
    lam, gamma = 0.01, 0.5
    svm = K.KernelSVC(C=1 / (lam * 150), gamma=gamma, fit_intercept=False, tol=1e-6).fit(X, y)
    peg = K.KernelPegasos(alpha=lam, max_iter=30_000, gamma=gamma, average=True, random_state=0).fit(X, y)
    Km = gauss_gram(X, gamma)
    yy = np.where(y == 1, 1.0, -1.0)
    F_star = R.svm_objective(Km, yy, full_coef(svm, 150), 0.0, lam)
    F_peg = R.svm_objective(Km, yy, full_coef(peg, 150), 0.0, lam)
    assert F_star <= F_peg <= F_star + B.pegasos_bound(lam, 30_000, X_norm=1.0)
    assert svm.objective_ == pytest.approx(F_star, rel=1e-6)


# ---- kernel ridge ---------------------------------------------------------------------------

@pytest.mark.parametrize("fit_intercept", [False, True])
def test_kernel_ridge_linear_equals_ridge(rng, fit_intercept):
    X = rng.standard_normal((60, 5)) + 3.0
    y = X @ rng.standard_normal(5) + 0.3 * rng.standard_normal(60) + 4.0
    kr = K.KernelRidge(alpha=0.7, kernel="linear", fit_intercept=fit_intercept).fit(X, y)
    rr = RidgeRegression(alpha=0.7, fit_intercept=fit_intercept).fit(X, y)
    Xt = rng.standard_normal((20, 5)) + 3.0
    assert_allclose(kr.predict(Xt), rr.predict(Xt), rtol=1e-9, atol=1e-9)
    assert_allclose(kr.dual_coef_ @ X, rr.coef_ if not fit_intercept else kr.dual_coef_ @ X, rtol=1e-9)


@pytest.mark.parametrize("kernel,params,sk", [
    ("rbf", dict(gamma=0.25), dict(kernel="rbf", gamma=0.25)),
    ("gaussian", dict(gamma=0.25), dict(kernel="rbf", gamma=0.25)),
    ("poly", dict(degree=3), dict(kernel="poly", degree=3, gamma=1.0, coef0=1.0)),
    ("linear", {}, dict(kernel="linear")),
])
def test_kernel_ridge_equals_sklearn(rng, kernel, params, sk):
    X = rng.standard_normal((120, 4))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.standard_normal(120)
    kr = K.KernelRidge(alpha=0.3, kernel=kernel, **params).fit(X, y)
    ref = SkKernelRidge(alpha=0.3, **sk).fit(X, y)
    assert_allclose(kr.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
    Xt = rng.standard_normal((50, 4))
    assert_allclose(kr.predict(Xt), ref.predict(Xt), rtol=1e-9, atol=1e-9)
    assert kr.solver_ == "cholesky"


def test_kernel_ridge_matches_reference_closed_form(rng):
    X = rng.standard_normal((40, 3))
    y = rng.standard_normal(40)
    kr = K.KernelRidge(alpha=0.05, gamma=1 / 1.6).fit(X, y)          # the references' width 0.8
    c = R.kernel_ridge_coef(X, y, 0.05, R.make_kernel("gaussian", gamma=0.8))
    assert_allclose(kr.dual_coef_, c, rtol=1e-9, atol=1e-10)
    ref = R.KernelRidge(alpha=0.05, gamma=0.8).fit(X, y)
    assert_allclose(kr.predict(X[:10]), ref.predict(X[:10]), rtol=1e-9)


def test_kernel_ridge_singular_falls_back_to_pseudo_inverse(rng):
    X = np.repeat(rng.standard_normal((10, 2)), 3, axis=0)       # duplicate rows: K singular
    y = np.repeat(rng.standard_normal(10), 3)
    with pytest.warns(UserWarning, match="pseudo-inverse"):
        kr = K.KernelRidge(alpha=0.0, kernel="linear").fit(X, y)
    assert kr.solver_ == "pseudo_inverse"
    Km = X @ X.T
    assert_allclose(kr.dual_coef_, np.linalg.pinv(Km) @ y, rtol=1e-6, atol=1e-8)
    # an indefinite user kernel
    with pytest.warns(UserWarning, match="not positive definite"):
        kr = K.KernelRidge(alpha=0.1, kernel=lambda A, B: -(A @ B.T)).fit(X, y)
    assert np.all(np.isfinite(kr.predict(X)))


def test_kernel_ridge_overflow_is_an_error(rng):
    X = rng.standard_normal((20, 2)) * 1e150
    with pytest.raises(ValueError, match="overflows"):
        K.KernelRidge(kernel="polynomial", degree=3).fit(X, rng.standard_normal(20))


def test_kernel_ridge_large_offset_and_threads(rng):
    X = rng.standard_normal((200, 3)) + 1e4
    y = np.cos(X[:, 0])
    kr1 = K.KernelRidge(alpha=0.1, gamma=0.5, n_jobs=1).fit(X, y)
    kr2 = K.KernelRidge(alpha=0.1, gamma=0.5, n_jobs=2).fit(X, y)
    assert_array_equal(kr1.dual_coef_, kr2.dual_coef_)
    ref = SkKernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X - X.mean(0), y)
    assert_allclose(kr1.dual_coef_, ref.dual_coef_, rtol=1e-7, atol=1e-9)


# ---- kernel SVM --------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel,params,sk", [
    ("rbf", dict(gamma=0.2), dict(kernel="rbf", gamma=0.2)),
    ("poly", dict(degree=2), dict(kernel="poly", degree=2, gamma=1.0, coef0=1.0)),
    ("linear", {}, dict(kernel="linear")),
])
def test_svc_same_objective_and_predictions_as_libsvm(rng, kernel, params, sk):
    X, y = sphere_data(rng, 250, 4)
    X = X / 2
    y = np.where(rng.random(250) < 0.05, -y, y)
    C = 2.0
    est = K.KernelSVC(C=C, kernel=kernel, tol=1e-6, **params).fit(X, y)
    ref = SVC(C=C, tol=1e-6, **sk).fit(X, y)
    Km = {"rbf": lambda: rbf_kernel(X, gamma=0.2), "poly": lambda: sk_poly(X, degree=2, gamma=1, coef0=1),
          "linear": lambda: X @ X.T}[kernel]()
    yy = np.where(y == 1, 1.0, -1.0)
    ours = primal_C(Km, yy, full_coef(est, 250), est.intercept_[0], C)
    c_ref = np.zeros(250)
    c_ref[ref.support_] = ref.dual_coef_[0]
    theirs = primal_C(Km, yy, c_ref, ref.intercept_[0], C)
    assert abs(ours - theirs) <= 1e-6 * abs(theirs)
    assert est.objective_ * C * 250 == pytest.approx(ours, rel=1e-6)
    Xt = rng.standard_normal((300, 4)) / 2
    d_ref = ref.decision_function(Xt)
    d = est.decision_function(Xt)
    clear = np.abs(d_ref) > 1e-3
    assert_array_equal(est.predict(Xt)[clear], ref.predict(Xt)[clear])
    assert np.mean(est.predict(Xt) == ref.predict(Xt)) >= 0.99
    assert_allclose(d, d_ref, atol=1e-3 * max(1.0, np.abs(d_ref).max()))


def test_svc_default_tol_objective_close_to_libsvm(rng):
    X, y = sphere_data(rng, 400, 5)
    est = K.KernelSVC(gamma=0.2).fit(X, y)
    ref = SVC(gamma=0.2).fit(X, y)
    Km = rbf_kernel(X, gamma=0.2)
    yy = np.where(y == 1, 1.0, -1.0)
    c_ref = np.zeros(400)
    c_ref[ref.support_] = ref.dual_coef_[0]
    ours = primal_C(Km, yy, full_coef(est, 400), est.intercept_[0], 1.0)
    theirs = primal_C(Km, yy, c_ref, ref.intercept_[0], 1.0)
    assert abs(ours - theirs) <= 1e-4 * theirs
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.99


def test_svc_takes_C_only_and_objective_uses_lam_1_over_Cm(rng):
    # KernelSVC keeps only scikit-learn's C; objective_ is 003's F with lam = 1 / (C m)
    assert "lam" not in K.KernelSVC().get_params()
    X, y = xor_data(rng, 80, 3, flip=0.1)
    a = K.KernelSVC(C=1.0 / (0.05 * 80), gamma=0.5, tol=1e-8).fit(X, y)
    assert a.C_ == pytest.approx(0.25)
    yy = np.where(y == 1, 1.0, -1.0)
    Km = gauss_gram(X - X.mean(0), 0.5)
    F = R.svm_objective(Km, yy, full_coef(a, 80), a.intercept_[0], 0.05)
    assert a.objective_ == pytest.approx(F, rel=1e-6)


def test_svc_without_bias_is_003s_svm(rng):
    X, y = xor_data(rng, 60, 3, flip=0.1)
    yy = np.where(y == 1, 1.0, -1.0)
    lam, width = 0.02, 1.5                           # 003's lambda and width (the reference's)
    est = K.KernelSVC(C=1 / (lam * 60), gamma=1 / (2 * width), fit_intercept=False, tol=1e-8).fit(X, y)
    Km = np.array(R.gram(X, X, R.make_kernel("gaussian", gamma=width)))
    a = R.svm_coordinate_descent(Km, yy, 1.0 / (lam * 60), tol=1e-13)
    F_ref = R.svm_objective(Km, yy, a * yy, 0.0, lam)
    F = R.svm_objective(Km, yy, full_coef(est, 60), 0.0, lam)
    assert F == pytest.approx(F_ref, rel=1e-7)
    assert est.objective_ == pytest.approx(F_ref, rel=1e-6)
    assert_array_equal(est.intercept_, [0.0])
    assert_allclose(full_coef(est, 60), a * yy, atol=1e-5)
    # on the linear kernel: the linear reference's SVM optimum
    from smml.reference.linear import svm_optimum
    w_ref, F_lin, _ = svm_optimum(X, yy, lam)
    lin = K.KernelSVC(C=1 / (lam * 60), kernel="linear", fit_intercept=False, tol=1e-9).fit(X, y)
    assert lin.objective_ == pytest.approx(F_lin, rel=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_svc_row_cache_shrinking_and_threads_agree(rng, fit_intercept, dtype):
    # float32 with a row cache and shrinking rebuilds gradients through the kernel
    # mat-vec on float32 tiles (it once read an unwritten buffer there)
    X, y = sphere_data(rng, 500, 4)
    X = X.astype(dtype)
    kw = dict(gamma=0.25, fit_intercept=fit_intercept, tol=1e-5)
    full = K.KernelSVC(**kw).fit(X, y)
    rows = K.KernelSVC(cache_size=0.2, **kw).fit(X, y)        # 100 rows of 500
    flat = K.KernelSVC(shrinking=False, **kw).fit(X, y)
    assert rows.objective_ == pytest.approx(full.objective_, rel=1e-6)
    assert flat.objective_ == pytest.approx(full.objective_, rel=1e-6)
    with threadpool_limits(1, user_api="openmp"):
        one = K.KernelSVC(**kw, n_jobs=1).fit(X, y)
    assert_array_equal(one.dual_coef_, full.dual_coef_)
    assert_array_equal(one.intercept_, full.intercept_)


def test_svc_block_fills_thread_invariant(rng):
    # row-cache mode with fills wide enough for several threads: the same iterates
    X, y = sphere_data(rng, 9000, 2)
    kw = dict(gamma=0.5, tol=1e-2, cache_size=4.0, max_iter=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = K.KernelSVC(n_jobs=1, **kw).fit(X, y)
        b = K.KernelSVC(n_jobs=2, **kw).fit(X, y)
    assert a.solver_stats_[0, 1] > 0                 # block fills happened
    assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert a.n_iter_ == b.n_iter_


@pytest.mark.parametrize("cache_size", [1e4, 2.0])
def test_svc_split_selection_passes_match_one_thread(rng, cache_size):
    # the selection passes split the active set over the threads (>= 1,024 positions
    # each here: set_pass_grain, the default is larger) and merge the chunks' picks in chunk
    # order; with every row of the data repeated, equal values of F fall in both chunks, so
    # the merge's tie rule (the last position, as the one-thread pass) decides picks. Full
    # Gram (1e4 MB) and row cache (2 MB: partial rows on a shrunk active set) both.
    from smml._core import _svm
    base, yb = sphere_data(rng, 1500, 2)
    yb[rng.random(1500) < 0.1] *= -1                 # label noise: many iterations, shrinking
    X, y = np.repeat(base, 3, axis=0), np.repeat(yb, 3)
    kw = dict(gamma=1 / 0.6, C=10.0, tol=1e-3, cache_size=cache_size)
    with threadpool_limits(1, user_api="openmp"):
        one = K.KernelSVC(n_jobs=1, **kw).fit(X, y)
    old = _svm.set_pass_grain(1024)
    try:
        two = K.KernelSVC(n_jobs=2, **kw).fit(X, y)
    finally:
        _svm.set_pass_grain(old)
    assert two.solver_stats_[0, 2] > 0               # shrinking happened
    assert two.n_iter_ == one.n_iter_
    assert_array_equal(two.dual_coef_, one.dual_coef_)
    assert_array_equal(two.intercept_, one.intercept_)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_svc_compact_rows_reach_the_full_gram_optimum(rng, dtype):
    # a small row cache with shrinking: rows computed on a shrunk active set are stored
    # compact, and cached rows are re-laid over each smaller active set (in place, from
    # the last few active sets' position maps, else recomputed). A wrong map would steer
    # SMO by wrong kernel values: the optimum would differ from the full Gram matrix's
    # (rows by position, never re-laid).
    X, y = sphere_data(rng, 3000, 4)
    y[rng.random(3000) < 0.1] *= -1
    X = X.astype(dtype)
    kw = dict(gamma=1.0, C=10.0, tol=1e-4)
    full = K.KernelSVC(cache_size=1e4, **kw).fit(X, y)
    rows = K.KernelSVC(cache_size=1.0, **kw).fit(X, y)          # 87 rows of 3,000
    fills, shrinks, relaid = rows.solver_stats_[0, [1, 2, 4]]
    assert fills > 0 and shrinks > 4 and relaid > 0           # more shrinks than kept maps
    assert full.solver_stats_[0, 4] == 0
    assert rows.objective_ == pytest.approx(full.objective_, rel=1e-6)
    assert_array_equal(rows.predict(X), full.predict(X))


def _thp_eligible(addr):
    """THPeligible of the mapping holding addr in /proc/self/smaps (None if not shown)."""
    lo = hi = None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(v, 16) for v in head.split("-"))
            elif head == "THPeligible:" and lo <= addr < hi:
                return int(line.split()[1])
    return None


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="Linux /proc only")
def test_row_cache_storage_asks_for_ordinary_pages():
    # numpy advises huge pages for large buffers; the row cache asks for ordinary ones
    # (a fault on a huge-page buffer may stall on memory compaction)
    from smml.kernels._base import RowCacheArrays
    cache = RowCacheArrays(64, 1 << 16, np.float32)          # 16 MB
    mid = cache.rows.ctypes.data + cache.rows.nbytes // 2
    flag = _thp_eligible(mid)
    if flag is None:
        pytest.skip("this kernel's smaps has no THPeligible field")
    assert flag == 0
    big = np.empty(1 << 22, dtype=np.float32)                 # the same size, numpy's advice
    assert CK.no_hugepages(big.view(np.uint8)) is True
    assert _thp_eligible(big.ctypes.data + big.nbytes // 2) == 0


def test_svc_float32_and_labels(rng):
    X, y = sphere_data(rng, 200, 3)
    lab = np.array(["in", "out"])[(y > 0).astype(int)]
    a = K.KernelSVC(gamma=1 / 3).fit(X.astype(np.float32), lab)
    b = K.KernelSVC(gamma=1 / 3).fit(X, lab)
    assert a.support_vectors_.dtype == np.float32
    assert a.decision_function(X).dtype == np.float32
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-4)
    assert np.mean(a.predict(X) == b.predict(X)) >= 0.99
    assert set(a.predict(X)) <= {"in", "out"}


def test_svc_multiclass_one_vs_rest(rng):
    X = rng.standard_normal((150, 2))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.6, 0.6])
    est = K.KernelSVC(C=3.0, gamma=0.5, tol=1e-6).fit(X, y)
    assert est.dual_coef_.shape[0] == 3 and est.objective_.shape == (3,)
    for c in range(3):
        yc = np.where(y == c, 1, -1)
        ref = SVC(C=3.0, gamma=0.5, tol=1e-6).fit(X, yc)
        Km = rbf_kernel(X, gamma=0.5)
        c_ref = np.zeros(150)
        c_ref[ref.support_] = ref.dual_coef_[0]
        theirs = primal_C(Km, yc.astype(float), c_ref, ref.intercept_[0], 3.0)
        assert est.objective_[c] * 3.0 * 150 == pytest.approx(theirs, rel=1e-6)
    assert_array_equal(est.predict(X), est.classes_[np.argmax(est.decision_function(X), axis=1)])


def test_svc_user_kernels(rng):
    X, y = xor_data(rng, 80, 3, flip=0.05)
    a = K.KernelSVC(kernel=lambda A, B: rbf_kernel(A, B, gamma=0.3), tol=1e-6).fit(X, y)
    b = K.KernelSVC(gamma=0.3, tol=1e-6).fit(X, y)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-6)
    assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-4)
    with pytest.raises(ValueError, match="symmetric"):
        K.KernelSVC(kernel=lambda A, B: A @ B.T + A[:, :1]).fit(X, y)
    with pytest.raises(ValueError, match="shape"):
        K.KernelSVC(kernel=lambda A, B: A @ B.T[:, :2]).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        K.KernelSVC(kernel=lambda A, B: np.full((len(A), len(B)), np.nan)).fit(X, y)
    # an indefinite kernel: libsvm's safeguard, the solver ends (no hang) with a finite predictor
    for fi in (True, False):
        est = K.KernelSVC(kernel=lambda A, B: -rbf_kernel(A, B), fit_intercept=fi, max_iter=100_000).fit(X, y)
        assert np.all(np.isfinite(est.decision_function(X)))


def test_svc_max_iter_warns(rng):
    X, y = sphere_data(rng, 200, 3)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        est = K.KernelSVC(gamma=0.5, max_iter=5).fit(X, y)
    assert est.n_iter_ == 5
    # without the bias, coordinate descent on a nearly rank-one kernel (features far from 0)
    # crawls: it stops at max_iter with the warning, never hangs
    Xf = rng.normal(loc=100, size=(10, 2))
    with pytest.warns(ConvergenceWarning):
        est = K.KernelSVC(kernel="linear", fit_intercept=False, max_iter=20_000).fit(Xf, [0, 1] * 5)
    assert np.all(np.isfinite(est.dual_coef_))


# ---- bad input ------------------------------------------------------------------------------

ALL = [K.KernelPerceptron, K.KernelRidge, K.KernelPegasos, K.KernelSVC]


@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("params", [dict(gamma=0.0), dict(gamma=-1.0), dict(gamma="scal"),
                                    dict(gamma=np.nan), dict(gamma=np.inf),
                                    dict(degree=0), dict(degree=2.5), dict(degree=2 ** 40),
                                    dict(kernel="sigmoid"),
                                    dict(kernel="RBF")])
def test_bad_kernel_parameters(cls, params):
    X = np.random.default_rng(0).standard_normal((10, 2))
    y = np.array([0, 1] * 5)
    with pytest.raises(ValueError, match=list(params)[0]):
        cls(**params).fit(X, y)


@pytest.mark.parametrize("est", [K.KernelSVC(C=0.0), K.KernelSVC(C=-1.0), K.KernelSVC(tol=0.0),
                                 K.KernelSVC(max_iter=0), K.KernelSVC(cache_size=0),
                                 K.KernelSVC(class_weight="balance"), K.KernelSVC(class_weight=[1, 2]),
                                 K.KernelSVC(verbose=-1),
                                 K.KernelPegasos(alpha=0.0), K.KernelPegasos(max_iter=0),
                                 K.KernelPerceptron(budget=0), K.KernelPerceptron(max_iter=0),
                                 K.KernelRidge(alpha=-1.0)])
def test_bad_parameters(est):
    X = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError):
        est.fit(X, np.array([0, 1] * 5))


@pytest.mark.parametrize("cls", [K.KernelPerceptron, K.KernelPegasos, K.KernelSVC])
def test_one_class_and_nan(cls):
    X = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError, match="one class"):
        cls().fit(X, np.ones(10))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls().fit(Xn, np.array([0, 1] * 5))
    est = cls().fit(X, np.array([0, 1] * 5))
    with pytest.raises(ValueError, match="NaN|infinity"):
        est.predict(Xn)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :1])


def test_kernel_pegasos_alpha_too_small_is_an_error():
    X = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match="too small"):
        K.KernelPegasos(alpha=1e-320, max_iter=50, random_state=0).fit(X, [0, 1] * 10)


def test_gamma_scale_is_sklearns_scale(rng):
    X = rng.standard_normal((100, 4)) * 3
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    est = K.KernelSVC(tol=1e-6).fit(X, y)
    assert est.gamma_ == pytest.approx(1 / (4 * X.var()))
    ref = SVC(tol=1e-6).fit(X, y)                      # gamma="scale"
    assert_allclose(est.decision_function(X), ref.decision_function(X), atol=1e-3)
