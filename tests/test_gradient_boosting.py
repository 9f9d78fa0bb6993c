"""Second-order gradient boosting (002 section 3.2 "XGBoost"): smml.ensemble.GradientBoosting*
against the notes' formulas, the plain-Python reference, a least-squares tree, and bad inputs."""
import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from smml.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from smml.reference import gradient_boosting as ref
from smml.tree import TreeRegressor


def _data(n=80, d=3, seed=0, kind="reg", k=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    f = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, -1]
    if kind == "reg":
        return X, f + 0.3 * rng.normal(size=n)
    if kind == "bin":
        return X, (f + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, np.digitize(f + 0.3 * rng.normal(size=n), np.quantile(f, np.linspace(0, 1, k + 1)[1:-1]))


def _leaves_of(model):
    return [int((t.children_left < 0).sum()) for t in model.estimators_]


# ---- the notes' formulas ------------------------------------------------------

def test_square_loss_one_round_is_least_squares_tree_on_residuals():
    # 002 "Quadratic loss": the expansion is exact, g = -2 (y - F), h = 2, so with lambda = 0 and
    # learning rate 1 the first tree is the least-squares regression tree of the residuals y - F_0
    X, y = _data(n=400, d=4, seed=1)
    gb = GradientBoostingRegressor(n_estimators=1, learning_rate=1.0, reg_lambda=0.0, min_child_weight=0.0,
                                   max_depth=3).fit(X, y)
    r = y - y.mean()
    tr = TreeRegressor(splitter="hist", growth="depth", max_depth=3, max_bins=256).fit(X, r)
    t = gb.estimators_[0]
    np.testing.assert_array_equal(t.feature, tr.tree_.feature)
    np.testing.assert_array_equal(t.threshold, tr.tree_.threshold)
    np.testing.assert_allclose(gb.predict(X), y.mean() + tr.predict(X), rtol=1e-12, atol=1e-12)
    # the leaf values are -G / (H + lambda) = mean residual of the leaf
    leaf = tr.apply(X)
    for v in np.unique(leaf):
        np.testing.assert_allclose(t.value[v, 0], r[leaf == v].mean(), rtol=1e-10, atol=1e-12)


def test_leaf_values_and_gain_follow_the_notes():
    X, y = _data(n=200, d=2, seed=2)
    lam, lr = 3.0, 0.5
    gb = GradientBoostingRegressor(n_estimators=1, learning_rate=lr, reg_lambda=lam, max_depth=1,
                                   min_child_weight=0.0).fit(X, y)
    t = gb.estimators_[0]
    g = -2.0 * (y - y.mean())
    h = np.full_like(y, 2.0)
    f, thr = t.feature[0], t.threshold[0]
    L = X[:, f] <= thr
    GL, HL, GR, HR = g[L].sum(), h[L].sum(), g[~L].sum(), h[~L].sum()
    gain = 0.5 * (GL**2 / (HL + lam) + GR**2 / (HR + lam) - (GL + GR) ** 2 / (HL + HR + lam))
    np.testing.assert_allclose(t.improvement[0], gain, rtol=1e-9)
    np.testing.assert_allclose(t.value[1, 0], lr * -GL / (HL + lam), rtol=1e-9)
    np.testing.assert_allclose(t.value[2, 0], lr * -GR / (HR + lam), rtol=1e-9)
    # a split is made only when gain > gamma: gamma just above the root's gain leaves a stump-less tree
    gb2 = GradientBoostingRegressor(n_estimators=1, learning_rate=lr, reg_lambda=lam, max_depth=1,
                                    min_child_weight=0.0, gamma=gain * (1 + 1e-9)).fit(X, y)
    assert gb2.estimators_[0].node_count == 1
    gb3 = GradientBoostingRegressor(n_estimators=1, learning_rate=lr, reg_lambda=lam, max_depth=1,
                                    min_child_weight=0.0, gamma=gain * (1 - 1e-9)).fit(X, y)
    assert gb3.estimators_[0].node_count == 3


@pytest.mark.parametrize("kind", ["reg", "bin", "multi"])
@pytest.mark.parametrize("d", [1, 4, 7, 9])
def test_against_reference_nodes_with_more_rows_than_bins(kind, d):
    # nodes of at least max_bins rows fill their histograms in the compiled row pass (four
    # features an iteration, then the rest); features of 12 values each, max_bins 16: the
    # bins are the values, as in the reference
    rng = np.random.default_rng(d)
    X = rng.integers(0, 12, size=(600, d)).astype(float)
    f = np.sin(X[:, 0]) + 0.3 * X[:, -1] + 0.1 * rng.normal(size=600)
    params = dict(n_estimators=3, learning_rate=0.4, max_depth=4, reg_lambda=0.7, min_child_weight=0.05)
    if kind == "reg":
        sm = GradientBoostingRegressor(max_bins=16, **params).fit(X, f)
        rf = ref.GradientBoostingRegressor(**params).fit(X, f)
        np.testing.assert_allclose(sm.predict(X), rf.predict(X), rtol=1e-9, atol=1e-9)
    else:
        y = (f > np.median(f)).astype(int) if kind == "bin" else np.digitize(f, np.quantile(f, [0.3, 0.7]))
        sm = GradientBoostingClassifier(max_bins=16, **params).fit(X, y)
        rf = ref.GradientBoostingClassifier(**params).fit(X, y)
        np.testing.assert_allclose(sm.predict_proba(X), rf.predict_proba(X), rtol=1e-9, atol=1e-9)
    assert max(t.node_count for t in sm.estimators_) > 7


@pytest.mark.parametrize("kind", ["reg", "bin", "multi"])
def test_against_reference(kind):
    X, y = _data(n=60, d=3, seed=3, kind=kind)
    params = dict(n_estimators=4, learning_rate=0.4, max_depth=3, reg_lambda=0.7, gamma=0.01,
                  min_child_weight=0.05)
    if kind == "reg":
        sm = GradientBoostingRegressor(**params).fit(X, y)
        rf = ref.GradientBoostingRegressor(**params).fit(X, y)
        np.testing.assert_allclose(sm.predict(X), rf.predict(X), rtol=1e-9, atol=1e-9)
    else:
        sm = GradientBoostingClassifier(**params).fit(X, y)
        rf = ref.GradientBoostingClassifier(**params).fit(X, y)
        np.testing.assert_allclose(sm.predict_proba(X), rf.predict_proba(X), rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(sm.predict(X), rf.predict(X))
    Xt = np.random.default_rng(9).normal(size=(50, 3))
    if kind == "reg":
        np.testing.assert_allclose(sm.predict(Xt), rf.predict(Xt), rtol=1e-9, atol=1e-9)
    # same splits, tree by tree, in the same (depth-first) order
    ref_trees = [t for rt in rf.trees_ for t in rt]
    assert len(ref_trees) == len(sm.estimators_)
    for st, rt in zip(sm.estimators_, ref_trees):
        feats, stack = [], [rt]
        while stack:
            node = stack.pop()
            feats.append(node.feature)
            if node.feature >= 0:
                stack += [node.right, node.left]
        assert list(st.feature) != [] and len(feats) == st.node_count
        # depth-first order of smml's nodes
        order, stack = [], [0]
        while stack:
            v = stack.pop()
            order.append(v)
            if st.children_left[v] >= 0:
                stack += [st.children_left[v] + 1, st.children_left[v]]
        np.testing.assert_array_equal(st.feature[order], feats)


def test_train_loss_never_increases_for_square_loss():
    X, y = _data(n=300, seed=4)
    gb = GradientBoostingRegressor(n_estimators=30, learning_rate=0.5, reg_lambda=2.0).fit(X, y)
    assert np.all(np.diff(gb.train_score_) <= 1e-12)
    np.testing.assert_allclose(gb.train_score_[-1], np.mean((y - gb.predict(X)) ** 2), rtol=1e-10)


def test_classifier_losses():
    X, y = _data(n=300, seed=5, kind="bin")
    gb = GradientBoostingClassifier(n_estimators=20).fit(X, y)
    p = gb.predict_proba(X)[:, 1]
    np.testing.assert_allclose(gb.train_score_[-1], -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)), rtol=1e-9)
    np.testing.assert_allclose(gb.decision_function(X), np.log(p / (1 - p)), rtol=1e-6, atol=1e-8)
    assert gb.score(X, y) > 0.9
    X3, y3 = _data(n=300, seed=5, kind="multi", k=4)
    gb3 = GradientBoostingClassifier(n_estimators=10).fit(X3, y3)
    assert len(gb3.estimators_) == 10 * 4
    P = gb3.predict_proba(X3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(gb3.train_score_[-1], -np.mean(np.log(P[np.arange(300), y3])), rtol=1e-9)
    np.testing.assert_array_equal(gb3.predict(X3), np.argmax(P, axis=1))


# ---- kernel properties --------------------------------------------------------

def test_thread_count_does_not_change_the_model(monkeypatch):
    # enough rows that the kernel's per-split pass (histograms, subtraction, scans) runs on 2
    # threads for the upper nodes (rows x features >= 2 grains; the grain pinned at 8192, so
    # that this test-sized problem takes the parallel path whatever the default becomes)
    import smml.ensemble._gradient_boosting as gb_module
    monkeypatch.setattr(gb_module, "_GRAIN", 8192)
    X, y = _data(n=20000, d=8, seed=6, kind="multi")
    a = GradientBoostingClassifier(n_estimators=5, n_jobs=1, random_state=0).fit(X, y)
    b = GradientBoostingClassifier(n_estimators=5, n_jobs=2, random_state=0).fit(X, y)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.nodes, tb.nodes)
        np.testing.assert_array_equal(ta.value, tb.value)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


