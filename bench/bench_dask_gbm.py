"""smml.dask gradient boosting against xgboost.dask and LightGBM's Dask estimator (issue 35).

A ``LocalCluster`` of 2 worker processes x 1 thread (OpenMP 1 thread per worker) on the
loopback interface. The data are generated on the workers, chunk by chunk (never on the
client): 28 standard normal features (the shape of HIGGS), a label from a fixed nonlinear
score plus logistic noise; the test set likewise (other seeds), gathered for the log-loss.
The training set is persisted on the workers before any fit is timed.

The three fit the same model class with equal depth, rounds, learning rate and bins:
``max_depth=6``, ``n_estimators=100``, ``learning_rate=0.3``, 256 bins (LightGBM:
``max_bin=255`` plus its missing-value bin, ``num_leaves=64`` so depth 6 binds), lambda = 1,
min_child_weight = 1 (LightGBM: ``min_child_weight=1`` and ``min_child_samples=1``, so only the
hessian bound acts, as in the others). Reported: the fit time (best of ``--repeat``, the calls interleaved),
the test log-loss and the ratio to the faster peer. The in-memory smml fit on the same rows
(gathered to this process, 2 OpenMP threads) gives the distributed / in-memory ratio, and the
distributed model is checked to equal it (predictions bit for bit).

    python bench/bench_dask_gbm.py [--quick] [--repeat 2] [--rows N] [--features D] [--rounds R]

``--quick``: 200,000 x 28 (a smoke test). Default 2,000,000 x 28. ``--rows`` and ``--features``
(at least 10) run the same work on another shape (the issue's "similar ones").
"""
import argparse
import time
import warnings

import numpy as np

from _common import environment_line, print_table

N_THREADS = 2
D = 28


def _chunk(seed, rows, d=D):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, d))
    s = (X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.5 * X[:, 3] ** 2 - X[:, 4] + 0.3 * X[:, 5:10].sum(axis=1)
         - 0.6)
    u = rng.random(rows)
    y = (s + np.log(u / (1 - u)) > 0).astype(np.float64)
    return np.column_stack([X, y])


def _make(n, chunk, seed0, d=D):
    import dask
    import dask.array as da

    blocks = []
    for i, a in enumerate(range(0, n, chunk)):
        rows = min(chunk, n - a)
        blocks.append(da.from_delayed(dask.delayed(_chunk)(seed0 + i, rows, d), shape=(rows, d + 1),
                                      dtype=np.float64))
    Z = da.concatenate(blocks)
    return Z[:, :d], Z[:, d]


def _xgb_local(m):
    """The fitted xgboost.dask model as an in-memory XGBClassifier (its booster)."""
    import xgboost as xgb

    loc = xgb.XGBClassifier()
    loc._Booster = m.get_booster()
    loc.n_classes_ = 2
    return loc


def _logloss(p, y):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--features", type=int, default=D)
    args = ap.parse_args()
    d = args.features
    if d < 10:
        ap.error("--features must be at least 10 (the label uses the first 10 columns)")
    n = args.rows or (200_000 if args.quick else 2_000_000)
    n_test = 200_000
    chunk = 250_000 if n >= 1_000_000 else 50_000
    depth, rounds, lr = 6, args.rounds, 0.3

    import distributed
    import lightgbm as lgb
    import xgboost as xgb
    import xgboost.dask  # noqa: F401

    import smml.dask as sd
    from smml.ensemble import GradientBoostingClassifier

    warnings.filterwarnings("ignore")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=50, env={"OMP_NUM_THREADS": "1"})
    client = distributed.Client(cluster)
    client.wait_for_workers(2, timeout=60)
    print(environment_line(N_THREADS))
    print(f"# xgboost {xgb.__version__}, lightgbm {lgb.__version__}, {n} x {d} train (chunks of {chunk}, "
          f"generated on 2 workers x 1 thread), {n_test} test; depth {depth}, {rounds} rounds, lr {lr}, 256 bins")
    Xd, yd = _make(n, chunk, 1000, d)
    Xd, yd = client.persist([Xd, yd])
    distributed.wait([Xd, yd])
    Xt, yt = _make(n_test, 50_000, 9_000_000, d)
    Xt, yt = Xt.compute(), yt.compute()

    def f_smml():
        return sd.GradientBoostingClassifier(n_estimators=rounds, max_depth=depth, learning_rate=lr, max_bins=256,
                                             reg_lambda=1.0, min_child_weight=1.0, random_state=0).fit(Xd, yd)

    def f_xgb():
        m = xgb.dask.DaskXGBClassifier(n_estimators=rounds, max_depth=depth, learning_rate=lr, max_bin=256,
                                       tree_method="hist", reg_lambda=1.0, min_child_weight=1.0, n_jobs=1)
        m.client = client
        return m.fit(Xd, yd)

    def f_lgb():
        m = lgb.DaskLGBMClassifier(n_estimators=rounds, max_depth=depth, num_leaves=2 ** depth, learning_rate=lr,
                                   max_bin=255, reg_lambda=1.0, min_child_weight=1.0, min_child_samples=1,
                                   n_jobs=1, verbose=-1, client=client)
        return m.fit(Xd, yd)

    fns = {"smml.dask": f_smml, "xgboost.dask": f_xgb, "lightgbm.dask": f_lgb}
    best = {k: np.inf for k in fns}
    models = {}
    for _ in range(args.repeat):
        for k, f in fns.items():
            t0 = time.perf_counter()
            models[k] = f()
            best[k] = min(best[k], time.perf_counter() - t0)
    probs = {"smml.dask": models["smml.dask"].predict_proba(Xt)[:, 1],
             "xgboost.dask": xgb.XGBClassifier().__class__.predict_proba(_xgb_local(models["xgboost.dask"]), Xt)[:, 1],
             "lightgbm.dask": models["lightgbm.dask"].to_local().predict_proba(Xt)[:, 1]}
    # in memory: the same rows on 2 OpenMP threads in this process
    X, y = Xd.compute(), yd.compute()
    t0 = time.perf_counter()
    mem = GradientBoostingClassifier(n_estimators=rounds, max_depth=depth, learning_rate=lr, max_bins=256,
                                     random_state=0, n_jobs=N_THREADS).fit(X, y)
    t_mem = time.perf_counter() - t0
    same = bool(np.array_equal(mem.predict_proba(Xt), models["smml.dask"].predict_proba(Xt)))
    peer = min(best["xgboost.dask"], best["lightgbm.dask"])
    rows = [dict(impl=k, t=best[k], ll=_logloss(probs[k], yt), vs=peer / best[k]) for k in fns]
    rows.append(dict(impl=f"smml in memory ({N_THREADS} threads)", t=t_mem,
                     ll=_logloss(mem.predict_proba(Xt)[:, 1], yt), vs=None))
    print_table(f"GBT fit on {n} x {d}, 2 workers x 1 thread", rows,
                [("impl", "implementation", "{}"), ("t", "fit (s)", "{:.2f}"), ("ll", "test log-loss", "{:.5f}"),
                 ("vs", "faster peer / this", "{:.2f}x")])
    print(f"\ndistributed / in-memory fit time: {best['smml.dask'] / t_mem:.2f}x; "
          f"distributed model == in-memory model: {same}")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
