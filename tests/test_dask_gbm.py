"""smml.dask's gradient boosting: the distributed fit equals the in-memory one bit for bit
(any chunking, on a LocalCluster and on dask's local threads), the fixed-point sums it rests
on, the compiled split choice over given histograms, bad inputs (a worker killed mid-fit: tests/test_dask_faults.py)."""
import pickle
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

# the functions run on the workers (client.run) travel there by value (this module is not
# importable there under --import-mode=importlib)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

import smml.dask as sd  # noqa: E402
from smml._core import _gbm  # noqa: E402
from smml.ensemble import GradientBoostingClassifier, GradientBoostingRegressor  # noqa: E402

from smml._exact_sums import exact_parts as _exact_parts, exact_total as _exact_total  # noqa: E402
from smml._exact_sums import fixed_scale as _fixed_scale  # noqa: E402


from _dask_cluster import TIMEOUT, client  # noqa: E402,F401  (client: the module's LocalCluster, 2 x 1 thread)


def _data(n=60000, d=5, seed=0, nan=0.05):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < nan] = np.nan
    z = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) ** 2 - 0.5 * np.nan_to_num(X[:, 2])
    return X, z + rng.normal(size=n)


def _same_model(a, b):
    assert a.n_estimators_ == b.n_estimators_ and len(a.estimators_) == len(b.estimators_)
    for t1, t2 in zip(a.estimators_, b.estimators_):
        assert t1.nodes.tobytes() == t2.nodes.tobytes()      # every field, bit for bit
        assert t1.value.tobytes() == t2.value.tobytes()
    for s1, s2 in zip(a._split_bins, b._split_bins):
        np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(a._baseline, b._baseline)
    # the training loss is summed per worker, then across workers: equal to rounding
    np.testing.assert_allclose(a.train_score_, b.train_score_, rtol=1e-12)


def _dask(X, y, rows, w=None):
    Xd = da.from_array(X, chunks=(rows, -1))
    yd = da.from_array(y, chunks=rows)
    return (Xd, yd) if w is None else (Xd, yd, da.from_array(w, chunks=rows))


# ---- the arithmetic the equality rests on -------------------------------------------------------

def test_fixed_point_sums_are_exact_in_any_order():
    rng = np.random.default_rng(1)
    n = 50000
    g = rng.normal(size=n) * rng.choice([1e-9, 1.0, 1e3], size=n)
    s = _fixed_scale(n, _gbm.abs_max(g))
    assert s == 2.0 ** (51 - np.frexp(n)[1] - np.frexp(np.abs(g).max())[1])
    assert n * np.abs(g).max() * s < 2.0 ** 51
    q = g.copy()
    _gbm.quantize(q, s)
    assert np.abs(q - g).max() <= 0.5 / s
    assert np.array_equal(q, np.rint(g * s) / s)            # nearbyint's value, ties to even
    ties = (np.arange(-6, 6) + 0.5) / 4.0                     # x.5 in units of 1/4
    t = ties.copy()
    _gbm.quantize(t, 4.0)
    assert np.array_equal(t, np.rint(ties * 4.0) / 4.0)
    big = np.array([2.0 ** 52 + 2.0, -3.0 * 2.0 ** 51, 0.75])  # beyond the fast rounding's range
    b = big.copy()
    _gbm.quantize(b, 1.0)
    assert np.array_equal(b, np.rint(big))
    assert np.all(q * s == np.rint(q * s))                   # integers times 1/s
    sums = set()
    for _ in range(5):
        p = rng.permutation(n)
        cuts = np.sort(rng.choice(n, 7, replace=False))
        parts = [np.add.reduce(c) for c in np.split(q[p], cuts)]
        sums.add(float(np.sum(parts[::-1])))
    sums.add(float(np.add.reduce(q)))
    assert len(sums) == 1
    assert _fixed_scale(10, 0.0) == 1.0


def test_exact_sum_is_correctly_rounded_and_order_free():
    import math
    rng = np.random.default_rng(2)
    v = rng.normal(size=30000) * 10.0 ** rng.integers(-12, 12, size=30000)
    ref = math.fsum(v)
    assert _exact_total([_exact_parts(v)]) == ref
    p = rng.permutation(len(v))
    chunks = np.array_split(v[p], 9)
    assert _exact_total([_exact_parts(c) for c in chunks[::-1]]) == ref


