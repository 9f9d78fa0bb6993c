"""smml on Dask (issue 15): the distributed path against the in-memory one, same 2 cores.

A ``LocalCluster`` of 2 worker processes x 1 thread on the loopback interface (OpenMP
1 thread per worker) against the in-memory run on 2 OpenMP threads in this process;
the calls are interleaved round by round (``_common.interleaved_best``) and every
distributed result is checked against the in-memory one.

- **CV of a forest**: ``cv_estimate(RandomForestClassifier(n_estimators=300), K=10)`` on
  20,000 x 32 (make_classification; 300 trees since the exact forest became 3x faster, to keep
  at least 10 s in memory): in memory the folds run one after the other and each
  forest grows its trees on 2 threads; on the cluster (``joblib.parallel_backend("dask")``)
  the 10 folds are tasks on the 2 workers (X and y scattered once by joblib).
- **k-NN predict**: ``KNNClassifier(n_neighbors=5)`` on 1,000,000 x 16 standard normal training
  rows, 3 classes, 60,000 queries; ``smml.dask.KNNClassifier`` holds the training set in 4
  shards of 250,000 rows on the workers (the training set is persisted on the cluster
  first; moving it there and fitting the shards are reported apart), the queries in
  blocks of 6,000. Peer: dask-ml's ``ParallelPostFit`` around the in-memory estimator
  (blockwise predict; the whole training set goes to the workers inside the estimator).
- **k-means**: Lloyd from the same 64 initial centroids (rows of X), ``tol=0``,
  on 1,000,000 x 16 standard normal rows (no clusters: runs make up to ``max_iter`` = 400
  iterations, at least 10 s in memory on a 2-core AVX-512 machine), k = 64;
  ``smml.dask.KMeans`` on a persisted dask array of 4 chunks vs the in-memory
  ``smml.cluster.KMeans`` vs dask-ml's ``KMeans`` (the same init array; its own Lloyd
  iterations on dask arrays, not bit-comparable: timed once on 10 iterations, its ratio is
  per iteration, and its centroids are compared with smml's after 10 iterations).

The overhead target: the distributed path adds less than 20% on 2 local workers for work
of at least 10 s in memory, with identical results. ``--quick`` runs small sizes (a smoke
test: the 10 s condition does not hold there).

- **logistic regression** (issue 35): ``smml.dask.LogisticRegression`` against dask-ml's
  ``LogisticRegression(solver="lbfgs")`` (dask-glm) at the same objective (no intercept:
  dask-ml penalises its intercept, smml does not; dask-ml's C = 1 / (lambda m) and its
  tolerance m times smml's, its objective being m times smml's) on 5,000,000 x 50 standard
  normal rows of a logistic model, generated in chunks of 262,144 rows on the workers
  (``da.random``, seeded) and persisted there; both objectives are evaluated with smml's
  formula and printed. Then the distributed / in-memory ratio on 1,000,000 x 50 (fits in
  memory; the in-memory fit on 2 OpenMP threads of the gathered data). Targets: >= 2x
  faster than dask-ml; distributed / in-memory <= 1.3x. ``--quick``: 200,000 x 50 and
  100,000 x 50.

    OMP_NUM_THREADS=2 python bench/bench_dask.py [--quick] [--repeat 2] [--only cv|knn|kmeans|logistic]
                                                  [--no-malloc-trim] [--similar]

``--similar`` runs the three on other shapes like the target's: CV of 300 trees on 40,000 x 16
(8 folds) and of 450 trees on 10,000 x 64 (10 folds); k-NN on 500,000 x 32 in 4 shards and on
1,000,000 x 16 in 8 shards, 60,000 queries each; k-means on 500,000 x 32 (k = 64, 4 chunks,
400 iterations), 1,000,000 x 16 (k = 64, 8 chunks, 400) and 2,000,000 x 8 (k = 32, 4 chunks, 500).

Dask's nannies start the workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also turns off
glibc's dynamic mmap threshold: every allocation above 128 KB is then mapped afresh and
faulted in (a forest of 50 trees on 18,000 x 32: 147,000 page faults against 11,000).
``--no-malloc-trim`` starts them without it, to measure what that setting costs.
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

from _common import environment_line, interleaved_best, print_table

N_THREADS = 2
LOGISTIC_CHUNK = 262_144  # rows per chunk of the logistic benchmarks (512 x 512: whole kernel chunks)
DASKML_ITERS = 10          # dask-ml's KMeans: at most this many iterations (its ratio is per iteration)


def _cluster(malloc_trim=True):
    """The 2-worker LocalCluster. ``malloc_trim=False``: the workers start without the
    ``MALLOC_TRIM_THRESHOLD_=65536`` that dask's nannies set by default
    (``distributed.nanny.pre-spawn-environ``); glibc then keeps its dynamic mmap threshold."""
    import dask
    import distributed

    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    if not malloc_trim:
        env.pop("MALLOC_TRIM_THRESHOLD_", None)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": env}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=None, silence_logs=40,
                                           env={"OMP_NUM_THREADS": "1"})   # 1 OpenMP thread per worker
    client = distributed.Client(cluster)
    client.wait_for_workers(2, timeout=60)
    return cluster, client


def _wait(*arrays):
    import distributed

    distributed.wait([f for a in arrays for f in distributed.futures_of(a)])


def bench_cv(client, m, d, trees, K, repeat):
    import joblib
    from sklearn.datasets import make_classification

    from smml.ensemble import RandomForestClassifier
    from smml.model_selection import cv_estimate

    X, y = make_classification(m, d, n_informative=d // 2, n_redundant=d // 4, flip_y=0.05, random_state=0)
    est = RandomForestClassifier(n_estimators=trees, random_state=0)

    def local():
        return cv_estimate(est, X, y, K=K, shuffle=True, random_state=1)

    def remote():
        with joblib.parallel_backend("dask"):
            return cv_estimate(est, X, y, K=K, shuffle=True, random_state=1)

    (t_l, t_r), (a, b) = interleaved_best([local, remote], repeat)
    return [dict(impl=f"in-memory (folds in turn, trees on {N_THREADS} threads)", t=t_l, ratio=1.0, same="-"),
            dict(impl="dask backend (folds on 2 workers)", t=t_r, ratio=t_r / t_l, same=str(a == b))]


def bench_knn(client, m, d, nq, shards, q_block, repeat):
    import dask.array as da
    from dask_ml.wrappers import ParallelPostFit

    import smml.dask as sd
    from smml.neighbors import KNNClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, d))
    y = rng.integers(0, 3, m)
    Q = rng.standard_normal((nq, d))
    t0 = time.perf_counter()
    mem = KNNClassifier(n_neighbors=5, n_jobs=N_THREADS).fit(X, y)
    t_fit_l = time.perf_counter() - t0
    t0 = time.perf_counter()
    Xd = client.persist(da.from_array(X, chunks=(-(-m // shards), d)))   # the data on the cluster
    yd = client.persist(da.from_array(y, chunks=(-(-m // shards),)))
    _wait(Xd, yd)
    t_scatter = time.perf_counter() - t0
    t0 = time.perf_counter()
    dist = sd.KNNClassifier(n_neighbors=5).fit(Xd, yd)
    t_fit_r = time.perf_counter() - t0
    print(f"# k-NN: training set to the workers {t_scatter:.2f} s; fit (shards' kd-trees / gemm operands) "
          f"in memory {t_fit_l:.2f} s, on the cluster {t_fit_r:.2f} s")
    Qd = da.from_array(Q, chunks=(q_block, d))
    ppf = ParallelPostFit(mem)
    fns = [lambda: mem.predict(Q), lambda: dist.predict(Qd).compute(), lambda: ppf.predict(Qd).compute()]
    (t_l, t_r, t_p), (a, b, c) = interleaved_best(fns, repeat)
    return [dict(impl=f"in-memory KNNClassifier.predict ({N_THREADS} threads)", t=t_l, ratio=1.0, same="-",
                 fit=t_fit_l),
            dict(impl=f"smml.dask.KNNClassifier ({shards} row blocks, {len(dist.shard_sizes_)} shards)",
                 t=t_r, ratio=t_r / t_l,
                 same=str(np.array_equal(a, b)), fit=t_fit_r),
            dict(impl="dask-ml ParallelPostFit(in-memory model)", t=t_p, ratio=t_p / t_l,
                 same=str(np.array_equal(a, c)), fit=None)]


def bench_kmeans(client, m, d, k, iters, chunks, repeat):
    import dask.array as da
    from dask_ml.cluster import KMeans as DaskMLKMeans

    import smml.dask as sd
    from smml.cluster import KMeans

    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, d))          # no clusters to find: Lloyd runs max_iter iterations
    C0 = X[rng.choice(m, k, replace=False)].copy()
    # chunks on the kernel's block boundaries (else smml.dask.KMeans rechunks at each fit)
    from smml.cluster import _block_rows
    block = _block_rows(m, k, d)
    Xd = client.persist(da.from_array(X, chunks=(-(-m // chunks // block) * block, d)))
    _wait(Xd)
    mem = lambda: KMeans(n_clusters=k, init=C0, max_iter=iters, tol=0, n_jobs=N_THREADS).fit(X)  # noqa: E731
    dist = lambda: sd.KMeans(n_clusters=k, init=C0, max_iter=iters, tol=0).fit(Xd)  # noqa: E731
    it_dml = min(iters, DASKML_ITERS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (t_l, t_r), (a, b) = interleaved_best([mem, dist], repeat)
        # dask-ml is timed once, on at most DASKML_ITERS iterations (it is far slower per
        # iteration) and compared per iteration, against smml after as many iterations
        t0 = time.perf_counter()
        c = DaskMLKMeans(n_clusters=k, init=C0, max_iter=it_dml, tol=0).fit(Xd)
        t_m = time.perf_counter() - t0
        a_short = KMeans(n_clusters=k, init=C0, max_iter=it_dml, tol=0, n_jobs=N_THREADS).fit(X)
    same = (np.array_equal(a.cluster_centers_, b.cluster_centers_)
            and np.array_equal(a.labels_, b.labels_.compute()) and a.inertia_ == b.inertia_)
    it_m = getattr(c, "n_iter_", None)
    return [dict(impl=f"in-memory smml KMeans ({N_THREADS} threads)", t=t_l, ratio=1.0, same="-",
                 it=a.n_iter_, per=t_l / a.n_iter_, inertia=a.inertia_),
            dict(impl=f"smml.dask.KMeans ({chunks} chunks)", t=t_r, ratio=t_r / t_l, same=str(same),
                 it=b.n_iter_, per=t_r / b.n_iter_, inertia=b.inertia_),
            dict(impl=f"dask-ml KMeans (same init; {it_dml} iterations, timed once)", t=t_m,
                 ratio=(t_m / it_dml) / (t_l / a.n_iter_),
                 same=f"max |dC| {np.abs(a_short.cluster_centers_ - c.cluster_centers_).max():.1e}",
                 it=it_m, per=t_m / it_dml, inertia=None)]


def _strength_name():
    """The in-memory LogisticRegression's regularisation parameter (the notes' lambda)."""
    from smml.linear import LogisticRegression
    return next(p for p in ("alpha", "lam") if p in LogisticRegression().get_params())


def _logistic_data(client, m, d, chunk, seed):
    """X (m x d standard normal) and labels y in {0, 1} of a logistic model, generated block by
    block on the workers (dask's random generator, seeded) and persisted there."""
    import dask.array as da

    X = da.random.default_rng(seed).standard_normal((m, d), chunks=(chunk, d))
    beta = np.random.default_rng(seed + 1).normal(size=d) * (2.0 / np.sqrt(d))
    noise = da.random.default_rng(seed + 2).logistic(size=m, chunks=chunk)
    y = ((X @ beta + noise) > 0).astype(np.float64)
    X, y = client.persist([X, y])
    _wait(X, y)
    return X, y


def _objective(X, y, w, b, lam):
    """smml's objective (1/m) sum ln(1 + e^{-y_t (w.x_t + b)}) + lam/2 ||w||^2 on the dask data."""
    import dask.array as da

    z = (X @ w + b) * (2.0 * y - 1.0)
    return float(da.logaddexp(0.0, -z).mean().compute()) + 0.5 * lam * float(w @ w)


def bench_logistic_vs_daskml(client, m, d, chunk, repeat):
    """smml.dask.LogisticRegression against dask-ml's (dask-glm L-BFGS, the same objective:
    no intercept, dask-ml's C = 1 / (lam m), its tolerance on the summed gradient m times
    smml's on the mean), both on X, y persisted on the workers."""
    from dask_ml.linear_model import LogisticRegression as DaskMLLogistic

    import smml.dask as sd
    from smml.linear import LogisticRegression

    t0 = time.perf_counter()
    X, y = _logistic_data(client, m, d, chunk, seed=0)
    print(f"# logistic {m} x {d}: data generated on the workers in {-(-m // chunk)} chunks of {chunk} rows "
          f"and persisted there in {time.perf_counter() - t0:.2f} s")
    name = _strength_name()
    lam = float(LogisticRegression().get_params()[name])
    tol = LogisticRegression().tol
    ours = lambda: sd.LogisticRegression(fit_intercept=False).fit(X, y)  # noqa: E731
    theirs = lambda: DaskMLLogistic(penalty="l2", C=1.0 / (lam * m), fit_intercept=False,  # noqa: E731
                                    solver="lbfgs", max_iter=1000, tol=tol * m).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (t_s, t_m), (a, c) = interleaved_best([ours, theirs], repeat)
    f_s = _objective(X, y, a.coef_[0], 0.0, lam)
    f_m = _objective(X, y, np.asarray(c.coef_), 0.0, lam)
    return [dict(impl=f"smml.dask.LogisticRegression (L-BFGS, {name}={lam:g})", t=t_s, ratio=1.0,
                 obj=f_s, it=a.n_iter_, dw="-"),
            dict(impl=f"dask-ml LogisticRegression(solver='lbfgs', C=1/({name} m))", t=t_m, ratio=t_m / t_s,
                 obj=f_m, it=None, dw=f"{np.abs(a.coef_[0] - np.asarray(c.coef_)).max():.1e}")]


def bench_logistic_in_memory(client, m, d, chunk, repeat):
    """smml.dask.LogisticRegression on X, y persisted on the 2 workers against the in-memory
    fit on N_THREADS threads of the same data (gathered here)."""
    import smml.dask as sd
    from smml.linear import LogisticRegression

    X, y = _logistic_data(client, m, d, chunk, seed=10)
    Xl, yl = X.compute(), y.compute()
    mem = lambda: LogisticRegression(n_jobs=N_THREADS).fit(Xl, yl)  # noqa: E731
    dist = lambda: sd.LogisticRegression().fit(X, y)  # noqa: E731
    (t_l, t_r), (a, b) = interleaved_best([mem, dist], repeat)
    same = np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)
    return [dict(impl=f"in-memory smml LogisticRegression ({N_THREADS} threads)", t=t_l, ratio=1.0, same="-",
                 it=a.n_iter_),
            dict(impl=f"smml.dask.LogisticRegression ({-(-m // chunk)} chunks of {chunk})", t=t_r,
                 ratio=t_r / t_l, same=str(same), it=b.n_iter_)]


