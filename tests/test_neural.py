"""smml.neural: feed-forward networks trained by SGD (003 section 14).

Checked against the plain-numpy reference (smml.reference.neural: backprop from
the chain rule), finite differences, scikit-learn's MLP on the same weights, and
hand-made cases (XOR, one class, divergence, bad input).
"""
import copy
import itertools
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier as SkMLPClassifier
from sklearn.neural_network import MLPRegressor as SkMLPRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from smml._core import _neural as K
from smml.linear import DivergenceError, Perceptron
from smml.neural import MLPClassifier, MLPRegressor
from smml.reference import neural as R

ACTS = ["identity", "relu", "tanh", "sigmoid", "sign_sigmoid"]
ACT = {"identity": K.ACT_IDENTITY, "relu": K.ACT_RELU, "tanh": K.ACT_TANH, "sigmoid": K.ACT_SIGMOID,
       "sign_sigmoid": K.ACT_SIGN_SIGMOID}
OUT = {"softmax": K.OUT_SOFTMAX, "logistic": K.OUT_LOGISTIC, "square": K.OUT_SQUARE}
SCHED = {"constant": K.SCHED_CONSTANT, "inverse_sqrt": K.SCHED_INV_SQRT, "inverse_t": K.SCHED_INV_T}


@pytest.fixture(autouse=True)
def _quiet_convergence():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


# ---- helpers ---------------------------------------------------------------------------

def problem(rng, kind, n=12, d=4):
    X = rng.standard_normal((n, d))
    if kind == "softmax":
        Y = np.eye(3)[rng.integers(0, 3, n)]
    elif kind == "logistic":
        Y = np.where(rng.random((n, 1)) > 0.5, 1.0, -1.0)
    else:
        Y = rng.standard_normal((n, 2))
    return X, Y


def net(rng, sizes, act, bias_scale=0.3):
    coefs, intercepts = R.init_params(np.random.RandomState(int(rng.integers(1 << 30))), sizes, act)
    intercepts = [bias_scale * rng.standard_normal(b.shape) for b in intercepts]
    return coefs, intercepts


def copies(arrs, dtype=np.float64):
    return [np.array(a, dtype=dtype) for a in arrs]


def kernel_gradient(X, Y, coefs, intercepts, act, kind, lam=0.0, n_threads=1):
    """The kernel's gradient of (1/m) sum_t l_t + lam/2 ||W||^2 over all rows, read off one
    full-batch step: with eta = 1 and zero velocities, the momentum form writes
    v = mu 0 - eta (g + lam W) = -(g + lam W) exactly."""
    c, b = copies(coefs), copies(intercepts)
    vc, vb = [np.zeros_like(w) for w in c], [np.zeros_like(w) for w in b]
    order = np.arange(len(X), dtype=np.intp)
    _, steps, st = K.train_epoch(X, Y, order, c, b, vc, vb, ACT[act], OUT[kind], len(X), 1.0,
                                 K.SCHED_CONSTANT, 0.5, lam, 0, n_threads)
    assert st == 0 and steps == 1
    return [-v for v in vc], [-v for v in vb]


def kernel_mean_loss(X, Y, coefs, intercepts, act, kind, lam=0.0):
    """The kernel's loss (a step with eta = 0 leaves the weights as they are)."""
    c, b = copies(coefs), copies(intercepts)
    total, _, st = K.train_epoch(X, Y, np.arange(len(X), dtype=np.intp), c, b, [], [], ACT[act], OUT[kind],
                                 len(X), 0.0, K.SCHED_CONSTANT, 0.0, 0.0, 0, 1)
    assert st == 0
    return total / len(X) + 0.5 * lam * sum(float(np.sum(w ** 2)) for w in coefs)


def finite_differences(X, Y, coefs, intercepts, act, kind, lam, h=1e-6):
    """Central differences of the kernel's own loss."""
    return R.numerical_gradient(X, Y, coefs, intercepts, act, kind, lam, h, loss=kernel_mean_loss)


def _ref(kw):
    """smml's parameters under smml.reference's names (the notes': lam, max_epochs)."""
    names = {"alpha": "lam", "max_iter": "max_epochs"}
    return {names.get(k, k): v for k, v in kw.items()}


def assert_rel(a_list, b_list, rtol):
    for a, b in zip(a_list, b_list):
        scale = max(float(np.max(np.abs(b))), 1e-12)
        assert float(np.max(np.abs(a - b))) <= rtol * scale, (np.max(np.abs(a - b)), scale)


# ---- scikit-learn compatibility ----------------------------------------------------------

# the batch-1 regressor (003's update) runs at learning_rate=1e-4: check_regressor_multioutput's
# make_regression targets reach ~300, and the square loss's gradient 2 (z - y) at the default
# 1e-3 overflows (smml raises DivergenceError instead of returning NaN weights, as the notes'
# fixed-step SGD gives no guarantee on unscaled targets: see
# test_divergence_on_unscaled_targets_names_the_recipe_that_fits)
ESTIMATORS = [MLPClassifier(hidden_layer_sizes=(16,), random_state=0, max_iter=100),
              MLPClassifier(hidden_layer_sizes=(8, 8), activation="tanh", batch_size=8, momentum=0.9,
                            learning_rate=0.05, random_state=0, max_iter=100),
              MLPRegressor(hidden_layer_sizes=(16,), learning_rate=1e-4, random_state=0, max_iter=100),
              MLPRegressor(hidden_layer_sizes=(8,), activation="sign_sigmoid", batch_size=16,
                           schedule="inverse_sqrt", learning_rate=0.03, random_state=0, max_iter=100),
              # full-batch gradient descent: here an integer weight is that many copies of the row
              MLPClassifier(hidden_layer_sizes=(8,), activation="tanh", batch_size=1000, learning_rate=0.2,
                            random_state=0, max_iter=100)]


def _expected_failed(est):
    if est.batch_size < 1000:
        # the check's weights are integers 0 .. 3 and it compares with the data whose rows are
        # repeated that many times
        return {"check_sample_weight_equivalence_on_dense_data":
                "SGD on batches smaller than the data: k copies of a row are shuffled into k different "
                "steps (and the epoch has more steps), while a weight k makes one step k times as "
                "long; equal in expectation, not in value (the full-batch estimator passes the check)"}
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---- the gradient check ------------------------------------------------------------------

