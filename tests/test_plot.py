"""smml.plot: the numbers behind each figure, the Axes they return, and `smml tour --plot` PNGs."""
import struct
import sys

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.neighbors import KNeighborsClassifier

from smml import _tour, cli, plot
from smml.bounds import (adaboost_training_error_bound, occam_tree_bound, pegasos_bound,
                         perceptron_convergence_bound)
from smml.ensemble import AdaBoostClassifier
from smml.linear import LinearProgramClassifier, Pegasos, Perceptron
from smml.model_selection import compare, learning_curve
from smml.neighbors import KNNClassifier
from smml.tree import TreeClassifier

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def cancer():
    """The tour's breast-cancer split: 70/30, seed 0, stratified, standardised on the training part."""
    return _tour._scaled_split("breast_cancer")


KS = np.arange(1, 32, 2)


def test_knn_figure_reproduces_scikit_learn_on_breast_cancer(cancer):
    Xtr, Xte, ytr, yte = cancer
    # When smml and scikit-learn agree: their rules differ only on ties. smml takes the k' closest
    # points when the k-th distance is tied (000) and gives vote ties to the most frequent label;
    # scikit-learn takes exactly k (ties by index order) and gives vote ties to the smallest label.
    # With an odd k and two classes there is no vote tie; and here no query has its k-th and
    # (k+1)-th distances within 1e-9 (relative) of each other, so k' = k and both libraries pick
    # the same k points whatever their rounding. Check that, then the tables must be equal.
    assert len(np.unique(ytr)) == 2 and np.all(KS % 2 == 1)
    for Q in (Xtr, Xte):
        D = np.sort(cdist(Q, Xtr), axis=1)
        gap = D[:, KS] - D[:, KS - 1]
        assert np.all(gap > 1e-9 * np.maximum(D[:, KS], 1.0))
    t = plot.knn_error_table(Xtr, ytr, Xte, yte, ks=KS)
    sk_train, sk_test = [], []
    for k in KS:
        sk = KNeighborsClassifier(n_neighbors=int(k), algorithm="brute").fit(Xtr, ytr)
        sk_train.append(np.mean(sk.predict(Xtr) != ytr))
        sk_test.append(np.mean(sk.predict(Xte) != yte))
    np.testing.assert_array_equal(t["k"], KS)
    np.testing.assert_array_equal(t["train_error"], sk_train)
    np.testing.assert_array_equal(t["test_error"], sk_test)
    assert t["train_error"][0] == 0.0                     # 1-NN: every training point is its own neighbour
    assert t["test_error"].min() < t["test_error"][-1] or t["train_error"][np.argmin(t["test_error"])] > 0
    ax = plot.plot_knn_errors(Xtr, ytr, Xte, yte, ks=KS)
    train_line, test_line = ax.lines[:2]
    np.testing.assert_array_equal(train_line.get_xdata(), KS)
    np.testing.assert_array_equal(train_line.get_ydata(), sk_train)
    np.testing.assert_array_equal(test_line.get_ydata(), sk_test)


def test_knn_table_on_ties_follows_smml_rules():
    # duplicated training points: k' > k, and smml's table is its own predictions, not scikit-learn's
    X = np.array([[0.0], [0.0], [1.0], [1.0], [2.0]])
    y = np.array([0, 1, 1, 0, 1])
    t = plot.knn_error_table(X, y, X, y, ks=[1, 3])
    for i, k in enumerate([1, 3]):
        p = KNNClassifier(n_neighbors=k).fit(X, y).predict(X)
        assert t["train_error"][i] == np.mean(p != y)
    with pytest.raises(ValueError, match="ks must lie"):
        plot.knn_error_table(X, y, X, y, ks=[0])
    with pytest.raises(ValueError, match="ks must lie"):
        plot.knn_error_table(X, y, X, y, ks=[6])


def test_adaboost_figure_is_the_fitted_diagnostics(cancer):
    Xtr, _, ytr, _ = cancer
    ada = AdaBoostClassifier(n_estimators=20).fit(Xtr, ytr)
    ax = plot.plot_adaboost(ada)
    err, prod, expb = ax.lines[:3]
    np.testing.assert_array_equal(err.get_ydata(), ada.train_errors_)
    np.testing.assert_array_equal(prod.get_ydata(), ada.training_error_bound_)
    np.testing.assert_array_equal(expb.get_ydata(), ada.training_error_exp_bound_)
    assert prod.get_ydata()[-1] == pytest.approx(adaboost_training_error_bound(ada.edges_)[0])
    assert np.all(ada.train_errors_ <= ada.training_error_bound_ + 1e-12)
    with pytest.raises(ValueError, match="two classes"):
        plot.plot_adaboost(AdaBoostClassifier(n_estimators=3).fit(Xtr[:60], np.arange(60) % 3))


