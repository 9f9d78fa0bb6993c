"""Benchmark of smml.kernels against scikit-learn, scikit-learn-intelex and the plain-Python references.

Shapes (issue 10), 2 threads, float64, Gaussian kernel exp(-gamma ||x - x'||^2) with
scikit-learn's gamma (smml and scikit-learn take the same value; the plain-Python references
keep 003's width w = 1 / (2 gamma)):
- Gram matrix K(X, X), 5,000 x 20 and 5,000 x 512: smml's gaussian_kernel vs sklearn's rbf_kernel,
  and the fraction of the machine's gemm peak (the 2 m^2 d flops of the distance product divided by
  the WHOLE Gram time, exp and stores included: a lower bound for the product itself).
- KernelRidge, 5,000 x 20 and 20,000 x 20 (alpha=1): vs sklearn KernelRidge; target >= 1.5x.
- KernelSVC, 5,000 x 20 and 50,000 x 20, C=1, target "outside the sphere ||x||^2 > d" (nonlinear,
  binary): vs sklearn SVC (libsvm) and sklearnex SVC (oneDAL), same tol (1e-3) and cache size;
  003's objective F(g) = lam/2 ||g||^2 + mean hinge (lam = 1 / (C m)) of each fitted model computed
  the same way (float64, exact kernel) and test accuracy; target: faster than both, equal objective.
- KernelPerceptron / KernelPegasos: time to a training error <= 3% vs the references (timed on a
  subset, extrapolated by m^2, labelled so) and vs KernelSVC; test accuracy at KernelSVC's fit time.
- predict on 1 and 5 rows (per-call cost).
Peers are timed interleaved, round by round (the machine shifts between speed modes), best of the
rounds; the load average is printed beside every table.

Run: ``python bench/run.py kernels`` or ``python bench/bench_kernels.py [--quick]``;
``--similar``: KernelSVC against intelex only, on shapes like 50,000 x 20 (30,000 x 20,
80,000 x 20, 50,000 x 10, 50,000 x 40).
"""
import os
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_time, environment_line, per_call_time, print_table  # noqa: E402

N_THREADS = 2
TARGET_ERR = 0.03