def test_large_node_partition_in_ranges():
    # nodes of >= 2 x 16,384 rows are partitioned in ranges (on 2 threads when allowed), the
    # children's rows laid end to end in range order and their G, H summed per range: the model
    # does not depend on the thread count, every leaf holds exactly the rows that reach it, and
    # its value is 002's -G / (H + lambda) of those rows (squared loss: g = -2 r, h = 2)
    X, y = _data(n=70000, d=6, seed=9)
    kw = dict(n_estimators=2, max_depth=3, reg_lambda=0.0, learning_rate=1.0, random_state=0)
    a = GradientBoostingRegressor(n_jobs=1, **kw).fit(X, y)
    b = GradientBoostingRegressor(n_jobs=2, **kw).fit(X, y)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.nodes, tb.nodes)
        np.testing.assert_array_equal(ta.value, tb.value)
    t = b.estimators_[0]
    leaf = np.zeros(len(X), np.intp)               # each row routed down the tree (right = left + 1)
    while np.any(t.children_left[leaf] >= 0):
        inner = t.children_left[leaf] >= 0
        first = X[np.arange(len(X)), np.maximum(t.feature[leaf], 0)] <= t.threshold[leaf]
        leaf = np.where(inner, t.children_left[leaf] + np.where(first, 0, 1), leaf)
    r = y - y.mean()
    for v in np.unique(leaf):
        assert t.n_node_samples[v] == np.sum(leaf == v)
        np.testing.assert_allclose(t.value[v, 0], r[leaf == v].mean(), rtol=1e-9, atol=1e-12)


def test_histogram_subtraction_equals_direct_sums():
    # deep trees on more rows than bins: node totals (summed directly) vs the split scan that
    # reads subtracted histograms: the kernel's G_L + G_R equals the parent's G up to rounding
    X, y = _data(n=3000, d=5, seed=7)
    gb = GradientBoostingRegressor(n_estimators=3, max_depth=8, reg_lambda=0.0, learning_rate=1.0,
                                   min_child_weight=0.0).fit(X, y)
    t = gb.estimators_[0]
    r = y - y.mean()
    leaf = np.zeros(len(X), np.intp)
    for i, x in enumerate(X):
        v = 0
        while t.children_left[v] >= 0:
            v = t.children_left[v] + (0 if x[t.feature[v]] <= t.threshold[v] else 1)
        leaf[i] = v
    for v in np.unique(leaf):
        np.testing.assert_allclose(t.value[v, 0], r[leaf == v].mean(), rtol=1e-9, atol=1e-12)
        assert t.n_node_samples[v] == np.sum(leaf == v)


def test_max_leaf_nodes_and_min_child_weight():
    X, y = _data(n=500, seed=8)
    gb = GradientBoostingRegressor(n_estimators=5, max_depth=None, max_leaf_nodes=7).fit(X, y)
    assert all(n == 7 for n in _leaves_of(gb))
    gb = GradientBoostingRegressor(n_estimators=5, max_depth=None, min_child_weight=40.0).fit(X, y)
    for t in gb.estimators_:
        assert np.all(t.weighted_n_node_samples >= 40.0)     # h = 2 per sample: >= 20 samples a node
    gb = GradientBoostingRegressor(n_estimators=3, max_depth=2).fit(X, y)
    assert all(t.max_depth <= 2 for t in gb.estimators_)


def test_staged_predict_and_feature_importances():
    X, y = _data(n=400, d=5, seed=9, kind="bin")
    gb = GradientBoostingClassifier(n_estimators=15, random_state=0).fit(X, y)
    stages = list(gb.staged_predict_proba(X))
    assert len(stages) == 15
    np.testing.assert_allclose(stages[-1], gb.predict_proba(X), rtol=1e-12)
    np.testing.assert_array_equal(list(gb.staged_predict(X))[-1], gb.predict(X))
    imp = gb.feature_importances_
    np.testing.assert_allclose(imp.sum(), 1.0)
    assert imp[[0, 1, 4]].min() > imp[[2, 3]].max()      # the target uses features 0, 1 and 4
    Xr, yr = _data(n=300, seed=9)
    gr = GradientBoostingRegressor(n_estimators=7).fit(Xr, yr)
    np.testing.assert_allclose(list(gr.staged_predict(Xr))[-1], gr.predict(Xr), rtol=1e-12)


def test_early_stopping():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(600, 4))
    y = X[:, 0] + rng.normal(size=600) * 2.0
    gb = GradientBoostingRegressor(n_estimators=300, learning_rate=0.5, early_stopping=True,
                                   n_iter_no_change=5, random_state=0).fit(X, y)
    assert gb.n_estimators_ < 300
    assert len(gb.estimators_) == gb.n_estimators_ == len(gb.validation_score_) == len(gb.train_score_)
    assert np.argmin(gb.validation_score_) == gb.n_estimators_ - 1
    Xc, yc = _data(n=600, seed=10, kind="multi")
    gc = GradientBoostingClassifier(n_estimators=200, early_stopping=True, random_state=0).fit(Xc, yc)
    assert gc.n_estimators_ < 200 and len(gc.estimators_) == 3 * gc.n_estimators_


def test_sample_weight_is_repetition_and_zero_is_removal():
    X, y = _data(n=80, seed=11)
    w = np.random.default_rng(0).integers(0, 4, size=80)
    a = GradientBoostingRegressor(n_estimators=5).fit(X, y, sample_weight=w)
    b = GradientBoostingRegressor(n_estimators=5).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9, atol=1e-9)
    Xc, yc = _data(n=80, seed=11, kind="bin")
    a = GradientBoostingClassifier(n_estimators=5).fit(Xc, yc, sample_weight=w)
    b = GradientBoostingClassifier(n_estimators=5).fit(np.repeat(Xc, w, axis=0), np.repeat(yc, w))
    np.testing.assert_allclose(a.predict_proba(Xc), b.predict_proba(Xc), rtol=1e-9, atol=1e-9)


