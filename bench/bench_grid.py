"""A benchmark grid instead of a shape (issue 30, items 1 and 3): every family over a grid of
shapes, smml against each peer, 2 threads for everyone.

Per cell the table prints, for smml and every peer, the time, the test metric and the peak memory
of the fit (``s / metric / MB``), then "fastest peer / smml" (the fastest peer's time over smml's:
above 1 smml is faster) and whether the cell meets the family's target. A summary line per
family gives the worst and the median ratio, and the cells that miss the target.

Families and grids (``--quick`` runs the subset in brackets; every cell uses 2 threads):

- ``boosting``: rows {20,000; 100,000; 500,000} x features {8; 32; 128; 500} x tasks {binary,
  5 classes, regression} x depth {3; 6; 10} [20,000 rows: 32 features binary and regression at
  depth 6, 8 features 5 classes at depth 6 and binary at depth 3 and 10]; 100 rounds, learning
  rate 0.3, lambda 1, gamma 0, min_child_weight 1, 256 bins (LightGBM and HGB: 255); test
  20,000 rows [10,000].  Peers: LightGBM depth-wise (``max_depth=depth, num_leaves=2^depth``),
  LightGBM leaf-wise at the same number of leaves (``num_leaves=2^depth, max_depth=-1``),
  xgboost ``tree_method="hist"``, scikit-learn's HistGradientBoosting (``max_depth=depth,
  max_leaf_nodes=2^depth, min_samples_leaf=1, early_stopping=False``).  Equal settings: smml's
  square loss is (y - y')^2, the peers' 1/2 (y - y')^2, so for regression the peers' lambda and
  min_child_weight are halved (smml's ``reg_lambda`` is twice xgboost's for the same trees, see
  smml.ensemble._gradient_boosting); LightGBM ``min_child_samples=1``.  Metric: test accuracy /
  log-loss (classification), R^2 (regression).
- ``forest``: rows {20,000; 100,000; 500,000} x features {8; 32; 128; 500} x tasks {binary,
  5 classes, regression} [20,000 rows: binary with 8 and 32 features, regression with 8]; 50
  fully grown trees, bootstrap, ``max_features="sqrt"`` (classification) and 1/3 (regression,
  Breiman's rule) for all; peers scikit-learn-intelex (``sklearnex.ensemble``, its defaults, as
  bench_ensemble) and scikit-learn.  Same data and metrics as boosting.
- ``knn``: k = 5, 10,000 queries [2,000], training rows {100,000 (d 2..128); 1,000,000 (d <= 8)}
  [20,000] x d {2; 4; 8; 16; 32; 64; 128} [2; 8; 32] x data {gaussian, lattice (integer points
  in {0..L-1}^d, L = max(3, round(100000^(1/d) / 2)): tie-heavy, duplicates), clustered (100
  tight Gaussian clusters), heavy-tailed (Student t, 1.5 degrees of freedom)} [all four at d=8;
  gaussian at d=2 and 32]; float64; two labels from a noisy rule (clustered: cluster parity).  smml ``KNNClassifier(auto)``
  predict (search + vote) against intelex ``KNeighborsClassifier`` predict, faiss
  ``IndexFlatL2`` (float32, search only), pykdtree ``KDTree(leafsize=16)`` and scipy
  ``cKDTree(workers=2)`` queries (search only).  The time is the query (predict) time; builds
  are timed too (interleaved, best of 2) and printed for smml and the fastest peer.  A peer whose
  query would take over 2 s is timed on a subset of the queries and extrapolated (marked ``*``).
  Metric: accuracy of the prediction (the search-only peers: majority vote of their k
  neighbours).  "k' - k": how many more neighbours smml's k' rule took than k (ties with the
  k-th), mean and max over the first 2,000 queries.
- ``kmeans``: rows {100,000 (d 2..256); 1,000,000 (d <= 16)} [20,000] x features {2; 16; 64; 256}
  [2; 64] x k {8; 64; 256} [8; 64] x dtype {float64, float32} [float64; float32 at d = 64];
  clustered data (64 Gaussian clusters); exactly 20 Lloyd iterations (tol=0) from the same k
  random rows; peers scikit-learn (lloyd), intelex, faiss (float32 cells only,
  ``max_points_per_centroid`` large so it uses every row).  Metric: final J relative to smml's
  (J computed the same way for all).
- ``svm``: rows {5,000; 20,000; 50,000} [5,000] x features {4; 20; 100} [4; 20]; sphere target
  (bench_kernels), Gaussian kernel gamma = 1 / d (003's width d / 2), C = 1, tol 1e-3,
  cache 1024 MB; peers scikit-learn SVC and intelex SVC.  Metric: test accuracy on 10,000 rows.

Data (boosting, forest): ``d`` columns in a fixed shuffled order: max(4, d/4) informative
N(0, 1) columns, d/8 redundant ones (random linear combinations of the informative ones plus
noise), max(1, d/8) low-cardinality ones (integer codes with 2, 4, 3, 5 or 10 values; the first
enters the target, the second is the quantised second informative column) and the rest pure
noise.  The target is a nonlinear score of the informative columns (sines, products,
thresholds, |x|, x^2) plus the low-cardinality effect, variance about 1, with N(0, 0.5^2) noise:
binary = score > 0 with 5% of the labels flipped, 5 classes = fixed quantiles of the score,
regression = the score.  All data are generated in 50,000-row chunks, each from its own seeded
generator, so a fresh process rebuilds the same arrays without a large temporary.

Timing: per cell all libraries run in this one process, interleaved round by round in a changing
order (``_common.interleaved_best``), best of 3 rounds (2 when the slowest library is estimated
over 10 s, 1 over 30 s; ``--quick``: 2), more (up to 9, every library alike) while the cell's
rounds so far took under 1 s in all: a cell of a few milliseconds is otherwise decided by one
scheduler hiccup.  Skip rule (all families but k-NN): a cell is skipped
when its slowest library is estimated over 60 s (``--limit``): estimated from a probe fit
(boosting: 10 rounds on 20,000 and on up to 80,000 rows, best of 2, scaled by rounds, and by
rows as a + b rows; forests: 4 trees,
scaled by trees and rows^1.15; k-means: 3 iterations on at most 50,000 rows; SVM: at most 4,000
rows, scaled by rows^2), or skipped without a probe when a smaller cell of the same kind (rows,
features, depth, k no larger) was already over the limit; a cell estimated under a third of the
limit from the largest smaller measured cell of its kind (scaled linearly in rows, features,
depth, k; rows^1.15 for forests, rows^2 for SVM) needs no probe.
``--quick`` cells are all small and are not probed.

Memory (item 3, ``--no-memory`` turns it off): each (cell, library) fit runs once more in a
fresh process of its own (a ``multiprocessing`` forkserver child: the libraries are imported
once in the server, so a child costs no import time).  The child generates the cell's data
(seeded, chunked), resets the kernel's peak-RSS mark (``/proc/self/clear_refs``) and reads VmRSS,
fits (k-NN: builds and queries), and reports VmHWM - VmRSS before the fit: the peak memory the fit
added, the data excluded (without the reset it falls back to ru_maxrss minus the RSS before the
fit).  A k-NN peer timed on a subset of the queries is measured on that subset too.

Targets (issue 30), checked per cell and summarised:
- boosting: fastest of LightGBM (both growths) / xgboost / HGB over smml >= 1.0 in every cell
  (LightGBM leaf-wise counts as a peer: it is LightGBM at the same number of leaves),
  smml's test metric (accuracy, R^2) no more than 0.003 below that peer's; median >= 1.3.
- forest: intelex over smml >= 1.0 with smml's accuracy / R^2 no more than 0.003 below
  scikit-learn's; median >= 1.3.
- k-means: fastest peer over smml >= 1.5.
- k-NN: fastest of intelex / faiss / pykdtree / cKDTree over smml >= 1.0 (query time).
- SVM (issue 10's target, issue 30 names none): fastest of scikit-learn / intelex over smml
  >= 1.0 at test accuracy no more than 0.003 below the better peer's.

Run: ``python bench/bench_grid.py [--family boosting forest knn kmeans svm] [--quick]
[--no-memory] [--json FILE] [--limit SECONDS] [--rows N ...] [--features D ...]``, or ``python bench/run.py
[--quick] grid`` (every family); ``python bench/bench_grid.py --report FILE ...`` prints the
tables of saved runs (``--json``, written after every cell), one family's slices merged.  The
full grid takes hours (the 20,000-row boosting cells alone: about an hour): run it in
slices, a family and a row count at a time (``--family boosting --rows 100000 --json
b100k.json``), and print them together with ``--report``; ``--quick`` takes a few
minutes on a quiet machine.  Progress lines go to stderr, the tables to stdout.  On a busy
machine OpenMP's spin-waiting makes every OpenMP library slow and erratic (2 threads that spin
at barriers while other jobs hold the cores); ``OMP_WAIT_POLICY=passive`` in the environment
makes them all sleep instead (the header prints the setting).
"""
import argparse
import gc
import json
import math
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")        # before numpy and the libraries load
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from _common import best_time, environment_line, interleaved_best, print_table  # noqa: E402