@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("kind", ["softmax", "logistic", "square"])
@pytest.mark.parametrize("one_example", [True, False])
def test_gradient_check(rng, act, kind, one_example):
    """The kernel's gradient = central finite differences of the kernel's loss = the
    chain-rule reference, to 1e-6 relative (float64), for the batch-1 path (one example)
    and the gemm path (all rows), with an L2 penalty."""
    X, Y = problem(rng, kind, n=1 if one_example else 9)
    coefs, intercepts = net(rng, [X.shape[1], 5, 3, Y.shape[1]], act)
    lam = 0.05
    kW, kb = kernel_gradient(X, Y, coefs, intercepts, act, kind, lam)
    fW, fb = finite_differences(X, Y, coefs, intercepts, act, kind, lam)
    _, rW, rb = R.batch_gradient(X, Y, range(len(X)), coefs, intercepts, act, kind, lam)
    assert_rel(kW, fW, 1e-6)
    assert_rel(kb, fb, 1e-6)
    assert_rel(kW, rW, 1e-6)
    assert_rel(kb, rb, 1e-6)
    # and the reference's own gradient agrees with finite differences of the reference's loss
    nW, nb = R.numerical_gradient(X, Y, coefs, intercepts, act, kind, lam)
    assert_rel(rW, nW, 1e-6)
    assert_rel(rb, nb, 1e-6)


def test_gradient_check_threads(rng):
    """Wider layers split over 2 and 3 threads give the same gradient."""
    X, Y = problem(rng, "softmax", n=10, d=40)
    coefs, intercepts = net(rng, [40, 48, 33, 3], "tanh")
    ref = kernel_gradient(X, Y, coefs, intercepts, "tanh", "softmax", 0.01, 1)
    _, rW, _ = R.batch_gradient(X, Y, range(len(X)), coefs, intercepts, "tanh", "softmax", 0.01)
    assert_rel(ref[0], rW, 1e-9)
    for t in (2, 3):
        got = kernel_gradient(X, Y, coefs, intercepts, "tanh", "softmax", 0.01, t)
        assert_rel(got[0], ref[0], 1e-12)
        assert_rel(got[1], ref[1], 1e-12)