def test_subsample_and_colsample():
    X, y = _data(n=500, d=6, seed=12)
    a = GradientBoostingRegressor(n_estimators=8, subsample=0.5, colsample_bytree=1 / 6, random_state=3).fit(X, y)
    b = GradientBoostingRegressor(n_estimators=8, subsample=0.5, colsample_bytree=1 / 6, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    for t in a.estimators_:
        used = set(t.feature[t.feature >= 0].tolist())
        assert len(used) <= 1                                   # one feature per tree
        assert t.n_node_samples[0] == 250                       # half of the rows
    c = GradientBoostingRegressor(n_estimators=8, subsample=0.5, random_state=4).fit(X, y)
    assert not np.array_equal(a.predict(X), c.predict(X))


@pytest.mark.parametrize("subsample", [1.0, 0.5])
def test_training_scores_equal_the_fitted_model_on_the_training_rows(subsample):
    # the kernel adds each tree's values to the training scores from its leaves' row segments
    # (the rows of a subsample) and by routing the rows left out: train_score_ must be the loss of
    # the fitted model's own predictions on the training rows, round by round
    X, y = _data(n=800, d=5, seed=21)
    gb = GradientBoostingRegressor(n_estimators=6, subsample=subsample, random_state=2).fit(X, y)
    for t, pred in enumerate(gb.staged_predict(X)):
        np.testing.assert_allclose(gb.train_score_[t], np.mean((y - pred) ** 2), rtol=1e-12)
    Xc, yc = _data(n=800, d=5, seed=22, kind="multi")
    gc = GradientBoostingClassifier(n_estimators=4, subsample=subsample, random_state=2).fit(Xc, yc)
    for t, P in enumerate(gc.staged_predict_proba(Xc)):
        loss = -np.mean(np.log(P[np.arange(len(yc)), np.searchsorted(gc.classes_, yc)]))
        np.testing.assert_allclose(gc.train_score_[t], loss, rtol=1e-10)
    Xb, yb = _data(n=800, d=5, seed=23, kind="bin")
    gbin = GradientBoostingClassifier(n_estimators=5, subsample=subsample, random_state=2).fit(Xb, yb)
    assert len(gbin.train_score_) == 5
    for t, P in enumerate(gbin.staged_predict_proba(Xb)):
        np.testing.assert_allclose(gbin.train_score_[t], -np.mean(np.log(P[np.arange(len(yb)), yb])), rtol=1e-10)


@pytest.mark.parametrize("loss, K", [(0, 1), (1, 1), (2, 4)])
def test_gradients_and_the_loss_in_one_pass(loss, K):
    # _gbm.gradients(want_loss=True) returns the loss at F (a round's training loss) from the
    # exponentials of the gradients: bit for bit loss_sum's value, the same G and H, on any
    # thread count; both against the notes' formulas in numpy
    from smml._core import _gbm

    rng = np.random.default_rng(loss)
    n = 9001                                    # three blocks of rows, the last one short
    F = rng.normal(size=(n, K)) * 4
    F[:3] = [[40.0] * K, [-40.0] * K, [0.0] * K]
    y = rng.integers(0, max(K, 2), n).astype(float) if loss else rng.normal(size=n)
    sw = rng.random(n)
    out = []
    for nt in (1, 2):
        for want in (False, True):
            G, H, M = np.empty((K, n)), np.empty((K, n)), np.full((K, 2), np.nan)
            v = _gbm.gradients(loss, y, F, sw, G, H, nt, want, M)
            out.append((G, H))
            # each class's max |g| and |h|, found block by block as they are made
            np.testing.assert_array_equal(M, np.c_[np.abs(G).max(axis=1), np.abs(H).max(axis=1)])
            if want:
                assert v == _gbm.loss_sum(loss, y, F, sw, nt) == _gbm.loss_sum(loss, y, F, sw, 1)
    for G, H in out[1:]:
        np.testing.assert_array_equal(G, out[0][0])
        np.testing.assert_array_equal(H, out[0][1])
    with pytest.raises(ValueError, match="maxima"):
        _gbm.gradients(loss, y, F, sw, G, H, 1, False, np.empty((K, 3)))
    G, H = out[0]
    if loss == 0:
        g, h, lv = -2 * (y - F[:, 0]), np.full(n, 2.0), (y - F[:, 0]) ** 2
        g, h = g[None], h[None]
    elif loss == 1:
        p = 1 / (1 + np.exp(-F[:, 0]))
        g, h = (p - y)[None], (p * (1 - p))[None]
        lv = np.logaddexp(0, F[:, 0]) - y * F[:, 0]
    else:
        P = np.exp(F - F.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        Y = np.eye(K)[y.astype(int)]
        g, h = (P - Y).T, (P * (1 - P)).T
        lv = -np.log(P[np.arange(n), y.astype(int)])
    np.testing.assert_allclose(G, sw * g, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(H, sw * h, rtol=1e-12, atol=1e-300)
    G2, H2 = np.empty((K, n)), np.empty((K, n))
    np.testing.assert_allclose(_gbm.gradients(loss, y, F, sw, G2, H2, 2, True), np.dot(sw, lv), rtol=1e-12)
    # hess=False (the square loss's h = 2 w, the same every round): H is left as it is, its
    # maxima 0; G and the loss as with it
    if loss == 0:
        for nt in (1, 2):
            H3, G3, M3 = np.full((1, n), 7.5), np.empty((1, n)), np.full((1, 2), np.nan)
            assert _gbm.gradients(loss, y, F, sw, G3, H3, nt, True, M3, False) == _gbm.loss_sum(loss, y, F, sw, 1)
            np.testing.assert_array_equal(G3, G)
            assert np.all(H3 == 7.5)
            np.testing.assert_array_equal(M3, [[np.abs(G).max(), 0.0]])
    else:
        with pytest.raises(ValueError, match="square loss"):
            _gbm.gradients(loss, y, F, sw, G2, H2, 1, False, None, False)


def test_categorical_features():
    rng = np.random.default_rng(13)
    n = 600
    cat = rng.integers(0, 8, size=n)
    effect = np.array([3.0, -1.0, 0.5, 2.0, -2.0, 0.0, 1.0, -3.0])
    X = np.column_stack([cat, rng.normal(size=n)])
    y = effect[cat] + 0.1 * X[:, 1] + 0.05 * rng.normal(size=n)
    gb = GradientBoostingRegressor(n_estimators=30, max_depth=4, categorical_features=[0]).fit(X, y)
    assert np.mean((gb.predict(X) - y) ** 2) < 0.02
    assert any(t.is_categorical.any() for t in gb.estimators_)
    # an unknown category goes to the second child (the tree module's rule): no error
    gb.predict(np.array([[42.0, 0.0]]))


@pytest.mark.parametrize("kind", ["bin", "multi", "reg"])
def test_level_kernel_equals_the_record_kernel(kind):
    """Without categorical tests, prediction walks flat per-node arrays level by level
    (_tree_predict.sum_trees_levels, leaves routing to themselves); it equals the record kernel
    (sum_trees) bit for bit: NaNs on both learned sides, huge values, float32, staged, a few
    rows. With a categorical test the record kernel is used."""
    rng = np.random.default_rng(21)
    n = 3000
    X = rng.normal(size=(n, 6))
    y = {"bin": (X[:, 0] * X[:, 1] > 0).astype(int), "multi": (X[:, 0] > 0) + (X[:, 2] > 0.5),
         "reg": X[:, 0] * X[:, 1] + X[:, 2]}[kind]
    X[rng.random(X.shape) < 0.1] = np.nan
    cls = GradientBoostingRegressor if kind == "reg" else GradientBoostingClassifier
    m = cls(n_estimators=15, max_depth=5, n_jobs=2, random_state=0).fit(X, y)
    assert m._levels is not None
    Z = np.vstack([X, np.full((2, 6), np.nan), np.full((2, 6), 1e30), np.full((2, 6), -1e30)])
    pred = m.predict if kind == "reg" else m.predict_proba

    def outputs():
        return ([pred(Z), pred(Z.astype(np.float32)), pred(Z[:3])]
                + [s for s in (m.staged_predict(Z[:200]))])

    fast = outputs()
    levels, m._levels = m._levels, None
    slow = outputs()
    m._levels = levels
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)
    cat = rng.integers(0, 5, n)
    yc = {"bin": cat % 2, "multi": cat % 3, "reg": cat.astype(float)}[kind]
    Xc = np.column_stack([cat, np.nan_to_num(X[:, 1:])])
    mc = cls(n_estimators=5, max_depth=3, categorical_features=[0], random_state=0).fit(Xc, yc)
    assert any(t.is_categorical.any() for t in mc.estimators_) and mc._levels is None


def test_float32_pickle_and_one_row():
    X, y = _data(n=200, seed=14, kind="bin")
    X32 = X.astype(np.float32)
    a = GradientBoostingClassifier(n_estimators=10).fit(X32, y)
    b = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(a.predict_proba(X32), b.predict_proba(X32))
    np.testing.assert_allclose(a.predict_proba(X32[:1]), a.predict_proba(X32)[:1], rtol=1e-15)


def test_one_sample_and_constant_target():
    gb = GradientBoostingRegressor(n_estimators=3).fit([[1.0, 2.0]], [5.0])
    np.testing.assert_allclose(gb.predict([[0.0, 0.0], [9.0, 9.0]]), 5.0)
    gb = GradientBoostingRegressor(n_estimators=3).fit(np.arange(20.0).reshape(10, 2), np.full(10, 2.0))
    assert all(t.node_count == 1 for t in gb.estimators_)


# ---- bad inputs ---------------------------------------------------------------

@pytest.mark.parametrize("params", [dict(learning_rate=0.0), dict(learning_rate=-1.0), dict(n_estimators=0),
                                    dict(reg_lambda=-1.0), dict(gamma=-0.1), dict(subsample=0.0),
                                    dict(colsample_bytree=1.5), dict(max_bins=1), dict(max_bins=300),
                                    dict(min_child_weight=-1.0), dict(max_depth=-1), dict(loss="huber")])
def test_bad_parameters(params):
    X, y = _data(n=30)
    with pytest.raises(ValueError):
        GradientBoostingRegressor(**params).fit(X, y)


def test_bad_data():
    X, y = _data(n=30)
    yn = y.copy()
    yn[3] = np.nan
    with pytest.raises(ValueError):
        GradientBoostingRegressor().fit(X, yn)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError):
        GradientBoostingRegressor().fit(Xn, y)
    with pytest.raises(ValueError, match="class"):
        GradientBoostingClassifier().fit(X, np.zeros(30))
    with pytest.raises(ValueError):
        GradientBoostingClassifier().fit(X, y)            # continuous labels
    with pytest.raises(ValueError):
        GradientBoostingRegressor().fit(X, y, sample_weight=-np.ones(30))
    with pytest.raises(ValueError):
        GradientBoostingRegressor(early_stopping=True, validation_fraction=0.01).fit(X[:5], y[:5])
    gb = GradientBoostingRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError):
        gb.predict(X[:, :2])
    with pytest.raises(ValueError):
        gb.predict(np.full((2, 3), np.inf))                 # NaN is a missing value; inf is not
    Xi = X.copy()
    Xi[1, 2] = -np.inf
    with pytest.raises(ValueError):
        GradientBoostingClassifier().fit(Xi, (y > 0).astype(int))


