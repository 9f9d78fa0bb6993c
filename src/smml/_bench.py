"""``smml bench``: the installed benchmarks (issue 34).

For each algorithm family, smml's compiled estimator against its plain-Python twin in
``smml.reference`` and against the installed peers (scikit-learn always; with ``peers=True``
also LightGBM and xgboost for boosting, pykdtree, scipy's cKDTree and faiss for k-NN, faiss for
k-means and scikit-learn-intelex for every family it covers), all in this one process.

Cases. Every family has one case small enough for the reference (a few hundred rows: the
reference is plain Python) where smml, the reference and the peers run on the same data, and
one or more larger cases (``reference_s`` is null there) where smml meets the peers only.

Timing. ``time.perf_counter`` wall time of the whole call (fit, or fit + predict where the case
says so), the best of a few rounds in which smml and the peers are called interleaved in a
changing order (machines shift between speed modes over seconds; a fixed block order lets a
shift decide a ratio). A call that took over ``_ROUND_BUDGET`` s is not repeated, nor is a
round after the second that took over ``_CASE_BUDGET`` s in all. The reference runs once. Ratios are
time / smml time: above 1, smml is faster.

Sizes: ``quick=True`` keeps every family to seconds up to about a minute on 2 cores; the full
sizes are 5 times as many rows (a few minutes per family). The environment variable
``SMML_BENCH_SCALE`` (a float, for tests) multiplies every row count and iteration count
(with small floors) and times one round: ``SMML_BENCH_SCALE=0.05 smml bench --quick`` runs
every family in seconds; its timings mean nothing.

JSON (``--json FILE``), a report to attach to a bug report::

    {"format": "smml-bench/1", "smml": version, "created": ISO time (UTC), "argv": [...],
     "quick": bool, "peers_option": bool, "scale": float, "elapsed_s": float,
     "machine": {"cpu", "cpu_count", "arch", "simd", "cpu_flags", "threads", "openmp", "blas",
                 "platform", "python", "versions": {package: version}, "load_avg",
                 "omp_wait_policy"},
     "families": [family names run],
     "rows": [{"family", "case", "shape", "what", "smml_s", "reference_s", "ratio",
               "peers": {name: seconds or null}, "peer_ratios": {name: ratio or null},
               "errors": {implementation: message}, "note"}]}

``ratio`` is reference_s / smml_s (null without a reference); ``peer_ratios[name]`` is
peers[name] / smml_s; a peer that failed has null seconds and its message in ``errors``.
"""
import json
import math
import os
import platform
import random
import sys
import time
import warnings

import numpy as np

FAMILIES = ("neighbors", "tree", "forest", "adaboost", "gradient_boosting", "linear", "kernels",
            "neural", "cluster")
FORMAT = "smml-bench/1"
ROW_FIELDS = ("family", "case", "shape", "what", "smml_s", "reference_s", "ratio", "peers",
              "peer_ratios", "errors", "note")
MACHINE_FIELDS = ("cpu", "cpu_count", "arch", "simd", "cpu_flags", "threads", "openmp", "blas",
                  "platform", "python", "versions", "load_avg", "omp_wait_policy")
SCALE_ENV = "SMML_BENCH_SCALE"
_FULL = 5                   # full sizes: this many times the quick rows
_ROUND_BUDGET = 10.0        # seconds: a callable this slow is not called again
_CASE_BUDGET = 20.0         # seconds: no further round after a round this slow
_ISA = {0: "none (portable loops)", 1: "AVX2+FMA", 2: "AVX-512F"}


# ---- machine -------------------------------------------------------------------------------------

def _cpuinfo():
    """(model name, set of flags) from /proc/cpuinfo, or (platform's guess, empty set)."""
    name, flags = None, set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, val = line.partition(":")
                key = key.strip()
                if key == "model name" and name is None:
                    name = val.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = set(val.split())
    except OSError:
        pass
    return name or platform.processor() or platform.machine() or "unknown", flags


def simd_level():
    """The widest instruction set smml's kernels dispatch to on this CPU (the float32 network
    steps' runtime check, ``smml._core._neural.step_isa``), as text."""
    try:
        from smml._core._neural import step_isa
        return _ISA.get(int(step_isa()), f"level {step_isa()}")
    except Exception as exc:        # an older or partial build: say so rather than fail
        return f"unknown ({type(exc).__name__})"


def _blas_text(m):
    return (f"{m.get('internal_api')} {m.get('version')} ({m.get('threading_layer')}, "
            f"{m.get('num_threads')} threads)")