def test_sign_sigmoid_is_003s_formula():
    z = np.linspace(-30, 30, 61)
    direct = (1 - np.exp(-z)) / (1 + np.exp(-z))
    np.testing.assert_allclose(R.activation("sign_sigmoid", z), direct, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(R.activation("sign_sigmoid", z), np.tanh(z / 2), rtol=1e-12, atol=1e-15)
    # the kernel's forward with one sign_sigmoid unit and identity weights
    X = z.reshape(-1, 1)
    out = np.empty((len(z), 1))
    K.forward(X, [np.ones((1, 1)), np.ones((1, 1))], [np.zeros(1), np.zeros(1)], K.ACT_SIGN_SIGMOID, out, 1)
    np.testing.assert_allclose(out[:, 0], direct, rtol=1e-12, atol=1e-15)
    assert np.all(np.abs(out) <= 1)


# ---- kernel epochs against the reference ---------------------------------------------------

@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("kind", ["softmax", "logistic", "square"])
@pytest.mark.parametrize("batch", [1, 5])
def test_epochs_match_reference(rng, act, kind, batch):
    X, Y = problem(rng, kind, n=23, d=6)
    coefs, intercepts = net(rng, [6, 7, 5, Y.shape[1]], act)
    mu, lam = [(0.0, 0.0), (0.9, 0.0), (0.0, 0.01), (0.5, 0.02)][int(rng.integers(4))]
    sched = list(SCHED)[int(rng.integers(3))]
    c, b = copies(coefs), copies(intercepts)
    vel = ([np.zeros_like(w) for w in c], [np.zeros_like(w) for w in b])
    kvel = ([np.zeros_like(w) for w in c], [np.zeros_like(w) for w in b])
    t = 0
    for _ in range(3):
        order = rng.permutation(len(X)).astype(np.intp)
        loss, steps, st = K.train_epoch(X, Y, order, c, b, *kvel, ACT[act], OUT[kind], batch, 0.01,
                                        SCHED[sched], mu, lam, t, 1)
        rloss, rsteps = R.sgd_epoch(X, Y, order, coefs, intercepts, act, kind, batch, 0.01, sched,
                                    mu, lam, t, vel)
        assert st == 0 and steps == rsteps == -(-len(X) // batch)
        t += steps
        assert loss == pytest.approx(rloss, rel=1e-10)
    for a, r in zip(c + b, coefs + intercepts):
        np.testing.assert_allclose(a, r, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("isa", [1, 2])
@pytest.mark.parametrize("sizes,n,batch", [([13, 37, 3], 31, 5),      # last step 1 row, after a fused F_0
                                           ([20, 50, 33, 3], 43, 8),  # last step 3 rows; 2 hidden layers
                                           ([9, 16, 3], 9, 4),
                                           ([40, 70, 3], 64, 32),     # the last block of columns masked
                                           ([13, 37, 3], 20, 1),      # batch 1: the rows' step (with F_0)
                                           ([20, 150, 33, 3], 15, 1)])
@pytest.mark.parametrize("mu,lam", [(0.0, 0.0), (0.9, 0.0), (0.0, 0.01), (0.5, 0.02)])
@pytest.mark.parametrize("T", [1, 2])
def test_fused_float32_step_matches_reference(isa, sizes, n, batch, mu, lam, T):
    """smml_neural.h's float32 steps (minibatches: the hidden layers' update in one pass, the
    first layer's with the next batch's forward; batch 1: the rows' step and forward), AVX2
    (isa 1) and AVX-512 (isa 2), against the float64 reference and the float32 gemm path and
    loops (isa 0), over 3 epochs. A third of the inputs are 0 (rows skipped at batch 1)."""
    if K.step_isa() < isa:
        pytest.skip(f"this CPU runs the fused step up to isa {K.step_isa()}")
    rng = np.random.default_rng(sizes[0] * 1000 + n)
    X, Y = problem(rng, "softmax", n=n, d=sizes[0])
    X[X < -0.43] = 0.0
    act = ["relu", "tanh", "sign_sigmoid"][sizes[1] % 3]
    coefs, intercepts = net(rng, sizes, act)
    runs = {}
    for run_isa in (isa, 0):
        c, b = copies(coefs, np.float32), copies(intercepts, np.float32)
        vc, vb = [np.zeros_like(w) for w in c], [np.zeros_like(w) for w in b]
        t = 0
        for e in range(3):
            order = np.random.default_rng(e).permutation(n).astype(np.intp)
            _, steps, st = K.train_epoch(X.astype(np.float32), Y.astype(np.float32), order, c, b, vc, vb,
                                         ACT[act], OUT["softmax"], batch, 0.05, K.SCHED_INV_SQRT, mu, lam,
                                         t, T, isa=run_isa)
            assert st == 0
            t += steps
        runs[run_isa] = c + b
    rc, rb = copies(coefs), copies(intercepts)
    vel = ([np.zeros_like(w) for w in rc], [np.zeros_like(w) for w in rb])
    t = 0
    for e in range(3):
        order = np.random.default_rng(e).permutation(n).astype(np.intp)
        t += R.sgd_epoch(X, Y, order, rc, rb, act, "softmax", batch, 0.05, "inverse_sqrt", mu, lam, t, vel)[1]
    for a, g, r in zip(runs[isa], runs[0], rc + rb):
        np.testing.assert_allclose(a, r, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(a, g, rtol=1e-5, atol=1e-6)


def test_fused_step_isa_is_checked():
    X, Y = problem(np.random.default_rng(0), "softmax", n=8, d=3)
    X, Y = X.astype(np.float32), Y.astype(np.float32)
    coefs, intercepts = net(np.random.default_rng(1), [3, 4, 3], "relu")
    c, b = copies(coefs, np.float32), copies(intercepts, np.float32)
    order = np.arange(8, dtype=np.intp)
    for bad in (K.step_isa() + 1, -2):
        with pytest.raises(ValueError, match="isa"):
            K.train_epoch(X, Y, order, c, b, [], [], ACT["relu"], OUT["softmax"], 4, 0.1, K.SCHED_CONSTANT,
                          0.0, 0.0, 0, 1, isa=bad)
        with pytest.raises(ValueError, match="isa"):
            K.forward(X, c, b, ACT["relu"], np.empty((8, 3), np.float32), 1, isa=bad)


def _train(X, Y, T, batch, mom=0.9, act="relu", kind="softmax", epochs=2, dtype=np.float64, seed=0, sw=None):
    rng = np.random.default_rng(seed)
    scale = 1.0 if sw is None else len(X) / float(np.sum(sw))
    coefs, intercepts = net(rng, [X.shape[1], 40, 37, Y.shape[1]], act)
    c, b = copies(coefs, dtype), copies(intercepts, dtype)
    vc, vb = [np.zeros_like(w) for w in c], [np.zeros_like(w) for w in b]
    X, Y = X.astype(dtype), Y.astype(dtype)
    losses = []
    for e in range(epochs):
        order = rng.permutation(len(X)).astype(np.intp)
        losses.append(K.train_epoch(X, Y, order, c, b, vc, vb, ACT[act], OUT[kind], batch, 0.01,
                                    K.SCHED_CONSTANT, mom, 0.001, e * len(X), T, sample_weight=sw,
                                    sw_scale=scale)[0])
    return c + b, losses


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batch1_independent_of_thread_count(dtype):
    """003's update (batch 1): every entry is computed by loops whose order does not
    depend on the thread count, so 1, 2 and 3 threads give identical weights."""
    X, Y = problem(np.random.default_rng(0), "softmax", n=25, d=35)
    w1, l1 = _train(X, Y, 1, 1, dtype=dtype)
    for T in (2, 3):
        wT, lT = _train(X, Y, T, 1, dtype=dtype)
        assert lT == l1
        for a, b in zip(w1, wT):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_weighted_epochs_across_threads(dtype):
    """With sample weights too: batch 1 identical for 1, 2, 3 threads; minibatches close."""
    X, Y = problem(np.random.default_rng(2), "softmax", n=25, d=35)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, len(X))
    w1, l1 = _train(X, Y, 1, 1, dtype=dtype, sw=sw)
    for T in (2, 3):
        wT, lT = _train(X, Y, T, 1, dtype=dtype, sw=sw)
        assert lT == l1
        for a, b in zip(w1, wT):
            np.testing.assert_array_equal(a, b)
    if dtype is np.float64:
        w1, _ = _train(X, Y, 1, 8, sw=sw)
        w2, _ = _train(X, Y, 2, 8, sw=sw)
        for a, b in zip(w1, w2):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_minibatch_deterministic_and_close_across_threads():
    X, Y = problem(np.random.default_rng(1), "softmax", n=48, d=35)
    w2, l2 = _train(X, Y, 2, 8)
    w2b, l2b = _train(X, Y, 2, 8)
    assert l2 == l2b
    for a, b in zip(w2, w2b):
        np.testing.assert_array_equal(a, b)
    w1, _ = _train(X, Y, 1, 8)
    for a, b in zip(w1, w2):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_float32_kernel_tracks_float64(rng):
    X, Y = problem(rng, "softmax", n=90, d=35)
    for batch in (1, 8):
        w64, l64 = _train(X, Y, 1, batch)
        w32, l32 = _train(X, Y, 1, batch, dtype=np.float32)
        assert all(w.dtype == np.float32 for w in w32)
        np.testing.assert_allclose(l32, l64, rtol=1e-4)
        for a, b in zip(w32, w64):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)


def test_forward_matches_reference(rng):
    X, _ = problem(rng, "square", n=1100, d=7)         # more rows than two blocks (CHUNK) of the kernel
    assert len(X) > 2 * K.CHUNK_ROWS
    for act in ACTS:
        coefs, intercepts = net(rng, [7, 9, 4, 2], act)
        out = np.empty((1100, 2))
        K.forward(X, coefs, intercepts, ACT[act], out, 2)
        ref = np.array([R.forward(x, coefs, intercepts, act)[0][-1] for x in X])
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mu, lam", [(0.0, 0.0), (0.9, 0.0), (0.0, 0.01), (0.5, 0.02)])
@pytest.mark.parametrize("T", [1, 2])
def test_batch1_sparse_inputs_match_reference(mu, lam, T):
    """003's update on inputs with exact zeros (the kernel skips rows of W_1 whose input is 0
    when that is exact, and fuses a step's first-layer update with the next example's
    first-layer scores): every step as the reference's, with and without momentum and
    penalty, on 1 and 2 threads (wide layers, so that 2 threads really split them)."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((17, 40))
    X[rng.random(X.shape) < 0.6] = 0.0
    X[3] = 0.0                                          # an all-zero example
    Y = np.eye(3)[rng.integers(0, 3, 17)]
    coefs, intercepts = net(rng, [40, 48, 33, 3], "relu")
    c, b = copies(coefs), copies(intercepts)
    kvel = ([np.zeros_like(w) for w in c], [np.zeros_like(w) for w in b])
    vel = ([np.zeros_like(w) for w in c], [np.zeros_like(w) for w in b])
    t = 0
    for _ in range(2):
        order = rng.permutation(17).astype(np.intp)
        loss, steps, st = K.train_epoch(X, Y, order, c, b, *kvel, ACT["relu"], OUT["softmax"], 1, 0.05,
                                        K.SCHED_INV_SQRT, mu, lam, t, T)
        rloss, rsteps = R.sgd_epoch(X, Y, order, coefs, intercepts, "relu", "softmax", 1, 0.05,
                                    "inverse_sqrt", mu, lam, t, vel)
        assert st == 0 and steps == rsteps == 17
        assert loss == pytest.approx(rloss, rel=1e-10)
        t += steps
    for a, r in zip(c + b, coefs + intercepts):
        np.testing.assert_allclose(a, r, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 131, 259, 1100])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sizes", [[7, 9, 4, 2], [40, 70, 33, 3]])
def test_forward_few_rows_and_last_blocks(n, dtype, sizes):
    """Blocks of fewer than 4 rows go through gemv row by row, larger ones through gemm, or
    in float32 through smml_neural.h's forward (isa 1: AVX2, 2: AVX-512, where the CPU has them;
    1100 rows: three blocks of CHUNK, the last of 76; 70 and 33 units: masked columns): the
    same scores every way."""
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, sizes[0])).astype(dtype)
    coefs, intercepts = net(rng, sizes, "tanh")
    ref = np.array([R.forward(x, coefs, intercepts, "tanh")[0][-1] for x in X])
    isas = range(K.step_isa() + 1) if dtype == np.float32 else [-1]
    for T, isa in itertools.product((1, 2), isas):
        out = np.empty((n, sizes[-1]), dtype=dtype)
        K.forward(X, copies(coefs, dtype), copies(intercepts, dtype), ACT["tanh"], out, T, isa=isa)
        tol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)


# ---- estimators against the reference estimators and scikit-learn ----------------------------

@pytest.mark.parametrize("batch", [1, 4])
def test_classifier_matches_reference_estimator(batch):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 5))
    for y in (np.where(X[:, 0] + X[:, 1] ** 2 > 1, "yes", "no"), (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)):
        kw = dict(hidden_layer_sizes=(6, 4), activation="tanh", batch_size=batch, learning_rate=0.05,
                  momentum=0.5, alpha=0.001, schedule="inverse_sqrt", max_iter=15, tol=1e-3,
                  n_iter_no_change=3, random_state=7)
        m = MLPClassifier(**kw).fit(X, y)
        r = R.MLPClassifier(**_ref(kw)).fit(X, y)
        assert m.n_iter_ == r.n_iter_ and m.n_steps_ == r.n_steps_
        np.testing.assert_allclose(m.loss_curve_, r.loss_curve_, rtol=1e-10)
        for a, b in zip(m.coefs_ + m.intercepts_, r.coefs_ + r.intercepts_):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(m.predict(X), r.predict(X))


def test_regressor_matches_reference_estimator():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 3))
    for y in (X @ [1.0, -2.0, 0.5], np.column_stack([X[:, 0] * X[:, 1], np.sin(X[:, 2])])):
        kw = dict(hidden_layer_sizes=(8,), activation="sigmoid", batch_size=3, learning_rate=0.02,
                  max_iter=10, random_state=1)
        m = MLPRegressor(**kw).fit(X, y)
        r = R.MLPRegressor(**_ref(kw)).fit(X, y)
        np.testing.assert_allclose(m.loss_curve_, r.loss_curve_, rtol=1e-10)
        np.testing.assert_allclose(m.predict(X), r.predict(X), rtol=1e-9, atol=1e-12)
        assert m.predict(X).shape == y.shape


def _sklearn_step(sk, m, X, y):
    """One full-batch step of scikit-learn's MLP from smml's initial weights."""
    sk.set_params(max_iter=1, warm_start=True)
    sk.fit(X, y)                                       # builds its layers
    sk.coefs_ = [c.copy() for c in m._init_coefs]
    sk.intercepts_ = [b.copy() for b in m._init_intercepts]
    sk.fit(X, y)
    return sk


@pytest.mark.parametrize("n_classes", [2, 3])
def test_one_step_equals_scikit_learn(n_classes):
    """Same weights, one full-batch SGD step: smml's log loss step is scikit-learn's
    (its alpha is smml's alpha times the batch size)."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((25, 4))
    y = rng.integers(0, n_classes, 25)
    m = MLPClassifier((6,), activation="tanh", batch_size=25, learning_rate=0.1, alpha=0.01, max_iter=1,
                      random_state=0).fit(X, y)
    init = MLPClassifier((6,), activation="tanh", max_iter=1, random_state=0)
    init._reset(X, 1 if n_classes == 2 else n_classes)
    m._init_coefs, m._init_intercepts = init.coefs_, init.intercepts_
    sk = SkMLPClassifier((6,), activation="tanh", solver="sgd", batch_size=25, learning_rate_init=0.1,
                         momentum=0.0, alpha=0.01 * 25, shuffle=False, random_state=0)
    sk = _sklearn_step(sk, m, X, y)
    for a, b in zip(m.coefs_ + m.intercepts_, sk.coefs_ + sk.intercepts_):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(m.predict_proba(X), sk.predict_proba(X), rtol=1e-10)


@pytest.mark.parametrize("batch", [1, 8])
def test_float32_epochs_equal_scikit_learn_on_the_same_order(batch):
    """float32, 3 epochs (batch 1: the rows' step; batch 8: the fused minibatch step): from
    smml's initial weights, on smml's example order (its random_state draws the weights,
    then one permutation per epoch), scikit-learn's SGD reaches the same weights."""
    from smml.neural import _init_params

    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 40)).astype(np.float32)
    X[X < -0.5] = 0
    y = rng.integers(0, 3, 60)
    m = MLPClassifier((37, 20), batch_size=batch, learning_rate=0.02, max_iter=3, tol=0,
                      n_iter_no_change=10, random_state=4).fit(X, y)
    assert m.coefs_[0].dtype == np.float32
    r = np.random.RandomState(4)
    coefs, intercepts = _init_params(r, [40, 37, 20, 3], "relu", np.float32)
    sk = SkMLPClassifier((37, 20), solver="sgd", batch_size=batch, learning_rate_init=0.02, momentum=0.0,
                         alpha=0.0, shuffle=False, max_iter=1, warm_start=True, random_state=0).fit(X, y)
    sk.coefs_, sk.intercepts_ = coefs, intercepts
    for _ in range(3):
        order = r.permutation(len(X))
        sk.fit(X[order], y[order])
    for a, b in zip(m.coefs_ + m.intercepts_, sk.coefs_ + sk.intercepts_):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_regressor_step_is_scikit_learn_with_twice_the_rate():
    """smml's square loss (z - y)^2 has twice the gradient of scikit-learn's (z - y)^2 / 2."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((20, 3))
    y = X @ [1.0, 2.0, -1.0]
    m = MLPRegressor((5,), activation="relu", batch_size=20, learning_rate=0.05, max_iter=1,
                     random_state=2).fit(X, y)
    init = MLPRegressor((5,), random_state=2)
    init._reset(X, 1)
    m._init_coefs, m._init_intercepts = init.coefs_, init.intercepts_
    sk = SkMLPRegressor(hidden_layer_sizes=(5,), activation="relu", solver="sgd", batch_size=20, learning_rate_init=0.1,
                        momentum=0.0, alpha=0.0, shuffle=False, random_state=0)
    sk = _sklearn_step(sk, m, X, y)
    for a, b in zip(m.coefs_ + m.intercepts_, sk.coefs_ + sk.intercepts_):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# ---- learning behaviour ---------------------------------------------------------------------

def test_xor_needs_a_hidden_layer():
    """XOR is not linearly separable: the Perceptron never converges on it, while one
    hidden layer learns it exactly."""
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
    y = np.array([0, 1, 1, 0])
    p = Perceptron(max_iter=200).fit(X, y)
    assert not p.converged_ and np.mean(p.predict(X) == y) < 1
    for act in ("tanh", "sign_sigmoid", "sigmoid", "relu"):
        m = MLPClassifier((8,), activation=act, learning_rate=0.5, max_iter=2000, tol=0,
                          n_iter_no_change=2000, random_state=0).fit(X, y)
        np.testing.assert_array_equal(m.predict(X), y)
        assert m.loss_curve_[-1] < 0.1
    # no hidden layer: a linear (logistic) model, which cannot
    lin = MLPClassifier((), learning_rate=0.5, max_iter=500, random_state=0).fit(X, y)
    assert np.mean(lin.predict(X) == y) < 1


def test_learns_digits_and_predict_proba():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    labels = np.array(list("abcdefghij"))[y]
    Xtr, Xte, ytr, yte = X[:1400], X[1400:], labels[:1400], labels[1400:]
    m = MLPClassifier((32,), batch_size=16, learning_rate=0.1, momentum=0.9, max_iter=20,
                      random_state=0).fit(Xtr, ytr)
    assert m.score(Xte, yte) > 0.88          # scikit-learn's MLP, same settings: 0.907
    P = m.predict_proba(Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1)
    np.testing.assert_array_equal(m.classes_[np.argmax(P, axis=1)], m.predict(Xte))
    np.testing.assert_allclose(np.exp(m.predict_log_proba(Xte)), P, rtol=1e-10)
    # float32 input trains a float32 network of about the same quality. One seed's score moves
    # by a few points with the rounding (momentum 0.9 at this step size: seed 0 gave 0.899 in
    # float64, 0.904 and 0.877 in float32 with the gemm and the fused step), so the means over
    # four seeds are compared
    scores = {}
    for dtype in (np.float64, np.float32):
        ms = [MLPClassifier((32,), batch_size=16, learning_rate=0.1, momentum=0.9, max_iter=20,
                            random_state=seed).fit(Xtr.astype(dtype), ytr) for seed in range(4)]
        assert all(m.coefs_[0].dtype == dtype for m in ms)
        scores[dtype] = np.mean([m.score(Xte, yte) for m in ms])
    assert scores[np.float32] > 0.9
    assert abs(scores[np.float32] - scores[np.float64]) < 0.02


def test_binary_probabilities_and_sign_convention():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.where(X[:, 0] > 0, "pos", "neg")
    m = MLPClassifier((5,), max_iter=30, random_state=0).fit(X, y)
    assert m.n_outputs_ == 1 and m.coefs_[-1].shape == (5, 1)
    P = m.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1)
    np.testing.assert_allclose(np.exp(m.predict_log_proba(X)), P, rtol=1e-10)
    # a score of exactly 0 predicts classes_[0] (sgn(0) = -1)
    m.intercepts_[-1][:] = 0
    m.coefs_[-1][:] = 0
    assert np.all(m.predict(X) == m.classes_[0])


def test_stopping_rule_counts_epochs():
    """Training loss never 'improves' by tol = 1e9 after the first epoch (which improves on
    best_loss_ = inf): stop when more than n_iter_no_change epochs failed, after 1 + 5 epochs."""
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = (X[:, 0] > 0).astype(int)
    m = MLPClassifier((3,), tol=1e9, n_iter_no_change=4, max_iter=100, random_state=0).fit(X, y)
    assert m.n_iter_ == 6 and len(m.loss_curve_) == 6
    assert m.best_loss_ == min(m.loss_curve_)
    with pytest.warns(ConvergenceWarning):
        warnings.simplefilter("always", ConvergenceWarning)
        MLPClassifier((3,), max_iter=2, random_state=0).fit(X, y)


def test_early_stopping_keeps_best_weights():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 4))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    m = MLPClassifier((16,), early_stopping=True, validation_fraction=0.2, n_iter_no_change=3,
                      tol=1e9, max_iter=50, learning_rate=0.05, random_state=0).fit(X, y)
    assert m.n_iter_ == 5 and len(m.validation_scores_) == 5
    assert m.best_validation_score_ == max(m.validation_scores_)
    assert m.best_loss_ is None
    r = MLPRegressor((8,), early_stopping=True, max_iter=5, random_state=0).fit(X, X[:, 0])
    assert len(r.validation_scores_) == r.n_iter_
    with pytest.raises(ValueError, match="validation set is too small"):
        MLPClassifier(early_stopping=True, validation_fraction=0.1).fit(X[:8], y[:8])


def test_partial_fit_continues_fit():
    """fit for 3 epochs = partial_fit 3 times (same draws: weights, then one order per epoch),
    and the schedule keeps counting steps across the calls."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30, 3))
    y = np.where(X[:, 0] > 0, 2, 7)
    kw = dict(hidden_layer_sizes=(5,), batch_size=4, schedule="inverse_t", momentum=0.5,
              learning_rate=0.3, random_state=3)
    a = MLPClassifier(max_iter=3, tol=0, n_iter_no_change=100, **kw).fit(X, y)
    b = MLPClassifier(**kw)
    for _ in range(3):
        b.partial_fit(X, y, classes=[2, 7])
    assert b.n_steps_ == a.n_steps_ == 24 and b.n_iter_ == 3
    np.testing.assert_allclose(b.loss_curve_, a.loss_curve_, rtol=1e-12)
    for u, v in zip(a.coefs_, b.coefs_):
        np.testing.assert_array_equal(u, v)
    with pytest.raises(ValueError, match="outside classes_"):
        b.partial_fit(X, np.full(30, 3))
    b.set_params(hidden_layer_sizes=(6,))
    with pytest.raises(ValueError, match="hidden_layer_sizes was changed"):
        b.partial_fit(X, y)
    with pytest.raises(ValueError, match="classes must be passed"):
        MLPClassifier().partial_fit(X, y)
    with pytest.raises(ValueError, match="early_stopping"):
        MLPClassifier(early_stopping=True).partial_fit(X, y, classes=[2, 7])
    r = MLPRegressor((4,), random_state=0)
    r.partial_fit(X, X[:, 0])
    r.partial_fit(X, X[:, 1])
    assert r.n_iter_ == 2
    with pytest.raises(ValueError, match="output"):
        r.partial_fit(X, np.column_stack([X[:, 0], X[:, 1]]))


