"""``smml tour``: every smml estimator on real data bundled with scikit-learn.

Each family module (``smml.neighbors``, ``smml.tree``, ...) exposes a list
``TOUR`` of :class:`TourEntry`; the tour collects them, so a new estimator joins
the tour by adding an entry beside its own code. Datasets ship with
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

FAMILIES = ("neighbors", "tree", "linear", "ensemble", "kernels", "cluster")
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


def collect_entries():
    entries = []
    for fam in FAMILIES:
        try:
            mod = importlib.import_module(f"smml.{fam}")
        except ModuleNotFoundError as exc:
            if exc.name == f"smml.{fam}":
                continue
            raise
        entries.extend(getattr(mod, "TOUR", []))
    return entries


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
