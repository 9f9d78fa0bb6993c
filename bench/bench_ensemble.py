"""Ensembles: AdaBoost with stumps and random forests, smml vs scikit-learn vs the reference.

Shapes (issue 6): 50,000 x 32 float64, two classes (make_classification), 2 threads.

- AdaBoost, 200 rounds: smml ``AdaBoostClassifier()`` (compiled stump kernel) vs scikit-learn
  ``AdaBoostClassifier(estimator=DecisionTreeClassifier(max_depth=1), n_estimators=200)``,
  fitted in the same run; both training errors are printed (scikit-learn's stumps use Gini and
  smml's default stump the weighted training error, so the trajectories differ slightly). Also
  smml ``AdaBoostClassifier(estimator=TreeClassifier(max_depth=1, criterion="gini",
  splitter="exact"))``: the same algorithm as scikit-learn's (binary SAMME is the notes' AdaBoost
  with every w_i doubled, which leaves sign(F) and the distributions P_i unchanged), so its staged
  training errors are compared with scikit-learn's round by round. The plain-Python
  reference (``smml.reference.adaboost.AdaBoostStumps``) runs a few rounds on a subset and is
  extrapolated (per round cost ~ d n log n), labelled as such.
  smml also runs on 1 thread: on a loaded machine libgomp's default spin-waiting makes
  the 2-thread run slower (OMP_WAIT_POLICY=passive avoids that).
- Random forest, 100 trees: smml ``RandomForestClassifier(n_jobs=2)`` vs scikit-learn
  ``RandomForestClassifier(n_jobs=2)``; test accuracy on 10,000 held-out rows.
- ``--forest-accuracy`` (issue 9): the forest's splitters on two data sets, bench_tree's
  nonlinear rule with 10% label noise and this module's make_classification data (50,000 x 32,
  10,000 test rows), 100 trees, 2 threads: smml with splitter "exact" (the forest's "auto") and
  "hist", scikit-learn, and scikit-learn-intelex when installed; mean fit time and mean test
  accuracy over random_state 0, 1, 2 (the fits interleaved seed by seed). With ``--similar``:
  the same on shapes like them: the nonlinear rule on 100,000 x 16, make_classification on
  20,000 x 64 and with 3 classes on 50,000 x 32.
- Forest predict (issue 30, also ``--forest-predict`` alone): a forest's trees all predicted in one
  compiled call (``_tree_predict.forest_sum``) against the loop over the members' own predict (the
  path before it, still the one for members other than smml trees: ``_member_votes`` /
  ``_member_mean``), in the same process, interleaved round by round: predict on 1 row (each call
  a different row of the test set, mean per call) and on 10,000 rows, for
  ``RandomForestClassifier`` and ``RandomForestRegressor`` (100 trees, max_depth None, 20,000 x 32
  float64, 2 threads); both give the same outputs, bit for bit (checked).
"""
import math

import numpy as np

from _common import best_time, environment_line, interleaved_best, print_table

N_THREADS = 2


def _data(m, d, m_test, seed=0, n_classes=2):
    from sklearn.datasets import make_classification

    X, y = make_classification(m + m_test, d, n_informative=d // 2, n_redundant=d // 4,
                               flip_y=0.05, n_classes=n_classes, random_state=seed)
    return X[:m], y[:m], X[m:], y[m:]


