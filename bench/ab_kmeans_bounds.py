"""A/B of k-means with and without distance bounds (Hamerly's test in the Lloyd kernel,
``smml._kmeans_loop.use_bounds``): the same fit bit for bit, the time of each. The rule's figures
in its docstring come from this script. With ``--groups``: Hamerly's single bound against the
group bounds (Yinyang's test, ``smml._kmeans_loop.group_count``), both forced on.

    OMP_NUM_THREADS=2 python bench/ab_kmeans_bounds.py [--groups] [ROWS,D,K,DTYPE ...]
    # default: 100,000 rows, d in {2, 16, 64, 256} x k in {16, 32, 64, 128, 256}, float64
    # (--groups: d in {2, 16, 32, 64, 128, 256} x k in {64, 128, 256}, float32 and float64)

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


def fit(X, C0, bounds, groups=None):
    cl._BOUNDS, cl._GROUPS = bounds, groups
    try:
        t = time.perf_counter()
        km = KMeans(len(C0), init=C0, max_iter=grid.KM_ITER, tol=0, n_jobs=2).fit(X)
        return time.perf_counter() - t, km
    finally:
        cl._BOUNDS, cl._GROUPS = None, None


def main():
    warnings.simplefilter("ignore")
    args = sys.argv[1:]
    groups = "--groups" in args
    args = [a for a in args if a != "--groups"]
    if args:
        cells = [(int(a), int(b), int(c), t) for a, b, c, t in (s.split(",") for s in args)]
    elif groups:
        cells = [(100_000, d, k, t) for t in ("float32", "float64")
                 for d, k in itertools.product((2, 16, 32, 64, 128, 256), (64, 128, 256))]
    else:
        cells = [(100_000, d, k, "float64") for d, k in itertools.product((2, 16, 64, 256), (16, 32, 64, 128, 256))]
    # (label, bounds, groups) of A and B: B over A is the ratio printed
    # (--groups: k // GROUP_SIZE groups forced on, whatever the rule says)
    a, b = ((("Hamerly", True, 0), ("groups", True, -1)) if groups else
            (("no bounds", False, None), ("bounds", True, None)))
    fam = grid.KMeansFamily()
    print(f"# {grid.KM_ITER} Lloyd iterations, n_jobs=2, best of 3 interleaved rounds")
    print(f"| rows | d | k | dtype | {a[0]} s | {b[0]} s | {a[0]} / {b[0]} | rule |")
    print("|---|---|---|---|---|---|---|---|")
    for n, d, k, dt in cells:
        X, C0 = fam.data(dict(rows=n, features=d, k=k, dtype=dt))
        X = np.ascontiguousarray(X)
        t = {0: [], 1: []}
        ref = None
        for _ in range(3):
            for i, (_, bounds, grp) in enumerate((a, b)):
                s, km = fit(X, C0, bounds, k // cl._loop.GROUP_SIZE if grp == -1 else grp)
                t[i].append(s)
                if ref is None:
                    ref = km
                assert np.array_equal(km.cluster_centers_, ref.cluster_centers_)
                assert np.array_equal(km.labels_, ref.labels_)
        if groups:
            rule = f"{cl._loop.group_count(k, d)} groups" if cl._loop.group_count(k, d) else "Hamerly"
        else:
            rule = "bounds" if cl._loop.use_bounds(k, d) else "none"
        print(f"| {n:,} | {d} | {k} | {dt} | {min(t[0]):.3f} | {min(t[1]):.3f} | "
              f"{min(t[0]) / min(t[1]):.2f} | {rule} |", flush=True)


if __name__ == "__main__":
    main()
