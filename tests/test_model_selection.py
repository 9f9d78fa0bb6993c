"""smml.model_selection against hand-computed cases, smml.reference and the notes' formulas.

The learners are tiny deterministic estimators defined here (the CV machinery is
what is under test, not the learners).
"""
import functools

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import KFold, train_test_split

from smml import losses
from smml.bounds import hoeffding_interval
from smml.model_selection import cv_estimate, empirical_risk, nested_cv_estimate, tune
from smml.reference import model_selection as ref


class Vote(ClassifierMixin, BaseEstimator):
    """Binary {0, 1}: predicts the training majority label (ties -> 0), or its opposite if flip."""

    def __init__(self, flip=False):
        self.flip = flip

    def fit(self, X, y):
        y = np.asarray(y)
        self.n_seen_ = len(y)
        self.majority_ = 1 if np.sum(y == 1) > np.sum(y == 0) else 0
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        label = 1 - self.majority_ if self.flip else self.majority_
        return np.full(len(X), label)


class KNN1D(ClassifierMixin, BaseEstimator):
    """k-NN on the first feature; distance ties by training order, vote ties to the smallest label."""

    def __init__(self, k=1):
        self.k = k

    def fit(self, X, y):
        self.x_ = np.asarray(X, dtype=float)[:, 0]
        self.y_ = np.asarray(y)
        self.classes_ = np.unique(self.y_)
        return self

    def predict(self, X):
        out = []
        for x in np.asarray(X, dtype=float)[:, 0]:
            near = np.argsort(np.abs(self.x_ - x), kind="stable")[:self.k]
            labels, counts = np.unique(self.y_[near], return_counts=True)
            out.append(labels[np.argmax(counts)])
        return np.array(out)


class ShrunkMean(RegressorMixin, BaseEstimator):
    """Predicts (1 - shrink) * mean of the training targets."""

    def __init__(self, shrink=0.0):
        self.shrink = shrink

    def fit(self, X, y):
        self.value_ = (1 - self.shrink) * float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.value_)


class Score(BaseEstimator):
    """Real-valued score x[0] (decision_function) and its sigmoid (predict_proba); no training."""

    def fit(self, X, y):
        return self

    def decision_function(self, X):
        return np.asarray(X, dtype=float)[:, 0]

    def predict(self, X):
        return np.where(self.decision_function(X) > 0, 1, -1)

    def predict_proba(self, X):
        p = 1 / (1 + np.exp(-self.decision_function(X)))
        return np.column_stack([1 - p, p])


def algorithm(make):
    """A(S) -> h for smml.reference: fit a fresh estimator on the list S of (x, y) pairs."""
    def A(S):
        est = make().fit(np.array([x for x, _ in S]), np.array([y for _, y in S]))
        return lambda x: est.predict(np.array([x]))[0]
    return A


def pairs(X, y):
    return list(zip(np.asarray(X).tolist(), np.asarray(y).tolist()))


def zero_one_1(y, y_hat):
    return 0.0 if y == y_hat else 1.0


def square_1(y, y_hat):
    return (y - y_hat) ** 2


# ---- K-fold CV: hand-computed cases ------------------------------------------------

def test_cv_hand_computed_m6_K3():
    # y = 0 1 | 1 1 | 0 1 (consecutive folds S_1, S_2, S_3)
    # h_1 = majority of y[2:6] = (1 1 0 1) = 1: 1 mistake on S_1 -> (3/6) * 1 = 0.5
    # h_2 = majority of (0 1 0 1) = tie -> 0: 2 mistakes on S_2  -> (3/6) * 2 = 1.0
    # h_3 = majority of (0 1 1 1) = 1: 1 mistake on S_3          -> (3/6) * 1 = 0.5
    # CV estimate = (0.5 + 1.0 + 0.5) / 3 = 2/3
    X = np.zeros((6, 1))
    y = np.array([0, 1, 1, 1, 0, 1])
    assert cv_estimate(Vote(), X, y, K=3) == pytest.approx(2 / 3, abs=1e-15)
    assert ref.cv_estimate(algorithm(Vote), pairs(X, y), 3, zero_one_1) == pytest.approx(2 / 3, abs=1e-15)


