"""Per-call overhead: ``predict`` on a handful of rows, every family, smml vs scikit-learn.

Pipelines call ``predict`` on a few rows at a time, so the fixed cost of a call
(validation, dispatch, thread start-up) matters as much as the kernels. Each
model is fitted once on 5,000 x 20 float64 (binary labels, or a real target for
the regressors); the table gives microseconds per ``predict`` call on 1 and on
5 rows, and scikit-learn's time divided by smml's (> 1: smml is faster).

Run: ``python bench/run.py overhead`` or ``python bench/bench_overhead.py``.
"""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import environment_line, per_call_time, print_table  # noqa: E402


def _pairs():
    from sklearn import ensemble as ske, linear_model as skl, neighbors as skn, tree as skt

    from smml import ensemble, linear, neighbors, tree

    return [
        ("KNNClassifier(n_neighbors=5)", neighbors.KNNClassifier(n_neighbors=5), skn.KNeighborsClassifier(5, algorithm="brute"), "clf"),
        ("TreeClassifier(max_depth=10)", tree.TreeClassifier(max_depth=10, random_state=0),
         skt.DecisionTreeClassifier(max_depth=10, random_state=0), "clf"),
        ("TreeRegressor(max_depth=10)", tree.TreeRegressor(max_depth=10, random_state=0),
         skt.DecisionTreeRegressor(max_depth=10, random_state=0), "reg"),
        ("Perceptron", linear.Perceptron(max_iter=5), skl.Perceptron(max_iter=5, tol=None), "clf"),
        ("LogisticRegression", linear.LogisticRegression(alpha=1e-3), skl.LogisticRegression(), "clf"),
        ("RidgeRegression", linear.RidgeRegression(alpha=1.0), skl.Ridge(alpha=1.0), "reg"),
        ("AdaBoostClassifier(T=100)", ensemble.AdaBoostClassifier(n_estimators=100),
         ske.AdaBoostClassifier(n_estimators=100), "clf"),
        ("RandomForestClassifier(T=100)", ensemble.RandomForestClassifier(n_estimators=100, random_state=0),
         ske.RandomForestClassifier(n_estimators=100, random_state=0, n_jobs=2), "clf"),
    ]


def main(quick=False):
    from smml import effective_n_threads

    rng = np.random.default_rng(0)
    m, d = (2000, 20) if quick else (5000, 20)
    X = rng.standard_normal((m, d))
    y_clf = (X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.5).astype(int)
    y_reg = X[:, 0] + np.sin(X[:, 1])
    print(environment_line(effective_n_threads()))
    rows = []
    calls = 50 if quick else 200
    for name, ours, peer, task in _pairs():
        y = y_clf if task == "clf" else y_reg
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours.fit(X, y)
            peer.fit(X, y)
        row = dict(model=name)
        for r in (1, 5):
            few = X[:r].copy()
            t_ours = per_call_time(lambda: ours.predict(few), calls)
            t_peer = per_call_time(lambda: peer.predict(few), calls)
            row[f"smml{r}"] = 1e6 * t_ours
            row[f"sk{r}"] = 1e6 * t_peer
            row[f"ratio{r}"] = t_peer / t_ours
        rows.append(row)
    print_table(f"predict() per call, model fitted on {m} x {d} float64 (microseconds; ratio = sklearn / smml)",
                rows, [("model", "model", "{}"),
                       ("smml1", "smml 1 row", "{:.1f}"), ("sk1", "sklearn 1 row", "{:.1f}"),
                       ("ratio1", "ratio", "{:.2f}"),
                       ("smml5", "smml 5 rows", "{:.1f}"), ("sk5", "sklearn 5 rows", "{:.1f}"),
                       ("ratio5", "ratio", "{:.2f}")])


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
