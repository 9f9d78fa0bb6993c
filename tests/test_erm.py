"""smml.erm: ERM over a finite class of predictors (000 "Empirical risk minimization"), with 000's bounds."""
import math
from itertools import product

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from smml.bounds import erm_finite_class_bound, finite_class_uniform_bound
from smml.erm import ERMClassifier, ERMRegressor
from smml.losses import absolute


@parametrize_with_checks([ERMClassifier(), ERMRegressor(), ERMRegressor(loss="absolute")])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_notes_five_point_example():
    # 000 "Overfitting and underfitting": X = {x1..x5}, F = all 2^5 = 32 labelings; labels from f*;
    # a training set of 3 points leaves exactly 4 classifiers with zero training error
    pts = np.arange(5.0)[:, None]
    F = [lambda X, lab=np.array(lab): lab[np.asarray(X[:, 0], dtype=int)] for lab in product([-1, 1], repeat=5)]
    f_star = np.array([1, -1, -1, 1, 1])
    train = [0, 2, 3]
    est = ERMClassifier(F, delta=0.1).fit(pts[train], f_star[train])
    assert est.n_hypotheses_ == 32
    zero = np.flatnonzero(est.training_errors_ == 0)
    assert len(zero) == 4
    assert est.best_index_ == zero[0]                         # ties: the first minimiser in the class
    assert est.training_error_ == 0.0
    np.testing.assert_array_equal(est.predict(pts[train]), f_star[train])
    # 000: l_D(h_S) <= min_H l_D + sqrt((2/m) ln(2|H|/delta)), and |l_S - l_D| <= sqrt(ln(2|H|/delta)/(2m))
    assert est.estimation_error_bound_ == pytest.approx(math.sqrt(2 / 3 * math.log(2 * 32 / 0.1)))
    assert est.uniform_deviation_bound_ == pytest.approx(math.sqrt(math.log(640) / 6))
    assert est.risk_bound_ == 1.0                             # m = 3 is far too small: the bound is vacuous
    # the training errors of all 32: the fraction of the 3 training labels each labeling gets wrong
    for lab, err in zip(product([-1, 1], repeat=5), est.training_errors_):
        assert err == pytest.approx(np.mean(np.array(lab)[train] != f_star[train]))


def test_threshold_class_is_brute_force_erm(rng):
    x = rng.uniform(0, 1, 200)
    y = np.where(x + 0.15 * rng.standard_normal(200) > 0.4, "yes", "no")
    thetas = np.linspace(0, 1, 21)
    H = [lambda X, t=t: np.where(X[:, 0] > t, "yes", "no") for t in thetas]
    est = ERMClassifier(H, delta=0.05).fit(x[:, None], y)
    errs = [np.mean(np.where(x > t, "yes", "no") != y) for t in thetas]
    np.testing.assert_allclose(est.training_errors_, errs)
    assert est.best_index_ == int(np.argmin(errs))
    assert est.uniform_deviation_bound_ == finite_class_uniform_bound(200, 21, 0.05)
    assert est.estimation_error_bound_ == erm_finite_class_bound(200, 21, 0.05)
    assert est.risk_bound_ == pytest.approx(min(errs) + finite_class_uniform_bound(200, 21, 0.05))
    np.testing.assert_array_equal(est.predict(x[:5, None]), np.where(x[:5] > thetas[est.best_index_], "yes", "no"))
    # a fitted model's predict method is a member like any other
    from smml.tree import TreeClassifier
    tree = TreeClassifier(max_depth=1).fit(x[:, None], y)
    both = ERMClassifier([H[0], tree.predict]).fit(x[:, None], y)
    assert both.best_index_ == 1


def test_constant_class_and_regression():
    X = np.zeros((6, 2))
    est = ERMClassifier().fit(X, ["b", "a", "b", "a", "c", "c"])   # a three-way tie: the first class
    assert est.predict(np.zeros((2, 2))).tolist() == ["a", "a"]
    assert est.training_error_ == pytest.approx(4 / 6)
    r = ERMRegressor().fit(X, [0.0, 1.0, 1.0, 5.0, 2.0, 2.0])        # constants 0, 1, 2, 5; mean 11/6
    sq = [np.mean((np.array([0, 1, 1, 5, 2, 2]) - c) ** 2) for c in (0, 1, 2, 5)]
    np.testing.assert_allclose(r.training_errors_, sq)
    assert r.predict(X[:1])[0] == 2.0
    assert r.estimation_error_bound_ is None and r.risk_bound_ is None   # the square loss leaves [0, 1]
    a = ERMRegressor(loss=absolute).fit(X, [0.0, 0.1, 0.2, 0.3, 0.9, 1.0])
    assert a.predict(X[:1])[0] in (0.2, 0.3) and a.risk_bound_ is not None


def test_bad_hypotheses():
    X, y = np.zeros((4, 1)), [0, 1, 0, 1]
    for H in ([], [1, 2], "all", 3):
        with pytest.raises(ValueError, match="hypotheses"):
            ERMClassifier(H).fit(X, y)
    with pytest.raises(ValueError, match="one prediction per row"):
        ERMClassifier([lambda X: np.zeros(3)]).fit(X, y)
    with pytest.raises(ValueError, match="delta"):
        ERMClassifier(delta=1.5).fit(X, y)
    est = ERMClassifier([lambda X: np.zeros(len(X), int)]).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(np.zeros((2, 3)))
