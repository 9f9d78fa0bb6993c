"""Where the boosting grid's metric misses come from (bench/gradient_boosting.md, "Where the grid's
metric misses come from"). The grid's data and settings (``bench_grid.Boosting.maker``), test sets
of 20,000 rows from seeds 101-103. Run from the repository root, one thread:

    OMP_NUM_THREADS=1 .venv/bin/python bench/experiments/boosting_metric_gap.py bins 20000 128 regression 6
    OMP_NUM_THREADS=1 .venv/bin/python bench/experiments/boosting_metric_gap.py bins 20000 8 binary 3
    OMP_NUM_THREADS=1 .venv/bin/python bench/experiments/boosting_metric_gap.py multiclass 20000 8 6

``bins``: each peer fitted on the raw data and on smml's bin codes (train and test columns replaced
by their codes for ``smml._binning.bin_edges(X, 256, 0)``), and smml at max_bins 256 / 255 / 254 /
200 / 128. ``multiclass``: 5 classes; smml at the grid's settings and at half the learning rate,
lambda and min_child_weight (xgboost's softmax hessian is 2 p (1 - p)), xgboost on smml's codes at
the grid's settings and at twice them. Prints the test metric (accuracy, R^2) per seed; the
environment variable SEEDS (e.g. ``SEEDS=4,5,6,7,8,9``) sets the training seeds (default 1,2,3).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench_grid as g  # noqa: E402
from smml._binning import bin_edges  # noqa: E402

SEEDS = tuple(int(v) for v in os.environ.get("SEEDS", "1,2,3").split(","))


def codes(X, E):
    return np.stack([np.searchsorted(E[j], X[:, j], side="left") for j in range(X.shape[1])], 1).astype(np.float64)


def data(rows, d, task, seed):
    X, ys = g._tabular(rows, d, seed=seed)
    Xt, yts = g._tabular(20_000, d, seed=seed + 100)
    E = bin_edges(X, 256, 0)
    return X, ys[task], Xt, yts[task], codes(X, E), codes(Xt, E)


def bins(rows, d, task, depth):
    from smml.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
    fam = g.Boosting()
    cell = dict(rows=rows, features=d, task=task, depth=depth, test=20_000)
    cls = GradientBoostingRegressor if task == "regression" else GradientBoostingClassifier
    for s in SEEDS:
        X, y, Xt, yt, Xc, Xtc = data(rows, d, task, s)
        metric = lambda m, A: g._metric_supervised(task, m, A, yt)["metric"]  # noqa: E731
        out = []
        for lib in ("smml", "LightGBM", "xgboost hist", "sklearn HGB"):
            raw = fam.maker(cell, lib)((X, y))
            on_codes = fam.maker(cell, lib)((Xc, y))
            out.append(f"{lib} {metric(raw, Xt):.4f} (on smml's codes {metric(on_codes, Xtc):.4f})")
        for mb in (255, 254, 200, 128):
            m = cls(n_estimators=fam.ROUNDS, max_depth=depth, learning_rate=fam.LR, reg_lambda=fam.LAMBDA,
                    max_bins=mb, n_jobs=1, random_state=0).fit(X, y)
            out.append(f"smml max_bins {mb} {metric(m, Xt):.4f}")
        print(f"seed {s}: " + " | ".join(out), flush=True)


def multiclass(rows, d, depth):
    import xgboost as xgb
    from smml.ensemble import GradientBoostingClassifier
    fam = g.Boosting()
    for s in SEEDS:
        X, y, Xt, yt, Xc, Xtc = data(rows, d, "5 classes", s)
        acc = lambda m, A: float(np.mean(m.predict(A) == yt))  # noqa: E731
        out = []
        for f in (1.0, 0.5):
            m = GradientBoostingClassifier(n_estimators=fam.ROUNDS, max_depth=depth, learning_rate=fam.LR * f,
                                           reg_lambda=fam.LAMBDA * f, min_child_weight=1.0 * f, max_bins=256,
                                           n_jobs=1, random_state=0).fit(X, y)
            out.append(f"smml x{f} {acc(m, Xt):.4f}")
        for f in (1.0, 2.0):
            m = xgb.XGBClassifier(tree_method="hist", n_estimators=fam.ROUNDS, max_depth=depth,
                                  learning_rate=fam.LR * f, reg_lambda=fam.LAMBDA * f, min_child_weight=1.0 * f,
                                  max_bin=256, n_jobs=1, random_state=0).fit(Xc, y)
            out.append(f"xgboost x{f} on smml's codes {acc(m, Xtc):.4f}")
        print(f"seed {s}: " + " | ".join(out), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "bins":
        bins(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
    else:
        multiclass(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
