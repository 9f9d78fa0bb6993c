"""A worker killed in the middle of the work, for every smml.dask entry point (fit, and predict /
predict_proba / transform where they run on the workers) and every joblib-dask path
(cv_estimate, tune, nested_cv_estimate, compare, learning_curve, bagging and random forests):
the result equals the undisturbed run, or a clear error is raised; nothing hangs.

How a worker is killed: :func:`_arm` wraps a function (or method) of smml in every worker
process; the n-th call in a worker process SIGKILLs that process, once across the cluster (the
first worker to claim a marker file). The kill is the code path itself reaching that point (a
Lloyd step, a tree level, a block's sums, a fold's fit, a shard's search...): never a fixed
sleep. A worker restarted by its nanny is a new, unarmed process. Each test has a LocalCluster
of its own (2 worker processes x 1 thread; ``allowed-failures=1``), so that no test waits for a
nanny to restart a worker; every wait (the run, the worker's death) polls against a generous
deadline, so a busy machine only makes the tests slower."""
import importlib
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import cloudpickle  # noqa: E402  (distributed's dependency)
import joblib  # noqa: E402
from sklearn.base import BaseEstimator  # noqa: E402

import smml.dask as sd  # noqa: E402
from smml.cluster import KMeans  # noqa: E402
from smml.ensemble import (BaggingClassifier, GradientBoostingClassifier, GradientBoostingRegressor,  # noqa: E402
                           RandomForestClassifier, RandomForestRegressor)
from smml.model_selection import compare, cv_estimate, learning_curve, nested_cv_estimate, tune  # noqa: E402
from smml.neighbors import KNNClassifier, KNNRegressor  # noqa: E402
from smml.tree import TreeClassifier  # noqa: E402

# the arming function and the stand-in estimator below travel to the worker processes by value
# (this module is not importable there under --import-mode=importlib)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


from _dask_cluster import TIMEOUT, km_equal, local_cluster  # noqa: E402
DEADLINE = 5 * TIMEOUT        # seconds: a whole disturbed run, or a worker's death being seen


@pytest.fixture
def fault_client():
    """A cluster of its own for each test (the default client while the test runs)."""
    with local_cluster() as c:
        yield c


# ---- killing a worker at a chosen moment -----------------------------------------------------------

