"""A/B of k-means with and without distance bounds (Hamerly's test in the Lloyd kernel,
``smml._kmeans_loop.use_bounds``): the same fit bit for bit, the time of each, and the share of
rows whose distances were computed. The rule's figures in its docstring come from this script.

    OMP_NUM_THREADS=2 python bench/ab_kmeans_bounds.py [ROWS,D,K,DTYPE ...]
    # default: 100,000 rows, d in {2, 16, 64, 256} x k in {16, 32, 64, 128, 256}, float64

Data: bench_grid's k-means data (64 gaussian blobs), its initial centroids, 20 Lloyd
iterations (tol=0), n_jobs=2; best of 3 interleaved rounds. A ratio > 1: the bounds are faster.
"""
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_grid as grid  # noqa: E402

import smml.cluster as cl  # noqa: E402
from smml.cluster import KMeans  # noqa: E402


def fit(X, C0, bounds):
    cl._BOUNDS = bounds
    try:
        t = time.perf_counter()
        km = KMeans(len(C0), init=C0, max_iter=grid.KM_ITER, tol=0, n_jobs=2).fit(X)
        return time.perf_counter() - t, km
    finally:
        cl._BOUNDS = None


def main():
    warnings.simplefilter("ignore")
    if len(sys.argv) > 1:
        cells = [(int(a), int(b), int(c), t) for a, b, c, t in (s.split(",") for s in sys.argv[1:])]
    else:
        cells = [(100_000, d, k, "float64") for d, k in itertools.product((2, 16, 64, 256), (16, 32, 64, 128, 256))]
    fam = grid.KMeansFamily()
    print(f"# {grid.KM_ITER} Lloyd iterations, n_jobs=2, best of 3 interleaved rounds")
    print("| rows | d | k | dtype | no bounds s | bounds s | no bounds / bounds | rule |")
    print("|---|---|---|---|---|---|---|---|")
    for n, d, k, dt in cells:
        X, C0 = fam.data(dict(rows=n, features=d, k=k, dtype=dt))
        X = np.ascontiguousarray(X)
        t = {False: [], True: []}
        for _ in range(3):
            for b in (False, True):
                s, km = fit(X, C0, b)
                t[b].append(s)
                if b:
                    assert np.array_equal(km.cluster_centers_, ref.cluster_centers_)
                else:
                    ref = km
        on = cl._loop.use_bounds(k, d)
        print(f"| {n:,} | {d} | {k} | {dt} | {min(t[False]):.3f} | {min(t[True]):.3f} | "
              f"{min(t[False]) / min(t[True]):.2f} | {'bounds' if on else 'none'} |", flush=True)


if __name__ == "__main__":
    main()