def test_leave_one_out_hand_computed():
    # leaving a 0 out: training (0 0 1 1) -> tie -> 0, correct; leaving a 1 out: (0 0 0 1) -> 0, wrong
    X = np.arange(5.0).reshape(-1, 1)
    y = np.array([0, 0, 0, 1, 1])
    assert cv_estimate(Vote(), X, y, K=5) == pytest.approx(2 / 5)
    # 1-NN leave-one-out on a line: each point's neighbour is the previous one on ties (training order)
    # x = 0..5, y = 0 0 1 1 0 0 -> predictions for i=0..5: y1 y0 y1 y2 y3 y4 = 0 0 0 1 1 0
    X = np.arange(6.0).reshape(-1, 1)
    y = np.array([0, 0, 1, 1, 0, 0])
    assert cv_estimate(KNN1D(k=1), X, y, K=6) == pytest.approx(2 / 6)


def test_cv_notes_example_folds_are_consecutive():
    # 000: m = 20, K = 4: S_1 = first five examples, ... A learner that remembers which examples it saw.
    seen = []

    class Spy(Vote):
        def fit(self, X, y):
            seen.append(sorted(np.asarray(X)[:, 0].astype(int).tolist()))
            return super().fit(X, y)

    X = np.arange(20.0).reshape(-1, 1)
    cv_estimate(Spy(), X, np.zeros(20, dtype=int), K=4)
    all_idx = set(range(20))
    assert [sorted(all_idx - set(s)) for s in seen] == [list(range(5 * i, 5 * i + 5)) for i in range(4)]


def test_cv_rescaled_error_formula_when_K_divides_m(rng):
    # (1/K) sum_i (K/m) sum_{S_i} l  computed directly from KFold's folds
    m, K = 24, 4
    X = rng.normal(size=(m, 1))
    y = rng.integers(0, 2, size=m)
    total = 0.0
    for tr, te in KFold(K).split(X):
        h = KNN1D(k=3).fit(X[tr], y[tr])
        total += K / m * np.sum(h.predict(X[te]) != y[te])
    assert cv_estimate(KNN1D(k=3), X, y, K=K) == pytest.approx(total / K, abs=1e-14)


# ---- K-fold CV against smml.reference ---------------------------------------------

@pytest.mark.parametrize("m,K", [(20, 4), (23, 5), (17, 2), (12, 12), (13, 13)])
def test_cv_matches_reference_classification(rng, m, K):
    X = rng.normal(size=(m, 2))
    y = rng.integers(0, 3, size=m)
    for k in (1, 3):
        fast = cv_estimate(KNN1D(k=k), X, y, K=K)
        slow = ref.cv_estimate(algorithm(lambda: KNN1D(k=k)), pairs(X, y), K, zero_one_1)
        assert fast == pytest.approx(slow, abs=1e-14)


@pytest.mark.parametrize("m,K", [(20, 5), (22, 3)])
def test_cv_matches_reference_regression_square_loss(rng, m, K):
    X = rng.normal(size=(m, 1))
    y = rng.normal(size=m) * 3
    fast = cv_estimate(ShrunkMean(0.2), X, y, K=K, loss="square")
    slow = ref.cv_estimate(algorithm(lambda: ShrunkMean(0.2)), pairs(X, y), K, square_1)
    assert fast == pytest.approx(slow, rel=1e-13)


def test_cv_uneven_folds_use_each_folds_mean():
    # m = 7, K = 3: folds of sizes 3, 2, 2 (KFold); the estimate averages the folds' mean losses
    X = np.zeros((7, 1))
    y = np.array([1, 1, 1, 0, 0, 0, 0], dtype=float)
    # ShrunkMean(0): h_1 = mean(0 0 0 0) = 0; h_2 = mean(1 1 1 0 0) = 0.6; h_3 = mean(1 1 1 0 0) = 0.6
    f1 = np.mean([(1 - 0) ** 2] * 3)
    f2 = np.mean([0.6 ** 2] * 2)
    f3 = np.mean([0.6 ** 2] * 2)
    assert cv_estimate(ShrunkMean(), X, y, K=3, loss="square") == pytest.approx((f1 + f2 + f3) / 3)


