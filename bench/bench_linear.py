"""Benchmark of smml.linear against scikit-learn and the plain-Python references.

Data: 200,000 x 100 float64 dense (``quick``: 20,000 x 100), labels from a random
hyperplane through the origin, separable and with 5% of the labels flipped.
Peers measured in the same run: Perceptron(tol=None, shuffle=False) per
epoch, SGDClassifier(loss="hinge") and LinearSVC against Pegasos at equal SVM
objective, LogisticRegression(lbfgs), Ridge. The references run on a subset and
their time is extrapolated (labelled so).

Run: ``.venv/bin/python bench/run.py linear`` or ``python bench/bench_linear.py [--quick]``.
"""
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_time, environment_line, print_table  # noqa: E402


def _data(n, d, flip, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    u = rng.standard_normal(d)
    y = np.where(X @ u > 0, 1, -1)
    if flip:
        f = rng.random(n) < flip
        y[f] *= -1
    return X, y


def _bandwidth(X):
    """Streaming-read bandwidth (bytes/s): best of X.sum() and a 1-thread dot over X."""
    from threadpoolctl import threadpool_limits

    flat = X.reshape(-1)
    t_sum, _ = best_time(lambda: X.sum(), repeat=5)
    with threadpool_limits(1, user_api="blas"):
        t_dot, _ = best_time(lambda: flat @ flat, repeat=5)
    t = min(t_sum, t_dot)
    return X.nbytes / t, t


def _per_epoch(fit, k=11):
    """(seconds per epoch, seconds of a 1-epoch fit): (t(k epochs) - t(1 epoch)) / (k - 1)."""
    t1, _ = best_time(lambda: fit(1), repeat=5)
    tk, _ = best_time(lambda: fit(k), repeat=3)
    return max(tk - t1, 1e-9) / (k - 1), t1


def _kernel_epoch(X, y):
    """Best time of one call of smml's Perceptron epoch kernel (what an epoch of fit runs)."""
    from smml._core import _linear as K

    y8 = np.where(y > 0, 1, -1).astype(np.int8)
    order = np.arange(X.shape[0], dtype=np.intp)
    w = np.zeros(X.shape[1] + 1, dtype=X.dtype)
    t, _ = best_time(lambda: K.perceptron_epoch(X, y8, order, w, True), repeat=7)
    return t


def bench_perceptron(X, y, n_threads):
    from sklearn.linear_model import Perceptron as SkP

    from smml.linear import Perceptron
    from smml.reference import linear as R

    rows = []
    bw, t_stream = _bandwidth(X)
    X32 = X.astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk64, sk64_fit = _per_epoch(lambda k: SkP(tol=None, shuffle=False, max_iter=k).fit(X, y))
        sk32, sk32_fit = _per_epoch(lambda k: SkP(tol=None, shuffle=False, max_iter=k).fit(X32, y))
    sm64_fit, _ = best_time(lambda: Perceptron(max_iter=1).fit(X, y), repeat=5)
    sm32_fit, _ = best_time(lambda: Perceptron(max_iter=1).fit(X32, y), repeat=5)
    sm64, sm32 = _kernel_epoch(X, y), _kernel_epoch(X32, y)
    sub = 2000
    ys = list(y[:sub])
    t_ref, _ = best_time(lambda: R.perceptron_epoch(X[:sub], ys, range(sub), [0.0] * (X.shape[1] + 1)),
                         repeat=1)
    ref = t_ref * X.shape[0] / sub
    bw32 = X32.nbytes / sm32
    for name, t, fit, nbytes in [("smml float64", sm64, sm64_fit, X.nbytes),
                                 ("smml float32", sm32, sm32_fit, X32.nbytes),
                                 ("sklearn float64", sk64, sk64_fit, X.nbytes),
                                 ("sklearn float32 input", sk32, sk32_fit, X.nbytes)]:
        rows.append(dict(impl=name, epoch=1e3 * t, fit1=1e3 * fit, gbs=nbytes / t / 1e9,
                         frac=(nbytes / t) / bw, vs_sk=sk64 / t))
    rows.append(dict(impl=f"reference (extrapolated from {sub} rows)", epoch=1e3 * ref, fit1=None,
                     gbs=None, frac=None, vs_sk=sk64 / ref))
    print_table(f"Perceptron epoch (smml: the epoch kernel; sklearn: (fit(11 epochs) - fit(1)) / 10), "
                f"{X.shape[0]} x {X.shape[1]}, 5% flipped labels; "
                f"streaming read {bw / 1e9:.1f} GB/s ({1e3 * t_stream:.1f} ms for {X.nbytes / 1e6:.0f} MB)",
                rows, [("impl", "implementation", "{}"), ("epoch", "ms/epoch", "{:.2f}"),
                       ("fit1", "1-epoch fit ms", "{:.1f}"), ("gbs", "GB/s", "{:.1f}"),
                       ("frac", "of stream bw", "{:.0%}"), ("vs_sk", "speed-up vs sklearn f64", "{:.2f}x")])
    return dict(perceptron_f64=sk64 / sm64, perceptron_f32=sk64 / sm32, bw=bw, bw32=bw32)


def _svm_objective(w, X, y, lam):
    return 0.5 * lam * (w @ w) + np.mean(np.maximum(0.0, 1.0 - y * (X @ w)))


def bench_pegasos(X, y, lam):
    from sklearn.linear_model import SGDClassifier
    from sklearn.svm import LinearSVC

    from smml.linear import Pegasos
    from smml.reference import linear as R

    m = X.shape[0]
    rows = []
    t_sgd, sgd = best_time(lambda: SGDClassifier(loss="hinge", alpha=lam, fit_intercept=False,
                                                 random_state=0).fit(X, y), repeat=2)
    F_sgd = _svm_objective(sgd.coef_[0], X, y, lam)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_svc, svc = best_time(lambda: LinearSVC(C=1.0 / (lam * m), loss="hinge", dual=True,
                                                 fit_intercept=False, max_iter=2000).fit(X, y), repeat=1)
    F_svc = _svm_objective(svc.coef_[0], X, y, lam)
    # the fewest Pegasos steps (epochs on a 2^(1/4) grid) reaching SGDClassifier's objective
    t_peg, F_peg, T = None, None, None
    for mult in [2 ** (k / 4) for k in range(0, 37)]:
        n_iter = int(mult * m)
        est = Pegasos(alpha=lam, max_iter=n_iter, fit_intercept=False, random_state=0).fit(X, y)
        F_peg, T = est.objective(X, y), n_iter
        if F_peg <= F_sgd:
            break
    t_peg, _ = best_time(lambda: Pegasos(alpha=lam, max_iter=T, fit_intercept=False, random_state=0).fit(X, y),
                         repeat=2)
    sub = 20000
    ys = list(y)
    t_ref, _ = best_time(lambda: R.pegasos(X, ys, np.random.default_rng(0).integers(0, m, sub), lam, False),
                         repeat=1)
    rows.append(dict(impl=f"smml Pegasos (T={T}, {T / m:g} epochs)", t=1e3 * t_peg, F=F_peg, vs=t_sgd / t_peg))
    rows.append(dict(impl=f"sklearn SGDClassifier(hinge, alpha={lam:g}) ({sgd.n_iter_} epochs)",
                     t=1e3 * t_sgd, F=F_sgd, vs=1.0))
    rows.append(dict(impl="sklearn LinearSVC(hinge, C=1/(lam m))", t=1e3 * t_svc, F=F_svc, vs=t_sgd / t_svc))
    rows.append(dict(impl=f"reference Pegasos (extrapolated from {sub} steps)", t=1e3 * t_ref * T / sub,
                     F=None, vs=t_sgd / (t_ref * T / sub)))
    print_table(f"Pegasos vs peers at equal SVM objective F(w) = lam/2 ||w||^2 + mean hinge, lam={lam:g}, "
                f"{m} x {X.shape[1]}, no intercept", rows,
                [("impl", "implementation", "{}"), ("t", "fit ms", "{:.1f}"), ("F", "F(w)", "{:.6f}"),
                 ("vs", "speed vs SGDClassifier", "{:.2f}x")])
    print("(both times are whole fits on the same data: smml's includes validation and drawing its T random "
          "example indices; T is the first point of a 2^(1/4)-epoch grid where smml's F(w) <= SGDClassifier's)")
    return dict(pegasos=t_sgd / t_peg if F_peg <= F_sgd else float("nan"))


def bench_logistic(X, y, lam, n_threads):
    from sklearn.linear_model import LogisticRegression as SkLog

    from smml.linear import LogisticRegression
    from smml.reference import linear as R

    m = X.shape[0]
    t_sm, sm = best_time(lambda: LogisticRegression(alpha=lam, tol=1e-6).fit(X, y), repeat=2)
    t_sk, sk = best_time(lambda: SkLog(C=1.0 / (lam * m), tol=1e-6, max_iter=1000).fit(X, y), repeat=2)
    obj_sk = sm.__class__(lam=lam)
    obj_sk.classes_, obj_sk.coef_, obj_sk.intercept_ = sk.classes_, sk.coef_, sk.intercept_
    obj_sk.n_features_in_, obj_sk.n_jobs = X.shape[1], None
    sub = 2000
    w0 = [0.0] * (X.shape[1] + 1)
    t_ref, _ = best_time(lambda: R.logistic_objective_grad(X[:sub], list(y[:sub]), w0, lam), repeat=1)
    ref = t_ref * m / sub * sm.n_iter_
    rows = [dict(impl=f"smml LogisticRegression (L-BFGS, {sm.n_iter_} it, {n_threads} threads)", t=1e3 * t_sm,
                 F=sm.objective(X, y), vs=t_sk / t_sm),
            dict(impl=f"sklearn LogisticRegression(lbfgs, C=1/(lam m)) ({sk.n_iter_[0]} it)", t=1e3 * t_sk,
                 F=obj_sk.objective(X, y), vs=1.0),
            dict(impl=f"reference (loss+grad on {sub} rows x {sm.n_iter_} it, extrapolated)", t=1e3 * ref,
                 F=None, vs=t_sk / ref)]
    print_table(f"Logistic regression, lam={lam:g}, {m} x {X.shape[1]}, tol 1e-6", rows,
                [("impl", "implementation", "{}"), ("t", "fit ms", "{:.1f}"), ("F", "objective", "{:.8f}"),
                 ("vs", "speed vs sklearn", "{:.2f}x")])
    return dict(logistic=t_sk / t_sm)


def bench_ridge(X, y_real):
    from sklearn.linear_model import Ridge

    from smml.linear import RidgeRegression
    from smml.reference import linear as R

    t_sm, sm = best_time(lambda: RidgeRegression(alpha=1.0).fit(X, y_real), repeat=3)
    t_sk, sk = best_time(lambda: Ridge(alpha=1.0).fit(X, y_real), repeat=3)
    sub, dsub = 300, 30
    t_ref, _ = best_time(lambda: R.ridge_closed_form(X[:sub, :dsub], y_real[:sub], 1.0), repeat=1)
    # the reference's S^T S costs m d^2: extrapolate in m and d^2
    ref = t_ref * (X.shape[0] / sub) * (X.shape[1] / dsub) ** 2
    rows = [dict(impl="smml RidgeRegression(alpha=1)", t=1e3 * t_sm, diff=0.0, vs=t_sk / t_sm),
            dict(impl="sklearn Ridge(alpha=1)", t=1e3 * t_sk, diff=float(np.max(np.abs(sk.coef_ - sm.coef_))),
                 vs=1.0),
            dict(impl=f"reference closed form ({sub} x {dsub}, extrapolated)", t=1e3 * ref, diff=None,
                 vs=t_sk / ref)]
    print_table(f"Ridge regression, {X.shape[0]} x {X.shape[1]}", rows,
                [("impl", "implementation", "{}"), ("t", "fit ms", "{:.1f}"),
                 ("diff", "max |coef - smml coef|", "{:.1e}"), ("vs", "speed vs sklearn", "{:.2f}x")])
    return dict(ridge=t_sk / t_sm)


def main(quick=False):
    from smml._threads import effective_n_threads

    n = 20000 if quick else 200000
    d = 100
    n_threads = effective_n_threads()
    print(environment_line(n_threads))
    X, y_flip = _data(n, d, 0.05)
    _, y_sep = _data(n, d, 0.0)
    print(f"# data: {n} x {d} float64 ({X.nbytes / 1e6:.0f} MB), labels sign(u.x) (separable) "
          f"and with 5% flipped")
    out = {}
    out.update(bench_perceptron(X, y_flip, n_threads))
    out.update(bench_pegasos(X, y_flip, lam=1e-4))
    out.update(bench_logistic(X, y_flip, lam=1e-4, n_threads=n_threads))
    y_real = X @ np.random.default_rng(1).standard_normal(d) + np.random.default_rng(2).standard_normal(n)
    out.update(bench_ridge(X, y_real))
    # separable labels: the Perceptron converges
    from smml.linear import Perceptron

    t, est = best_time(lambda: Perceptron(fit_intercept=False, max_iter=200).fit(X, y_sep), repeat=1)
    err = float(np.mean(est.predict(X) != y_sep))
    print(f"\n# separable labels (tiny margin): Perceptron converged={est.converged_} after {est.n_iter_} "
          f"epochs (max 200), {est.n_updates_} updates, training error {err:.4f}, {1e3 * t:.0f} ms")
    targets = [("Perceptron epoch f64 vs sklearn", out["perceptron_f64"], 1.2),
               ("Perceptron epoch f32 input vs sklearn f64", out["perceptron_f32"], 2.0),
               ("Pegasos to SGDClassifier's objective", out["pegasos"], 1.5),
               ("LogisticRegression vs sklearn", out["logistic"], 1.0),
               ("Ridge vs sklearn", out["ridge"], 1.0)]
    print_table("Targets (speed-up vs scikit-learn; the machine may be shared/noisy)",
                [dict(what=w, got=g, target=t, ok="yes" if g >= t else "NO") for w, g, t in targets],
                [("what", "what", "{}"), ("got", "measured", "{:.2f}x"), ("target", "target", ">= {:.1f}x"),
                 ("ok", "met", "{}")])
    return out


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
