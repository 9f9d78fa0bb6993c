"""``smml tour``: every smml estimator on real data bundled with scikit-learn.

The entries are declared here, in :data:`ENTRIES`, and name their estimators
by module and class (``est("smml.tree", "TreeClassifier", max_depth=3)``), so
the estimator modules never import the tour and the tour imports a family only
when it runs that family's entries. A new estimator joins the tour with one
line in :data:`ENTRIES`. Datasets ship with
scikit-learn (no download); the split is fixed (70/30, seed 0, stratified for
classification); features are standardised with the training part's mean and
standard deviation when an entry asks for it.

A clustering entry (``clustering=True``) is fitted on the training features alone and
shown with the loss "1 - ARI": one minus the adjusted Rand index between its clusters
and the classes, on the training part and on the test part (test points go to their
nearest centroid); 0 means the clusters are the classes. No Hoeffding interval: the ARI
is not a mean of independent per-point losses.
"""
import importlib
import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from smml._progress import progress as _progress_bar
from smml.bounds import hoeffding_interval

CLASSIFICATION = ("breast_cancer", "iris", "wine", "digits")
REGRESSION = ("diabetes",)


@dataclass
class TourEntry:
    name: str                                   # what the table shows
    make: Callable[[], object]                  # a fresh smml estimator
    datasets: Sequence[str]                     # names from CLASSIFICATION / REGRESSION
    reference: Optional[Callable[[], object]] = None  # plain-Python twin (fit / predict)
    scale: bool = True                          # standardise features first
    quick: bool = True                          # part of `smml tour --quick`
    clustering: bool = False                    # unsupervised: scored by 1 - ARI against the classes


def load(name):
    from sklearn import datasets

    loader = {"breast_cancer": datasets.load_breast_cancer, "iris": datasets.load_iris,
              "wine": datasets.load_wine, "diabetes": datasets.load_diabetes,
              "digits": datasets.load_digits}[name]
    d = loader()
    return np.asarray(d.data, dtype=np.float64), np.asarray(d.target)


def split(name, X, y):
    from sklearn.model_selection import train_test_split

    strat = y if name in CLASSIFICATION else None
    return train_test_split(X, y, test_size=0.3, random_state=0, stratify=strat)


def est(module, name, **params):
    """A factory for ``module.name(**params)`` that imports ``module`` only when called."""
    def make():
        return getattr(importlib.import_module(module), name)(**params)
    make.__qualname__ = f"{name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    return make


def _tree(classifier, **params):
    """A factory for smml's own tree (the default weak learner of bagging)."""
    return est("smml.tree", "TreeClassifier" if classifier else "TreeRegressor", **params)


def _bagging(name, classifier, **params):
    base = _tree(classifier)
    return lambda: getattr(importlib.import_module("smml.ensemble"), name)(base(), **params)


_CLF = ("breast_cancer", "iris", "wine")
_MLP = dict(hidden_layer_sizes=(64,), batch_size=16, learning_rate=0.05, momentum=0.9, max_iter=30,
            random_state=0)
_MLP1 = dict(hidden_layer_sizes=(32,), activation="sign_sigmoid", batch_size=1, learning_rate=0.01,
             max_iter=20, random_state=0)
_MLPR = dict(hidden_layer_sizes=(32,), batch_size=16, learning_rate=1e-4, momentum=0.9, max_iter=200,
             random_state=0)


def _notes(params):
    """smml's MLP parameters under smml.reference.neural's names (the notes': max_epochs, lam)."""
    names = {"max_iter": "max_epochs", "alpha": "lam"}
    return {names.get(k, k): v for k, v in params.items()}