def test_cv_shuffle_and_n_jobs(rng):
    X = rng.normal(size=(30, 1))
    y = rng.integers(0, 2, size=30)
    manual = np.mean([np.mean(KNN1D(k=3).fit(X[tr], y[tr]).predict(X[te]) != y[te])
                      for tr, te in KFold(5, shuffle=True, random_state=7).split(X)])
    a = cv_estimate(KNN1D(k=3), X, y, K=5, shuffle=True, random_state=7)
    assert a == pytest.approx(manual, abs=1e-14)
    assert cv_estimate(KNN1D(k=3), X, y, K=5, shuffle=True, random_state=7, n_jobs=2) == a
    assert cv_estimate(KNN1D(k=3), X.tolist(), y.tolist(), K=5) == cv_estimate(KNN1D(k=3), X, y, K=5)


def test_cv_interval_and_callable_loss(rng):
    X = rng.normal(size=(40, 1))
    y = rng.integers(0, 2, size=40)
    est, (lo, hi) = cv_estimate(KNN1D(k=1), X, y, K=4, return_interval=True, delta=0.1)
    assert (lo, hi) == hoeffding_interval(est, 40, 0.1)
    spam = functools.partial(losses.cost_sensitive, cost=[[0, 1], [2, 0]])
    manual = np.mean([np.mean(spam(y[te], KNN1D(k=1).fit(X[tr], y[tr]).predict(X[te])))
                      for tr, te in KFold(4).split(X)])
    assert cv_estimate(KNN1D(k=1), X, y, K=4, loss=spam) == pytest.approx(manual)
    # costs up to 2: not a [0, 1]-valued loss -> no Hoeffding interval (unless no cost-2 mistake happened)
    yy = np.array([0] * 20 + [1] * 20)
    with pytest.raises(ValueError, match=r"values in \[0, 1\]"):
        cv_estimate(Vote(), X, yy, K=4, loss=spam, return_interval=True)
    with pytest.raises(ValueError, match=r"values in \[0, 1\]"):
        cv_estimate(ShrunkMean(), X, rng.normal(size=40) * 10, K=4, loss="square", return_interval=True)


def test_cv_bad_arguments(rng):
    X = rng.normal(size=(6, 1))
    y = rng.integers(0, 2, size=6)
    for K in (1, 0, -3, 2.5, True, "5"):
        with pytest.raises(ValueError, match="K must be an integer >= 2"):
            cv_estimate(Vote(), X, y, K=K)
    with pytest.raises(ValueError, match="K=7 folds need at least 7 examples, got m=6"):
        cv_estimate(Vote(), X, y, K=7)
    with pytest.raises(ValueError, match="loss must be one of"):
        cv_estimate(Vote(), X, y, K=2, loss="l2")
    with pytest.raises(ValueError, match="n_jobs"):
        cv_estimate(Vote(), X, y, K=2, n_jobs=0)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        cv_estimate(Vote(), X, y[:5], K=2)
    with pytest.raises(ValueError, match="y must be 1-d"):
        cv_estimate(Vote(), X, y.reshape(-1, 1), K=2)
    with pytest.raises(ValueError, match="method"):
        cv_estimate(Vote(), X, y, K=2, method="transform")


# ---- empirical risk ---------------------------------------------------------------

def test_empirical_risk(rng):
    X = rng.normal(size=(50, 1))
    y = np.where(rng.normal(size=50) > 0, 1, -1)
    s = Score().fit(X, y)
    assert empirical_risk(s, X, y) == pytest.approx(np.mean(np.where(X[:, 0] > 0, 1, -1) != y))
    assert empirical_risk(s, X, y, loss="hinge", method="decision_function") == pytest.approx(
        np.mean(np.maximum(0, 1 - y * X[:, 0])))
    y01 = (y + 1) // 2
    p = 1 / (1 + np.exp(-X[:, 0]))
    assert empirical_risk(s, X, y01, loss="logarithmic", method="predict_proba") == pytest.approx(
        np.mean(-y01 * np.log(p) - (1 - y01) * np.log(1 - p)))
    r, iv = empirical_risk(s, X, y, return_interval=True)
    assert iv == hoeffding_interval(r, 50, 0.05)