@parametrize_with_checks([GradientBoostingRegressor(n_estimators=5), GradientBoostingClassifier(n_estimators=5)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---- missing values (NaN) -------------------------------------------------------

def _with_missing(X, frac, seed, cols=None):
    rng = np.random.default_rng(seed)
    X = X.copy()
    cols = range(X.shape[1]) if cols is None else cols
    for j in cols:
        X[rng.random(len(X)) < frac, j] = np.nan
    return X


@pytest.mark.parametrize("kind", ["reg", "bin", "multi"])
@pytest.mark.parametrize("seed", [0, 1])
def test_missing_values_against_reference(kind, seed):
    # the kernel's learned default direction equals the reference's exhaustive search over both
    # directions; few distinct values, so the bin edges are the reference's midpoints
    X, y = _data(n=70, d=3, seed=30 + seed, kind=kind)
    X = _with_missing(np.round(X, 1), 0.2, seed)
    params = dict(n_estimators=4, learning_rate=0.4, max_depth=3, reg_lambda=0.7, gamma=0.01,
                  min_child_weight=0.05)
    Xt = _with_missing(np.round(np.random.default_rng(9).normal(size=(60, 3)), 1), 0.3, 5)
    if kind == "reg":
        sm = GradientBoostingRegressor(**params).fit(X, y)
        rf = ref.GradientBoostingRegressor(**params).fit(X, y)
        for Z in (X, Xt):
            np.testing.assert_allclose(sm.predict(Z), rf.predict(Z), rtol=1e-9, atol=1e-9)
    else:
        sm = GradientBoostingClassifier(**params).fit(X, y)
        rf = ref.GradientBoostingClassifier(**params).fit(X, y)
        for Z in (X, Xt):
            np.testing.assert_allclose(sm.predict_proba(Z), rf.predict_proba(Z), rtol=1e-9, atol=1e-9)
    ref_trees = [t for rt in rf.trees_ for t in rt]
    sm_miss = [bool(v) for t in sm.estimators_ for v in t.missing_left[t.feature >= 0]]
    rf_miss = []
    for rt in ref_trees:
        stack = [rt]
        while stack:
            node = stack.pop()
            if node.feature >= 0:
                rf_miss.append(node.miss_left)
                stack += [node.right, node.left]
    assert sorted(sm_miss) == sorted(rf_miss)


def test_missing_values_learn_their_side():
    # y is high for x0 > 0 and for a missing x0: the root splits on x0 and sends NaN with the
    # high side; then for y high with x0 < 0 and missing, NaN goes to the first child
    rng = np.random.default_rng(3)
    x = rng.normal(size=400)
    miss = rng.random(400) < 0.25
    for high_side_first in (False, True):
        hi = (x <= 0) if high_side_first else (x > 0)
        y = np.where(hi | miss, 5.0, -5.0) + 0.01 * rng.normal(size=400)
        X = np.column_stack([np.where(miss, np.nan, x), rng.normal(size=400)])
        gb = GradientBoostingRegressor(n_estimators=1, max_depth=1, learning_rate=1.0, reg_lambda=0.0).fit(X, y)
        t = gb.estimators_[0]
        assert t.feature[0] == 0
        assert bool(t.missing_left[0]) == high_side_first
        p = gb.predict(np.array([[np.nan, 0.0], [-1.0, 0.0], [1.0, 0.0]]))
        assert p[0] > 4 and (p[1] > 4) == high_side_first and (p[2] > 4) != high_side_first


def test_missing_only_at_predict_goes_to_the_second_child():
    X, y = _data(n=300, d=3, seed=40)
    gb = GradientBoostingRegressor(n_estimators=5, max_depth=3).fit(X, y)
    assert not any(t.missing_left.any() for t in gb.estimators_)
    Xt = np.random.default_rng(1).normal(size=(20, 3))
    Xn, Xbig = Xt.copy(), Xt.copy()
    Xn[:, 1] = np.nan
    Xbig[:, 1] = 1e300                                  # above every threshold: the second child
    np.testing.assert_array_equal(gb.predict(Xn), gb.predict(Xbig))


def test_missing_values_threads_early_stopping_and_all_missing_column(monkeypatch):
    import smml.ensemble._gradient_boosting as gb_module
    monkeypatch.setattr(gb_module, "_GRAIN", 8192)     # the parallel per-split pass (see above)
    X, y = _data(n=20000, d=6, seed=41, kind="bin")
    X = _with_missing(X, 0.1, 2, cols=[0, 2])
    X[:, 4] = np.nan                                    # a column with no value at all: never split on
    a = GradientBoostingClassifier(n_estimators=4, n_jobs=1, random_state=0).fit(X, y)
    b = GradientBoostingClassifier(n_estimators=4, n_jobs=2, random_state=0).fit(X, y)
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.nodes, tb.nodes)
    assert any(t.missing_left.any() for t in a.estimators_)
    assert not any((t.feature == 4).any() for t in a.estimators_)
    # training scores (kernel-updated) equal the fitted model's predictions with missing values;
    # validation rows with missing values go through the code path of the scores
    gs = GradientBoostingClassifier(n_estimators=30, early_stopping=True, validation_fraction=0.2,
                                    n_iter_no_change=3, random_state=0).fit(X[:3000], y[:3000])
    assert 1 <= gs.n_estimators_ <= 30
    assert np.all(np.isfinite(gs.validation_score_))
    gr = GradientBoostingRegressor(n_estimators=5, subsample=0.7, random_state=1).fit(X[:2000], X[:2000, 1])
    for t, pred in enumerate(gr.staged_predict(X[:2000])):
        np.testing.assert_allclose(gr.train_score_[t], np.mean((X[:2000, 1] - pred) ** 2), rtol=1e-12)


def test_missing_values_in_a_categorical_column_are_rejected():
    X, y = _data(n=50, d=2, seed=42)
    X[:, 0] = np.round(np.abs(X[:, 0]) * 3)
    X[4, 0] = np.nan
    with pytest.raises(ValueError, match="missing"):
        GradientBoostingRegressor(categorical_features=[0]).fit(X, y)


# ---- warm_start: more rounds, the model of a fresh fit (issue 33) ----

@pytest.mark.parametrize("kind", ["binary", "3 classes", "regression"])
@pytest.mark.parametrize("sampled", [False, True])
def test_warm_start_adds_the_rounds_of_a_fresh_fit(kind, sampled):
    from smml.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    X[rng.random((400, 6)) < 0.05] = np.nan                 # missing values route too
    s = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1])
    y = {"binary": (s > 0).astype(int), "3 classes": np.digitize(s, [-0.5, 0.5]),
         "regression": 2.0 * s}[kind]
    C = GradientBoostingRegressor if kind == "regression" else GradientBoostingClassifier
    kw = dict(max_depth=3, random_state=3, **({"subsample": 0.7, "colsample_bytree": 0.5} if sampled else {}))
    fresh = C(n_estimators=12, **kw).fit(X, y)
    warm = C(n_estimators=5, warm_start=True, **kw).fit(X, y)
    first = list(warm.estimators_)
    warm.set_params(n_estimators=12).fit(X, y)
    assert warm.n_estimators_ == 12 and all(a is b for a, b in zip(first, warm.estimators_))
    for a, b in zip(fresh.estimators_, warm.estimators_):
        assert a.nodes.tobytes() == b.nodes.tobytes() and np.array_equal(a.value, b.value)
    np.testing.assert_array_equal(fresh.train_score_, warm.train_score_)
    np.testing.assert_array_equal(fresh._raw(X), warm._raw(X))
    with pytest.warns(UserWarning, match="fits no new round"):
        warm.fit(X, y)
    with pytest.raises(ValueError, match="below the 12 rounds"):
        warm.set_params(n_estimators=4).fit(X, y)
    with pytest.raises(ValueError, match="early_stopping"):
        C(n_estimators=3, warm_start=True, **kw).fit(X, y).set_params(
            n_estimators=5, early_stopping=True).fit(X, y)
    if kind != "regression":
        with pytest.raises(ValueError, match="classes of the first fit"):
            warm.set_params(n_estimators=14).fit(X, y + 1)


