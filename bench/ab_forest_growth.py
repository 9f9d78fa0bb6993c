"""A/B of a forest's trees grown best-first (a heap of leaves) against depth-first (a stack), the
forest's choice since the thirteenth session (forest.md). Without max_leaf_nodes both grow every
leaf until it cannot split; the order only decides which node gets which draw of features.

    OMP_NUM_THREADS=2 python bench/ab_forest_growth.py ROWS D TASK     # e.g. 20000 8 regression

Data: bench_grid's tabular data; max_features "sqrt" (a regressor: 1/3, as the grid), 50 trees,
n_jobs=2, best of 3 interleaved rounds.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_grid as grid  # noqa: E402

import smml.ensemble._forest as F  # noqa: E402
from smml.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402


def main():
    n, d, task = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    X, ys = grid._tabular(n, d, 0)
    y = ys[task]
    Est = RandomForestRegressor if task == "regression" else RandomForestClassifier
    mf = 1.0 / 3.0 if task == "regression" else "sqrt"
    orig = F._default_tree
    best = {}
    try:
        for _ in range(3):
            for growth in ("best", "depth"):
                F._default_tree = lambda c, g=growth, **kw: orig(c, **dict(kw, growth=g))
                t = time.perf_counter()
                Est(n_estimators=50, n_jobs=2, random_state=0, max_features=mf).fit(X, y)
                best[growth] = min(best.get(growth, float("inf")), time.perf_counter() - t)
    finally:
        F._default_tree = orig
    print(f"{n:,} x {d} {task}: best-first {best['best']:.3f} s, depth-first {best['depth']:.3f} s, "
          f"best / depth {best['best'] / best['depth']:.2f}")


if __name__ == "__main__":
    main()