# ---- train/dev tuning -----------------------------------------------------------

def test_tune_picks_dev_best_and_refits_on_all_data():
    X_tr, y_tr = np.zeros((6, 1)), np.array([0, 0, 0, 0, 1, 1])
    X_dev, y_dev = np.zeros((4, 1)), np.array([1, 1, 1, 0])
    res = tune(Vote(), {"flip": [False, True]}, X_tr, y_tr, dev_set=(X_dev, y_dev))
    # majority on S_train = 0: dev error 3/4; flipped = 1: dev error 1/4
    assert res.dev_errors_ == [({"flip": False}, 0.75), ({"flip": True}, 0.25)]
    assert res.best_params_ == {"flip": True} and res.best_dev_error_ == 0.25
    assert res.best_estimator_.flip is True
    assert res.best_estimator_.n_seen_ == 10  # refit on S = S_train + S_dev
    assert res.best_estimator_.majority_ == 0  # 5 zeros, 5 ones in S: tie -> 0


def test_tune_dev_set_with_dataframes_keeps_columns():
    import pandas as pd

    class Named(Vote):
        def fit(self, X, y):
            self.columns_ = list(X.columns)
            return super().fit(X, y)

    X_tr = pd.DataFrame({"a": [0.0] * 4})
    X_dev = pd.DataFrame({"a": [1.0] * 2})
    res = tune(Named(), {"flip": [False]}, X_tr, pd.Series([0, 0, 1, 1]), dev_set=(X_dev, pd.Series([1, 1])))
    assert res.best_estimator_.columns_ == ["a"] and res.best_estimator_.n_seen_ == 6
    assert res.best_estimator_.majority_ == 1


def test_tune_ties_go_to_the_first_grid_point_and_dev_split(rng):
    X = rng.normal(size=(40, 1))
    y = rng.integers(0, 2, size=40)
    res = tune(KNN1D(), {"k": [1, 3, 5, 7]}, X, y, dev_size=0.25, random_state=3)
    Xa, Xd, ya, yd = train_test_split(X, y, test_size=0.25, random_state=3)
    errs = [np.mean(KNN1D(k=k).fit(Xa, ya).predict(Xd) != yd) for k in (1, 3, 5, 7)]
    assert [e for _, e in res.dev_errors_] == pytest.approx(errs)
    assert res.best_params_ == {"k": [1, 3, 5, 7][int(np.argmin(errs))]}
    np.testing.assert_array_equal(res.best_estimator_.x_, X[:, 0])  # refit on all 40 examples
    # a grid where every point ties: the first one wins
    same = tune(Vote(), [{"flip": [False]}, {"flip": [False]}], X, y, random_state=0)
    assert same.best_params_ == {"flip": False}
    r2 = tune(Vote(), {"flip": [False, True]}, X, y, random_state=0, refit=False, return_interval=True)
    assert r2.best_estimator_ is None
    assert r2.dev_interval_ == hoeffding_interval(r2.best_dev_error_, 8, 0.05)


def test_tune_bad_arguments(rng):
    X = rng.normal(size=(10, 1))
    y = rng.integers(0, 2, size=10)
    for grid, msg in [({}, "non-empty"), ([], "non-empty"), ({"k": []}, "non-empty list"),
                      ({"k": "abc"}, "non-empty list"), ({"nope": [1]}, "not a parameter of KNN1D"),
                      ([3], "must contain dicts")]:
        with pytest.raises(ValueError, match=msg):
            tune(KNN1D(), grid, X, y)
    for dev_size in (0, 0.0, 1.0, 10, -1, True):
        with pytest.raises(ValueError, match="dev_size"):
            tune(KNN1D(), {"k": [1]}, X, y, dev_size=dev_size)
    with pytest.raises(ValueError, match="dev_set must be a pair"):
        tune(KNN1D(), {"k": [1]}, X, y, dev_set=X)