ENTRIES = [
    # k-NN (000 "The Nearest Neighbour algorithm")
    TourEntry("KNNClassifier(n_neighbors=1)", est("smml.neighbors", "KNNClassifier", n_neighbors=1), _CLF,
              reference=est("smml.reference.neighbors", "KNNClassifier", k=1)),
    TourEntry("KNNClassifier(n_neighbors=5)", est("smml.neighbors", "KNNClassifier", n_neighbors=5), _CLF,
              reference=est("smml.reference.neighbors", "KNNClassifier", k=5)),
    TourEntry("KNNRegressor(n_neighbors=5)", est("smml.neighbors", "KNNRegressor", n_neighbors=5), ("diabetes",),
              reference=est("smml.reference.neighbors", "KNNRegressor", k=5)),
    # tree predictors (000 "Tree Predictors"; 002)
    TourEntry("TreeClassifier(max_depth=3)", est("smml.tree", "TreeClassifier", max_depth=3, random_state=0),
              _CLF, reference=est("smml.reference.tree", "TreeClassifier", max_depth=3), scale=False),
    TourEntry("TreeClassifier(pruning='occam')",
              est("smml.tree", "TreeClassifier", pruning="occam", random_state=0), _CLF, scale=False),
    TourEntry("TreeRegressor(max_depth=3)", est("smml.tree", "TreeRegressor", max_depth=3, random_state=0),
              ("diabetes",), reference=est("smml.reference.tree", "TreeRegressor", max_depth=3), scale=False),
    # linear and online learners (000 "Linear predictors"; 001; 002; 003)
    TourEntry("Perceptron", est("smml.linear", "Perceptron", max_iter=50), _CLF,
              reference=est("smml.reference.linear", "Perceptron", max_epochs=50)),
    TourEntry("LogisticRegression", est("smml.linear", "LogisticRegression", alpha=1e-2), ("breast_cancer",),
              reference=est("smml.reference.linear", "LogisticRegression", lam=1e-2)),
    TourEntry("Pegasos", est("smml.linear", "Pegasos", alpha=1e-2, max_iter=20000, random_state=0),
              ("breast_cancer",),
              reference=est("smml.reference.linear", "Pegasos", lam=1e-2, n_iter=20000, random_state=0)),
    TourEntry("OnlineGradientDescent", est("smml.linear", "OnlineGradientDescent", radius=10.0),
              ("breast_cancer",), reference=est("smml.reference.linear", "OnlineGradientDescent", radius=10.0)),
    TourEntry("LinearRegression", est("smml.linear", "LinearRegression"), ("diabetes",),
              reference=est("smml.reference.linear", "LinearRegression")),
    TourEntry("RidgeRegression", est("smml.linear", "RidgeRegression", alpha=1.0), ("diabetes",),
              reference=est("smml.reference.linear", "RidgeRegression", alpha=1.0)),
    TourEntry("LMSRegressor", est("smml.linear", "LMSRegressor", mode="stochastic", max_iter=200),
              ("diabetes",),
              reference=est("smml.reference.linear", "LMSRegressor", mode="stochastic", max_epochs=200)),
    TourEntry("LADRegressor", est("smml.linear", "LADRegressor"), ("diabetes",)),
    TourEntry("LogisticRegression(one-vs-rest)", est("smml.linear", "LogisticRegression", alpha=1e-2),
              ("iris", "wine")),
    TourEntry("LogisticRegression(softmax)",
              est("smml.linear", "LogisticRegression", alpha=1e-2, multi_class="softmax"), ("iris", "wine")),
    TourEntry("LinearProgramClassifier(soft_margin=True)",
              est("smml.linear", "LinearProgramClassifier", soft_margin=True), _CLF),
    TourEntry("HardMarginSVM", est("smml.linear", "HardMarginSVM"), ("breast_cancer", "wine")),
    TourEntry("PolynomialRegression(degree=2)", est("smml.linear", "PolynomialRegression", degree=2),
              ("diabetes",)),
    # kernel methods (003 sections 11-12)
    TourEntry("KernelPerceptron(gaussian)", est("smml.kernels", "KernelPerceptron", max_iter=50),
              ("breast_cancer", "wine"), reference=est("smml.reference.kernels", "KernelPerceptron", max_epochs=50)),
    TourEntry("KernelSVC(gaussian, C=1)", est("smml.kernels", "KernelSVC"), ("breast_cancer", "wine")),
    TourEntry("KernelPegasos(gaussian)", est("smml.kernels", "KernelPegasos", alpha=1e-2, max_iter=20000,
                                             random_state=0), ("breast_cancer",),
              reference=est("smml.reference.kernels", "KernelPegasos", lam=1e-2, n_iter=20000, random_state=0)),
    TourEntry("KernelPegasos(gaussian, one-vs-rest)", est("smml.kernels", "KernelPegasos", alpha=1e-2,
                                                          max_iter=20000, random_state=0), ("wine",)),
    TourEntry("KernelRidge(gaussian)", est("smml.kernels", "KernelRidge", alpha=1.0), ("diabetes",),
              reference=est("smml.reference.kernels", "KernelRidge", alpha=1.0)),
    # ensembles (002 "Adaboost", "Random forests"; 003 section 16)
    TourEntry("AdaBoostClassifier(stumps, T=30)", est("smml.ensemble", "AdaBoostClassifier", n_estimators=30),
              ("breast_cancer",), reference=est("smml.reference.adaboost", "AdaBoostStumps", n_estimators=30)),
    TourEntry("AdaBoostClassifier(SAMME stumps, T=50)",
              est("smml.ensemble", "AdaBoostClassifier", n_estimators=50), ("iris", "wine")),
    TourEntry("BaggingClassifier(TreeClassifier, T=25)",
              _bagging("BaggingClassifier", True, n_estimators=25, random_state=0), _CLF),
    TourEntry("RandomForestClassifier(T=100)", est("smml.ensemble", "RandomForestClassifier", random_state=0),
              _CLF),
    TourEntry("BaggingRegressor(TreeRegressor, T=25)",
              _bagging("BaggingRegressor", False, n_estimators=25, random_state=0), ("diabetes",)),
    TourEntry("RandomForestRegressor(T=100)", est("smml.ensemble", "RandomForestRegressor", random_state=0),
              ("diabetes",)),
    # neural networks (003 section 14)
    TourEntry("MLPClassifier((64,), batch 16)", est("smml.neural", "MLPClassifier", **_MLP), ("breast_cancer", "digits"),
              reference=est("smml.reference.neural", "MLPClassifier", **_notes(_MLP))),
    TourEntry("MLPClassifier((32,), sign_sigmoid, batch 1)",
              est("smml.neural", "MLPClassifier", **_MLP1), ("breast_cancer",),
              reference=est("smml.reference.neural", "MLPClassifier", **_notes(_MLP1))),
    TourEntry("MLPRegressor((32,), batch 16)", est("smml.neural", "MLPRegressor", **_MLPR), ("diabetes",),
              reference=est("smml.reference.neural", "MLPRegressor", **_notes(_MLPR))),
    # clustering (001 "Clustering and the k-means algorithm"): 3 clusters against the 3 classes
    TourEntry("KMeans(n_clusters=3)", est("smml.cluster", "KMeans", n_clusters=3, random_state=0),
              ("iris", "wine"), reference=est("smml.reference.cluster", "KMeans", n_clusters=3, random_state=0),
              clustering=True),
    # second-order gradient boosting (002 section 3.2 "XGBoost")
    TourEntry("GradientBoostingClassifier(T=100, depth 6)",
              est("smml.ensemble", "GradientBoostingClassifier", random_state=0), _CLF, scale=False),
    TourEntry("GradientBoostingRegressor(T=100, depth 3, lr 0.1)",
              est("smml.ensemble", "GradientBoostingRegressor", max_depth=3, learning_rate=0.1, random_state=0),
              ("diabetes",), scale=False),
    TourEntry("GradientBoostingRegressor(T=10, depth 2)",
              est("smml.ensemble", "GradientBoostingRegressor", n_estimators=10, max_depth=2, random_state=0),
              ("diabetes",), scale=False,
              reference=est("smml.reference.gradient_boosting", "GradientBoostingRegressor", n_estimators=10, max_depth=2),
              quick=False),
]


