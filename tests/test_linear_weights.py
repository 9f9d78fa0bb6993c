"""Issue 33 for the linear family: sample_weight, class_weight, partial_fit, warm_start, float32
and type hints, tested against the definitions (hand-written runs of the rules, the kernels
run from a given state, repeated rows, dropped rows) and scikit-learn where it agrees."""
import inspect
import typing

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.utils.class_weight import compute_sample_weight

import smml.linear as L
from smml._core import _linear as K


def _data(seed=0, n=60, d=3, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    s = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n)
    cuts = np.quantile(s, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.digitize(s, cuts), rng


def _reg_data(seed=0, n=50, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ np.array([1.0, -2.0, 0.5])[:d] + 0.7 + 0.1 * rng.normal(size=n), rng


def _aug(est):
    return np.hstack([np.atleast_2d(est.coef_), np.reshape(est.intercept_, (-1, 1))])


# every learner that takes sample_weight in this issue, with a deterministic configuration
WEIGHTED = {
    "perceptron": (lambda: L.Perceptron(max_iter=7), "clf"),
    "perceptron-shuffle": (lambda: L.Perceptron(max_iter=7, shuffle=True, random_state=3), "clf"),
    "pegasos": (lambda: L.Pegasos(alpha=0.05, max_iter=500, random_state=1), "clf"),
    "pegasos-avg": (lambda: L.Pegasos(alpha=0.05, max_iter=500, average=True, random_state=1), "clf"),
    "ogd": (lambda: L.OnlineGradientDescent(max_iter=3), "clf"),
    "ogd-strong": (lambda: L.OnlineGradientDescent(loss="logistic", sigma=0.5, radius=5.0, max_iter=2,
                                                   shuffle=True, random_state=2), "clf"),
    "ogd-reg": (lambda: L.OnlineGradientDescentRegressor(max_iter=3), "reg"),
    "lms-batch": (lambda: L.LMSRegressor(max_iter=50), "reg"),
    "lms-sgd": (lambda: L.LMSRegressor(mode="stochastic", max_iter=5, shuffle=True, random_state=0), "reg"),
    "logistic": (lambda: L.LogisticRegression(alpha=0.1), "clf"),
}


def _xy(kind, n_classes=2, seed=0):
    if kind == "clf":
        X, y, rng = _data(seed, n_classes=n_classes)
    else:
        X, y, rng = _reg_data(seed)
    return X, y, rng


# ---- sample_weight --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(WEIGHTED))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_all_ones_weights_are_no_weights_bit_for_bit(name, n_classes):
    make, kind = WEIGHTED[name]
    if kind == "reg" and n_classes == 3:
        pytest.skip("regressor")
    X, y, _ = _xy(kind, n_classes)
    a = make().fit(X, y)
    b = make().fit(X, y, sample_weight=np.ones(len(y)))
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize("name", list(WEIGHTED))
@pytest.mark.parametrize("other", ["ones", "reals"])
def test_zero_weight_is_a_dropped_row(name, other):
    make, kind = WEIGHTED[name]
    X, y, rng = _xy(kind, 3 if kind == "clf" else 2)
    sw = np.ones(len(y)) if other == "ones" else rng.uniform(0.5, 2.0, len(y))
    drop = np.zeros(len(y), dtype=bool)
    drop[[3, 10, 11, 40]] = True
    sw[drop] = 0.0
    a = make().fit(X, y, sample_weight=sw)
    b = make().fit(X[~drop], y[~drop], sample_weight=None if other == "ones" else sw[~drop])
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)


def test_perceptron_weighted_steps_follow_the_definition():
    # w = 0; for t in order: if y_t w.x'_t <= 0 then w <- w + s_t y_t x'_t (x' with the constant 1)
    X, y, rng = _data(4, n=40)
    sw = rng.uniform(0.2, 3.0, len(y))
    est = L.Perceptron(max_iter=4).fit(X, y, sample_weight=sw)
    Xa = np.hstack([X, np.ones((len(y), 1))])
    ypm = np.where(y == 1, 1.0, -1.0)
    w = np.zeros(4)
    ups = 0
    for _ in range(est.n_iter_):
        for t in range(len(y)):
            if ypm[t] * (Xa[t] @ w) <= 0:
                w = w + sw[t] * ypm[t] * Xa[t]
                ups += 1
    assert ups == est.n_updates_
    assert_allclose(_aug(est)[0], w, rtol=1e-12, atol=1e-12)


def test_perceptron_integer_weight_is_not_repeated_rows():
    # documented: a weight 2 is one step of size 2, two copies may update once only
    X = np.array([[1.0, 0.0], [-1.0, 0.2]])
    y = np.array([1, 0])
    a = L.Perceptron(fit_intercept=False, max_iter=1).fit(X, y, sample_weight=[2, 1])
    b = L.Perceptron(fit_intercept=False, max_iter=1).fit(X[[0, 0, 1]], y[[0, 0, 1]])
    assert_array_equal(a.coef_[0], [2.0, 0.0])        # w = 2 x_1, then x_2 is classified right
    assert_array_equal(b.coef_[0], [1.0, 0.0])        # the second copy is already right


def test_lms_weighted_rules_follow_the_definitions():
    X, y, rng = _reg_data(5, n=30)
    sw = rng.uniform(0.2, 3.0, len(y))
    lr = 0.01
    # batch: theta <- theta + lr sum_i s_i (y_i - theta.x'_i) x'_i
    est = L.LMSRegressor(learning_rate=lr, max_iter=3, tol=0).fit(X, y, sample_weight=sw)
    Xa = np.hstack([X, np.ones((len(y), 1))])
    th = np.zeros(4)
    for _ in range(3):
        th = th + lr * Xa.T @ (sw * (y - Xa @ th))
    assert_allclose(np.append(est.coef_, est.intercept_), th, rtol=1e-12)
    # stochastic: theta <- theta + lr s_i (y_i - theta.x'_i) x'_i, rows in turn
    est = L.LMSRegressor(mode="stochastic", learning_rate=lr, max_iter=2, tol=0).fit(X, y, sample_weight=sw)
    th = np.zeros(4)
    for _ in range(2):
        for i in range(len(y)):
            th = th + lr * sw[i] * (y[i] - Xa[i] @ th) * Xa[i]
    assert_allclose(np.append(est.coef_, est.intercept_), th, rtol=1e-12)


def test_lms_batch_integer_weights_are_repeated_rows():
    X, y, rng = _reg_data(6, n=25)
    sw = rng.integers(0, 4, len(y))
    a = L.LMSRegressor(max_iter=200, tol=0).fit(X, y, sample_weight=sw)
    b = L.LMSRegressor(max_iter=200, tol=0).fit(np.repeat(X, sw, axis=0), np.repeat(y, sw))
    assert a.learning_rate_ == pytest.approx(b.learning_rate_, rel=1e-14)
    assert_allclose(a.coef_, b.coef_, rtol=1e-9)
    assert a.intercept_ == pytest.approx(b.intercept_, rel=1e-9)


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_pegasos_integer_weights_are_repeated_rows_bit_for_bit(average, n_classes):
    # weighted sampling: the draws of the repeated data, mapped to their rows
    X, y, rng = _data(7, n=40, n_classes=n_classes)
    sw = rng.integers(0, 4, len(y))
    sw[0] = 2
    a = L.Pegasos(alpha=0.05, max_iter=700, average=average, random_state=11).fit(X, y, sample_weight=sw)
    b = L.Pegasos(alpha=0.05, max_iter=700, average=average, random_state=11).fit(
        np.repeat(X, sw, axis=0), np.repeat(y, sw))
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)


