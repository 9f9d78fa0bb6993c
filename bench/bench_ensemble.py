"""Ensembles: AdaBoost with stumps and random forests, smml vs scikit-learn vs the reference.

Shapes (issue 6): 50,000 x 32 float64, two classes (make_classification), 2 threads.

- AdaBoost, 200 rounds: smml ``AdaBoostClassifier()`` (compiled stump kernel) vs scikit-learn
  ``AdaBoostClassifier(estimator=DecisionTreeClassifier(max_depth=1), n_estimators=200)``,
  fitted in the same run; both training errors are printed (scikit-learn's stumps use Gini and
  its SAMME weights are twice the notes' w_i, so the trajectories differ slightly). The plain-Python
  reference (``smml.reference.ensemble.AdaBoostStumps``) runs a few rounds on a subset and is
  extrapolated (per round cost ~ d n log n), labelled as such.
  smml also runs on 1 thread: on a loaded machine libgomp's default spin-waiting makes
  the 2-thread run slower (OMP_WAIT_POLICY=passive avoids that).
- Random forest, 100 trees: smml ``RandomForestClassifier(n_jobs=2)`` vs scikit-learn
  ``RandomForestClassifier(n_jobs=2)``; test accuracy on 10,000 held-out rows.
"""
import math

import numpy as np

from _common import best_time, environment_line, print_table

N_THREADS = 2


def _data(m, d, m_test, seed=0):
    from sklearn.datasets import make_classification

    X, y = make_classification(m + m_test, d, n_informative=d // 2, n_redundant=d // 4,
                               flip_y=0.05, random_state=seed)
    return X[:m], y[:m], X[m:], y[m:]


def bench_adaboost(X, y, rounds, ref_rows, ref_rounds):
    from sklearn.ensemble import AdaBoostClassifier as SkAda
    from sklearn.tree import DecisionTreeClassifier

    from smml.ensemble import AdaBoostClassifier
    from smml.reference.ensemble import AdaBoostStumps

    t_smml, a = best_time(lambda: AdaBoostClassifier(n_estimators=rounds, n_jobs=N_THREADS).fit(X, y), repeat=3)
    t_one, a1 = best_time(lambda: AdaBoostClassifier(n_estimators=rounds, n_jobs=1).fit(X, y), repeat=3)
    t_sk, s = best_time(lambda: SkAda(estimator=DecisionTreeClassifier(max_depth=1),
                                      n_estimators=rounds).fit(X, y), repeat=1)
    Xr, yr = X[:ref_rows], y[:ref_rows]
    t_ref_sub, _ = best_time(lambda: AdaBoostStumps(n_estimators=ref_rounds).fit(Xr, yr), repeat=1)
    m = X.shape[0]
    t_ref = t_ref_sub * (rounds / ref_rounds) * (m * math.log(m)) / (ref_rows * math.log(ref_rows))
    rows = [
        dict(impl="smml AdaBoostClassifier (stumps)", t=t_smml, ratio=1.0, err=1 - a.score(X, y)),
        dict(impl="smml AdaBoostClassifier (stumps), 1 thread", t=t_one, ratio=t_one / t_smml, err=1 - a1.score(X, y)),
        dict(impl="sklearn AdaBoost(DecisionTree(max_depth=1))", t=t_sk, ratio=t_sk / t_smml, err=1 - s.score(X, y)),
        dict(impl=f"reference (extrapolated from {ref_rows} rows x {ref_rounds} rounds)", t=t_ref,
             ratio=t_ref / t_smml, err=None),
    ]
    print_table(f"AdaBoost, {m} x {X.shape[1]} float64, {rounds} rounds, {N_THREADS} threads "
                f"(ratio = time / smml time)", rows,
                [("impl", "implementation", "{}"), ("t", "fit s", "{:.3f}"), ("ratio", "x smml", "{:.1f}"),
                 ("err", "training error", "{:.4f}")])
    print(f"smml bound prod sqrt(1-4 gamma^2) after {len(a.estimator_weights_)} rounds: "
          f"{a.training_error_bound_[-1]:.4f}; stop reason: {a.stop_reason_}")


def bench_forest(X, y, Xt, yt, n_trees):
    from sklearn.ensemble import RandomForestClassifier as SkRF

    from smml.ensemble import RandomForestClassifier

    t_smml, f = best_time(lambda: RandomForestClassifier(n_estimators=n_trees, n_jobs=N_THREADS,
                                                         random_state=0).fit(X, y), repeat=1)
    t_sk, s = best_time(lambda: SkRF(n_estimators=n_trees, n_jobs=N_THREADS, random_state=0).fit(X, y), repeat=1)
    p_smml, _ = best_time(lambda: f.predict(Xt), repeat=1)
    p_sk, _ = best_time(lambda: s.predict(Xt), repeat=1)
    rows = [
        dict(impl="smml RandomForestClassifier", t=t_smml, ratio=1.0, p=p_smml, acc=f.score(Xt, yt)),
        dict(impl="sklearn RandomForestClassifier", t=t_sk, ratio=t_sk / t_smml, p=p_sk, acc=s.score(Xt, yt)),
    ]
    print_table(f"Random forest, {X.shape[0]} x {X.shape[1]} float64, {n_trees} trees, {N_THREADS} threads, "
                f"test accuracy on {len(yt)} rows", rows,
                [("impl", "implementation", "{}"), ("t", "fit s", "{:.2f}"), ("ratio", "x smml", "{:.2f}"),
                 ("p", "predict s", "{:.3f}"), ("acc", "test accuracy", "{:.4f}")])


def main(quick=False):
    print(environment_line(N_THREADS))
    if quick:
        X, y, Xt, yt = _data(5000, 32, 2000)
        bench_adaboost(X, y, rounds=20, ref_rows=300, ref_rounds=2)
        bench_forest(X, y, Xt, yt, n_trees=10)
    else:
        X, y, Xt, yt = _data(50_000, 32, 10_000)
        bench_adaboost(X, y, rounds=200, ref_rows=2000, ref_rounds=2)
        bench_forest(X, y, Xt, yt, n_trees=100)


if __name__ == "__main__":
    import sys

    main(quick="--quick" in sys.argv)
