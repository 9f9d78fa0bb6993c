"""smml.neighbors: the notes' k-NN rules (000 'The Nearest Neighbour algorithm', 002 'Nearest neighbors')."""
import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import smml.neighbors as nb
from smml._core import _kdtree, _knn
from smml.neighbors import KNNClassifier, KNNRegressor, _search, _structures
from smml.reference import neighbors as ref

DTYPES = [np.float32, np.float64]


# ---- data -------------------------------------------------------------------

def _data(kind, rng, m=60, nq=25, d=3, n_classes=3):
    """Training and query sets; 'dups' and 'grid' are full of exact distance ties."""
    if kind == "continuous":
        X = rng.normal(size=(m, d))
        Q = rng.normal(size=(nq, d))
    elif kind == "grid":            # integer coordinates: many equal distances
        X = rng.integers(0, 3, size=(m, d)).astype(float)
        Q = rng.integers(-1, 4, size=(nq, d)).astype(float)
    elif kind == "dups":            # few distinct rows, far from the origin (gemm cancellation)
        base = 1e4 + rng.normal(size=(6, d)) * 0.1
        X = base[rng.integers(0, 6, size=m)]
        Q = np.vstack([base[rng.integers(0, 6, size=nq // 2)],
                       1e4 + rng.normal(size=(nq - nq // 2, d)) * 0.1])
    else:
        raise ValueError(kind)
    y = rng.integers(0, n_classes, size=m)
    return X, y, Q


def _both(cls_smml, cls_ref, X, y, Q, dtype, **kw):
    n_jobs = kw.pop("n_jobs", None)
    ours = {("n_neighbors" if name == "k" else name): v for name, v in kw.items()}  # the notes' k
    est = cls_smml(n_jobs=n_jobs, **ours).fit(X.astype(dtype), y)
    r = cls_ref(**kw).fit(X.astype(dtype), y)
    return est, r, Q.astype(dtype)


# ---- the kernel agrees exactly with the plain-Python reference ------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["continuous", "grid", "dups"])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "hamming"])
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("algorithm", ["brute", "tree"])
def test_classifier_equals_reference_exactly(rng, dtype, kind, metric, n_jobs, algorithm):
    X, y, Q = _data(kind, rng)
    for k in (1, 4, X.shape[0]):
        for weights in ("uniform", "distance", "slide"):
            est, r, Qd = _both(KNNClassifier, ref.KNNClassifier, X, y, Q, dtype,
                               k=k, metric=metric, weights=weights, n_jobs=n_jobs)
            est.set_params(algorithm=algorithm).fit(X.astype(dtype), y)
            np.testing.assert_array_equal(est.predict(Qd), r.predict(Qd))
            np.testing.assert_array_equal(est.predict_proba(Qd), r.predict_proba(Qd))
            D, I = est.kneighbors(Qd, n_neighbors=min(k, 5))
            Dr, Ir = r.kneighbors(Qd, k=min(k, 5))
            np.testing.assert_array_equal(I, Ir)
            np.testing.assert_array_equal(D, Dr)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["continuous", "grid", "dups"])
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("algorithm", ["brute", "tree"])
def test_regressor_equals_reference_exactly(rng, dtype, kind, n_jobs, algorithm):
    X, _, Q = _data(kind, rng)
    y = rng.normal(size=X.shape[0]) * 10
    for metric in ("euclidean", "manhattan"):
        for k in (1, 3, X.shape[0]):
            for weights in ("uniform", "distance", "slide"):
                est, r, Qd = _both(KNNRegressor, ref.KNNRegressor, X, y, Q, dtype,
                                   k=k, metric=metric, weights=weights, n_jobs=n_jobs)
                est.set_params(algorithm=algorithm).fit(X.astype(dtype), y)
                np.testing.assert_array_equal(est.predict(Qd), r.predict(Qd))


def test_exact_on_training_points_themselves(rng):
    X, y, _ = _data("dups", rng, m=80)
    for k in (1, 2, 7):
        est = KNNClassifier(n_neighbors=k).fit(X, y)
        np.testing.assert_array_equal(est.predict(X), ref.KNNClassifier(k=k).fit(X, y).predict(X))


def test_results_do_not_depend_on_chunking_or_batching(rng, monkeypatch):
    X, y, Q = _data("grid", rng, m=300, nq=90, d=4)
    for dtype in DTYPES:
        want = ref.KNNClassifier(k=5).fit(X.astype(dtype), y).predict(Q.astype(dtype))
        for qc, tc, out_budget in [(1, 1, 1), (3, 7, 50), (256, 4096, 1 << 21)]:
            monkeypatch.setattr(_search, "_Q_CHUNK", qc)
            monkeypatch.setattr(_search, "_T_CHUNK", {np.float32: tc, np.float64: tc})
            monkeypatch.setattr(_search, "_OUT_BUDGET", out_budget)
            monkeypatch.setattr(_search, "_FALLBACK_BUDGET", 500)
            monkeypatch.setattr(_search, "_GRAIN", 1)
            for n_jobs in (1, 2):
                got = KNNClassifier(n_neighbors=5, n_jobs=n_jobs, algorithm="brute").fit(X.astype(dtype), y).predict(Q.astype(dtype))
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("algorithm", ["brute", "tree"])
def test_one_and_two_threads_identical(rng, algorithm):
    X = rng.integers(0, 4, size=(3000, 5)).astype(np.float64)
    y = rng.integers(0, 4, size=3000)
    Q = rng.integers(0, 4, size=(700, 5)).astype(np.float64)
    for Est, yy in ((KNNClassifier, y), (KNNRegressor, y * 1.5)):
        a = Est(n_neighbors=9, weights="distance", n_jobs=1, algorithm=algorithm).fit(X, yy)
        b = Est(n_neighbors=9, weights="distance", n_jobs=2, algorithm=algorithm).fit(X, yy)
        np.testing.assert_array_equal(a.predict(Q), b.predict(Q))
        np.testing.assert_array_equal(a.kneighbors(Q)[1], b.kneighbors(Q)[1])


def _kernel_inputs(X, Q, dtype, k):
    # the plain tiles (float64 norms added in the scan; the estimator uses augmented rows)
    est = KNNClassifier(n_neighbors=k, algorithm="brute").fit(X.astype(dtype), np.arange(len(X)) % 2)
    Q0 = np.ascontiguousarray(Q, dtype=dtype)
    Qc, q_norm = _search._centre(Q0, est._mu, est._dtype)
    Tc, t_norm = _search._centre(est._T0, est._mu, est._dtype)
    eps = _search._euclidean_error_bound(q_norm, est._radius, X.shape[1], est._dtype)
    return (Qc, Tc, q_norm, t_norm, Q0, est._T0, eps)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["continuous", "grid", "dups"])
def test_split_train_kernel_gives_the_serial_candidates(rng, dtype, kind):
    # the training-split strategy merges per-thread heaps into exactly the serial scan's
    # heap: same candidate lists (all cap slots), same k' (or -1) for any thread count
    X, _, Q = _data(kind, rng, m=500, nq=37, d=4)
    for k in (1, 4, 11):
        args = _kernel_inputs(X, Q, dtype, k)
        cap = min(len(X), k + k // 2 + 8)
        outs = []
        for kernel, q_chunk, t_chunk, n_threads in [
                (_knn.knn_gemm, 37, 16, 1), (_knn.knn_gemm_split_train, 37, 16, 1),
                (_knn.knn_gemm_split_train, 37, 16, 2), (_knn.knn_gemm_split_train, 37, 16, 3),
                (_knn.knn_gemm_split_train, 37, 16, 64)]:
            key = np.empty((len(Q), cap)); idx = np.empty((len(Q), cap), dtype=np.intp)
            cnt = np.empty(len(Q), dtype=np.intp)
            kernel(*args, k, cap, key, idx, cnt, q_chunk, t_chunk, n_threads)
            outs.append((key, idx, cnt))
        for key, idx, cnt in outs[1:]:
            np.testing.assert_array_equal(cnt, outs[0][2])
            np.testing.assert_array_equal(idx, outs[0][1])
            np.testing.assert_array_equal(key, outs[0][0])
        if kind == "dups":
            assert np.any(outs[0][2] < 0) or k == 1     # the fallback is exercised too
        # query chunks of <= 6 rows take gemv (other rounding): the same taken points and k'
        # (a query flagged -1 under one rounding only is possible in principle: not compared)
        for kernel, n_threads in ((_knn.knn_gemm, 1), (_knn.knn_gemm_split_train, 2)):
            key = np.empty((len(Q), cap)); idx = np.empty((len(Q), cap), dtype=np.intp)
            cnt = np.empty(len(Q), dtype=np.intp)
            kernel(*args, k, cap, key, idx, cnt, 5, 16, n_threads)
            both = (cnt >= 0) & (outs[0][2] >= 0)
            assert both.sum() >= 0.8 * (outs[0][2] >= 0).sum()
            np.testing.assert_array_equal(cnt[both], outs[0][2][both])
            taken = (np.arange(cap) < cnt[:, None]) & both[:, None]
            np.testing.assert_array_equal(idx[taken], outs[0][1][taken])
            np.testing.assert_array_equal(key[taken], outs[0][0][taken])


@pytest.mark.parametrize("kind", ["continuous", "grid", "dups"])
def test_split_train_strategy_gives_identical_results(rng, monkeypatch, kind):
    X, y, Q = _data(kind, rng, m=400, nq=40, d=5)
    monkeypatch.setattr(_search, "_GRAIN", 1)
    monkeypatch.setattr(_search, "_T_CHUNK", {np.float32: 13, np.float64: 13})
    for dtype in DTYPES:
        want = ref.KNNClassifier(k=6).fit(X.astype(dtype), y).predict(Q.astype(dtype))
        results = []
        for below, q_chunk in ((0, 256), (1 << 30, 256), (1 << 30, 7)):  # never / always split
            monkeypatch.setattr(_search, "_SPLIT_TRAIN_BELOW", below)
            monkeypatch.setattr(_search, "_Q_CHUNK", q_chunk)
            for n_jobs in (1, 2):
                clf = KNNClassifier(n_neighbors=6, n_jobs=n_jobs, algorithm="brute").fit(X.astype(dtype), y)
                reg = KNNRegressor(n_neighbors=6, weights="distance", n_jobs=n_jobs,
                                   algorithm="brute").fit(X.astype(dtype), y * 0.5)
                results.append((clf.predict(Q.astype(dtype)), *clf.kneighbors(Q.astype(dtype)),
                                reg.predict(Q.astype(dtype)), clf.predict(Q[:1].astype(dtype))))
        np.testing.assert_array_equal(results[0][0], want)
        for r in results[1:]:
            for a, b in zip(r, results[0]):
                np.testing.assert_array_equal(a, b)


def test_split_train_is_chosen_for_few_queries(rng, monkeypatch):
    # the strategy switch itself: few queries on 2 threads take the training split
    X, y, Q = _data("continuous", rng, m=300, nq=10, d=3)
    calls = []
    for name in ("knn_gemm", "knn_gemm_split_train"):
        real = getattr(_knn, name)
        # argument 14: n_threads (then the error bound's coefficient and slack)
        monkeypatch.setattr(_knn, name, lambda *a, _real=real, _name=name: (calls.append((_name, a[14])),
                                                                          _real(*a))[1])
    monkeypatch.setattr(_search, "_GRAIN", 1)
    est = KNNClassifier(n_neighbors=3, n_jobs=2, algorithm="brute").fit(X, y)
    est.predict(Q[:5])
    est.predict(np.repeat(Q, 20, axis=0))
    KNNClassifier(n_neighbors=3, n_jobs=1, algorithm="brute").fit(X, y).predict(Q[:5])
    assert calls == [("knn_gemm_split_train", 2), ("knn_gemm", 2), ("knn_gemm", 1)]


# ---- the kd-tree: exactly the brute path's candidates -------------------------------

def _taken_lists(est, Q):
    """[(counts, indices, keys)] of every block of the estimator's search (all k' points)."""
    k = est._checked_k(est.n_samples_fit_)
    Q0, Qm = est._queries(Q)
    per_query = [None] * len(Q0)
    for rows, t in est._search(Q0, k, est._n_threads(), Qm=Qm):
        indptr, idx, keys = t.csr()
        for j, q in enumerate(np.arange(len(Q0))[rows]):     # rows: a slice or the tree's order
            assert per_query[q] is None
            per_query[q] = (idx[indptr[j]:indptr[j + 1]], keys[indptr[j]:indptr[j + 1]])
    return [np.array([len(i) for i, _ in per_query]), np.concatenate([i for i, _ in per_query]),
            np.concatenate([v for _, v in per_query])]


def _tie_data(kind, rng, d):
    if kind == "grid":                   # integer grid: ties everywhere, queries on splitting planes
        X = rng.integers(0, 4, size=(700, d)).astype(float)
        Q = np.vstack([rng.integers(-1, 5, size=(60, d)), X[:20]]).astype(float)
    elif kind == "dups":                 # 40 copies of 10 rows (far from the origin) and a few others
        base = 1e3 + rng.normal(size=(10, d))
        X = np.vstack([np.repeat(base, 40, axis=0), 1e3 + rng.normal(size=(30, d))])
        Q = np.vstack([base, (base[:5] + base[5:]) / 2, 1e3 + rng.normal(size=(10, d))])
    elif kind == "decimal":              # non-representable decimals: rounding in every subtraction
        X = rng.integers(0, 30, size=(600, d)) * 0.1
        Q = rng.integers(-5, 35, size=(60, d)) * 0.1
    else:
        X = rng.normal(size=(800, d))
        Q = rng.normal(size=(50, d))
    return X, Q


@pytest.mark.parametrize("kind", ["grid", "dups", "decimal", "continuous"])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "mahalanobis", "hamming"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tree_and_brute_take_identical_points(rng, monkeypatch, kind, metric, dtype):
    # every k' list (not just k points) and every key, bit for bit, on tie-heavy data,
    # with tiny leaves (ties spread over many leaves) and the default ones, the queries
    # searched in their own order and in tree order, in one block or several
    d = 2 if kind != "continuous" else 3
    X, Q = _tie_data(kind, rng, d)
    X, Q = X.astype(dtype), Q.astype(dtype)
    y = rng.integers(0, 3, size=len(X))
    for leaf, order_min, budget in ((2, 1, 1 << 16), (16, 1 << 30, 200), (None, 1, 300)):
        monkeypatch.setattr(_search, "_LEAF_SIZE", leaf)
        monkeypatch.setattr(_search, "_ORDER_MIN", order_min)
        monkeypatch.setattr(_search, "_TREE_OUT_BUDGET", budget)     # blocks of queries
        for k in (1, 5, 41, len(X)):
            for n_jobs in (1, 2):
                kw = dict(n_neighbors=k, metric=metric, n_jobs=n_jobs)
                tree = KNNClassifier(algorithm="tree", **kw).fit(X, y)
                brute = KNNClassifier(algorithm="brute", **kw).fit(X, y)
                assert tree.algorithm_ == "tree" and brute.algorithm_ == "brute"
                for a, b in zip(_taken_lists(tree, Q), _taken_lists(brute, Q)):
                    np.testing.assert_array_equal(a, b)
                np.testing.assert_array_equal(tree.predict(Q), brute.predict(Q))
        if kind == "grid" and metric == "euclidean":
            counts = _taken_lists(KNNClassifier(n_neighbors=5, algorithm="tree").fit(X, y), Q)[0]
            assert counts.max() > 5 + 5 // 2 + 8      # ties beyond the first cap: asked again


@pytest.mark.parametrize("k", [1, 5, 150])
def test_tree_labels_are_those_of_the_indices(rng, k):
    # the kd-tree writes the class codes of the taken points (read from the tree-ordered
    # copy) beside their indices; k = 150 sorts more than RANK_MAX points (the qsort path)
    X = rng.integers(0, 5, size=(600, 2)).astype(float)          # a grid: many ties
    y = rng.integers(0, 4, size=600)
    est = KNNClassifier(n_neighbors=k, algorithm="tree").fit(X, y)
    Q = rng.integers(-1, 6, size=(40, 2)).astype(float)
    cap = k + 3
    key, idx = np.empty((40, cap)), np.empty((40, cap), dtype=np.intp)
    lab, cnt = np.empty((40, cap), dtype=np.intp), np.empty(40, dtype=np.intp)
    _kdtree.knn(Q, *est._tree, 0, k, cap, key, idx, cnt, 2, est._ytree, lab)
    written = idx >= 0
    assert written.sum() > 40 * k and np.all(written.sum(axis=1) == np.minimum(cnt, cap))
    np.testing.assert_array_equal(lab[written], est._y[idx[written]])
    assert np.all(lab[~written] == -1)
    with pytest.raises(ValueError):
        _kdtree.knn(Q, *est._tree, 0, k, cap, key, idx, cnt, 1, est._ytree, None)
    with pytest.raises(ValueError):
        _kdtree.knn(Q, *est._tree, 0, k, cap, key, idx, cnt, 1, est._ytree[:-1], lab)


def test_tree_against_reference_on_a_circle_of_ties(monkeypatch):
    # 12 lattice points at distance 5 from the origin, spread over leaves of 2 points;
    # 4 points at distance 2 and one at fl(sqrt(2) * sqrt(2)) = 2 + 4e-16 (not tied):
    # k = 1 takes the 4, k = 5 five, k = 6 all 17 (k' = 17)
    circle = [(3, 4), (4, 3), (-3, 4), (-4, 3), (3, -4), (4, -3), (-3, -4), (-4, -3),
              (5, 0), (-5, 0), (0, 5), (0, -5)]
    inner = [(2, 0), (-2, 0), (0, 2), (0, -2), (2 ** 0.5 * 2 ** 0.5, 0)]
    X = np.array(circle + inner + [(6, 0), (0, 6), (7, 7)], dtype=float)
    y = np.arange(len(X)) % 2
    monkeypatch.setattr(_search, "_LEAF_SIZE", 2)
    for k, want in ((6, 17), (5, 5), (1, 4), (17, 17), (18, 19)):
        est = KNNClassifier(n_neighbors=k, algorithm="tree").fit(X, y)
        counts, idx, keys = _taken_lists(est, [[0.0, 0.0]])
        r = ref.KNNClassifier(k=k).fit(X, y).taken([0.0, 0.0])
        assert counts[0] == want == len(r)
        assert idx.tolist() == [t for _, t in r] and keys.tolist() == [v for v, _ in r]


@pytest.mark.parametrize("dtype", DTYPES)
def test_box_bound_is_a_lower_bound_in_floating_point(rng, dtype):
    # points inside a box, the box's corners on the points themselves (tight boxes), queries
    # everywhere: the bound never exceeds the exact key computed by the brute path
    for trial in range(60):
        d = int(rng.integers(1, 6))
        scale = 10.0 ** rng.integers(-8, 9)
        P = (rng.integers(-50, 50, size=(30, d)) * 0.1 * scale + rng.normal(size=d) * scale).astype(dtype)
        lo, hi = P.min(axis=0), P.max(axis=0)
        Q = np.vstack([(rng.normal(size=(20, d)) * 4 * scale).astype(dtype), P[:5],
                       np.nextafter(lo, -np.inf).astype(dtype)[None], lo[None]])
        for code in (0, 1, 2):
            D = np.empty((len(Q), len(P)))
            _knn.exact_rows(Q, P, np.arange(len(Q)), code, D, 1)
            for i, q in enumerate(Q):
                b = _kdtree.box_bound_of(np.ascontiguousarray(q), lo, hi, code)
                assert b <= D[i].min(), (trial, code, b, D[i].min())


def test_tree_memory_and_selection_rule(rng):
    X = rng.normal(size=(1000, 3))
    y = rng.integers(0, 2, size=1000)
    est = KNNClassifier(n_neighbors=3).fit(X, y)
    assert est.algorithm_ == "tree"
    Tb, perm, start, end, _, _ = est._tree
    assert sorted(perm.tolist()) == list(range(1000))
    flat = Tb.ravel()
    first_leaf = len(start) // 2
    assert start[first_leaf] == 0 and end[-1] == 1000 and np.all(start[first_leaf + 1:] == end[first_leaf:-1])
    for s, e in zip(start[first_leaf:], end[first_leaf:]):       # each leaf's rows, feature-major
        np.testing.assert_array_equal(flat[3 * s:3 * e].reshape(3, e - s).T, X[perm[s:e]])
    leaf = _structures._leaf_size(3)
    assert (end - start)[len(start) // 2:].max() <= leaf           # leaves
    assert len(start) < 4 * 1000 / leaf                            # O(m / leaf_size) nodes
    assert not hasattr(est, "_Tc")                                 # no brute-force copy
    for metric, d, m, want in (("euclidean", 6, 50, "tree"), ("euclidean", 8, 50, "both"),
                               ("euclidean", 8, 1 << 16, "tree"), ("euclidean", 11, 50, "both"),
                               ("euclidean", 130, 1 << 16, "both"), ("mahalanobis", 11, 50, "both"),
                               ("manhattan", 2, 50, "tree"), ("manhattan", 30, 50, "tree"),
                               ("manhattan", 49, 50, "brute"), ("hamming", 2, 50, "brute"),
                               ("mahalanobis", 3, 50, "tree")):
        assert _search._pick_rule(metric, d, m) == want
        if m == 50:
            got = KNNClassifier(metric=metric).fit(rng.normal(size=(m, d)), np.arange(m) % 2).algorithm_
            assert got == want


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_tree_order_and_blocks_keep_every_output_in_query_order(rng, monkeypatch, weights):
    # the tree searches the queries in its own order and in blocks; predict, predict_proba,
    # kneighbors and the regressor must still answer row by row as brute force does
    X = rng.integers(0, 6, size=(500, 2)).astype(float)
    y = rng.integers(0, 3, size=500)
    Q = rng.integers(-1, 7, size=(300, 2)).astype(float)
    monkeypatch.setattr(_search, "_ORDER_MIN", 1)
    monkeypatch.setattr(_search, "_TREE_OUT_BUDGET", 500)
    for k in (1, 7):
        kw = dict(n_neighbors=k, weights=weights, n_jobs=2)
        t = KNNClassifier(algorithm="tree", **kw).fit(X, y)
        b = KNNClassifier(algorithm="brute", **kw).fit(X, y)
        np.testing.assert_array_equal(t.predict(Q), b.predict(Q))
        np.testing.assert_array_equal(t.predict_proba(Q), b.predict_proba(Q))
        for u, v in zip(t.kneighbors(Q), b.kneighbors(Q)):
            np.testing.assert_array_equal(u, v)
        tr = KNNRegressor(algorithm="tree", **kw).fit(X, y * 0.1)
        br = KNNRegressor(algorithm="brute", **kw).fit(X, y * 0.1)
        np.testing.assert_array_equal(tr.predict(Q), br.predict(Q))


def _forced_model(monkeypatch, brute_point_ns):
    """The cost model of "both" forced through its brute-force constants (0: brute force
    always cheaper; 1e9: the tree), and a list that records (kernel, queries) at every search
    kernel call: the kd-tree's ("knn": knn, or knn_votes for predict's counts-only vote) and
    the gemm filter's."""
    monkeypatch.setattr(_search, "_COST_BRUTE_POINT", brute_point_ns)
    monkeypatch.setattr(_search, "_COST_BRUTE_QUERY", brute_point_ns)
    calls = []
    for mod, name in ((_kdtree, "knn"), (_kdtree, "knn_votes"), (_knn, "knn_gemm"), (_knn, "knn_gemm_split_train")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _r=real, _n=name.replace("_votes", ""), **kw:
                            (calls.append((_n, len(a[0]))), _r(*a, **kw))[1])
    return calls


@pytest.mark.parametrize("brute_point_ns, pick", [(0.0, "brute"), (1e9, "tree")])
def test_both_structures_pick_per_call(rng, monkeypatch, brute_point_ns, pick):
    # algorithm_ == "both": calls of at most _FEW_QUERIES queries take the tree; the first
    # larger call searches its first _PROBE_QUERIES by the tree and the cost model picks the
    # structure of the rest and of the later calls (forced here through its constants)
    X, y, Q = _data("grid", rng, m=300, nq=300, d=8)
    est = KNNClassifier(n_neighbors=4).fit(X, y)
    assert est.algorithm_ == "both" and est._tree is not None and est._gemm
    calls = _forced_model(monkeypatch, brute_point_ns)
    want = ref.KNNClassifier(k=4).fit(X, y).predict(Q)
    few, probe = _search._FEW_QUERIES, _search._PROBE_FIRST
    np.testing.assert_array_equal(est.predict(Q[:few]), want[:few])
    assert [c[0] for c in calls] == ["knn"] and est._both_pick is None
    calls.clear()
    np.testing.assert_array_equal(est.predict(Q), want)
    # the forced model is decisive after the first probe stage
    assert calls[0] == ("knn", probe) and est._both_pick == pick
    gemm = {"knn_gemm", "knn_gemm_split_train"}
    used = {c[0] for c in calls[1:]}
    assert used == {"knn"} if pick == "tree" else (used and used <= gemm)
    calls.clear()
    np.testing.assert_array_equal(est.predict(Q[:few + 1]), want[:few + 1])
    used = {c[0] for c in calls}
    assert used == {"knn"} if pick == "tree" else (used and used <= gemm)


@pytest.mark.parametrize("brute_point_ns, pick", [(0.0, "brute"), (1e9, "tree")])
def test_both_structures_probe_stages_span_calls_beyond_the_tree_rule(rng, monkeypatch, brute_point_ns, pick):
    # beyond _TREE_MAX_D features "both" has no fixed rule for small calls: until the model
    # has picked, every call's queries go through the tree in probe stages (_PROBE_FIRST,
    # then up to _PROBE_QUERIES over the model's calls), and the pick then serves the rest
    # of the call and every later call, small ones included. A model that is never
    # decisive early picks once _PROBE_QUERIES queries are counted.
    X = np.vstack([rng.normal(size=(150, 12)), rng.normal(size=(150, 12)) + 6.0])
    y = rng.integers(0, 3, size=300)
    Q = np.vstack([rng.normal(size=(100, 12)), rng.normal(size=(100, 12)) + 6.0])[rng.permutation(200)]
    est = KNNClassifier(n_neighbors=3).fit(X, y)
    assert est.algorithm_ == "both" and est._tree is not None and est._gemm
    monkeypatch.setattr(_search, "_PROBE_DECISIVE", np.inf)
    calls = _forced_model(monkeypatch, brute_point_ns)
    want = ref.KNNClassifier(k=3).fit(X, y).predict(Q)
    first, total = _search._PROBE_FIRST, _search._PROBE_QUERIES
    np.testing.assert_array_equal(est.predict(Q[:5]), want[:5])         # a small call probes
    assert calls == [("knn", 5)] and est._both_pick is None and est._probe[0] == 5
    calls.clear()
    np.testing.assert_array_equal(est.predict(Q[5:55]), want[5:55])     # 3 to end the stage, then 47
    assert calls == [("knn", first - 5), ("knn", 50 - (first - 5))] and est._probe[0] == 55
    calls.clear()
    np.testing.assert_array_equal(est.predict(Q[55:]), want[55:])       # the last probe, then the pick
    assert calls[0] == ("knn", total - 55) and est._both_pick == pick and est._probe[0] == total
    used = {c[0] for c in calls[1:]}
    assert sum(c[1] for c in calls[1:]) == 200 - total
    assert used == {"knn"} if pick == "tree" else (used and used <= {"knn_gemm", "knn_gemm_split_train"})
    calls.clear()
    np.testing.assert_array_equal(est.predict(Q[:3]), want[:3])         # small calls take the pick
    assert (calls[0][0] == "knn") == (pick == "tree")


def test_both_structures_cost_model_reads_the_tree_work(rng):
    # the choice is a function of the data (the tree's counted work), not of a clock: the
    # same on every fit and thread count; the work counts are the kernel's, the same for
    # any number of threads, and the tree's estimate grows with them
    X, y, Q = _data("continuous", rng, m=3000, nq=400, d=8)
    picks, works = set(), []
    for nj in (1, 2, 1, 2):
        est = KNNClassifier(n_neighbors=5, n_jobs=nj).fit(X, y)
        assert est.algorithm_ == "both"
        est.predict(Q)
        picks.add(est._both_pick)
        Q0, _ = est._queries(Q[:_search._PROBE_QUERIES])
        w = np.empty((Q0.shape[0], 2), dtype=np.intp)
        cap = 5 + 5 // 2 + _search._SLACK
        _kdtree.knn(Q0, *est._tree, 0, 5, cap, np.empty((len(Q0), cap)), np.empty((len(Q0), cap), dtype=np.intp),
                    np.empty(len(Q0), dtype=np.intp), nj, out_work=w)
        works.append(w)
        tree_ns, brute_ns = est._both_costs(w.sum(axis=0), len(Q0))
        assert est._both_pick == ("tree" if tree_ns <= brute_ns else "brute")
    assert len(picks) == 1
    for w in works[1:]:
        np.testing.assert_array_equal(w, works[0])
    assert (works[0][:, 0] >= 5).all() and (works[0][:, 1] >= 2).all()
    t1, _ = est._both_costs((10, 0), 1)
    t2, _ = est._both_costs((20, 0), 1)
    assert t2 > t1


def test_float32_filter_of_float64_data_changes_nothing(rng, monkeypatch):
    # float64 brute force filters candidates through a float32 gemm and re-ranks exactly:
    # the same points as the float64 gemm, also on data where the filter cannot separate them
    for kind in ("continuous", "grid", "dups"):
        X, y, Q = _data(kind, rng, m=500, nq=60, d=12)
        a = KNNClassifier(n_neighbors=7, algorithm="brute").fit(X, y)
        assert a._gemm_dtype == np.float32
        monkeypatch.setattr(_search, "_F32_FILTER", None)
        b = KNNClassifier(n_neighbors=7, algorithm="brute").fit(X, y)
        monkeypatch.undo()
        assert b._gemm_dtype == np.float64
        for u, v in zip(_taken_lists(a, Q), _taken_lists(b, Q)):
            np.testing.assert_array_equal(u, v)
    # tiny data: no float32 filter (its rounding could be subnormal)
    assert KNNClassifier(algorithm="brute").fit(X * 1e-35, y)._gemm_dtype == np.float64


# ---- radius_neighbors ----------------------------------------------------------------

def _radius_by_definition(X, Q, r, metric):
    X, Q = X.astype(np.float64), Q.astype(np.float64)
    diff = Q[:, None, :] - X[None]
    if metric == "euclidean":
        dist = np.sqrt((diff * diff).sum(-1))    # summed in feature order for d <= 2
    elif metric == "manhattan":
        dist = np.abs(diff).sum(-1)
    else:
        dist = (diff != 0).sum(-1).astype(float)
    out = []
    for row in dist:
        i = np.flatnonzero(row <= r)
        out.append(i[np.lexsort((i, row[i]))])
    return out


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "hamming"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_radius_neighbors_both_paths_match_the_definition(rng, metric, dtype):
    X = rng.integers(0, 5, size=(400, 2)).astype(dtype)
    Q = rng.integers(-1, 6, size=(40, 2)).astype(dtype)
    y = np.arange(400) % 2
    for r in (0.0, 1.0, 2 ** 0.5, 2.5, 5.0, np.inf):
        want = _radius_by_definition(X, Q, r, metric)
        for algorithm in ("brute", "tree"):
            for n_jobs in (1, 2):
                est = KNNClassifier(metric=metric, algorithm=algorithm, n_jobs=n_jobs).fit(X, y)
                D, I = est.radius_neighbors(Q, r)
                assert len(I) == len(Q) and I.dtype == object
                for w, i, dd in zip(want, I, D):
                    np.testing.assert_array_equal(i, w)
                    assert np.all(dd <= r) and np.all(np.diff(dd) >= 0)
    # the point itself is left out when X is None (its duplicates stay)
    est = KNNClassifier(metric=metric).fit(X, y)
    I = est.radius_neighbors(r=1.0, return_distance=False)
    full = est.radius_neighbors(X, 1.0, return_distance=False)
    for i, (a, b) in enumerate(zip(I, full)):
        assert i not in a and sorted(a.tolist() + [i]) == sorted(b.tolist())


def test_radius_threshold_is_the_reported_distance(rng):
    # distance exactly 5 (3-4-5) is within r = 5; r just below 5 excludes it; sqrt(2)
    # rounds: the point at squared distance 2 is within r = fl(sqrt(2)) on both paths
    X = np.array([[3.0, 4.0], [1.0, 1.0], [6.0, 0.0]])
    for algorithm in ("brute", "tree"):
        est = KNNRegressor(algorithm=algorithm).fit(X, [0.0, 1.0, 2.0])
        D, I = est.radius_neighbors([[0.0, 0.0]], 5.0)
        assert I[0].tolist() == [1, 0] and D[0].tolist() == [np.sqrt(2.0), 5.0]
        assert est.radius_neighbors([[0.0, 0.0]], np.nextafter(5.0, 0), return_distance=False)[0].tolist() == [1]
        assert est.radius_neighbors([[0.0, 0.0]], np.sqrt(2.0), return_distance=False)[0].tolist() == [1]
        assert est.radius_neighbors([[0.0, 0.0]], np.nextafter(np.sqrt(2.0), 0),
                                    return_distance=False)[0].tolist() == []
        for bad in (-1.0, np.nan, "1", None, True):
            with pytest.raises(ValueError, match="non-negative real"):
                est.radius_neighbors([[0.0, 0.0]], bad)
    for r in (0.0, 1e-300, 0.3, 1.0, 2.0, 1e10, 1e150):
        K = _structures._sqrt_threshold(r)
        assert np.sqrt(K) <= r < np.sqrt(np.nextafter(K, np.inf))
    assert _structures._sqrt_threshold(1e200) == np.inf


# ---- the notes' tie rules, by hand ------------------------------------------

def test_one_nn_distance_tie_takes_both_and_vote_tie_gives_default_label():
    # query 1.0 is at distance 1 from 0.0 ('a') and 2.0 ('b'): k' = 2, the vote ties,
    # the default label is the most frequent training label, 'b'.
    X = np.array([[0.0], [2.0], [10.0], [11.0]])
    y = np.array(["a", "b", "b", "c"])
    est = KNNClassifier(n_neighbors=1).fit(X, y)
    assert est.default_label_ == "b"
    assert est.predict([[1.0]])[0] == "b"
    np.testing.assert_array_equal(est.predict_proba([[1.0]]), [[0.5, 0.5, 0.0]])
    # with 'a' the most frequent, the same tie gives 'a'
    est = KNNClassifier(n_neighbors=1).fit(X, np.array(["b", "a", "a", "c"]))
    assert est.predict([[1.0]])[0] == "a"


def test_k_prime_takes_every_point_tied_with_the_kth():
    # distances from 0: 1, 2, 2, 2, 3 -> with k = 2, k' = 4 (labels 0, 1, 1, 1 -> 1)
    X = np.array([[1.0], [2.0], [-2.0], [2.0], [3.0], [3.0], [3.0]])
    y = np.array([0, 1, 1, 1, 0, 0, 0])
    est = KNNClassifier(n_neighbors=2).fit(X, y)
    assert est.predict([[0.0]])[0] == 1          # the first k=2 alone would tie (0, 1)
    np.testing.assert_array_equal(est.predict_proba([[0.0]]), [[0.25, 0.75]])
    # regression: mean over the k' = 4 taken points
    reg = KNNRegressor(n_neighbors=2).fit(X, np.array([0.0, 4.0, 8.0, 12.0, 100.0, 100.0, 100.0]))
    assert reg.predict([[0.0]])[0] == 6.0
    # kneighbors returns exactly k, ties cut by training index
    D, I = est.kneighbors([[0.0]], n_neighbors=2)
    np.testing.assert_array_equal(I, [[0, 1]])
    np.testing.assert_array_equal(D, [[1.0, 2.0]])


def test_no_k_prime_takes_all_points():
    X = np.zeros((5, 2))
    y = np.array([0, 1, 1, 0, 1])
    est = KNNClassifier(n_neighbors=2).fit(X, y)
    np.testing.assert_array_equal(est.predict_proba([[3.0, 4.0]]), [[0.4, 0.6]])


def test_multiclass_vote_tie_predicts_the_default_label_literally():
    # taken labels 1 and 2 tie; the default (most frequent) label is 0
    X = np.array([[-1.0], [1.0], [50.0], [51.0], [52.0]])
    y = np.array([1, 2, 0, 0, 0])
    assert KNNClassifier(n_neighbors=2).fit(X, y).predict([[0.0]])[0] == 0


def test_default_label_ties_broken_by_sorted_order():
    est = KNNClassifier(n_neighbors=4).fit([[0.0], [1.0], [2.0], [3.0]], ["z", "b", "z", "b"])
    assert est.default_label_ == "b"
    assert est.predict([[1.5]])[0] == "b"


def test_k_equals_m_predicts_the_most_frequent_label_everywhere(rng):
    X = rng.normal(size=(40, 3))
    y = np.array([2] * 15 + [0] * 13 + [1] * 12)
    est = KNNClassifier(n_neighbors=40).fit(X, y)
    np.testing.assert_array_equal(est.predict(rng.normal(size=(30, 3)) * 5), 2)
    reg = KNNRegressor(n_neighbors=40).fit(X, y.astype(float))
    np.testing.assert_allclose(reg.predict(rng.normal(size=(5, 3))), y.mean(), rtol=1e-14)


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_nn_has_zero_training_error_without_duplicates(rng, dtype):
    X = rng.normal(size=(500, 6)).astype(dtype)
    y = rng.integers(0, 5, size=500)
    assert KNNClassifier(n_neighbors=1).fit(X, y).score(X, y) == 1.0
    assert KNNRegressor(n_neighbors=1).fit(X, y * 1.0).score(X, y * 1.0) == 1.0


@pytest.mark.parametrize("kind", ["grid", "dups"])
def test_predictions_do_not_depend_on_training_row_order(rng, kind):
    X, y, Q = _data(kind, rng, m=150, nq=60)
    yr = rng.normal(size=X.shape[0])
    perm = rng.permutation(X.shape[0])
    for weights in ("uniform", "distance"):
        for k in (1, 3, 6):
            a = KNNClassifier(n_neighbors=k, weights=weights).fit(X, y)
            b = KNNClassifier(n_neighbors=k, weights=weights).fit(X[perm], y[perm])
            np.testing.assert_array_equal(a.predict(Q), b.predict(Q))
            np.testing.assert_array_equal(a.predict_proba(Q), b.predict_proba(Q))
            a = KNNRegressor(n_neighbors=k, weights=weights).fit(X, yr)
            b = KNNRegressor(n_neighbors=k, weights=weights).fit(X[perm], yr[perm])
            np.testing.assert_array_equal(a.predict(Q), b.predict(Q))   # bit for bit


def test_many_duplicates_beyond_the_candidate_heap(rng):
    # 200 copies of the nearest point: the candidate heap (2k+16) cannot hold the tie,
    # the kernel flags the query and the exact scan takes all 200 (k' = 200).
    X = np.vstack([np.zeros((200, 3)), rng.normal(size=(300, 3)) + 5])
    y = np.r_[np.zeros(200, int), np.ones(300, int)]
    y[:90] = 2          # 110 zeros, 90 twos among the copies
    Q = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]])
    est = KNNClassifier(n_neighbors=1).fit(X, y)
    np.testing.assert_array_equal(est.predict(Q), [0, 0])
    np.testing.assert_allclose(est.predict_proba(Q), [[110 / 200, 0, 90 / 200]] * 2)
    # the exact (one-leaf tree) scan reports k' = 200 for both, beyond its cap
    cap = 2 + 16
    key = np.empty((2, cap)); idx = np.empty((2, cap), dtype=np.intp); cnt = np.empty(2, dtype=np.intp)
    _kdtree.knn(Q, *_structures._flat_tree(X), 0, 1, cap, key, idx, cnt, 1)
    np.testing.assert_array_equal(cnt, [200, 200])
    np.testing.assert_array_equal(idx, np.tile(np.arange(cap), (2, 1)))


def test_gemm_candidates_are_rescored_exactly_far_from_the_origin(rng):
    # rows 1e6 + tiny offsets: ||x||^2 - 2 x.y + ||y||^2 cancels catastrophically
    base = 1e6 + rng.integers(0, 3, size=(50, 4)).astype(float) * 1e-3
    X = base[rng.integers(0, 50, size=400)]
    y = rng.integers(0, 3, size=400)
    Q = base[rng.integers(0, 50, size=40)] + rng.integers(0, 2, size=(40, 4)) * 1e-3
    for k in (1, 5):
        np.testing.assert_array_equal(KNNClassifier(n_neighbors=k).fit(X, y).predict(Q),
                                      ref.KNNClassifier(k=k).fit(X, y).predict(Q))


def test_distance_weights_zero_distance_rule():
    # the query coincides with a 'a' point; two 'b' points are close: only the zero-distance point votes
    X = np.array([[0.0], [0.1], [-0.1], [5.0]])
    y = np.array(["a", "b", "b", "b"])
    est = KNNClassifier(n_neighbors=3, weights="distance").fit(X, y)
    assert est.predict([[0.0]])[0] == "a"
    assert KNNClassifier(n_neighbors=3).fit(X, y).predict([[0.0]])[0] == "b"
    # away from the points: inverse-distance weights 1/0.5 ('a') vs 1/0.4 + 1/0.6 ('b')
    np.testing.assert_allclose(est.predict_proba([[0.5]]),
                               [[2 / (2 + 2.5 + 1 / 0.6), (2.5 + 1 / 0.6) / (2 + 2.5 + 1 / 0.6)]])
    reg = KNNRegressor(n_neighbors=2, weights="distance").fit([[0.0], [1.0], [3.0]], [0.0, 10.0, 50.0])
    np.testing.assert_allclose(reg.predict([[0.25]]), [(0 / 0.25 + 10 / 0.75) / (1 / 0.25 + 1 / 0.75)])
    assert reg.predict([[1.0]])[0] == 10.0


def test_callable_weights_follow_the_slide_formula():
    # 002 prints weights delta_i / sum_j delta_j: a callable reproduces it
    X = np.array([[0.0], [1.0], [3.0]])
    reg = KNNRegressor(n_neighbors=2, weights=lambda d: d).fit(X, [0.0, 10.0, 50.0])
    np.testing.assert_allclose(reg.predict([[0.25]]), [(0.25 * 0 + 0.75 * 10) / 1.0])
    with pytest.raises(ValueError, match="weights callable"):
        KNNRegressor(n_neighbors=2, weights=lambda d: d[:1]).fit(X, [0.0, 1.0, 2.0]).predict([[0.5]])


# ---- metrics --------------------------------------------------------------------

def test_manhattan_and_hamming_by_hand():
    X = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
    D, I = KNNClassifier(n_neighbors=3, metric="manhattan").fit(X, [0, 1, 2]).kneighbors([[0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(D, [[1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(I, [[0, 2, 1]])
    D, I = KNNClassifier(n_neighbors=3, metric="hamming").fit(X, [0, 1, 2]).kneighbors([[1.0, 0.0, 3.0]])
    np.testing.assert_array_equal(D, [[1.0, 2.0, 2.0]])     # differing coordinates
    np.testing.assert_array_equal(I, [[2, 0, 1]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_mahalanobis_against_reference_and_definition(rng, dtype):
    A = rng.normal(size=(3, 3))
    X = (rng.normal(size=(80, 3)) @ A).astype(dtype)
    y = rng.integers(0, 2, size=80)
    Q = (rng.normal(size=(20, 3)) @ A).astype(dtype)
    est = KNNClassifier(n_neighbors=3, metric="mahalanobis").fit(X, y)
    r = ref.KNNClassifier(k=3, metric="mahalanobis").fit(X, y)
    np.testing.assert_array_equal(est.predict(Q), r.predict(Q))
    D, I = est.kneighbors(Q, n_neighbors=4)
    Dr, Ir = r.kneighbors(Q, k=4)
    np.testing.assert_array_equal(I, Ir)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(D, Dr, rtol=tol)
    # 002's formula sqrt((x-y)^T S^-1 (x-y)) with S the sample covariance
    VI = np.linalg.inv(np.cov(X.astype(float), rowvar=False))
    diff = Q[:, None, :].astype(float) - X[I].astype(float)
    want = np.sqrt(np.einsum("qkf,fg,qkg->qk", diff, VI, diff))
    np.testing.assert_allclose(D, want, rtol=tol)


def test_mahalanobis_given_matrices(rng):
    X = rng.normal(size=(50, 2))
    y = rng.integers(0, 2, size=50)
    Q = rng.normal(size=(10, 2))
    V = np.array([[2.0, 0.3], [0.3, 0.5]])
    a = KNNClassifier(n_neighbors=3, metric="mahalanobis", metric_params={"V": V}).fit(X, y)
    b = KNNClassifier(n_neighbors=3, metric="mahalanobis", metric_params={"VI": np.linalg.inv(V)}).fit(X, y)
    np.testing.assert_allclose(a.kneighbors(Q)[0], b.kneighbors(Q)[0], rtol=1e-12)
    c = KNNClassifier(n_neighbors=3, metric="mahalanobis", metric_params={"VI": np.eye(2)}).fit(X, y)
    e = KNNClassifier(n_neighbors=3).fit(X, y)
    np.testing.assert_allclose(c.kneighbors(Q)[0], e.kneighbors(Q)[0], rtol=1e-12)
    np.testing.assert_array_equal(c.predict(Q), e.predict(Q))
    for bad, msg in [({"VI": np.eye(3)}, "shape"), ({"VI": [[1.0, 2.0], [0.0, 1.0]]}, "symmetric"),
                     ({"VI": -np.eye(2)}, "positive semi-definite"), ({"W": np.eye(2)}, "unknown"),
                     ({"VI": np.eye(2), "V": np.eye(2)}, "either")]:
        with pytest.raises(ValueError, match=msg):
            KNNClassifier(metric="mahalanobis", metric_params=bad).fit(X, y)


# ---- against scikit-learn on tie-free data ------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_sklearn_brute_on_tie_free_data(rng, dtype):
    from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
    X = rng.normal(size=(400, 8)).astype(dtype)
    y = rng.integers(0, 4, size=400)
    yr = rng.normal(size=400)
    Q = rng.normal(size=(100, 8)).astype(dtype)
    for k in (1, 5):
        for weights in ("uniform", "distance"):
            for metric in ("euclidean", "manhattan"):
                kw = dict(weights=weights, metric=metric, algorithm="brute")
                a = KNNClassifier(n_neighbors=k, weights=weights, metric=metric).fit(X, y)
                s = KNeighborsClassifier(k, **kw).fit(X, y)
                Da, Ia = a.kneighbors(Q)
                Ds, Is = s.kneighbors(Q)
                np.testing.assert_array_equal(Ia, Is)
                np.testing.assert_allclose(Da, Ds, rtol=1e-5 if dtype == np.float32 else 1e-12)
                # odd k and 4 classes can still tie in the vote: compare on untied queries
                P = a.predict_proba(Q)
                untied = np.sort(P, axis=1)[:, -1] > np.sort(P, axis=1)[:, -2]
                assert untied.mean() > 0.5
                np.testing.assert_array_equal(a.predict(Q)[untied], s.predict(Q)[untied])
                np.testing.assert_allclose(P, s.predict_proba(Q), rtol=1e-5, atol=1e-7)
                r = KNNRegressor(n_neighbors=k, weights=weights, metric=metric).fit(X, yr)
                np.testing.assert_allclose(r.predict(Q), KNeighborsRegressor(k, **kw).fit(X, yr).predict(Q),
                                           rtol=1e-5, atol=1e-7)


def test_kneighbors_without_X_excludes_each_point_itself(rng):
    from sklearn.neighbors import KNeighborsClassifier
    X = rng.normal(size=(100, 3))
    y = rng.integers(0, 2, size=100)
    D, I = KNNClassifier(n_neighbors=3).fit(X, y).kneighbors()
    Ds, Is = KNeighborsClassifier(3, algorithm="brute").fit(X, y).kneighbors()
    np.testing.assert_array_equal(I, Is)
    np.testing.assert_allclose(D, Ds, rtol=1e-12)
    assert not np.any(I == np.arange(100)[:, None])
    I2 = KNNClassifier(n_neighbors=3).fit(X, y).kneighbors(n_neighbors=2, return_distance=False)
    np.testing.assert_array_equal(I2, I[:, :2])


# ---- inputs ---------------------------------------------------------------------

def test_layouts_labels_and_dtypes(rng):
    X, y, Q = _data("grid", rng, m=80, nq=30)
    labels = np.array(["cat", "dog", "emu"])[y]
    want = KNNClassifier(n_neighbors=3).fit(X, labels).predict(Q)
    assert want.dtype.kind == "U" and set(want) <= set(labels)
    Xro = X.copy()
    Xro.flags.writeable = False
    wide = np.zeros((80, 6))
    wide[:, ::2] = X
    for Xv in (np.asfortranarray(X), Xro, wide[:, ::2], X.tolist(), X.astype(np.int64)):
        np.testing.assert_array_equal(KNNClassifier(n_neighbors=3).fit(Xv, labels).predict(Q), want)
    np.testing.assert_array_equal(KNNClassifier(n_neighbors=3).fit(X, labels).predict(np.asfortranarray(Q)), want)
    # a float32 model casts float64 queries to float32 (and back)
    e32 = KNNClassifier(n_neighbors=3).fit(X.astype(np.float32), labels)
    np.testing.assert_array_equal(e32.predict(Q), e32.predict(Q.astype(np.float32)))
    np.testing.assert_array_equal(e32.predict(Q), want)
    # one class, one sample
    assert KNNClassifier().fit(X, np.full(80, 7)).predict(Q).tolist() == [7] * 30
    one = KNNClassifier().fit([[1.0, 2.0, 3.0]], ["x"])
    assert one.predict(Q).tolist() == ["x"] * 30
    assert KNNRegressor().fit([[1.0, 2.0, 3.0]], [4.5]).predict(Q[:2]).tolist() == [4.5, 4.5]
    # constant feature
    Xc = np.c_[X, np.ones(80)]
    Qc = np.c_[Q, np.ones(30)]
    np.testing.assert_array_equal(KNNClassifier(n_neighbors=3).fit(Xc, labels).predict(Qc), want)


@pytest.mark.parametrize("make, fit_args, predict_arg, msg", [
    (lambda: KNNClassifier(n_neighbors=5), ([[0.0], [1.0]], [0, 1]), None, "larger than the number of training points, n_samples=2"),
    (lambda: KNNClassifier(n_neighbors=0), ([[0.0], [1.0]], [0, 1]), None, "parameter n_neighbors"),
    (lambda: KNNClassifier(n_neighbors=1.5), ([[0.0], [1.0]], [0, 1]), None, "parameter n_neighbors"),
    (lambda: KNNClassifier(metric="cosine"), ([[0.0], [1.0]], [0, 1]), None, "parameter metric"),
    (lambda: KNNClassifier(weights="inverse"), ([[0.0], [1.0]], [0, 1]), None, "parameter weights"),
    (lambda: KNNClassifier(n_jobs=0), ([[0.0], [1.0]], [0, 1]), None, "n_jobs"),
    (lambda: KNNClassifier(metric_params=[1]), ([[0.0], [1.0]], [0, 1]), None, "metric_params"),
    (lambda: KNNClassifier(algorithm="kd_tree"), ([[0.0], [1.0]], [0, 1]), None, "parameter algorithm"),
    (lambda: KNNClassifier(), ([[0.0], [np.nan]], [0, 1]), None, "NaN"),
    (lambda: KNNClassifier(), ([[0.0], [np.inf]], [0, 1]), None, "infinity"),
    (lambda: KNNClassifier(), (np.empty((0, 2)), []), None, "0 sample"),
    (lambda: KNNClassifier(), ([[0.0], [1.0]], [0, 1, 1]), None, "inconsistent"),
    (lambda: KNNClassifier(), ([[0.0], [1.0]], [0.5, 1.5]), None, "Unknown label type"),
    (lambda: KNNClassifier(), ([[0.0, 1.0], [1.0, 1.0]], [0, 1]), [[1.0]], "features"),
    (lambda: KNNClassifier(), ([[0.0, 1.0], [1.0, 1.0]], [0, 1]), [[1.0, np.nan]], "NaN"),
    (lambda: KNNClassifier(), ([[0.0, 1.0], [1.0, 1.0]], [0, 1]), np.empty((0, 2)), "0 sample"),
    (lambda: KNNClassifier(), ([[0.0, 1.0], [1.0, 1.0]], [0, 1]), [1.0, 2.0], "2D array"),
    (lambda: KNNRegressor(), ([[0.0], [1.0]], ["a", "b"]), None, "could not convert|numeric"),
    (lambda: KNNClassifier(metric="mahalanobis"), ([[0.0, 1.0]], [0]), None, "at least 2"),
])
def test_bad_inputs_raise_clear_value_errors(make, fit_args, predict_arg, msg):
    with pytest.raises(ValueError, match=msg):
        est = make().fit(*fit_args)
        est.predict(predict_arg)


def test_bad_kneighbors_arguments(rng):
    est = KNNClassifier().fit(rng.normal(size=(5, 2)), [0, 1, 0, 1, 0])
    for k in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            est.kneighbors([[0.0, 0.0]], n_neighbors=k)
    with pytest.raises(ValueError, match="only m=5"):
        est.kneighbors([[0.0, 0.0]], n_neighbors=6)
    with pytest.raises(ValueError, match="excluding"):
        est.kneighbors(n_neighbors=5)
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        KNNClassifier().predict([[0.0, 0.0]])


@pytest.mark.parametrize("metric, scale", [("euclidean", 1e300), ("euclidean", 1e160),
                                           ("manhattan", 1e306)])
def test_overflowing_distances_are_refused_not_garbage(rng, metric, scale):
    # regression: squared distances of 1e160-scale data overflowed to inf; the direct kernel
    # then never filled its heap and read uninitialised candidates (wrong predictions)
    X = rng.normal(size=(20, 3))
    y = np.arange(20) % 3
    with pytest.raises(ValueError, match="overflow"):
        KNNClassifier(n_neighbors=3, metric=metric).fit(X * scale, y)
    est = KNNRegressor(n_neighbors=3, metric=metric).fit(X, y.astype(float))
    with pytest.raises(ValueError, match="overflow"):
        est.predict(X[:2] * scale)
    with pytest.raises(ValueError, match="overflow"):
        est.kneighbors(X[:2] * scale)
    e32 = KNNRegressor(n_neighbors=3, metric=metric).fit(X.astype(np.float32), y.astype(float))
    with pytest.raises(ValueError, match="overflow"):
        e32.predict(X[:2] * scale)       # float64 queries beyond the float32 model's range
    # large but safe: exactly the unscaled answer (the rule is scale invariant)
    if metric == "euclidean":                  # the estimated Mahalanobis metric is scale-free
        want = KNNClassifier(n_neighbors=3, metric="mahalanobis").fit(X, y).predict(X[:6])
        got = KNNClassifier(n_neighbors=3, metric="mahalanobis").fit(X * scale, y).predict(X[:6] * scale)
        np.testing.assert_array_equal(got, want)
    want = KNNClassifier(n_neighbors=3, metric=metric).fit(X, y).predict(X[:6])
    got = KNNClassifier(n_neighbors=3, metric=metric).fit(X * 1e140, y).predict(X[:6] * 1e140)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_far_queries_beyond_the_gemm_range_are_scanned_exactly(rng, dtype):
    # regression: a query far from small training data overflowed the float32 gemm tile
    X = rng.normal(size=(30, 3)).astype(dtype)
    y = np.arange(30, dtype=float)
    est = KNNRegressor(n_neighbors=2).fit(X, y)
    Q = np.array([[3e37, -3e37, 3e37], [-2e37, 1e37, 2e37]], dtype=dtype)
    d, i = est.kneighbors(Q)
    D = ((Q[:, None, :].astype(np.float64) - X[None].astype(np.float64)) ** 2).sum(-1)
    np.testing.assert_array_equal(i, np.argsort(D, axis=1, kind="stable")[:, :2])
    kth = np.sort(D, axis=1)[:, 1:2]
    want = [y[row <= t].mean() for row, t in zip(D, kth[:, 0])]   # the notes' k' rule
    np.testing.assert_allclose(est.predict(Q), want, rtol=1e-12)


def test_kernel_never_reads_an_unfilled_heap():
    # every key infinite (called directly, past the Python checks): the heap still fills
    T = np.array([[1e300], [-1e300], [3e300]])
    Q = np.array([[-1.7e308]])
    key = np.empty((1, 3)); idx = np.empty((1, 3), dtype=np.intp); cnt = np.empty(1, dtype=np.intp)
    _kdtree.knn(Q, *_structures._flat_tree(T), 0, 2, 3, key, idx, cnt, 1)
    assert cnt[0] == 3 and sorted(idx[0].tolist()) == [0, 1, 2]


def test_numpy_integer_k_and_parameters_changed_after_fit(rng):
    X = rng.normal(size=(20, 3))
    y = np.arange(20) % 2
    want = KNNClassifier(n_neighbors=3).fit(X, y).predict(X)
    for k in (np.int64(3), np.int32(3), np.uint8(3)):       # regression: uint8 overflowed
        np.testing.assert_array_equal(KNNClassifier(n_neighbors=k).fit(X, y).predict(X), want)
    est = KNNClassifier(n_neighbors=3).fit(X, y)
    for bad, msg in ((50, "larger than the number"), (0, "parameter n_neighbors"), (-2, "parameter n_neighbors")):
        est.set_params(n_neighbors=bad)                  # regression: the kernel's "bad k/cap" message
        with pytest.raises(ValueError, match=msg):
            est.predict(X)
        with pytest.raises(ValueError, match=msg):
            est.kneighbors(X)
    est.set_params(n_neighbors=3, weights="bogus")       # regression: silently used as "distance"
    with pytest.raises(ValueError, match="weights"):
        est.predict(X)
    # the metric is the fitted one until the next fit (as scikit-learn's effective_metric_)
    est = KNNRegressor(n_neighbors=3).fit(X, y.astype(float))
    p = est.predict(X)
    est.set_params(metric="hamming")
    np.testing.assert_array_equal(est.predict(X), p)
    np.testing.assert_array_equal(est.fit(X, y.astype(float)).predict(X),
                                  KNNRegressor(n_neighbors=3, metric="hamming").fit(X, y.astype(float)).predict(X))
    with pytest.raises(ValueError, match="real"):
        KNNClassifier(metric="mahalanobis", metric_params={"VI": np.eye(3) * 1j}).fit(X, y)


def test_kernel_rejects_bad_arguments():
    X = np.zeros((4, 2))
    key = np.empty((1, 2)); idx = np.empty((1, 2), dtype=np.intp); cnt = np.empty(1, dtype=np.intp)
    with pytest.raises(ValueError):
        _knn.exact_rows(X, X, np.array([4], dtype=np.intp), 0, np.empty((1, 4)), 1)
    n = np.zeros(4)
    with pytest.raises(ValueError):
        _knn.knn_gemm_split_train(X[:1], X, n[:1], n, X[:1], X, n[:1], 3, 2, key, idx, cnt, 1, 1, 2)
    with pytest.raises(ValueError):
        _knn.knn_gemm_split_train(X[:1], X, n[:1], n, X[:1], X, n[:1], 1, 2, key, idx, cnt, 1, 0, 2)
    tree = _structures._build_tree(X, 2, 1)
    with pytest.raises(ValueError):
        _kdtree.knn(X[:1], *tree, 0, 5, 2, key, idx, cnt, 1)                  # k > m
    with pytest.raises(ValueError):
        _kdtree.knn(X[:1], *tree, 9, 1, 2, key, idx, cnt, 1)                  # unknown metric
    with pytest.raises(ValueError):
        _kdtree.knn(X[:1, :1].copy(), *tree, 0, 1, 2, key, idx, cnt, 1)       # width
    with pytest.raises(ValueError):
        _kdtree.knn(X[:1], *tree[:4], tree[4][:2], tree[5], 0, 1, 2, key, idx, cnt, 1)
    with pytest.raises(ValueError):
        _kdtree.radius(X[:1], *tree, 0, 1.0, np.zeros(5, dtype=np.intp), idx[0], key[0], False, 1)
    dim, val = _structures._split_planes(tree[4], tree[5])
    with pytest.raises(ValueError):
        _kdtree.query_order(X, dim, val, np.empty(3, dtype=np.intp), 1)        # order length
    with pytest.raises(ValueError):
        _kdtree.query_order(X, dim + 2, val, np.empty(4, dtype=np.intp), 1)    # feature out of range
    with pytest.raises(ValueError):
        _kdtree.query_order(X, np.zeros(2, np.intp), np.zeros(2), np.empty(4, dtype=np.intp), 1)  # not a tree
    with pytest.raises(ValueError):
        _kdtree.leaf_blocks(tree[0], tree[2], tree[3], np.empty((3, 2)), 1)   # shapes
    with pytest.raises(ValueError):
        _kdtree.leaf_blocks(tree[0], tree[2][::-1].copy(), tree[3], np.empty((4, 2)), 1)  # not tiled
    with pytest.raises(ValueError):
        _kdtree.build(X.copy(), np.arange(4), 3, *[np.empty(15, np.intp)] * 2,
                      np.empty((15, 2)), np.empty((15, 2)), 1)                 # empty leaves
    with pytest.raises(ValueError):
        _knn.vote_uniform(idx, np.array([3]), np.zeros(4, np.intp), 2, 0, np.empty(1, np.intp), 1)


# ---- scikit-learn compatibility -----------------------------------------------

# The one expected failure: a sample weight multiplies a point's vote, it is not copies of it
# (copies would fill the k nearest), as the estimators' docs say.
EXPECTED_FAILED = {"check_sample_weight_equivalence_on_dense_data":
                   "k-NN's sample_weight weights the taken points' votes / labels; k copies of a "
                   "point would take k places among the k nearest instead"}


@parametrize_with_checks([KNNClassifier(), KNNRegressor(), KNNClassifier(n_neighbors=3, weights="distance"),
                          KNNClassifier(algorithm="brute"), KNNRegressor(n_neighbors=2, algorithm="tree")],
                         expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---- the 1-NN risk bound (000 'Risk Analysys for Nearest-Neighbor') --------------

def test_one_nn_risk_bound_values_and_arguments():
    from smml.bounds import one_nn_risk_bound
    assert one_nn_risk_bound(0.1, 2.0, 3, 10_000) == pytest.approx(0.2 + 8.0 * np.sqrt(3) * 10_000 ** -0.25)
    m, d = 5000, 2
    eps = 2 * m ** (-1 / (d + 1))
    # the epsilon form at the notes' epsilon is 2 m^(-1/(d+1)) (1 + 1/e) <= 4 m^(-1/(d+1))
    tight = one_nn_risk_bound(0.0, 1.0, d, m, epsilon=eps)
    assert tight == pytest.approx(np.sqrt(d) * 2 * m ** (-1 / (d + 1)) * (1 + 1 / np.e))
    assert tight <= one_nn_risk_bound(0.0, 1.0, d, m)
    assert one_nn_risk_bound(0.0, 1.0, 2000, 10, epsilon=0.5) == np.inf
    for bad in [dict(bayes_risk=0.6), dict(c=-1.0), dict(d=0), dict(m=2.5), dict(epsilon=1.0)]:
        args = dict(bayes_risk=0.1, c=1.0, d=2, m=100) | bad
        with pytest.raises(ValueError):
            one_nn_risk_bound(**args)


def test_one_nn_risk_is_within_the_bound_on_a_lipschitz_problem(rng):
    # X uniform on [0, 1], eta(x) = x (1-Lipschitz); Bayes risk E[min(x, 1 - x)] = 1/4;
    # 1-NN's risk tends to 2 E[eta (1 - eta)] = 1/3 <= 2 * 1/4 + 4 m^(-1/2)
    from smml.bounds import one_nn_risk_bound
    m = 300
    risks = []
    for _ in range(5):
        X = rng.uniform(size=(m, 1))
        y = (rng.uniform(size=m) < X[:, 0]).astype(int)
        T = rng.uniform(size=(20_000, 1))
        eta = T[:, 0]
        pred = KNNClassifier(n_neighbors=1).fit(X, y).predict(T)
        risks.append(np.mean(np.where(pred == 1, 1 - eta, eta)))    # exact conditional risk
    assert abs(np.mean(risks) - 1 / 3) < 0.03
    assert np.mean(risks) <= one_nn_risk_bound(0.25, 1.0, 1, m)


@pytest.mark.parametrize("algorithm", ["brute", "tree"])
def test_extra_memory_is_bounded_by_chunks_not_queries_times_train(rng, algorithm):
    import tracemalloc
    X = rng.normal(size=(20_000, 4))
    y = rng.integers(0, 2, size=20_000)
    Q = rng.normal(size=(5_000, 4))      # 10^8 pairs: 800 MB as a float64 distance matrix
    est = KNNClassifier(n_neighbors=5, algorithm=algorithm).fit(X, y)
    tracemalloc.start()
    try:
        est.predict(Q)
        est.kneighbors(Q)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, peak


# ---- Mahalanobis: ranked on the exact key (x - q)^T VI (x - q), ties included ----------------

_LATTICE_VI = [
    np.array([[2.0, 1.0], [1.0, 2.0]]),
    np.array([[3.0, -1.0], [-1.0, 2.0]]),
    np.array([[5.0, 2.0], [2.0, 1.0]]),
    np.array([[0.2, 0.1], [0.1, 0.2]]),          # decimals: rounding in every product
    np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]),
]


def _lattice(rng, d, m=40):
    """Distinct integer points of a small lattice (shuffled) and queries on lattice points
    and half-points: many pairs at exactly equal Mahalanobis keys."""
    X = np.unique(rng.integers(-4, 5, size=(m, d)), axis=0).astype(float)
    X = X[rng.permutation(len(X))]
    Q = np.vstack([rng.integers(-4, 5, size=(12, d)), rng.integers(-9, 10, size=(12, d)) / 2.0])
    return X, Q


@pytest.mark.parametrize("vi", range(len(_LATTICE_VI)))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ["brute", "tree"])
@pytest.mark.parametrize("loose", [False, True])
def test_mahalanobis_lattice_ties_equal_the_reference(rng, vi, dtype, algorithm, loose):
    # regression (issue 29): the search ranked on Euclidean distances of the transformed rows,
    # so rounding split points at equal keys (for VI = [[2, 1], [1, 2]] and q = 0, (-3, 2) and
    # (-1, 3) both have key 14) and the k' rule and the vote tie saw one of them only.
    # loose: the filter's error bound is made huge, so that every query's candidates are
    # completed by the radius search (lattice data already sends some queries there)
    VI = _LATTICE_VI[vi]
    d = VI.shape[0]
    X, Q = _lattice(rng, d)
    X, Q = X.astype(dtype), Q.astype(dtype)
    y = rng.integers(0, 3, size=len(X))
    yr = rng.normal(size=len(X))
    for k in (1, 2, 5):
        for weights in ("uniform", "distance"):
            r = ref.KNNClassifier(k=k, metric="mahalanobis", VI=VI, weights=weights).fit(X, y)
            rr = ref.KNNRegressor(k=k, metric="mahalanobis", VI=VI, weights=weights).fit(X, yr)
            Dr, Ir = r.kneighbors(Q, k=k)
            for n_jobs in (1, 2):
                kw = dict(n_neighbors=k, metric="mahalanobis", metric_params={"VI": VI}, weights=weights,
                          algorithm=algorithm, n_jobs=n_jobs)
                est = KNNClassifier(**kw).fit(X, y)
                if loose:
                    est._L_coef = 10.0
                np.testing.assert_array_equal(est.predict(Q), r.predict(Q))
                np.testing.assert_array_equal(est.predict_proba(Q), r.predict_proba(Q))
                D, I = est.kneighbors(Q)
                np.testing.assert_array_equal(I, Ir)
                np.testing.assert_array_equal(D, Dr)
                reg = KNNRegressor(**kw).fit(X, yr)
                if loose:
                    reg._L_coef = 10.0
                np.testing.assert_array_equal(reg.predict(Q), rr.predict(Q))


def test_mahalanobis_issue_example_takes_both_tied_points():
    # 002's key with VI = [[2, 1], [1, 2]] from the origin: (-3, 2) and (-1, 3) both 14;
    # far points beside them. 1-NN takes both (k' = 2); their labels tie: the default label.
    VI = np.array([[2.0, 1.0], [1.0, 2.0]])
    X = np.array([[-3.0, 2.0], [-1.0, 3.0], [9.0, 9.0], [8.0, 9.0], [9.0, 7.0]])
    y = np.array([1, 2, 0, 0, 0])
    for algorithm in ("brute", "tree"):
        for order in (np.arange(5), np.array([4, 1, 2, 0, 3])):
            est = KNNClassifier(n_neighbors=1, metric="mahalanobis", metric_params={"VI": VI},
                                algorithm=algorithm).fit(X[order], y[order])
            assert est.default_label_ == 0
            assert est.predict([[0.0, 0.0]])[0] == 0          # vote tie 1 : 1 -> default label
            np.testing.assert_array_equal(est.predict_proba([[0.0, 0.0]]), [[0.0, 0.5, 0.5]])
            dist, _ = est.radius_neighbors([[0.0, 0.0]], np.sqrt(14.0))
            np.testing.assert_array_equal(dist[0], [np.sqrt(14.0), np.sqrt(14.0)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_mahalanobis_given_covariance_and_radius_match_the_definition(rng, dtype):
    # V given: VI_ = pinv(V); the reference with that VI_ takes the same points, and
    # radius_neighbors returns exactly the points with key <= r^2 (decided on the exact key)
    V = np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]])
    X, Q = _lattice(rng, 3, m=60)
    X, Q = X.astype(dtype), Q.astype(dtype)
    y = rng.integers(0, 2, size=len(X))
    for algorithm in ("brute", "tree"):
        est = KNNClassifier(n_neighbors=2, metric="mahalanobis", metric_params={"V": V},
                            algorithm=algorithm).fit(X, y)
        r = ref.KNNClassifier(k=2, metric="mahalanobis", VI=est.VI_).fit(X, y)
        np.testing.assert_array_equal(est.predict(Q), r.predict(Q))
        np.testing.assert_array_equal(est.predict_proba(Q), r.predict_proba(Q))
        for rad in (1.0, 1.5, 2.0):
            dist, ind = est.radius_neighbors(Q, rad)
            for q in range(len(Q)):
                keys = [ref.distance_key("mahalanobis", Q[q].astype(float), x.astype(float),
                                         est.VI_.tolist()) for x in X]
                want = sorted((kv, t) for t, kv in enumerate(keys) if np.sqrt(kv) <= rad)
                np.testing.assert_array_equal(ind[q], [t for _, t in want])
                np.testing.assert_array_equal(dist[q], np.sqrt([kv for kv, _ in want]))


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "hamming", "mahalanobis"])
@pytest.mark.parametrize("algorithm", ["brute", "tree"])
def test_lattice_ties_do_not_depend_on_training_row_order(rng, metric, algorithm):
    # every metric: on lattice data (ties everywhere) a permutation of the training rows
    # changes neither the predictions nor the probabilities, and both equal the reference
    X, Q = _lattice(rng, 2, m=50)
    y = rng.integers(0, 3, size=len(X))
    params = {"VI": _LATTICE_VI[0]} if metric == "mahalanobis" else None
    VI = _LATTICE_VI[0] if metric == "mahalanobis" else None
    for k in (1, 2, 5):
        r = ref.KNNClassifier(k=k, metric=metric, VI=VI).fit(X, y)
        perm = rng.permutation(len(X))
        for order in (np.arange(len(X)), perm):
            est = KNNClassifier(n_neighbors=k, metric=metric, metric_params=params,
                                algorithm=algorithm).fit(X[order], y[order])
            np.testing.assert_array_equal(est.predict(Q), r.predict(Q))
            np.testing.assert_array_equal(est.predict_proba(Q), r.predict_proba(Q))


def test_mahalanobis_pairs_kernel_is_the_reference_key(rng):
    X = rng.normal(size=(30, 4))
    Q = rng.normal(size=(5, 4))
    A = rng.normal(size=(4, 4))
    VI = A @ A.T
    qrow = np.repeat(np.arange(5), 30).astype(np.intp)
    tidx = np.tile(np.arange(30), 5).astype(np.intp)
    out = np.empty(150)
    _knn.mahalanobis_pairs(Q, X, VI, qrow, tidx, out, 2)
    want = [ref.distance_key("mahalanobis", Q[q], X[t], VI.tolist()) for q, t in zip(qrow, tidx)]
    np.testing.assert_array_equal(out, want)
    with pytest.raises(ValueError, match="out of range"):
        _knn.mahalanobis_pairs(Q, X, VI, qrow, tidx + 1, out, 1)
    with pytest.raises(ValueError, match="bad shapes"):
        _knn.mahalanobis_pairs(Q, X, VI[:3, :3].copy(), qrow, tidx, out, 1)


def test_mahalanobis_rank_kernel_and_per_query_radius(rng):
    X = rng.integers(-3, 4, size=(40, 2)).astype(float)
    Q = rng.integers(-3, 4, size=(6, 2)).astype(float)
    VI = np.array([[2.0, 1.0], [1.0, 2.0]])
    cand = np.tile(np.arange(40, dtype=np.intp), (6, 1))
    cnt = np.full(6, 40, dtype=np.intp)
    key, idx, kp = np.empty((6, 40)), np.empty((6, 40), dtype=np.intp), np.empty(6, dtype=np.intp)
    _knn.mahalanobis_rank(Q, X, VI, cand, cnt, 3, key, idx, kp, 2)
    r = ref.KNNClassifier(k=3, metric="mahalanobis", VI=VI).fit(X, np.zeros(40))
    for q in range(6):
        taken = r.taken(Q[q])
        assert kp[q] == len(taken)
        np.testing.assert_array_equal(idx[q, :kp[q]], [t for _, t in taken])
        np.testing.assert_array_equal(key[q, :kp[q]], [v for v, _ in taken])
    for bad_cnt, msg in ((np.full(6, 2, dtype=np.intp), "k to width"),
                         (np.full(6, 41, dtype=np.intp), "k to width")):
        with pytest.raises(ValueError, match=msg):
            _knn.mahalanobis_rank(Q, X, VI, cand, bad_cnt, 3, key, idx, kp, 1)
    with pytest.raises(ValueError, match="out of range"):
        _knn.mahalanobis_rank(Q, X, VI, cand + 1, cnt, 3, key, idx, kp, 1)
    # with the filter's keys: a query whose last candidate is within 2 e of its k-th is flagged
    akey = np.tile(np.arange(40, dtype=float), (6, 1))
    akey[2, 3:] = 2.0                       # all candidates after the k-th tie with it
    part = np.full(6, 10, dtype=np.intp)
    n_short = _knn.mahalanobis_rank(Q, X, VI, cand, part, 3, key, idx, kp, 1, akey,
                                    np.zeros(6), 0.0, 0.0, 40)
    assert n_short == 1 and kp[2] == -1 and np.all(np.delete(kp, 2) >= 3)
    # every point a candidate: nothing to check
    assert _knn.mahalanobis_rank(Q, X, VI, cand, cnt, 3, key, idx, kp, 1, akey, np.zeros(6),
                                 1e9, 0.0, 40) == 0
    with pytest.raises(ValueError, match="together"):
        _knn.mahalanobis_rank(Q, X, VI, cand, cnt, 3, key, idx, kp, 1, akey)
    with pytest.raises(ValueError, match="bad shapes"):
        _knn.mahalanobis_rank(Q, X, VI, cand[:5], cnt, 3, key, idx, kp, 1)
    # the radius kernel with one threshold per query equals one call per threshold
    tree = _structures._flat_tree(X)
    thr = np.array([0.0, 1.0, 2.0, 4.5, 8.0, 100.0])
    ip = np.zeros(7, dtype=np.intp)
    none_i, none_k = np.empty(0, dtype=np.intp), np.empty(0)
    _kdtree.radius(Q, *tree, 0, 0.0, ip, none_i, none_k, False, 2, thr)
    for q in range(6):
        one = np.zeros(2, dtype=np.intp)
        _kdtree.radius(Q[q:q + 1], *tree, 0, float(thr[q]), one, none_i, none_k, False, 1)
        assert ip[q + 1] == one[1]
    with pytest.raises(ValueError, match="thr_q"):
        _kdtree.radius(Q, *tree, 0, 0.0, ip, none_i, none_k, False, 1, thr[:5])


def test_slide_weights_are_the_printed_formula():
    # 002, 'Weighted nearest neighbors': h(x) = sum_i delta_i / (sum_j delta_j) y_i
    X = np.array([[0.0], [1.0], [3.0], [10.0]])
    reg = KNNRegressor(n_neighbors=2, weights="slide").fit(X, [5.0, 10.0, 50.0, 7.0])
    # from x = 0: delta = 0 (y 5) and 1 (y 10): 0/1 * 5 + 1/1 * 10
    # from x = 2: delta = 1 (y 10) and 1 (y 50); the next is at 2: k' = 2
    np.testing.assert_array_equal(reg.predict([[0.0], [2.0]]), [10.0, 30.0])
    # k = 3 from x = 2: delta = 1, 1, 2 (y 10, 50, 5)
    reg3 = KNNRegressor(n_neighbors=3, weights="slide").fit(X, [5.0, 10.0, 50.0, 7.0])
    np.testing.assert_array_equal(reg3.predict([[2.0]]), [(1 * 10.0 + 1 * 50.0 + 2 * 5.0) / 4])
    clf = KNNClassifier(n_neighbors=3, weights="slide").fit(X, [0, 0, 1, 1])
    # from x = 0.5: 0.5 (class 0), 0.5 (class 0), 2.5 (class 1): class 1 has 2.5 / 3.5
    np.testing.assert_allclose(clf.predict_proba([[0.5]]), [[1 / 3.5, 2.5 / 3.5]])
    assert clf.predict([[0.5]])[0] == 1          # the farthest point outweighs the two nearest
    # every taken point at distance 0: they count equally
    dup = KNNRegressor(n_neighbors=2, weights="slide").fit([[1.0], [1.0], [4.0]], [2.0, 4.0, 9.0])
    np.testing.assert_array_equal(dup.predict([[1.0]]), [3.0])
    with pytest.raises(ValueError):
        KNNRegressor(weights="inverse").fit(X, [0.0, 1.0, 2.0, 3.0])


# ---- kd-tree splits on duplicated values; the gemm filter's per-pair bound; retries ----

@pytest.mark.parametrize("dtype", DTYPES)
def test_tree_never_puts_one_value_in_both_children(rng, dtype):
    # lattice-like data (3 values per feature) and a feature that is mostly one value:
    # every split keeps equal values of its feature on one side, so a query equal to the
    # split value lies in one child's box only; leaves may be uneven or empty
    X = rng.integers(0, 3, size=(3000, 4)).astype(dtype)
    X[:, 3] = np.where(rng.random(3000) < 0.9, 0, X[:, 3])
    Tb, perm, start, end, lo, hi = _structures._build_tree(X, 4, 2)
    n_int = start.shape[0] // 2
    T = X[perm]
    for n in range(n_int):
        l, r = 2 * n + 1, 2 * n + 2
        if end[l] == start[l] or end[r] == start[r]:
            continue
        box = T[start[n]:end[n]]
        f = int(np.argmax(box.max(0).astype(np.float64) - box.min(0)))
        if box[:, f].max() == box[:, f].min():
            continue                      # identical points: any split
        assert T[start[l]:end[l], f].max() < T[start[r]:end[r], f].min()
    assert np.array_equal(np.sort(perm), np.arange(3000))
    assert any(end[n] == start[n] for n in range(n_int, start.shape[0]))   # some leaf empty


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("algorithm", ["tree", "brute"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_heavy_duplicates_and_empty_leaves_equal_reference(rng, algorithm, n_jobs):
    # 3 distinct points repeated (empty leaves; > cap ties so the brute path re-searches
    # with more room) and one far point; no warning either (an empty node's box is +inf /
    # -inf: its split plane once summed them into NaN)
    base = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    X = np.vstack([base[rng.integers(0, 3, size=400)], [[50.0, 50.0]]])
    y = rng.integers(0, 3, size=X.shape[0])
    Q = np.vstack([base, [[0.5, 0.0], [25.0, 25.0], [0.0, 1.0]]])
    for k in (1, 3, 150, 401):
        est = KNNClassifier(n_neighbors=k, algorithm=algorithm, n_jobs=n_jobs).fit(X, y)
        r = ref.KNNClassifier(k=k).fit(X, y)
        np.testing.assert_array_equal(est.predict_proba(Q), r.predict_proba(Q))
        D, I = est.kneighbors(Q, n_neighbors=min(k, 5))
        Dr, Ir = r.kneighbors(Q, k=min(k, 5))
        np.testing.assert_array_equal(I, Ir)
        np.testing.assert_array_equal(D, Dr)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_tree_votes_count_the_taken_points(rng, n_jobs):
    # knn_votes (a vote that only counts the points): per query the class counts of the same
    # k' points that knn returns (sorted, whole: results longer than cap and than the rank
    # sort's 128), and the same k' and work counts; predict / predict_proba equal the notes'
    X = np.vstack([rng.integers(0, 4, size=(3000, 2)).astype(float), np.repeat([[9.0, 9.0]], 300, axis=0)])
    y = rng.integers(0, 3, size=X.shape[0])
    Q = np.vstack([rng.integers(-1, 5, size=(200, 2)).astype(float), [[9.0, 9.0], [8.0, 9.0]]])
    est = KNNClassifier(n_neighbors=5, algorithm="tree").fit(X, y)
    Q0, _ = est._queries(Q)
    cap, nq = 15, len(Q0)
    key, idx = np.empty((nq, cap)), np.empty((nq, cap), dtype=np.intp)
    cnt, lab = np.empty(nq, dtype=np.intp), np.empty((nq, cap), dtype=np.intp)
    w1, w2 = np.empty((nq, 2), dtype=np.intp), np.empty((nq, 2), dtype=np.intp)
    over = _kdtree.knn(Q0, *est._tree, 0, 5, cap, key, idx, cnt, n_jobs, est._ytree, lab,
                       out_work=w1, keep_over=True, widen=10 * cap)
    rows = _with_over_rows(cnt, key, idx, lab, over)
    V, cnt2, pred = np.empty((nq, 3), dtype=np.intp), np.empty(nq, dtype=np.intp), np.empty(nq, dtype=np.intp)
    _kdtree.knn_votes(Q0, *est._tree, 0, 5, est._ytree, V, cnt2, 7, pred, n_jobs, out_work=w2)
    np.testing.assert_array_equal(cnt, cnt2)
    tied = (V == V.max(axis=1, keepdims=True)).sum(axis=1) > 1
    np.testing.assert_array_equal(pred, np.where(tied, 7, V.argmax(axis=1)))   # 7: the given default
    # a tied vote by hand: 4 points at distance 1 (k' = 4 for k = 2), 2 of class 0, 2 of class 1
    t = KNNClassifier(n_neighbors=2, algorithm="tree").fit([[1.0, 0], [-1, 0], [0, 1], [0, -1], [5, 5]],
                                                          [0, 1, 1, 0, 1])
    Vt, ct, pt = np.empty((2, 2), dtype=np.intp), np.empty(2, dtype=np.intp), np.empty(2, dtype=np.intp)
    # and [0.9, 0]: [1, 0] (class 0), then [0, 1] and [0, -1] tied (classes 1 and 0): k' = 3
    _kdtree.knn_votes(np.array([[0.0, 0.0], [0.9, 0.0]]), *t._tree, 0, 2, t._ytree, Vt, ct, 7, pt, n_jobs)
    np.testing.assert_array_equal(ct, [4, 3])
    np.testing.assert_array_equal(Vt, [[2, 2], [2, 1]])
    np.testing.assert_array_equal(pt, [7, 0])
    np.testing.assert_array_equal(w1, w2)
    np.testing.assert_array_equal(V.sum(axis=1), cnt)
    assert cnt.max() > 128                               # the merge sort and the CSR form ran
    want = ref.KNNClassifier(k=5).fit(X, y)
    for i in range(nq):
        ki, ii, li = rows[i]
        taken = want.taken(Q[i])                          # the notes' k' points, in (key, index) order
        np.testing.assert_array_equal(ii, [j for _, j in taken])
        np.testing.assert_array_equal(ki, [v for v, _ in taken])
        np.testing.assert_array_equal(li, y[ii])
        np.testing.assert_array_equal(V[i], np.bincount(y[ii], minlength=3))
    np.testing.assert_array_equal(est.predict(Q), want.predict(Q))
    np.testing.assert_array_equal(est.predict_proba(Q), want.predict_proba(Q))
    with pytest.raises(ValueError):
        _kdtree.knn_votes(Q0, *est._tree, 0, 5, est._ytree, V[:, :2].copy(), cnt2, 0, pred, 1)  # a code >= n_classes
    with pytest.raises(ValueError):
        _kdtree.knn_votes(Q0, *est._tree, 0, 5, est._ytree, V[:5], cnt2, 0, pred, 1)        # rows
    with pytest.raises(ValueError):
        _kdtree.knn_votes(Q0, *est._tree, 0, 5, est._ytree, V, cnt2, 0, pred[:5], 1)        # pred rows
    with pytest.raises(ValueError):
        _kdtree.knn_votes(Q0, *est._tree, 0, len(X) + 1, est._ytree, V, cnt2, 0, pred, 1)   # k > m


def test_tree_votes_only_while_the_counts_are_no_larger_than_the_points(rng, monkeypatch):
    # knn_votes writes n_classes counts per query: only while that is no more than the cap
    # points it replaces (k = 1: cap 9); 20 classes take the points' path, same predictions
    X = rng.integers(0, 5, size=(800, 2)).astype(float)
    Q = rng.integers(-1, 6, size=(100, 2)).astype(float)
    for n_classes, counted in ((9, True), (20, False)):
        y = np.arange(800) % n_classes
        est = KNNClassifier(n_neighbors=1, algorithm="tree").fit(X, y)
        calls = []
        real = _kdtree.knn_votes
        monkeypatch.setattr(_kdtree, "knn_votes", lambda *a, **kw: (calls.append(1), real(*a, **kw))[1])
        r = ref.KNNClassifier(k=1).fit(X, y)
        np.testing.assert_array_equal(est.predict(Q), r.predict(Q))
        np.testing.assert_array_equal(est.predict_proba(Q), r.predict_proba(Q))
        assert bool(calls) == counted
        monkeypatch.setattr(_kdtree, "knn_votes", real)


def _with_over_rows(cnt, key, idx, lab, over):
    """Per query (keys, indices, labels) of a kd-tree search with keep_over."""
    rows = [(key[i, :c], idx[i, :c], lab[i, :c]) for i, c in enumerate(cnt) if c <= key.shape[1]]
    rows = {i: r for i, r in zip([i for i, c in enumerate(cnt) if c <= key.shape[1]], rows)}
    if over is not None and over[0] == "padded":
        for i, c in enumerate(cnt):
            rows[i] = (over[1][i, :c], over[2][i, :c], over[3][i, :c])
    elif over is not None:
        _, orow, ptr, okey, oidx, olab = over
        for j, i in enumerate(orow):
            rows[int(i)] = (okey[ptr[j]:ptr[j + 1]], oidx[ptr[j]:ptr[j + 1]], olab[ptr[j]:ptr[j + 1]])
    return [rows[i] for i in range(len(cnt))]


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_filter_bound_ignores_far_outliers(rng, dtype):
    # heavy-tailed data: the bound over every training point (from the largest norm)
    # flags nearly every query; the per-pair bound certifies them; both exact
    X = rng.standard_t(1.2, size=(3000, 6)).astype(dtype)
    X[0] = 1e6
    y = rng.integers(0, 2, size=3000)
    Q = rng.standard_t(1.2, size=(300, 6)).astype(dtype)
    est = KNNClassifier(n_neighbors=5, algorithm="brute").fit(X, y)
    Q0, _ = est._queries(Q)
    Qc, q_norm = _search._centre(Q0, est._mu, est._gemm_dtype, "half")
    eps = _search._euclidean_error_bound(q_norm, est._radius, 6, est._gemm_dtype)
    cap = 5 + 2 + _search._SLACK
    flags = []
    for coef in (0.0, _search._euclidean_error_coef(6, est._gemm_dtype)):
        key = np.empty((300, cap))
        idx = np.empty((300, cap), dtype=np.intp)
        cnt = np.empty(300, dtype=np.intp)
        _knn.knn_gemm(Qc, est._Tc, q_norm, _search._NO_NORMS, Q0, est._T0, eps, 5, cap, key, idx,
                      cnt, 64, 512, 1, coef, _search._relative_slack(6, est._gemm_dtype))
        flags.append(int(np.sum(cnt < 0)))
    assert flags[0] > 250 and flags[1] < 30, flags
    r = ref.KNNClassifier(k=5).fit(X, y)
    np.testing.assert_array_equal(est.predict_proba(Q), r.predict_proba(Q))
    np.testing.assert_array_equal(est.kneighbors(Q)[1], r.kneighbors(Q)[1])


@pytest.mark.parametrize("tree_faster", [True, False])
@pytest.mark.parametrize("in_order", [True, False])
def test_both_structures_probe_then_take_either_with_the_same_results(rng, monkeypatch,
                                                                       tree_faster, in_order):
    # "both": a large call searches its first queries by the tree and sends the rest
    # through the structure the cost model picks; force each outcome through its constants
    X = rng.integers(0, 3, size=(2000, 8)).astype(float)     # ties: retries on both paths
    y = rng.integers(0, 3, size=2000)
    Q = np.vstack([rng.integers(0, 3, size=(700, 8)).astype(float), rng.normal(size=(300, 8))])
    est = KNNClassifier(n_neighbors=4, algorithm="auto", n_jobs=2).fit(X, y)
    assert est.algorithm_ == "both"
    monkeypatch.setattr(_search, "_COST_BRUTE_POINT", 1e9 if tree_faster else 0.0)
    monkeypatch.setattr(_search, "_COST_BRUTE_QUERY", 1e9 if tree_faster else 0.0)
    used = []
    real_tree, real_brute = est._tree_blocks, est._brute_blocks
    monkeypatch.setattr(est, "_tree_blocks", lambda Q0, *a: (used.append(("tree", len(Q0))),
                                                             real_tree(Q0, *a))[1])
    monkeypatch.setattr(est, "_brute_blocks", lambda Q0, *a: (used.append(("brute", len(Q0))),
                                                              real_brute(Q0, *a))[1])
    Q0, _ = est._queries(Q)
    got = {}
    for rows, taken in est._search(Q0, 4, 2, in_order=in_order):
        ip, ii, kk = taken.csr()
        for j, r in enumerate(np.arange(1000)[rows]):
            got[int(r)] = (ii[ip[j]:ip[j + 1]], kk[ip[j]:ip[j + 1]])
    # the forced model is decisive (either structure estimated far cheaper) after the first
    # probe stage
    p = _search._PROBE_FIRST
    pick = "tree" if tree_faster else "brute"
    assert used == [("tree", p), (pick, 1000 - p)]
    # the fitted model keeps the pick for its later calls of more than 64 queries
    assert est._both_pick == pick
    used.clear()
    for rows, taken in est._search(Q0[:100], 4, 2, in_order=in_order):
        pass
    assert used == [(pick, 100)]
    assert sorted(got) == list(range(1000))
    # the tree alone and brute force alone (each checked against the reference elsewhere)
    want = [KNNClassifier(n_neighbors=4, algorithm=a).fit(X, y) for a in ("tree", "brute")]
    ind = want[0].kneighbors(Q, n_neighbors=4, return_distance=False)
    np.testing.assert_array_equal(ind, want[1].kneighbors(Q, n_neighbors=4, return_distance=False))
    for i in range(1000):
        np.testing.assert_array_equal(got[i][0][:4], ind[i])
    monkeypatch.undo()
    np.testing.assert_array_equal(est.predict_proba(Q), want[1].predict_proba(Q))



# ---- sample_weight: weighted votes and means (issue 33) ----

@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("algorithm", ["tree", "brute"])
def test_sample_weight_weights_the_votes_and_means(rng, weights, algorithm):
    X = rng.normal(size=(120, 3))
    y = rng.integers(0, 3, size=120)
    yr = rng.normal(size=120)
    sw = rng.integers(1, 5, size=120).astype(float)
    sw[:5] = 0.0
    Q = rng.normal(size=(30, 3))
    clf = KNNClassifier(n_neighbors=5, weights=weights, algorithm=algorithm).fit(X, y, sample_weight=sw)
    reg = KNNRegressor(n_neighbors=5, weights=weights, algorithm=algorithm).fit(X, yr, sample_weight=sw)
    keep = sw > 0
    ref_c = KNNClassifier(n_neighbors=5, weights=weights, algorithm=algorithm).fit(X[keep], y[keep])
    ind = ref_c.kneighbors(Q, return_distance=False)         # no ties on continuous data: k' = k
    dist = ref_c.kneighbors(Q)[0]
    w = sw[keep][ind] * (1.0 / dist if weights == "distance" else 1.0)
    votes = np.stack([np.sum(w * (y[keep][ind] == c), axis=1) for c in range(3)], axis=1)
    np.testing.assert_allclose(clf.predict_proba(Q), votes / votes.sum(1, keepdims=True), rtol=1e-12)
    best = votes.max(axis=1, keepdims=True)
    tied = (votes == best).sum(axis=1) > 1                  # a tied vote: the default label
    want = np.where(tied, clf._default, np.argmax(votes, axis=1))
    np.testing.assert_array_equal(clf.predict(Q), clf.classes_[want])
    assert clf.default_label_ == np.argmax(np.bincount(y[keep], weights=sw[keep]))
    np.testing.assert_allclose(reg.predict(Q), np.sum(w * yr[keep][ind], 1) / np.sum(w, 1), rtol=1e-12)
    # zero weights are dropped points; unit weights are no weights, bit for bit
    np.testing.assert_array_equal(KNNClassifier(n_neighbors=5).fit(X, y, sample_weight=np.ones(120)).predict_proba(Q),
                                  KNNClassifier(n_neighbors=5).fit(X, y).predict_proba(Q))
    # the order of the training rows does not change a weighted result
    p = rng.permutation(120)
    np.testing.assert_array_equal(
        KNNRegressor(n_neighbors=5, weights=weights, algorithm=algorithm).fit(X[p], yr[p], sample_weight=sw[p]).predict(Q),
        reg.predict(Q))


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "hamming"])
@pytest.mark.parametrize("pad", [nb.SHARD_MERGE_PAD, 0])
def test_shards_merged_equal_one_search_on_ties(metric, pad):
    # the shard interface (smml.dask's k-NN): each shard's own k' rule, then the merge of
    # their candidates, is the search of the whole training set (ties across shards
    # included, a shard smaller than k too); the decider's predictions are the in-memory ones
    rng = np.random.default_rng(7)
    X = rng.integers(0, 3, size=(300, 3)).astype(float)       # 27 distinct points: ties everywhere
    Q = rng.integers(-1, 4, size=(40, 3)).astype(float)
    y = rng.integers(0, 3, size=300)
    cuts = [0, 2, 120, 121, 300]
    for k in (1, 5, 40):
        params = dict(n_neighbors=k, metric=metric, weights="uniform", metric_params=None, algorithm="auto",
                      n_jobs=None)
        classes = np.unique(y)
        whole = nb.Shard(X, y, params, k, 0, classes).search(Q, k)
        parts = [nb.Shard(X[a:b], y[a:b], params, k, a, classes).search(Q, k)
                 for a, b in zip(cuts[:-1], cuts[1:])]
        rows, idx, keys, labs = nb.merge_shard_candidates(parts, k, len(Q), pad=pad)
        np.testing.assert_array_equal(rows, np.repeat(np.arange(len(Q)), whole[0]))
        for got, want in zip((idx, keys, labs), whole[1:]):
            np.testing.assert_array_equal(got, want)
        for weights in ("uniform", "distance"):
            params["weights"] = weights
            clf = nb.shard_decider(params, classifier=True)
            counts = np.bincount(y)
            nb.set_decider_classes(clf, classes, counts)
            a = KNNClassifier(**params).fit(X, y)
            assert clf.default_label_ == a.default_label_
            np.testing.assert_array_equal(nb.decide_candidates(clf, "predict", rows, labs, keys, len(Q)),
                                          a.predict(Q))
            np.testing.assert_array_equal(nb.decide_candidates(clf, "proba", rows, labs, keys, len(Q)),
                                          a.predict_proba(Q))
            yr = y * 0.7
            rparts = [nb.Shard(X[a:b], yr[a:b], params, k, a).search(Q, k) for a, b in zip(cuts[:-1], cuts[1:])]
            r, _, kk, lab = nb.merge_shard_candidates(rparts, k, len(Q), pad=pad)
            reg = nb.shard_decider(params, classifier=False)
            np.testing.assert_array_equal(nb.decide_candidates(reg, "regress", r, lab, kk, len(Q)),
                                          KNNRegressor(**params).fit(X, yr).predict(Q))


# ---- float32 input: searched as float32, the label arithmetic in float64 --------------------------

@pytest.mark.parametrize("algorithm", ["brute", "tree"])
def test_float32_input_takes_the_same_points_and_returns_float64(algorithm):
    # the search reads float32 data as it is (exact keys in float64); the votes and label means
    # are float64 sums of float64 labels (y is float64): those outputs stay float64, as the
    # distances of kneighbors do. No transform, so no preserves_dtype tag to honour.
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, size=(200, 3)).astype(np.float32)      # ties everywhere
    Q = rng.integers(-1, 6, size=(30, 3)).astype(np.float32)
    y = rng.integers(0, 3, size=200)
    for Est, yy in ((KNNClassifier, y), (KNNRegressor, y * 0.5)):
        a = Est(n_neighbors=5, weights="distance", algorithm=algorithm).fit(X, yy)
        b = Est(n_neighbors=5, weights="distance", algorithm=algorithm).fit(X.astype(np.float64), yy)
        np.testing.assert_array_equal(a.predict(Q), b.predict(Q.astype(np.float64)))
        D32, I32 = a.kneighbors(Q)
        D64, I64 = b.kneighbors(Q.astype(np.float64))
        np.testing.assert_array_equal(I32, I64)
        np.testing.assert_array_equal(D32, D64)
        assert D32.dtype == np.float64
        if Est is KNNClassifier:
            assert a.predict_proba(Q).dtype == np.float64
        else:
            assert a.predict(Q).dtype == np.float64
        assert a.__sklearn_tags__().transformer_tags is None


@pytest.mark.parametrize("widen", [0, 1000])
def test_kdtree_keeps_results_longer_than_cap_in_one_search(rng, monkeypatch, widen):
    # ties beyond cap: with keep_over the kernel returns those queries' whole k' sets from
    # the same search (padded rows up to ``widen``, else CSR), equal to a search with room
    # for all of them; the estimator then calls the kernel once per block, never again
    X = rng.integers(0, 3, size=(1500, 4)).astype(float)
    y = rng.integers(0, 2, size=1500)
    Q = np.vstack([rng.integers(0, 3, size=(150, 4)).astype(float), rng.normal(size=(50, 4))])
    est = KNNClassifier(n_neighbors=3, algorithm="tree").fit(X, y)
    k, cap, n = 3, 18, len(Q)
    out = [np.empty((n, cap)), np.empty((n, cap), dtype=np.intp), np.empty(n, dtype=np.intp)]
    lab = np.empty((n, cap), dtype=np.intp)
    over = _kdtree.knn(Q, *est._tree, 0, k, cap, *out, 2, est._ytree, lab, keep_over=True, widen=widen)
    cnt = out[2]
    assert (cnt > cap).sum() > 20 and (cnt <= cap).sum() > 20
    big = int(cnt.max())
    want = [np.empty((n, big)), np.empty((n, big), dtype=np.intp), np.empty(n, dtype=np.intp)]
    want_lab = np.empty((n, big), dtype=np.intp)
    assert _kdtree.knn(Q, *est._tree, 0, k, big, *want, 1, est._ytree, want_lab, keep_over=True) is None
    np.testing.assert_array_equal(want[2], cnt)
    if widen:
        tag, key, idx, lab2 = over
        assert tag == "padded" and key.shape == (n, big)
        np.testing.assert_array_equal(key, want[0])
        np.testing.assert_array_equal(idx, want[1])
        np.testing.assert_array_equal(lab2, want_lab)
    else:
        tag, rows, ptr, key, idx, lab2 = over
        assert tag == "csr"
        np.testing.assert_array_equal(rows, np.flatnonzero(cnt > cap))
        for j, r in enumerate(rows):
            c = cnt[r]
            np.testing.assert_array_equal(key[ptr[j]:ptr[j + 1]], want[0][r, :c])
            np.testing.assert_array_equal(idx[ptr[j]:ptr[j + 1]], want[1][r, :c])
            np.testing.assert_array_equal(lab2[ptr[j]:ptr[j + 1]], want_lab[r, :c])
        np.testing.assert_array_equal(out[0][cnt <= cap], want[0][cnt <= cap, :cap])
    # the estimator (rows widened, or CSR with widen 0): one kernel call, the reference's
    # predictions and probabilities; with distance weights (the points themselves, not
    # counted by the kernel) and with uniform ones (knn_votes: the class counts only)
    if not widen:
        monkeypatch.setattr(_search, "_WIDEN_MAX", 0)
    for weights, kernel in (("distance", "knn"), ("uniform", "knn_votes")):
        est = KNNClassifier(n_neighbors=3, algorithm="tree", weights=weights).fit(X, y)
        r = ref.KNNClassifier(k=3, weights=weights).fit(X, y)
        calls = []
        real = getattr(_kdtree, kernel)
        monkeypatch.setattr(_kdtree, kernel, lambda *a, _r=real, **kw: (calls.append(len(a[0])), _r(*a, **kw))[1])
        np.testing.assert_array_equal(est.predict(Q), r.predict(Q))
        assert calls == [n]
        np.testing.assert_allclose(est.predict_proba(Q), r.predict_proba(Q), rtol=0, atol=1e-12)
        monkeypatch.setattr(_kdtree, kernel, real)


def test_predict_time_revalidation_after_a_cached_check(rng):
    # predict-time validation is skipped while the parameters are the same immutable objects
    # (smml.base._revalidate_params); any set_params is checked again
    X = rng.normal(size=(30, 2))
    y = np.arange(30) % 2
    est = KNNClassifier(n_neighbors=3).fit(X, y)
    p = est.predict(X[:5])
    est.predict(X[:5])                                   # cached now
    est.set_params(weights="bogus")
    with pytest.raises(ValueError, match="weights"):
        est.predict(X[:5])
    est.set_params(weights="uniform", n_neighbors=0)
    with pytest.raises(ValueError, match="n_neighbors"):
        est.predict(X[:5])
    est.set_params(n_neighbors=3)
    np.testing.assert_array_equal(est.predict(X[:5]), p)
