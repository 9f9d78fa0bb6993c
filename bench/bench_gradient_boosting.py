"""Second-order gradient boosting (issue 9): smml vs xgboost (hist), LightGBM and scikit-learn's
HistGradientBoosting, on the same rounds / depth / learning rate / lambda, 2 threads.

Data: 100,000 x 32 float64 training rows and 50,000 test rows (``--quick``: 20,000 / 10,000),
X ~ N(0, I); a nonlinear score f(x) (sines, products, thresholds of 8 features) gives three
targets: binary (f + noise > 0, then 5% of the labels flipped), regression (f + noise) and 5 classes
(quantiles of f + noise).  100 rounds, depth 6, learning rate 0.3, lambda = 1, gamma = 0,
min_child_weight = 1, 256 bins (HGB: 255, its maximum).

Equal settings.  xgboost ``tree_method="hist", max_bin=256``; for the square loss xgboost's
loss is 1/2 (y - y')^2, so its ``reg_lambda`` and ``min_child_weight`` are halved to grow the same
trees as smml's (y - y')^2 (see smml.ensemble._gradient_boosting).  LightGBM: ``num_leaves=64``
(= 2^depth), ``max_depth=6``, ``min_child_samples=1``, ``min_child_weight=1``, ``max_bin=255``.
HGB: ``max_leaf_nodes=64, max_depth=6, min_samples_leaf=1, l2_regularization=1,
early_stopping=False``.  Fits are timed interleaved round by round (the machine changes speed
modes); predict on the 50,000 test rows and on 1 row.  The plain-Python reference runs one round
of depth 6 on 300 rows and is extrapolated (its exhaustive search costs ~ d n^2 per level, times
rounds x classes), labelled so.

Run: ``python bench/bench_gradient_boosting.py [--quick]`` (or through ``bench/run.py``); ``--similar``: binary and
5 classes on 200,000 x 32, 50,000 x 64 and 100,000 x 16 (20,000 test rows, 2 interleaved rounds).
"""
import sys
import time

import numpy as np

from _common import environment_line, per_call_time, print_table

N_THREADS = 2
ROUNDS, DEPTH, LR, LAMBDA = 100, 6, 0.3, 1.0


def make_data(m, m_test, d=32, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m + m_test, d))
    f = (np.sin(2.0 * X[:, 0]) + X[:, 1] * X[:, 2] + (X[:, 3] > 0.5) * X[:, 4]
         + 0.5 * np.abs(X[:, 5]) - 0.5 * X[:, 6] ** 2 + 0.3 * X[:, 7])
    noise = rng.normal(size=m + m_test) * 0.5
    yb = (f + noise > np.median(f)).astype(int)
    flip = rng.random(m + m_test) < 0.05
    yb[flip] = 1 - yb[flip]
    yr = f + noise
    ym = np.digitize(f + noise, np.quantile(f + noise, [0.2, 0.4, 0.6, 0.8]))
    split = lambda y: (y[:m], y[m:])   # noqa: E731
    return X[:m], X[m:], {"binary": split(yb), "regression": split(yr), "5 classes": split(ym)}


def _models(task):
    """name -> factory of an unfitted model with the shared settings."""
    from smml.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    reg = task == "regression"
    out = {}
    smml_cls = GradientBoostingRegressor if reg else GradientBoostingClassifier
    out["smml"] = lambda cls=smml_cls: cls(n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LR, reg_lambda=LAMBDA,
                                   n_jobs=N_THREADS, random_state=0)
    try:
        import xgboost as xgb

        half = 0.5 if reg else 1.0
        cls = xgb.XGBRegressor if reg else xgb.XGBClassifier
        out["xgboost hist"] = lambda cls=cls: cls(tree_method="hist", n_estimators=ROUNDS, max_depth=DEPTH, learning_rate=LR,
                                          reg_lambda=LAMBDA * half, min_child_weight=1.0 * half, gamma=0.0,
                                          max_bin=256, n_jobs=N_THREADS, random_state=0)
    except ImportError:
        pass
    try:
        import lightgbm as lgb

        cls = lgb.LGBMRegressor if reg else lgb.LGBMClassifier
        out["LightGBM"] = lambda cls=cls: cls(n_estimators=ROUNDS, max_depth=DEPTH, num_leaves=2 ** DEPTH, learning_rate=LR,
                                      reg_lambda=LAMBDA, min_child_samples=1, min_child_weight=1.0, max_bin=255,
                                      n_jobs=N_THREADS, verbose=-1, random_state=0)
    except ImportError:
        pass
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    cls = HistGradientBoostingRegressor if reg else HistGradientBoostingClassifier
    out["sklearn HGB"] = lambda cls=cls: cls(max_iter=ROUNDS, max_depth=DEPTH, max_leaf_nodes=2 ** DEPTH, learning_rate=LR,
                                     l2_regularization=LAMBDA, min_samples_leaf=1, early_stopping=False, max_bins=255,
                                     random_state=0)
    return out