N_THREADS = 2
LIMIT = 60.0            # seconds: skip a cell whose slowest library would take longer
METRIC_TOL = 0.003      # "equal metric": accuracy / R^2 at most this much lower
CHUNK = 50_000          # rows generated per seeded chunk
FAMILIES = ("boosting", "forest", "knn", "kmeans", "svm")


def _log(msg):
    print(msg, file=sys.stderr, flush=True)


def _load():
    try:
        with open("/proc/loadavg") as fh:
            return fh.read().split()[0]
    except OSError:
        return "?"


# ---- memory of one fit, in a process of its own -------------------------------------------------

def _status():
    """VmRSS and VmHWM of this process in bytes (Linux)."""
    out = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, val = line.split(":")
                    out[key] = int(val.split()[0]) * 1024
    except OSError:
        pass
    return out


def _reset_peak():
    """Reset the kernel's peak-RSS mark (VmHWM) to the current RSS; False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _memory_child(conn, family, cell, lib, extra):
    """In a fresh process: build the cell's data, fit ``lib`` once, send peak MB, time, metric."""
    import resource

    from threadpoolctl import threadpool_limits
    try:
        fam = FAMILY_CLASSES[family]()
        with threadpool_limits(N_THREADS):
            data = fam.data(cell)
            gc.collect()
            reset = _reset_peak()
            rss0 = _status().get("VmRSS", 0)
            t0 = time.perf_counter()
            out = fam.run_once(cell, data, lib, extra)
            t = time.perf_counter() - t0
            if reset:
                peak, how = _status().get("VmHWM", 0) - rss0, "VmHWM"
            else:
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss0
                how = "ru_maxrss"
            met = fam.metric(cell, data, lib, out)
        conn.send(dict(mem_mb=max(0.0, peak / 2 ** 20), mem_how=how, mem_t=t, mem_metric=met.get("metric")))
    except Exception as exc:            # reported in the table, the grid goes on
        conn.send(dict(mem_error=f"{type(exc).__name__}: {exc}"[:200]))
    finally:
        conn.close()


_CTX = None


def _context(families):
    """The forkserver context, its server preloading the libraries of ``families``."""
    global _CTX
    if _CTX is None:
        import multiprocessing as mp
        try:
            ctx = mp.get_context("forkserver")
            mods = ["__main__", __name__, "numpy", "threadpoolctl", "sklearn.base"]
            for f in families:
                mods += FAMILY_CLASSES[f].modules
            ctx.set_forkserver_preload(list(dict.fromkeys(mods)))
        except ValueError:                          # no forkserver on this platform
            ctx = mp.get_context("spawn")
        _CTX = ctx
    return _CTX


def _noop(conn):
    conn.send(dict(ok=True))
    conn.close()


def _start_server():
    """Start the forkserver (its imports) before any timing, so that it does not import while
    a cell is being timed."""
    parent, child = _CTX.Pipe(duplex=False)
    p = _CTX.Process(target=_noop, args=(child,))
    p.start()
    child.close()
    try:
        parent.recv()
    except EOFError:
        pass
    p.join()


def _measure_memory(family, cell, lib, extra, timeout):
    ctx = _CTX
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_memory_child, args=(child, family, cell, lib, extra))
    p.start()
    child.close()
    try:
        if parent.poll(timeout):
            res = parent.recv()
        else:
            res = dict(mem_error=f"timeout after {timeout:.0f} s")
    except EOFError:
        res = None
    if p.is_alive() and "mem_error" in (res or {}):
        p.kill()
    p.join()
    if res is None:
        res = dict(mem_error=f"child exited with code {p.exitcode}")
    return res


# ---- data -------------------------------------------------------------------------------------

def _chunked(n, seed, stream, width, make, dtype=np.float64):
    """An (n, width) array (width 0: (n,)) filled chunk by chunk, chunk c from
    default_rng([seed, stream, c]) by ``make(rng, rows) -> block``."""
    out = np.empty((n, width) if width else (n,), dtype=dtype)
    for c, s in enumerate(range(0, n, CHUNK)):
        rng = np.random.default_rng([seed, stream, c])
        out[s:s + CHUNK] = make(rng, min(CHUNK, n - s))
    return out


_Q5 = np.array([-0.8416212335729143, -0.2533471031357997, 0.2533471031357997, 0.8416212335729143])
_LOW_CARDS = (3, 5, 10)