def test_pegasos_real_weights_sample_in_proportion():
    from smml.linear._pegasos import _weighted_step_indices
    sw = np.array([0.5, 1.5, 2.0])
    idx = np.concatenate(list(_weighted_step_indices(np.random.default_rng(0), sw, 200_000)))
    freq = np.bincount(idx, minlength=3) / len(idx)
    assert_allclose(freq, sw / sw.sum(), atol=5e-3)
    # and the fit is the kernel run on exactly these draws
    X, y, rng = _data(8, n=30)
    w = rng.uniform(0.1, 2.0, len(y))
    est = L.Pegasos(alpha=0.1, max_iter=300, random_state=np.random.default_rng(5)).fit(X, y, sample_weight=w)
    steps = np.concatenate(list(_weighted_step_indices(np.random.default_rng(5), w, 300)))
    v, u, state = np.zeros(4), np.zeros(4), np.array([1.0, 0.0, 0.0])
    y8 = np.where(y == 1, 1, -1).astype(np.int8)
    assert K.pegasos_steps(X, y8, steps, v, u, state, 0.1, True, False) == 0
    assert_array_equal(_aug(est)[0], state[0] * v)


def test_pegasos_partial_fit_weighted_steps():
    # stream steps: w_{t+1} = (1 - 1/t) w_t + s_t/(lambda t) y x' I{y w_t.x' < 1}
    X, y, rng = _data(9, n=30)
    sw = rng.uniform(0.2, 2.0, len(y))
    est = L.Pegasos(alpha=0.2).partial_fit(X, y, classes=[0, 1], sample_weight=sw)
    Xa = np.hstack([X, np.ones((len(y), 1))])
    ypm = np.where(y == 1, 1.0, -1.0)
    w = np.zeros(4)
    for t in range(1, len(y) + 1):
        x, yt, s = Xa[t - 1], ypm[t - 1], sw[t - 1]
        hit = yt * (w @ x) < 1
        w = (1 - 1 / t) * w + (s / (0.2 * t) * yt * x if hit else 0.0)
    assert_allclose(_aug(est)[0], w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss", ["hinge", "logistic", "square"])
def test_ogd_weighted_steps_follow_the_definition(loss):
    from smml.losses import hinge, logistic, square
    X, y, rng = _data(10, n=30)
    sw = rng.uniform(0.2, 2.0, len(y))
    est = L.OnlineGradientDescent(loss=loss, learning_rate=0.3, radius=4.0, max_iter=2).fit(X, y, sample_weight=sw)
    Xa = np.hstack([X, np.ones((len(y), 1))])
    ypm = np.where(y == 1, 1.0, -1.0)
    w, t, cum = np.zeros(4), 0, 0.0
    fn = {"hinge": hinge, "logistic": logistic, "square": square}[loss]
    for _ in range(2):
        for i in range(len(y)):
            t += 1
            z = Xa[i] @ w
            cum += sw[i] * float(fn(np.array([ypm[i]]), np.array([z]))[0])
            g = {"hinge": -ypm[i] * (ypm[i] * z < 1), "logistic": -ypm[i] / (1 + np.exp(ypm[i] * z)),
                 "square": 2 * (z - ypm[i])}[loss]
            w = w - 0.3 / np.sqrt(t) * sw[i] * g * Xa[i]
            nrm = np.linalg.norm(w)
            if nrm > 4.0:
                w = w * 4.0 / nrm
    assert_allclose(_aug(est)[0], w, rtol=1e-10, atol=1e-12)
    assert est.cumulative_loss_ == pytest.approx(cum, rel=1e-10)


@pytest.mark.parametrize("name", ["perceptron", "pegasos", "ogd", "ogd-reg", "lms-sgd", "lms-batch"])
def test_partial_fit_sample_weight_chunks_equal_one_call(name):
    make, kind = WEIGHTED[name]
    if name == "ogd-reg":      # "auto" takes the rate from the first chunk: fix it
        make = lambda: L.OnlineGradientDescentRegressor(learning_rate=0.01)  # noqa: E731
    X, y, rng = _xy(kind, 2)
    sw = rng.uniform(0.0, 2.0, len(y))
    sw[5] = 0.0
    kw = {"classes": [0, 1]} if kind == "clf" else {}
    whole = make().partial_fit(X, y, sample_weight=sw, **kw)
    if name == "lms-batch":
        # one batch iteration per call: one call on the concatenation is one step
        assert whole.n_iter_ == 1
        return
    s = make()
    for a in range(0, len(y), 17):
        s.partial_fit(X[a:a + 17], y[a:a + 17], sample_weight=sw[a:a + 17], **kw)
    if "shuffle" in make().get_params() and make().get_params()["shuffle"]:
        return          # shuffled chunks are different orders
    assert_array_equal(s.coef_, whole.coef_)
    assert_array_equal(s.intercept_, whole.intercept_)


def test_sample_weight_validation():
    X, y, _ = _data(0)
    for est in (L.Perceptron(), L.Pegasos(), L.OnlineGradientDescent(), L.LMSRegressor()):
        with pytest.raises(ValueError, match="non-negative"):
            est.fit(X, y, sample_weight=-np.ones(len(y)))
        with pytest.raises(ValueError, match="entries"):
            est.fit(X, y, sample_weight=np.ones(3))
        with pytest.raises(ValueError, match="sums to zero"):
            est.fit(X, y, sample_weight=np.zeros(len(y)))


# ---- class_weight ---------------------------------------------------------------------------------

CLASS_WEIGHTED = {
    "logistic": lambda **kw: L.LogisticRegression(alpha=0.1, **kw),
    "logistic-softmax": lambda **kw: L.LogisticRegression(alpha=0.1, multi_class="softmax", **kw),
    "logistic-sgd": lambda **kw: L.LogisticRegression(alpha=0.1, solver="sgd", max_iter=5, random_state=0, **kw),
    "perceptron": lambda **kw: L.Perceptron(max_iter=5, **kw),
    "pegasos": lambda **kw: L.Pegasos(alpha=0.05, max_iter=400, random_state=2, **kw),
    "ogd": lambda **kw: L.OnlineGradientDescent(max_iter=2, **kw),
}


@pytest.mark.parametrize("name", list(CLASS_WEIGHTED))
@pytest.mark.parametrize("n_classes", [2, 3])
def test_class_weight_dict_is_sample_weight(name, n_classes):
    make = CLASS_WEIGHTED[name]
    X, y, rng = _data(12, n_classes=n_classes)
    cw = {0: 2.5, n_classes - 1: 0.5}
    a = make(class_weight=cw).fit(X, y)
    b = make().fit(X, y, sample_weight=np.array([cw.get(c, 1.0) for c in y]))
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, b.intercept_)
    # with a sample weight as well: the product
    sw = rng.uniform(0.5, 2.0, len(y))
    a = make(class_weight=cw).fit(X, y, sample_weight=sw)
    b = make().fit(X, y, sample_weight=sw * np.array([cw.get(c, 1.0) for c in y]))
    assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("name", list(CLASS_WEIGHTED))