def collect_entries():
    """Every entry of the tour (a copy of :data:`ENTRIES`)."""
    return list(ENTRIES)


def _timed_fit_predict(make, Xtr, ytr, Xte):
    est = make()
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    t1 = time.perf_counter()
    pred_tr = est.predict(Xtr)
    pred_te = est.predict(Xte)
    t2 = time.perf_counter()
    return pred_tr, pred_te, t1 - t0, t2 - t1


def run(quick=False, delta=0.05, out=None, progress=None, entries=None, verbose="auto"):
    """Run the tour; print one table to ``out`` (stdout), a progress bar to ``progress`` (stderr).

    ``verbose``: "auto" shows the bar when ``progress`` is a terminal, 1 always, 0 never
    (``smml._progress``). Returns the table's rows as dicts."""
    out = sys.stdout if out is None else out
    progress = sys.stderr if progress is None else progress
    entries = collect_entries() if entries is None else entries
    if quick:
        entries = [e for e in entries if e.quick]
    jobs = [(e, ds) for e in entries for ds in e.datasets]
    rows = []
    bar = _progress_bar(jobs, desc="tour", verbose=verbose, file=progress, unit="fit")
    for entry, ds in bar:
        if bar is not jobs:
            bar.set_description(f"{entry.name} on {ds}")
        X, y = load(ds)
        Xtr, Xte, ytr, yte = split(ds, X, y)
        if entry.scale:
            mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
            sd[sd == 0] = 1.0
            Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
        p_tr, p_te, t_fit, t_pred = _timed_fit_predict(entry.make, Xtr, ytr, Xte)
        regression = ds in REGRESSION
        loss = "square" if regression else "zero-one"
        if entry.clustering:
            from smml.cluster import adjusted_rand_index

            train_err = 1.0 - adjusted_rand_index(ytr, p_tr)
            test_err = 1.0 - adjusted_rand_index(yte, p_te)
            interval, loss = None, "1 - ARI"
        elif regression:
            train_err = float(np.mean((p_tr - ytr) ** 2))
            test_err = float(np.mean((p_te - yte) ** 2))
            interval = None  # the square loss is unbounded: no Hoeffding interval
        else:
            train_err = float(np.mean(p_tr != ytr))
            test_err = float(np.mean(p_te != yte))
            interval = hoeffding_interval(test_err, len(yte), delta)
        speedup = None
        if entry.reference is not None:
            _, _, r_fit, r_pred = _timed_fit_predict(entry.reference, Xtr, ytr, Xte)
            speedup = (r_fit + r_pred) / max(t_fit + t_pred, 1e-9)
        rows.append(dict(estimator=entry.name, dataset=ds, loss=loss,
                         train_error=train_err, test_error=test_err, interval=interval,
                         fit_seconds=t_fit, speedup=speedup))
    print_table(rows, delta, out)
    return rows