def test_half_squared_error_is_xgboosts_loss_with_its_parameters():
    # 1/2 (y - F)^2 (xgboost's reg:squarederror): reg_lambda, gamma and min_child_weight mean
    # what they mean in xgboost; the same trees as the notes' (y - F)^2 with the three doubled
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(200, 3)).astype(float)      # few values: exact splits on both sides
    y = X[:, 0] * 1.5 - X[:, 1] + rng.normal(scale=0.3, size=200)
    for lam, gam, mcw in ((1.0, 0.0, 1.0), (3.0, 0.5, 4.0)):
        half = GradientBoostingRegressor(loss="half_squared_error", n_estimators=3, max_depth=2,
                                         reg_lambda=lam, gamma=gam, min_child_weight=mcw).fit(X, y)
        full = GradientBoostingRegressor(n_estimators=3, max_depth=2, reg_lambda=2 * lam,
                                         gamma=2 * gam, min_child_weight=2 * mcw).fit(X, y)
        np.testing.assert_array_equal(half.predict(X), full.predict(X))
        np.testing.assert_array_equal(half.train_score_, full.train_score_ / 2)
        xgb = pytest.importorskip("xgboost")
        x = xgb.XGBRegressor(n_estimators=3, max_depth=2, learning_rate=0.3, reg_lambda=lam, gamma=gam,
                             min_child_weight=mcw, tree_method="exact", base_score=float(np.mean(y)),
                             n_jobs=1).fit(X, y)
        # xgboost computes in float32: the same trees, leaf values within float32 rounding
        np.testing.assert_allclose(half.predict(X), x.predict(X), rtol=0, atol=1e-5)
        booster_leaves = x.get_booster().trees_to_dataframe()
        for t in range(3):
            mine = np.sort(half.estimators_[t].value[half.estimators_[t].children_left < 0, 0])
            theirs = np.sort(booster_leaves[(booster_leaves.Tree == t) & (booster_leaves.Feature == "Leaf")]
                             ["Gain"].to_numpy())
            np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


# ---- eval_set, evals_result_, best_iteration_, verbose (xgboost's habits, issue 33) ----