def test_perceptron_table_and_bound():
    X, y = _tour.separable_data()
    t = plot.perceptron_mistakes_table(X, y, max_epochs=30)
    for e, u in zip(t["epoch"], t["updates"]):
        assert Perceptron(max_iter=int(e)).fit(X, y).n_updates_ == u
    assert np.all(np.diff(t["updates"]) >= 0)
    final = Perceptron(max_iter=int(t["epoch"][-1])).fit(X, y)
    assert final.converged_ and t["updates"][-1] <= t["bound"]        # Theorem 3
    lp = LinearProgramClassifier().fit(X, y)
    u = np.append(lp.coef_.ravel(), lp.intercept_)
    Xa, ypm = np.hstack([X, np.ones((len(X), 1))]), np.where(y == 1, 1.0, -1.0)
    assert t["bound"] == perceptron_convergence_bound(Xa, ypm, u)
    ax = plot.plot_perceptron(X, y, max_epochs=30)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), t["updates"])
    Xn = np.vstack([X, X[:1]])
    with pytest.raises(ValueError, match="not linearly separable"):
        plot.perceptron_mistakes_table(Xn, np.append(y, 1 - y[0]))
    with pytest.raises(ValueError, match="two classes"):
        plot.perceptron_mistakes_table(X, np.arange(len(X)) % 3)
    with pytest.raises(ValueError, match="max_epochs"):
        plot.perceptron_mistakes_table(X, y, max_epochs=0)


def test_tree_table_is_the_occam_bound(cancer):
    Xtr, Xte, ytr, yte = cancer
    t = plot.tree_error_table(Xtr, ytr, Xte, yte, leaves=[2, 4, 8])
    m, d = Xtr.shape
    for i, L in enumerate([2, 4, 8]):
        clf = TreeClassifier(max_leaf_nodes=L, random_state=0).fit(Xtr, ytr)
        assert t["n_leaves"][i] == clf.tree_.n_leaves <= L and t["n_nodes"][i] == clf.tree_.node_count
        tr = np.mean(clf.predict(Xtr) != ytr)
        assert t["train_error"][i] == tr and t["test_error"][i] == np.mean(clf.predict(Xte) != yte)
        assert t["occam_bound"][i] == occam_tree_bound(tr, clf.tree_.node_count, d, m, 0.05)
    assert np.all(np.diff(t["train_error"]) <= 0)       # more leaves never raise the training error
    ax = plot.plot_tree_occam(Xtr, ytr, Xte, yte, leaves=[2, 4, 8])
    np.testing.assert_array_equal(ax.lines[2].get_ydata(), t["occam_bound"])


def test_pegasos_table_brackets_the_optimum(cancer):
    Xtr, _, ytr, _ = cancer
    Ts = [10, 100, 1000]
    t = plot.pegasos_objective_table(Xtr, ytr, lam=0.05, n_iters=Ts, random_state=0)
    assert 0 <= t["gap"] < 1e-4                         # dual <= F* <= primal at the dual's w
    for i, T in enumerate(Ts):
        F = Pegasos(alpha=0.05, max_iter=T, average=True, random_state=0).fit(Xtr, ytr).objective(Xtr, ytr)
        assert t["objective"][i] == F and F >= t["optimum"]
        R = float(np.sqrt(np.max(np.sum(Xtr ** 2, axis=1) + 1.0)))
        assert t["bound"][i] == pytest.approx(pegasos_bound(0.05, T, X_norm=R), rel=1e-12)
    np.testing.assert_array_equal(t["suboptimality"], t["objective"] - t["optimum"])
    ax = plot.plot_pegasos(Xtr, ytr, lam=0.05, n_iters=Ts)
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), t["bound"])


def test_learning_curve_and_compare_figures(cancer):
    Xtr, _, ytr, _ = cancer
    res = learning_curve(KNNClassifier(n_neighbors=3), Xtr, ytr, train_sizes=[0.2, 0.6, 1.0], random_state=0)
    fig, ax = plt.subplots()
    assert plot.plot_learning_curve(res, ax=ax) is ax
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), res.test_errors)
    cmp = compare(KNNClassifier(n_neighbors=1), KNNClassifier(n_neighbors=9), Xtr, ytr, K=5, random_state=0)
    ax = plot.plot_compare(cmp, names=("1-NN", "9-NN"))
    np.testing.assert_array_equal([p.get_height() for p in ax.patches], cmp.differences)
    assert "p = " in ax.get_title()


def test_missing_matplotlib_is_a_clear_error(monkeypatch, cancer):
    Xtr, Xte, ytr, yte = cancer
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'smml\[plot\]'"):
        plot.plot_knn_errors(Xtr, ytr, Xte, yte, ks=[1])
    assert len(plot.knn_error_table(Xtr, ytr, Xte, yte, ks=[1])["k"]) == 1    # the numbers need no matplotlib


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_tour_plot_writes_real_images(tmp_path):
    from matplotlib.image import imread

    paths = _tour.write_plots(tmp_path, quick=True, verbose=0)
    assert sorted(p.rsplit("/", 1)[1] for p in paths) == sorted(f"{n}.png" for n in _tour.PLOTS)
    for p in paths:
        assert _png_size(p) == (640, 480)
        img = imread(p)
        assert img.shape[:2] == (480, 640)
        assert len(np.unique(img.reshape(-1, img.shape[2]), axis=0)) > 1, f"{p} is one colour"


def test_cli_tour_plot(monkeypatch, tmp_path, capsys):
    calls = {}
    monkeypatch.setattr(_tour, "run", lambda **kw: calls.setdefault("run", kw))
    monkeypatch.setattr(_tour, "write_plots", lambda d, **kw: calls.setdefault("plots", (d, kw)) and [])
    assert cli.main(["tour", "--quick", "--plot", str(tmp_path)]) == 0
    assert calls["plots"] == (str(tmp_path), {"quick": True, "verbose": "auto"})
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SystemExit):
        cli.main(["tour", "--plot", str(tmp_path)])
    assert "--plot needs matplotlib" in capsys.readouterr().err
