"""Risk tools: smml.losses (vectorised numpy) and smml.model_selection.cv_estimate
against the plain-Python reference and scikit-learn's metrics / cross_val_score.

The losses have no compiled kernel: the point is the vectorised path vs the
per-example reference. For CV the learner is a tiny nearest-centroid classifier
(defined here), so the timings measure the CV machinery.
"""
import math

import numpy as np
from _common import best_time, environment_line, print_table
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn import metrics
from sklearn.model_selection import KFold, cross_val_score

from smml import losses
from smml.model_selection import cv_estimate
from smml.reference import losses as ref_losses
from smml.reference import model_selection as ref_ms


class Centroid(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        return self

    def predict(self, X):
        d = ((X[:, None, :] - self.means_[None]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(d, axis=1)]


def bench_losses(quick):
    n = 100_000 if quick else 1_000_000
    n_ref = 20_000
    rng = np.random.default_rng(0)
    y_pm = rng.choice([-1.0, 1.0], n)
    s = rng.normal(size=n)
    y01 = (y_pm > 0).astype(float)
    p = rng.uniform(0.01, 0.99, n)
    yi, pi = rng.integers(0, 3, n), rng.integers(0, 3, n)
    cases = [
        ("zero_one", lambda: losses.zero_one(yi, pi), ref_losses.zero_one, yi, pi,
         lambda: metrics.zero_one_loss(yi, pi)),
        ("square", lambda: losses.square(s, p), ref_losses.square, s, p,
         lambda: metrics.mean_squared_error(s, p)),
        ("absolute", lambda: losses.absolute(s, p), ref_losses.absolute, s, p,
         lambda: metrics.mean_absolute_error(s, p)),
        ("logarithmic", lambda: losses.logarithmic(y01, p), ref_losses.logarithmic, y01, p,
         lambda: metrics.log_loss(y01, p)),
        ("hinge", lambda: losses.hinge(y_pm, s), ref_losses.hinge, y_pm, s,
         lambda: metrics.hinge_loss(y_pm, s)),
        ("logistic", lambda: losses.logistic(y_pm, s), ref_losses.logistic, y_pm, s, None),
        ("exponential", lambda: losses.exponential(y_pm, s), ref_losses.exponential, y_pm, s, None),
    ]
    rows = []
    for name, fast, slow, a, b, peer in cases:
        t, out = best_time(fast)
        al, bl = a[:n_ref].tolist(), b[:n_ref].tolist()
        t_ref, ref_out = best_time(lambda: ref_losses.over_lists(slow, al, bl), repeat=1)
        assert np.allclose(out[:n_ref], ref_out)
        t_ref *= n / n_ref
        t_peer = None
        if peer is not None:
            t_peer, peer_out = best_time(peer)
            assert math.isclose(float(np.mean(out)), float(peer_out), rel_tol=1e-9)
        rows.append(dict(loss=name, n=n, ms=1e3 * t, ref=t_ref / t,
                         peer=None if t_peer is None else t_peer / t))
    print_table(f"losses, n = {n} (reference on {n_ref} rows, extrapolated)", rows,
                [("loss", "loss", "{}"), ("n", "n", "{}"), ("ms", "smml ms", "{:.2f}"),
                 ("ref", "x faster than reference (extrap.)", "{:.0f}"),
                 ("peer", "x faster than sklearn.metrics (mean)", "{:.2f}")])


def bench_cv(quick):
    rng = np.random.default_rng(0)
    rows = []
    for m, d, K in ([(2000, 10, 5), (300, 5, 300)] if quick else [(20000, 20, 10), (1000, 10, 1000)]):
        X = rng.normal(size=(m, d))
        y = (X[:, 0] + rng.normal(size=m) > 0).astype(int)
        t, est = best_time(lambda: cv_estimate(Centroid(), X, y, K=K))
        t_peer, sc = best_time(lambda: cross_val_score(Centroid(), X, y, cv=KFold(K),
                                                       scoring=lambda e, A, b: np.mean(e.predict(A) != b)))
        assert math.isclose(est, float(np.mean(sc)), rel_tol=1e-12)
        sub = min(m, 300)
        A = lambda S: (lambda c: lambda x: c.predict(np.array([x]))[0])(  # noqa: E731
            Centroid().fit(np.array([x for x, _ in S]), np.array([t for _, t in S])))
        S = list(zip(X[:sub].tolist(), y[:sub].tolist()))
        K_sub = min(K, sub)
        t_ref, _ = best_time(lambda: ref_ms.cv_estimate(A, S, K_sub, ref_losses.zero_one), repeat=1)
        t_ref *= (m / sub) * (K / K_sub)  # fits scale with K, predictions with m
        rows.append(dict(shape=f"{m}x{d}", K=K, ms=1e3 * t, peer=t_peer / t, ref=t_ref / t))
    print_table("cv_estimate (nearest-centroid learner; reference on <= 300 rows, extrapolated)", rows,
                [("shape", "m x d", "{}"), ("K", "K", "{}"), ("ms", "smml ms", "{:.1f}"),
                 ("peer", "x vs sklearn cross_val_score", "{:.2f}"),
                 ("ref", "x vs reference (extrap.)", "{:.0f}")])


def main(quick=False):
    print(environment_line(1))
    bench_losses(quick)
    bench_cv(quick)


if __name__ == "__main__":
    import sys

    main(quick="--quick" in sys.argv)
