"""smml.cluster: k-means as 001 "Clustering and the k-means algorithm" defines it."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

import smml.cluster as cl
from smml._core import _kmeans, _knn
from smml.cluster import KMeans
from smml._gemm_bounds import euclidean_error_coef as _euclidean_error_coef
from smml.reference import cluster as ref

DTYPES = [np.float32, np.float64]


# ---- data -------------------------------------------------------------------------------------

def _data(kind, rng, n=150, d=3):
    """'continuous', 'blobs', 'grid' (integer points: exact distance ties everywhere) or
    'dups' (a few distinct rows far from the origin: the centred path, empty clusters)."""
    if kind == "continuous":
        return rng.normal(size=(n, d))
    if kind == "blobs":
        centres = rng.normal(size=(4, d)) * 5
        return centres[rng.integers(0, 4, size=n)] + rng.normal(size=(n, d))
    if kind == "grid":
        return rng.integers(0, 3, size=(n, d)).astype(float)
    if kind == "dups":
        return 1e4 + rng.normal(size=(6, d))[rng.integers(0, 6, size=n)] * 0.1
    raise ValueError(kind)


@pytest.fixture
def small_layout(monkeypatch):
    """Many blocks and chunks, and threads even for small data."""
    monkeypatch.setattr(cl, "_CHUNK_ROWS", 8)
    monkeypatch.setattr(cl, "_BLOCK_ROWS", 24)
    monkeypatch.setattr(cl, "_GRAIN", 1)


def _assert_same_fit(a, b, dtype, exact_centres=False):
    assert_array_equal(a.labels_, b.labels_)
    assert a.n_iter_ == b.n_iter_
    assert a.converged_ == b.converged_
    if exact_centres:
        assert_array_equal(a.cluster_centers_, b.cluster_centers_)
        assert_array_equal(a.inertia_path_, b.inertia_path_)
        assert a.inertia_ == b.inertia_
        return
    scale = max(1.0, float(np.abs(b.cluster_centers_).max()))
    tol = 2e-7 if dtype == np.float32 else 1e-12
    assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=tol, atol=tol * scale)
    assert_allclose(a.inertia_path_, b.inertia_path_, rtol=1e-9, atol=1e-9 * scale ** 2)
    assert a.inertia_ == pytest.approx(b.inertia_, rel=1e-12, abs=1e-12 * scale ** 2)


# ---- the kernel agrees with the plain-Python reference ----------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["continuous", "grid", "dups"])
@pytest.mark.parametrize("init", ["random", "k-means++", "array"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_equals_reference(rng, small_layout, dtype, kind, init, n_jobs):
    X = _data(kind, rng).astype(dtype)
    w = rng.integers(0, 4, size=len(X)).astype(float) if init == "k-means++" else None
    kw = dict(n_clusters=5, tol=0, random_state=int(rng.integers(1000)))
    if init == "array":
        kw["init"] = X[rng.choice(len(X), 5, replace=False)] + 0.25
    else:
        kw.update(init=init, n_init=2)
    a = KMeans(n_jobs=n_jobs, **kw).fit(X, sample_weight=w)
    b = ref.KMeans(**kw).fit(X, sample_weight=w)
    _assert_same_fit(a, b, dtype)
    assert a.cluster_centers_.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_tol_and_max_iter_stops_equal_reference(rng, dtype):
    X = _data("blobs", rng, n=300).astype(dtype)
    for kw in (dict(tol=1e-3), dict(tol=0.05), dict(max_iter=2), dict(max_iter=1, tol=0)):
        a = KMeans(5, random_state=3, n_init=1, **kw).fit(X)
        b = ref.KMeans(5, random_state=3, n_init=1, **kw).fit(X)
        _assert_same_fit(a, b, dtype)


def test_near_ties_far_from_the_origin_are_decided_exactly(rng):
    # two centroids a +- delta far from the origin (||a|| ~ 2e6) and points a + eta with
    # 4 delta.eta (the gap between their two squared distances) from 0 to 1e-3: the gemm
    # shortcut ||c||^2 - 2 x.c is off by ~1e-3 there, only exact distances decide correctly
    d = 5
    a = rng.uniform(5e5, 1e6, size=d)
    delta = rng.normal(size=d)
    C = np.array([a + delta, a - delta])
    xi = rng.normal(size=(400, d))
    xi -= np.outer(xi @ delta / (delta @ delta), delta)            # on the bisecting hyperplane
    t = np.concatenate([[0.0], 10.0 ** rng.uniform(-16, -4, size=399) * rng.choice([-1, 1], 399)])
    Q = a + xi + np.outer(t, delta)
    want = np.array(ref.assign(Q.tolist(), C.tolist())[0])
    gemm = np.argmin((C * C).sum(1) - 2 * Q @ C.T, axis=1)
    assert np.any(gemm != want)                           # the shortcut alone gets some wrong
    for fast in (True, False):
        labels = np.empty(len(Q), dtype=np.int32)
        _, n_exact = _kmeans.assign(Q, Q, (Q * Q).sum(1), np.empty(0), C, C, (C * C).sum(1),
                                    _euclidean_error_coef(d, np.float64), labels, True, False,
                                    64, 16, fast, 2)
        assert_array_equal(labels, want)
        assert n_exact > 0
    # the estimator: a model whose centroids are C (fitted on them), predicting Q
    km = KMeans(2, init=C, tol=0).fit(np.vstack([C, C]))
    assert_array_equal(km.cluster_centers_, C)
    assert_array_equal(km.predict(Q), want)


def test_assign_reports_each_blocks_objective(rng):
    # block_J: each block's J, the values of one call per block; J is their sum in order
    X = rng.normal(size=(1000, 3))
    C = X[:5].copy()
    args = (np.empty(0), C, C, (C * C).sum(1), _euclidean_error_coef(3, np.float64))
    labels = np.full(len(X), -1, dtype=np.int32)
    block_J = np.full(4, np.nan)                # 1000 rows in blocks of 256: 4 blocks
    J, _ = _kmeans.assign(X, X, (X * X).sum(1), *args, labels, True, True, 256, 64, True, 2, block_J)
    one = []
    for r0 in range(0, 1000, 256):
        Xb = X[r0:r0 + 256]
        lab = np.full(len(Xb), -1, dtype=np.int32)
        one.append(_kmeans.assign(Xb, Xb, (Xb * Xb).sum(1), *args, lab, True, True, 256, 64, True, 1)[0])
        assert_array_equal(lab, labels[r0:r0 + 256])
    assert_array_equal(block_J, one)
    total = 0.0
    for v in one:
        total = total + v
    assert J == total
    with pytest.raises(ValueError, match="block_J"):
        _kmeans.assign(X, X, (X * X).sum(1), *args, labels, True, True, 256, 64, True, 2, np.empty(3))
    with pytest.raises(ValueError, match="block_J"):
        _kmeans.assign(X, X, (X * X).sum(1), *args, labels, True, False, 256, 64, True, 2, block_J)


def test_grid_data_goes_through_the_exact_path(rng):
    X = _data("grid", rng, n=400)
    C = np.array([[0.0, 0, 0], [2, 0, 0], [0, 2, 0], [1, 1, 2]])
    labels = np.empty(len(X), dtype=np.int32)
    _, n_exact = _kmeans.assign(X, X, (X * X).sum(1), np.empty(0), C, C, (C * C).sum(1),
                                _euclidean_error_coef(3, np.float64), labels, True, False,
                                64, 16, True, 2)
    assert n_exact > 0
    assert_array_equal(labels, ref.assign(X.tolist(), C.tolist())[0])


# ---- the previous-label pass (32 <= kp <= 64 tile columns) -------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["continuous", "blobs"])
def test_many_clusters_equal_reference(rng, small_layout, dtype, kind):
    # k = 40 and 64: the kernel tries each row's previous label first from iteration 2
    # (the distinct rows outnumber the clusters: see the issue-11 note on k > distinct rows)
    X = _data(kind, rng, n=300, d=3).astype(dtype)
    for k in (40, 64):
        kw = dict(n_clusters=k, n_init=1, tol=0, random_state=int(rng.integers(1000)))
        a = KMeans(n_jobs=2, **kw).fit(X)
        b = ref.KMeans(**kw).fit(X)
        _assert_same_fit(a, b, dtype)
        one = KMeans(n_jobs=1, **kw).fit(X)
        _assert_same_fit(one, a, dtype, exact_centres=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [5, 40, 64, 70])
def test_previous_labels_are_only_a_hint(rng, dtype, k):
    # any previous labels (right, wrong, out of range, garbage) give the exact labels
    X = (_data("grid", rng, n=600, d=3) + rng.integers(0, 2, size=(600, 1)) * 0.5).astype(dtype)
    C = np.ascontiguousarray(X[rng.choice(len(X), k, replace=False)] + 0.25, dtype=dtype)
    want = np.array(ref.assign(X.tolist(), C.tolist())[0])
    hints = [np.full(len(X), -1), want, (want + 1) % k, rng.integers(-5, k + 70, size=len(X)),
             rng.integers(-2**31, 2**31 - 1, size=len(X))]
    for hint in hints:
        for fast in (True, False):
            labels = hint.astype(np.int32)
            _kmeans.assign(X, X, (X.astype(float) ** 2).sum(1), np.empty(0), C, C,
                           (C.astype(float) ** 2).sum(1), _euclidean_error_coef(3, dtype),
                           labels, True, False, 64, 16, fast, 2)
            assert_array_equal(labels, want)


# ---- 001: J is non-increasing --------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_distortion_never_increases_on_100_seeds(dtype):
    for seed in range(100):
        rng = np.random.default_rng(seed)
        X = _data("blobs" if seed % 2 else "continuous", rng, n=200, d=3).astype(dtype)
        km = KMeans(6, n_init=1, tol=0, random_state=seed).fit(X)
        path = km.inertia_path_
        assert np.all(np.diff(path) <= 0), (seed, path)
        assert km.inertia_ <= path[-1] * (1 + 1e-12)
        assert len(path) == km.n_iter_


# ---- determinism ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_bit_identical_for_any_thread_count(rng, small_layout, dtype):
    X = _data("blobs", rng, n=1500, d=5).astype(dtype)
    w = rng.uniform(0, 2, size=len(X))
    for sw in (None, w):
        fits = [KMeans(7, n_init=2, tol=0, random_state=1, n_jobs=j).fit(X, sample_weight=sw)
                for j in (1, 2, 3)]
        for f in fits[1:]:
            _assert_same_fit(f, fits[0], dtype, exact_centres=True)


def test_block_layout_depends_on_shape_only_and_balances_small_data():
    # the default layout: whole chunks, about MIN_BLOCKS blocks on small data, BLOCK_ROWS
    # rows from MIN_BLOCKS x BLOCK_ROWS rows on, more rows when the partial sums pass the budget
    for n, k, d in [(20_000, 8, 64), (5_000, 64, 2), (100_000, 256, 16), (1_000, 3, 3), (1, 1, 1)]:
        rows = cl._block_rows(n, k, d)
        n_blocks = -(-n // rows)
        assert rows % cl._CHUNK_ROWS == 0
        assert rows <= cl._BLOCK_ROWS
        # the least whole number of chunks that cuts n rows into at most MIN_BLOCKS blocks
        assert n_blocks <= cl._MIN_BLOCKS
        assert rows == cl._CHUNK_ROWS or -(-n // (rows - cl._CHUNK_ROWS)) > cl._MIN_BLOCKS
        assert n_blocks * cl._loop.acc_width(k, d) <= max(cl._ACC_BUDGET, cl._loop.acc_width(k, d))
    assert cl._block_rows(20_000, 8, 64) == 768                       # 27 blocks, not 5 of 4096
    assert cl._block_rows(cl._MIN_BLOCKS * cl._BLOCK_ROWS, 8, 64) == cl._BLOCK_ROWS
    assert cl._block_rows(10 ** 7, 8, 64) == cl._BLOCK_ROWS
    big = cl._block_rows(10 ** 7, 256, 256)                             # the budget: larger blocks
    assert big > cl._BLOCK_ROWS and -(-10 ** 7 // big) * cl._loop.acc_width(256, 256) <= cl._ACC_BUDGET


@pytest.mark.parametrize("dtype", DTYPES)
def test_default_layout_bit_identical_for_any_thread_count(rng, dtype):
    # the default (unpatched) layout on data of many small blocks: 1, 2 and 3 threads agree
    X = _data("blobs", rng, n=20_000, d=6).astype(dtype)
    assert cl._block_rows(len(X), 9, 6) == 768                         # 27 blocks
    fits = [KMeans(9, n_init=1, tol=0, max_iter=15, random_state=3, n_jobs=j).fit(X) for j in (1, 2, 3)]
    for f in fits[1:]:
        _assert_same_fit(f, fits[0], dtype, exact_centres=True)
    ref_fit = ref.KMeans(9, n_init=1, tol=0, max_iter=15, random_state=3).fit(X[:2000])
    ours = KMeans(9, n_init=1, tol=0, max_iter=15, random_state=3).fit(X[:2000])     # 8 blocks
    _assert_same_fit(ours, ref_fit, dtype)


@pytest.mark.parametrize("k", [3, 9, 20])
@pytest.mark.parametrize("kind", ["grid", "continuous"])
def test_packed_tile_and_blas_tile_give_identical_fits(rng, monkeypatch, k, kind):
    # k = 3 and 20 (float32): a half panel of 8 columns after 0 and 1 full panels of 16;
    # 2003 rows: chunks whose rows are not a multiple of the tile's 4 / 8 row blocks
    X = _data(kind, rng, n=2003, d=6)
    for dtype in DTYPES:
        fits = []
        for fast in (True, False):
            monkeypatch.setattr(cl, "_FAST_TILE", fast)
            fits.append(KMeans(k, n_init=1, tol=0, random_state=2).fit(X.astype(dtype)))
        _assert_same_fit(fits[0], fits[1], dtype, exact_centres=True)


def test_chunking_changes_no_label(rng, monkeypatch):
    X = _data("blobs", rng, n=1000, d=4)
    init = X[:6] + 0.1
    base = KMeans(6, init=init, tol=0).fit(X)
    for chunk, block in [(1, 5), (7, 30), (256, 4096)]:
        monkeypatch.setattr(cl, "_CHUNK_ROWS", chunk)
        monkeypatch.setattr(cl, "_BLOCK_ROWS", block)
        km = KMeans(6, init=init, tol=0).fit(X)
        _assert_same_fit(km, base, np.float64)


def test_row_order_does_not_matter(rng):
    X = _data("blobs", rng, n=500, d=3)
    init = X[:5] + 0.3
    a = KMeans(5, init=init, tol=0).fit(X)
    perm = rng.permutation(len(X))
    b = KMeans(5, init=init, tol=0).fit(X[perm])
    assert_array_equal(b.labels_, a.labels_[perm])
    assert a.n_iter_ == b.n_iter_
    assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=1e-12, atol=1e-12)
    assert b.inertia_ == pytest.approx(a.inertia_, rel=1e-12)


def test_deterministic_given_random_state(rng):
    X = _data("continuous", rng)
    a = KMeans(4, random_state=7).fit(X)
    b = KMeans(4, random_state=7).fit(X)
    _assert_same_fit(a, b, np.float64, exact_centres=True)
    g = KMeans(4, random_state=np.random.default_rng(5)).fit(X)
    h = KMeans(4, random_state=np.random.default_rng(5)).fit(X)
    _assert_same_fit(g, h, np.float64, exact_centres=True)


# ---- the rules the notes leave open ------------------------------------------------------------

def test_ties_go_to_the_lowest_centroid_index():
    X = np.array([[-1.0], [1.0]])
    for init in ([[1.0], [-1.0]], [[-1.0], [1.0]]):
        km = KMeans(2, init=np.array(init), tol=0).fit(X)
        assert km.predict([[0.0]])[0] == 0
    # a point equidistant from three centroids
    C = np.array([[0.0, 2.0], [2.0, 0.0], [-2.0, 0.0]])
    km = KMeans(3, init=C, max_iter=1).fit(C)
    assert_array_equal(km.predict([[0.0, 0.0], [0.0, -3.0], [0.0, 2.0]]), [0, 1, 0])
    # duplicated initial centroids: every point goes to the first of the two
    X = np.array([[0.0], [1.0], [5.0], [6.0]])
    assert_array_equal(ref.assign(X.tolist(), [[0.5], [0.5], [5.5]])[0], [0, 0, 2, 2])


def test_empty_cluster_is_reseeded_at_the_farthest_point():
    X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0]])
    init = np.array([[0.0], [0.0], [10.5]])          # cluster 1 gets no point (tie -> 0)
    km = KMeans(3, init=init, tol=0).fit(X)
    # 2 is the farthest point from its centroid (distance 4): it re-seeds cluster 1
    assert km.inertia_path_[0] == pytest.approx(0 + 1 + 4 + 0.25 + 0.25, rel=1e-12)
    assert_array_equal(km.labels_, [0, 0, 1, 2, 2])
    assert_array_equal(km.cluster_centers_, [[0.5], [2.0], [10.5]])
    assert km.converged_
    _assert_same_fit(km, ref.KMeans(3, init=init, tol=0).fit(X), np.float64)


def test_reseeding_skips_last_members_and_points_on_their_centroid():
    X = np.array([[0.0], [0.0], [7.0]])
    init = np.array([[0.0], [0.0], [5.0]])
    # cluster 1 is empty; 7 is the last member of cluster 2 and the zeros sit on centroid 0
    with pytest.warns(ConvergenceWarning, match="2 of n_clusters=3"):
        km = KMeans(3, init=init, tol=0).fit(X)
    assert_array_equal(km.labels_, [0, 0, 2])
    assert_array_equal(km.cluster_centers_, [[0.0], [0.0], [7.0]])
    assert km.converged_ and km.inertia_ == 0.0
    _assert_same_fit(km, ref.KMeans(3, init=init, tol=0).fit(X), np.float64)


def test_reseeding_with_weights_keeps_zero_weight_points_out(rng):
    X = np.array([[0.0], [1.0], [2.0], [50.0], [10.0], [11.0]])
    w = np.array([1.0, 1.0, 1.0, 0.0, 1.0, 1.0])       # 50 is farthest but weighs nothing
    init = np.array([[0.0], [0.0], [10.5]])
    km = KMeans(3, init=init, tol=0).fit(X, sample_weight=w)
    assert km.labels_[2] == 1
    _assert_same_fit(km, ref.KMeans(3, init=init, tol=0).fit(X, sample_weight=w), np.float64)


def test_constant_data():
    X = np.full((20, 3), 4.2)
    with pytest.warns(ConvergenceWarning):
        km = KMeans(3, random_state=0).fit(X)
    assert_array_equal(km.labels_, 0)
    assert km.inertia_ == 0.0
    assert_array_equal(km.cluster_centers_, 4.2)
    assert km.converged_


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("offset", [0.0, 1e4])         # 1e4: data far from the origin (centred gemm operand)
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_more_clusters_than_distinct_rows_converges(dtype, offset, n_jobs):
    # 27 distinct rows, 300 copies, 40 clusters: a cluster of copies of one row must get that row
    # exactly as its mean, else the copies sit at a tiny positive distance from it, the re-seeding
    # (farthest point at distance > 0) takes one of them every iteration and the fit cycles.
    rng = np.random.default_rng(0)
    distinct = (rng.normal(size=(27, 3)) * 0.1 + 0.3 + offset).astype(dtype)
    X = distinct[rng.integers(0, 27, size=300)]
    kw = dict(n_clusters=40, n_init=1, tol=0, max_iter=60, random_state=0)
    with pytest.warns(ConvergenceWarning):
        km = KMeans(n_jobs=n_jobs, **kw).fit(X)
    assert km.converged_ and km.n_iter_ < 60
    assert km.inertia_ == 0.0
    assert_array_equal(km.cluster_centers_[km.labels_], X)       # every row sits exactly on its centroid
    assert len(np.unique(km.labels_)) == len(np.unique(X, axis=0))
    _assert_same_fit(km, ref.KMeans(**kw).fit(X), dtype)


def test_cluster_of_one_repeated_row_gets_that_row_exactly():
    # mean of 3 copies of x in float64 is fl(fl(fl(x + x) + x) / 3), which is not x for this x
    x = np.array([0.1 + 0.2, 1 / 3, 0.7])
    assert not np.all((x + x + x) / 3 == x)
    X = np.vstack([np.repeat(x[None], 3, axis=0), [[5.0, 5.0, 5.0], [5.0, 6.0, 5.0]]])
    km = KMeans(2, init=X[[0, 3]], n_init=1, tol=0).fit(X)
    assert_array_equal(km.cluster_centers_[0], x)
    assert_array_equal(km.labels_, [0, 0, 0, 1, 1])
    assert_array_equal(km.cluster_centers_[1], [5.0, 5.5, 5.0])   # a mixed cluster: the plain mean
    r = ref.KMeans(2, init=X[[0, 3]], n_init=1, tol=0).fit(X)
    assert_array_equal(r.cluster_centers_, km.cluster_centers_)


@pytest.mark.parametrize("init", ["random", "k-means++"])
def test_duplicated_rows_end_in_one_cluster_per_distinct_row(rng, init):
    rows = np.array([[0.0, 0.0], [0.0, 5.0], [5.0, 0.0], [5.0, 5.0]])
    for seed in range(10):
        X = rows[np.random.default_rng(seed).permutation(np.repeat(np.arange(4), 25))]
        km = KMeans(4, init=init, n_init=1, tol=0, random_state=seed).fit(X)
        assert km.inertia_ == 0.0
        assert sorted(map(tuple, km.cluster_centers_)) == sorted(map(tuple, rows))
        assert_array_equal(km.cluster_centers_[km.labels_], X)


def test_convergence_rules(rng):
    X = _data("blobs", rng, n=400)
    km = KMeans(5, tol=0, n_init=1, random_state=0).fit(X)
    assert km.converged_
    assert_array_equal(km.predict(X), km.labels_)
    assert km.inertia_ == pytest.approx(km.inertia_path_[-1], rel=1e-10)
    # max_iter: not converged, labels_ agree with the returned centroids
    km2 = KMeans(5, tol=0, n_init=1, max_iter=2, random_state=0).fit(X)
    assert km2.n_iter_ == 2 and not km2.converged_
    assert_array_equal(km2.predict(X), km2.labels_)
    # tol: stops at the first iteration whose relative decrease is at most tol
    tol = 0.02
    km3 = KMeans(5, tol=tol, n_init=1, random_state=0).fit(X)
    p = km.inertia_path_                                    # the same start, run to the end
    drop = (p[:-1] - p[1:]) <= tol * p[:-1]
    assert km3.n_iter_ == int(np.argmax(drop)) + 2
    assert_allclose(km3.inertia_path_, p[:km3.n_iter_], rtol=1e-12)


def test_n_init_keeps_the_best_run(rng):
    X = _data("blobs", rng, n=300)
    km = KMeans(6, n_init=5, random_state=11).fit(X)
    rs = np.random.RandomState(11)
    runs = [KMeans(6, init=X[rs.choice(len(X), 6, replace=False)]).fit(X) for _ in range(5)]
    best = runs[int(np.argmin([r.inertia_ for r in runs]))]
    assert km.inertia_ == best.inertia_
    assert_array_equal(km.cluster_centers_, best.cluster_centers_)
    # n_init="auto" (10 runs for init="random") starts with the same 5 draws
    assert KMeans(6, random_state=11).fit(X).inertia_ <= km.inertia_


# ---- sample_weight ------------------------------------------------------------------------------

def test_integer_weights_equal_duplicated_rows(rng):
    X = _data("blobs", rng, n=120)
    w = rng.integers(0, 4, size=len(X))
    init = X[w > 0][:4] + 0.1
    a = KMeans(4, init=init, tol=0).fit(X, sample_weight=w)
    b = KMeans(4, init=init, tol=0).fit(np.repeat(X, w, axis=0))
    assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=1e-12, atol=1e-12)
    assert a.inertia_ == pytest.approx(b.inertia_, rel=1e-12)
    assert_array_equal(a.labels_[w > 0], b.labels_[np.cumsum(w)[w > 0] - 1])
    c = KMeans(4, init=init, tol=0).fit(X, sample_weight=np.full(len(X), 2.0))
    d = KMeans(4, init=init, tol=0).fit(X)
    assert_allclose(c.cluster_centers_, d.cluster_centers_, rtol=1e-12)
    assert c.inertia_ == pytest.approx(2 * d.inertia_, rel=1e-12)
    assert c.score(X, sample_weight=np.full(len(X), 2.0)) == pytest.approx(-2 * d.inertia_, rel=1e-12)


# ---- against scikit-learn from the same start ---------------------------------------------------

def test_same_result_as_scikit_learn_from_the_same_centroids(rng):
    from sklearn.cluster import KMeans as SkKMeans
    X = _data("blobs", rng, n=2000, d=6)
    init = X[rng.choice(len(X), 8, replace=False)]
    a = KMeans(8, init=init, tol=0).fit(X)
    b = SkKMeans(8, init=init, n_init=1, tol=0, algorithm="lloyd").fit(X)
    assert a.n_iter_ == b.n_iter_
    assert_array_equal(a.labels_, b.labels_)
    assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=1e-10, atol=1e-10)
    assert a.inertia_ == pytest.approx(b.inertia_, rel=1e-9)


def _ref_predict(km, Q):
    return np.array(ref.assign(np.asarray(Q, dtype=np.float64).tolist(),
                               km.cluster_centers_.astype(np.float64).tolist())[0])


# ---- predict, transform, score ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_predict_transform_score(rng, dtype):
    X = _data("blobs", rng, n=300).astype(dtype)
    Q = _data("blobs", rng, n=50).astype(dtype)
    km = KMeans(4, random_state=0).fit(X)
    D = km.transform(Q)
    assert D.dtype == dtype and D.shape == (50, 4)
    Qd, Cd = Q.astype(np.float64), km.cluster_centers_.astype(np.float64)
    assert_allclose(D, np.sqrt(((Qd[:, None, :] - Cd[None]) ** 2).sum(-1)),
                    rtol=1e-6 if dtype == np.float32 else 1e-12)
    assert_array_equal(km.predict(Q), np.argmin(D, axis=1))
    assert_array_equal(km.predict(Q), _ref_predict(km, Q))
    assert km.score(X) == pytest.approx(-km.inertia_, rel=1e-12)
    assert_array_equal(KMeans(4, random_state=0).fit_predict(X), km.labels_)
    assert_allclose(KMeans(4, random_state=0).fit_transform(X), km.transform(X))
    # a float64 query on a float32 model (and vice versa) is compared on its own values
    Q64 = Q.astype(np.float64) + 1e-9
    assert_array_equal(km.predict(Q64), _ref_predict(km, Q64))


def test_pipeline(rng):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X = _data("blobs", rng, n=200) * [1, 10, 100]
    pipe = make_pipeline(StandardScaler(), KMeans(4, random_state=0)).fit(X)
    assert_array_equal(pipe.predict(X), pipe[-1].labels_)
    assert pipe.transform(X).shape == (200, 4)
    for n in (1, 5):
        assert_array_equal(pipe.predict(X[:n]), pipe[-1].labels_[:n])


def test_readonly_fortran_and_list_input(rng):
    X = _data("blobs", rng, n=200)
    want = KMeans(4, random_state=0).fit(X)
    Xr = X.copy()
    Xr.setflags(write=False)
    for Xin in (Xr, np.asfortranarray(X), X.tolist()):
        km = KMeans(4, random_state=0).fit(Xin)
        assert_array_equal(km.labels_, want.labels_)
        assert_array_equal(km.predict(Xin), want.labels_)
    km = KMeans(4, init=want.cluster_centers_.tolist()).fit(Xr)      # an init given as a list
    assert_array_equal(km.labels_, want.labels_)


def test_set_params_after_fit_does_not_break_predict(rng):
    X = _data("blobs", rng, n=200)
    km = KMeans(4, random_state=0).fit(X)
    labels = km.predict(X)
    km.set_params(n_clusters=7)
    assert_array_equal(km.predict(X), labels)
    assert km.transform(X).shape == (200, 4)


def test_get_feature_names_out(rng):
    km = KMeans(3, random_state=0).fit(_data("blobs", rng))
    assert list(km.get_feature_names_out()) == ["kmeans0", "kmeans1", "kmeans2"]


# ---- the adjusted Rand index and the tour ------------------------------------------------------

def test_adjusted_rand_index(rng):
    from sklearn.metrics import adjusted_rand_score
    for _ in range(20):
        n = int(rng.integers(2, 60))
        a = rng.integers(0, int(rng.integers(1, 5)), size=n)
        b = rng.integers(0, int(rng.integers(1, 5)), size=n)
        assert cl.adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_score(a, b), abs=1e-12)
    a = rng.integers(0, 4, size=50)
    assert cl.adjusted_rand_index(a, (a + 1) % 4) == 1.0            # renaming does not matter
    assert cl.adjusted_rand_index(["x", "y", "x"], [2, 5, 2]) == 1.0
    assert cl.adjusted_rand_index([0, 0, 0], [1, 1, 1]) == 1.0
    with pytest.raises(ValueError):
        cl.adjusted_rand_index([0, 1], [0, 1, 1])


def test_tour_entries_cluster_iris_and_wine():
    from smml._tour import collect_entries, load, split
    entries = [e for e in collect_entries() if e.name.startswith("KMeans")]
    assert entries and all(e.clustering for e in entries)
    assert {d for e in entries for d in e.datasets} == {"iris", "wine"}
    X, y = load("iris")
    Xtr, Xte, ytr, yte = split("iris", X, y)
    e = entries[0]
    a, r = e.make().fit(Xtr), e.reference().fit(Xtr)
    assert_array_equal(a.labels_, r.labels_)
    assert_array_equal(a.predict(Xte), r.predict(Xte))
    assert cl.adjusted_rand_index(ytr, a.labels_) > 0.4     # the clusters follow the species


# ---- bad input ----------------------------------------------------------------------------------

def test_bad_inputs(rng):
    X = _data("continuous", rng, n=20)
    with pytest.raises(ValueError, match="larger than the number of samples"):
        KMeans(21).fit(X)
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError):
            KMeans(3).fit(Xb)
    for params in (dict(n_clusters=0), dict(n_clusters=2.5), dict(tol=-1.0), dict(max_iter=0),
                   dict(n_init=0), dict(n_init="many"), dict(init="kmeans"), dict(n_jobs=0)):
        with pytest.raises(ValueError):
            KMeans(**{"n_clusters": 3, **params}).fit(X)
    with pytest.raises(ValueError, match="shape"):
        KMeans(3, init=X[:2]).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        KMeans(2, init=np.array([[np.nan, 0, 0], [1, 1, 1]])).fit(X)
    with pytest.raises(ValueError):
        KMeans(2, init=np.array([["a", "b", "c"], ["d", "e", "f"]])).fit(X)
    with pytest.raises(ValueError, match="positive sample_weight"):
        KMeans(3).fit(X, sample_weight=np.r_[np.ones(2), np.zeros(18)])
    for sw in (-np.ones(20), np.ones(19), np.zeros(20)):
        with pytest.raises(ValueError):
            KMeans(3).fit(X, sample_weight=sw)
    with pytest.raises(ValueError, match="overflow"):
        KMeans(3).fit(X * 1e160)
    with pytest.warns(RuntimeWarning, match="one run"):
        KMeans(3, init=X[:3], n_init=4).fit(X)
    with pytest.raises(NotFittedError):
        KMeans(3).predict(X)
    km = KMeans(3, random_state=0).fit(X)
    with pytest.raises(ValueError):
        km.predict(X[:, :2])
    with pytest.raises(ValueError):
        km.predict(np.full((1, 3), np.nan))
    with pytest.raises(ValueError, match="overflow"):
        km.predict(np.full((1, 3), 1e200))


def test_single_sample_and_as_many_clusters_as_samples(rng):
    km = KMeans(1).fit([[3.0, 4.0]])
    assert_array_equal(km.cluster_centers_, [[3.0, 4.0]]) and km.inertia_ == 0
    X = rng.normal(size=(7, 2))
    km = KMeans(7, random_state=0).fit(X)
    assert km.inertia_ == 0.0
    assert sorted(km.labels_) == list(range(7))


def test_float32_beyond_the_float32_gemm_range(rng):
    X = (_data("blobs", rng, n=120) * 3e17).astype(np.float32)
    a = KMeans(4, random_state=2, n_init=1, tol=0).fit(X)
    b = ref.KMeans(4, random_state=2, n_init=1, tol=0).fit(X)
    _assert_same_fit(a, b, np.float32)
    assert a.cluster_centers_.dtype == np.float32
    assert np.all(np.isfinite(a.transform(X)))


def test_kernel_rejects_bad_arguments():
    X = np.zeros((4, 2))
    C = np.zeros((2, 2))
    n, lab = np.zeros(4), np.zeros(4, dtype=np.int32)
    acc, cnt = np.zeros((1, 2 * 4)), np.zeros((1, 2), dtype=np.intp)
    anch = np.zeros((1, 2), dtype=np.intp)
    with pytest.raises(ValueError):
        _kmeans.lloyd_iter(X, X[:3], n, np.empty(0), C, C, np.zeros(2), np.zeros(2), False, False,
                           1e-10, lab, C.copy(), C.copy(), np.zeros(2), acc, anch, cnt, 4, 4, True, 1)
    with pytest.raises(ValueError, match="work arrays"):
        _kmeans.lloyd_iter(X, X, n, np.empty(0), C, C, np.zeros(2), np.zeros(2), False, False,
                           1e-10, lab, C.copy(), C.copy(), np.zeros(2), acc[:, :3], anch, cnt, 4, 4, True, 1)
    with pytest.raises(ValueError, match="work arrays"):
        _kmeans.lloyd_iter(X, X, n, np.empty(0), C, C, np.zeros(2), np.zeros(2), False, False,
                           1e-10, lab, C.copy(), C.copy(), np.zeros(2), acc, anch[:, :1], cnt, 4, 4, True, 1)
    with pytest.raises(ValueError, match="label out of range"):
        _kmeans.recompute_centroids(X, X, n, np.empty(0), np.array([0, 1, 2, 0], dtype=np.int32), C, C,
                                    np.zeros(2), np.zeros(2), False, False, C.copy(), C.copy(),
                                    np.zeros(2), acc, anch, cnt, 4, 1)
    with pytest.raises(ValueError, match="disagree"):
        _kmeans.recompute_centroids(X, X[:3], n, np.empty(0), lab, C, C,
                                    np.zeros(2), np.zeros(2), False, False, C.copy(), C.copy(),
                                    np.zeros(2), acc, anch, cnt, 4, 1)
    with pytest.raises(ValueError, match="work arrays"):
        _kmeans.recompute_centroids(X, X, n, np.empty(0), lab, C, C,
                                    np.zeros(2), np.zeros(2), False, False, C.copy(), C.copy(),
                                    np.zeros(2), acc, anch[:, :1], cnt, 4, 1)
    with pytest.raises(ValueError, match="label out of range"):
        _kmeans.assign(X, X, n, np.empty(0), C, C, np.zeros(2), 1e-10,
                       np.array([0, -1, 0, 0], dtype=np.int32), False, True, 4, 4, True, 1)
    with pytest.raises(ValueError):
        _kmeans.sqdist_to_assigned(X, C, np.array([0, 5, 0, 0], dtype=np.int32), np.zeros(4), 1)
    with pytest.raises(ValueError):         # transform's exact distances (the k-NN kernel's)
        _knn.exact_rows(X, C, np.arange(4, dtype=np.intp), _knn.METRIC_CODES["sqeuclidean"],
                        np.zeros((4, 3)), 1)
    with pytest.raises(ValueError):
        _kmeans.min_sqdist_update(X, np.zeros(3), np.zeros(4), 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("centred", [False, True])
def test_blocks_partial_sums_then_update_equal_one_lloyd_iteration(dtype, centred):
    # smml.dask.KMeans's split of an iteration: lloyd_iter(update=False) keeps every block's
    # sums and merges the anchors, update_from_blocks merges the sums; the same centroids, J and empties as
    # lloyd_iter in one call (one cluster is all copies of one row: its anchor decides it)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(1000, 3)).astype(dtype)
    X[::5] = 50.1                                 # 200 copies of one far row (their mean is not 50.1)
    k, block = 5, 128
    C = X[[0, 1, 2, 3, 4]].astype(dtype)
    C[4] = 1e3                                    # no member: an empty cluster
    mean = X.mean(axis=0, dtype=np.float64) if centred else np.zeros(3)
    if centred:
        Xg = (X - mean).astype(dtype)
        Cg = (C - mean).astype(dtype)
    else:
        Xg, Cg = X, C
    xn = np.einsum("ij,ij->i", Xg.astype(np.float64), Xg.astype(np.float64))
    cn = np.einsum("ij,ij->i", Cg.astype(np.float64), Cg.astype(np.float64))
    nb = -(-1000 // block)

    def run(update):
        lab = np.full(1000, -1, dtype=np.int32)
        acc, anch = np.empty((nb, k * _kmeans.record_width(3))), np.empty((nb, k), dtype=np.intp)
        cnt = np.empty((nb, 2), dtype=np.intp)
        out = (np.empty_like(Cg), np.empty_like(C), np.empty(k))
        res = _kmeans.lloyd_iter(Xg, X, xn, np.empty(0), Cg, C, cn, mean, centred, False, 1e-6, lab,
                                 *out, acc, anch, cnt, block, 64, True, 1, update)
        return res, out, acc, anch, lab

    (J, chg, _, empty), (Cg1, C1, cn1), _, _, lab1 = run(True)
    (_, chg2, _, _), _, acc, anch, lab2 = run(False)
    np.testing.assert_array_equal(lab1, lab2)
    assert chg2 == chg == 1000
    # the merged anchors (anch[0]) on the first block, none on the others; V holds their rows
    V = X[np.where(anch[0] >= 0, anch[0], 0)]
    anch_v = np.full(anch.shape, -1, dtype=np.intp)
    anch_v[0] = np.where(anch[0] >= 0, np.arange(k), anch[0])
    out = (np.empty_like(Cg), np.empty_like(C), np.empty(k))
    J2, empty2 = _kmeans.update_from_blocks(V, acc, anch_v, Cg, C, cn, mean, centred, False, *out)
    assert (J2, empty2) == (J, empty) and empty == 1
    for a, b in zip(out, (Cg1, C1, cn1)):
        np.testing.assert_array_equal(a, b)
    assert np.array_equal(out[1][0], X[0])        # the cluster of copies of row 0


def test_update_from_blocks_rejects_bad_arguments():
    C = np.zeros((2, 2))
    acc, anch = np.zeros((3, 2 * 4)), np.full((3, 2), -1, dtype=np.intp)
    V = np.zeros((6, 2))
    args = (C, C, np.zeros(2), np.zeros(2), False, False, C.copy(), C.copy(), np.zeros(2))
    with pytest.raises(ValueError, match="not a row of V"):
        _kmeans.update_from_blocks(V, acc, np.full((3, 2), 6, dtype=np.intp), *args)
    with pytest.raises(ValueError, match="not a row of V"):
        _kmeans.update_from_blocks(V, acc, np.full((3, 2), -3, dtype=np.intp), *args)
    with pytest.raises(ValueError, match="disagree"):
        _kmeans.update_from_blocks(V, np.zeros((3, 7)), anch, *args)
    with pytest.raises(ValueError, match="disagree"):
        _kmeans.update_from_blocks(V, acc, anch[:2], *args)
    with pytest.raises(ValueError, match="disagree"):
        _kmeans.update_from_blocks(V[:0], acc, anch, *args)
    with pytest.raises(ValueError, match="disagree"):
        _kmeans.update_from_blocks(np.zeros((6, 3)), acc, anch, *args)
    with pytest.raises(ValueError, match="disagree"):
        _kmeans.update_from_blocks(V, acc, anch, *args[:6], C[:1].copy(), C.copy(), np.zeros(2))


# ---- scikit-learn compatibility -----------------------------------------------------------------

# As for scikit-learn's own KMeans: init="random" and "k-means++" draw the initial
# centroids from the rows, and weighted rows are not the same rows as repeated ones, so
# the two fits start elsewhere. From the same initial centroids, weights and repeated
# rows give the same fit (test_integer_weights_equal_duplicated_rows).
EXPECTED_FAILED = {"check_sample_weight_equivalence_on_dense_data":
                   "the initial centroids are drawn from the rows, which differ between weighted "
                   "and repeated data (scikit-learn lists the same check for its KMeans)"}


@parametrize_with_checks([KMeans(n_clusters=3, random_state=0),
                          KMeans(n_clusters=2, init="k-means++", random_state=0)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---- verbose and float32 ----------------------------------------------------------------------

def test_verbose_shows_a_bar_and_changes_nothing(capsys):
    X = np.random.default_rng(0).normal(size=(300, 3))
    a = KMeans(4, n_init=3, random_state=0).fit(X)
    assert capsys.readouterr().err == ""
    b = KMeans(4, n_init=3, random_state=0, verbose=1).fit(X)
    err = capsys.readouterr().err
    assert "KMeans runs" in err and "3/3" in err and "Lloyd iteration" in err
    assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    assert_array_equal(a.labels_, b.labels_)
    assert a.inertia_ == b.inertia_ and a.n_iter_ == b.n_iter_
    with pytest.raises(ValueError, match="verbose"):
        KMeans(2, verbose=-1).fit(X)


def test_preserves_dtype_tag_is_what_transform_does():
    # scikit-learn's preserves_dtype tag lists exactly the dtypes transform keeps
    X = np.random.default_rng(1).normal(size=(80, 3))
    km = KMeans(3, n_init=1, random_state=0)
    tags = km.__sklearn_tags__().transformer_tags.preserves_dtype
    for dt in (np.float32, np.float64):
        out = km.fit(X.astype(dt)).transform(X.astype(dt))
        assert (out.dtype == dt) == (np.dtype(dt).name in tags)
        assert km.cluster_centers_.dtype == dt


# ---- distance bounds (Hamerly's test): a shortcut that changes no result ----------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["blobs", "grid", "dups", "offset"])
def test_distance_bounds_change_no_fit(rng, monkeypatch, dtype, kind):
    # the same labels, centroids, J path and iterations, bit for bit, with the bounds forced on
    # and off: continuous data, exact ties everywhere (grid), empty clusters re-seeded (dups),
    # data far from the origin (the centred gemm), with and without weights
    n = 3000
    X = (_data("blobs", rng, n=n, d=5) + 1e5) if kind == "offset" else _data(kind, rng, n=n, d=5)
    X = X.astype(dtype)
    w = rng.integers(0, 3, size=n).astype(float) if kind != "grid" else None
    for k in (3, 40):
        init = X[rng.choice(n, k, replace=False)] + 0.125
        fits = []
        for bounds in (False, True):
            monkeypatch.setattr(cl, "_BOUNDS", bounds)
            fits.append(KMeans(k, init=init, tol=0, max_iter=40, n_jobs=2).fit(X, sample_weight=w))
        _assert_same_fit(fits[1], fits[0], dtype, exact_centres=True)


def test_distance_bounds_with_small_blocks_and_threads(rng, monkeypatch, small_layout):
    X = _data("blobs", rng, n=600, d=3)
    init = X[:70] + 0.01
    fits = []
    for bounds in (False, True):
        monkeypatch.setattr(cl, "_BOUNDS", bounds)
        fits.append([KMeans(70, init=init, tol=0, max_iter=30, n_jobs=j).fit(X) for j in (1, 3)])
    for f in fits[0][1:] + fits[1]:
        _assert_same_fit(f, fits[0][0], np.float64, exact_centres=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("t", [0, 5])
def test_distance_bounds_hold_after_each_iteration(rng, dtype, t):
    # ub[i] >= ||x_i - c_label||, and the lower bounds below the distance to every other
    # centroid (t = 0, Hamerly's: lb[i] <= every other; t groups: lb[i t + g] <= every centroid
    # of group g but the label), for the centroids the labels were computed from, after the
    # first call (every row computed) and the later ones (most rows skipped); the labels the
    # exact argmin
    from smml import _kmeans_loop as loop
    n, d, k = (2000, 4, 24) if t == 0 else (2000, 11, 48)
    X = _data("blobs", rng, n=n, d=d).astype(dtype)
    xn = np.einsum("ij,ij->i", X.astype(np.float64), X.astype(np.float64))
    C = X[rng.choice(n, k, replace=False)].copy()
    gid = loop.centroid_groups(C, t) if t else None
    if t:
        assert gid.dtype == np.int32 and gid.min() >= 0 and gid.max() < t
    lab = np.full(n, -1, dtype=np.int32)
    ub, lb = np.empty(n, dtype=np.float32), np.empty(n * max(t, 1), dtype=np.float32)
    acc, anch = np.empty((1, k * _kmeans.record_width(d))), np.empty((1, k), dtype=np.intp)
    cnt = np.empty((1, 2), dtype=np.intp)
    coef = _euclidean_error_coef(d, dtype)
    prev = None
    for it in range(12):
        cn = np.einsum("ij,ij->i", C.astype(np.float64), C.astype(np.float64))
        C_new = np.empty_like(C)
        _kmeans.lloyd_iter(X, X, xn, np.empty(0), C, C, cn, np.zeros(d), False, False, coef, lab,
                           C_new, C_new, np.empty(k), acc, anch, cnt, n, 256, True, 2, True, ub, lb, prev,
                           gid)
        D = np.sqrt(((X.astype(np.float64)[:, None, :] - C.astype(np.float64)[None]) ** 2).sum(-1))
        assert_array_equal(lab, np.argmin(D, axis=1))
        own = D[np.arange(n), lab]
        D[np.arange(n), lab] = np.inf
        assert np.all(ub.astype(np.float64) >= own)
        if t:
            L = lb.reshape(n, t).astype(np.float64)
            for g in range(t):
                assert np.all(L[:, g] <= D[:, gid == g].min(axis=1))
        else:
            assert np.all(lb.astype(np.float64) <= D.min(axis=1))
        prev = C
        C = C_new


# ---- group bounds (Yinyang's test): one lower bound per group of centroids ---------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["blobs", "grid", "dups", "offset"])
@pytest.mark.parametrize("d", [5, 20])
def test_group_bounds_change_no_fit(rng, monkeypatch, dtype, kind, d):
    # forced on with 2, 5 and k groups (uneven groups, groups of one, panels padded past a
    # group's centroids, an odd d): the same labels, centroids, J path and iterations, bit for
    # bit, as without any bounds and as with Hamerly's, on ties (grid), empty clusters
    # re-seeded (dups), data far from the origin, with and without weights
    n = 2000
    X = (_data("blobs", rng, n=n, d=d) + 1e5) if kind == "offset" else _data(kind, rng, n=n, d=d)
    X = X.astype(dtype)
    w = rng.integers(0, 3, size=n).astype(float) if kind != "grid" else None
    k = 40
    init = X[rng.choice(n, k, replace=False)] + 0.125
    monkeypatch.setattr(cl, "_BOUNDS", False)
    ref = KMeans(k, init=init, tol=0, max_iter=40, n_jobs=2).fit(X, sample_weight=w)
    monkeypatch.setattr(cl, "_BOUNDS", True)
    for groups in (0, 2, 5, k):
        monkeypatch.setattr(cl, "_GROUPS", groups)
        fit = KMeans(k, init=init, tol=0, max_iter=40, n_jobs=2).fit(X, sample_weight=w)
        _assert_same_fit(fit, ref, dtype, exact_centres=True)


def test_group_bounds_with_small_blocks_and_threads(rng, monkeypatch, small_layout):
    X = _data("blobs", rng, n=600, d=9)
    init = X[:70] + 0.01
    monkeypatch.setattr(cl, "_BOUNDS", False)
    ref = KMeans(70, init=init, tol=0, max_iter=30, n_jobs=1).fit(X)
    monkeypatch.setattr(cl, "_BOUNDS", True)
    monkeypatch.setattr(cl, "_GROUPS", 4)
    for j in (1, 3):
        _assert_same_fit(KMeans(70, init=init, tol=0, max_iter=30, n_jobs=j).fit(X), ref, np.float64,
                         exact_centres=True)


def test_group_bounds_rule_and_kernel_checks():
    from smml import _kmeans_loop as loop
    assert loop.group_count(256, 256) == 16 and loop.group_count(512, 64) == 32
    assert loop.group_count(128, 256) == 0 and loop.group_count(256, 32) == 0    # Hamerly's there
    X = np.zeros((4, 2))
    C = np.zeros((3, 2))
    n = np.zeros(4)
    acc, cnt = np.zeros((1, 3 * 4)), np.zeros((1, 2), dtype=np.intp)
    anch = np.zeros((1, 3), dtype=np.intp)

    def call(ub, lb, groups):
        return _kmeans.lloyd_iter(X, X, n, np.empty(0), C, C, np.zeros(3), np.zeros(2), False, False,
                                  1e-10, np.zeros(4, dtype=np.int32), C.copy(), C.copy(), np.zeros(3), acc,
                                  anch, cnt, 4, 4, True, 1, True, ub, lb, C, groups)
    f4, f8 = np.zeros(4, dtype=np.float32), np.zeros(8, dtype=np.float32)
    with pytest.raises(ValueError, match="groups need the bounds"):
        call(None, None, np.zeros(3, dtype=np.int32))
    with pytest.raises(ValueError, match="groups need the bounds"):
        call(f4, f8, np.zeros(2, dtype=np.int32))
    for bad in ([0, -1, 1], [0, 3, 1]):
        with pytest.raises(ValueError, match="group out of range"):
            call(f4, f8, np.array(bad, dtype=np.int32))
    with pytest.raises(ValueError, match="n t with groups"):
        call(f4, f4.copy(), np.array([0, 1, 1], dtype=np.int32))     # 2 groups: 8 bounds
    call(f4, f8, np.array([0, 1, 1], dtype=np.int32))                 # fine
    # the groups of neighbouring centroids: two far clusters of centroids, two groups
    Cs = np.concatenate([np.zeros((5, 2)), np.full((5, 2), 100.0)]) + np.arange(10)[:, None] * 0.01
    g = loop.centroid_groups(Cs, 2)
    assert len(set(g[:5])) == 1 and len(set(g[5:])) == 1 and g[0] != g[5]
    # identical centroids: the groups left empty are dropped, one group numbered 0
    assert_array_equal(loop.centroid_groups(np.ones((6, 3)), 3), np.zeros(6, dtype=np.int32))


def test_distance_bounds_rule_and_kernel_checks():
    from smml import _kmeans_loop as loop
    assert not loop.use_bounds(8, 64) and not loop.use_bounds(32, 256)    # few clusters: never
    assert not loop.use_bounds(64, 2) and loop.use_bounds(64, 16)
    assert loop.use_bounds(256, 2) and not loop.use_bounds(256, loop.BOUNDS_MAX_D + 1)
    X = np.zeros((4, 2))
    C = np.zeros((2, 2))
    n = np.zeros(4)
    acc, cnt = np.zeros((1, 2 * 4)), np.zeros((1, 2), dtype=np.intp)
    anch = np.zeros((1, 2), dtype=np.intp)
    f4 = np.zeros(4, dtype=np.float32)

    def call(lab, ub, lb, prev):
        return _kmeans.lloyd_iter(X, X, n, np.empty(0), C, C, np.zeros(2), np.zeros(2), False, False,
                                  1e-10, lab, C.copy(), C.copy(), np.zeros(2), acc, anch, cnt, 4, 4, True, 1,
                                  True, ub, lb, prev)
    lab = np.zeros(4, dtype=np.int32)
    with pytest.raises(ValueError, match="together"):
        call(lab, f4, None, None)
    with pytest.raises(ValueError, match="n entries"):
        call(lab, f4, f4[:3], None)
    with pytest.raises(ValueError, match="needs the bounds"):
        call(lab, None, None, C)
    with pytest.raises(ValueError, match="C_prev"):
        call(lab, f4, f4.copy(), C[:1])
    with pytest.raises(ValueError, match="out of range"):        # bounds of labels never set
        call(np.full(4, -1, dtype=np.int32), f4, f4.copy(), C)
    call(np.full(4, -1, dtype=np.int32), f4, f4.copy(), None)      # the first call: fine