def bench_adaboost(X, y, rounds, ref_rows, ref_rounds):
    from sklearn.ensemble import AdaBoostClassifier as SkAda
    from sklearn.tree import DecisionTreeClassifier

    from smml.ensemble import AdaBoostClassifier
    from smml.reference.adaboost import AdaBoostStumps
    from smml.tree import TreeClassifier

    t_smml, a = best_time(lambda: AdaBoostClassifier(n_estimators=rounds, n_jobs=N_THREADS).fit(X, y), repeat=3)
    t_one, a1 = best_time(lambda: AdaBoostClassifier(n_estimators=rounds, n_jobs=1).fit(X, y), repeat=3)
    t_sk, s = best_time(lambda: SkAda(estimator=DecisionTreeClassifier(max_depth=1),
                                      n_estimators=rounds).fit(X, y), repeat=1)
    gini_stump = TreeClassifier(max_depth=1, criterion="gini", splitter="exact")
    t_gini, g = best_time(lambda: AdaBoostClassifier(estimator=gini_stump, n_estimators=rounds,
                                                     n_jobs=N_THREADS).fit(X, y), repeat=1)
    Xr, yr = X[:ref_rows], y[:ref_rows]
    t_ref_sub, _ = best_time(lambda: AdaBoostStumps(n_estimators=ref_rounds).fit(Xr, yr), repeat=1)
    m = X.shape[0]
    t_ref = t_ref_sub * (rounds / ref_rounds) * (m * math.log(m)) / (ref_rows * math.log(ref_rows))
    rows = [
        dict(impl="smml AdaBoostClassifier (stumps)", t=t_smml, ratio=1.0, err=1 - a.score(X, y)),
        dict(impl="smml AdaBoostClassifier (stumps), 1 thread", t=t_one, ratio=t_one / t_smml, err=1 - a1.score(X, y)),
        dict(impl="smml AdaBoost(TreeClassifier(max_depth=1, gini)) - same algorithm as sklearn", t=t_gini,
             ratio=t_gini / t_smml, err=1 - g.score(X, y)),
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
    _compare_staged(X, y, g, s)


def _gini_decrease(x, thr, ypm, P):
    """Decrease of the P-weighted Gini objective sum_leaves W_leaf 2 p (1 - p) by the split x <= thr."""
    def psi(mask):
        W = P[mask].sum()
        return 0.0 if W == 0 else 2.0 * P[mask & (ypm > 0)].sum() * P[mask & (ypm < 0)].sum() / W
    left = x <= thr
    return psi(np.ones(len(x), dtype=bool)) - psi(left) - psi(~left)


def _compare_staged(X, y, g, s):
    """Round-by-round training errors of smml's AdaBoost with Gini stumps vs scikit-learn's."""
    e_g = [int(np.sum(p != y)) for p in g.staged_predict(X)]
    e_s = [int(np.sum(p != y)) for p in s.staged_predict(X)]
    n = min(len(e_g), len(e_s))
    agree = sum(a == b for a, b in zip(e_g[:n], e_s[:n]))
    ratio = s.estimator_weights_[:n] / g.estimator_weights_[:n]
    print(f"smml AdaBoost(TreeClassifier(max_depth=1, gini, exact)) vs sklearn: staged training errors equal "
          f"in {agree} of {n} rounds ({len(e_g)} vs {len(e_s)} rounds fitted); sklearn's estimator weight / "
          f"smml's w_i in [{ratio.min():.6f}, {ratio.max():.6f}] (SAMME, K = 2: alpha_i = 2 w_i)")
    if agree < n:
        k = next(i for i in range(n) if e_g[i] != e_s[i])
        # the distribution of round k: P_k proportional to exp(-y F_{k-1}) (uniform P_1), and each stump's
        # weighted Gini decrease under it
        ypm = np.where(y == g.classes_[1], 1.0, -1.0)
        F = np.zeros(len(y)) if k == 0 else list(g.staged_decision_function(X))[k - 1]
        v = -ypm * F
        P = np.exp(v - v.max())
        P /= P.sum()
        tg, ts = g.estimators_[k].tree_, s.estimators_[k].tree_
        fg, thr_g = int(tg.feature[0]), float(tg.threshold[0])
        fs, thr_s = int(ts.feature[0]), float(ts.threshold[0])
        dg, ds = _gini_decrease(X[:, fg], thr_g, ypm, P), _gini_decrease(X[:, fs], thr_s, ypm, P)
        why = ("equally good Gini splits (to rounding) broken differently: smml takes the lowest feature "
               "index and threshold, sklearn the first in a random feature order"
               if abs(dg - ds) <= 1e-12 * max(abs(dg), abs(ds), 1e-300) else
               "the two stumps' Gini decreases differ, so one search missed the best split: a bug to report")
        print(f"  first difference at round {k + 1}: {e_g[k]} vs {e_s[k]} errors; smml's stump x{fg} <= "
              f"{thr_g:.9g} (Gini decrease {dg:.12g}) vs sklearn's x{fs} <= {thr_s:.9g} ({ds:.12g}): {why}; "
              f"after it the distributions differ and so do the later rounds")
    print("  (TreeClassifier's default splitter='auto' is 'hist' from 20,000 rows on: 255 quantile bins, "
          "thresholds at bin edges, so its stumps are not sklearn's exact ones; splitter='exact' is used here)")


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


def _forest_sets(similar):
    """The data sets of --forest-accuracy (train and test rows), or with ``similar`` other shapes
    like them."""
    from bench_tree import make_data

    if similar:
        XX, yy = make_data(110_000, 16)
        return {"bench_tree's nonlinear rule, 10% noise": (XX[:100_000], yy[:100_000], XX[100_000:], yy[100_000:]),
                "make_classification": _data(20_000, 64, 10_000),
                "make_classification, 3 classes": _data(50_000, 32, 10_000, n_classes=3)}
    XX, yy = make_data(60_000, 32)
    return {"bench_tree's nonlinear rule, 10% noise": (XX[:50_000], yy[:50_000], XX[50_000:], yy[50_000:]),
            "make_classification": _data(50_000, 32, 10_000)}


def bench_forest_accuracy(n_trees=100, seeds=3, similar=False):
    from sklearn.ensemble import RandomForestClassifier as SkRF

    from smml.ensemble import RandomForestClassifier

    makers = {'smml splitter="exact" (auto)': lambda s: RandomForestClassifier(
                  n_estimators=n_trees, n_jobs=N_THREADS, random_state=s),
              'smml splitter="hist"': lambda s: RandomForestClassifier(
                  n_estimators=n_trees, n_jobs=N_THREADS, random_state=s, splitter="hist"),
              "sklearn RandomForestClassifier": lambda s: SkRF(n_estimators=n_trees, n_jobs=N_THREADS,
                                                               random_state=s)}
    try:
        from sklearnex.ensemble import RandomForestClassifier as ExRF

        makers["sklearnex RandomForestClassifier"] = lambda s: ExRF(n_estimators=n_trees, n_jobs=N_THREADS,
                                                                    random_state=s)
    except ImportError:
        pass
    for name, (X, y, Xt, yt) in _forest_sets(similar).items():
        res = {k: [] for k in makers}
        for s in range(seeds):
            for k, make in makers.items():
                t, f = best_time(lambda: make(s).fit(X, y), repeat=1)
                res[k].append((t, f.score(Xt, yt)))
        t_ex = np.mean([t for t, _ in res['smml splitter="exact" (auto)']])
        a_sk = np.mean([a for _, a in res["sklearn RandomForestClassifier"]])
        rows = [dict(impl=k, t=np.mean([t for t, _ in v]), ratio=np.mean([t for t, _ in v]) / t_ex,
                     acc=np.mean([a for _, a in v]), gap=100 * (np.mean([a for _, a in v]) - a_sk))
                for k, v in res.items()]
        print_table(f"Random forest splitters, {name}, {X.shape[0]} x {X.shape[1]}, {n_trees} trees, "
                    f"{N_THREADS} threads, mean of {seeds} seeds, test accuracy on {len(yt)} rows", rows,
                    [("impl", "implementation", "{}"), ("t", "mean fit s", "{:.2f}"),
                     ("ratio", "fit / smml exact", "{:.2f}"), ("acc", "mean test accuracy", "{:.4f}"),
                     ("gap", "vs sklearn (points)", "{:+.2f}")])


def _calls(fn, rows, n_calls):
    """A function making n_calls calls of fn, on rows[0], rows[1], ... (cycling)."""
    def run():
        for i in range(n_calls):
            fn(rows[i % len(rows)])
    return run


def bench_forest_predict(m=20_000, d=32, n_trees=100, n_big=10_000, rounds=5):
    """Forest predict: one compiled call for all trees (new) vs the loop over the members (old)."""
    from smml.ensemble import RandomForestClassifier, RandomForestRegressor

    X, y, Xt, _ = _data(m, d, max(n_big, 1000))
    Xt = np.ascontiguousarray(Xt[:n_big])
    yr = X @ np.linspace(-1.0, 1.0, d) + np.sin(3 * X[:, 0])
    singles = [np.ascontiguousarray(Xt[i:i + 1]) for i in range(min(1000, n_big))]
    rows = []
    for name, est, fit_y in [("RandomForestClassifier", RandomForestClassifier, y),
                             ("RandomForestRegressor", RandomForestRegressor, yr)]:
        t_fit, f = best_time(lambda: est(n_estimators=n_trees, n_jobs=N_THREADS, random_state=0).fit(X, fit_y),
                             repeat=1)
        if f._classifier:
            def old(A):
                return f.classes_[np.argmax(f._member_votes(A), axis=1)]
        else:
            old = f._member_mean
        new = f.predict
        same = (new(Xt).tobytes() == old(Xt).tobytes()
                and all(new(r).tobytes() == old(r).tobytes() for r in singles[:50]))
        (o1, n1), (co1, cn1), _ = interleaved_best([_calls(old, singles, 20), _calls(new, singles, 500)],
                                                   rounds, cpu=True)
        o1, n1, co1, cn1 = o1 / 20, n1 / 500, co1 / 20, cn1 / 500
        (ob, nb), (cob, cnb), _ = interleaved_best([_calls(old, [Xt], 1), _calls(new, [Xt], 1)], rounds, cpu=True)
        nodes = sum(e.tree_.node_count for e in f.estimators_)
        for what, t_old, t_new, c_old, c_new in (("1 row", o1, n1, co1, cn1), (f"{n_big} rows", ob, nb, cob, cnb)):
            rows.append(dict(est=name, what=what, old=1e3 * t_old, new=1e3 * t_new, ratio=t_old / t_new,
                             cold=1e3 * c_old, cnew=1e3 * c_new, same="yes" if same else "NO",
                             note=f"fit {t_fit:.1f} s, {nodes:,} nodes"))
    print_table(f"Forest predict, {n_trees} trees (max_depth None) on {m} x {d} float64, {N_THREADS} threads: "
                f"member loop (old) vs one compiled call (new), ms per call (wall; CPU of all threads), best "
                f"of {rounds} interleaved rounds", rows,
                [("est", "estimator", "{}"), ("what", "predict on", "{}"), ("old", "old ms", "{:.3f}"),
                 ("new", "new ms", "{:.4f}"), ("ratio", "old / new", "{:.1f}"), ("cold", "old CPU ms", "{:.3f}"),
                 ("cnew", "new CPU ms", "{:.4f}"), ("same", "same output", "{}"), ("note", "forest", "{}")])


def main(quick=False):
    print(environment_line(N_THREADS))
    if quick:
        X, y, Xt, yt = _data(5000, 32, 2000)
        bench_adaboost(X, y, rounds=20, ref_rows=300, ref_rounds=2)
        bench_forest(X, y, Xt, yt, n_trees=10)
        bench_forest_predict(m=2000, n_trees=10, n_big=1000, rounds=2)
    else:
        X, y, Xt, yt = _data(50_000, 32, 10_000)
        bench_adaboost(X, y, rounds=200, ref_rows=2000, ref_rounds=2)
        bench_forest(X, y, Xt, yt, n_trees=100)
        bench_forest_predict()


if __name__ == "__main__":
    import sys

    if "--forest-accuracy" in sys.argv:
        print(environment_line(N_THREADS))
        bench_forest_accuracy(similar="--similar" in sys.argv)
    elif "--forest-predict" in sys.argv:
        print(environment_line(N_THREADS))
        bench_forest_predict()
    else:
        main(quick="--quick" in sys.argv)