def test_best_splits_is_the_growth_kernels_choice():
    # the root split the kernel makes == best_splits on the root's histogram
    rng = np.random.default_rng(3)
    X, y = _data(3000, 4, seed=3)
    from smml._binning import bin_features
    Xb, edges, nan_code = bin_features(X, 32, 0, 1, np.zeros(4, np.uint8), {}, missing=True)
    g = rng.normal(size=3000)
    h = rng.uniform(0.5, 2.0, size=3000)
    F = np.zeros((3000, 1))
    nodes, value, bits, sbin = _gbm.grow_tree(Xb, edges, np.zeros(4, np.uint8), nan_code, g, h,
                                              np.arange(3000, dtype=np.intp), np.arange(4, dtype=np.intp),
                                              F, 0, 1.0, 0.0, 1.0, 1.0, 1, 0, 1, 8192)
    # the root's histogram in row 1 of the array; row 0 another node's (half the rows, its split
    # elsewhere): the node's row is the one ``which`` names
    hist = np.zeros((2, 4, edges.shape[1], 2))      # per bin: (sum h, sum g)
    for j in range(4):
        np.add.at(hist[1, j, :, 0], Xb[:, j], h)
        np.add.at(hist[1, j, :, 1], Xb[:, j], g)
        np.add.at(hist[0, j, :, 0], Xb[::2, j], h[::2])
        np.add.at(hist[0, j, :, 1], Xb[::2, j], -g[::2])
    args = (edges, np.zeros(4, np.uint8), nan_code, np.arange(4, dtype=np.intp), 1.0, 0.0, 1.0)
    f, b, thr, ml, imp = _gbm.best_splits(hist, np.array([1], np.intp), np.array([[h.sum(), g.sum()]]),
                                          np.array([3000], np.intp), *args)
    assert (f[0], thr[0], ml[0]) == (nodes[0]["feature"], nodes[0]["threshold"], nodes[0]["missing_left"])
    assert b[0] == sbin[0]
    np.testing.assert_allclose(imp[0], nodes[0]["improvement"], rtol=1e-9)
    # both nodes in one call, in either order: each its own histogram's split
    tot2 = np.array([[h[::2].sum(), -g[::2].sum()], [h.sum(), g.sum()]])
    one = [_gbm.best_splits(hist, np.array([i], np.intp), tot2[i:i + 1], np.array([1500 * (i + 1)], np.intp), *args)
           for i in (0, 1)]
    both = _gbm.best_splits(hist, np.array([1, 0], np.intp), tot2[::-1].copy(), np.array([3000, 1500], np.intp),
                            *args)
    for a, o in enumerate((1, 0)):
        assert [r[a] for r in both] == [r[0] for r in one[o]]
    with pytest.raises(ValueError, match="out of range"):
        _gbm.best_splits(hist, np.array([2], np.intp), tot2[:1], np.array([3000], np.intp), *args)


# ---- equality with the in-memory fit ------------------------------------------------------------

@pytest.mark.parametrize("rows", [60000, 20000, 7001])
def test_classifier_equals_in_memory_on_the_cluster(client, rows):
    X, z = _data()
    y = (z > 1).astype(int)
    kw = dict(n_estimators=6, max_depth=4, learning_rate=0.3, random_state=0, colsample_bytree=0.8, max_bins=64)
    a = GradientBoostingClassifier(**kw).fit(X, y)
    b = sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y, rows))
    _same_model(a, b)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert isinstance(b, GradientBoostingClassifier)
    c = pickle.loads(pickle.dumps(b))                        # pickled and loaded
    np.testing.assert_array_equal(c.predict_proba(X[:100]), a.predict_proba(X[:100]))
    loc = b.to_local()                                       # the in-memory class
    assert type(loc) is GradientBoostingClassifier
    np.testing.assert_array_equal(loc.predict_proba(X[:100]), a.predict_proba(X[:100]))