# ---- nested CV --------------------------------------------------------------------

def test_nested_cv_hand_computed():
    # y = 0 1 | 0 0 | 1 1, K_outer = 3, K_inner = 2, grid flip in (False, True).
    # i=1: S_-1 y = 0 0 | 1 1. majority: inner errors 1.0, 1.0 -> 1.0; flip: 0, 0 -> 0.
    #      theta_1 = flip; h_1 = flip(majority(0 0 1 1) = 0) = 1 -> 1 mistake on (0 1) -> eps_1 = 0.5
    # i=2: S_-2 y = 0 1 | 1 1. majority: 0.5, 1.0 -> 0.75; flip: 0.5, 0 -> 0.25.
    #      theta_2 = flip; h_2 = flip(1) = 0 -> 0 mistakes on (0 0) -> eps_2 = 0
    # i=3: S_-3 y = 0 1 | 0 0. majority: 0.5, 0 -> 0.25; flip: 0.5, 1.0 -> 0.75.
    #      theta_3 = majority; h_3 = 0 -> 2 mistakes on (1 1) -> eps_3 = 1.0
    # estimate = (0.5 + 0 + 1.0) / 3 = 0.5
    X = np.zeros((6, 1))
    y = np.array([0, 1, 0, 0, 1, 1])
    res = nested_cv_estimate(Vote(), {"flip": [False, True]}, X, y, K_outer=3, K_inner=2)
    assert res.estimate == pytest.approx(0.5)
    assert res.fold_errors == pytest.approx([0.5, 0.0, 1.0])
    assert res.chosen_params == [{"flip": True}, {"flip": True}, {"flip": False}]
    np.testing.assert_allclose(res.inner_cv_errors, [[1.0, 0.0], [0.75, 0.25], [0.25, 0.75]])
    est, thetas, eps = ref.nested_cv_estimate(lambda th: algorithm(lambda: Vote(flip=th)), [False, True],
                                              pairs(X, y), 3, 2, zero_one_1)
    assert est == pytest.approx(0.5) and thetas == [True, True, False] and eps == pytest.approx([0.5, 0, 1])


def test_best_cv_estimate_hand_computed():
    # 000 "Tuning parameters via nested cross-validation": the best CV-estimate
    # min_theta l^CV_S(A_theta). y = 0 1 | 0 0 | 1 1 with K = 3 on the whole S:
    # majority: fold 1 trains on 0 0 1 1 (tie -> 0): 1 mistake on (0 1) -> 1/2; fold 2 on 0 1 1 1 -> 1:
    #   2 mistakes on (0 0) -> 1; fold 3 on 0 1 0 0 -> 0: 2 mistakes on (1 1) -> 1. l^CV = 5/6.
    # flip: 1 -> 1/2; 0 -> 0; 1 -> 0. l^CV = 1/6. The minimum, 1/6, is below the nested estimate 1/2
    # (the notes: it "tends to underestimate").
    X = np.zeros((6, 1))
    y = np.array([0, 1, 0, 0, 1, 1])
    res = nested_cv_estimate(Vote(), {"flip": [False, True]}, X, y, K_outer=3, K_inner=2)
    assert res.best_cv_estimate == pytest.approx(1 / 6)
    np.testing.assert_allclose(res.cv_errors, [5 / 6, 1 / 6])
    assert res.best_cv_estimate < res.estimate
    assert nested_cv_estimate(Vote(), {"flip": [False]}, X, y, K_outer=3, K_inner=2,
                              best_cv=False).best_cv_estimate is None
    t = tune(Vote(), {"flip": [False, True]}, X, y, cv=3, shuffle=False)   # the consecutive folds above
    assert t.best_cv_estimate_ == pytest.approx(1 / 6) and t.best_params_ == {"flip": True}
    assert [e for _, e in t.cv_errors_] == pytest.approx([5 / 6, 1 / 6])
    assert t.best_dev_error_ is None and t.dev_errors_ is None
    assert t.best_estimator_.n_seen_ == 6 and t.best_estimator_.flip is True      # refit on all of S