def _claim(marker):
    """True for the one caller that creates the file ``marker`` (atomically: two workers
    reaching the point at once cannot both kill themselves); True every time for a marker that
    can never be created."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    except OSError:
        return True
    return True


def _arm(client, target, marker, nth=1):
    """Arm every worker of ``client``: the ``nth`` call, in a worker process, of ``target``
    (``"module:attribute.path"``, e.g. ``"smml.dask._kmeans:_Group.lloyd"``) SIGKILLs that
    process before the call runs, in the first worker that claims ``marker`` (once across the
    cluster). smml's tasks name their functions by reference, so the worker's unpickled task
    (or the actor's method) is the armed one. Returns {worker address: pid}."""
    def install():
        mod, _, path = target.partition(":")
        owner = importlib.import_module(mod)
        *outer, attr = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        orig = getattr(owner, attr)
        calls = [0]

        def armed(*args, **kwargs):
            calls[0] += 1
            if calls[0] >= nth and _claim(marker):
                os.kill(os.getpid(), signal.SIGKILL)
            return orig(*args, **kwargs)

        setattr(owner, attr, armed)
        return os.getpid()

    pids = client.run(install)
    assert len(pids) == 2
    return pids


def _killed(client, pids, marker):
    """A worker of ``pids`` was killed: the marker was claimed and the scheduler no longer
    lists one of the armed workers (polled, generous deadline)."""
    assert os.path.exists(marker), "the armed point was never reached: no worker was killed"
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if set(pids) - set(client.scheduler_info()["workers"]):
            return
        time.sleep(0.2)
    raise AssertionError("the scheduler still lists both armed workers")


def _bounded(run):
    """``run()`` in a thread, bounded by DEADLINE (a hang fails the test): ("result", value) or
    ("error", exception)."""
    out = {}

    def target():
        try:
            out["result"] = run()
        except Exception as exc:            # noqa: BLE001 - the tests check which
            out["error"] = exc

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(DEADLINE)
    assert not th.is_alive(), f"hung for more than {DEADLINE} s after a worker was killed"
    return next(iter(out.items()))


def _fault(client, tmp_path, target, run, nth=1):
    """Arm ``target`` (see :func:`_arm`), run ``run()`` bounded, check that a worker died;
    returns ("result", value) or ("error", exception)."""
    marker = str(tmp_path / "killed")
    pids = _arm(client, target, marker, nth)
    got = _bounded(run)
    _killed(client, pids, marker)
    print(f"outcome after the kill: {got[0]}" + (f" ({got[1]!r})" if got[0] == "error" else ""))  # -rP shows it
    return got


def _result(got):
    """The value of an outcome that must be the exact result (the lost tasks recomputed)."""
    kind, value = got
    if kind == "error":
        raise value
    return value


def _clear_error(exc, *phrases):
    """An engine's lost work as smml's one RuntimeError, with a message saying so."""
    assert isinstance(exc, RuntimeError), repr(exc)
    assert any(p in str(exc) for p in phrases), str(exc)


# ---- data ------------------------------------------------------------------------------------------

def _data(n=240, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


# ---- blockwise predict / predict_proba / transform: the lost blocks are recomputed ---------------

@pytest.mark.parametrize("method", ["predict", "predict_proba", "transform"])
def test_worker_killed_during_blockwise_call_is_retried(fault_client, tmp_path, method):
    X, y = _data(1200, 4, seed=1)
    est = (KMeans(n_clusters=3, random_state=0).fit(X) if method == "transform"
           else KNNClassifier(n_neighbors=3).fit(X, y))
    func = getattr(sd, method)
    got = _fault(fault_client, tmp_path, "smml.dask._blockwise:_call",
                 lambda: func(est, da.from_array(X, chunks=100)).compute(timeout=TIMEOUT), nth=2)
    np.testing.assert_array_equal(_result(got), getattr(est, method)(X))


class _KillEvery(BaseEstimator):
    """A fitted-estimator stand-in whose predict kills every worker process it runs in."""

    def __init__(self, est=None):
        self.est = est
        if est is not None:
            self.n_features_in_ = est.n_features_in_

    def __sklearn_is_fitted__(self):
        return True

    def fit(self, X, y=None):
        return self

    def predict(self, X):
        try:
            distributed.get_worker()
        except ValueError:
            return self.est.predict(X)          # the driver's one-row probe
        os.kill(os.getpid(), signal.SIGKILL)


def test_worker_killed_every_time_raises_killed_worker(fault_client):
    # a task that kills every worker it runs on: allowed-failures=1, so after the second death
    # the scheduler gives up and the compute raises KilledWorker (named, with the task's key);
    # no partial array, no hang
    X, y = _data(300)
    always = _KillEvery(KNNClassifier(n_neighbors=3).fit(X, y))
    kind, exc = _bounded(lambda: sd.predict(always, da.from_array(X, chunks=100)).compute(timeout=DEADLINE))
    assert kind == "error" and isinstance(exc, distributed.KilledWorker), exc
    assert "_call" in str(exc)


# ---- sharded k-NN: the shards and the searches are recomputed from their lineage ------------------

def _knn_data():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(1200, 3)).astype(float)      # ties across the shards
    Q = rng.integers(-1, 4, size=(300, 3)).astype(float)
    return X, rng.integers(0, 3, size=1200), Q


@pytest.mark.parametrize("cls, ref", [(sd.KNNClassifier, KNNClassifier), (sd.KNNRegressor, KNNRegressor)])
def test_worker_killed_during_knn_fit_gives_the_exact_model(fault_client, tmp_path, cls, ref):
    X, y, Q = _knn_data()
    kw = dict(n_neighbors=6, weights="distance")
    got = _fault(fault_client, tmp_path, "smml.dask._knn:_fit_shard",
                 lambda: cls(**kw).fit(da.from_array(X, chunks=200), y))
    model = _result(got)
    np.testing.assert_array_equal(model.predict(da.from_array(Q, chunks=100)).compute(timeout=TIMEOUT),
                                  ref(**kw).fit(X, y).predict(Q))


@pytest.mark.parametrize("cls, ref, method", [(sd.KNNClassifier, KNNClassifier, "predict"),
                                              (sd.KNNClassifier, KNNClassifier, "predict_proba"),
                                              (sd.KNNRegressor, KNNRegressor, "predict")])
def test_worker_killed_during_knn_predict_is_retried(fault_client, tmp_path, cls, ref, method):
    # the worker dies in a shard's search: the search runs again, and its shard (if the dead
    # worker held it) is rebuilt from its lineage
    X, y, Q = _knn_data()
    model = cls(n_neighbors=6).fit(da.from_array(X, chunks=200), y)
    got = _fault(fault_client, tmp_path, "smml.dask._knn:_search_shard",
                 lambda: getattr(model, method)(da.from_array(Q, chunks=50)).compute(timeout=TIMEOUT), nth=2)
    np.testing.assert_array_equal(_result(got), getattr(ref(n_neighbors=6).fit(X, y), method)(Q))


# ---- actors: k-means, gradient boosting, linear models ---------------------------------------------
# a worker's actor (its rows' state) is lost with it: the fit starts again on new actors (the
# same model) or, after a second loss, raises smml's RuntimeError

def test_worker_killed_during_kmeans_gives_the_exact_fit_or_a_clear_error(fault_client, tmp_path):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(40000, 4))
    C0 = X[:8].copy()
    a = KMeans(n_clusters=8, init=C0, tol=0, max_iter=30).fit(X)
    kind, got = _fault(fault_client, tmp_path, "smml.dask._kmeans:_Group.lloyd",
                       lambda: sd.KMeans(n_clusters=8, init=C0, tol=0, max_iter=30).fit(
                           da.from_array(X, chunks=5000)), nth=3)     # the 3rd Lloyd step
    if kind == "error":
        _clear_error(got, "was lost during the fit")
    else:
        km_equal(a, got)