def test_regressor_with_weights_and_multiclass_equal_in_memory(client):
    X, z = _data(40000, 4, seed=5)
    rng = np.random.default_rng(5)
    w = rng.uniform(0, 3, size=len(z))
    w[rng.random(len(z)) < 0.02] = 0.0                       # dropped, as in memory
    for loss in ("squared_error", "half_squared_error"):
        kw = dict(loss=loss, n_estimators=5, max_depth=3, random_state=1, reg_lambda=2.0, min_child_weight=3.0)
        a = GradientBoostingRegressor(**kw).fit(X, z, sample_weight=w)
        b = sd.GradientBoostingRegressor(**kw).fit(*_dask(X, z, 9000, w)[:2], sample_weight=_dask(X, z, 9000, w)[2])
        _same_model(a, b)
    y3 = np.digitize(z, [-0.5, 1.0])
    kw = dict(n_estimators=4, max_depth=3, random_state=2)
    a = GradientBoostingClassifier(**kw).fit(X, y3)
    b = sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y3, 13000))
    _same_model(a, b)
    np.testing.assert_array_equal(a.classes_, b.classes_)


def _requests(monkeypatch):
    """The names of the group calls of the fits that follow (the driver's requests)."""
    import smml.dask._gbm as gbm
    names, drive = [], gbm._drive_actors

    def spy(steps):
        try:
            req = next(steps)
            while True:
                names.append(req[0])
                req = steps.send((yield req))
        except StopIteration as stop:
            return stop.value

    async def counting(steps, groups):
        return await drive(spy(steps), groups)

    monkeypatch.setattr(gbm, "_drive_actors", counting)
    return names


def test_a_fit_is_one_driver_call_the_levels_are_exchanged_between_the_workers(client, monkeypatch):
    # the driver asks the groups for the whole boosting loop: they run it together (every
    # tree's levels, each round's gradient maxima and the loss all-reduced between the
    # workers); the driver's requests are the setup's and ONE "fit", nothing a tree or a level
    names = _requests(monkeypatch)
    X, z = _data(20000, 4, seed=8)
    kw = dict(n_estimators=5, max_depth=3, random_state=0, max_bins=64)
    y = (z > 1).astype(int)
    _same_model(GradientBoostingClassifier(**kw).fit(X, y), sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y, 5000)))
    assert names == ["listen", "connect", "stats", "setup", "rows", "bin", "configure", "fit"]
    del names[:]
    y3 = np.digitize(z, [0.0, 1.5])                          # 3 classes: 3 trees a round
    _same_model(GradientBoostingClassifier(**kw).fit(X, y3), sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y3, 5000)))
    assert names.count("fit") == 1 and len(names) == 8


def _rpc_puts(direct):
    """On a worker: the direct links on or off, and the histograms sent through Dask RPCs
    (``_call_peer``) counted from now on; returns the count so far."""
    import smml.dask._gbm as gbm
    gbm._Group.direct = direct
    if not hasattr(gbm, "_rpc_count"):
        gbm._rpc_count = [0]
        orig = gbm._call_peer

        async def counted(*args):
            gbm._rpc_count[0] += 1
            return await orig(*args)

        gbm._call_peer = counted
    n = gbm._rpc_count[0]
    gbm._rpc_count[0] = 0
    return n


def test_the_histograms_travel_on_direct_links_or_through_dask_the_same_model(client):
    # the default: the groups exchange on direct sockets (no Dask RPC between the workers);
    # with direct links off (as on a tls:// cluster) through Dask RPCs: the same model
    X, z = _data(20000, 4, seed=9)
    y = (z > 1).astype(int)
    kw = dict(n_estimators=4, max_depth=4, random_state=0, max_bins=64)
    a = GradientBoostingClassifier(**kw).fit(X, y)
    try:
        client.run(_rpc_puts, True)
        _same_model(a, sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y, 5000)))
        assert set(client.run(_rpc_puts, False).values()) == {0}
        _same_model(a, sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y, 5000)))
        counts = client.run(_rpc_puts, True).values()
        assert len(counts) == 2 and min(counts) >= 4      # at least the 4 trees' roots each way
    finally:
        client.run(_rpc_puts, True)


