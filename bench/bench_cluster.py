"""k-means (Lloyd): smml vs scikit-learn vs scikit-learn-intelex vs faiss vs the plain-Python reference.

Shapes (issue 11): 200,000 x 32, 16 clusters, and 1,000,000 x 8, 64 clusters; float64 and
float32; 2 threads for everyone. Every implementation starts from the SAME initial centroids
(16 / 64 distinct rows drawn at random, 001's initialisation), runs exactly 50 Lloyd
iterations (tol=0; the n_iter column checks it) and is timed as one whole ``fit`` (input
checks, setup, 50 iterations, the final assignment), interleaved round by round (the
machine shifts between speed modes; best of the rounds). "ms / iteration" is that fit time
over 50. faiss is float32 only and is asked to use every row (``max_points_per_centroid``
large; by default it subsamples to 256 rows per centroid). Final J: each fit's own final
centroids evaluated the same way (exact squared distances to the nearest centroid, float64);
"J - J_smml" is relative. "CPU s" is the process CPU time of the fit (all threads; it counts
OpenMP threads spinning at barriers: run with OMP_WAIT_POLICY=passive on a busy machine). The
reference runs 2 iterations on a subset of rows and is
extrapolated to the full shape and 50 iterations (labelled so). Also: predict on 1 and 5 rows
(per-call cost, as a Pipeline sees it).
"""
import os
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from _common import best_time, environment_line, interleaved_best, per_call_time, print_table

N_THREADS = 2
N_ITER = 50


def _load():
    try:
        return open("/proc/loadavg").read().split()[0]
    except OSError:
        return "?"


def _inertia(X, C, chunk=4096):
    """sum_i min_j ||x_i - c_j||^2 by direct differences in float64 (the same yardstick for all)."""
    X = np.asarray(X, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    J = 0.0
    for s in range(0, len(X), chunk):
        D = ((X[s:s + chunk, None, :] - C[None]) ** 2).sum(-1)
        J += float(D.min(axis=1).sum())
    return J


def _smml(X, C0):
    from smml.cluster import KMeans
    m = KMeans(len(C0), init=C0, max_iter=N_ITER, tol=0, n_jobs=N_THREADS).fit(X)
    return m.n_iter_, m.cluster_centers_, m


def _sklearn(X, C0):
    from sklearn.cluster import KMeans
    m = KMeans(len(C0), init=C0, n_init=1, max_iter=N_ITER, tol=0, algorithm="lloyd").fit(X)
    return m.n_iter_, m.cluster_centers_, m


def _intelex(X, C0):
    from sklearnex.cluster import KMeans
    m = KMeans(len(C0), init=C0, n_init=1, max_iter=N_ITER, tol=0).fit(X)
    return m.n_iter_, m.cluster_centers_, m


def _faiss(X, C0):
    import faiss
    km = faiss.Kmeans(X.shape[1], len(C0), niter=N_ITER, max_points_per_centroid=len(X) + 1,
                      seed=0, verbose=False)
    km.train(X, init_centroids=C0)
    return len(km.iteration_stats), km.centroids, km


PEERS = {"smml": _smml, "scikit-learn (lloyd)": _sklearn, "scikit-learn-intelex": _intelex,
         "faiss Kmeans": _faiss}


def _available(name):
    try:
        if name == "scikit-learn-intelex":
            import sklearnex  # noqa: F401
        if name == "faiss Kmeans":
            import faiss
            faiss.omp_set_num_threads(N_THREADS)
    except ImportError:
        return False
    return True


def _case(n, d, k, dtype, repeat, ref_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    C0 = X[rng.choice(n, k, replace=False)].copy()
    names = [p for p in PEERS if _available(p) and (p != "faiss Kmeans" or dtype == np.float32)]
    load0 = _load()
    with threadpool_limits(N_THREADS), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:                                     # warm-up (imports, thread pools)
            PEERS[name](X[:max(2000, 64 * k)], C0)
        times, cpus, outs = interleaved_best([lambda f=PEERS[p]: f(X, C0) for p in names], repeat, cpu=True)
    load1 = _load()
    t_smml = times[0]
    J_smml = _inertia(X, outs[0][1])
    rows = []
    for name, t, c, (n_iter, C, _) in zip(names, times, cpus, outs):
        J = J_smml if name == "smml" else _inertia(X, C)
        rows.append(dict(impl=name, seconds=t, per_iter=1e3 * t / N_ITER, n_iter=n_iter,
                         ratio=t / t_smml, cpu=c, cpu_ratio=c / cpus[0], J=J, dJ=(J - J_smml) / J_smml))
    if ref_rows:
        from smml.reference.cluster import KMeans as Ref
        sub = X[:ref_rows]
        t_ref, _ = best_time(lambda: Ref(k, init=C0, max_iter=2, tol=0).fit(sub), repeat=1)
        t_ref *= (n / ref_rows) * (N_ITER / 2)
        rows.append(dict(impl=f"smml.reference (EXTRAPOLATED from {ref_rows} rows x 2 iterations)",
                         seconds=t_ref, per_iter=1e3 * t_ref / N_ITER, n_iter=None,
                         ratio=t_ref / t_smml, J=None, dJ=None))
    others = [r for r in rows[1:len(names)] if r["impl"] != "smml"]
    title = (f"k-means fit, {n} x {d}, {k} clusters, {N_ITER} iterations from the same centroids, "
             f"{np.dtype(dtype).name}, {N_THREADS} threads (best of {repeat} interleaved rounds; "
             f"load {load0} -> {load1})")
    return title, rows, others


COLUMNS = [("impl", "implementation", "{}"), ("seconds", "fit seconds", "{:.3f}"),
           ("per_iter", "ms / iteration", "{:.2f}"), ("n_iter", "n_iter", "{}"),
           ("ratio", "time / smml time", "{:.2f}x"), ("cpu", "CPU s (all threads)", "{:.3f}"),
           ("cpu_ratio", "CPU / smml CPU", "{:.2f}x"), ("J", "final J", "{:.10g}"),
           ("dJ", "J - J_smml (relative)", "{:.1e}")]


def _few_rows(repeat=3, n_calls=50):
    from sklearn.cluster import KMeans as SkKMeans
    from smml.cluster import KMeans
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, 32))
    C0 = X[:16].copy()
    models = [("smml", KMeans(16, init=C0, max_iter=5, n_jobs=N_THREADS).fit(X)),
              ("scikit-learn", SkKMeans(16, init=C0, n_init=1, max_iter=5).fit(X))]
    if _available("scikit-learn-intelex"):
        from sklearnex.cluster import KMeans as XKMeans
        models.append(("scikit-learn-intelex", XKMeans(16, init=C0, n_init=1, max_iter=5).fit(X)))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n_rows in (1, 5):
            q = X[:n_rows]
            base = None
            for name, m in models:
                t = min(per_call_time(lambda: m.predict(q), n_calls) for _ in range(repeat))
                base = t if base is None else base
                rows.append(dict(impl=f"{name} predict({n_rows} rows)", us=1e6 * t, ratio=t / base))
    return rows


