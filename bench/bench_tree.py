"""Tree benchmark: smml.tree vs scikit-learn's DecisionTreeClassifier vs smml.reference.

Data: 100,000 x 32 float64 (quick: 20,000 x 32), binary labels from a nonlinear rule
(sign of x0*x1 + sin(2 x2) + x3^2 - 1) with 10% of the labels flipped; test set of the
same size.  Settings: fully grown and max_depth=10, criterion gini.  The reference grows
on a 300-row subset and its time is extrapolated linearly in n (labelled as such: its
exhaustive search is quadratic per node, so this flatters it).
"""
import sys
import os
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, environment_line, print_table  # noqa: E402


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    s = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + X[:, 3] ** 2 - 1.0
    y = (s > 0).astype(np.int64)
    flip = rng.random(n) < 0.10
    y[flip] = 1 - y[flip]
    return X, y


def main(quick=False):
    from sklearn.tree import DecisionTreeClassifier

    from smml._threads import effective_n_threads
    from smml.reference.tree import TreeClassifier as RefTree
    from smml.tree import TreeClassifier

    n, d = (20_000, 32) if quick else (100_000, 32)
    X, y = make_data(2 * n, d)
    Xtr, ytr, Xte, yte = X[:n], y[:n], X[n:], y[n:]
    nt = effective_n_threads()
    print(environment_line(nt))
    print(f"# train {Xtr.shape}, test {Xte.shape}, binary labels, 10% label noise, criterion gini")
    repeat = 1 if quick else 2
    rows = []
    for depth in (None, 10):
        label = "full" if depth is None else f"depth {depth}"
        res = {}
        models = {
            "sklearn": lambda: DecisionTreeClassifier(criterion="gini", max_depth=depth, random_state=0),
            "smml exact": lambda: TreeClassifier("gini", splitter="exact", max_depth=depth, random_state=0),
            "smml hist": lambda: TreeClassifier("gini", splitter="hist", max_depth=depth, random_state=0),
            "smml exact, 1 thread": lambda: TreeClassifier("gini", splitter="exact", max_depth=depth,
                                                           random_state=0, n_jobs=1),
            "smml hist, 1 thread": lambda: TreeClassifier("gini", splitter="hist", max_depth=depth,
                                                          random_state=0, n_jobs=1),
        }
        for name, make in models.items():
            t_fit, est = best_time(lambda: make().fit(Xtr, ytr), repeat=repeat)
            t_pred, pred = best_time(lambda: est.predict(Xte), repeat=3)
            res[name] = dict(fit=t_fit, pred=t_pred, acc=float(np.mean(pred == yte)),
                             leaves=int(est.get_n_leaves()))
        m = 300
        t0 = time.perf_counter()
        RefTree("gini", max_depth=depth).fit(Xtr[:m], ytr[:m])
        t_ref = (time.perf_counter() - t0) * n / m
        sk = res["sklearn"]
        for name, r in res.items():
            rows.append(dict(setting=label, model=name, fit=r["fit"], pred=1e3 * r["pred"], acc=100 * r["acc"],
                             leaves=r["leaves"], fit_ratio=sk["fit"] / r["fit"], pred_ratio=sk["pred"] / r["pred"],
                             ref=t_ref / r["fit"] if name != "sklearn" else None))
        rows.append(dict(setting=label, model=f"reference (n={m}, x{n // m} extrapolated)", fit=t_ref,
                         pred=None, acc=None, leaves=None, fit_ratio=sk["fit"] / t_ref, pred_ratio=None, ref=None))
    print_table("fit / predict, sklearn-time / model-time ratios (>1: faster than sklearn)", rows, [
        ("setting", "setting", "{}"), ("model", "model", "{}"), ("fit", "fit s", "{:.3f}"),
        ("pred", "predict ms", "{:.1f}"), ("acc", "test acc %", "{:.2f}"), ("leaves", "leaves", "{}"),
        ("fit_ratio", "fit x sklearn", "{:.2f}"), ("pred_ratio", "predict x sklearn", "{:.2f}"),
        ("ref", "fit x reference", "{:.0f}"),
    ])
    return rows


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