def test_direct_links_deliver_arrays_exactly_and_refuse_strangers():
    # the transport alone, on this process's event loop: two groups, float64 / int64 arrays of
    # any shape and None delivered as sent; a connection without the fit's token is closed and
    # not counted; a closed link ends its reader
    import asyncio
    import socket
    from smml.dask._actors import _Links

    async def main():
        got = {0: [], 1: []}
        links = [_Links(), _Links()]
        addrs = [lk.listen("127.0.0.1") for lk in links]
        token = b"t" * 16
        # a stranger connects to group 0 first, with a wrong token
        loop = asyncio.get_running_loop()
        bad = socket.socket()
        bad.setblocking(False)
        await loop.sock_connect(bad, addrs[0])
        await loop.sock_sendall(bad, b"x" * 16 + np.array([1], np.int64).tobytes())
        # and a silent one, which must not hold up the groups' connections
        links[0].hello_timeout = 0.5
        silent = socket.socket()
        silent.setblocking(False)
        await loop.sock_connect(silent, addrs[0])
        arrived = {0: asyncio.Event(), 1: asyncio.Event()}

        def deliver(g, t, s, p):
            got[g].append((t, s, p))
            arrived[g].set()

        await asyncio.gather(*[links[g].connect(addrs, g, token, lambda t, s, p, g=g: deliver(g, t, s, p))
                               for g in (0, 1)])
        rng = np.random.default_rng(0)
        # as the fit uses them: each message consumed (here: checked) before the next is sent;
        # tags 1 and 3 share a receive buffer (grown for 3), as do 2 and 4
        sent = [(rng.normal(size=(3, 5, 7, 2)), np.arange(4, dtype=np.int64)),
                (rng.normal(size=(1, 2, 3, 2)), None),
                (rng.normal(size=(4, 5, 7, 2)), np.arange(9, dtype=np.int64) - 4),
                (np.zeros((0, 4, 2, 2)), np.zeros(0, np.int64))]
        for tag, p in enumerate(sent, 1):
            await asyncio.gather(links[0].send(1, tag, 0, p), links[1].send(0, tag, 1, p))
            for g in (0, 1):
                await asyncio.wait_for(arrived[g].wait(), 60)
                arrived[g].clear()
                assert len(got[g]) == tag
                t, src, q = got[g][-1]
                assert (t, src) == (tag, 1 - g)
                for x, y in zip(q, p, strict=True):
                    if y is None:
                        assert x is None
                    else:
                        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        bad.close()
        assert [len(got[g]) for g in (0, 1)] == [len(sent)] * 2
        # the silent stranger is closed once its time to greet is over
        assert await asyncio.wait_for(loop.sock_recv(silent, 16), 60) == b""
        silent.close()
        tasks = [t for lk in links for t in lk.tasks]
        for lk in links:
            lk.close()
        await asyncio.gather(*tasks)          # the readers end (cancelled), no error escapes
        assert all(t.done() for t in tasks)

    asyncio.run(main())


def test_closing_direct_links_ends_a_pending_connect():
    # a fit stopped while its groups connect (a peer lost before it dialled): close() ends the
    # wait for the peer's connection with a clear error, never a hang
    import asyncio
    from smml.dask._actors import _Links

    async def main():
        a, b = _Links(), _Links()
        addrs = [a.listen("127.0.0.1"), b.listen("127.0.0.1")]
        pending = asyncio.ensure_future(a.connect(addrs, 0, b"t" * 16, lambda *_: None))
        await asyncio.sleep(0)                  # let it dial b and wait for b's connection
        while not a.connecting:
            await asyncio.sleep(0.01)
        a.close()
        with pytest.raises(RuntimeError, match="stopped while its groups were connecting"):
            await asyncio.wait_for(pending, 60)
        b.close()

    asyncio.run(main())


def test_equal_on_local_threads_and_a_single_chunk():
    # no distributed client: one group of this process, the same model
    X, z = _data(20000, 3, seed=7, nan=0.0)
    y = (z > 0.5).astype(int)
    kw = dict(n_estimators=4, max_depth=None, min_child_weight=5.0, random_state=4)
    a = GradientBoostingClassifier(**kw).fit(X, y)
    with dask.config.set(scheduler="threads"):
        for rows in (20000, 3333):
            _same_model(a, sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y, rows)))


@pytest.mark.parametrize("n, d, n_jobs", [(40000, 24, 2), (20000, 70, 1)])
def test_equal_where_the_kernel_prefetches_and_blocks(n, d, n_jobs):
    # n x (d + 16) bytes of codes and targets over a megabyte, and the nodes below the top
    # levels hold under n d / 256 rows: the in-memory kernel prefetches their rows
    # (_histogram.pxd, gather_prefetch); 70 features on one thread take two passes over a
    # node's rows (_gbm.pyx, PASS_BYTES: 64 histograms of 256 bins a pass); the workers'
    # level pass reads every row in order, all features at once
    X, z = _data(n, d, seed=11, nan=0.02)
    y = (z > 0.5).astype(int)
    kw = dict(n_estimators=3, max_depth=8, random_state=2, n_jobs=n_jobs)
    a = GradientBoostingClassifier(**kw).fit(X, y)
    with dask.config.set(scheduler="threads"):
        _same_model(a, sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y, 15000)))