def main(quick=False, repeat=2, only=None, malloc_trim=True, similar=False):
    q = quick
    warnings.filterwarnings("ignore", message="Sending large graph")
    rep = 1 if q else repeat
    print(environment_line(N_THREADS))
    print(f"# LocalCluster: 2 worker processes x 1 thread on 127.0.0.1; workers' MALLOC_TRIM_THRESHOLD_: "
          f"{'dask default (65536)' if malloc_trim else 'unset (--no-malloc-trim)'}; "
          f"load before: {os.getloadavg()}")
    cluster, client = _cluster(malloc_trim)
    try:
        cols = [("impl", "implementation", "{}"), ("t", "time (s)", "{:.2f}"),
                ("ratio", "/ in-memory", "{:.3f}"), ("same", "identical result", "{}")]
        if similar:     # shapes like the target's, each >= 10 s in memory
            cvs = [(40000, 16, 300, 8), (10000, 64, 450, 10)]
            knns = [(500_000, 32, 60_000, 6_000, 4), (1_000_000, 16, 60_000, 10_000, 8)]
            kms = [(500_000, 32, 64, 400, 4), (1_000_000, 16, 64, 400, 8), (2_000_000, 8, 32, 500, 4)]
        else:
            cvs = [(3000, 16, 10, 10) if q else (20000, 32, 300, 10)]
            knns = [(100_000, 16, 2000, 500, 4) if q else (1_000_000, 16, 60_000, 6_000, 4)]
            kms = [(100_000, 16, 16, 20, 4) if q else (1_000_000, 16, 64, 400, 4)]
        for m, d, trees, K in cvs:
            if only in (None, "cv"):
                print_table(f"{K}-fold CV of RandomForestClassifier({trees} trees), {m} x {d}",
                            bench_cv(client, m, d, trees, K, rep), cols)
        for m, d, nq, qb, sh in knns:
            if only in (None, "knn"):
                print_table(f"k-NN predict, k=5, train {m} x {d} ({sh} row blocks), {nq} queries (blocks of {qb})",
                            bench_knn(client, m, d, nq, sh, qb, rep),
                            cols + [("fit", "fit / shard (s)", "{:.2f}")])
        for m, d, k, it, ch in kms:
            if only in (None, "kmeans"):
                print_table(f"k-means, {m} x {d} standard normal ({ch} chunks), k={k}, at most {it} Lloyd "
                            f"iterations from the same centroids, tol=0", bench_kmeans(client, m, d, k, it, ch, rep),
                            cols + [("it", "iterations", "{}"), ("per", "s / iteration", "{:.3f}"),
                                    ("inertia", "inertia", "{:.9e}")])
        if only in (None, "logistic"):
            for m, d in ([(200_000, 50)] if q else [(5_000_000, 50)]):
                print_table(f"logistic regression, {m} x {d}, no intercept, vs dask-ml (the same objective)",
                            bench_logistic_vs_daskml(client, m, d, 32_768 if q else LOGISTIC_CHUNK, rep),
                            [("impl", "implementation", "{}"), ("t", "fit time (s)", "{:.2f}"),
                             ("ratio", "/ smml.dask", "{:.2f}"), ("obj", "objective (smml's)", "{:.12f}"),
                             ("it", "iterations", "{}"), ("dw", "max |w - w_smml|", "{}")])
            for m, d in ([(100_000, 50)] if q else [(1_000_000, 50)]):
                print_table(f"logistic regression, {m} x {d}: distributed / in-memory",
                            bench_logistic_in_memory(client, m, d, 32_768 if q else LOGISTIC_CHUNK, rep),
                            cols + [("it", "iterations", "{}")])
    finally:
        client.close()
        cluster.close()
    print(f"\n# load after: {os.getloadavg()}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--only", choices=("cv", "knn", "kmeans", "logistic"), help="run one of the benchmarks")
    p.add_argument("--no-malloc-trim", action="store_true",
                   help="start the workers without dask's default MALLOC_TRIM_THRESHOLD_=65536")
    p.add_argument("--similar", action="store_true",
                   help="the CV, k-NN and k-means on other shapes like the target's (>= 10 s in memory each)")
    args = p.parse_args()
    sys.exit(main(args.quick, args.repeat, args.only, not args.no_malloc_trim, args.similar))