@pytest.mark.parametrize("cls, ref", [(sd.GradientBoostingClassifier, GradientBoostingClassifier),
                                      (sd.GradientBoostingRegressor, GradientBoostingRegressor)])
def test_worker_killed_during_boosting_gives_the_exact_model_or_a_clear_error(fault_client, tmp_path, cls, ref):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(8000, 4))
    z = X[:, 0] + X[:, 1] ** 2 + rng.normal(size=8000)
    y = (z > 1).astype(int) if cls is sd.GradientBoostingClassifier else z
    kw = dict(n_estimators=8, max_depth=3, random_state=0)
    a = ref(**kw).fit(X, y)
    kind, got = _fault(fault_client, tmp_path, "smml.dask._gbm:_Rows.level",
                       lambda: cls(**kw).fit(da.from_array(X, chunks=(2000, -1)), da.from_array(y, chunks=2000)),
                       nth=5)                                      # a level of the 2nd or 3rd tree
    if kind == "error":
        _clear_error(got, "was lost during the fit")
    else:
        for t1, t2 in zip(a.estimators_, got.estimators_, strict=True):      # bit for bit
            assert t1.nodes.tobytes() == t2.nodes.tobytes() and t1.value.tobytes() == t2.value.tobytes()
        np.testing.assert_array_equal(got.predict(X), a.predict(X))


def _fail_once(marker):
    """On a worker: the first ``_Rows.level`` call of the cluster (in the worker that claims
    ``marker``) raises ValueError; every other call runs as usual."""
    import smml.dask._gbm as gbm
    orig = gbm._Rows.level

    def failing(self, *args):
        if not _claim(marker):
            return orig(self, *args)
        raise ValueError("injected failure of one group")

    gbm._Rows.level = failing
    return os.getpid()


def test_boosting_group_that_fails_mid_tree_stops_the_fit_without_a_hang(fault_client, tmp_path):
    # the groups grow a tree together, each waiting for the others' histograms at every level:
    # one group raises in a level while the other waits for it; the driver gets the error, the
    # waiting group is aborted (no hang), and the same cluster then fits the exact model (the
    # failure is once per cluster)
    X, y = _data(6000, 4, seed=12)
    kw = dict(n_estimators=3, max_depth=3, random_state=0, max_bins=32)
    fault_client.run(_fail_once, str(tmp_path / "failed"))
    Xd, yd = da.from_array(X, chunks=(1500, -1)), da.from_array(y, chunks=1500)
    kind, got = _bounded(lambda: sd.GradientBoostingClassifier(**kw).fit(Xd, yd))
    assert kind == "error" and isinstance(got, ValueError) and "injected failure" in str(got), got
    a = GradientBoostingClassifier(**kw).fit(X, y)
    b = _result(_bounded(lambda: sd.GradientBoostingClassifier(**kw).fit(Xd, yd)))
    for t1, t2 in zip(a.estimators_, b.estimators_, strict=True):
        assert t1.nodes.tobytes() == t2.nodes.tobytes() and t1.value.tobytes() == t2.value.tobytes()


@pytest.mark.parametrize("name, kw, weighted, nth", [("LinearRegression", {}, True, 2),
                                                     ("RidgeRegression", {"alpha": 0.5}, False, 1),
                                                     ("LogisticRegression", {}, False, 3)])