def print_table(rows, delta, out):
    head = ("estimator", "dataset", "loss", "train err", f"test err [{1 - delta:.0%} Hoeffding]",
            "fit ms", "x ref")
    lines = []
    for r in rows:
        if r["interval"] is None:
            test = f"{r['test_error']:.4g}"
        else:
            lo, hi = r["interval"]
            test = f"{r['test_error']:.4f} [{lo:.3f}, {hi:.3f}]"
        lines.append((r["estimator"], r["dataset"], r["loss"], f"{r['train_error']:.4g}", test,
                      f"{1e3 * r['fit_seconds']:.2f}",
                      "-" if r["speedup"] is None else f"{r['speedup']:.0f}x"))
    if not lines:
        print("(no estimators registered yet)", file=out)
        return
    widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(head)]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    print(fmt.format(*head), file=out)
    print(fmt.format(*("-" * w for w in widths)), file=out)
    for l in lines:
        print(fmt.format(*l), file=out)


# ---- the figures of `smml tour --plot DIR` ------------------------------------------------

#: the figures `smml tour --plot DIR` writes, as DIR/<name>.png (640 x 480 pixels)
PLOTS = ("knn_errors", "adaboost", "perceptron", "tree_occam", "pegasos", "learning_curve", "compare")
PLOT_DPI = 100