def test_class_weight_balanced(name):
    make = CLASS_WEIGHTED[name]
    X, y, _ = _data(13, n_classes=3)
    y = np.where(np.arange(len(y)) < 10, 0, y)          # unbalanced counts
    counts = np.bincount(y)
    expected = len(y) / (3 * counts)
    assert_allclose(compute_sample_weight("balanced", y), expected[y])
    a = make(class_weight="balanced").fit(X, y)
    b = make().fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    assert_array_equal(a.coef_, b.coef_)


def test_logistic_class_weight_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression as SkLR
    X, y, _ = _data(14, n=80)
    cw = {0: 3.0, 1: 0.7}
    est = L.LogisticRegression(alpha=0.05, class_weight=cw, tol=1e-10).fit(X, y)
    # smml's weighted mean divides by sum s: scikit-learn's C = 1 / (alpha sum s)
    s = np.array([cw[c] for c in y])
    sk = SkLR(C=1.0 / (0.05 * s.sum()), class_weight=cw, tol=1e-12, max_iter=10000).fit(X, y)
    assert_allclose(est.coef_, sk.coef_, rtol=1e-5, atol=1e-7)
    assert_allclose(est.intercept_, sk.intercept_, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("make", [lambda: L.Perceptron(class_weight="balanced"),
                                  lambda: L.Pegasos(class_weight="balanced"),
                                  lambda: L.OnlineGradientDescent(class_weight="balanced")])
def test_partial_fit_refuses_balanced(make):
    X, y, _ = _data(0)
    with pytest.raises(ValueError, match="balanced"):
        make().partial_fit(X, y, classes=[0, 1])


def test_partial_fit_class_weight_dict():
    X, y, _ = _data(15)
    for make in (L.Perceptron, L.Pegasos, L.OnlineGradientDescent):
        a = make(class_weight={1: 3.0}).partial_fit(X, y, classes=[0, 1])
        b = make().partial_fit(X, y, classes=[0, 1], sample_weight=np.where(y == 1, 3.0, 1.0))
        assert_array_equal(a.coef_, b.coef_)


def test_class_weight_validated():
    X, y, _ = _data(0)
    with pytest.raises(ValueError, match="class_weight"):
        L.Perceptron(class_weight="auto").fit(X, y)


# ---- partial_fit of OGD ---------------------------------------------------------------------------

@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("sigma", [None, 0.3])
def test_ogd_partial_fit_chunks_are_one_pass(n_classes, sigma):
    X, y, _ = _data(16, n=101, n_classes=n_classes)
    one = L.OnlineGradientDescent(sigma=sigma, radius=6.0, max_iter=1).fit(X, y)
    s = L.OnlineGradientDescent(sigma=sigma, radius=6.0)
    for a in range(0, 101, 30):
        s.partial_fit(X[a:a + 30], y[a:a + 30], classes=np.arange(n_classes))
    assert_array_equal(s.coef_, one.coef_)
    assert_array_equal(s.intercept_, one.intercept_)
    assert_array_equal(s.cumulative_loss_, one.cumulative_loss_)
    assert s.n_steps_ == one.n_steps_ == 101


def test_ogd_regressor_partial_fit_chunks_are_one_pass():
    X, y, _ = _reg_data(17, n=90)
    one = L.OnlineGradientDescentRegressor(max_iter=1).fit(X[:30], y[:30])
    # learning_rate="auto" comes from the first chunk: compare at that rate
    lr = one.learning_rate_
    one = L.OnlineGradientDescentRegressor(learning_rate=lr, max_iter=1).fit(X, y)
    s = L.OnlineGradientDescentRegressor()
    for a in range(0, 90, 30):
        s.partial_fit(X[a:a + 30], y[a:a + 30])
    assert s.learning_rate_ == lr
    assert_array_equal(s.coef_, one.coef_)
    assert s.intercept_ == one.intercept_
    assert s.n_steps_ == 90


# ---- warm_start ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n_classes", [2, 3])
def test_perceptron_warm_start_runs_from_the_fitted_weights(n_classes):
    X, y, _ = _data(18, n=80, n_classes=n_classes)
    est = L.Perceptron(max_iter=2, warm_start=True).fit(X, y)
    W0 = _aug(est)
    est.set_params(max_iter=3).fit(X, y)
    # the definition: 3 epochs of the Perceptron, in order, from w = W0
    problems = [y == 1] if n_classes == 2 else [y == c for c in range(n_classes)]
    for j, pos in enumerate(problems):
        w = W0[j].copy()
        for _ in range(3):
            n_up, st = K.perceptron_epoch(X, np.where(pos, 1, -1).astype(np.int8),
                                          np.arange(len(y), dtype=np.intp), w, True)
            if n_up == 0:
                break
        assert_array_equal(_aug(est)[j], w)
    # without warm_start: from 0 again
    cold = L.Perceptron(max_iter=3).fit(X, y)
    assert_array_equal(L.Perceptron(max_iter=3, warm_start=False).fit(X, y).coef_, cold.coef_)


def test_perceptron_warm_start_two_fits_equal_one_longer():
    X, y, _ = _data(19, n=80)
    long = L.Perceptron(max_iter=5).fit(X, y)
    assert not long.converged_
    warm = L.Perceptron(max_iter=2, warm_start=True).fit(X, y)
    warm.set_params(max_iter=3).fit(X, y)
    assert_array_equal(warm.coef_, long.coef_)


def test_warm_start_needs_the_same_problem():
    X, y, _ = _data(20, n_classes=3)
    for est in (L.Perceptron(warm_start=True), L.Pegasos(warm_start=True, max_iter=50),
                L.OnlineGradientDescent(warm_start=True), L.LogisticRegression(warm_start=True)):
        est.fit(X, y)
        with pytest.raises(ValueError, match="warm_start"):
            est.fit(X[:, :2], y)
        with pytest.raises(ValueError, match="warm_start"):
            est.fit(X, np.minimum(y, 1))


@pytest.mark.parametrize("average", [False, True])
def test_pegasos_warm_start_continues_the_run(average):
    X, y, _ = _data(21, n=50)
    est = L.Pegasos(alpha=0.1, max_iter=300, average=average, warm_start=True, random_state=4).fit(X, y)
    est.set_params(max_iter=200, random_state=5).fit(X, y)
    assert est.n_iter_ == 500
    # the definition: steps t = 1..300 on the draws of seed 4, then t = 301..500 on those of seed 5
    from smml._random import check_rng, step_indices
    steps = np.concatenate([next(step_indices(check_rng(4), 50, 300)), next(step_indices(check_rng(5), 50, 200))])
    v, u, state = np.zeros(4), np.zeros(4), np.array([1.0, 0.0, 0.0])
    y8 = np.where(y == 1, 1, -1).astype(np.int8)
    assert K.pegasos_steps(X, y8, steps, v, u, state, 0.1, True, average) == 0
    w = (u + state[2] * v) / 500 if average else state[0] * v
    assert_array_equal(_aug(est)[0], w)


@pytest.mark.parametrize("make", [lambda **kw: L.OnlineGradientDescent(radius=5.0, **kw),
                                  lambda **kw: L.OnlineGradientDescentRegressor(**kw)])
def test_ogd_warm_start_continues_the_stream(make):
    X, y, _ = _data(22, n=40) if "Regressor" not in type(make()).__name__ else _reg_data(22, n=40)
    long = make(max_iter=5).fit(X, y)
    warm = make(max_iter=2, warm_start=True).fit(X, y)
    warm.set_params(max_iter=3).fit(X, y)
    assert warm.n_steps_ == long.n_steps_ == 200 and warm.n_iter_ == 3
    assert_array_equal(warm.coef_, long.coef_)
    assert_array_equal(warm.intercept_, long.intercept_)
    assert warm.cumulative_loss_ == long.cumulative_loss_


@pytest.mark.parametrize("mode", ["batch", "stochastic"])
def test_lms_warm_start_continues(mode):
    X, y, _ = _reg_data(23, n=40)
    long = L.LMSRegressor(mode=mode, max_iter=7, tol=0).fit(X, y)
    warm = L.LMSRegressor(mode=mode, max_iter=3, tol=0, warm_start=True).fit(X, y)
    warm.set_params(max_iter=4).fit(X, y)
    assert_array_equal(warm.coef_, long.coef_)
    assert warm.intercept_ == long.intercept_


@pytest.mark.parametrize("multi_class", ["ovr", "softmax"])
def test_logistic_lbfgs_warm_start_reaches_the_same_optimum(multi_class):
    X, y, _ = _data(24, n=90, n_classes=3)
    cold = L.LogisticRegression(alpha=0.05, multi_class=multi_class, tol=1e-10).fit(X, y)
    warm = L.LogisticRegression(alpha=0.5, multi_class=multi_class, tol=1e-10, warm_start=True).fit(X, y)
    warm.set_params(alpha=0.05).fit(X, y)
    assert_allclose(warm.coef_, cold.coef_, rtol=1e-5, atol=1e-6)
    assert_allclose(warm.intercept_, cold.intercept_, rtol=1e-5, atol=1e-6)
    # from the optimum itself L-BFGS has (almost) nothing to do
    again = warm.fit(X, y)
    assert np.max(again.n_iter_) <= 3


def test_logistic_sgd_warm_start_starts_from_the_weights():
    X, y, _ = _data(25, n=60)
    kw = dict(alpha=0.01, solver="sgd", learning_rate=0.05, tol=0)
    long = L.LogisticRegression(max_iter=4, random_state=np.random.default_rng(3), **kw).fit(X, y)
    rng = np.random.default_rng(3)
    warm = L.LogisticRegression(max_iter=2, random_state=rng, warm_start=True, **kw).fit(X, y)
    warm.set_params(max_iter=2).fit(X, y)        # the same Generator: the next two epochs' orders
    assert_array_equal(warm.coef_, long.coef_)


# ---- float32 and tags -----------------------------------------------------------------------------

@pytest.mark.parametrize("est", [L.Perceptron(), L.Pegasos(max_iter=200, random_state=0), L.OnlineGradientDescent(),
                                 L.LogisticRegression(), L.LinearProgramClassifier(soft_margin=True)],
                         ids=lambda e: type(e).__name__)
def test_classifier_scores_follow_the_input_precision(est):
    X, y, _ = _data(26, n=40)
    est.fit(X, y)
    X32 = X.astype(np.float32)
    s32, s64 = est.decision_function(X32), est.decision_function(X)
    assert s32.dtype == np.float32 and s64.dtype == np.float64
    assert_allclose(s32, s64, rtol=1e-4, atol=1e-4)
    if hasattr(est, "predict_proba"):
        assert est.predict_proba(X32).dtype == np.float32
    assert_array_equal(est.predict(X32)[np.abs(s64) > 1e-3], est.predict(X)[np.abs(s64) > 1e-3])


@pytest.mark.parametrize("est", [L.LinearRegression(), L.RidgeRegression(), L.LMSRegressor(),
                                 L.OnlineGradientDescentRegressor(), L.LADRegressor(), L.PolynomialRegression()],
                         ids=lambda e: type(e).__name__)
def test_regressor_predictions_follow_the_input_precision(est):
    X, y, _ = _reg_data(27, n=40)
    est.fit(X, y)
    p32, p64 = est.predict(X.astype(np.float32)), est.predict(X)
    assert p64.dtype == np.float64
    if isinstance(est, L.PolynomialRegression):
        assert p32.dtype == np.float64        # the feature map is computed in float64
    else:
        assert p32.dtype == np.float32
    assert_allclose(p32, p64, rtol=1e-4, atol=1e-4)


def test_perceptron_learns_float32_in_float32():
    X, y, _ = _data(28)
    est = L.Perceptron().fit(X.astype(np.float32), y)
    assert est.coef_.dtype == np.float32
    assert est.decision_function(X.astype(np.float32)).dtype == np.float32


def test_no_preserves_dtype_tag():
    # preserves_dtype is a transformer tag (the dtype of transform's output); no linear estimator
    # transforms, so none may claim it
    for name in L.__all__:
        cls = getattr(L, name)
        if isinstance(cls, type) and hasattr(cls, "fit"):
            assert cls().__sklearn_tags__().transformer_tags is None, name


# ---- type hints ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in L.__all__ if not n.endswith("Error")])
def test_public_api_is_annotated(name):
    cls = getattr(L, name)
    init = inspect.signature(cls.__init__)
    hints = typing.get_type_hints(cls.__init__)
    for p in list(init.parameters)[1:]:
        assert p in hints, f"{name}.__init__({p})"
    assert hints["return"] is type(None)
    for meth in ("fit", "partial_fit", "predict", "decision_function", "predict_proba", "objective"):
        f = getattr(cls, meth, None)
        if f is None:
            continue
        h = typing.get_type_hints(f)
        for p in list(inspect.signature(f).parameters)[1:]:
            assert p in h, f"{name}.{meth}({p})"
        assert "return" in h, f"{name}.{meth}"
    assert typing.get_type_hints(cls.fit)["return"] is cls


def test_float32_input_beyond_float32_range_stays_float64():
    # rounding a finite float64 result beyond float32's range to float32 would give inf: then the
    # float64 result is returned (finite input, finite output)
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1.0, 2.0, 3.0, 4.5]) * 1e300
    est = L.LinearRegression().fit(X, y)
    p = est.predict(X.astype(np.float32))
    assert p.dtype == np.float64 and np.all(np.isfinite(p))
    assert_allclose(p, est.predict(X), rtol=1e-6)
    clf = L.LogisticRegression().fit(X, [0, 0, 1, 1])
    clf.coef_ = clf.coef_ * 1e300
    s = clf.decision_function(X.astype(np.float32))
    assert s.dtype == np.float64 and np.all(np.isfinite(s))