# ---- bad inputs -----------------------------------------------------------------------------------

def test_bad_inputs(client):
    X, z = _data(2000, 3)
    y = (z > 0).astype(int)
    Xd, yd = _dask(X, y, 500)
    with pytest.raises(TypeError, match="dask array"):
        sd.GradientBoostingClassifier().fit(X, y)
    with pytest.raises(ValueError, match="max_leaf_nodes"):
        sd.GradientBoostingClassifier(max_leaf_nodes=8).fit(Xd, yd)
    for bad in (dict(subsample=0.5), dict(early_stopping=True), dict(warm_start=True),
                dict(categorical_features=[0])):
        with pytest.raises(ValueError, match="not offered"):
            sd.GradientBoostingClassifier(**bad).fit(Xd, yd)
    with pytest.raises(ValueError, match="learning_rate"):
        sd.GradientBoostingClassifier(learning_rate=-1.0).fit(Xd, yd)
    with pytest.raises(ValueError, match="inconsistent"):
        sd.GradientBoostingClassifier().fit(Xd, y[:-1])
    Xi = X.copy()
    Xi[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        sd.GradientBoostingClassifier(n_estimators=1).fit(da.from_array(Xi, chunks=(500, -1)), yd)
    with pytest.raises(ValueError, match="2 classes"):
        sd.GradientBoostingClassifier(n_estimators=1).fit(Xd, da.zeros(2000, chunks=500))
    with pytest.raises(ValueError, match="non-negative"):
        sd.GradientBoostingRegressor(n_estimators=1).fit(Xd, da.from_array(z, chunks=500),
                                                         sample_weight=-np.ones(2000))
    with pytest.raises(ValueError, match="NaN or infinity"):
        zn = z.copy()
        zn[0] = np.nan
        sd.GradientBoostingRegressor(n_estimators=1).fit(Xd, da.from_array(zn, chunks=500))


@pytest.mark.parametrize("on_cluster", [True, False])
def test_a_diverging_learning_rate_raises_the_in_memory_error_from_the_workers(client, on_cluster):
    # the rounds loop runs on the workers: its DivergenceError (the all-reduced loss overflows)
    # reaches the caller as in memory, naming the same round; the cluster then fits again
    from smml.exceptions import DivergenceError
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=400)
    kw = dict(learning_rate=1e9, n_estimators=100, random_state=0)
    with pytest.raises(DivergenceError, match="after round (\\d+)") as mem:
        GradientBoostingRegressor(**kw).fit(X, y)
    round_ = mem.value.args[0].split("after round ")[1].split(";")[0]
    Xd, yd = _dask(X, y, 150)
    ctx = dask.config.set(scheduler="sync") if not on_cluster else dask.config.set({})
    with ctx:
        with pytest.raises(DivergenceError, match=f"smml.dask.GradientBoostingRegressor: .* after round {round_};"):
            sd.GradientBoostingRegressor(**kw).fit(Xd, yd)
        kw["learning_rate"] = 0.1
        _same_model(GradientBoostingRegressor(**kw).fit(X, y), sd.GradientBoostingRegressor(**kw).fit(Xd, yd))


def test_equal_on_an_in_process_cluster(client):
    # inproc:// workers (a LocalCluster of threads in this process): the direct links on the
    # loopback interface, the same model; the module's cluster is the default again after it
    from smml.dask._validation import _distributed_client
    X, z = _data(20000, 5, seed=13)
    y = (z > 1).astype(int)
    kw = dict(n_estimators=5, max_depth=4, random_state=0, max_bins=64)
    a = GradientBoostingClassifier(**kw).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cl, distributed.Client(cl) as c:
        assert all(w.startswith("inproc://") for w in c.nthreads())
        _rpc_puts(True)                     # the workers are threads of this process
        _same_model(a, sd.GradientBoostingClassifier(**kw).fit(*_dask(X, y, 5000)))
        assert _rpc_puts(True) == 0         # no histogram went through Dask
    assert _distributed_client() is client