def _quality(task, model, X, y):
    if task == "regression":
        p = model.predict(X)
        return dict(score=float(np.sqrt(np.mean((p - y) ** 2))), logloss=None)
    P = np.clip(model.predict_proba(X), 1e-15, 1.0)
    return dict(score=float(np.mean(model.classes_[np.argmax(P, axis=1)] == y)),
                logloss=float(-np.mean(np.log(P[np.arange(len(y)), np.searchsorted(model.classes_, y)]))))


def bench_task(task, X, Xt, y, yt, repeat):
    models = _models(task)
    fit_t = {k: np.inf for k in models}
    fitted = {}
    for _ in range(repeat):                       # interleaved, round by round
        for name, make in models.items():
            m = make()
            t0 = time.perf_counter()
            m.fit(X, y)
            fit_t[name] = min(fit_t[name], time.perf_counter() - t0)
            fitted[name] = m
    pred_t = {k: np.inf for k in models}
    one_t = {}
    for _ in range(repeat):
        for name, m in fitted.items():
            t0 = time.perf_counter()
            (m.predict if task == "regression" else m.predict_proba)(Xt)
            pred_t[name] = min(pred_t[name], time.perf_counter() - t0)
    row = Xt[:1].copy()
    for name, m in fitted.items():
        f = m.predict if task == "regression" else m.predict_proba
        one_t[name] = per_call_time(lambda f=f: f(row), n_calls=50)
    # the reference: one round of depth 6 on a subset, extrapolated
    from smml.reference import gradient_boosting as ref

    n_sub = 300
    rcls = ref.GradientBoostingRegressor if task == "regression" else ref.GradientBoostingClassifier
    t0 = time.perf_counter()
    rcls(n_estimators=1, max_depth=DEPTH, learning_rate=LR, reg_lambda=LAMBDA).fit(X[:n_sub], y[:n_sub])
    t_ref = (time.perf_counter() - t0) * ROUNDS * (X.shape[0] / n_sub) ** 2
    rows = []
    base = fit_t["smml"]
    for name, m in fitted.items():
        q = _quality(task, m, Xt, yt)
        rows.append(dict(impl=name, fit=fit_t[name], ratio=fit_t[name] / base, pred=pred_t[name] * 1e3,
                         one=one_t[name] * 1e6, **q))
    rows.append(dict(impl=f"reference (1 round on {n_sub} rows, extrapolated ~ rounds x n^2)", fit=t_ref,
                     ratio=t_ref / base))
    print_table(f"{task}: fit {X.shape[0]:,} x {X.shape[1]}, {ROUNDS} rounds, depth {DEPTH}, "
                f"predict {Xt.shape[0]:,} rows and 1 row, {N_THREADS} threads", rows,
                [("impl", "implementation", "{}"), ("fit", "fit s", "{:.3f}"), ("ratio", "fit / smml", "{:.2f}"),
                 ("score", "RMSE" if task == "regression" else "test acc", "{:.4f}"),
                 ("logloss", "test log loss", "{:.4f}"), ("pred", "predict ms", "{:.1f}"),
                 ("one", "1 row us", "{:.0f}")])


SIMILAR = [(200_000, 32), (50_000, 64), (100_000, 16)]   # rows x features like the target's


def main(quick=False, similar=False):
    from threadpoolctl import threadpool_limits

    m, mt = (20_000, 10_000) if quick else (100_000, 50_000)
    repeat = 2 if quick else 3
    print(environment_line(N_THREADS))
    with open("/proc/loadavg") as fh:
        print(f"# load average at start: {fh.read().strip()}")
    with threadpool_limits(N_THREADS):
        if similar:     # other shapes like the target's: binary and 5 classes, 2 interleaved rounds
            for m, d in SIMILAR:
                X, Xt, targets = make_data(m, 20_000, d=d)
                for task in ("binary", "5 classes"):
                    (y, yt) = targets[task]
                    bench_task(task, X, Xt, y, yt, 2)
        else:
            X, Xt, targets = make_data(m, mt)
            for task, ((y, yt)) in targets.items():
                bench_task(task, X, Xt, y, yt, repeat)
    with open("/proc/loadavg") as fh:
        print(f"# load average at end: {fh.read().strip()}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv, similar="--similar" in sys.argv)