def _tabular_layout(d):
    """Column plan of the tabular data with d features (fixed for d, seeded)."""
    n_inf = max(4, d // 4)
    n_red = d // 8
    n_low = max(1, d // 8)
    n_noise = d - n_inf - n_red - n_low
    if n_noise < 0:
        raise ValueError(f"too few features: {d}")
    rng = np.random.default_rng([7, d])
    W = rng.normal(size=(n_inf, n_red)) / math.sqrt(n_inf)
    perm = rng.permutation(d)
    return n_inf, n_red, n_low, n_noise, W, perm


def _tabular_block(rng, rows, d, layout):
    """(X block (rows, d), score + noise (rows,), flip mask (rows,))."""
    n_inf, n_red, n_low, n_noise, W, perm = layout
    Z = rng.normal(size=(rows, n_inf))
    R = Z @ W + 0.1 * rng.normal(size=(rows, n_red))
    L = np.empty((rows, n_low))
    L[:, 0] = rng.integers(0, 2, size=rows)                        # enters the target
    if n_low > 1:
        L[:, 1] = np.digitize(Z[:, 1], [-1.0, 0.0, 1.0])           # the quantised 2nd informative column
    for j in range(2, n_low):
        L[:, j] = rng.integers(0, _LOW_CARDS[j % 3], size=rows)    # low-cardinality noise
    N = rng.normal(size=(rows, n_noise))
    f = np.zeros(rows)
    for j in range(n_inf):
        z, z1, z0 = Z[:, j], Z[:, (j + 1) % n_inf], Z[:, j - 1]
        kind = j % 6
        f += (np.sin(2.0 * z) if kind == 0 else z * z1 if kind == 1 else (z > 0.5) * z0 if kind == 2
              else np.abs(z) - math.sqrt(2 / math.pi) if kind == 3 else -0.5 * (z * z - 1.0) if kind == 4
              else 0.6 * z)
    f /= math.sqrt(0.505 * n_inf)                                  # variance about 1
    f += 0.8 * (L[:, 0] - 0.5)
    s = f + 0.5 * rng.normal(size=rows)
    flip = rng.random(rows) < 0.05
    X = np.concatenate([Z, R, L, N], axis=1)[:, perm]
    return X, s, flip


def _tabular(n, d, seed):
    """X (n, d) float64 and the three targets {task: y}."""
    layout = _tabular_layout(d)
    X = np.empty((n, d))
    s = np.empty(n)
    flip = np.empty(n, dtype=bool)
    for c, a in enumerate(range(0, n, CHUNK)):
        rng = np.random.default_rng([seed, d, c])
        X[a:a + CHUNK], s[a:a + CHUNK], flip[a:a + CHUNK] = _tabular_block(rng, min(CHUNK, n - a), d, layout)
    yb = (s > 0).astype(np.int64)
    yb[flip] = 1 - yb[flip]
    sd = math.sqrt(1.0 + 0.16 + 0.25)
    return X, {"binary": yb, "5 classes": np.digitize(s, sd * _Q5).astype(np.int64), "regression": s}


def _metric_supervised(task, model, X, y):
    if task == "regression":
        p = np.asarray(model.predict(X), dtype=np.float64)
        return dict(metric=float(1.0 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2)), logloss=None)
    P = np.clip(np.asarray(model.predict_proba(X), dtype=np.float64), 1e-15, 1.0)
    classes = np.asarray(model.classes_)
    return dict(metric=float(np.mean(classes[np.argmax(P, axis=1)] == y)),
                logloss=float(-np.mean(np.log(P[np.arange(len(y)), np.searchsorted(classes, y)]))))


# ---- families ---------------------------------------------------------------------------------

class _Family:
    name = ""
    modules = ()
    dims = ()             # cell keys in which the cost grows (the skip rule's order)
    group = ()            # the other keys that identify a kind of cell
    exponents = {}        # cost ~ prod dim^exponent (the estimate from a smaller measured cell)
    target_text = ""
    columns_head = ()     # (key, header) describing the cell
    metric_text = ""

    def cells(self, quick):
        raise NotImplementedError

    def libs(self, cell):
        raise NotImplementedError

    def data(self, cell):
        raise NotImplementedError

    def run_once(self, cell, data, lib, extra):
        return self.maker(cell, lib)(data)

    def metric(self, cell, data, lib, out):
        raise NotImplementedError

    def probe(self, cell):
        """Estimated seconds of each library on the cell, from a small fit."""
        return None

    def warm_up(self):
        pass

    def fmt_metric(self, r):
        return "-" if r.get("metric") is None else f"{r['metric']:.4f}"

    def time_cell(self, cell, data, rounds):
        """{lib: {t, metric...}} with every library timed in this process, interleaved."""
        libs = self.libs(cell)
        makers = [self.maker(cell, lib) for lib in libs]
        times, outs = interleaved_best([lambda mk=mk: mk(data) for mk in makers], rounds)
        res = {}
        for lib, t, out in zip(libs, times, outs):
            res[lib] = dict(t=t, **self.metric(cell, data, lib, out))
        return res, {}

    def check(self, cell, res):
        """(ratio, fastest peer, met, reason)."""
        raise NotImplementedError


def _fastest(res, peers):
    have = [p for p in peers if p in res and res[p].get("t") is not None]
    if not have:
        return None, None
    best = min(have, key=lambda p: res[p]["t"])
    return best, res[best]["t"] / res["smml"]["t"]


class Boosting(_Family):
    name = "boosting"
    modules = ["smml.ensemble", "lightgbm", "xgboost", "sklearn.ensemble"]
    dims = ("rows", "features", "depth")
    group = ("task",)
    exponents = {"rows": 1.0, "features": 1.0, "depth": 1.0}
    ROUNDS, LR, LAMBDA = 100, 0.3, 1.0
    target_text = ("fastest of LightGBM / xgboost / HGB over smml >= 1.0 in every cell at equal or better "
                   f"test metric (accuracy, R^2; within {METRIC_TOL}); median >= 1.3")
    columns_head = (("rows", "rows"), ("features", "d"), ("task", "task"), ("depth", "depth"))
    metric_text = "fit s / test accuracy/log-loss (R^2 for regression) / peak MB"

    QUICK = ((32, "binary", 6), (32, "regression", 6), (8, "5 classes", 6), (8, "binary", 3), (8, "binary", 10))

    def cells(self, quick):
        if quick:
            return [dict(rows=20_000, features=d, task=t, depth=dp, test=10_000) for d, t, dp in self.QUICK]
        return [dict(rows=r, features=d, task=t, depth=dp, test=20_000)
                for r in (20_000, 100_000, 500_000) for d in (8, 32, 128, 500)
                for t in ("binary", "5 classes", "regression") for dp in (3, 6, 10)]

    def libs(self, cell):
        return ["smml", "LightGBM", "LightGBM leaf-wise", "xgboost hist", "sklearn HGB"]

    def data(self, cell):
        n, m = cell["rows"], cell["test"]
        X, ys = _tabular(n, cell["features"], seed=1)
        Xt, yts = _tabular(m, cell["features"], seed=2)
        return X, ys[cell["task"]], Xt, yts[cell["task"]]

    def maker(self, cell, lib, rounds=None):
        rounds = rounds or self.ROUNDS
        reg = cell["task"] == "regression"
        depth = cell["depth"]
        half = 0.5 if reg else 1.0          # peers' square loss is 1/2 (y - y')^2
        if lib == "smml":
            from smml.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
            cls = GradientBoostingRegressor if reg else GradientBoostingClassifier

            def make():
                return cls(n_estimators=rounds, max_depth=depth, learning_rate=self.LR, reg_lambda=self.LAMBDA,
                           max_bins=256, n_jobs=N_THREADS, random_state=0)
        elif lib.startswith("LightGBM"):
            import lightgbm as lgb
            cls = lgb.LGBMRegressor if reg else lgb.LGBMClassifier
            max_depth = -1 if lib.endswith("leaf-wise") else depth

            def make():
                return cls(n_estimators=rounds, max_depth=max_depth, num_leaves=2 ** depth, learning_rate=self.LR,
                           reg_lambda=self.LAMBDA * half, min_child_samples=1, min_child_weight=1.0 * half,
                           max_bin=255, n_jobs=N_THREADS, verbose=-1, random_state=0)
        elif lib == "xgboost hist":
            import xgboost as xgb
            cls = xgb.XGBRegressor if reg else xgb.XGBClassifier

            def make():
                return cls(tree_method="hist", n_estimators=rounds, max_depth=depth, learning_rate=self.LR,
                           reg_lambda=self.LAMBDA * half, min_child_weight=1.0 * half, gamma=0.0, max_bin=256,
                           n_jobs=N_THREADS, random_state=0)
        else:
            from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
            cls = HistGradientBoostingRegressor if reg else HistGradientBoostingClassifier

            def make():
                return cls(max_iter=rounds, max_depth=depth, max_leaf_nodes=2 ** depth, learning_rate=self.LR,
                           l2_regularization=self.LAMBDA * half, min_samples_leaf=1, early_stopping=False,
                           max_bins=255, random_state=0)
        return lambda data: make().fit(data[0], data[1])

    def metric(self, cell, data, lib, out):
        return _metric_supervised(cell["task"], out, data[2], data[3])

    def fmt_metric(self, r):
        if r.get("metric") is None:
            return "-"
        return f"{r['metric']:.4f}" + (f"/{r['logloss']:.3f}" if r.get("logloss") is not None else "")

    def probe(self, cell):
        """Each library's fit time estimated from 10 rounds at 20,000 rows and (larger cells) at
        up to 80,000 (best of 2 each), as a + b rows: a deep tree's per-node work does not grow
        with the rows (the 20,000-row time alone scaled by the rows overestimated the
        500,000-row depth-10 cells up to 13-fold, and skipped cells that take seconds)."""
        p_rounds = 10
        sizes = sorted({min(cell["rows"], 20_000), min(cell["rows"], 80_000)})
        datas = [(r, self.data(dict(cell, rows=r, test=10))) for r in sizes]
        est = {}
        for lib in self.libs(cell):
            ts = [best_time(lambda: self.maker(dict(cell, rows=r, test=10), lib, p_rounds)(data), repeat=2)[0]
                  for r, data in datas]
            slope = max(ts[-1] - ts[0], 0.0) / (sizes[-1] - sizes[0]) if len(ts) > 1 else ts[0] / sizes[0]
            est[lib] = (ts[-1] + slope * (cell["rows"] - sizes[-1])) * (self.ROUNDS / p_rounds)
        return est

    def warm_up(self):
        c = dict(rows=500, features=8, task="binary", depth=3, test=100)
        data = self.data(c)
        for lib in self.libs(c):
            self.maker(c, lib, 2)(data)

    def check(self, cell, res):
        peer, ratio = _fastest(res, [p for p in res if p != "smml"])
        why = []
        if ratio < 1.0:
            why.append(f"slower than {peer}")
        if res["smml"]["metric"] < res[peer]["metric"] - METRIC_TOL:
            why.append(f"metric {res['smml']['metric']:.4f} < {peer}'s {res[peer]['metric']:.4f}")
        return ratio, peer, not why, "; ".join(why)

    median_target = 1.3


class Forest(Boosting):
    name = "forest"
    modules = ["smml.ensemble", "sklearn.ensemble", "sklearnex.ensemble"]
    dims = ("rows", "features")
    group = ("task",)
    exponents = {"rows": 1.15, "features": 1.0}
    TREES = 50
    target_text = (f"intelex over smml >= 1.0 with smml's test accuracy / R^2 within {METRIC_TOL} of "
                   "scikit-learn's; median >= 1.3")
    columns_head = (("rows", "rows"), ("features", "d"), ("task", "task"))
    metric_text = "fit s / test accuracy/log-loss (R^2 for regression) / peak MB"

    def cells(self, quick):
        if quick:
            return [dict(rows=20_000, features=d, task=t, test=10_000)
                    for d, t in ((8, "binary"), (32, "binary"), (8, "regression"))]
        return [dict(rows=r, features=d, task=t, test=20_000) for r in (20_000, 100_000, 500_000)
                for d in (8, 32, 128, 500) for t in ("binary", "5 classes", "regression")]

    def libs(self, cell):
        return ["smml", "intelex", "sklearn"]

    def maker(self, cell, lib, trees=None):
        trees = trees or self.TREES
        reg = cell["task"] == "regression"
        mf = 1.0 / 3.0 if reg else "sqrt"
        if lib == "smml":
            from smml.ensemble import RandomForestClassifier, RandomForestRegressor
            cls = RandomForestRegressor if reg else RandomForestClassifier
        elif lib == "intelex":
            from sklearnex.ensemble import RandomForestClassifier, RandomForestRegressor
            cls = RandomForestRegressor if reg else RandomForestClassifier
        else:
            from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
            cls = RandomForestRegressor if reg else RandomForestClassifier
        return lambda data: cls(n_estimators=trees, max_features=mf, n_jobs=N_THREADS,
                                random_state=0).fit(data[0], data[1])

    def probe(self, cell):
        p_rows, p_trees = min(cell["rows"], 20_000), 4
        c = dict(cell, rows=p_rows, test=10)
        data = self.data(c)
        est = {}
        for lib in self.libs(cell):
            t, _ = best_time(lambda: self.maker(c, lib, p_trees)(data), repeat=1)
            est[lib] = t * (self.TREES / p_trees) * (cell["rows"] / p_rows) ** 1.15
        return est

    def warm_up(self):
        c = dict(rows=500, features=8, task="binary", test=100)
        data = self.data(c)
        for lib in self.libs(c):
            self.maker(c, lib, 2)(data)

    def check(self, cell, res):
        ratio = res["intelex"]["t"] / res["smml"]["t"]
        why = []
        if ratio < 1.0:
            why.append("slower than intelex")
        if res["smml"]["metric"] < res["sklearn"]["metric"] - METRIC_TOL:
            why.append(f"metric {res['smml']['metric']:.4f} < sklearn's {res['sklearn']['metric']:.4f}")
        return ratio, "intelex", not why, "; ".join(why)


# -- k-NN --

KNN_K = 5
KNN_BUDGET = 2.0         # seconds one timed query call of a library may take (else: a subset)
KNN_PROBE = 400


def _knn_points(kind, n, d, seed, stream):
    """(X (n, d), y (n,)) of a data kind, chunked and seeded."""
    if kind == "lattice":
        L = max(3, int(round((1e5 ** (1.0 / d)) / 2)))

        def make(rng, rows):
            return rng.integers(0, L, size=(rows, d)).astype(np.float64)
        X = _chunked(n, seed, stream, d, make)
        s = (X[:, :min(d, 4)] - (L - 1) / 2).sum(1) / max(1.0, L / 3.5)
    elif kind == "clustered":
        C = np.random.default_rng([11, d]).normal(scale=3.0, size=(100, d))

        def make(rng, rows):
            lab = rng.integers(0, 100, size=rows)
            return np.concatenate([C[lab] + 0.3 * rng.normal(size=(rows, d)), lab[:, None]], axis=1)
        A = _chunked(n, seed, stream, d + 1, make)
        X = np.ascontiguousarray(A[:, :d])
        s = np.where(A[:, d] % 2 == 1, 1.0, -1.0)
        del A
    elif kind == "heavy-tailed":
        X = _chunked(n, seed, stream, d, lambda rng, rows: rng.standard_t(1.5, size=(rows, d)))
        s = np.sign(X[:, :min(d, 4)]).sum(1) + 0.5
    else:
        X = _chunked(n, seed, stream, d, lambda rng, rows: rng.normal(size=(rows, d)))
        s = X[:, :min(d, 4)].sum(1)
    noise = _chunked(n, seed, stream + 100, 0, lambda rng, rows: rng.normal(scale=0.5, size=rows))
    return X, (s + noise > 0).astype(np.int64)


class KNN(_Family):
    name = "knn"
    modules = ["smml.neighbors", "sklearnex.neighbors", "faiss", "pykdtree.kdtree", "scipy.spatial"]
    dims = ("rows", "features")
    group = ("data",)
    peers = ["intelex", "faiss (f32)", "pykdtree", "cKDTree"]
    target_text = "fastest of intelex / faiss / pykdtree / cKDTree over smml >= 1.0 (query time)"
    columns_head = (("rows", "rows"), ("features", "d"), ("data", "data"))
    metric_text = "query s (* extrapolated from a subset) / test accuracy / peak MB (build + query)"
    median_target = None

    def cells(self, quick):
        if quick:
            return [dict(rows=20_000, features=d, data=k, queries=2_000)
                    for d, kinds in ((2, ("gaussian",)), (8, ("gaussian", "lattice", "clustered", "heavy-tailed")),
                                     (32, ("gaussian",)))
                    for k in kinds]
        out = []
        for m, dims in ((100_000, (2, 4, 8, 16, 32, 64, 128)), (1_000_000, (2, 4, 8))):
            for d in dims:
                for k in ("gaussian", "lattice", "clustered", "heavy-tailed"):
                    out.append(dict(rows=m, features=d, data=k, queries=10_000))
        return out

    def libs(self, cell):
        # pykdtree takes at most 127 dimensions ("Max 127 dimensions allowed"): not a peer above
        return ["smml"] + [p for p in self.peers if not (p == "pykdtree" and cell["features"] > 127)]

    def data(self, cell):
        X, y = _knn_points(cell["data"], cell["rows"], cell["features"], 1, 0)
        Q, yq = _knn_points(cell["data"], cell["queries"], cell["features"], 2, 0)
        return X, y, Q, yq

    def builder(self, lib, X, y):
        if lib == "smml":
            from smml.neighbors import KNNClassifier
            return lambda: KNNClassifier(n_neighbors=KNN_K, n_jobs=N_THREADS).fit(X, y)
        if lib == "intelex":
            from sklearnex.neighbors import KNeighborsClassifier
            return lambda: KNeighborsClassifier(KNN_K, algorithm="auto", n_jobs=N_THREADS).fit(X, y)
        if lib == "faiss (f32)":
            import faiss

            def build():
                faiss.omp_set_num_threads(N_THREADS)
                index = faiss.IndexFlatL2(X.shape[1])
                index.add(np.ascontiguousarray(X, dtype=np.float32))
                return index
            return build
        if lib == "pykdtree":
            from pykdtree.kdtree import KDTree
            return lambda: KDTree(X, leafsize=16)
        from scipy.spatial import cKDTree
        return lambda: cKDTree(X)

    @staticmethod
    def query(lib, model, Q):
        if lib in ("smml", "intelex"):
            return model.predict(Q)
        if lib == "faiss (f32)":
            return model.search(np.ascontiguousarray(Q, dtype=np.float32), KNN_K)[1]
        if lib == "pykdtree":
            return model.query(Q, KNN_K)[1]
        return model.query(Q, KNN_K, workers=N_THREADS)[1]

    def run_once(self, cell, data, lib, extra):
        X, y, Q, _ = data
        model = self.builder(lib, X, y)()
        return self.query(lib, model, Q[:extra.get("n", len(Q))])

    def metric(self, cell, data, lib, out):
        y, yq = data[1], data[3]
        out = np.asarray(out)
        if out.ndim == 2:                 # neighbour indices: majority vote (k odd, two labels)
            pred = (2 * y[out].sum(1) > out.shape[1]).astype(np.int64)
        else:
            pred = out
        return dict(metric=float(np.mean(pred == yq[:len(pred)])))

    def time_cell(self, cell, data, rounds):
        X, y, Q, yq = data
        libs = self.libs(cell)
        builds, models = interleaved_best([self.builder(lib, X, y) for lib in libs], min(2, rounds))
        nq = len(Q)
        sizes = []
        for lib, mdl in zip(libs, models):
            t, _ = best_time(lambda: self.query(lib, mdl, Q[:KNN_PROBE]), repeat=1)
            est = t * nq / KNN_PROBE
            sizes.append(nq if est <= KNN_BUDGET or lib == "smml" else max(KNN_PROBE, int(nq * KNN_BUDGET / est)))
        fns = [lambda lib=lib, mdl=mdl, n=n: self.query(lib, mdl, Q[:n]) for lib, mdl, n in zip(libs, models, sizes)]
        times, outs = interleaved_best(fns, rounds)
        res = {}
        for lib, tb, t, out, n in zip(libs, builds, times, outs, sizes):
            res[lib] = dict(t=t * nq / n, build=tb, n=n, extrapolated=n != nq, **self.metric(cell, data, lib, out))
        # smml's k' rule: how many neighbours it took beyond k (ties with the k-th)
        extra = {}
        try:
            est = models[0]
            Q0, Qm = est._queries(Q[:2000])
            counts = np.concatenate([taken.counts for _, taken in est._search(Q0, KNN_K, est._n_threads(), Qm=Qm)])
            extra = dict(kprime_mean=float(np.mean(counts - KNN_K)), kprime_max=int(np.max(counts - KNN_K)),
                         kprime_frac=float(np.mean(counts > KNN_K)))
        except Exception as exc:            # private API: report, do not fail
            extra = dict(kprime_error=str(exc)[:100])
        fastest, _ = _fastest(res, self.peers)                         # by query time
        extra.update(smml_build=res["smml"]["build"], peer_build=res[fastest]["build"], peer_build_lib=fastest)
        return res, extra

    def mem_extra(self, lib, r):
        return dict(n=r["n"])

    def warm_up(self):
        c = dict(rows=2000, features=4, data="gaussian", queries=200)
        self.time_cell(c, self.data(c), 1)

    def check(self, cell, res):
        peer, ratio = _fastest(res, self.peers)
        return ratio, peer, ratio >= 1.0, "" if ratio >= 1.0 else f"slower than {peer}"

    def fmt_time(self, r):
        return f"{r['t']:.3f}{'*' if r.get('extrapolated') else ''}"


# -- k-means --

KM_ITER = 20


def _kmeans_data(n, d, dtype, seed=1):
    C = np.random.default_rng([13, d]).normal(scale=2.0, size=(64, d))

    def make(rng, rows):
        return C[rng.integers(0, 64, size=rows)] + rng.normal(size=(rows, d))
    return _chunked(n, seed, 0, d, make, dtype=dtype)


def _inertia(X, C, chunk=16384):
    """sum_i min_j ||x_i - c_j||^2 in float64 (gemm form, the same for all)."""
    C = np.asarray(C, dtype=np.float64)
    cn = (C * C).sum(1)
    J = 0.0
    for s in range(0, len(X), chunk):
        B = np.asarray(X[s:s + chunk], dtype=np.float64)
        D = (B * B).sum(1)[:, None] - 2.0 * B @ C.T + cn[None, :]
        J += float(np.maximum(D.min(1), 0.0).sum())
    return J


class KMeansFamily(_Family):
    name = "kmeans"
    modules = ["smml.cluster", "sklearn.cluster", "sklearnex.cluster", "faiss"]
    dims = ("rows", "features", "k")
    group = ("dtype",)
    exponents = {"rows": 1.0, "features": 1.0, "k": 1.0}
    target_text = "fastest peer over smml >= 1.5 in every cell"
    columns_head = (("rows", "rows"), ("features", "d"), ("k", "k"), ("dtype", "dtype"))
    metric_text = f"fit s ({KM_ITER} Lloyd iterations) / final J relative to smml's / peak MB"
    median_target = None

    def cells(self, quick):
        if quick:
            return [dict(rows=20_000, features=d, k=k, dtype=t) for d, dts in ((2, ("float64",)),
                                                                                (64, ("float64", "float32")))
                    for k in (8, 64) for t in dts]
        out = []
        for n, feats in ((100_000, (2, 16, 64, 256)), (1_000_000, (2, 16))):
            for d in feats:
                for k in (8, 64, 256):
                    for t in ("float64", "float32"):
                        out.append(dict(rows=n, features=d, k=k, dtype=t))
        return out

    def libs(self, cell):
        return ["smml", "sklearn", "intelex"] + (["faiss"] if cell["dtype"] == "float32" else [])

    def data(self, cell):
        X = _kmeans_data(cell["rows"], cell["features"], np.dtype(cell["dtype"]))
        rng = np.random.default_rng([17, cell["rows"], cell["features"], cell["k"]])
        C0 = X[rng.choice(len(X), cell["k"], replace=False)].copy()
        return X, C0

    def maker(self, cell, lib, iters=None):
        iters = iters or KM_ITER
        if lib == "smml":
            from smml.cluster import KMeans
            return lambda data: KMeans(len(data[1]), init=data[1], max_iter=iters, tol=0,
                                       n_jobs=N_THREADS).fit(data[0]).cluster_centers_
        if lib == "sklearn":
            from sklearn.cluster import KMeans
            return lambda data: KMeans(len(data[1]), init=data[1], n_init=1, max_iter=iters, tol=0,
                                       algorithm="lloyd").fit(data[0]).cluster_centers_
        if lib == "intelex":
            from sklearnex.cluster import KMeans
            return lambda data: KMeans(len(data[1]), init=data[1], n_init=1, max_iter=iters,
                                       tol=0).fit(data[0]).cluster_centers_
        import faiss

        def run(data):
            X, C0 = data
            faiss.omp_set_num_threads(N_THREADS)
            km = faiss.Kmeans(X.shape[1], len(C0), niter=iters, max_points_per_centroid=len(X) + 1, seed=0,
                              verbose=False)
            km.train(X, init_centroids=C0)
            return km.centroids
        return run

    def metric(self, cell, data, lib, out):
        return dict(J=_inertia(data[0], out))

    def time_cell(self, cell, data, rounds):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res, extra = super().time_cell(cell, data, rounds)
        J0 = res["smml"]["J"]
        for r in res.values():
            r["metric"] = (r["J"] - J0) / J0
        res["smml"]["ref"] = True
        return res, extra

    def fmt_metric(self, r):
        return "J ref" if r.get("ref") else f"{r['metric']:+.0e}"

    def probe(self, cell):
        p_rows, p_iter = min(cell["rows"], 50_000), 3
        data = self.data(dict(cell, rows=p_rows))
        est = {}
        for lib in self.libs(cell):
            t, _ = best_time(lambda: self.maker(cell, lib, p_iter)(data), repeat=1)
            est[lib] = t * (KM_ITER / p_iter) * (cell["rows"] / p_rows)
        return est

    def warm_up(self):
        import warnings
        c = dict(rows=2000, features=4, k=8, dtype="float32")
        data = self.data(c)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for lib in self.libs(c):
                self.maker(c, lib, 2)(data)

    def check(self, cell, res):
        peer, ratio = _fastest(res, [p for p in res if p != "smml"])
        return ratio, peer, ratio >= 1.5, "" if ratio >= 1.5 else f"under 1.5x {peer}"


# -- kernel SVM --

def _sphere(n, d, seed):
    X = _chunked(n, seed, 0, d, lambda rng, rows: rng.standard_normal((rows, d)))
    return X, np.where((X ** 2).sum(1) > d, 1, -1)


class SVM(_Family):
    name = "svm"
    modules = ["smml.kernels", "sklearn.svm", "sklearnex.svm"]
    dims = ("rows", "features")
    group = ()
    exponents = {"rows": 2.0, "features": 1.0}
    target_text = (f"fastest of scikit-learn / intelex over smml >= 1.0 at test accuracy within {METRIC_TOL} "
                   "of the better peer's (issue 10's target)")
    columns_head = (("rows", "rows"), ("features", "d"))
    metric_text = "fit s / test accuracy / peak MB"
    median_target = None

    def cells(self, quick):
        rows, feats = ((5_000,), (4, 20)) if quick else ((5_000, 20_000, 50_000), (4, 20, 100))
        return [dict(rows=r, features=d, test=10_000) for r in rows for d in feats]

    def libs(self, cell):
        return ["smml", "sklearn", "intelex"]

    def data(self, cell):
        X, y = _sphere(cell["rows"], cell["features"], 1)
        Xt, yt = _sphere(cell["test"], cell["features"], 2)
        return X, y, Xt, yt

    def maker(self, cell, lib):
        import warnings
        d = cell["features"]
        if lib == "smml":
            from smml.kernels import KernelSVC
            make = lambda: KernelSVC(C=1.0, gamma=1.0 / d, cache_size=1024, n_jobs=N_THREADS)  # noqa: E731
        elif lib == "sklearn":
            from sklearn.svm import SVC
            make = lambda: SVC(C=1.0, gamma=1.0 / d, cache_size=1024)  # noqa: E731
        else:
            from sklearnex.svm import SVC
            make = lambda: SVC(C=1.0, gamma=1.0 / d, cache_size=1024)  # noqa: E731

        def fit(data):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return make().fit(data[0], data[1])
        return fit

    def metric(self, cell, data, lib, out):
        return dict(metric=float(np.mean(out.predict(data[2]) == data[3])), n_sv=int(len(out.support_vectors_)))

    def probe(self, cell):
        p_rows = min(cell["rows"], 4_000)
        c = dict(cell, rows=p_rows, test=10)
        data = self.data(c)
        est = {}
        for lib in self.libs(cell):
            t, _ = best_time(lambda: self.maker(c, lib)(data), repeat=1)
            est[lib] = t * (cell["rows"] / p_rows) ** 2
        return est

    def warm_up(self):
        c = dict(rows=500, features=4, test=100)
        data = self.data(c)
        for lib in self.libs(c):
            self.maker(c, lib)(data)

    def check(self, cell, res):
        peer, ratio = _fastest(res, ["sklearn", "intelex"])
        best = max(res["sklearn"]["metric"], res["intelex"]["metric"])
        why = []
        if ratio < 1.0:
            why.append(f"slower than {peer}")
        if res["smml"]["metric"] < best - METRIC_TOL:
            why.append(f"accuracy {res['smml']['metric']:.4f} < {best:.4f}")
        return ratio, peer, not why, "; ".join(why)


FAMILY_CLASSES = {"boosting": Boosting, "forest": Forest, "knn": KNN, "kmeans": KMeansFamily, "svm": SVM}


# ---- the grid ---------------------------------------------------------------------------------

def _dominated(fam, cell, other):
    """other is of the same kind as cell and no larger in every cost dimension."""
    return (all(other[g] == cell[g] for g in fam.group)
            and all(other[k] <= cell[k] for k in fam.dims))


def _estimate_from(fam, cell, done):
    """Slowest-library time of ``cell`` scaled from the largest smaller measured cell of the same
    kind (cost ~ prod dim^exponent), or None."""
    def size(c):
        return math.prod(c[k] ** e for k, e in fam.exponents.items())
    near = [c for c in done if c["status"] == "measured" and _dominated(fam, cell, c["cell"])]
    if not near:
        return None
    c = max(near, key=lambda c: size(c["cell"]))
    return c["slowest"] * size(cell) / size(c["cell"])


def _save(path, results, t0):
    """Every cell so far into the JSON file ``path`` (written after each cell, replaced
    atomically: a run stopped part way keeps what it measured; ``--report`` prints it)."""
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(dict(environment=environment_line(N_THREADS), argv=sys.argv[1:],
                       seconds=time.perf_counter() - t0, cells=results), fh, indent=1, default=float)
    os.replace(tmp, path)


def run_family(name, quick, memory, limit, results, rows=None, save=lambda: None, features=None, depth=None,
               only=None):
    fam = FAMILY_CLASSES[name]()
    cells = fam.cells(quick)
    for key, keep in (("rows", rows), ("features", features), ("depth", depth)):     # a slice of the grid
        if keep:
            cells = [c for c in cells if c.get(key) in keep]
    if only is not None:                     # --skipped-in: the cells an earlier run skipped
        cells = [c for c in cells if c in only]
    cells.sort(key=lambda c: tuple(c[k] for k in fam.dims))      # smaller cells first (skip rule)
    _log(f"# {name}: {len(cells)} cells; warming up; load {_load()}")
    from threadpoolctl import threadpool_limits
    import warnings
    warnings.filterwarnings("ignore", message=".*does not have valid feature names.*")
    with threadpool_limits(N_THREADS):
        fam.warm_up()
    done = []
    t_family = time.perf_counter()
    for cell in cells:
        t_cell = time.perf_counter()
        entry = dict(family=name, cell=cell, status="measured")
        est = None
        if name != "knn":
            if any(c["status"] == "skipped" and _dominated(fam, cell, c["cell"]) for c in done):
                entry.update(status="skipped", reason="a smaller cell of the same kind was over the limit")
            elif not quick:
                prev = _estimate_from(fam, cell, done)
                if prev is not None and prev < limit / 3:
                    est = prev
                else:
                    with threadpool_limits(N_THREADS):
                        probe = fam.probe(cell)
                    est = max(probe.values())
                    entry["probe"] = probe
                    if est > limit:
                        slow = max(probe, key=probe.get)
                        entry.update(status="skipped", reason=f"estimated {est:.0f} s ({slow})")
                entry["estimate"] = est
        if entry["status"] == "skipped":
            _log(f"  skip {cell}: {entry['reason']}")
            done.append(entry)
            results.append(entry)
            save()
            continue
        rounds = 2 if quick else (3 if est is None or est <= 10 else 2 if est <= 30 else 1)
        try:
            with threadpool_limits(N_THREADS):
                data = fam.data(cell)
                res, extra = fam.time_cell(cell, data, rounds)
            del data
            gc.collect()
        except Exception as exc:
            entry.update(status="error", reason=f"{type(exc).__name__}: {exc}"[:300])
            _log(f"  ERROR {cell}: {entry['reason']}")
            done.append(entry)
            results.append(entry)
            save()
            continue
        entry.update(rounds=rounds, libs=res, extra=extra, load=_load())
        entry["slowest"] = max(r["t"] for r in res.values())
        if memory:
            for lib, r in res.items():
                x = fam.mem_extra(lib, r) if hasattr(fam, "mem_extra") else {}
                r.update(_measure_memory(name, cell, lib, x, timeout=max(300.0, 20 * r["t"] + 60)))
        ratio, peer, met, why = fam.check(cell, res)
        entry.update(ratio=ratio, peer=peer, met=met, why=why, seconds=time.perf_counter() - t_cell)
        _log(f"  {cell}: {ratio:.2f}x {peer} {'met' if met else 'MISSED ' + why}; "
             f"{entry['seconds']:.0f} s, load {_load()}")
        done.append(entry)
        results.append(entry)
        save()
    wall = time.perf_counter() - t_family
    _print_family(fam, done, wall, memory)
    return done


def _lib_cell(fam, r, memory):
    if r is None:
        return "-"
    t = fam.fmt_time(r) if hasattr(fam, "fmt_time") else f"{r['t']:.3f}"
    s = f"{t} / {fam.fmt_metric(r)}"
    if memory:
        s += " / " + (f"{r['mem_mb']:.0f}" if r.get("mem_mb") is not None else "err")
    return s


def _cell_label(c):
    return ", ".join(f"{v:,}" if isinstance(v, int) else str(v) for k, v in c.items()
                     if k not in ("test", "queries"))


def _print_family(fam, done, wall, memory):
    libs = []
    for e in done:
        for lib in e.get("libs", {}):
            if lib not in libs:
                libs.append(lib)
    order = list(fam.group) + [k for k in (h for h, _ in fam.columns_head) if k not in fam.group]
    done = sorted(done, key=lambda e: tuple(str(e["cell"][k]) if isinstance(e["cell"][k], str) else
                                            f"{e['cell'][k]:012d}" for k in order))
    rows = []
    for e in done:
        row = {k: e["cell"][k] for k, _ in fam.columns_head}
        if e["status"] != "measured":
            row["ratio"] = None
            row["target"] = f"{e['status']}: {e.get('reason', '')}"
            rows.append(row)
            continue
        for lib in libs:
            row[lib] = _lib_cell(fam, e["libs"].get(lib), memory)
        row["ratio"] = e["ratio"]
        row["peer"] = e["peer"]
        row["target"] = "met" if e["met"] else "MISSED: " + e["why"]
        x = e.get("extra", {})
        if fam.name == "knn":
            row["build"] = f"{x['smml_build']:.3f} / {x['peer_build']:.3f}"
            row["kprime"] = (f"{x['kprime_mean']:.2f} / {x['kprime_max']}" if "kprime_mean" in x else "?")
        rows.append(row)
    cols = [(k, h, "{}") for k, h in fam.columns_head]
    cols += [(lib, lib, "{}") for lib in libs]
    if fam.name == "knn":
        cols += [("build", "build s: smml / fastest peer's", "{}"), ("kprime", "k' - k mean / max", "{}")]
    cols += [("ratio", "fastest peer / smml", "{:.2f}x"), ("peer", "fastest peer", "{}"), ("target", "target", "{}")]
    first = next((e for e in done if e["status"] == "measured"), None)
    extra = ""
    if fam.name == "knn" and first:
        extra = f", {first['cell']['queries']:,} queries, k={KNN_K}"
    elif fam.name in ("boosting", "forest", "svm") and first:
        extra = f", test {first['cell']['test']:,} rows"
    n_rounds = sorted({e["rounds"] for e in done if e.get("rounds")})
    print_table(f"{fam.name}: {fam.metric_text}{extra}; {N_THREADS} threads; best of "
                f"{'/'.join(map(str, n_rounds)) or '-'} interleaved rounds (up to 9 while a cell's "
                "rounds take under 1 s)"
                + ("" if memory else "; memory off"), rows, cols)
    measured = [e for e in done if e["status"] == "measured"]
    ratios = [e["ratio"] for e in measured]
    if ratios:
        worst = min(measured, key=lambda e: e["ratio"])
        med = statistics.median(ratios)
        missed = [e for e in measured if not e["met"]]
        med_t = getattr(fam, "median_target", None)
        line = (f"\n**{fam.name}** ({len(measured)} cells measured, "
                f"{sum(e['status'] == 'skipped' for e in done)} skipped, {wall:.0f} s): fastest peer / smml "
                f"worst {worst['ratio']:.2f}x ({_cell_label(worst['cell'])}, {worst['peer']}), "
                f"median {med:.2f}x. Target: {fam.target_text}. ")
        line += f"{len(measured) - len(missed)} of {len(measured)} cells meet the per-cell target"
        if med_t:
            line += f"; median {'meets' if med >= med_t else 'MISSES'} {med_t}x"
        line += "."
        print(line)
        for e in missed:
            print(f"- missed: {_cell_label(e['cell'])}: {e['ratio']:.2f}x, {e['why']}")
        _memory_line(fam, measured)
        if fam.name == "knn":
            tie = [e for e in measured if "kprime_mean" in e.get("extra", {}) and e["cell"]["data"] == "lattice"]
            for e in tie:
                x = e["extra"]
                print(f"- tie-heavy (lattice) {_cell_label(e['cell'])}: smml's k' rule took {x['kprime_mean']:.2f} "
                      f"more neighbours than k={KNN_K} on average (max {x['kprime_max']}, "
                      f"{x['kprime_frac']:.0%} of the queries)")
    else:
        print(f"\n**{fam.name}**: no cell measured.")
    errs = [e for e in done if e["status"] == "error"] + \
        [e for e in measured for r in e["libs"].values() if r.get("mem_error")]
    for e in errs:
        print(f"- error: {_cell_label(e['cell'])}: {e.get('reason') or [r.get('mem_error') for r in e['libs'].values()]}")
    sys.stdout.flush()


def main(quick=None, argv=None):
    """Command line entry; ``main(quick=...)`` is bench/run.py's call (every family, with or
    without --quick)."""
    if quick is not None and argv is None:
        argv = ["--quick"] if quick else []
    p = argparse.ArgumentParser(description="smml benchmark grid (issue 30); see the module docstring")
    p.add_argument("--family", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    p.add_argument("--quick", action="store_true", help="a subset of the grid, a few minutes")
    p.add_argument("--no-memory", action="store_true", help="no per-fit peak memory (no child processes)")
    p.add_argument("--json", metavar="FILE", help="write every cell (all fields) to FILE")
    p.add_argument("--limit", type=float, default=LIMIT, help="skip cells whose slowest library is estimated "
                   "over this many seconds (default 60)")
    p.add_argument("--rows", type=int, nargs="+", metavar="N",
                   help="only the cells with these training rows (the full grid in slices, one run each)")
    p.add_argument("--features", type=int, nargs="+", metavar="D",
                   help="only the cells with these numbers of features (with --rows: a smaller slice)")
    p.add_argument("--depth", type=int, nargs="+", metavar="D",
                   help="only the cells with these depths (boosting; with --rows, --features: a smaller slice)")
    p.add_argument("--skipped-in", nargs="+", metavar="FILE",
                   help="only the cells these --json files skipped (after a change to the estimate)")
    p.add_argument("--report", nargs="+", metavar="FILE",
                   help="measure nothing: print the tables and summaries of the cells saved in these --json "
                        "files (one family's slices from several runs are merged; a later file's cell replaces "
                        "an earlier one's)")
    args = p.parse_args(argv)
    if args.report:
        return report(args.report)
    memory = not args.no_memory
    t0 = time.perf_counter()
    print(environment_line(N_THREADS))
    print(f"# bench_grid.py {' '.join(sys.argv[1:])}; load average at start {_load()}; "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
    if memory:
        t1 = time.perf_counter()
        _context(args.family)
        _start_server()
        print(f"# memory: each fit once more in a fresh forkserver child; server start {time.perf_counter() - t1:.0f} s")
    only = None
    if args.skipped_in:
        only = [c["cell"] for path in args.skipped_in for c in json.load(open(path))["cells"]
                if c["status"] == "skipped"]
    results = []
    for name in args.family:
        run_family(name, args.quick, memory, args.limit, results, set(args.rows or ()),
                   lambda: _save(args.json, results, t0), set(args.features or ()), set(args.depth or ()), only)
    wall = time.perf_counter() - t0
    print(f"\n# total {wall:.0f} s; load average at end {_load()}")
    _save(args.json, results, t0)
    return 0


def _memory_line(fam, measured):
    """Issue 30's memory target over the measured cells: smml's peak (data excluded) at most the
    leanest peer's (forests: intelex's) in how many cells, the median and the worst
    smml / leanest ratio."""
    rows = []
    for e in measured:
        libs = e["libs"]
        mine = libs.get("smml", {}).get("mem_mb")
        peers = {n: r.get("mem_mb") for n, r in libs.items() if n != "smml" and r.get("mem_mb") is not None}
        if fam.name == "forest":
            peers = {n: m for n, m in peers.items() if n == "intelex"}
        if mine is None or not peers:
            continue
        lean = min(peers, key=peers.get)
        rows.append((mine / max(peers[lean], 1.0), mine, peers[lean], lean, e["cell"]))
    if not rows:
        return
    rows.sort(key=lambda r: r[0])
    met = sum(r[1] <= r[2] for r in rows)
    w = rows[-1]
    print(f"- peak memory (data excluded; a peer's under 1 MB counted as 1 MB): smml at most "
          f"{'intelex' if fam.name == 'forest' else 'the leanest peer'}'s in {met} of {len(rows)} cells; "
          f"smml / that peer median {statistics.median(r[0] for r in rows):.2f}, worst {w[0]:.2f} "
          f"({w[1]:.0f} MB against {w[3]}'s {w[2]:.0f}, {_cell_label(w[4])})")


def report(paths):
    """The tables and summaries of saved cells (``--json`` files of one or more runs)."""
    by_family = {}
    for path in paths:
        with open(path) as fh:
            saved = json.load(fh)
        print(f"# {path}: {saved['environment']}; bench_grid.py {' '.join(saved['argv'])}; "
              f"{saved['seconds']:.0f} s")
        for e in saved["cells"]:
            cells = by_family.setdefault(e["family"], {})
            cells[json.dumps(e["cell"], sort_keys=True)] = e
    for name in FAMILIES:
        if name in by_family:
            done = list(by_family[name].values())
            memory = any(r.get("mem_mb") is not None for e in done for r in e.get("libs", {}).values())
            _print_family(FAMILY_CLASSES[name](), done, sum(e.get("seconds", 0.0) for e in done), memory)
    return 0


if __name__ == "__main__":
    sys.exit(main(argv=sys.argv[1:]))
