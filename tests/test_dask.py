"""smml on Dask: joblib meta-parallelism on a LocalCluster, smml.dask's blockwise prediction,
sharded k-NN and k-means, bad inputs. A worker killed mid-run: tests/test_dask_faults.py."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import cloudpickle  # noqa: E402  (distributed's dependency)
import joblib  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

import smml.dask as sd  # noqa: E402
from smml.cluster import KMeans  # noqa: E402
from smml.ensemble import BaggingRegressor, RandomForestClassifier, RandomForestRegressor  # noqa: E402
from smml.linear import LogisticRegression, RidgeRegression  # noqa: E402
from smml.model_selection import compare, cv_estimate, nested_cv_estimate, tune  # noqa: E402
from smml.neighbors import KNNClassifier, KNNRegressor  # noqa: E402
from smml.tree import TreeClassifier  # noqa: E402

# the helper estimators below travel to the worker processes by value (this module is not
# importable there under --import-mode=importlib)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

from _dask_cluster import TIMEOUT, client, km_equal as _km_equal  # noqa: E402,F401  (client: the module's cluster)


def _data(n=240, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def test_rest_of_smml_does_not_import_dask():
    code = ("import sys, smml, smml.neighbors, smml.cluster, smml.ensemble, smml.model_selection, "
            "smml.linear, smml.tree, smml._discovery as D; D.model_types(); print(any(m == 'dask' or m.startswith(('dask.', 'distributed')) "
            "for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


# ---- meta-parallelism through joblib's dask backend ------------------------------------------------

def test_model_selection_on_the_cluster_equals_local(client):
    X, y = _data()
    est = TreeClassifier(max_depth=3)
    grid = {"max_depth": [1, 2, 3]}
    local = (cv_estimate(est, X, y, K=5, shuffle=True, random_state=1),
             tune(est, grid, X, y, random_state=2),
             nested_cv_estimate(est, grid, X, y, K_outer=3, K_inner=3, shuffle=True, random_state=3),
             compare(est, KNNClassifier(n_neighbors=3), X, y, K=4, random_state=4))
    with joblib.parallel_backend("dask"):
        remote = (cv_estimate(est, X, y, K=5, shuffle=True, random_state=1),
                  tune(est, grid, X, y, random_state=2),
                  nested_cv_estimate(est, grid, X, y, K_outer=3, K_inner=3, shuffle=True, random_state=3),
                  compare(est, KNNClassifier(n_neighbors=3), X, y, K=4, random_state=4))
    assert remote[0] == local[0]
    assert remote[1].best_params_ == local[1].best_params_
    assert remote[1].dev_errors_ == local[1].dev_errors_
    np.testing.assert_array_equal(remote[1].best_estimator_.predict(X), local[1].best_estimator_.predict(X))
    assert remote[2].estimate == local[2].estimate
    assert remote[2].fold_errors == local[2].fold_errors
    assert remote[2].chosen_params == local[2].chosen_params
    np.testing.assert_array_equal(remote[3].differences, local[3].differences)
    assert remote[3].pvalue == local[3].pvalue


def test_forest_and_bagging_on_the_cluster_equal_local(client):
    X, y = _data(300, 5)
    rf = RandomForestClassifier(n_estimators=12, random_state=0, oob_score=True)
    rr = RandomForestRegressor(n_estimators=6, random_state=1)
    bg = BaggingRegressor(estimator=RidgeRegression(), n_estimators=5, random_state=2)
    a = (rf.fit(X, y).predict_proba(X), rf.oob_score_, rr.fit(X, X[:, 1]).predict(X), bg.fit(X, X[:, 2]).predict(X))
    with joblib.parallel_backend("dask"):
        rf2 = RandomForestClassifier(n_estimators=12, random_state=0, oob_score=True).fit(X, y)
        b = (rf2.predict_proba(X), rf2.oob_score_,
             RandomForestRegressor(n_estimators=6, random_state=1).fit(X, X[:, 1]).predict(X),
             BaggingRegressor(estimator=RidgeRegression(), n_estimators=5, random_state=2)
             .fit(X, X[:, 2]).predict(X))
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    for t1, t2 in zip(rf.estimators_, rf2.estimators_):      # the very same trees
        np.testing.assert_array_equal(t1.tree_.threshold, t2.tree_.threshold)
        np.testing.assert_array_equal(t1.tree_.feature, t2.tree_.feature)


def test_joblib_route_only_at_the_top_level(client):
    # bagging / forests go through joblib only when the caller set the context; a call nested
    # in a task that joblib or a Dask worker runs keeps smml's own pool on that worker
    from smml._threads import joblib_backend_active

    assert not joblib_backend_active()
    with joblib.parallel_backend("threading", n_jobs=2):
        assert joblib_backend_active()
        inner = joblib.Parallel()(joblib.delayed(joblib_backend_active)() for _ in range(2))
    assert inner == [False, False]
    with joblib.parallel_backend("dask"):
        assert joblib_backend_active()
        inner = joblib.Parallel()(joblib.delayed(joblib_backend_active)() for _ in range(2))
    assert inner == [False, False]


# ---- blockwise predict / predict_proba / transform -------------------------------------------------

def test_blockwise_prediction_equals_in_memory(client):
    X, y = _data(1000, 4, seed=1)
    Xd = da.from_array(X, chunks=(137, 2))          # column chunks too: rechunked
    clf = LogisticRegression().fit(X, y)
    knn = KNNClassifier(n_neighbors=5).fit(X, y)
    km = KMeans(n_clusters=4, random_state=0).fit(X)
    for est in (clf, knn, TreeClassifier().fit(X, y)):
        np.testing.assert_array_equal(sd.predict(est, Xd).compute(timeout=TIMEOUT), est.predict(X))
        np.testing.assert_array_equal(sd.predict_proba(est, Xd).compute(timeout=TIMEOUT),
                                      est.predict_proba(X))
    np.testing.assert_array_equal(sd.transform(km, Xd).compute(), km.transform(X))
    np.testing.assert_array_equal(sd.predict(km, Xd).compute(), km.predict(X))
    r = sd.predict(RidgeRegression().fit(X, X[:, 0]), Xd)
    assert r.shape == (1000,) and r.chunks[0] == Xd.chunks[0]


def test_blockwise_bad_inputs(client):
    X, y = _data(50, 3)
    est = KNNClassifier(n_neighbors=3).fit(X, y)
    with pytest.raises(TypeError, match="dask array"):
        sd.predict(est, X)
    with pytest.raises(ValueError, match="2-d"):
        sd.predict(est, da.from_array(X[:, 0], chunks=10))
    with pytest.raises(ValueError, match="numeric"):
        sd.predict(est, da.from_array(X.astype(str), chunks=10))
    with pytest.raises(ValueError, match="4 features.*3 features"):
        sd.predict(est, da.from_array(np.ones((5, 4)), chunks=2))
    bad = X.copy()
    bad[33, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        sd.predict(est, da.from_array(bad, chunks=10)).compute()
    unknown = da.from_array(X, chunks=10)
    unknown = unknown[unknown[:, 0] > -10]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        sd.predict(est, unknown)
    with pytest.raises(Exception, match="not fitted"):
        sd.predict(KNNClassifier(), da.from_array(X, chunks=10))


# ---- k-NN on a sharded training set -------------------------------------------------------------

def _tie_heavy(seed, m=2000, nq=300, d=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(m, d)).astype(float)     # 27 distinct points: ties everywhere
    Q = rng.integers(-1, 4, size=(nq, d)).astype(float)
    y = rng.integers(0, 3, size=m)
    return X, y, Q


@pytest.mark.parametrize("per_worker", [True, False])
@pytest.mark.parametrize("metric, ks", [("euclidean", (1, 6, 50)), ("manhattan", (6,)), ("hamming", (50,))])
def test_sharded_knn_equals_in_memory_on_ties(client, metric, ks, per_worker, monkeypatch):
    # per_worker: one shard per worker (the default on a cluster: blocks 700 + 3 and 900 +
    # 397); else one shard per row block, one of them smaller than k
    monkeypatch.setattr(sd, "_SHARD_PER_WORKER", per_worker)
    X, y, Q = _tie_heavy(0)
    Xd = da.from_array(X, chunks=((700, 3, 900, 397), (3,)))
    Qd = da.from_array(Q, chunks=(128, 3))
    for k in ks:
        for weights in ("uniform", "distance"):
            kw = dict(n_neighbors=k, metric=metric, weights=weights)
            a = KNNClassifier(**kw).fit(X, y)
            b = sd.KNNClassifier(**kw).fit(Xd, y)
            assert b.default_label_ == a.default_label_
            np.testing.assert_array_equal(b.predict(Qd).compute(timeout=TIMEOUT), a.predict(Q))
            np.testing.assert_array_equal(b.predict_proba(Q), a.predict_proba(Q))
            r = KNNRegressor(**kw).fit(X, y * 0.7)
            s = sd.KNNRegressor(**kw).fit(Xd, da.from_array(y * 0.7, chunks=500))
            np.testing.assert_array_equal(s.predict(Qd).compute(timeout=TIMEOUT), r.predict(Q))


@pytest.mark.parametrize("seed", range(4))
def test_merge_of_shard_candidates_padded_equals_sorted(seed, monkeypatch):
    # _merge_taken finds each query's k-th key in a padded matrix and sorts only the kept
    # candidates; with the matrix turned off it sorts them all. Both: the k' rule, the same
    # arrays, on candidates with many ties (each shard: its own k' rule, some shards smaller
    # than k)
    rng = np.random.default_rng(seed)
    nb, k = 50, 4
    parts, base = [], 0
    for size in (3, 40, 40, 200):
        cnt, idx, keys = [], [], []
        for q in range(nb):
            kq = rng.integers(0, 4, size).astype(float)          # heavy ties
            o = np.lexsort((np.arange(size), kq))
            kk = min(k, size)
            take = o[kq[o] <= kq[o[kk - 1]]]
            cnt.append(take.size)
            idx.append(take + base)
            keys.append(kq[take])
        base += size
        idx = np.concatenate(idx)
        parts.append((np.array(cnt), idx, np.concatenate(keys), idx % 3))
    a = sd._merge_taken(parts, k, nb)
    monkeypatch.setattr(sd, "_MERGE_PAD", 0)
    b = sd._merge_taken(parts, k, nb)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    empty = (np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0), np.zeros(0, np.intp))
    assert all(x.size == 0 for x in sd._merge_taken([empty, empty], k, 0))     # an empty block
    rows, idx, keys, _ = a
    for q in range(nb):               # by definition: every candidate with key <= the k-th
        allk = np.sort(np.concatenate([p[2][np.repeat(np.arange(nb), p[0]) == q] for p in parts]))
        np.testing.assert_array_equal(np.sort(keys[rows == q]), allk[allk <= allk[k - 1]])


def test_sharded_knn_one_shard_per_worker(client):
    # on a distributed client the row blocks are grouped into one shard per worker
    # (consecutive blocks, about as many rows each), each shard on its own worker
    X, y, Q = _tie_heavy(3, m=1000)
    b = sd.KNNClassifier(n_neighbors=4).fit(da.from_array(X, chunks=125), y)
    assert b.shard_sizes_ == (500, 500)
    where = client.who_has(b.shards_)
    assert len({w for ws in where.values() for w in ws}) == 2
    expected = KNNClassifier(n_neighbors=4).fit(X, y).predict(Q)
    np.testing.assert_array_equal(b.predict(Q), expected)
    with dask.config.set(scheduler="threads"):          # dask's local threads: one per block
        c = sd.KNNClassifier(n_neighbors=4).fit(da.from_array(X, chunks=125), y)
        assert c.shard_sizes_ == (125,) * 8
        np.testing.assert_array_equal(c.predict(Q), expected)


def test_sharded_knn_ties_across_shards(client):
    # every training point is the same row: the k-th distance ties with all m points, which
    # sit in different shards; the k' rule takes every one of them
    X = np.zeros((40, 2))
    y = np.array([0] * 21 + [1] * 19)
    Xd = da.from_array(X, chunks=(10, 2))
    b = sd.KNNClassifier(n_neighbors=1).fit(Xd, y)
    np.testing.assert_array_equal(b.predict_proba(np.zeros((1, 2))), [[21 / 40, 19 / 40]])
    y2 = np.array([0] * 20 + [1] * 20)           # a tied vote: the default label (0)
    b = sd.KNNClassifier(n_neighbors=1).fit(Xd, y2[::-1].copy())
    assert b.predict(np.zeros((1, 2)))[0] == KNNClassifier(n_neighbors=1).fit(X, y2[::-1]).predict(np.zeros((1, 2)))[0]


def test_sharded_knn_bad_inputs(client):
    X, y, Q = _tie_heavy(1, m=100)
    Xd = da.from_array(X, chunks=30)
    with pytest.raises(ValueError, match="n_neighbors=101"):
        sd.KNNClassifier(n_neighbors=101).fit(Xd, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        sd.KNNClassifier().fit(Xd, y[:-1])
    with pytest.raises(ValueError, match="metric_params"):
        sd.KNNClassifier(metric="mahalanobis").fit(Xd, y)
    with pytest.raises(ValueError, match="metric"):
        sd.KNNClassifier(metric="cosine").fit(Xd, y)
    with pytest.raises(ValueError, match="continuous|Unknown label"):
        sd.KNNClassifier().fit(Xd, np.linspace(0, 1, 100))
    bad = X.copy()
    bad[5, 0] = np.inf
    with pytest.raises(ValueError, match="infinity|NaN"):
        sd.KNNClassifier().fit(da.from_array(bad, chunks=30), y)
    b = sd.KNNClassifier(n_neighbors=2).fit(Xd, y)
    with pytest.raises(ValueError, match="2 features.*3 features"):
        b.predict(np.ones((4, 2)))
    Qbad = Q.copy()
    Qbad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        b.predict(Qbad)
    with pytest.raises(ValueError, match="not fitted"):
        sd.KNNRegressor().predict(Q)


def test_sharded_knn_mahalanobis_with_given_matrix(client):
    X, y, Q = _tie_heavy(2, m=600)
    VI = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 3.0]])
    kw = dict(n_neighbors=7, metric="mahalanobis", metric_params={"VI": VI})
    a = KNNClassifier(**kw).fit(X, y)
    b = sd.KNNClassifier(**kw).fit(da.from_array(X, chunks=250), y)
    np.testing.assert_array_equal(b.predict(Q), a.predict(Q))


# ---- k-means ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shift, dtype", [(0.0, np.float64), (100.0, np.float64), (100.0, np.float32),
                                          (0.0, np.float32)])
def test_kmeans_equals_in_memory_from_the_same_start(client, shift, dtype):
    rng = np.random.default_rng(5)
    X = (rng.normal(size=(20000, 4)) + shift).astype(dtype)     # 5 blocks of 4096 rows
    C0 = X[:6].copy()
    a = KMeans(n_clusters=6, init=C0, tol=0, max_iter=40).fit(X)
    b = sd.KMeans(n_clusters=6, init=C0, tol=0, max_iter=40).fit(da.from_array(X, chunks=(7000, 4)))
    _km_equal(a, b)
    np.testing.assert_array_equal(b.local_.predict(X[:500]), a.predict(X[:500]))


def test_kmeans_actors_on_the_cluster_and_in_process_on_local_threads(client):
    # a distributed client: one group of chunks per worker, a Dask actor called once per
    # iteration; dask's local schedulers: one group of this process. The same fit either way.
    rng = np.random.default_rng(8)
    X = rng.normal(size=(9000, 3))
    a = KMeans(n_clusters=5, init=X[:5].copy(), tol=1e-3, max_iter=50).fit(X)
    assert sd._distributed_client() is not None
    b = sd.KMeans(n_clusters=5, init=X[:5].copy(), tol=1e-3, max_iter=50).fit(da.from_array(X, chunks=4096))
    _km_equal(a, b)
    with dask.config.set(scheduler="threads"):
        assert sd._distributed_client() is None
        c = sd.KMeans(n_clusters=5, init=X[:5].copy(), tol=1e-3, max_iter=50).fit(
            da.from_array(X, chunks=4096))
    _km_equal(a, c)
    assert 1 < a.n_iter_ < 50          # stopped by the tolerance, before max_iter


@pytest.mark.parametrize("sizes, parts, expected", [
    ([4096] * 4, 2, [0, 2, 4]),
    ([4096] * 5, 2, [0, 2, 5]),           # 2 or 3 first: as even as the boundaries allow
    ([4096] * 3 + [100], 2, [0, 2, 4]),
    ([4096, 4096], 5, [0, 1, 2]),         # more workers than chunks: one chunk each
    ([4096], 2, [0, 1]),
    ([8192, 4096, 4096], 2, [0, 1, 3]),
])
def test_kmeans_groups_of_consecutive_chunks(sizes, parts, expected):
    assert sd._split_rows(sizes, parts) == expected


def test_kmeans_random_init_and_empty_clusters(client):
    rng = np.random.default_rng(6)
    X = np.repeat(rng.integers(0, 4, size=(6, 2)).astype(float), 1500, axis=0)   # few distinct rows
    X[::7] += 0.5
    for k, n_init in ((9, 2), (3, 1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            a = KMeans(n_clusters=k, random_state=3, n_init=n_init).fit(X)
            b = sd.KMeans(n_clusters=k, random_state=3, n_init=n_init).fit(da.from_array(X, chunks=4000))
        _km_equal(a, b)


def test_kmeans_bad_inputs(client):
    X = np.random.default_rng(0).normal(size=(100, 3))
    with pytest.raises(ValueError, match="k-means\\+\\+"):
        sd.KMeans(n_clusters=2, init="k-means++").fit(da.from_array(X, chunks=50))
    with pytest.raises(ValueError, match="n_clusters=101"):
        sd.KMeans(n_clusters=101).fit(da.from_array(X, chunks=50))
    with pytest.raises(ValueError, match="shape"):
        sd.KMeans(n_clusters=2, init=np.zeros((3, 3))).fit(da.from_array(X, chunks=50))
    with pytest.raises(ValueError, match="n_clusters"):
        sd.KMeans(n_clusters=0).fit(da.from_array(X, chunks=50))
    bad = X.copy()
    bad[70, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        sd.KMeans(n_clusters=2).fit(da.from_array(bad, chunks=50))
    with pytest.raises(TypeError, match="dask array"):
        sd.KMeans(n_clusters=2).fit(X)
