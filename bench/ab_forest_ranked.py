"""A/B of a forest's two exact modes (smml.ensemble._forest._shared): each tree's sorted columns
cut from one sort of all rows, against the tree kernel's ranked mode (forest.md, "The ranked
mode"). The two modes grow the same trees; this times them interleaved in one process.

    OMP_NUM_THREADS=2 python bench/ab_forest_ranked.py [--shapes 20000x500 20000x128 ...]
        [--trees 100] [--rounds 2]

Data: bench_grid's tabular data (``--task``, binary by default), max_features="sqrt" (a regressor:
1/3, as the grid), n_jobs=2. Prints per shape
the best time of each mode, sorted / ranked, and which mode the default rule picks.
"""
import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_grid as grid  # noqa: E402

import smml.ensemble._forest as F  # noqa: E402
from smml.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", default=["20000x8", "20000x32", "20000x128", "20000x500",
                                                      "100000x128"])
    p.add_argument("--trees", type=int, default=100)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--task", choices=["binary", "5 classes", "regression"], default="binary")
    a = p.parse_args()
    rule = F._ranked
    reg = a.task == "regression"
    Est, mf_param = (RandomForestRegressor, 1.0 / 3.0) if reg else (RandomForestClassifier, "sqrt")
    print(f"# {a.task}, {a.trees} trees, max_features={mf_param!r}, n_jobs=2, best of {a.rounds} "
          "interleaved rounds")
    print("| rows x d (candidates) | sorted columns s | ranked s | sorted / ranked | the rule picks |")
    print("|---|---|---|---|---|")
    for shape in a.shapes:
        n, d = map(int, shape.split("x"))
        X, ys = grid._tabular(n, d, 0)
        y = ys[a.task]
        mf = max(1, int(d / 3.0)) if reg else max(1, int(math.sqrt(d)))
        best = {}
        for _ in range(a.rounds):
            for mode in ("sorted", "ranked"):
                F._ranked = lambda *args, m=mode: m == "ranked"
                t = time.perf_counter()
                Est(n_estimators=a.trees, max_features=mf_param, n_jobs=2, random_state=0).fit(X, y)
                best[mode] = min(best.get(mode, math.inf), time.perf_counter() - t)
        F._ranked = rule
        pick = "ranked" if rule(n, d, mf) else "sorted"
        print(f"| {n:,} x {d} ({mf}) | {best['sorted']:.3f} | {best['ranked']:.3f} | "
              f"{best['sorted'] / best['ranked']:.2f} | {pick} |", flush=True)


if __name__ == "__main__":
    main()