def test_tune_cv_is_the_min_of_cv_estimates(rng):
    X = rng.normal(size=(37, 1))
    y = (X[:, 0] + rng.normal(scale=0.8, size=37) > 0).astype(int)
    grid = [1, 3, 5, 9]
    for shuffle, rs in ((False, None), (True, 4)):
        t = tune(KNN1D(), {"k": grid}, X, y, cv=4, shuffle=shuffle, random_state=rs, n_jobs=2,
                 return_interval=True)
        cvs = [cv_estimate(KNN1D(k=k), X, y, K=4, shuffle=shuffle, random_state=rs) for k in grid]
        assert [e for _, e in t.cv_errors_] == cvs
        assert t.best_cv_estimate_ == min(cvs) and t.best_params_ == {"k": grid[int(np.argmin(cvs))]}
        assert t.dev_interval_ == hoeffding_interval(min(cvs), 37, 0.05)
        n = nested_cv_estimate(KNN1D(), {"k": grid}, X, y, K_outer=4, K_inner=3, shuffle=shuffle,
                               random_state=rs)
        if not shuffle:             # the same (consecutive) outer folds as cv_estimate's
            assert n.best_cv_estimate == min(cvs) and n.cv_errors.tolist() == cvs
    with pytest.raises(ValueError, match="not both"):
        tune(KNN1D(), {"k": [1]}, X, y, cv=3, dev_set=(X, y))
    for bad in (1, 0, 2.5, True, 38):
        with pytest.raises(ValueError, match="cv"):
            tune(KNN1D(), {"k": [1]}, X, y, cv=bad)
    with pytest.raises(ValueError, match="best_cv"):
        nested_cv_estimate(KNN1D(), {"k": [1]}, X, y, K_outer=3, K_inner=2, best_cv="yes")


def test_nested_cv_tie_goes_to_first_grid_point():
    # y = 1 1 | 0 1 | 0 1 (K_outer = 3, K_inner = 2): for i = 1, S_-1 = 0 1 | 0 1 and both
    # thetas make one mistake per inner fold (majority = tie -> 0, flipped = 1): inner CV 0.5 each
    X = np.zeros((6, 1))
    y = np.array([1, 1, 0, 1, 0, 1])
    res = nested_cv_estimate(Vote(), {"flip": [False, True]}, X, y, K_outer=3, K_inner=2)
    assert res.inner_cv_errors[0].tolist() == [0.5, 0.5]
    assert res.chosen_params[0] == {"flip": False}
    res2 = nested_cv_estimate(Vote(), {"flip": [True, False]}, X, y, K_outer=3, K_inner=2)
    assert res2.chosen_params[0] == {"flip": True}


@pytest.mark.parametrize("m,Ko,Ki", [(24, 4, 3), (19, 3, 4)])
def test_nested_cv_matches_reference_and_hand_run(rng, m, Ko, Ki):
    X = rng.normal(size=(m, 1))
    y = (X[:, 0] + rng.normal(scale=0.7, size=m) > 0).astype(int)
    grid = [1, 3, 5]
    res = nested_cv_estimate(KNN1D(), {"k": grid}, X, y, K_outer=Ko, K_inner=Ki)
    est, thetas, eps = ref.nested_cv_estimate(lambda k: algorithm(lambda: KNN1D(k=k)), grid, pairs(X, y),
                                              Ko, Ki, zero_one_1)
    assert res.estimate == pytest.approx(est, abs=1e-14)
    assert [p["k"] for p in res.chosen_params] == thetas
    assert res.fold_errors == pytest.approx(eps, abs=1e-14)
    # hand-run of Algorithm 1 with smml's own cv_estimate on each S_-i
    hand = []
    for tr, te in KFold(Ko).split(X):
        cvs = [cv_estimate(KNN1D(k=k), X[tr], y[tr], K=Ki) for k in grid]
        k_i = grid[int(np.argmin(cvs))]
        hand.append(np.mean(KNN1D(k=k_i).fit(X[tr], y[tr]).predict(X[te]) != y[te]))
        np.testing.assert_allclose(res.inner_cv_errors[len(hand) - 1], cvs)
    assert res.estimate == pytest.approx(np.mean(hand), abs=1e-14)


