"""Issue 33 on smml.kernels: scikit-learn's gamma and kernel names, sample_weight and
class_weight (per-row C in the SMO solver), partial_fit (a stream = one pass over the
concatenation), verbose, float32 and type hints."""
import inspect
import typing
from unittest import mock

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

import smml.kernels as K
import smml.kernels._pegasos as P
from smml.reference import kernels as R


@pytest.fixture
def rng():
    return np.random.default_rng(33)


def xor_data(rng, n=80, d=3, flip=0.1):
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, 0)
    f = rng.random(n) < flip
    y[f] = 1 - y[f]
    return X, y


def full_dual(support, dual_coef, m):
    """y_t a_t on all m rows (0 off the support)."""
    c = np.zeros(m)
    c[support] = dual_coef
    return c


def dual_objective(Km, c):
    """The SVM dual's value sum_t a_t - 1/2 a^T Q a, from c = y * a (Q_st = y_s y_t K_st)."""
    return float(np.abs(c).sum() - 0.5 * c @ Km @ c)


def sv_dual_objective(est, gamma):
    """The dual's value from a fitted model's support vectors and dual_coef_ (scikit-learn's
    support_ counts the rows left after dropping zero weights; support_vectors_ are the rows)."""
    S = np.asarray(est.support_vectors_, dtype=float)
    return dual_objective(rbf_kernel(S, gamma=gamma), est.dual_coef_[0])


# ---- gamma and kernel names (the naming scheme) ------------------------------------------

def test_gamma_is_sklearns_and_the_notes_width_is_its_inverse(rng):
    X = rng.standard_normal((30, 4))
    # 003's K_w(x, x') = exp(-||x - x'||^2 / (2 w)) is gamma = 1 / (2 w)
    w = 0.8
    Kw = R.gram(X[:6], X[:5], R.make_kernel("gaussian", gamma=w))
    assert_allclose(K.gaussian_kernel(X[:6], X[:5], gamma=1 / (2 * w)), Kw, rtol=1e-12)
    assert_allclose(K.gaussian_kernel(X, gamma=0.3), rbf_kernel(X, gamma=0.3), rtol=1e-12)
    # the default kernel is unchanged in value: the notes' width 1
    assert_allclose(K.gaussian_kernel(X), R.gram(X, X, R.make_kernel("gaussian", gamma=1.0)), rtol=1e-12)


@pytest.mark.parametrize("cls", [K.KernelSVC, K.KernelRidge, K.KernelPerceptron, K.KernelPegasos])
def test_gamma_scale_auto_and_kernel_synonyms(rng, cls):
    X = 3 * rng.standard_normal((40, 5))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(random_state=0) if cls is K.KernelPegasos else {}
    assert cls().kernel == "rbf" and cls().gamma == "scale"
    assert cls(**kw).fit(X, y).gamma_ == pytest.approx(1 / (5 * X.var()))
    assert cls(gamma="auto", **kw).fit(X, y).gamma_ == pytest.approx(1 / 5)
    a = cls(kernel="rbf", gamma=0.2, **kw).fit(X, y)
    b = cls(kernel="gaussian", gamma=0.2, **kw).fit(X, y)
    assert_array_equal(a.predict(X), b.predict(X))
    a = cls(kernel="poly", degree=2, **kw).fit(X, y)
    b = cls(kernel="polynomial", degree=2, **kw).fit(X, y)
    assert_array_equal(a.predict(X), b.predict(X))


def test_renamed_parameters():
    assert "lam" not in K.KernelSVC().get_params()
    p = K.KernelPegasos().get_params()
    assert {"alpha", "max_iter"} <= set(p) and not {"lam", "n_iter"} & set(p)
    p = K.KernelPerceptron().get_params()
    assert "max_iter" in p and "max_epochs" not in p


