"""Whole boosting fits at several values of the split-pass grain (``smml.ensemble._gradient_boosting
._GRAIN``): the measurements behind its value.  bench_gradient_boosting's binary data, 100 rounds, depth 6,
learning rate 0.3, 2 threads, best of 3 interleaved rounds.

Run: ``python bench/experiments/sweep_boost_grain.py [rows] [grain,grain,...]`` (default 20000 rows,
grains 32768,8192,2048).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/
import bench_gradient_boosting  # noqa: E402
import smml.ensemble._gradient_boosting as gb  # noqa: E402
from smml.ensemble import GradientBoostingClassifier  # noqa: E402


def main(m=20000, grains=(32768, 8192, 2048)):
    X, _, ys = bench_gradient_boosting.make_data(m, 10)
    y = ys["binary"][0]
    res = {g: [] for g in grains}
    saved = gb._GRAIN
    try:
        for _ in range(3):
            for g in grains:
                gb._GRAIN = g
                t = time.perf_counter()
                GradientBoostingClassifier(n_estimators=100, max_depth=6, learning_rate=0.3, n_jobs=2,
                                           random_state=0).fit(X, y)
                res[g].append(time.perf_counter() - t)
    finally:
        gb._GRAIN = saved
    print(f"{m:,} x 32, 2 threads: " + "  ".join(
        f"grain {g}: {min(v):.3f} s ({' '.join(f'{x:.2f}' for x in v)})" for g, v in res.items()))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000,
         tuple(int(g) for g in sys.argv[2].split(",")) if len(sys.argv) > 2 else (32768, 8192, 2048))