def test_eval_set_history_and_early_stopping_on_it(capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = (X[:, 0] + 0.5 * rng.normal(size=600) > 0).astype(int)
    Xv = rng.normal(size=(300, 5))
    yv = (Xv[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    est = GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0)
    est.fit(X, y, eval_set=[(X, y), (Xv, yv)])
    hist = est.evals_result_
    assert list(hist) == ["validation_0", "validation_1"] and list(hist["validation_1"]) == ["log_loss"]
    # the recorded loss after round t is the loss of the model cut after round t
    for t in (0, 6, 14):
        P = np.clip(list(est.staged_predict_proba(Xv))[t][:, 1], 1e-300, 1 - 1e-16)
        want = -np.mean(yv * np.log(P) + (1 - yv) * np.log1p(-P))
        assert hist["validation_1"]["log_loss"][t] == pytest.approx(want, rel=1e-9)
    np.testing.assert_allclose(hist["validation_0"]["log_loss"], est.train_score_, rtol=1e-12)
    assert est.best_iteration_ == 14
    # early stopping on the last eval set: no rows held out, prediction up to the best round
    es = GradientBoostingClassifier(n_estimators=200, max_depth=3, learning_rate=0.5, early_stopping=True,
                                    n_iter_no_change=5, random_state=0).fit(X, y, eval_set=[(Xv, yv)])
    v = es.evals_result_["validation_0"]["log_loss"]
    assert es.best_iteration_ == int(np.argmin(v)) and es.n_estimators_ == es.best_iteration_ + 1
    assert len(v) == es.best_iteration_ + 1 + 5
    np.testing.assert_allclose(es.validation_score_, v[:es.n_estimators_])
    with pytest.raises(ValueError, match="outside classes_"):
        est.fit(X, y, eval_set=[(Xv, yv + 2)])
    with pytest.raises(ValueError, match="list of"):
        est.fit(X, y, eval_set=(Xv, yv))
    with pytest.raises(ValueError, match="features"):
        est.fit(X, y, eval_set=[(Xv[:, :3], yv)])
    GradientBoostingRegressor(n_estimators=3, verbose=1).fit(X, X[:, 0])
    assert "rounds" in capsys.readouterr().err


def test_pandas_category_columns_are_categorical_by_default():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    cat = rng.choice(["red", "green", "blue", "grey"], size=400)
    num = rng.normal(size=400)
    y = np.isin(cat, ["red", "grey"]).astype(int) ^ (num > 1.5)
    df = pd.DataFrame({"c": pd.Categorical(cat), "x": num})
    est = GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(df, y)
    assert est._cat_idx == [0] and list(est.categories_[0]) == ["blue", "green", "grey", "red"]
    # the same model as naming the column, and the notes' one-split separation of the colours
    named = GradientBoostingClassifier(n_estimators=5, max_depth=2, categorical_features=["c"]).fit(df, y)
    np.testing.assert_array_equal(est.predict_proba(df), named.predict_proba(df))
    assert est.estimators_[0].is_categorical[0]
    # None: numerical only (a category column of strings is then an error naming the fix)
    with pytest.raises(ValueError, match="categorical"):
        GradientBoostingClassifier(n_estimators=2, categorical_features=None).fit(df, y)
    # a plain array has no dtypes: numerical
    X = np.column_stack([rng.integers(0, 4, size=400), num])
    assert GradientBoostingClassifier(n_estimators=2).fit(X, y)._cat_idx == []


def test_feature_importances_by_gain_and_by_split_count():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4))
    y = 3 * X[:, 0] + X[:, 2] + 0.1 * rng.normal(size=300)
    gain = GradientBoostingRegressor(n_estimators=8, max_depth=3).fit(X, y)
    split = GradientBoostingRegressor(n_estimators=8, max_depth=3, importance_type="split").fit(X, y)
    feats = np.concatenate([t.feature[t.children_left >= 0] for t in split.estimators_])
    np.testing.assert_allclose(split.feature_importances_, np.bincount(feats, minlength=4) / len(feats))
    w = np.zeros(4)
    for t in gain.estimators_:
        inner = t.children_left >= 0
        np.add.at(w, t.feature[inner], t.improvement[inner])
    np.testing.assert_allclose(gain.feature_importances_, w / w.sum())
    assert np.argmax(gain.feature_importances_) == 0


@pytest.mark.parametrize("kw", [dict(max_depth=4), dict(max_depth=None, max_leaf_nodes=9),
                                dict(max_depth=3, subsample=0.7, colsample_bytree=0.5)])
def test_boosting_trees_pass_the_tree_checks(kw):
    """Boosting's trees skip Tree._checked when made (Tree._grown): every one must pass it."""
    from smml.tree import Tree
    X, y = _data(n=300, d=5, seed=3, kind="clf", k=3)
    X[::7, 1] = np.nan
    m = GradientBoostingClassifier(n_estimators=6, random_state=0, **kw).fit(X, y)
    assert len(m.estimators_) == 18
    for t in m.estimators_:
        nodes, value, bits = Tree._checked(t.nodes, t.value, t._bits)
        left = t.children_left
        assert np.array_equal(t.children_right, np.where(left >= 0, left + 1, -1))
        assert nodes is t.nodes and value is t.value and bits is t._bits


@pytest.mark.parametrize("mcw", [0.0, 30.0])
def test_grow_tree_children_sums_and_root_scan_are_exact(mcw):
    # grow_tree on fixed-point gradients (the fit's): each node's H (weighted_n_node_samples) is
    # the exact sum of h over the rows that reach it and each leaf value is lr * -G / (H + lambda)
    # with the exact G (the children's sums are read from histograms, not from the rows); the
    # root split is the first best of a brute-force scan of every candidate (002 "XGBoost" gain,
    # min_child_weight on both sides), missing values on either side
    import math
    from smml._binning import bin_features
    from smml._core import _gbm
    from smml._exact_sums import fixed_scale
    rng = np.random.default_rng(11)
    n, d, lam, lr = 4000, 4, 1.5, 0.3
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.08] = np.nan
    X[:, 3] = rng.integers(0, 5, n)                      # low cardinality: equal codes in a row
    Xb, edges, nan_code = bin_features(X, 64, 0, 1, np.zeros(d, np.uint8), {}, missing=True)
    g = rng.normal(size=n) + np.where(np.isnan(X[:, 0]), 2.0, np.sin(np.nan_to_num(X[:, 0])))
    h = rng.uniform(0.0, 2.0, size=n)
    h[rng.random(n) < 0.1] = 0.0
    for A in (g, h):
        _gbm.quantize(A, fixed_scale(n, _gbm.abs_max(A)))
    rows = np.arange(n, dtype=np.intp)
    F = np.zeros((n, 1))
    nodes, value, bits, sbin = _gbm.grow_tree(Xb, edges, np.zeros(d, np.uint8), nan_code, g, h, rows,
                                              np.arange(d, dtype=np.intp), F, 0, lam, 0.0, mcw, lr, 5, 0, 2,
                                              8192)
    # route every row by codes; collect each node's rows
    member = [[] for _ in range(len(nodes))]
    for i in range(n):
        v = 0
        member[v].append(i)
        while nodes[v]["children_left"] >= 0:
            c = Xb[i, nodes[v]["feature"]]
            nc = nan_code[nodes[v]["feature"]]
            first = bool(nodes[v]["missing_left"]) if c == nc else c <= sbin[v]
            v = nodes[v]["children_left"] + (0 if first else 1)
            member[v].append(i)
    for v in range(len(nodes)):
        idx = np.array(member[v], dtype=np.intp)
        G, H = math.fsum(g[idx]), math.fsum(h[idx])
        assert nodes[v]["weighted_n_node_samples"] == H and nodes[v]["n_node_samples"] == len(idx)
        if nodes[v]["children_left"] < 0:
            assert value[v, 0] == lr * (-G / (H + lam))
            assert np.all(F[idx, 0] == value[v, 0])
        else:
            assert H >= 2.0 * mcw
    # brute-force root scan
    GT, HT = math.fsum(g), math.fsum(h)
    best = (np.inf, None)
    for f in range(d):
        nc = nan_code[f]
        miss = Xb[:, f] == nc if nc >= 0 else np.zeros(n, bool)
        fin = np.unique(Xb[~miss, f])
        # missing values to the second side: "code <= c" after every finite code but the highest
        # present (with missing rows: after every finite code); then, with missing rows, missing
        # values to the first side: missing only, then missing or "code <= c"
        cands = [(c, (Xb[:, f] <= c) & ~miss, False) for c in (fin if miss.any() else fin[:-1])]
        if miss.any():
            cands += [(-1, miss, True)] + [(c, (Xb[:, f] <= c) | miss, True) for c in fin[:-1]]
        sb = {False: (np.inf, None), True: (np.inf, None)}      # each scan: first strict best
        for c, L, side in cands:
            GL, HL = math.fsum(g[L]), math.fsum(h[L])
            GR, HR = math.fsum(g[~L]), math.fsum(h[~L])
            if HL < mcw or HR < mcw:
                continue
            cost = -(GL * GL / (HL + lam) + GR * GR / (HR + lam))
            if cost < sb[side][0]:
                sb[side] = (cost, (f, c, side))
        fbest = sb[False]
        if sb[True][1] is not None and (fbest[1] is None or sb[True][0] < fbest[0] - 1e-12 * abs(fbest[0])):
            fbest = sb[True]
        if fbest[1] is not None and (best[1] is None or fbest[0] < best[0] - 1e-12 * abs(best[0])):
            best = fbest
    f, c, side = best[1]
    assert (nodes[0]["feature"], sbin[0], bool(nodes[0]["missing_left"])) == (f, c, side)
    np.testing.assert_allclose(nodes[0]["improvement"], 0.5 * (-best[0] - GT * GT / (HT + lam)), rtol=1e-9)


