"""Estimators fitted at once from several Python threads (issue 32, item 4).

Every kernel releases the GIL and may start its own OpenMP threads; fits running
concurrently in different Python threads must neither share state nor hang, and each
must give exactly what the same fit gives alone. A diverging MLP fitted on two threads
must raise DivergenceError (the epoch's threads agree on the stop) and not hang.
"""
import threading

import numpy as np
import pytest

import smml.neural
from smml._core import _neural as _k
from smml.cluster import KMeans
from smml.ensemble import GradientBoostingClassifier, RandomForestClassifier
from smml.kernels import KernelSVC
from smml.linear import DivergenceError, LogisticRegression
from smml.neighbors import KNNClassifier
from smml.neural import MLPClassifier, MLPRegressor
from smml.tree import TreeClassifier

JOIN_TIMEOUT = 300.0        # seconds: a hang fails the test instead of stalling the run


def _data(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((240, 6))
    y = (X[:, 0] + 0.5 * X[:, 1] - X[:, 2] ** 2 + 0.3 * rng.standard_normal(240) > 0).astype(int)
    y[X[:, 3] > 1.0] = 2
    return X, y


def _jobs():
    """(name, fit_and_predict) pairs: each builds, fits and predicts one estimator on its own data."""
    def job(make, seed, method="predict"):
        def run():
            X, y = _data(seed)
            m = make().fit(X[:180], y[:180])
            return np.asarray(getattr(m, method)(X[180:]))
        return run

    return [
        ("knn", job(lambda: KNNClassifier(n_neighbors=5, n_jobs=2), 1)),
        ("tree", job(lambda: TreeClassifier(max_depth=6, random_state=0, n_jobs=2), 2)),
        ("forest", job(lambda: RandomForestClassifier(n_estimators=10, random_state=0, n_jobs=2), 3,
                       "predict_proba")),
        ("boosting", job(lambda: GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0,
                                                            n_jobs=2), 4, "predict_proba")),
        ("kmeans", job(lambda: KMeans(n_clusters=4, n_init=2, random_state=0, n_jobs=2), 5, "transform")),
        ("svc", job(lambda: KernelSVC(C=1.0, n_jobs=2), 6, "decision_function")),
        ("mlp", job(lambda: MLPClassifier((32,), batch_size=8, max_iter=15, random_state=0, n_jobs=2), 7,
                    "predict_proba")),
        ("logistic", job(lambda: LogisticRegression(n_jobs=2), 8, "predict_proba")),
    ]


def _run_in_threads(fns):
    """Run every fn in its own thread, started together; returns their results (or raises)."""
    results, errors = [None] * len(fns), [None] * len(fns)
    start = threading.Barrier(len(fns))

    def target(i, fn):
        try:
            start.wait()
            results[i] = fn()
        except BaseException as e:       # noqa: BLE001 -- re-raised in the main thread
            errors[i] = e

    threads = [threading.Thread(target=target, args=(i, fn), daemon=True) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a concurrent fit did not finish (hang?)"
    for e in errors:
        if e is not None:
            raise e
    return results


@pytest.fixture
def mlp_threads(monkeypatch):
    """Small networks train on n_jobs threads (the grain would keep them on one)."""
    monkeypatch.setattr(smml.neural, "NEURAL_GRAIN", 1)


def test_eight_estimators_fitted_concurrently_match_serial(mlp_threads):
    jobs = _jobs()
    serial = [fn() for _, fn in jobs]
    for _ in range(3):
        concurrent = _run_in_threads([fn for _, fn in jobs])
        for (name, _), a, b in zip(jobs, serial, concurrent):
            np.testing.assert_array_equal(b, a, err_msg=name)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("hidden, batch", [((10,), 1), ((40,), 8), ((16, 40), 1), ((40, 16), 8), ((), 1)])
def test_diverging_mlp_on_two_threads_raises(mlp_threads, hidden, batch, dtype):
    # the loss turns non-finite within the epoch: every thread of the epoch must stop at
    # thread 0's decision (a thread that went on alone would wait at a barrier forever)
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((200, 64)) * 100).astype(dtype)
    y = X @ rng.standard_normal(64)

    def fit():
        m = MLPRegressor(hidden, batch_size=batch, learning_rate=10.0, max_iter=20, random_state=0, n_jobs=2)
        with pytest.raises(DivergenceError, match="learning_rate"):
            m.fit(X, y)

    _run_in_threads([fit, fit])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sizes", [[12, 3], [12, 40, 3], [12, 40, 24, 3]])
@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("bad_row", [0, 1, 29, 59])
def test_train_epoch_stops_together(sizes, batch, dtype, bad_row):
    # one target is NaN: the step that holds it has a non-finite loss, on every thread count;
    # the epoch stops there with status 1 and the steps before it, on 1, 2 and 3 threads
    # (the first step, the second, one inside, the last)
    rng = np.random.default_rng(1)
    n = 60
    X = rng.standard_normal((n, sizes[0])).astype(dtype)
    Y = rng.standard_normal((n, sizes[-1])).astype(dtype)
    order = np.arange(n, dtype=np.intp)
    Y[bad_row, 0] = np.nan

    def epoch(n_threads):
        W = [(0.1 * rng.standard_normal((a, b))).astype(dtype) for a, b in zip(sizes[:-1], sizes[1:])]
        b = [np.zeros(k, dtype=dtype) for k in sizes[1:]]
        return _k.train_epoch(X, Y, order, W, b, [], [], _k.ACT_TANH, _k.OUT_SQUARE, batch, 0.01,
                              _k.SCHED_CONSTANT, 0.0, 0.0, 0, n_threads)

    for res in _run_in_threads([lambda: epoch(1), lambda: epoch(2), lambda: epoch(3)]):
        loss, steps, status = res
        assert status == 1
        assert steps == bad_row // batch
        assert np.isfinite(loss)