def main(quick=False):
    print(environment_line(N_THREADS))
    print(f"# OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
    cases = ([(20_000, 32, 16), (100_000, 8, 64)] if quick
             else [(200_000, 32, 16), (1_000_000, 8, 64)])
    repeat = 2 if quick else 5
    summary = []
    for n, d, k in cases:
        for dtype in (np.float64, np.float32):
            title, rows, others = _case(n, d, k, dtype, repeat, ref_rows=500 if quick else 2000)
            print_table(title, rows, COLUMNS)
            if others:
                fastest = min(others, key=lambda r: r["seconds"])
                summary.append(dict(shape=f"{n} x {d}, k={k}", dtype=np.dtype(dtype).name,
                                    peer=fastest["impl"], ratio=fastest["ratio"],
                                    cpu_ratio=min(r["cpu_ratio"] for r in others),
                                    J=max(abs(r["dJ"]) for r in others)))
    print_table("smml against the fastest peer (target: >= 1.5x, same J to 1e-9 in float64)", summary,
                [("shape", "shape", "{}"), ("dtype", "dtype", "{}"), ("peer", "fastest peer", "{}"),
                 ("ratio", "peer time / smml time", "{:.2f}x"),
                 ("cpu_ratio", "least peer CPU / smml CPU", "{:.2f}x"),
                 ("J", "max |J_peer - J_smml| / J_smml", "{:.1e}")])
    print_table("predict on a few rows (model 20000 x 32, 16 clusters; best of 3 x 50 calls)", _few_rows(),
                [("impl", "implementation", "{}"), ("us", "microseconds per call", "{:.0f}"),
                 ("ratio", "time / smml time", "{:.2f}x")])


if __name__ == "__main__":
    import sys
    main(quick="--quick" in sys.argv)