def _depth_first_ids(nodes):
    """The node order of depth-first growth (a split node's children get the next two ids when
    it is expanded, the first child expanded first): order[new id] = old id."""
    order, new, stack = [], {0: 0}, [0]
    while stack:
        v = stack.pop()
        order.append(v)
        c = nodes[v]["children_left"]
        if c >= 0:
            new[c], new[c + 1] = len(new), len(new) + 1
            stack += [c + 1, c]
    order = sorted(new, key=new.get)
    return np.array(order, np.intp), new


@pytest.mark.parametrize("max_depth", [3, 5, 9, -1])
def test_level_and_subtree_growth_equal_node_by_node_growth(max_depth):
    # without a leaf limit grow_tree grows the first levels one parallel region each, then a
    # subtree per task (max_depth set), or past level_bytes the rest depth-first, and renumbers
    # the nodes depth-first; with a leaf limit no tree reaches it takes the node-by-node best-first
    # path, which numbers them in its own order.  The same tree bit for bit once renumbered, on
    # any thread count, with the buffers of a HistPool reused from call to call; the rows end in
    # the same order and F gets the same values
    from smml._binning import bin_features
    from smml._core import _gbm
    from smml._exact_sums import fixed_scale
    rng = np.random.default_rng(5)
    n, d, lam, lr = 3000, 5, 1.0, 0.3
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.05] = np.nan
    X[:, 4] = rng.integers(0, 9, n)
    is_cat = np.array([0, 0, 0, 0, 1], np.uint8)
    Xb, edges, nan_code = bin_features(X, 64, 0, 1, is_cat, {}, missing=True)
    g = np.sin(3 * np.nan_to_num(X[:, 0])) + X[:, 4] % 3 + rng.normal(size=n)
    h = rng.uniform(0.5, 1.5, size=n)
    for A in (g, h):
        _gbm.quantize(A, fixed_scale(n, _gbm.abs_max(A)))
    feats = np.arange(d, dtype=np.intp)
    sub = np.sort(rng.permutation(n)[: n - 100]).astype(np.intp)     # a subsample

    def grow(max_leaf, nt, pool=None, **kw):
        rows = sub.copy()
        F = np.zeros((n, 1))
        out = _gbm.grow_tree(Xb, edges, is_cat, nan_code, g, h, rows, feats, F, 0, lam, 0.0, 0.0, lr,
                             max_depth, max_leaf, nt, 64, pool, **kw)
        return out, rows, F

    (nodes, value, bits, sbin), rows, F = grow(10**6, 1)
    nodes_bf, value_bf, bits_bf, sbin_bf = nodes.copy(), value, bits, sbin
    order, new = _depth_first_ids(nodes)
    assert len(order) == len(nodes) >= 15
    assert np.all(F[np.setdiff1d(np.arange(n), sub)] == 0) and np.all(F[sub] != 0)
    nodes = nodes[order]
    nodes["children_left"] = [new[c] if c >= 0 else -1 for c in nodes["children_left"]]
    want = (nodes.view(np.uint8), value[order], bits[order], sbin[order])
    pool = _gbm.HistPool()
    XbT = np.ascontiguousarray(Xb.T)        # the partitions read the split feature's column
    # row_chunk: on few features a large node's histogram is built by chunks of rows (a thread
    # a chunk; 0: by blocks of features only); 50 and 7 rows per chunk make this test's nodes
    # take it, one chunk per pair for some, several for others
    for nt in (1, 2, 3):
        for kw in ({}, {"level_bytes": 1}, {"Xbt": XbT}, {"level_bytes": 1, "Xbt": XbT}, {"row_chunk": 0},
                   {"row_chunk": 50}, {"row_chunk": 7, "Xbt": XbT}, {"row_chunk": 50, "level_bytes": 1}):
            got, rows2, F2 = grow(0, nt, pool, **kw)
            for a, b in zip((got[0].view(np.uint8),) + got[1:], want):
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(rows2, rows)
            np.testing.assert_array_equal(F2, F)
    # best-first (a leaf limit), node by node: the same tree by row chunks
    for kw in ({"row_chunk": 0}, {"row_chunk": 50}, {"row_chunk": 7}):
        got, rows2, F2 = grow(10**6, 2, pool, **kw)
        for a, b in zip((got[0].view(np.uint8),) + got[1:], (nodes_bf.view(np.uint8), value_bf, bits_bf, sbin_bf)):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(F2, F)
    with pytest.raises(ValueError, match="Xb transposed"):
        grow(0, 1, pool, Xbt=Xb)
    # fill_rows: the kernel sets rows to 0..m-1 itself (a tree on all the rows; what rows held
    # is not read): the tree of rows = arange(n)
    for nt in (1, 2):
        outs = []
        for rows0, kw in ((np.arange(n, dtype=np.intp), {}), (np.full(n, -7, np.intp), {"fill_rows": True})):
            F = np.zeros((n, 1))
            out = _gbm.grow_tree(Xb, edges, is_cat, nan_code, g, h, rows0, feats, F, 0, lam, 0.0, 0.0, lr,
                                 max_depth, 0, nt, 64, pool, **kw)
            outs.append((out, rows0, F))
        (a, ra, Fa), (b, rb, Fb) = outs
        for x, y in zip((a[0].view(np.uint8),) + a[1:], (b[0].view(np.uint8),) + b[1:]):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(Fa, Fb)
        assert np.all(Fa != 0)


@pytest.mark.parametrize("n", [0, 1, 16384, 16385, 100003])
def test_max_and_rounding_are_the_same_on_any_thread_count(n):
    # quantize works in blocks of 16,384 values shared by the threads; a block of values too
    # large for the fast rounding takes nearbyint: the same values either way
    from smml._core import _gbm
    from smml._exact_sums import fixed_scale
    rng = np.random.default_rng(n)
    g = rng.normal(size=n) * rng.choice([1e-9, 1.0, 1e3], size=n)
    if n > 20000:
        g[20000:20010] = 2.0 ** 53 * rng.normal(size=10)     # one block past the fast range
    m = _gbm.abs_max(g)
    assert m == (np.abs(g).max() if n else 0.0)
    s = fixed_scale(max(n, 1), m) if n <= 20000 else 0.5
    ref = np.rint(g * s) / s
    for nt in (1, 2, 3):
        q = g.copy()
        _gbm.quantize(q, s, nt)
        assert np.array_equal(q, ref)