def _misaligned(a, offset):
    """A copy of a starting ``offset`` bytes past a 64-byte boundary."""
    buf = np.empty(a.nbytes + 128, dtype=np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    out = buf[start:start + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_training_aligns_weights_and_keeps_values(momentum):
    """Training works on cache-line aligned, writeable weights and velocities (threads
    own 64-byte column blocks): misaligned or read-only ones are copied first, and the
    next epoch is the same either way."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((64, 20)).astype(np.float32)
    y = rng.integers(0, 3, 64)
    a = MLPClassifier((48, 32), batch_size=8, momentum=momentum, max_iter=1, tol=0,
                      random_state=0, n_jobs=2).fit(X, y)
    for w in a.coefs_ + a.intercepts_ + a._velocity[0] + a._velocity[1]:
        assert w.ctypes.data % 64 == 0 and w.flags.writeable
    b = copy.deepcopy(a)
    for group in (b.coefs_, b.intercepts_, *b._velocity):
        group[:] = [_misaligned(w, 16 * (i % 3 + 1)) for i, w in enumerate(group)]
    b.coefs_[0].flags.writeable = False
    assert b.coefs_[0].ctypes.data % 64 != 0
    a.partial_fit(X, y)
    b.partial_fit(X, y)
    assert b.coefs_[0].ctypes.data % 64 == 0 and b.coefs_[0].flags.writeable
    for u, v in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_):
        np.testing.assert_array_equal(u, v)
    assert a.loss_curve_ == b.loss_curve_


def test_deterministic_given_seed():
    X = np.random.default_rng(0).standard_normal((50, 4))
    y = (X.sum(axis=1) > 0).astype(int)
    a = MLPClassifier((7,), max_iter=5, random_state=11).fit(X, y)
    b = MLPClassifier((7,), max_iter=5, random_state=11).fit(X, y)
    c = MLPClassifier((7,), max_iter=5, random_state=12).fit(X, y)
    np.testing.assert_array_equal(a.coefs_[0], b.coefs_[0])
    assert not np.array_equal(a.coefs_[0], c.coefs_[0])


def test_initialisation_documented():
    X = np.zeros((3, 50))
    for act, first in (("relu", np.sqrt(6 / 50)), ("tanh", np.sqrt(6 / 70)), ("sigmoid", 4 * np.sqrt(6 / 70)),
                       ("sign_sigmoid", 2 * np.sqrt(6 / 70))):
        m = MLPRegressor((20,), activation=act, random_state=0)
        m._reset(X, 3)
        w0, w1 = m.coefs_
        assert np.max(np.abs(w0)) <= first and np.max(np.abs(w0)) > 0.9 * first
        assert np.max(np.abs(w1)) <= np.sqrt(6 / 23)
        assert all(np.all(b == 0) for b in m.intercepts_)
        ref_c, _ = R.init_params(np.random.RandomState(0), [50, 20, 3], act)
        np.testing.assert_array_equal(m.coefs_[0], ref_c[0])


# ---- failures and bad input --------------------------------------------------------------------

def test_divergence_raises():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3)) * 100
    y = X @ [1.0, 2.0, 3.0]
    for batch in (1, 10):
        with pytest.raises(DivergenceError, match="learning_rate"):
            MLPRegressor((10,), batch_size=batch, learning_rate=10.0, max_iter=50,
                         random_state=0).fit(X, y)
        with pytest.raises(DivergenceError):
            MLPRegressor((10,), batch_size=batch, learning_rate=10.0, max_iter=50, random_state=0,
                         n_jobs=2).fit(X.astype(np.float32), y)
    with pytest.raises(DivergenceError):
        MLPClassifier((10,), learning_rate=1e6, momentum=0.99, max_iter=50,
                      random_state=0).fit(X, (y > 0).astype(int))


@pytest.mark.parametrize("params", [
    dict(hidden_layer_sizes=0), dict(hidden_layer_sizes=(4, 0)), dict(hidden_layer_sizes="10"),
    dict(hidden_layer_sizes=(2.5,)), dict(activation="logistic"), dict(batch_size=0), dict(learning_rate=0.0),
    dict(schedule="adaptive"), dict(momentum=1.0), dict(momentum=-0.1), dict(alpha=-1.0), dict(max_iter=0),
    dict(tol=-1.0), dict(n_iter_no_change=0), dict(validation_fraction=1.0), dict(loss="hinge"),
    dict(n_jobs=0), dict(random_state="x")])
def test_bad_parameters(params):
    X = np.random.default_rng(0).standard_normal((10, 2))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match=list(params)[0]):
        MLPClassifier(**params).fit(X, y)


def test_bad_input():
    X = np.random.default_rng(0).standard_normal((10, 2))
    y = np.arange(10) % 2
    with pytest.raises(ValueError, match="NaN|infinity"):
        MLPClassifier().fit(np.where(X > 1, np.nan, X), y)
    with pytest.raises(ValueError, match="only one class"):
        MLPClassifier().fit(X, np.zeros(10))
    with pytest.raises(ValueError, match="Unknown label type"):
        MLPClassifier().fit(X, X[:, 0])
    with pytest.raises(ValueError):
        MLPClassifier().fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        MLPRegressor().fit(X, y[:5])
    with pytest.raises(ValueError, match="NaN|infinity"):
        MLPRegressor().fit(X, np.where(y > 0, np.inf, 0.0))
    m = MLPClassifier((3,), max_iter=2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        m.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN|infinity"):
        m.predict(np.full((2, 2), np.inf))
    # one sample, one feature: fine
    MLPRegressor((2,), max_iter=3).fit([[1.0]], [2.0]).predict([[1.0]])


def test_divergence_on_unscaled_targets_names_the_recipe_that_fits():
    # 003's fixed-step SGD diverges on make_regression's targets (~300) at the default rate:
    # the error says what to change, and the recipe it names fits
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.datasets import make_regression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = make_regression(200, 5, random_state=0)
    with pytest.raises(DivergenceError, match="TransformedTargetRegressor"):
        MLPRegressor(random_state=0, max_iter=20).fit(X, y)
    model = TransformedTargetRegressor(make_pipeline(StandardScaler(), MLPRegressor(
        random_state=0, max_iter=60, tol=1e-3)), transformer=StandardScaler())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                       # max_iter: not the point here
        assert model.fit(X, y).score(X, y) > 0.95


# ---- issue 33: sample_weight, multi-output, warm_start, verbose, float32, names ------------

def _same_fit(a, b):
    """Two fitted networks are equal bit for bit (weights, curves, counters)."""
    assert a.n_iter_ == b.n_iter_ and a.n_steps_ == b.n_steps_
    assert a.loss_curve_ == b.loss_curve_
    for u, v in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_):
        assert u.dtype == v.dtype
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("kind", ["softmax", "logistic", "square"])
@pytest.mark.parametrize("batch", [1, 9])
def test_weighted_step_is_the_documented_gradient(rng, kind, batch):
    """train_epoch with weights s and sw_scale c: row i's gradient enters its step as
    s_i c / nb times its own, its loss as s_i l_i (the reference's per-row gradients,
    combined by hand; read off one momentum step with eta = 1 and zero velocities)."""
    X, Y = problem(rng, kind, n=9)
    coefs, intercepts = net(rng, [X.shape[1], 5, Y.shape[1]], "tanh")
    s = rng.uniform(0.2, 3.0, len(X))
    c = 0.7
    rows = np.arange(batch, dtype=np.intp)              # one step: batch 1 -> row 0 alone
    W, b = copies(coefs), copies(intercepts)
    vc, vb = [np.zeros_like(w) for w in W], [np.zeros_like(w) for w in b]
    total, steps, st = K.train_epoch(X, Y, rows, W, b, vc, vb, ACT["tanh"], OUT[kind], batch, 1.0,
                                     K.SCHED_CONSTANT, 0.5, 0.0, 0, 1, sample_weight=s, sw_scale=c)
    assert st == 0 and steps == 1
    gW = [np.zeros_like(w) for w in W]
    gb = [np.zeros_like(w) for w in b]
    want_loss = 0.0
    for i in rows:
        loss_i, gWi, gbi = R.batch_gradient(X, Y, [i], coefs, intercepts, "tanh", kind)
        want_loss += s[i] * loss_i
        for l in range(len(W)):
            gW[l] += s[i] * c / batch * gWi[l]
            gb[l] += s[i] * c / batch * gbi[l]
    assert total == pytest.approx(want_loss, rel=1e-12)
    assert_rel([-v for v in vc], gW, 1e-10)
    assert_rel([-v for v in vb], gb, 1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch, momentum", [(1, 0.0), (4, 0.9)])
def test_unit_weights_are_no_weights_bit_for_bit(dtype, batch, momentum):
    rng = np.random.default_rng(30)
    X = rng.standard_normal((40, 4)).astype(dtype)
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 0)
    kw = dict(hidden_layer_sizes=(6,), batch_size=batch, momentum=momentum, alpha=1e-3, max_iter=6,
              learning_rate=0.05, random_state=0)
    _same_fit(MLPClassifier(**kw).fit(X, y), MLPClassifier(**kw).fit(X, y, sample_weight=np.ones(40)))
    Yr = np.column_stack([X[:, 0], X[:, 1] * X[:, 2]]).astype(np.float64)
    _same_fit(MLPRegressor(**kw).fit(X, Yr), MLPRegressor(**kw).fit(X, Yr, sample_weight=[1] * 40))
    a, b = MLPClassifier(**kw), MLPClassifier(**kw)
    for _ in range(2):
        a.partial_fit(X, y, classes=[0, 1, 2])
        b.partial_fit(X, y, classes=[0, 1, 2], sample_weight=np.ones(40))
    _same_fit(a, b)


@pytest.mark.parametrize("early_stopping", [False, True])
def test_zero_weight_drops_the_row_bit_for_bit(early_stopping):
    rng = np.random.default_rng(31)
    X = rng.standard_normal((50, 3))
    y = np.where(X[:, 0] - X[:, 2] > 0, "a", "b")
    s = rng.integers(0, 4, 50).astype(float)
    s[:3] = 0
    keep = s > 0
    kw = dict(hidden_layer_sizes=(5,), batch_size=3, max_iter=8, learning_rate=0.1, random_state=2,
              early_stopping=early_stopping)
    _same_fit(MLPClassifier(**kw).fit(X, y, sample_weight=s),
              MLPClassifier(**kw).fit(X[keep], y[keep], sample_weight=s[keep]))
    ones = np.where(keep, 1.0, 0.0)
    _same_fit(MLPRegressor(**kw).fit(X, X[:, 1], sample_weight=ones),
              MLPRegressor(**kw).fit(X[keep], X[keep, 1]))


def test_integer_weights_are_repeated_rows_with_one_batch():
    """Full-batch gradient descent (batch_size >= n): the weighted mean gradient is the mean
    over the repeated rows, so the two fits agree to rounding."""
    rng = np.random.default_rng(32)
    X = rng.standard_normal((30, 3))
    y = (X[:, 0] > 0).astype(int)
    s = rng.integers(1, 4, 30)
    kw = dict(hidden_layer_sizes=(6,), activation="tanh", batch_size=1000, learning_rate=0.3,
              momentum=0.5, max_iter=40, tol=0, n_iter_no_change=1000, random_state=0)
    a = MLPClassifier(**kw).fit(X, y, sample_weight=s)
    b = MLPClassifier(**kw).fit(np.repeat(X, s, axis=0), np.repeat(y, s))
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-12)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-11)
    # smaller batches: the same in expectation only (documented), and here not equal
    kw["batch_size"] = 4
    a = MLPClassifier(**kw).fit(X, y, sample_weight=s)
    b = MLPClassifier(**kw).fit(np.repeat(X, s, axis=0), np.repeat(y, s))
    assert a.n_steps_ != b.n_steps_


def test_weights_at_batch_one_scale_the_step():
    """Batch 1: a weight s_i makes row i's step s_i / s_bar times the unweighted one, so
    uniform weights c (s_i / s_bar = 1) give the unweighted fit (to rounding)."""
    rng = np.random.default_rng(33)
    X = rng.standard_normal((20, 3))
    y = X[:, 0] - X[:, 1]
    kw = dict(hidden_layer_sizes=(4,), learning_rate=0.01, max_iter=5, random_state=0)
    a = MLPRegressor(**kw).fit(X, y)
    b = MLPRegressor(**kw).fit(X, y, sample_weight=np.full(20, 2.5))
    np.testing.assert_allclose(a.loss_curve_, b.loss_curve_, rtol=1e-12)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12, atol=1e-14)
    # the weighted epoch loss: sum s_i l_i / sum s_i (an epoch with learning_rate ~ 0)
    s = rng.uniform(0.1, 2.0, 20)
    m = MLPRegressor((4,), learning_rate=1e-300, max_iter=1, random_state=0).fit(X, y, sample_weight=s)
    z = m.predict(X)
    assert m.loss_curve_[0] == pytest.approx(np.sum(s * (z - y) ** 2) / np.sum(s), rel=1e-12)


def test_bad_sample_weight():
    X = np.random.default_rng(0).standard_normal((10, 2))
    y = np.arange(10) % 2
    for sw, msg in ((-np.ones(10), "non-negative"), (np.ones(9), "entries"), (np.zeros(10), "zero"),
                    (np.full(10, np.nan), "NaN")):
        with pytest.raises(ValueError, match=msg):
            MLPClassifier((2,), max_iter=1).fit(X, y, sample_weight=sw)
        with pytest.raises(ValueError, match=msg):
            MLPRegressor((2,), max_iter=1).partial_fit(X, y, sample_weight=sw)


def test_regressor_multi_output():
    """A 2-d y: one output unit per column, trained together (as scikit-learn's MLPRegressor);
    predict returns (n, n_outputs); a 1-d y or a single column gives 1-d predictions."""
    rng = np.random.default_rng(34)
    X = rng.standard_normal((80, 3))
    Y = np.column_stack([X[:, 0] - X[:, 1], 0.5 * X[:, 2], X[:, 0]])
    kw = dict(hidden_layer_sizes=(16,), batch_size=8, learning_rate=0.05, momentum=0.5, max_iter=150,
              random_state=0)
    m = MLPRegressor(**kw).fit(X, Y)
    assert m.n_outputs_ == 3 and m.coefs_[-1].shape == (16, 3)
    assert m.predict(X).shape == (80, 3) and m.score(X, Y) > 0.9
    assert MLPRegressor(**kw).fit(X, Y[:, 0]).predict(X).shape == (80,)
    assert MLPRegressor(**kw).fit(X, Y[:, :1]).predict(X).shape == (80,)
    p = MLPRegressor(**kw)
    p.partial_fit(X, Y)
    p.partial_fit(X[:10], Y[:10])
    assert p.predict(X[:4]).shape == (4, 3)
    with pytest.raises(ValueError, match="output"):
        p.partial_fit(X, Y[:, :2])


def test_partial_fit_rejects_a_different_number_of_features():
    rng = np.random.default_rng(35)
    X = rng.standard_normal((20, 4))
    y = (X[:, 0] > 0).astype(int)
    for m, args in ((MLPClassifier((3,)), dict(classes=[0, 1])), (MLPRegressor((3,)), {})):
        m.partial_fit(X, y, **args)
        with pytest.raises(ValueError, match="features"):
            m.partial_fit(X[:, :3], y)
        with pytest.raises(ValueError, match="features"):
            m.partial_fit(np.hstack([X, X]), y)
        assert m.n_features_in_ == 4 and m.coefs_[0].shape[0] == 4
        m.partial_fit(X, y)                                  # still usable


@pytest.mark.parametrize("cls, kw", [
    (MLPClassifier, dict(batch_size=4, momentum=0.5, schedule="inverse_t", learning_rate=0.3)),
    (MLPClassifier, dict(batch_size=1, alpha=1e-3, learning_rate=0.05)),
    (MLPRegressor, dict(batch_size=3, momentum=0.9, schedule="inverse_sqrt", learning_rate=0.02)),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_warm_start_continues_bit_for_bit(cls, kw, dtype):
    """fit(max_iter=a), then a warm fit(max_iter=b) = fit(max_iter=a + b): the weights,
    velocities, the schedule's step count and the random stream of the orders all carry on."""
    rng = np.random.default_rng(36)
    X = rng.standard_normal((30, 3)).astype(dtype)
    y = X[:, 0] * X[:, 1] if cls is MLPRegressor else (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    common = dict(hidden_layer_sizes=(5,), tol=0, n_iter_no_change=1000, random_state=3, **kw)
    one = cls(max_iter=7, **common).fit(X, y)
    two = cls(max_iter=4, warm_start=True, **common).fit(X, y)
    two.set_params(max_iter=3).fit(X, y)
    _same_fit(one, two)
    assert two.n_iter_ == 7
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    # warm_start=False: fit restarts from scratch
    three = cls(max_iter=4, **common).fit(X, y)
    _same_fit(three.fit(X, y), cls(max_iter=4, **common).fit(X, y))


def test_warm_start_checks_the_data():
    rng = np.random.default_rng(37)
    X = rng.standard_normal((30, 3))
    y = (X[:, 0] > 0).astype(int)
    m = MLPClassifier((4,), max_iter=2, warm_start=True, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="same classes"):
        m.fit(X, y + 1)
    with pytest.raises(ValueError, match="features"):
        m.fit(X[:, :2], y)
    assert m.n_features_in_ == 3
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        m.set_params(hidden_layer_sizes=(5,)).fit(X, y)
    r = MLPRegressor((4,), max_iter=2, warm_start=True, random_state=0).fit(X, X[:, :2])
    with pytest.raises(ValueError, match="outputs"):
        r.fit(X, X[:, 0])
    # a converged fit is continued (the stopping rule counts afresh), not stopped at once
    c = MLPClassifier((3,), tol=1e9, n_iter_no_change=2, max_iter=100, warm_start=True,
                      random_state=0).fit(X, y)
    assert c.n_iter_ == 4                   # epoch 1 improves on inf, 2 .. 4 do not (> 2)
    assert c.fit(X, y).n_iter_ == 7         # 3 more epochs without improvement, not 1


def test_verbose_bar_and_silence(capsys):
    rng = np.random.default_rng(38)
    X = rng.standard_normal((30, 3))
    y = (X[:, 0] > 0).astype(int)
    kw = dict(hidden_layer_sizes=(4,), max_iter=5, random_state=0)
    quiet = MLPClassifier(**kw).fit(X, y)
    assert capsys.readouterr().err == ""
    loud = MLPClassifier(verbose=1, **kw).fit(X, y)
    err = capsys.readouterr().err
    assert "MLPClassifier" in err and "5/5" in err and f"loss={loud.loss_:.5g}" in err
    _same_fit(quiet, loud)
    MLPRegressor(verbose=True, early_stopping=True, **kw).fit(X, X[:, 0])
    assert "val_score=" in capsys.readouterr().err
    with pytest.raises(ValueError):
        MLPClassifier(verbose=-1, **kw).fit(X, y)


def test_float32_outputs_and_tag():
    rng = np.random.default_rng(39)
    X = rng.standard_normal((40, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    c = MLPClassifier((4,), max_iter=3, random_state=0).fit(X, y)
    assert c.coefs_[0].dtype == np.float32
    assert c.predict_proba(X).dtype == np.float32 and c.predict_log_proba(X).dtype == np.float32
    assert c.predict_proba(X.astype(np.float64)).dtype == np.float32      # the network's dtype
    r = MLPRegressor((4,), max_iter=3, random_state=0).fit(X, X[:, :2].astype(np.float64))
    assert r.predict(X).dtype == np.float32
    assert MLPRegressor((4,), max_iter=3).fit(X.astype(np.float64), X[:, 0]).predict(X).dtype == np.float64
    for est in (c, r):
        assert est.__sklearn_tags__().transformer_tags.preserves_dtype == ["float64", "float32"]


def test_public_api_has_type_hints():
    import typing
    for cls in (MLPClassifier, MLPRegressor):
        hints = typing.get_type_hints(cls.__init__)
        assert set(hints) == set(cls().get_params()) | {"return"}
        for meth in ("fit", "partial_fit", "predict"):
            assert "X" in typing.get_type_hints(getattr(cls, meth))
        assert typing.get_type_hints(cls.fit)["return"] is cls


def test_new_names():
    """issue 33's names: max_iter (epochs), alpha (the notes' lambda); the old ones are gone."""
    for cls in (MLPClassifier, MLPRegressor):
        params = cls().get_params()
        assert {"max_iter", "alpha", "warm_start", "verbose"} <= set(params)
        assert not {"max_epochs", "lam"} & set(params)