def _scaled_split(name):
    X, y = load(name)
    Xtr, Xte, ytr, yte = split(name, X, y)
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1.0
    return (Xtr - mu) / sd, (Xte - mu) / sd, ytr, yte


def separable_data(m=400, d=5, margin=0.05, seed=0):
    """m points of N(0, I_d) labelled by a random hyperplane, those within ``margin`` of it dropped."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(3 * m, d))
    s = X @ w + 0.1
    keep = np.abs(s) > margin
    return X[keep][:m], (s[keep][:m] > 0).astype(np.intp)


def _draw(name, ax, quick):
    """Draw figure ``name`` of :data:`PLOTS` on ``ax`` (breast cancer, 70/30 split, standardised;
    the Perceptron on :func:`separable_data`, since its theorem needs a separable set)."""
    from smml import plot
    from smml.ensemble import AdaBoostClassifier
    from smml.model_selection import compare, learning_curve
    from smml.neighbors import KNNClassifier

    Xtr, Xte, ytr, yte = _scaled_split("breast_cancer")
    if name == "knn_errors":
        return plot.plot_knn_errors(Xtr, ytr, Xte, yte, ks=range(1, 22 if quick else 100, 2), ax=ax)
    if name == "adaboost":
        return plot.plot_adaboost(AdaBoostClassifier(n_estimators=30 if quick else 100).fit(Xtr, ytr), ax=ax)
    if name == "perceptron":
        X, y = separable_data()
        return plot.plot_perceptron(X, y, max_epochs=30, ax=ax)
    if name == "tree_occam":
        return plot.plot_tree_occam(Xtr, ytr, Xte, yte, leaves=range(2, 21 if quick else 41), ax=ax)
    if name == "pegasos":
        n_iters = np.unique(np.logspace(1, 4 if quick else 5, 6 if quick else 20).astype(int))
        return plot.plot_pegasos(Xtr, ytr, lam=1e-2, n_iters=n_iters, ax=ax)
    X, y = load("breast_cancer")
    if name == "learning_curve":
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        res = learning_curve(make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=5)), X, y,
                             train_sizes=np.linspace(0.05, 1.0, 6 if quick else 20), random_state=0)
        return plot.plot_learning_curve(res, ax=ax)
    if name == "compare":   # 001's example: k-NN with k = 1 against k = 5
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        res = compare(make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=1)),
                      make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=5)), X, y, K=6 if quick else 10,
                      random_state=0)
        return plot.plot_compare(res, names=("1-NN", "5-NN"), ax=ax)
    raise ValueError(f"unknown figure {name!r}; the figures are {PLOTS}")


def write_plots(directory, quick=False, names=PLOTS, verbose="auto", progress=None):
    """Write the figures of :data:`PLOTS` as PNG files (640 x 480) into ``directory``; returns the paths.

    Figures are drawn on ``matplotlib.figure.Figure`` objects (no pyplot, any backend)."""
    import os

    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("smml tour --plot draws with matplotlib, which is not installed: "
                          "pip install 'smml[plot]'") from None
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name in _progress_bar(list(names), desc="figures", verbose=verbose,
                              file=sys.stderr if progress is None else progress, unit="fig"):
        fig = Figure(figsize=(6.4, 4.8), dpi=PLOT_DPI)
        _draw(name, fig.add_subplot(), quick)
        fig.tight_layout()
        path = os.path.join(directory, f"{name}.png")
        fig.savefig(path, dpi=PLOT_DPI)
        paths.append(path)
    return paths
