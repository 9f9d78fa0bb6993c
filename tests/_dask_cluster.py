"""The LocalCluster the Dask test modules share (tests/test_dask.py, test_dask_gbm.py,
test_dask_linear.py, test_dask_faults.py): 2 worker processes x 1 thread on the loopback
interface. Imported by name: tests/conftest.py puts this directory on sys.path (under
``--import-mode=importlib`` it is not otherwise)."""
import contextlib
import os
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

TIMEOUT = 60          # seconds: any single computation of a Dask test


@contextlib.contextmanager
def local_cluster():
    """A LocalCluster of 2 worker processes on the loopback interface and its Client (the
    default client while it lives), closed at the end. A task whose worker dies is retried
    once (allowed-failures=1), then KilledWorker."""
    # The workers must be able to import a test module by name if a test object travels by
    # plain pickle, by reference (joblib's batches and the estimators inside them are pickled so),
    # and under CI the tests run from outside the source tree (--import-mode=importlib), where a
    # worker process would not find `tests`. Worker processes are spawned with this process's
    # sys.path (multiprocessing passes it on, also when a killed worker is restarted): the
    # checkout's root is on it while the cluster lives.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, root)
    try:
        with dask.config.set({"distributed.scheduler.allowed-failures": 1,
                              "distributed.comm.timeouts.connect": "20s"}):
            cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                               host="127.0.0.1", dashboard_address=":0",
                                               silence_logs=50, env={"OMP_NUM_THREADS": "1"})
            c = distributed.Client(cluster, timeout="30s")
            c.wait_for_workers(2, timeout=TIMEOUT)
            try:
                yield c
            finally:
                c.close(timeout=TIMEOUT)
                cluster.close(timeout=TIMEOUT)
    finally:
        sys.path.remove(root)


@pytest.fixture(scope="module")
def client():
    """The test module's cluster (see local_cluster); a module uses it by importing it."""
    with local_cluster() as c:
        yield c


def km_equal(a, b):
    """A smml.dask KMeans ``b`` fitted like the in-memory ``a``: the same model bit for bit."""
    np.testing.assert_array_equal(b.cluster_centers_, a.cluster_centers_)
    np.testing.assert_array_equal(b.labels_.compute(timeout=TIMEOUT), a.labels_)
    assert b.inertia_ == a.inertia_
    np.testing.assert_array_equal(b.inertia_path_, a.inertia_path_)
    assert (b.n_iter_, b.converged_) == (a.n_iter_, a.converged_)
