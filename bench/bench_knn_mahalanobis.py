"""k-NN with metric="mahalanobis": smml (exact keys, issue 29) against scikit-learn and,
with ``--ab REV``, against smml's k-NN module of git revision REV loaded in the same process
(the same compiled kernels; REV's ``smml/neighbors.py`` only: a revision from before
``smml.neighbors`` became a package), calls interleaved.

Shapes: correlated Gaussian data X = Z A (A a fixed random d x d matrix), the covariance
estimated at fit (metric_params=None), k = 5, 2 threads, float64 and float32:
20,000 x 2, 100,000 x 4, 50,000 x 8 (the kd-tree), 20,000 x 16 and 50,000 x 32 (brute
force); predict of n_queries rows, and of 1 row (per-call cost). scikit-learn's
KNeighborsClassifier(metric="mahalanobis", algorithm="brute") is timed on a subset of the
queries and extrapolated (labelled so). ``--quick``: the first three shapes, fewer rounds.

    python bench/bench_knn_mahalanobis.py [--quick] [--ab HEAD~1]
"""
import importlib.util
import subprocess
import sys
import tempfile

import numpy as np
from threadpoolctl import threadpool_limits

from _common import environment_line, interleaved_best, per_call_time, print_table

N_THREADS = 2
K = 5
SHAPES = [(20_000, 2, 5_000), (100_000, 4, 10_000), (50_000, 8, 5_000),
          (20_000, 16, 2_000), (50_000, 32, 2_000)]


def _old_module(rev):
    """smml/neighbors.py of git revision ``rev``, imported as a separate module."""
    src = subprocess.run(["git", "show", f"{rev}:src/smml/neighbors.py"], check=True,
                         capture_output=True, text=True).stdout
    path = tempfile.NamedTemporaryFile("w", suffix="_neighbors_old.py", delete=False)
    path.write(src)
    path.close()
    spec = importlib.util.spec_from_file_location("smml_neighbors_old", path.name)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _data(m, d, nq, dtype, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d)) + 2 * np.eye(d)
    X = (rng.normal(size=(m, d)) @ A).astype(dtype)
    y = rng.integers(0, 2, size=m)
    Q = (rng.normal(size=(nq, d)) @ A).astype(dtype)
    return X, y, Q


def main(quick=False, ab=None):
    from sklearn.neighbors import KNeighborsClassifier
    from smml.neighbors import KNNClassifier
    old = _old_module(ab) if ab else None
    print(environment_line(N_THREADS))
    print(f"k = {K}, metric='mahalanobis' (covariance estimated at fit), {N_THREADS} threads"
          + (f"; 'before' = smml/neighbors.py of {ab}" if ab else ""))
    rows = []
    repeat = 3 if quick else 5
    for m, d, nq in (SHAPES[:3] if quick else SHAPES):
        for dtype in (np.float64, np.float32):
            X, y, Q = _data(m, d, nq, dtype)
            new = KNNClassifier(n_neighbors=K, metric="mahalanobis", n_jobs=N_THREADS).fit(X, y)
            fns = [lambda: new.predict(Q)]
            names = ["smml"]
            if old is not None:
                before = old.KNNClassifier(k=K, metric="mahalanobis", n_jobs=N_THREADS).fit(X, y)
                fns.append(lambda: before.predict(Q))
                names.append("smml before")
            n_sk = min(nq, 500)
            sk = KNeighborsClassifier(K, metric="mahalanobis", algorithm="brute", n_jobs=N_THREADS,
                                      metric_params={"VI": new.VI_}).fit(X, y)
            fns.append(lambda: sk.predict(Q[:n_sk]))
            names.append(f"sklearn brute (x{nq / n_sk:.0f} extrapolated)")
            with threadpool_limits(N_THREADS):
                times, outs = interleaved_best(fns, repeat)
            times[-1] *= nq / n_sk
            agree = float(np.mean(outs[0][:n_sk] == outs[-1]))
            one = per_call_time(lambda: new.predict(Q[:1]), 200)
            one_old = per_call_time(lambda: before.predict(Q[:1]), 200) if old is not None else None
            row = [f"{m} x {d}", np.dtype(dtype).name, new.algorithm_, f"{times[0]:.3f}"]
            if old is not None:
                row += [f"{times[1]:.3f}", f"{times[1] / times[0]:.2f}",
                        f"{np.mean(outs[0] == outs[1]):.4f}"]
            row += [f"{times[-1]:.2f}", f"{times[-1] / times[0]:.1f}", f"{agree:.4f}",
                    f"{one * 1e6:.0f}"] + ([f"{one_old * 1e6:.0f}"] if old is not None else [])
            rows.append(row)
    cols = ["train", "dtype", "algorithm", f"smml s"]
    if old is not None:
        cols += ["before s", "before / smml", "same predictions"]
    cols += ["sklearn s", "sklearn / smml", "agree sklearn", "1 row us"]
    if old is not None:
        cols += ["1 row before us"]
    print_table("Mahalanobis k-NN predict", [dict(zip(cols, r)) for r in rows],
                [(c, c, "{}") for c in cols])


if __name__ == "__main__":
    ab = sys.argv[sys.argv.index("--ab") + 1] if "--ab" in sys.argv else None
    main("--quick" in sys.argv, ab)