@pytest.mark.parametrize("gamma", [0.7, "scale", "auto"])
def test_svc_rbf_reaches_sklearns_dual_objective(rng, gamma):
    # KernelSVC(C=c, kernel="rbf", gamma=g) and SVC(C=c, kernel="rbf", gamma=g): the same problem
    X, y = xor_data(rng, 120, 3)
    c = 2.5
    ours = K.KernelSVC(C=c, kernel="rbf", gamma=gamma, tol=1e-10).fit(X, y)
    ref = SVC(C=c, kernel="rbf", gamma=gamma, tol=1e-10).fit(X, y)
    g = ref._gamma
    assert ours.gamma_ == pytest.approx(g, rel=1e-12)
    Km = rbf_kernel(X, gamma=g)
    d_ours = dual_objective(Km, full_dual(ours.support_, ours.dual_coef_[0], 120))
    d_ref = dual_objective(Km, full_dual(ref.support_, ref.dual_coef_[0], 120))
    assert d_ours == pytest.approx(d_ref, rel=1e-7)
    Xt = rng.standard_normal((200, 3))
    assert_allclose(ours.decision_function(Xt), ref.decision_function(Xt), atol=1e-5)
    assert_array_equal(ours.predict(Xt), ref.predict(Xt))


@pytest.mark.parametrize("gamma", [0.4, "scale"])
def test_kernel_ridge_equals_sklearns_with_the_same_alpha_gamma(rng, gamma):
    X = rng.standard_normal((90, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(90)
    ours = K.KernelRidge(alpha=0.3, kernel="rbf", gamma=gamma).fit(X, y)
    g = ours.gamma_ if gamma == "scale" else gamma          # sklearn's KernelRidge has no "scale"
    ref = SkKernelRidge(alpha=0.3, kernel="rbf", gamma=g).fit(X, y)
    assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=1e-9, atol=1e-11)
    Xt = rng.standard_normal((40, 3))
    assert_allclose(ours.predict(Xt), ref.predict(Xt), rtol=1e-9, atol=1e-11)


# ---- sample_weight: kernel ridge ---------------------------------------------------------

def test_kernel_ridge_sample_weight_equals_sklearn(rng):
    X = rng.standard_normal((70, 3))
    y = X[:, 0] ** 2 + 0.2 * rng.standard_normal(70)
    w = rng.uniform(0.1, 3.0, 70)
    ours = K.KernelRidge(alpha=0.5, gamma=0.6).fit(X, y, sample_weight=w)
    ref = SkKernelRidge(alpha=0.5, kernel="rbf", gamma=0.6).fit(X, y, sample_weight=w)
    assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=1e-9, atol=1e-11)
    Xt = rng.standard_normal((30, 3))
    assert_allclose(ours.predict(Xt), ref.predict(Xt), rtol=1e-9, atol=1e-11)
    # the derivation: (K + alpha W^-1) beta = y
    Km = rbf_kernel(X, gamma=0.6)
    assert_allclose((Km + 0.5 * np.diag(1 / w)) @ ours.dual_coef_, y, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_kernel_ridge_zero_weight_drops_and_integer_weight_repeats(rng, fit_intercept):
    X = rng.standard_normal((50, 2))
    y = np.cos(X[:, 1]) + X[:, 0] + 0.1 * rng.standard_normal(50)
    w = rng.integers(0, 4, 50).astype(float)
    kw = dict(alpha=0.2, gamma="scale", fit_intercept=fit_intercept)
    weighted = K.KernelRidge(**kw).fit(X, y, sample_weight=w)
    rep = np.repeat(np.arange(50), w.astype(int))
    repeated = K.KernelRidge(**kw).fit(X[rep], y[rep])
    Xt = rng.standard_normal((25, 2))
    assert weighted.gamma_ == pytest.approx(repeated.gamma_, rel=1e-12)
    assert_allclose(weighted.predict(Xt), repeated.predict(Xt), rtol=1e-9, atol=1e-10)
    assert_array_equal(weighted.dual_coef_[w == 0], 0.0)
    keep = w > 0
    dropped = K.KernelRidge(**kw).fit(X[keep], y[keep], sample_weight=w[keep])
    assert_allclose(weighted.predict(Xt), dropped.predict(Xt), rtol=1e-10, atol=1e-11)


def test_kernel_ridge_float32(rng):
    X = rng.standard_normal((40, 3)).astype(np.float32)
    y = X[:, 0].astype(float)
    est = K.KernelRidge(alpha=0.1).fit(X, y)
    assert est.predict(X).dtype == np.float32
    ref = K.KernelRidge(alpha=0.1).fit(X.astype(float), y)
    assert_allclose(est.predict(X), ref.predict(X.astype(float)), rtol=1e-4, atol=1e-4)


# ---- sample_weight / class_weight: the SVM (per-row C in the SMO solver) -------------------

def _same_svm(ours, ref, X, m, rng, gamma):
    assert_array_equal(ours.support_vectors_, X[ours.support_])
    assert sv_dual_objective(ours, gamma) == pytest.approx(sv_dual_objective(ref, gamma), rel=1e-7)
    Xt = rng.standard_normal((200, X.shape[1]))
    assert_allclose(ours.decision_function(Xt), ref.decision_function(Xt), atol=1e-5)
    assert_array_equal(ours.predict(Xt), ref.predict(Xt))


def test_svc_sample_weight_equals_libsvm(rng):
    X, y = xor_data(rng, 100, 3)
    w = rng.uniform(0.0, 3.0, 100)
    w[:7] = 0.0
    ours = K.KernelSVC(C=1.5, gamma=0.5, tol=1e-10).fit(X, y, sample_weight=w)
    ref = SVC(C=1.5, gamma=0.5, tol=1e-10).fit(X, y, sample_weight=w)
    _same_svm(ours, ref, X, 100, rng, 0.5)
    # the box 0 <= a_t <= C w_t
    a = np.abs(full_dual(ours.support_, ours.dual_coef_[0], 100))
    assert np.all(a <= 1.5 * w + 1e-12)
    assert not np.isin(np.arange(7), ours.support_).any()


def test_svc_zero_weight_drops_and_integer_weight_repeats(rng):
    X, y = xor_data(rng, 60, 2)
    w = rng.integers(0, 4, 60).astype(float)
    kw = dict(C=0.8, gamma=1.0, tol=1e-10)
    weighted = K.KernelSVC(**kw).fit(X, y, sample_weight=w)
    keep = w > 0
    dropped = K.KernelSVC(**kw).fit(X[keep], y[keep], sample_weight=w[keep])
    Xt = rng.standard_normal((100, 2))
    assert_allclose(weighted.decision_function(Xt), dropped.decision_function(Xt), atol=1e-7)
    assert_array_equal(weighted.support_, np.flatnonzero(keep)[dropped.support_])
    rep = np.repeat(np.arange(60), w.astype(int))
    repeated = K.KernelSVC(**kw).fit(X[rep], y[rep])
    assert_allclose(weighted.decision_function(Xt), repeated.decision_function(Xt), atol=1e-6)
    assert weighted.objective_ * weighted.C_ * keep.sum() == pytest.approx(
        repeated.objective_ * repeated.C_ * len(rep), rel=1e-7)             # the same primal value


@pytest.mark.parametrize("class_weight", ["balanced", {0: 3.0}, {0: 0.5, 1: 2.0}])
def test_svc_class_weight_equals_libsvm(rng, class_weight):
    X, y = xor_data(rng, 90, 3)
    y[:25] = 0                                             # unbalanced
    w = rng.uniform(0.5, 2.0, 90)
    ours = K.KernelSVC(C=2.0, gamma=0.5, tol=1e-10, class_weight=class_weight).fit(X, y, sample_weight=w)
    ref = SVC(C=2.0, gamma=0.5, tol=1e-10, class_weight=class_weight).fit(X, y, sample_weight=w)
    assert_allclose(ours.class_weight_, ref.class_weight_)
    _same_svm(ours, ref, X, 90, rng, 0.5)


def test_svc_class_weight_multiclass_and_bad_values(rng):
    X = rng.standard_normal((90, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    est = K.KernelSVC(class_weight="balanced").fit(X, y)
    counts = np.bincount(y)
    assert_allclose(est.class_weight_, 90 / (3 * counts))
    with pytest.raises(ValueError, match="class_weight"):
        K.KernelSVC(class_weight={7: 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="class_weight"):
        K.KernelSVC(class_weight={0: -1.0}).fit(X, y)
    with pytest.raises(ValueError, match="sample_weight"):
        K.KernelSVC().fit(X, y, sample_weight=-np.ones(90))


def test_svc_verbose_reports_once_per_problem(rng, capsys):
    X, y = xor_data(rng, 80, 3)
    est = K.KernelSVC(tol=1e-4, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "SMO steps" in err and "KKT gap" in err and f"{len(est.support_)} support vectors" in err
    assert 0 <= est.kkt_gap_ < 1e-4
    K.KernelSVC(tol=1e-4).fit(X, y)
    assert capsys.readouterr().err == ""
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    est = K.KernelSVC(verbose=1).fit(X, y3)
    assert capsys.readouterr().err.count("SMO steps") == 3
    assert est.kkt_gap_.shape == (3,) and np.all(est.kkt_gap_ < 1e-3)


def test_svc_verbose_bar_counts_the_solver_steps_and_changes_nothing(rng, capsys, monkeypatch):
    # the solver calls back every _REPORT_EVERY steps (with the GIL); the solution is the same
    from smml.kernels import _svc
    X, y = xor_data(rng, 120, 3)
    quiet = K.KernelSVC(tol=1e-6).fit(X, y)
    capsys.readouterr()
    calls = []
    monkeypatch.setattr(_svc, "_REPORT_EVERY", 7)
    real = _svc._svm.smo

    def spy(*args, report=None, report_every=1000, **kw):
        def rec(steps, n_active):
            calls.append((steps, n_active))
            report(steps, n_active)
        return real(*args, report=rec, report_every=report_every, **kw)
    monkeypatch.setattr(_svc._svm, "smo", spy)
    loud = K.KernelSVC(tol=1e-6, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "SMO 1/1" in err and "step" in err
    assert [s for s, _ in calls] == list(range(7, loud.n_iter_ + 1, 7))
    assert all(1 <= a <= 120 for _, a in calls)
    assert np.array_equal(loud.dual_coef_, quiet.dual_coef_) and loud.intercept_ == quiet.intercept_
    assert loud.n_iter_ == quiet.n_iter_ >= 7


def test_svc_kkt_gap_without_bias(rng):
    X, y = xor_data(rng, 80, 3)
    est = K.KernelSVC(fit_intercept=False, tol=1e-6).fit(X, y)
    assert 0 <= est.kkt_gap_ < 1e-6


# ---- partial_fit: a stream of chunks = one pass over the concatenation ----------------------

def _elementwise_rbf(A, B):
    # every entry computed on its own (no gemm): the same value whatever the block
    return np.exp(-0.4 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def _stream(est, X, y, cuts, classes):
    for part in np.split(np.arange(len(y)), cuts):
        est.partial_fit(X[part], y[part], classes=classes)
    return est


@pytest.mark.parametrize("labels", ["binary", "three"])
def test_kernel_perceptron_stream_is_one_pass_bit_for_bit(rng, labels):
    X = rng.standard_normal((240, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int) if labels == "binary" else np.digitize(X[:, 0], [-0.4, 0.4])
    cuts = [1, 60, 61, 150]
    one = K.KernelPerceptron(kernel=_elementwise_rbf, max_iter=1).fit(X, y)
    st = _stream(K.KernelPerceptron(kernel=_elementwise_rbf), X, y, cuts, np.unique(y))
    assert_array_equal(st.support_, one.support_)
    assert_array_equal(st.dual_coef_, one.dual_coef_)
    assert_array_equal(st.n_mistakes_, one.n_mistakes_)
    assert_array_equal(st.decision_function(X), one.decision_function(X))
    # the built-in Gaussian: the stream centres on the first chunk's mean, fit on all rows
    # (kernel values equal to rounding)
    one = K.KernelPerceptron(gamma=0.4, max_iter=1).fit(X, y)
    st = _stream(K.KernelPerceptron(gamma=0.4), X, y, cuts, np.unique(y))
    assert_array_equal(st.support_, one.support_)
    assert_array_equal(st.dual_coef_, one.dual_coef_)
    assert_allclose(st.decision_function(X), one.decision_function(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("average", [False, True])
def test_kernel_pegasos_stream_is_one_pass_bit_for_bit(rng, average):
    X, y = xor_data(rng, 200, 3)

    def in_order(rng_, m, n_steps):             # fit's draws replaced by one pass in order
        yield np.arange(m, dtype=np.intp)

    with mock.patch.object(P, "step_indices", in_order):
        one = K.KernelPegasos(alpha=0.01, max_iter=200, average=average, kernel=_elementwise_rbf).fit(X, y)
    st = _stream(K.KernelPegasos(alpha=0.01, average=average, kernel=_elementwise_rbf), X, y,
                 [3, 90, 91], [0, 1])
    assert st.n_iter_ == one.n_iter_ == 200
    assert_array_equal(st.support_, one.support_)
    assert_array_equal(st.dual_coef_, one.dual_coef_)
    assert_array_equal(st.decision_function(X), one.decision_function(X))


def test_partial_fit_continues_a_fit(rng):
    X, y = xor_data(rng, 150, 3)
    a = K.KernelPerceptron(kernel=_elementwise_rbf, max_iter=1).fit(X[:70], y[:70]).partial_fit(X[70:], y[70:])
    b = _stream(K.KernelPerceptron(kernel=_elementwise_rbf), X, y, [70], [0, 1])
    assert_array_equal(a.dual_coef_, b.dual_coef_)
    assert_array_equal(a.support_, b.support_)


@pytest.mark.parametrize("cls", [K.KernelPerceptron, K.KernelPegasos])
def test_partial_fit_checks(rng, cls):
    X, y = xor_data(rng, 40, 3)
    with pytest.raises(ValueError, match="classes"):
        cls().partial_fit(X, y)
    est = cls().partial_fit(X[:20], y[:20], classes=[0, 1])
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[20:, :2], y[20:])
    with pytest.raises(ValueError, match="not in classes_"):
        est.partial_fit(X[20:], y[20:] + 5)
    # a label absent from the first chunk is fine when classes named it
    est = cls().partial_fit(X[y == 0], y[y == 0], classes=[0, 1]).partial_fit(X[y == 1], y[y == 1])
    assert list(est.classes_) == [0, 1]
    # float32 streams stay float32
    est = cls().partial_fit(X.astype(np.float32), y, classes=[0, 1])
    assert est.decision_function(X.astype(np.float32)).dtype == np.float32
    # a fit ends the stream: the next partial_fit continues that fit
    est.fit(X, y)
    assert est._stream is None


def test_partial_fit_budget_is_refused(rng):
    X, y = xor_data(rng, 20, 2)
    with pytest.raises(ValueError, match="budget"):
        K.KernelPerceptron(budget=5).partial_fit(X, y, classes=[0, 1])


def test_no_sample_weight_on_the_online_learners():
    # documented: the notes' Perceptron and Pegasos have no weighted form
    for cls in (K.KernelPerceptron, K.KernelPegasos):
        assert "sample_weight" not in inspect.signature(cls.fit).parameters
        assert "sample_weight" in cls.__doc__


# ---- float32 and type hints ----------------------------------------------------------------

@pytest.mark.parametrize("cls", [K.KernelSVC, K.KernelPerceptron, K.KernelPegasos])
def test_float32_scores(rng, cls):
    X, y = xor_data(rng, 60, 3)
    est = cls().fit(X.astype(np.float32), y)
    assert est.decision_function(X.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("cls", [K.KernelSVC, K.KernelRidge, K.KernelPerceptron, K.KernelPegasos])
def test_public_api_has_type_hints(cls):
    for name in ["__init__", "fit", "predict"] + (["partial_fit"] if hasattr(cls, "partial_fit") else []):
        hints = typing.get_type_hints(getattr(cls, name))
        assert "return" in hints or name == "__init__", (cls, name)
    assert typing.get_type_hints(cls.__init__)
    for f in (K.gaussian_kernel, K.polynomial_kernel, K.linear_kernel):
        assert typing.get_type_hints(f)["return"] is np.ndarray
