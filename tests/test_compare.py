"""smml.model_selection.compare (001 "Wilcoxon Test") and learning_curve (000 "Bounding the risk")."""
import numpy as np
import pytest
from scipy.stats import wilcoxon
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import KFold, RepeatedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from smml.bounds import hoeffding_interval
from smml.model_selection import compare, learning_curve
from smml.neighbors import KNNClassifier


class Majority(ClassifierMixin, BaseEstimator):
    """Predicts the most frequent training label (ties: the smallest)."""

    def fit(self, X, y):
        self.classes_, counts = np.unique(y, return_counts=True)
        self.label_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


class FoldFlip(ClassifierMixin, BaseEstimator):
    """Majority, but wrong on every test point whose first feature exceeds ``cut`` (a hand-made
    learner whose fold errors we control)."""

    def __init__(self, cut=np.inf):
        self.cut = cut

    def fit(self, X, y):
        self.classes_, counts = np.unique(y, return_counts=True)
        self.label_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        X = np.asarray(X)
        out = np.full(len(X), self.label_)
        flip = X[:, 0] > self.cut
        out[flip] = self.classes_[0] if self.label_ != self.classes_[0] else self.classes_[-1]
        return out


class Mean(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer(return_X_y=True)


def _knn(k):
    return make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=k))


def _fold_errors(est, X, y, folds):
    return np.array([np.mean(clone(est).fit(X[tr], y[tr]).predict(X[te]) != y[te]) for tr, te in folds])


# ---- compare ----------------------------------------------------------------------------

def test_large_difference_is_significant_and_paired(cancer):
    X, y = cancer
    res = compare(_knn(5), Majority(), X, y, K=10, random_state=0)
    folds = list(KFold(10, shuffle=True, random_state=0).split(X))
    # both learners on the same folds: each learner's fold errors, recomputed on those folds
    np.testing.assert_array_equal(res.errors_a, _fold_errors(_knn(5), X, y, folds))
    np.testing.assert_array_equal(res.errors_b, _fold_errors(Majority(), X, y, folds))
    np.testing.assert_array_equal(res.differences, res.errors_a - res.errors_b)
    assert np.all(res.differences < 0)                 # k-NN wins on every fold
    ref = wilcoxon(res.differences, zero_method="pratt", alternative="two-sided")
    assert res.pvalue == ref.pvalue and res.statistic == ref.statistic
    assert res.pvalue <= 2 / 2 ** 10 + 1e-12 or res.pvalue < 0.01   # all ten signs agree
    assert res.significant and res.better == "A"
    assert res.mean_a == pytest.approx(res.errors_a.mean()) and res.mean_b > 0.3
    swapped = compare(Majority(), _knn(5), X, y, K=10, random_state=0)
    assert swapped.better == "B" and swapped.pvalue == res.pvalue
    np.testing.assert_array_equal(swapped.differences, -res.differences)


def test_identical_learners_give_p_one_and_no_decision(cancer):
    X, y = cancer
    for a, b in ((_knn(5), _knn(5)), (Majority(), Majority())):
        res = compare(a, b, X, y, K=10, random_state=1)
        assert np.all(res.differences == 0)
        assert res.pvalue == 1.0 and res.statistic == 0.0
        assert not res.significant and res.better is None
        np.testing.assert_array_equal(res.errors_a, res.errors_b)


def test_zero_differences_follow_the_zero_method():
    # hand-made: B is wrong on the test points with x > cut, so some folds tie (d_i = 0)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(100, 2))
    y = np.zeros(100, dtype=int)
    y[X[:, 1] > 0.97] = 1                       # a few examples of the second class
    res = {zm: compare(Majority(), FoldFlip(cut=0.9), X, y, K=8, shuffle=False, zero_method=zm)
           for zm in ("pratt", "zsplit", "wilcox")}
    d = res["pratt"].differences
    folds = list(KFold(8).split(X))
    np.testing.assert_array_equal(d, _fold_errors(Majority(), X, y, folds) - _fold_errors(FoldFlip(0.9), X, y, folds))
    assert np.sum(d == 0) >= 1 and np.sum(d < 0) >= 4
    for zm, r in res.items():
        np.testing.assert_array_equal(r.differences, d)
        assert r.pvalue == wilcoxon(d, zero_method=zm).pvalue and r.zero_method == zm
    # the zero folds are evidence of no difference: zsplit (the conservative choice) gives the largest p
    assert res["zsplit"].pvalue >= res["pratt"].pvalue


def test_decision_at_alpha_is_p_le_alpha(cancer):
    X, y = cancer
    res = compare(_knn(1), Majority(), X, y, K=6, random_state=0)
    at = compare(_knn(1), Majority(), X, y, K=6, random_state=0, alpha=res.pvalue)
    assert at.pvalue == res.pvalue and at.significant and at.better == "A"
    below = compare(_knn(1), Majority(), X, y, K=6, random_state=0, alpha=np.nextafter(res.pvalue, 0))
    assert not below.significant and below.better is None