def _load():
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def _sphere(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where((X ** 2).sum(1) > d, 1, -1)


def _interleaved(fns, rounds):
    """{name: best seconds, ...}, {name: last result}: each round runs every fn once, in order."""
    best, out = {k: float("inf") for k in fns}, {}
    for _ in range(rounds):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            out[k] = fn()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best, out


_PEAK = {}


def _gemm_peak(repeat=5):
    """GFLOP/s of a 2048^3 float64 gemm on N_THREADS BLAS threads (best of ``repeat``)."""
    if "f64" not in _PEAK:
        rng = np.random.default_rng(1)
        A = rng.standard_normal((2048, 2048))
        B = rng.standard_normal((2048, 2048))
        with threadpool_limits(N_THREADS, user_api="blas"):
            A @ B
            t, _ = best_time(lambda: A @ B, repeat=repeat)
        _PEAK["f64"] = 2.0 * 2048 ** 3 / t / 1e9
    return _PEAK["f64"]


# ---- Gram matrix ---------------------------------------------------------------------------

def bench_gram(quick):
    from sklearn.metrics.pairwise import rbf_kernel

    from smml.kernels import gaussian_kernel

    peak = _gemm_peak()
    rows = []
    for m, d in ([(2000, 20), (2000, 256)] if quick else [(5000, 20), (5000, 512)]):
        X = np.random.default_rng(0).standard_normal((m, d))
        gamma = 1.0 / d                   # 003's width d / 2
        X32 = X.astype(np.float32)
        best, out = _interleaved({
            "smml f64": lambda: gaussian_kernel(X, gamma=gamma, n_jobs=N_THREADS),
            "smml f32": lambda: gaussian_kernel(X32, gamma=gamma, n_jobs=N_THREADS),
            "sklearn f64": lambda: rbf_kernel(X, gamma=gamma),
            "sklearn f32": lambda: rbf_kernel(X32, gamma=gamma)}, 1 if quick else 3)
        err = float(np.max(np.abs(out["smml f64"] - out["sklearn f64"])))
        flops = 2.0 * m * m * d
        for k, t in best.items():
            rows.append(dict(shape=f"{m} x {d}", impl=k, t=1e3 * t, gf=flops / t / 1e9,
                             frac=flops / t / 1e9 / peak, vs=best["sklearn " + k.split()[1]] / t,
                             err=err if k == "smml f64" else None))
        del out
    print_table(f"Gram matrix K(X, X), Gaussian; gemm peak {peak:.1f} GFLOP/s (float64, {N_THREADS} "
                f"threads); load {_load()}", rows,
                [("shape", "m x d", "{}"), ("impl", "implementation", "{}"), ("t", "ms", "{:.1f}"),
                 ("gf", "product GFLOP/s", "{:.1f}"), ("frac", "of gemm peak", "{:.0%}"),
                 ("vs", "speed-up vs sklearn (same dtype)", "{:.2f}x"),
                 ("err", "max |smml - sklearn|", "{:.1e}")])
    return rows


# ---- KernelRidge ---------------------------------------------------------------------------

def bench_ridge(quick):
    from sklearn.kernel_ridge import KernelRidge as SkKR

    from smml.kernels import KernelRidge
    from smml.reference import kernels as R

    out_rows, ratios = [], {}
    for m in ([2000, 5000] if quick else [5000, 20000]):
        X, _ = _sphere(m, 20)
        y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * np.random.default_rng(1).standard_normal(m)
        gamma = 0.05                      # 003's width 10
        rounds = 1 if (quick or m > 10000) else 3
        best, out = _interleaved({
            "smml": lambda: KernelRidge(alpha=1.0, gamma=gamma, n_jobs=N_THREADS).fit(X, y),
            "sklearn": lambda: SkKR(alpha=1.0, kernel="rbf", gamma=gamma).fit(X, y)}, rounds)
        diff = float(np.max(np.abs(out["smml"].dual_coef_ - out["sklearn"].dual_coef_))
                     / np.max(np.abs(out["sklearn"].dual_coef_)))
        sub = 300
        t_ref, _ = best_time(lambda: R.kernel_ridge_coef(X[:sub], y[:sub], 1.0,
                                                       R.make_kernel("gaussian", gamma=1 / (2 * gamma))), repeat=1)
        ref = t_ref * (m / sub) ** 2           # the plain-Python Gram (m^2) dominates it
        ratios[m] = best["sklearn"] / best["smml"]
        out_rows += [dict(m=m, impl="smml KernelRidge (dsposv)", t=best["smml"], diff=0.0, vs=ratios[m]),
                     dict(m=m, impl="sklearn KernelRidge(rbf)", t=best["sklearn"], diff=diff, vs=1.0),
                     dict(m=m, impl=f"reference ({sub} rows, extrapolated by m^2)", t=ref, diff=None,
                          vs=best["sklearn"] / ref)]
        del out
    print_table(f"KernelRidge fit, m x 20, Gaussian, alpha=1, {N_THREADS} threads; load {_load()}", out_rows,
                [("m", "m", "{}"), ("impl", "implementation", "{}"), ("t", "fit s", "{:.3f}"),
                 ("diff", "max rel |coef - smml|", "{:.1e}"), ("vs", "speed vs sklearn", "{:.2f}x")])
    return ratios


# ---- KernelSVC ----------------------------------------------------------------------------

def _objective_and_acc(kern_gamma, X, y, Xt, yt, sv, coef, b, lam):
    """003's F(g) = lam/2 coef^T K_SV coef + mean hinge(y (g(x) + b)), and test accuracy, float64."""
    from smml.kernels._base import Kernel, decision_values

    kern = Kernel("rbf", gamma=kern_gamma, center=X.mean(0))
    Sp = kern.prepare(np.ascontiguousarray(sv, dtype=np.float64))
    sn = kern.norms(Sp)
    c = np.ascontiguousarray(coef, dtype=np.float64)[:, None]
    f = decision_values(kern, kern.prepare(X), Sp, sn, c, N_THREADS)[:, 0] + b
    g_sv = decision_values(kern, Sp, Sp, sn, c, N_THREADS)[:, 0]
    F = 0.5 * lam * float(coef @ g_sv) + float(np.mean(np.maximum(0.0, 1.0 - y * f)))
    ft = decision_values(kern, kern.prepare(Xt), Sp, sn, c, N_THREADS)[:, 0] + b
    return F, float(np.mean(np.where(ft > 0, 1, -1) == yt))


def bench_svc(quick):
    from sklearn.svm import SVC

    from smml.kernels import KernelSVC
    try:
        from sklearnex.svm import SVC as ISVC
    except ImportError:   # the peer is optional
        ISVC = None

    rows, ratios = [], {}
    d, C, cache = 20, 1.0, 1024
    gamma = 1.0 / d                       # sklearn's "scale" on standard data (003's width d / 2)
    for m in ([2000, 10000] if quick else [5000, 50000]):
        X, y = _sphere(m, d)
        Xt, yt = _sphere(10000, d, seed=1)
        fns = {"smml": lambda: KernelSVC(C=C, gamma=gamma, cache_size=cache, n_jobs=N_THREADS).fit(X, y),
               "sklearn": lambda: SVC(C=C, gamma=gamma, cache_size=cache).fit(X, y)}
        if ISVC is not None:
            fns["intelex"] = lambda: ISVC(C=C, gamma=gamma, cache_size=cache).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            best, out = _interleaved(fns, 1 if (quick or m > 10000) else 3)
        lam = 1.0 / (C * m)
        res = {}
        for k, est in out.items():      # every model: score = sum dual_coef_ K(sv, x) + intercept_, > 0: +1
            sv, coef, b = est.support_vectors_, est.dual_coef_[0], est.intercept_[0]
            res[k] = _objective_and_acc(gamma, X, y, Xt, yt, sv, coef, b, lam) + (len(sv),)
        F_ref = res["sklearn"][0]
        for k in fns:
            rows.append(dict(m=m, impl=k, t=best[k], F=res[k][0], dF=(res[k][0] - F_ref) / F_ref,
                             acc=res[k][1], nsv=res[k][2], vs_sk=best["sklearn"] / best[k],
                             vs_ix=best["intelex"] / best[k] if "intelex" in best else None))
        ratios[m] = {k: best[k] / best["smml"] for k in fns if k != "smml"}
        del out
    print_table(f"KernelSVC fit, m x {d}, sphere target, Gaussian gamma={gamma:g} (003's width {1 / (2 * gamma):g}), "
                f"C={C:g}, tol 1e-3, cache {cache} MB, {N_THREADS} threads; load {_load()}", rows,
                [("m", "m", "{}"), ("impl", "implementation", "{}"), ("t", "fit s", "{:.3f}"),
                 ("F", "003 objective F", "{:.8f}"), ("dF", "rel. to sklearn", "{:+.1e}"),
                 ("acc", "test acc", "{:.4f}"), ("nsv", "n SV", "{}"),
                 ("vs_sk", "speed vs sklearn", "{:.2f}x"), ("vs_ix", "speed vs intelex", "{:.2f}x")])
    return ratios


def bench_svc_similar():
    """KernelSVC against intelex alone on shapes like the target's 50,000 x 20 (``--similar``):
    the same sphere target and relative Gaussian gamma (gamma = 1 / d), 2 interleaved rounds."""
    from smml.kernels import KernelSVC
    try:
        from sklearnex.svm import SVC as ISVC
    except ImportError:
        print("## KernelSVC similar shapes: scikit-learn-intelex is not installed")
        return
    rows = []
    for m, d in [(30000, 20), (80000, 20), (50000, 10), (50000, 40)]:
        X, y = _sphere(m, d)
        gamma = 1.0 / d
        fns = {"smml": lambda: KernelSVC(C=1.0, gamma=gamma, cache_size=1024, n_jobs=N_THREADS).fit(X, y),
               "intelex": lambda: ISVC(C=1.0, gamma=gamma, cache_size=1024).fit(X, y)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            best, out = _interleaved(fns, 2)
        rows.append(dict(shape=f"{m} x {d}", smml=best["smml"], ix=best["intelex"],
                         nsv=f"{len(out['smml'].support_)} / {out['intelex'].support_.size}",
                         vs=best["intelex"] / best["smml"]))
        del out
    print_table(f"KernelSVC fit on similar shapes, sphere target, gamma = 1/d, C=1, tol 1e-3, cache 1024 MB, "
                f"{N_THREADS} threads, best of 2 interleaved rounds; load {_load()}", rows,
                [("shape", "m x d", "{}"), ("smml", "smml s", "{:.3f}"), ("ix", "intelex s", "{:.3f}"),
                 ("nsv", "n SV smml / intelex", "{}"), ("vs", "speed vs intelex", "{:.2f}x")])


# ---- KernelPerceptron / KernelPegasos: time to a training error --------------------------------

def _first_reaching(make, grid, X, y):
    """(parameter, fit seconds, fitted) of the first grid value whose fit has training error <= TARGET_ERR."""
    for v in grid:
        t0 = time.perf_counter()
        est = make(v).fit(X, y)
        dt = time.perf_counter() - t0
        if np.mean(est.predict(X) != y) <= TARGET_ERR:
            return v, dt, est
    return None, float("nan"), None


def _within(make, grid, X, y, budget):
    """The fitted model of the largest grid value whose fit takes <= budget seconds."""
    last = None
    for v in grid:
        t0 = time.perf_counter()
        est = make(v).fit(X, y)
        if time.perf_counter() - t0 > budget:
            break
        last = (v, est)
    return last


def bench_online(quick):
    from smml.kernels import KernelPegasos, KernelPerceptron, KernelSVC
    from smml.reference import kernels as R

    m = 2000 if quick else 5000
    d = 20
    X, y = _sphere(m, d)
    Xt, yt = _sphere(5000, d, seed=1)
    gamma, lam = 1.0 / d, 1.0 / m         # 003's width d / 2; C = 1 / (lam m)
    t_svc, svc = best_time(lambda: KernelSVC(C=1.0 / (lam * m), gamma=gamma, n_jobs=N_THREADS).fit(X, y),
                           repeat=2)
    rows = [dict(impl="KernelSVC (exact, lam = 1/m)", param="-", t=t_svc, tr=np.mean(svc.predict(X) != y),
                 te=np.mean(svc.predict(Xt) == yt), ref=None)]
    sub = 300
    Kf = R.make_kernel("gaussian", gamma=1 / (2 * gamma))      # the reference keeps 003's width
    perc = lambda e: KernelPerceptron(gamma=gamma, max_iter=e, n_jobs=N_THREADS)  # noqa: E731
    e, t, est = _first_reaching(perc, range(1, 200), X, y)
    if est is not None:
        t_ref, _ = best_time(lambda: R.kernel_perceptron(X[:sub], list(y[:sub]), [list(range(sub))] * e, Kf),
                             repeat=1)
        rows.append(dict(impl=f"KernelPerceptron ({est.n_mistakes_} mistakes)", param=f"{e} epochs", t=t,
                         tr=np.mean(est.predict(X) != y), te=np.mean(est.predict(Xt) == yt),
                         ref=t_ref * (m / sub) ** 2))
    peg = lambda k: KernelPegasos(alpha=lam, max_iter=k, gamma=gamma, random_state=0, n_jobs=N_THREADS)  # noqa: E731
    grid = [int(m * 2 ** (j / 2)) for j in range(-2, 16)]
    k, t, est = _first_reaching(peg, grid, X, y)
    if est is not None:
        steps = [int(i) for i in np.random.default_rng(0).integers(0, sub, int(k * sub / m))]
        t_ref, _ = best_time(lambda: R.kernel_pegasos(X[:sub], list(y[:sub]), steps, lam, Kf), repeat=1)
        rows.append(dict(impl="KernelPegasos", param=f"T={k}", t=t, tr=np.mean(est.predict(X) != y),
                         te=np.mean(est.predict(Xt) == yt), ref=t_ref * (m / sub) ** 2))
    for name, make, g in [("KernelPerceptron", perc, range(1, 200)), ("KernelPegasos", peg, grid)]:
        got = _within(make, g, X, y, t_svc)
        if got is not None:
            rows.append(dict(impl=f"{name} at KernelSVC's fit time", param=str(got[0]), t=t_svc,
                             tr=np.mean(got[1].predict(X) != y), te=np.mean(got[1].predict(Xt) == yt), ref=None))
    for r in rows:
        r["vs_ref"] = r["ref"] / r["t"] if r.get("ref") else None
    print_table(f"Time to a training error <= {TARGET_ERR:.0%}, {m} x {d} sphere target, Gaussian gamma={gamma:g}, "
                f"{N_THREADS} threads (references: {sub} rows, extrapolated by m^2); load {_load()}", rows,
                [("impl", "learner", "{}"), ("param", "run", "{}"), ("t", "fit s", "{:.3f}"),
                 ("tr", "train err", "{:.4f}"), ("te", "test acc", "{:.4f}"),
                 ("ref", "reference s (extrap.)", "{:.0f}"), ("vs_ref", "speed vs reference", "{:.0f}x")])


# ---- per-call predict ----------------------------------------------------------------------

def bench_predict_overhead(quick):
    from sklearn.kernel_ridge import KernelRidge as SkKR
    from sklearn.svm import SVC

    from smml.kernels import KernelRidge, KernelSVC

    X, y = _sphere(2000 if quick else 5000, 20)
    yr = np.sin(X[:, 0])
    pairs = [("KernelSVC", KernelSVC(gamma=0.05).fit(X, y), SVC(gamma=0.05).fit(X, y)),
             ("KernelRidge", KernelRidge(gamma=0.05).fit(X, yr), SkKR(kernel="rbf", gamma=0.05).fit(X, yr))]
    rows = []
    for name, ours, peer in pairs:
        for r in (1, 5):
            Q = X[:r].copy()
            t_s = per_call_time(lambda: ours.predict(Q), 50 if quick else 200)
            t_k = per_call_time(lambda: peer.predict(Q), 50 if quick else 200)
            rows.append(dict(model=name, rows=r, s=1e6 * t_s, k=1e6 * t_k, vs=t_k / t_s))
    print_table(f"predict on a few rows (us per call); load {_load()}", rows,
                [("model", "model", "{}"), ("rows", "rows", "{}"), ("s", "smml us", "{:.0f}"),
                 ("k", "sklearn us", "{:.0f}"), ("vs", "speed vs sklearn", "{:.2f}x")])


def main(quick=False, similar=False):
    print(environment_line(N_THREADS) + f"; load {_load()}")
    if similar:
        bench_svc_similar()
        return
    bench_gram(quick)
    bench_ridge(quick)
    bench_svc(quick)
    bench_online(quick)
    bench_predict_overhead(quick)


if __name__ == "__main__":
    main(quick="--quick" in sys.argv, similar="--similar" in sys.argv)