def machine_info():
    """The header of the bench: a dict with ``MACHINE_FIELDS``."""
    import scipy
    import sklearn

    import smml
    from smml._threads import _controller, effective_n_threads, openmp_enabled

    cpu, flags = _cpuinfo()
    blas = [m for m in _controller().info() if m.get("user_api") == "blas"]
    versions = {"smml": smml.__version__, "numpy": np.__version__, "scipy": scipy.__version__,
                "scikit-learn": sklearn.__version__}
    for name, mod in (("lightgbm", "lightgbm"), ("xgboost", "xgboost"), ("pykdtree", "pykdtree"),
                      ("faiss", "faiss"), ("scikit-learn-intelex", "sklearnex"), ("matplotlib", "matplotlib")):
        v = _version(mod)
        if v:
            versions[name] = v
    wanted = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "neon", "asimd")
    return dict(cpu=cpu, cpu_count=os.cpu_count(), arch=platform.machine(), simd=simd_level(),
                cpu_flags=[f for f in wanted if f in flags],
                threads=effective_n_threads(None), openmp=bool(openmp_enabled()),
                blas="; ".join(_blas_text(m) for m in blas) or "not found by threadpoolctl",
                platform=platform.platform(), python=sys.version.split()[0], versions=versions,
                load_avg=_load(), omp_wait_policy=os.environ.get("OMP_WAIT_POLICY"))


def _load():
    """The 1-minute load average (None where unknown): other jobs slow every timing."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _version(module):
    """The installed distribution's version of ``module`` without importing it, or None."""
    from importlib import metadata
    dist = {"sklearnex": "scikit-learn-intelex", "faiss": "faiss-cpu"}.get(module, module)
    for d in (dist, module, "faiss-gpu" if module == "faiss" else None):
        if d is None:
            continue
        try:
            return metadata.version(d)
        except metadata.PackageNotFoundError:
            continue
    return None


def _have(module):
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# ---- timing --------------------------------------------------------------------------------------

def interleaved_best(fns, repeat):
    """Best wall time (s) of each callable in ``fns`` (a dict name -> fn) over up to ``repeat``
    rounds, called interleaved, the order reshuffled (seeded) after each round. A callable whose
    call took over ``_ROUND_BUDGET`` s is not called again (its one time stands), and a round
    after the first that took over ``_CASE_BUDGET`` s in all is the last. A call that raises gets None and its
    message: returns (times, errors)."""
    names = list(fns)
    best = {n: math.inf for n in names}
    errors = {}
    shuffle = random.Random(0).shuffle
    order = list(names)
    for r in range(max(1, repeat)):
        round_s = 0.0
        for n in order:
            if n in errors or _ROUND_BUDGET < best[n] < math.inf:
                continue
            t0 = time.perf_counter()
            try:
                with warnings.catch_warnings():     # convergence warnings of fixed-epoch fits
                    warnings.simplefilter("ignore")
                    fns[n]()
            except Exception as exc:     # a peer's version mismatch, a missing feature: reported
                errors[n] = f"{type(exc).__name__}: {exc}"[:300]
                continue
            dt = time.perf_counter() - t0
            best[n] = min(best[n], dt)
            round_s += dt
        if r >= 1 and round_s > _CASE_BUDGET:
            break
        shuffle(order)
    return {n: (None if n in errors else best[n]) for n in names}, errors


# ---- data ----------------------------------------------------------------------------------------