def test_nested_cv_shuffle_deterministic_and_parallel(rng):
    X = rng.normal(size=(30, 1))
    y = rng.integers(0, 2, size=30)
    kw = dict(K_outer=3, K_inner=3, shuffle=True, random_state=5)
    a = nested_cv_estimate(KNN1D(), {"k": [1, 5]}, X, y, **kw)
    b = nested_cv_estimate(KNN1D(), {"k": [1, 5]}, X, y, n_jobs=2, **kw)
    assert a.estimate == b.estimate and a.chosen_params == b.chosen_params
    c = nested_cv_estimate(KNN1D(), {"k": [1, 5]}, X, y, return_interval=True, **kw)
    assert c.interval == hoeffding_interval(c.estimate, 30, 0.05)


def test_nested_cv_bad_arguments(rng):
    X = rng.normal(size=(9, 1))
    y = rng.integers(0, 2, size=9)
    with pytest.raises(ValueError, match="K_outer must be an integer >= 2"):
        nested_cv_estimate(KNN1D(), {"k": [1]}, X, y, K_outer=1)
    with pytest.raises(ValueError, match="K_inner must be an integer >= 2"):
        nested_cv_estimate(KNN1D(), {"k": [1]}, X, y, K_inner=1.5)
    with pytest.raises(ValueError, match="K_inner=7 folds need at least 7 examples in each outer"):
        nested_cv_estimate(KNN1D(), {"k": [1]}, X, y, K_outer=3, K_inner=7)
    with pytest.raises(ValueError, match="not a parameter"):
        nested_cv_estimate(KNN1D(), {"kk": [1]}, X, y, K_outer=3, K_inner=2)
    with pytest.raises(ValueError, match="param_grid"):
        nested_cv_estimate(KNN1D(), {}, X, y, K_outer=3, K_inner=2)


def test_numpy_generator_random_state_is_accepted(rng):
    # regression: a Generator (accepted by every smml estimator) raised "cannot be used to seed"
    from smml.model_selection import cv_estimate, nested_cv_estimate, tune
    from smml.neighbors import KNNClassifier
    X = rng.standard_normal((24, 2))
    y = (X[:, 0] > 0).astype(int)
    a = cv_estimate(KNNClassifier(), X, y, K=4, shuffle=True, random_state=np.random.default_rng(5))
    b = cv_estimate(KNNClassifier(), X, y, K=4, shuffle=True, random_state=np.random.default_rng(5))
    assert a == b and 0.0 <= a <= 1.0
    t = tune(KNNClassifier(), {"n_neighbors": [1, 3]}, X, y, random_state=np.random.default_rng(1))
    assert t.best_params_["n_neighbors"] in (1, 3)
    r = nested_cv_estimate(KNNClassifier(), {"n_neighbors": [1, 3]}, X, y, K_outer=3, K_inner=2, shuffle=True,
                           random_state=np.random.default_rng(2))
    assert 0.0 <= r.estimate <= 1.0


def test_bad_delta_is_refused_before_any_fit():
    calls = []

    class Counting(Vote):
        def fit(self, X, y):
            calls.append(1)
            return super().fit(X, y)

    X = np.arange(20.0).reshape(10, 2)
    y = np.array([0, 1] * 5)
    for call in (lambda: cv_estimate(Counting(), X, y, K=2, return_interval=True, delta=2.0),
                 lambda: nested_cv_estimate(Counting(), {"flip": [False]}, X, y, K_outer=2, K_inner=2,
                                            return_interval=True, delta=0.0),
                 lambda: tune(Counting(), {"flip": [False]}, X, y, return_interval=True, delta=-1.0)):
        with pytest.raises(ValueError, match="delta"):
            call()
    assert calls == []
