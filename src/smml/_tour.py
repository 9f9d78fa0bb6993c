"""``smml tour``: every smml estimator on real data bundled with scikit-learn.

The entries are declared here, in :data:`ENTRIES`, and name their estimators
by module and class (``est("smml.tree", "TreeClassifier", max_depth=3)``), so
the estimator modules never import the tour and the tour imports a family only
when it runs that family's entries. A new estimator joins the tour with one
line in :data:`ENTRIES`. Datasets ship with
scikit-learn (no download); the split is fixed (70/30, seed 0, stratified for
classification); features are standardised with the training part's mean and
standard deviation when an entry asks for it.
"""
import importlib
import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from smml.bounds import hoeffding_interval

CLASSIFICATION = ("breast_cancer", "iris", "wine")
REGRESSION = ("diabetes",)


@dataclass
class TourEntry:
    name: str                                   # what the table shows
    make: Callable[[], object]                  # a fresh smml estimator
    datasets: Sequence[str]                     # names from CLASSIFICATION / REGRESSION
    reference: Optional[Callable[[], object]] = None  # plain-Python twin (fit / predict)
    scale: bool = True                          # standardise features first
    quick: bool = True                          # part of `smml tour --quick`


def load(name):
    from sklearn import datasets

    loader = {"breast_cancer": datasets.load_breast_cancer, "iris": datasets.load_iris,
              "wine": datasets.load_wine, "diabetes": datasets.load_diabetes}[name]
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

ENTRIES = [
    # k-NN (000 "The Nearest Neighbour algorithm")
    TourEntry("KNNClassifier(k=1)", est("smml.neighbors", "KNNClassifier", k=1), _CLF,
              reference=est("smml.reference.neighbors", "KNNClassifier", k=1)),
    TourEntry("KNNClassifier(k=5)", est("smml.neighbors", "KNNClassifier", k=5), _CLF,
              reference=est("smml.reference.neighbors", "KNNClassifier", k=5)),
    TourEntry("KNNRegressor(k=5)", est("smml.neighbors", "KNNRegressor", k=5), ("diabetes",),
              reference=est("smml.reference.neighbors", "KNNRegressor", k=5)),
    # tree predictors (000 "Tree Predictors"; 002)
    TourEntry("TreeClassifier(max_depth=3)", est("smml.tree", "TreeClassifier", max_depth=3, random_state=0),
              _CLF, reference=est("smml.reference.tree", "TreeClassifier", max_depth=3), scale=False),
    TourEntry("TreeClassifier(pruning='occam')",
              est("smml.tree", "TreeClassifier", pruning="occam", random_state=0), _CLF, scale=False),
    TourEntry("TreeRegressor(max_depth=3)", est("smml.tree", "TreeRegressor", max_depth=3, random_state=0),
              ("diabetes",), reference=est("smml.reference.tree", "TreeRegressor", max_depth=3), scale=False),
    # linear and online learners (000 "Linear predictors"; 001; 002; 003)
    TourEntry("Perceptron", est("smml.linear", "Perceptron", max_epochs=50), _CLF,
              reference=est("smml.reference.linear", "Perceptron", max_epochs=50)),
    TourEntry("LogisticRegression", est("smml.linear", "LogisticRegression", lam=1e-2), ("breast_cancer",),
              reference=est("smml.reference.linear", "LogisticRegression", lam=1e-2)),
    TourEntry("Pegasos", est("smml.linear", "Pegasos", lam=1e-2, n_iter=20000, random_state=0),
              ("breast_cancer",),
              reference=est("smml.reference.linear", "Pegasos", lam=1e-2, n_iter=20000, random_state=0)),
    TourEntry("OnlineGradientDescent", est("smml.linear", "OnlineGradientDescent", radius=10.0),
              ("breast_cancer",), reference=est("smml.reference.linear", "OnlineGradientDescent", radius=10.0)),
    TourEntry("LinearRegression", est("smml.linear", "LinearRegression"), ("diabetes",),
              reference=est("smml.reference.linear", "LinearRegression")),
    TourEntry("RidgeRegression", est("smml.linear", "RidgeRegression", alpha=1.0), ("diabetes",),
              reference=est("smml.reference.linear", "RidgeRegression", alpha=1.0)),
    TourEntry("LMSRegressor", est("smml.linear", "LMSRegressor", mode="stochastic", max_epochs=200),
              ("diabetes",),
              reference=est("smml.reference.linear", "LMSRegressor", mode="stochastic", max_epochs=200)),
    TourEntry("LADRegressor", est("smml.linear", "LADRegressor"), ("diabetes",)),
    # ensembles (002 "Adaboost", "Random forests"; 003 section 16)
    TourEntry("AdaBoostClassifier(stumps, T=30)", est("smml.ensemble", "AdaBoostClassifier", n_estimators=30),
              ("breast_cancer",), reference=est("smml.reference.ensemble", "AdaBoostStumps", n_estimators=30)),
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


def run(quick=False, delta=0.05, out=None, progress=None, entries=None):
    """Run the tour; print one table to ``out`` (stdout); progress to ``progress`` (stderr).

    Returns the table's rows as dicts."""
    out = sys.stdout if out is None else out
    progress = sys.stderr if progress is None else progress
    entries = collect_entries() if entries is None else entries
    if quick:
        entries = [e for e in entries if e.quick]
    jobs = [(e, ds) for e in entries for ds in e.datasets]
    rows = []
    for i, (entry, ds) in enumerate(jobs, 1):
        print(f"[{i}/{len(jobs)}] {entry.name} on {ds} ...", file=progress, flush=True)
        X, y = load(ds)
        Xtr, Xte, ytr, yte = split(ds, X, y)
        if entry.scale:
            mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
            sd[sd == 0] = 1.0
            Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
        p_tr, p_te, t_fit, t_pred = _timed_fit_predict(entry.make, Xtr, ytr, Xte)
        regression = ds in REGRESSION
        if regression:
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
        rows.append(dict(estimator=entry.name, dataset=ds, loss="square" if regression else "zero-one",
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