def _classification(n, d, seed=0, flip=0.05):
    """n x d standard normal rows, labels 0/1 from a random hyperplane, ``flip`` of them flipped."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    u = rng.standard_normal(d)
    y = (X @ u + 0.5 * np.sin(3 * X[:, 0]) > 0).astype(np.int64)
    f = rng.random(n) < flip
    y[f] = 1 - y[f]
    return X, y


def _regression(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    return X, y


def _clustered(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    centres = 4 * rng.standard_normal((k, d))
    return centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))


# ---- the cases -----------------------------------------------------------------------------------

class _Ctx:
    """Sizes and peers of a run: ``rows(n)`` a quick row count scaled to the run, ``it(n)`` an
    iteration count scaled by SMML_BENCH_SCALE only."""

    def __init__(self, quick, peers, scale, threads):
        self.quick, self.peers, self.scale, self.threads = quick, peers, scale, threads
        self.repeat = 1 if scale < 1 else (3 if quick else 5)

    def rows(self, n, floor=40):
        return max(floor, int(n * self.scale * (1 if self.quick else _FULL)))

    def ref_rows(self, n, floor=30):
        """Rows of a case the reference runs: the same for quick and full runs."""
        return max(floor, int(n * min(1.0, self.scale)))

    def it(self, n, floor=2):
        return max(floor, int(n * min(1.0, self.scale)))

    def want(self, module, optional=True):
        """Run the peer from ``module``? scikit-learn always; the others with ``peers`` only."""
        return (self.peers or not optional) and _have(module)


def _case(family, case, shape, what, smml_fn, ref_fn=None, peers=None, note=""):
    return dict(family=family, case=case, shape=shape, what=what, smml=smml_fn, ref=ref_fn,
                peers=peers or {}, note=note)


def _neighbors(c):
    from sklearn.neighbors import KNeighborsClassifier as SkKNN

    from smml.neighbors import KNNClassifier
    from smml.reference.neighbors import KNNClassifier as RefKNN
    k, T = 5, c.threads
    out = []
    for n, d, q, ref in ((c.ref_rows(400), 8, c.ref_rows(100, 10), True),
                         (c.rows(20_000), 8, c.rows(5_000), False),
                         (c.rows(20_000), 64, c.rows(2_000), False)):
        X, y = _classification(n + q, d, seed=d)
        X, y, Q = X[:n], y[:n], X[n:]
        peers = {"scikit-learn": lambda X=X, y=y, Q=Q: SkKNN(k, n_jobs=T).fit(X, y).predict(Q)}
        if c.want("sklearnex"):
            def intelex(X=X, y=y, Q=Q):
                from sklearnex.neighbors import KNeighborsClassifier as IxKNN
                return IxKNN(k, n_jobs=T).fit(X, y).predict(Q)
            peers["sklearnex"] = intelex
        if c.want("scipy") and d <= 16:       # kd-trees: low dimensions only
            def ckd(X=X, Q=Q):
                from scipy.spatial import cKDTree
                return cKDTree(X).query(Q, k, workers=T)
            peers["scipy cKDTree*"] = ckd
        if c.want("pykdtree") and d <= 16:
            def pykd(X=X, Q=Q):
                from pykdtree.kdtree import KDTree
                return KDTree(X, leafsize=16).query(Q, k)
            peers["pykdtree*"] = pykd
        if c.want("faiss"):
            X32, Q32 = np.ascontiguousarray(X, np.float32), np.ascontiguousarray(Q, np.float32)

            def flat(X32=X32, Q32=Q32):
                import faiss
                faiss.omp_set_num_threads(T)
                index = faiss.IndexFlatL2(X32.shape[1])
                index.add(X32)
                return index.search(Q32, k)
            peers["faiss IndexFlatL2*"] = flat
        out.append(_case(
            "neighbors", f"KNNClassifier k={k}", f"{n}x{d}, {q} queries", "fit+predict",
            lambda X=X, y=y, Q=Q: KNNClassifier(n_neighbors=k, n_jobs=T).fit(X, y).predict(Q),
            (lambda X=X, y=y, Q=Q: RefKNN(k=k).fit(X, y).predict(Q)) if ref else None, peers,
            "*: search only (no vote); faiss in float32; kd-tree peers for d <= 16 only"
            if len(peers) > 1 else ""))
    return out


def _tree(c):
    from sklearn.tree import DecisionTreeClassifier

    from smml.reference.tree import TreeClassifier as RefTree
    from smml.tree import TreeClassifier
    out = []
    for n, d, ref in ((c.ref_rows(300), 8, True), (c.rows(20_000), 16, False)):
        X, y = _classification(n, d, seed=1)
        peers = {"scikit-learn": lambda X=X, y=y: DecisionTreeClassifier(random_state=0).fit(X, y)}
        out.append(_case("tree", "TreeClassifier gini, fully grown", f"{n}x{d}", "fit",
                         lambda X=X, y=y: TreeClassifier("gini", n_jobs=c.threads).fit(X, y),
                         (lambda X=X, y=y: RefTree("gini").fit(X, y)) if ref else None, peers))
    return out


def _forest(c):
    from sklearn.ensemble import RandomForestClassifier as SkRF

    from smml.ensemble import RandomForestClassifier
    T = c.threads
    out = []
    for n, d, trees in ((c.rows(2_000), 16, c.it(20)), (c.rows(10_000), 16, c.it(50))):
        X, y = _classification(n, d, seed=2)
        peers = {"scikit-learn": lambda X=X, y=y, t=trees: SkRF(t, n_jobs=T, random_state=0).fit(X, y)}
        if c.want("sklearnex"):
            def intelex(X=X, y=y, t=trees):
                from sklearnex.ensemble import RandomForestClassifier as IxRF
                return IxRF(t, n_jobs=T, random_state=0).fit(X, y)
            peers["sklearnex"] = intelex
        out.append(_case("forest", f"RandomForestClassifier {trees} trees", f"{n}x{d}", "fit",
                         lambda X=X, y=y, t=trees: RandomForestClassifier(t, n_jobs=T, random_state=0).fit(X, y),
                         None, peers, "smml.reference has no forest: its tree is in family 'tree'"))
    return out


def _adaboost(c):
    from sklearn.ensemble import AdaBoostClassifier as SkAda
    from sklearn.tree import DecisionTreeClassifier

    from smml.ensemble import AdaBoostClassifier
    from smml.reference.adaboost import AdaBoostStumps
    out = []
    for n, d, rounds, ref in ((c.ref_rows(300), 8, c.it(20), True), (c.rows(10_000), 20, c.it(50), False)):
        X, y = _classification(n, d, seed=3, flip=0.1)
        peers = {"scikit-learn": lambda X=X, y=y, r=rounds: SkAda(
            estimator=DecisionTreeClassifier(max_depth=1), n_estimators=r).fit(X, y)}
        out.append(_case("adaboost", f"AdaBoostClassifier stumps, {rounds} rounds", f"{n}x{d}", "fit",
                         lambda X=X, y=y, r=rounds: AdaBoostClassifier(n_estimators=r, n_jobs=c.threads).fit(X, y),
                         (lambda X=X, y=y, r=rounds: AdaBoostStumps(n_estimators=r).fit(X, y)) if ref else None,
                         peers))
    return out


def _gradient_boosting(c):
    from sklearn.ensemble import HistGradientBoostingClassifier

    from smml.ensemble import GradientBoostingClassifier
    from smml.reference.gradient_boosting import GradientBoostingClassifier as RefGB
    T, lr = c.threads, 0.3
    out = []
    for n, d, rounds, depth, ref in ((c.ref_rows(300), 8, c.it(5), 3, True),
                                     (c.rows(10_000), 32, c.it(50), 6, False)):
        X, y = _classification(n, d, seed=4)
        leaves = 2 ** depth
        peers = {"scikit-learn HGB": lambda X=X, y=y, r=rounds, dp=depth, lv=leaves: HistGradientBoostingClassifier(
            learning_rate=lr, max_iter=r, max_depth=dp, max_leaf_nodes=lv, min_samples_leaf=1,
            l2_regularization=1.0, early_stopping=False).fit(X, y)}
        if c.want("lightgbm"):
            def lgb(X=X, y=y, r=rounds, dp=depth, lv=leaves):
                import lightgbm
                return lightgbm.LGBMClassifier(n_estimators=r, learning_rate=lr, max_depth=dp, num_leaves=lv,
                                               min_child_samples=1, reg_lambda=1.0, n_jobs=T,
                                               verbose=-1).fit(X, y)
            peers["lightgbm"] = lgb
        if c.want("xgboost"):
            def xgb(X=X, y=y, r=rounds, dp=depth):
                import xgboost
                return xgboost.XGBClassifier(n_estimators=r, learning_rate=lr, max_depth=dp, tree_method="hist",
                                             reg_lambda=1.0, n_jobs=T).fit(X, y)
            peers["xgboost"] = xgb
        out.append(_case(
            "gradient_boosting", f"GradientBoostingClassifier {rounds} rounds depth {depth}", f"{n}x{d}", "fit",
            lambda X=X, y=y, r=rounds, dp=depth: GradientBoostingClassifier(
                n_estimators=r, learning_rate=lr, max_depth=dp, n_jobs=T).fit(X, y),
            (lambda X=X, y=y, r=rounds, dp=depth: RefGB(n_estimators=r, learning_rate=lr, max_depth=dp).fit(X, y))
            if ref else None, peers))
    return out


def _linear(c):
    from sklearn import linear_model as sk

    from smml import linear as L
    from smml.reference import linear as R
    T = c.threads
    out = []
    epochs, lam = c.it(10), 1e-3
    small, big = c.ref_rows(500), c.rows(100_000)
    for n, d, ref in ((small, 20, True), (big, 50, False)):
        X, y = _classification(n, d, seed=5)
        steps = c.it(2_000) if ref else c.rows(100_000)
        out.append(_case(
            "linear", f"Perceptron {epochs} epochs", f"{n}x{d}", "fit",
            lambda X=X, y=y: L.Perceptron(max_iter=epochs, n_jobs=T).fit(X, y),
            (lambda X=X, y=y: R.Perceptron(max_epochs=epochs).fit(X, y)) if ref else None,
            {"scikit-learn": lambda X=X, y=y: _quiet(
                lambda: sk.Perceptron(max_iter=epochs, tol=None, shuffle=False).fit(X, y))},
            "the data are not separable: every implementation runs all epochs"))
        out.append(_case(
            "linear", f"Pegasos lam={lam:g}, {steps} steps", f"{n}x{d}", "fit",
            lambda X=X, y=y, s=steps: L.Pegasos(alpha=lam, max_iter=s, random_state=0, n_jobs=T).fit(X, y),
            (lambda X=X, y=y, s=steps: R.Pegasos(lam=lam, n_iter=s, random_state=0).fit(X, y)) if ref else None,
            {"scikit-learn SGD": lambda X=X, y=y, s=steps: _quiet(lambda: sk.SGDClassifier(
                loss="hinge", alpha=lam, learning_rate="optimal", tol=None,
                max_iter=max(1, round(s / len(y)))).fit(X, y))},
            "scikit-learn's SGDClassifier(hinge): as many epochs as Pegasos' steps / rows (at least 1)"))
        lr_steps = c.it(100)
        out.append(_case(
            "linear", "LogisticRegression", f"{n}x{d}", "fit",
            lambda X=X, y=y: L.LogisticRegression(alpha=lam, n_jobs=T).fit(X, y),
            (lambda X=X, y=y: R.LogisticRegression(lam=lam, steps=lr_steps).fit(X, y)) if ref else None,
            {"scikit-learn": lambda X=X, y=y: _quiet(
                lambda: sk.LogisticRegression(C=1.0 / (lam * len(y))).fit(X, y))},
            f"not equal work: smml and scikit-learn run L-BFGS to their tolerance, the reference "
            f"{lr_steps} gradient steps" if ref else "smml and scikit-learn: L-BFGS to their tolerance"))
        Xr, yr = _regression(n, d, seed=6)
        out.append(_case(
            "linear", "LinearRegression (least squares)", f"{n}x{d}", "fit",
            lambda X=Xr, y=yr: L.LinearRegression(n_jobs=T).fit(X, y),
            (lambda X=Xr, y=yr: R.LinearRegression().fit(X, y)) if ref else None,
            {"scikit-learn": lambda X=Xr, y=yr: sk.LinearRegression().fit(X, y)}))
        out.append(_case(
            "linear", "RidgeRegression alpha=1", f"{n}x{d}", "fit",
            lambda X=Xr, y=yr: L.RidgeRegression(alpha=1.0, n_jobs=T).fit(X, y),
            (lambda X=Xr, y=yr: R.RidgeRegression(alpha=1.0).fit(X, y)) if ref else None,
            {"scikit-learn": lambda X=Xr, y=yr: sk.Ridge(alpha=1.0).fit(X, y)}))
    return out


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _kernels(c):
    from sklearn.kernel_ridge import KernelRidge as SkKR
    from sklearn.svm import SVC

    from smml import kernels as K
    from smml.reference import kernels as R
    T = c.threads
    out = []
    # the large case at most 6,000 rows: kernel ridge's m x m Gram matrix and its O(m^3) solve
    for n, d, ref in ((c.ref_rows(200), 5, True), (min(c.rows(3_000), 6_000), 10, False)):
        X, y = _classification(n, d, seed=7, flip=0.02)
        Xr, yr = _regression(n, d, seed=8)
        g_sk = 1.0 / (d * float(X.var()))           # scikit-learn's gamma="scale"
        epochs = c.it(5)
        steps = c.it(2_000) if ref else c.rows(20_000)
        out.append(_case(
            "kernels", f"KernelPerceptron gaussian, {epochs} epochs", f"{n}x{d}", "fit",
            lambda X=X, y=y: K.KernelPerceptron(max_iter=epochs, n_jobs=T).fit(X, y),
            (lambda X=X, y=y: R.KernelPerceptron(max_epochs=epochs).fit(X, y)) if ref else None, {},
            "no scikit-learn peer"))
        out.append(_case(
            "kernels", f"KernelPegasos gaussian, {steps} steps", f"{n}x{d}", "fit",
            lambda X=X, y=y, s=steps: K.KernelPegasos(max_iter=s, random_state=0, n_jobs=T).fit(X, y),
            (lambda X=X, y=y, s=steps: R.KernelPegasos(n_iter=s, random_state=0).fit(X, y)) if ref else None,
            {}, "no scikit-learn peer"))
        out.append(_case(
            "kernels", "KernelRidge gaussian alpha=1", f"{n}x{d}", "fit",
            lambda X=Xr, y=yr: K.KernelRidge(alpha=1.0, n_jobs=T).fit(X, y),
            (lambda X=Xr, y=yr: R.KernelRidge(alpha=1.0).fit(X, y)) if ref else None,
            {"scikit-learn": lambda X=Xr, y=yr: SkKR(alpha=1.0, kernel="rbf",
                                                      gamma=1.0 / (d * float(Xr.var()))).fit(X, y)}))
        if not ref:
            peers = {"scikit-learn": lambda X=X, y=y: SVC(C=1.0, gamma=g_sk, cache_size=1024).fit(X, y)}
            if c.want("sklearnex"):
                def intelex(X=X, y=y):
                    from sklearnex.svm import SVC as IxSVC
                    return IxSVC(C=1.0, gamma=g_sk, cache_size=1024).fit(X, y)
                peers["sklearnex"] = intelex
            out.append(_case("kernels", "KernelSVC gaussian C=1", f"{n}x{d}", "fit",
                             lambda X=X, y=y: K.KernelSVC(C=1.0, n_jobs=T).fit(X, y), None, peers,
                             "the reference's SVM solver is a coordinate descent on a given Gram "
                             "matrix, not timed here"))
    return out


def _neural(c):
    from sklearn.neural_network import MLPClassifier as SkMLP

    from smml.neural import MLPClassifier
    from smml.reference.neural import MLPClassifier as RefMLP
    T = c.threads
    out = []
    for n, d, hidden, epochs, ref in ((c.ref_rows(300), 10, 16, c.it(5), True),
                                      (c.rows(20_000), 50, 64, c.it(10), False)):
        X, y = _classification(n, d, seed=9)
        kw = dict(hidden_layer_sizes=(hidden,), batch_size=32, learning_rate=0.01, max_iter=epochs, tol=0.0,
                  n_iter_no_change=epochs + 1, random_state=0)
        peers = {"scikit-learn": lambda X=X, y=y, h=hidden, e=epochs: _quiet(lambda: SkMLP(
            (h,), solver="sgd", batch_size=32, learning_rate_init=0.01, momentum=0.0, alpha=0.0, max_iter=e,
            tol=0.0, n_iter_no_change=e + 1, random_state=0).fit(X, y))}
        out.append(_case(
            "neural", f"MLPClassifier ({hidden},) relu, batch 32, {epochs} epochs", f"{n}x{d}", "fit",
            lambda X=X, y=y, kw=kw: MLPClassifier(**kw, n_jobs=T).fit(X, y),
            (lambda X=X, y=y, kw=kw: RefMLP(**{k: v for k, v in kw.items() if k != "max_iter"},
                                              max_epochs=kw["max_iter"]).fit(X, y)) if ref else None, peers))
    return out


def _cluster(c):
    from sklearn.cluster import KMeans as SkKM

    from smml.cluster import KMeans
    from smml.reference.cluster import KMeans as RefKM
    T = c.threads
    out = []
    for n, d, k, iters, ref in ((c.ref_rows(500), 4, 4, c.it(10), True),
                                (c.rows(100_000), 16, 16, c.it(20), False)):
        X = _clustered(n, d, k, seed=10)
        C0 = X[np.random.default_rng(0).choice(n, k, replace=False)].copy()
        peers = {"scikit-learn": lambda X=X, C0=C0, k=k, it=iters: SkKM(
            k, init=C0, n_init=1, max_iter=it, tol=0.0, algorithm="lloyd").fit(X)}
        if c.want("sklearnex"):
            def intelex(X=X, C0=C0, k=k, it=iters):
                from sklearnex.cluster import KMeans as IxKM
                return _quiet(lambda: IxKM(k, init=C0, n_init=1, max_iter=it, tol=0.0).fit(X))
            peers["sklearnex"] = intelex
        if c.want("faiss"):
            X32 = np.ascontiguousarray(X, np.float32)
            C32 = np.ascontiguousarray(C0, np.float32)

            def fk(X32=X32, C32=C32, k=k, it=iters):
                import faiss
                faiss.omp_set_num_threads(T)
                km = faiss.Kmeans(X32.shape[1], k, niter=it, max_points_per_centroid=10 ** 9, seed=0)
                km.train(X32, init_centroids=C32)
                return km
            peers["faiss (float32)"] = fk
        out.append(_case(
            "cluster", f"KMeans k={k}, {iters} Lloyd iterations", f"{n}x{d}", "fit",
            lambda X=X, C0=C0, k=k, it=iters: KMeans(k, init=C0, n_init=1, max_iter=it, tol=0.0,
                                                     n_jobs=T).fit(X),
            (lambda X=X, C0=C0, k=k, it=iters: RefKM(k, init=C0, n_init=1, max_iter=it, tol=0.0).fit(X))
            if ref else None, peers, "the same initial centroids for all; tol=0: every implementation "
                                     "runs all iterations (scikit-learn may stop once labels settle)"))
    return out


_BUILDERS = {"neighbors": _neighbors, "tree": _tree, "forest": _forest, "adaboost": _adaboost,
             "gradient_boosting": _gradient_boosting, "linear": _linear, "kernels": _kernels,
             "neural": _neural, "cluster": _cluster}
ALIASES = {"knn": "neighbors", "kmeans": "cluster", "boosting": "gradient_boosting", "gbm": "gradient_boosting",
           "gradient-boosting": "gradient_boosting", "trees": "tree", "random_forest": "forest",
           "mlp": "neural", "kernel": "kernels"}


def resolve_families(names):
    """The families to run, in FAMILIES order, from names or aliases (all when empty); raises
    ValueError naming an unknown one."""
    if not names:
        return list(FAMILIES)
    chosen = set()
    for n in names:
        key = ALIASES.get(n.lower(), n.lower())
        if key not in _BUILDERS:
            raise ValueError(f"unknown family {n!r}; choose from: {', '.join(FAMILIES)}")
        chosen.add(key)
    return [f for f in FAMILIES if f in chosen]


def scale_from_env():
    raw = os.environ.get(SCALE_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        s = float(raw)
    except ValueError:
        raise ValueError(f"{SCALE_ENV}={raw!r} is not a number") from None
    if not 0 < s <= 100:
        raise ValueError(f"{SCALE_ENV}={raw!r} must lie in (0, 100]")
    return s


def run_case(case, repeat):
    fns = {"smml": case["smml"], **case["peers"]}
    times, errors = interleaved_best(fns, repeat)
    ref_s = None
    if case["ref"] is not None:
        ref_times, ref_err = interleaved_best({"reference": case["ref"]}, 1)
        ref_s = ref_times["reference"]
        errors.update(ref_err)
    smml_s = times.pop("smml")

    def ratio(t):
        return None if t is None or not smml_s else t / smml_s
    return dict(family=case["family"], case=case["case"], shape=case["shape"], what=case["what"],
                smml_s=smml_s, reference_s=ref_s, ratio=ratio(ref_s), peers=times,
                peer_ratios={n: ratio(t) for n, t in times.items()}, errors=errors, note=case["note"])


def run(families=None, quick=False, peers=False, scale=None, out=None, progress=None):
    """Run the bench; returns the report dict (see the module docstring) and prints the table to
    ``out`` (stdout) and one line per case to ``progress`` (stderr) as it goes."""
    from smml._threads import effective_n_threads

    out = sys.stdout if out is None else out
    progress = sys.stderr if progress is None else progress
    families = resolve_families(families)
    scale = scale_from_env() if scale is None else scale
    machine = machine_info()
    ctx = _Ctx(quick, peers, scale, effective_n_threads(None))
    started = time.time()
    print(header(machine, quick, peers, scale), file=out, flush=True)
    rows = []
    for fam in families:
        t0 = time.perf_counter()
        for case in _BUILDERS[fam](ctx):
            row = run_case(case, ctx.repeat)
            rows.append(row)
            print(f"  {fam}: {row['case']} {row['shape']}: smml {_fmt_s(row['smml_s'])}", file=progress,
                  flush=True)
        print(f"{fam}: {time.perf_counter() - t0:.1f} s", file=progress, flush=True)
    print(table(rows), file=out, flush=True)
    import smml
    return dict(format=FORMAT, smml=smml.__version__,
                created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)), argv=list(sys.argv),
                quick=bool(quick), peers_option=bool(peers), scale=scale,
                elapsed_s=round(time.time() - started, 3), machine=machine, families=families, rows=rows)


# ---- output --------------------------------------------------------------------------------------

def header(m, quick, peers, scale):
    peers_txt = ", ".join(f"{k} {v}" for k, v in m["versions"].items() if k != "smml")
    lines = [f"smml bench: {'quick' if quick else 'full'} sizes{'' if scale == 1 else f' x {scale:g} (test scale)'}; "
             f"peers: {'every one installed' if peers else 'scikit-learn only (--peers adds the others)'}",
             f"CPU: {m['cpu']} ({m['arch']}, {m['cpu_count']} cpus; flags {' '.join(m['cpu_flags']) or '-'})",
             f"SIMD used by smml: {m['simd']}",
             f"threads: {m['threads']}, OpenMP {'on' if m['openmp'] else 'off'}; "
             f"load average {m['load_avg']} at the start",
             f"BLAS: {m['blas']}",
             *_busy_hint(m),
             f"smml {m['versions']['smml']}, python {m['python']}; installed: {peers_txt}",
             "times: best of interleaved rounds (s); x = time / smml time (above 1: smml faster)"]
    return "\n".join(lines)


def _busy_hint(m):
    """A line when other jobs hold the cores: timings are then erratic, most of all the peers'
    whose OpenMP threads spin long while idle (smml's spin briefly unless the user set a policy:
    smml/__init__.py)."""
    load, cpus = m.get("load_avg"), m.get("cpu_count") or 1
    if load is None or load < 0.75 * cpus:
        return []
    policy = m.get("omp_wait_policy")
    return [f"note: the machine is busy (load {load} on {cpus} cpus): timings are erratic; "
            + (f"OMP_WAIT_POLICY={policy} (set by you)" if policy else
               "smml's OpenMP threads spin briefly when idle (GOMP_SPINCOUNT=30000), the peers' may spin long; "
               "prefer a quiet machine")]


def _fmt_s(t):
    if t is None:
        return "-"
    if t >= 100:
        return f"{t:.0f}"
    if t >= 1:
        return f"{t:.2f}"
    if t >= 0.01:
        return f"{t:.3f}"
    return f"{t:.1e}"


def _fmt_x(r):
    if r is None:
        return "-"
    return f"{r:.0f}x" if r >= 100 else f"{r:.2f}x" if r < 10 else f"{r:.1f}x"


def table(rows):
    head = ["family", "case", "shape", "smml s", "reference s", "ref x", "peers: s (x)"]
    cells = []
    for r in rows:
        peers = "; ".join(f"{n} {_fmt_s(t)} ({_fmt_x(r['peer_ratios'][n])})" if t is not None else f"{n} failed"
                          for n, t in r["peers"].items())
        if r["smml_s"] is None:
            peers = "smml failed: " + r["errors"].get("smml", "?") + ("; " + peers if peers else "")
        cells.append([r["family"], f"{r['case']} ({r['what']})", r["shape"], _fmt_s(r["smml_s"]),
                      _fmt_s(r["reference_s"]), _fmt_x(r["ratio"]), peers or "-"])
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(head)]
    fmt = "  ".join("{:<%d}" % w for w in widths[:-1]) + "  {}"
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*c) for c in cells]
    notes = {}
    for r in rows:
        if r["note"]:
            cases = notes.setdefault((r["family"], r["note"]), [])
            if r["case"].split(",")[0] not in cases:
                cases.append(r["case"].split(",")[0])
    if notes:
        lines.append("")
        lines += [f"{fam}, {' / '.join(cases)}: {note}" for (fam, note), cases in notes.items()]
    failed = [(r["family"], r["case"], n, e) for r in rows for n, e in r["errors"].items()]
    lines += [f"FAILED {fam} / {case} / {n}: {e}" for fam, case, n, e in failed]
    return "\n".join(lines)


def write_json(report, path):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1, allow_nan=False,
                  default=lambda o: o.item() if hasattr(o, "item") else str(o))
        fh.write("\n")


def write_plots(report, directory):
    """One bar chart per family: each case's time for smml, the reference and every peer (log
    scale). Returns the paths written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(directory, exist_ok=True)
    paths = []
    for fam in report["families"]:
        rows = [r for r in report["rows"] if r["family"] == fam]
        names = ["smml", "reference"] + sorted({n for r in rows for n in r["peers"]})
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows) + 3), 4))
        width = 0.8 / len(names)
        for j, name in enumerate(names):
            vals = [(r["smml_s"] if name == "smml" else r["reference_s"] if name == "reference"
                     else r["peers"].get(name)) for r in rows]
            xs = [i + (j - (len(names) - 1) / 2) * width for i in range(len(rows))]
            ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=name)
        ax.set_yscale("log")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([f"{r['case']}\n{r['shape']}" for r in rows], fontsize=7)
        ax.set_ylabel("seconds (best of rounds)")
        ax.set_title(f"smml bench: {fam}")
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(directory, f"bench_{fam}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