def test_repeats_use_fresh_shuffles(cancer):
    X, y = cancer
    X, y = X[:200], y[:200]
    res = compare(_knn(1), Majority(), X, y, K=5, n_repeats=3, random_state=3)
    assert res.differences.shape == (15,)
    folds = list(RepeatedKFold(n_splits=5, n_repeats=3, random_state=3).split(X))
    np.testing.assert_array_equal(res.errors_a, _fold_errors(_knn(1), X, y, folds))
    assert not np.array_equal(res.errors_a[:5], res.errors_a[5:10])


def test_compare_is_deterministic_and_independent_of_n_jobs(cancer):
    X, y = cancer
    a = compare(_knn(3), _knn(7), X, y, K=4, random_state=0)
    b = compare(_knn(3), _knn(7), X, y, K=4, random_state=0, n_jobs=2)
    np.testing.assert_array_equal(a.differences, b.differences)
    assert a.pvalue == b.pvalue


@pytest.mark.parametrize("kwargs, match", [
    (dict(alpha=0), "alpha must be a number in"), (dict(alpha=1.0), "alpha must be"),
    (dict(alpha=True), "alpha must be"), (dict(n_repeats=0), "n_repeats must be an integer"),
    (dict(n_repeats=2, shuffle=False), "set shuffle=True"), (dict(zero_method="drop"), "zero_method"),
    (dict(K=1), "K must be an integer >= 2"), (dict(K=1000), "folds need at least"),
    (dict(n_jobs=0), "n_jobs"), (dict(verbose=-1), "verbose"), (dict(loss="nope"), "loss must be"),
])
def test_compare_rejects_bad_arguments(cancer, kwargs, match):
    X, y = cancer
    with pytest.raises(ValueError, match=match):
        compare(Majority(), Majority(), X, y, **kwargs)


# ---- learning_curve -----------------------------------------------------------------------

def test_learning_curve_matches_a_hand_run(cancer):
    X, y = cancer
    res = learning_curve(_knn(5), X, y, train_sizes=[0.1, 0.5, 1.0], random_state=0, delta=0.1)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    n_train = len(ytr)
    np.testing.assert_array_equal(res.train_sizes, [int(0.1 * n_train), int(0.5 * n_train), n_train])
    assert res.n_test == len(yte) and res.delta == 0.1
    for i, s in enumerate(res.train_sizes):
        h = _knn(5).fit(Xtr[:s], ytr[:s])           # nested: the first s examples of the training part
        assert res.test_errors[i] == np.mean(h.predict(Xte) != yte)
        assert res.train_errors[i] == np.mean(h.predict(Xtr[:s]) != ytr[:s])
        assert tuple(res.intervals[i]) == hoeffding_interval(res.test_errors[i], len(yte), 0.1)


def test_learning_curve_with_a_given_test_set_and_counts(cancer):
    X, y = cancer
    res = learning_curve(_knn(3), X[:400], y[:400], train_sizes=[10, 400, 200, 200], test_set=(X[400:], y[400:]),
                         shuffle=False)
    np.testing.assert_array_equal(res.train_sizes, [10, 200, 400])      # sorted, deduplicated
    assert res.n_test == len(y) - 400
    h = _knn(3).fit(X[:200], y[:200])
    assert res.test_errors[1] == np.mean(h.predict(X[400:]) != y[400:])


def test_learning_curve_interval_needs_a_bounded_loss():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), rng.normal(size=60) * 10
    with pytest.raises(ValueError, match=r"loss with values in \[0, 1\]"):
        learning_curve(Mean(), X, y, loss="square", random_state=0)
    res = learning_curve(Mean(), X, y, loss="square", random_state=0, return_interval=False)
    assert res.intervals is None and np.all(res.test_errors > 0)


@pytest.mark.parametrize("sizes, match", [
    ([0.0, 0.5], r"fractions must lie in \(0, 1\]"), ([1.5], "fractions"), ([0, 10], "counts must lie"),
    ([10_000], "counts must lie"), ([], "non-empty"), (["a"], "numbers"), ([[1, 2]], "1-d"),
])
def test_learning_curve_rejects_bad_sizes(cancer, sizes, match):
    X, y = cancer
    with pytest.raises(ValueError, match=match):
        learning_curve(Majority(), X, y, train_sizes=sizes)


def test_learning_curve_rejects_bad_arguments(cancer):
    X, y = cancer
    with pytest.raises(ValueError, match="test_set must be a pair"):
        learning_curve(Majority(), X, y, test_set=X)
    with pytest.raises(ValueError, match="cannot hold out"):
        learning_curve(Majority(), X, y, test_size=2.0)
    with pytest.raises(ValueError, match="delta"):
        learning_curve(Majority(), X, y, delta=0)