def test_worker_killed_during_linear_fit_gives_the_same_model_or_a_clear_error(fault_client, tmp_path, name, kw,
                                                                                weighted, nth):
    # the blocks are recomputed from their lineage, the actors made again and the interrupted
    # round repeated: the sums, so the model, are the undisturbed run's (a run on dask's local
    # threads: the same blocks, added in the same order)
    rng = np.random.default_rng(12)
    X = rng.normal(size=(6000, 5)) + 2.0
    s = X @ rng.normal(size=5) + rng.normal(size=6000)
    y = (s > np.median(s)).astype(int) if name == "LogisticRegression" else s
    sw = rng.uniform(0.5, 2.0, size=6000) if weighted else None

    def fit():
        args = (da.from_array(X, chunks=(1024, -1)), da.from_array(y, chunks=1024))
        return getattr(sd, name)(**kw).fit(*args, sample_weight=None if sw is None else da.from_array(sw, chunks=1024))

    with dask.config.set(scheduler="threads"):
        undisturbed = fit()
    kind, got = _fault(fault_client, tmp_path, "smml.dask._linear:_Group.call", fit, nth=nth)
    if kind == "error":
        _clear_error(got, "was lost during the fit")
    else:
        np.testing.assert_array_equal(got.coef_, undisturbed.coef_)
        np.testing.assert_array_equal(np.asarray(got.intercept_), np.asarray(undisturbed.intercept_))


# ---- joblib's dask backend: retried, the exact result ----------------------------------------------
# under joblib's "dask" backend smml runs the tasks as plain Dask futures of the backend's client
# (smml._threads.run_tasks): the scheduler runs a lost task again and the result is exact; when
# the scheduler gives up (KilledWorker), one clear RuntimeError (smml._threads.engine_errors).
# Never a partial result, never a hang (joblib's own retrieval once waited forever here).

def _joblib_paths():
    X, y = _data(200, 4)
    tree = TreeClassifier(max_depth=3)
    grid = {"max_depth": [1, 2, 3]}
    fold = "smml.model_selection._common:_fit_and_losses"

    def summary_tune(r):
        return r.best_params_, r.dev_errors_, r.best_estimator_.predict(X)

    return {
        "cv_estimate": (fold, lambda: cv_estimate(tree, X, y, K=4, shuffle=True, random_state=1), lambda r: r),
        "tune": ("smml.model_selection._common:_fit_eval", lambda: tune(tree, grid, X, y, random_state=2), summary_tune),
        "nested_cv_estimate": ("smml.model_selection._tuning:_nested_outer_fold",
                               lambda: nested_cv_estimate(tree, grid, X, y, K_outer=3, K_inner=3, shuffle=True,
                                                          random_state=3),
                               lambda r: (r.estimate, r.fold_errors, r.chosen_params)),
        "compare": (fold, lambda: compare(tree, KNNClassifier(n_neighbors=3), X, y, K=4, random_state=4),
                    lambda r: (r.differences, r.pvalue)),
        "learning_curve": ("smml.model_selection._learning_curve:_fit_train_test",
                           lambda: learning_curve(tree, X, y, random_state=5),
                           lambda r: (r.train_sizes, r.train_errors, r.test_errors)),
        "bagging": ("smml.ensemble._bagging:_fit_member_task",
                    lambda: BaggingClassifier(estimator=TreeClassifier(max_depth=2), n_estimators=6,
                                              random_state=6).fit(X, y),
                    lambda r: r.predict_proba(X)),
        "random_forest_classifier": ("smml.ensemble._bagging:_fit_member_task",
                                     lambda: RandomForestClassifier(n_estimators=6, random_state=7,
                                                                    oob_score=True).fit(X, y),
                                     lambda r: (r.predict_proba(X), r.oob_score_)),
        "random_forest_regressor": ("smml.ensemble._bagging:_fit_member_task",
                                    lambda: RandomForestRegressor(n_estimators=6, random_state=8).fit(X, X[:, 1]),
                                    lambda r: r.predict(X)),
    }


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(b, a)
    else:
        assert b == a


@pytest.mark.parametrize("path", list(_joblib_paths()))
def test_worker_killed_in_a_joblib_dask_path_gives_the_exact_result_or_a_clear_error(fault_client, tmp_path,
                                                                                     path):
    target, run, summary = _joblib_paths()[path]
    local = summary(run())

    def remote():
        with joblib.parallel_config(backend="dask"):
            return run()

    got = _fault(fault_client, tmp_path, target, remote, nth=2)
    _same(local, summary(_result(got)))


class _KillerFit(BaseEstimator):
    """A classifier whose fit kills every worker process it runs in (off a worker: a tree)."""

    def fit(self, X, y):
        try:
            distributed.get_worker()
        except ValueError:
            self.tree_ = TreeClassifier(max_depth=2).fit(X, y)
            return self
        os.kill(os.getpid(), signal.SIGKILL)

    def predict(self, X):
        return self.tree_.predict(X)


def test_worker_killed_every_time_in_a_joblib_dask_path_raises_a_clear_error(fault_client):
    X, y = _data(120, 3)

    def remote():
        with joblib.parallel_config(backend="dask"):
            return cv_estimate(_KillerFit(), X, y, K=3)

    kind, exc = _bounded(remote)
    assert kind == "error", exc
    _clear_error(exc, "worker probably died")
    assert "KilledWorker" in str(exc) and "No partial result" in str(exc)
