"""smml.dask's linear models (issue 35): least squares, ridge and logistic regression on dask
arrays against the in-memory fits (several chunkings; bit for bit where the sums are added in
the same order), bad inputs, the fitted model as an in-memory one (a worker killed during a fit:
tests/test_dask_faults.py)."""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import smml  # noqa: E402
import smml.dask as sd  # noqa: E402
from smml.linear import LinearRegression, LogisticRegression, RidgeRegression  # noqa: E402


from _dask_cluster import TIMEOUT, client  # noqa: E402,F401  (client: the module's LocalCluster, 2 x 1 thread)


def _regression(n=3000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 3.0 * rng.normal(size=d)
    y = X @ rng.normal(size=d) + 0.7 + rng.normal(size=n)
    return X, y


def _classes(n=3000, d=6, k=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    s = X @ rng.normal(size=d) + 0.8 * rng.normal(size=n)
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, k + 1)[1:-1]))
    return X, np.array(["a", "b", "c", "d"])[y] if k > 2 else y


def _dask(X, y, rows, sw=None):
    out = (da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=rows))
    return out + ((da.from_array(sw, chunks=rows),) if sw is not None else ())


def _same_model(a, b, exact, rtol=1e-9, atol=1e-12):
    check = (np.testing.assert_array_equal if exact
             else lambda u, v: np.testing.assert_allclose(u, v, rtol=rtol, atol=atol))
    check(b.coef_, a.coef_)
    check(np.asarray(b.intercept_), np.asarray(a.intercept_))


# ---- equality with the in-memory fits ------------------------------------------------------------

@pytest.mark.parametrize("cls,params", [(LinearRegression, {}), (LinearRegression, {"fit_intercept": False}),
                                        (RidgeRegression, {"alpha": 3.0}),
                                        (RidgeRegression, {"alpha": 0.5, "fit_intercept": False})])
def test_least_squares_equals_in_memory(client, cls, params):
    X, y = _regression()
    a = cls(**params).fit(X, y)
    dcls = getattr(sd, cls.__name__)
    for rows in (3000, 1024, 777, 500):
        b = dcls(**params).fit(*_dask(X, y, rows))
        # one block: the in-memory sums, bit for bit; several: the same sums grouped by block
        _same_model(a, b, exact=rows == 3000)
        assert b.solver_ == a.solver_
        assert isinstance(b, cls) and b.n_features_in_ == 6


def test_least_squares_explicit_centring_and_weights(client):
    # a column whose mean dwarfs its spread: _centered_gram centres the rows explicitly (the
    # distributed fit does it in a second pass over the blocks)
    X, y = _regression(2000, 4, seed=3)
    X[:, 1] = 1e6 + 1e-2 * X[:, 1]
    rng = np.random.default_rng(4)
    sw = rng.integers(0, 4, size=2000).astype(float)
    for cls, params in ((LinearRegression, {}), (RidgeRegression, {"alpha": 1.0})):
        dcls = getattr(sd, cls.__name__)
        for weights in (None, sw, np.ones(2000)):
            a = cls(**params).fit(X, y, sample_weight=weights)
            for rows in (2000, 450):
                Xd, yd = _dask(X, y, rows)
                b = dcls(**params).fit(Xd, yd, sample_weight=weights)
                _same_model(a, b, exact=rows == 2000, rtol=1e-7, atol=1e-9)
    # an integer weight counts a row that many times
    rep = np.repeat(np.arange(2000), sw.astype(int))
    a = LinearRegression().fit(X[rep], y[rep])
    b = sd.LinearRegression().fit(*_dask(X, y, 300), sample_weight=da.from_array(sw, chunks=300))
    _same_model(a, b, exact=False, rtol=1e-6, atol=1e-8)


def test_least_squares_singular_and_wide(client):
    X, y = _regression(600, 3, seed=5)
    Xs = np.column_stack([X, X[:, 0]])             # a repeated column: S^T S singular
    a = LinearRegression().fit(Xs, y)
    b = sd.LinearRegression().fit(*_dask(Xs, y, 200))
    assert a.solver_ == b.solver_ == "pseudo_inverse"
    _same_model(a, b, exact=False, rtol=1e-6, atol=1e-8)
    Xw, yw = X[:2].repeat(2, axis=1), y[:2]       # more features than rows: gathered, in-memory fit
    for cls, params in ((LinearRegression, {}), (RidgeRegression, {"alpha": 1.0})):
        a = cls(**params).fit(Xw, yw)
        b = getattr(sd, cls.__name__)(**params).fit(*_dask(Xw, yw, 1))
        _same_model(a, b, exact=True)


@pytest.mark.parametrize("k,multi_class", [(2, "ovr"), (4, "ovr"), (4, "softmax")])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_logistic_equals_in_memory(client, k, multi_class, fit_intercept):
    X, y = _classes(k=k, seed=k)
    params = dict(multi_class=multi_class, fit_intercept=fit_intercept)
    a = LogisticRegression(**params).fit(X, y)
    for rows in (3000, 1024, 512, 700):
        b = sd.LogisticRegression(**params).fit(*_dask(X, y, rows))
        # one block, or (binary and one-vs-rest) blocks of whole 512-row chunks of the kernel:
        # the in-memory sums in the in-memory order, the same iterates, bit for bit
        exact = rows == 3000 or (multi_class == "ovr" and rows % 512 == 0)
        _same_model(a, b, exact=exact, rtol=1e-5, atol=1e-7)
        np.testing.assert_array_equal(b.classes_, a.classes_)
        if exact:
            np.testing.assert_array_equal(b.n_iter_, a.n_iter_)
        np.testing.assert_allclose(b.objective(X, y), a.objective(X, y), rtol=1e-10)
        np.testing.assert_array_equal(b.predict(X), a.predict(X))