def test_route_level_with_histograms_equals_the_two_passes():
    # smml.dask's workers move a level's rows and fill the children's histograms in one pass
    # (route_level with out): the same moves, counts and histograms as route_level, then
    # level_histograms on the new slots
    from smml._core import _gbm
    rng = np.random.default_rng(5)
    n, d, nb = 3000, 6, 12
    Xb = rng.integers(0, nb, size=(n, d)).astype(np.uint8)
    nan_code = np.full(d, -1, np.intp)
    nan_code[2] = nb - 1                            # feature 2's last code: missing values
    node0 = rng.integers(0, 3, n).astype(np.int32)  # nodes 0, 1, 2; 0 and 2 split, 1 not
    feature = np.array([2, -1, 4, -1, -1, -1, -1], np.intp)
    split_bin = np.array([5, -1, 7, -1, -1, -1, -1], np.int32)
    missing_left = np.array([1, 0, 0, 0, 0, 0, 0], np.uint8)
    first_child = np.array([3, -1, 5, -1, -1, -1, -1], np.int32)
    child_slot = np.array([-1, -1, -1, 0, -1, -1, 1], np.int32)   # nodes 3 and 6 get histograms
    g = np.round(rng.normal(size=n) * 64) / 64
    h = np.round(rng.random(n) * 64) / 64
    runs = []
    for fused in (False, True):
        node = node0.copy()
        slot = np.empty(n, np.int32)
        counts = np.zeros(7, np.int64)
        out = np.zeros((2, d, nb, 2))
        if fused:
            _gbm.route_level(Xb, node, feature, split_bin, missing_left, nan_code, first_child, child_slot,
                             slot, counts, g, h, out)
        else:
            _gbm.route_level(Xb, node, feature, split_bin, missing_left, nan_code, first_child, child_slot,
                             slot, counts)
            _gbm.level_histograms(Xb, slot, g, h, out, np.zeros(2, np.int64))
        runs.append((node, slot, counts, out))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    node, slot, counts, out = runs[1]
    # against the rule itself: node 0 tests feature 2 (missing to the left), node 2 feature 4
    c = Xb[:, 2]
    left0 = np.where(c == nb - 1, True, c <= 5)
    want = np.where(node0 == 0, np.where(left0, 3, 4), np.where(node0 == 2, np.where(Xb[:, 4] <= 7, 5, 6), 1))
    np.testing.assert_array_equal(node, want)
    np.testing.assert_array_equal(counts, np.bincount(want, minlength=7))
    for s, u in ((0, 3), (1, 6)):
        rows = want == u
        for f in range(d):
            np.testing.assert_array_equal(out[s, f, :, 0], np.bincount(Xb[rows, f], h[rows], minlength=nb))
            np.testing.assert_array_equal(out[s, f, :, 1], np.bincount(Xb[rows, f], g[rows], minlength=nb))
    with pytest.raises(ValueError, match="shapes"):
        _gbm.route_level(Xb, node0.copy(), feature, split_bin, missing_left, nan_code, first_child, child_slot,
                         slot, np.zeros(7, np.int64), g[:-1], h, np.zeros((2, d, nb, 2)))


def test_fold_scores_adds_each_class_row():
    from smml._core import _gbm
    rng = np.random.default_rng(8)
    for n, K in ((0, 3), (1, 2), (40000, 5)):
        F = rng.normal(size=(n, K))
        D = rng.normal(size=(K, n))
        want = F + D.T
        for nt in (1, 2):
            F2, D2 = F.copy(), D.copy()
            _gbm.fold_scores(F2, D2, nt)                    # (the fit's gradient rows: left as they are)
            np.testing.assert_array_equal(F2, want)
            np.testing.assert_array_equal(D2, D)
    with pytest.raises(ValueError, match="shapes"):
        _gbm.fold_scores(np.zeros((4, 3)), np.zeros((3, 5)), 1)


@pytest.mark.parametrize("subsample", [1.0, 0.6])
def test_multiclass_scores_the_same_with_the_round_buffer(subsample):
    # K classes: each tree's values go into its class's gradient row (assign), folded into F
    # after the round; the training scores stay those of the fitted model (every class,
    # subsampled rows routed too), round by round
    X, y = _data(n=1500, d=6, seed=31, kind="multi", k=4)
    gb = GradientBoostingClassifier(n_estimators=5, subsample=subsample, max_depth=3, random_state=1).fit(X, y)
    idx = np.searchsorted(gb.classes_, y)
    for t, P in enumerate(gb.staged_predict_proba(X)):
        np.testing.assert_allclose(gb.train_score_[t], -np.mean(np.log(P[np.arange(len(y)), idx])), rtol=1e-12)


def test_exact_parts_sum_exactly_on_any_values():
    # exact_parts bins each value's significand by binary exponent (integer sums, the kernel
    # _sums.exact_bins): the total is math.fsum's (correctly rounded) for subnormal, tiny,
    # huge, negative-zero and cancelling values, in any order and chunking; non-finite values
    # are refused
    import math
    from smml._exact_sums import exact_parts, exact_total
    rng = np.random.default_rng(12)
    v = np.concatenate([rng.normal(size=5000) * 10.0 ** rng.integers(-300, 300, size=5000),
                        [5e-324, -5e-324, 2.2250738585072014e-308, -0.0, 0.0, 1e16, 1.0, -1e16, 3e-320]])
    rng.shuffle(v)
    ref = math.fsum(v)
    assert exact_total([exact_parts(v)]) == ref
    assert exact_total([exact_parts(c) for c in np.array_split(v, 7)[::-1]]) == ref
    assert exact_total([exact_parts(np.zeros(0))]) == 0.0
    big = 1.7976931348623157e308                       # (fsum overflows on these)
    assert exact_total([exact_parts(np.array([big, 1.0, -big, 2.0 ** -1074]))]) == 1.0
    assert exact_total([exact_parts(np.array([big, -1.0]))]) == big
    assert exact_total([exact_parts(np.array([5e-324] * 3))]) == 1.5e-323
    w = rng.normal(size=100000)
    assert exact_total([exact_parts(w), exact_parts(-w)]) == 0.0
    for bad in (np.inf, -np.inf, np.nan):
        with pytest.raises(ValueError, match="finite"):
            exact_parts(np.array([1.0, bad]))


@pytest.mark.parametrize("loss", ["squared_error", "half_squared_error"])
def test_square_loss_hessians_kept_between_rounds(monkeypatch, loss):
    # the square loss's h = 2 w is written and rounded in the first round only (the fit keeps
    # H and its maximum): the same model, bit for bit, as writing and rounding it every round;
    # weighted rows, subsampled rows and an eval set
    import smml.ensemble._gradient_boosting as gb_module
    rng = np.random.default_rng(21)
    X = rng.normal(size=(3000, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=3000)
    sw = rng.uniform(0.2, 3.0, size=3000)
    kw = dict(loss=loss, n_estimators=12, max_depth=4, subsample=0.8, random_state=3, n_jobs=2)
    a = GradientBoostingRegressor(**kw).fit(X, y, sample_weight=sw, eval_set=[(X[:500], y[:500])])
    init = gb_module._InProcess.__init__

    def every_round(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.fixed_h = False
    monkeypatch.setattr(gb_module._InProcess, "__init__", every_round)
    b = GradientBoostingRegressor(**kw).fit(X, y, sample_weight=sw, eval_set=[(X[:500], y[:500])])
    for ta, tb in zip(a.estimators_, b.estimators_):
        np.testing.assert_array_equal(ta.nodes, tb.nodes)
        np.testing.assert_array_equal(ta.value, tb.value)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.train_score_, b.train_score_)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_diverging_learning_rate_raises_a_clear_error():
    # regression: learning_rate far above 1 overshoots more each round; the square loss's scores
    # overflowed and the regressor predicted inf / NaN without a word
    from smml.exceptions import DivergenceError
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=200)
    for lr, round_ in ((1e300, 1), (1e9, 18)):
        with pytest.raises(DivergenceError, match=f"non-finite \\(overflow\\) after round {round_}; lower learning_rate"):
            GradientBoostingRegressor(learning_rate=lr, n_estimators=100).fit(X, y)
    # a large but stable rate still fits
    assert np.all(np.isfinite(GradientBoostingRegressor(learning_rate=3.0, n_estimators=50).fit(X, y).predict(X)))
    # the logistic loss's gradients stay bounded: huge scores, and probabilities 0 / 1 without a warning
    clf = GradientBoostingClassifier(learning_rate=1e300, n_estimators=5).fit(X, (y > 0).astype(int))
    P = clf.predict_proba(X)
    assert np.all(np.isfinite(P)) and set(np.unique(P)) <= {0.0, 1.0}