def test_logistic_weights_and_regularisation(client):
    X, y = _classes(2000, 5, k=3, seed=7)
    rng = np.random.default_rng(8)
    sw = rng.integers(0, 3, size=2000).astype(float)
    name = next(p for p in LogisticRegression().get_params() if p in ("alpha", "lam"))
    for params in ({name: 0.05}, {name: 0.0, "multi_class": "softmax"}, {name: 0.01, "multi_class": "softmax"}):
        a = LogisticRegression(**params).fit(X, y, sample_weight=sw)
        for rows in (2000, 600):
            b = sd.LogisticRegression(**params).fit(*_dask(X, y, rows), sample_weight=sw)
            _same_model(a, b, exact=rows == 2000, rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(b.objective(X, y), a.objective(X, y), rtol=1e-9)


def test_local_scheduler_and_dataframes(client):
    # dask's own schedulers (no distributed client): the same model
    X, y = _classes(1500, 3, seed=2)
    a = sd.LogisticRegression().fit(*_dask(X, y, 512))
    with dask.config.set(scheduler="synchronous"):
        b = sd.LogisticRegression().fit(*_dask(X, y, 512))
    _same_model(a, b, exact=True)
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd
    df = dd.from_pandas(pd.DataFrame(X, columns=list("abc")), npartitions=3)
    ys = dd.from_pandas(pd.Series(y), npartitions=3)
    c = sd.LogisticRegression().fit(df, ys)
    _same_model(LogisticRegression().fit(X, y), c, exact=False, rtol=1e-5, atol=1e-7)


# ---- the fitted model is the in-memory one -------------------------------------------------------

def test_fitted_model_is_usable_in_memory(client, tmp_path):
    X, y = _classes(1200, 4, k=3, seed=1)
    m = sd.LogisticRegression(multi_class="softmax", max_iter=500).fit(*_dask(X, y, 400))
    assert m.get_params() == LogisticRegression(multi_class="softmax", max_iter=500).get_params()
    assert isinstance(m, LogisticRegression)
    p = m.predict_proba(X)
    path = str(tmp_path / "m.smml")
    smml.save(m, path)
    back = smml.load(path)
    assert type(back) is LogisticRegression            # loads without dask
    np.testing.assert_array_equal(back.predict_proba(X), p)
    Xr, yr = _regression(500, 3)
    r = sd.RidgeRegression(alpha=2.0).fit(*_dask(Xr, yr, 100))
    smml.save(r, path)
    back = smml.load(path)
    assert type(back) is RidgeRegression
    np.testing.assert_array_equal(back.predict(Xr), r.predict(Xr))
    np.testing.assert_array_equal(sd.predict(r, da.from_array(Xr, chunks=100)).compute(), r.predict(Xr))


# ---- bad inputs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [sd.LinearRegression, sd.RidgeRegression, sd.LogisticRegression])
def test_bad_inputs(client, cls):
    X, y = _classes(300, 3)
    Xd, yd = _dask(X, y, 100)
    with pytest.raises(TypeError, match="dask array"):
        cls().fit(X, y)
    with pytest.raises(ValueError, match="2-d"):
        cls().fit(da.from_array(X[:, 0], chunks=100), yd)
    with pytest.raises(ValueError, match="2-d"):
        cls().fit(da.from_array(X[:, :, None], chunks=100), yd)
    with pytest.raises(ValueError, match="1-d"):
        cls().fit(Xd, da.from_array(np.c_[y, y], chunks=100))
    with pytest.raises(ValueError, match="inconsistent numbers of samples: 300 and 299"):
        cls().fit(Xd, y[:-1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        cls().fit(Xd, da.from_array(y[:-1], chunks=100))
    bad = X.copy()
    bad[250, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls().fit(da.from_array(bad, chunks=(100, -1)), yd)
    bad[250, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        cls().fit(da.from_array(bad, chunks=(100, -1)), yd)
    with pytest.raises(ValueError, match="numeric"):
        cls().fit(da.from_array(X.astype(str), chunks=100), yd)
    unknown = Xd[Xd[:, 0] > -10]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        cls().fit(unknown, yd)
    with pytest.raises(ValueError, match="sample_weight"):
        cls().fit(Xd, yd, sample_weight=-np.ones(300))
    # y chunked unlike X, and X chunked along the columns: rechunked, the same model
    a = cls().fit(Xd, yd)
    b = cls().fit(da.from_array(X, chunks=(100, 2)), da.from_array(y, chunks=70))
    _same_model(a, b, exact=True)


def test_bad_inputs_logistic_and_regression_targets(client):
    X, y = _classes(300, 3)
    Xd = da.from_array(X, chunks=(100, -1))
    with pytest.raises(ValueError, match="L-BFGS only"):
        sd.LogisticRegression(solver="sgd").fit(Xd, y)
    with pytest.raises(ValueError, match="only one class"):
        sd.LogisticRegression().fit(Xd, np.zeros(300))
    with pytest.raises(ValueError, match="continuous"):
        sd.LogisticRegression().fit(Xd, X[:, 0])
    yf = X[:, 0].copy()
    yf[5] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        sd.LinearRegression().fit(Xd, yf)
    with pytest.raises(ValueError, match="max_iter"):
        sd.LogisticRegression(max_iter=0).fit(Xd, y)
