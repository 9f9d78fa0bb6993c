"""The shared validation path (smml._validation + smml.base) and the smml command (smml.cli, smml._tour).

Exercised through a tiny estimator defined here, so these tests do not depend on
any estimator family.
"""
import functools
import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from smml import cli
from smml import _tour
from smml._validation import (N_JOBS, RANDOM_STATE, Callable, InstanceOf, Interval, Options, check_is_fitted,
                              encode_classes, validate_sample_weight, validate_X, validate_X_y)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator
from smml.bounds import hoeffding_interval


class Tiny(ClassifierMixin, SmmlEstimator):
    """Nearest class mean; records what the validation path handed it."""

    _parameter_spec = {
        "alpha": Interval(float, 0, None, closed="neither"),
        "k": Interval(int, 1, 10),
        "p": Interval(float, 0, 1, closed="both"),
        "mode": Options("fast", "exact"),
        "dtype": Options("floating", "float64"),
        "metric": (Options("euclidean"), Callable()),
        "init": (Options(None), InstanceOf(np.ndarray)),
        "n_jobs": N_JOBS,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, alpha=1.0, k=1, p=0.5, mode="fast", dtype="floating", metric="euclidean", init=None,
                 n_jobs=None, random_state=None):
        self.alpha, self.k, self.p, self.mode, self.dtype = alpha, k, p, mode, dtype
        self.metric, self.init, self.n_jobs, self.random_state = metric, init, n_jobs, random_state

    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype=self.dtype, classifier=True)
        self.sample_weight_ = validate_sample_weight(sample_weight, X.shape[0], X.dtype)
        self.classes_, y_enc = encode_classes(y)
        self.X_seen_ = X
        self.means_ = np.array([X[y_enc == c].mean(axis=0) for c in range(len(self.classes_))])
        self.n_threads_ = self._n_threads()
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_X(self, X, dtype=self.dtype)
        d = ((X[:, None, :] - self.means_[None, :, :]) ** 2).sum(axis=2)
        return self.classes_[np.argmin(d, axis=1)]


class TinyRegressor(RegressorMixin, SmmlEstimator):
    _parameter_spec = {}

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, y_numeric=True)
        self.y_seen_ = y
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_X(self, X)
        return np.full(X.shape[0], self.mean_)


def data(rng, n=20, d=3):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] > 0, 1, 0)
    y[:2] = [0, 1]
    return X, y


# ---- accepted inputs ------------------------------------------------------------

def test_numpy_lists_and_dataframes(rng):
    X, y = data(rng)
    a = Tiny().fit(X, y).predict(X)
    b = Tiny().fit(X.tolist(), y.tolist()).predict(X.tolist())
    df = pd.DataFrame(X, columns=["u", "v", "w"])
    est = Tiny().fit(df, pd.Series(y))
    c = est.predict(df)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert list(est.feature_names_in_) == ["u", "v", "w"] and est.n_features_in_ == 3
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(df[["w", "v", "u"]])


@pytest.mark.parametrize("dt, kept", [(np.float32, np.float32), (np.float64, np.float64),
                                      (np.float16, np.float64), (np.int32, np.float64),
                                      (np.int64, np.float64), (bool, np.float64)])
def test_dtype_policy(rng, dt, kept):
    X, y = data(rng)
    Xd = (X > 0) if dt is bool else X.astype(dt)
    est = Tiny().fit(Xd, y)
    assert est.X_seen_.dtype == kept
    assert est.sample_weight_.dtype == kept
    np.testing.assert_array_equal(est.X_seen_, Xd.astype(kept))
    # dtype="float64" converts float32 too
    assert Tiny(dtype="float64").fit(Xd, y).X_seen_.dtype == np.float64


def test_layouts_and_read_only(rng):
    X, y = data(rng, n=30, d=4)
    expect = Tiny().fit(X, y).predict(X)
    F = np.asfortranarray(X)
    big = np.zeros((60, 8))
    big[::2, ::2] = X
    sliced = big[::2, ::2]  # non-contiguous view
    ro = X.copy()
    ro.flags.writeable = False
    assert not sliced.flags.c_contiguous and not F.flags.c_contiguous
    for Xv in (F, sliced, ro):
        est = Tiny().fit(Xv, y)
        assert est.X_seen_.flags.c_contiguous
        np.testing.assert_array_equal(est.X_seen_, X)
        np.testing.assert_array_equal(est.predict(Xv), expect)
    assert not ro.flags.writeable  # the caller's array is untouched


def test_regression_targets_become_float64(rng):
    X, _ = data(rng)
    y = rng.integers(0, 5, size=len(X)).astype(np.int32)
    est = TinyRegressor().fit(X, y)
    assert est.y_seen_.dtype == np.float64 and est.y_seen_.flags.c_contiguous
    with pytest.raises(ValueError, match="y contains NaN"):
        TinyRegressor().fit(X, np.where(y > 2, np.nan, 1.0))
    with pytest.raises(ValueError, match="y contains infinity"):
        TinyRegressor().fit(X, np.where(y > 2, np.inf, 1.0))


# ---- rejected inputs --------------------------------------------------------------

@pytest.mark.parametrize("make, msg", [
    (lambda X, y: (np.where(X > 1, np.nan, X), y), "X contains NaN"),
    (lambda X, y: (np.where(X > 1, np.inf, X), y), "X contains infinity"),
    (lambda X, y: (np.where(X > 1, -np.inf, X), y), "X contains infinity"),
    (lambda X, y: (X[:0], y[:0]), "0 sample"),
    (lambda X, y: (X[:, :0], y), "0 feature"),
    (lambda X, y: (X, y[:-1]), "inconsistent numbers of samples"),
    (lambda X, y: (X[:, 0], y), "Expected 2D array, got 1D array"),
    (lambda X, y: (X[:, :, None], y), "dim 3"),
    (lambda X, y: (X, y + 0.5), "Unknown label type: continuous"),
    (lambda X, y: (X, np.column_stack([y, y])), "1d array|column-vector|y should be a 1d array"),
])
def test_bad_training_input(rng, make, msg):
    X, y = data(rng)
    Xb, yb = make(X, y)
    with pytest.raises(ValueError, match=msg):
        Tiny().fit(Xb, yb)


def test_bad_predict_input(rng):
    X, y = data(rng)
    est = Tiny().fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but Tiny is expecting 3 features"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="X contains NaN"):
        est.predict(np.where(X > 1, np.nan, X))
    with pytest.raises(ValueError, match="0 sample"):
        est.predict(X[:0])
    with pytest.raises(ValueError, match="Expected 2D array"):
        est.predict(X[0])
    with pytest.raises(ValueError, match="could not convert string to float"):
        est.predict([["a", 1, 2]])
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        Tiny().predict(X)


@pytest.mark.parametrize("params, msg", [
    (dict(alpha=0), r"alpha=0 is invalid; it must be a real number in \(0, inf\)"),
    (dict(alpha=-1.5), "alpha=-1.5 is invalid"),
    (dict(alpha=np.nan), "alpha=nan is invalid"),
    (dict(alpha="1"), "alpha='1' is invalid"),
    (dict(k=0), r"k=0 is invalid; it must be an integer in \[1, 10\]"),
    (dict(k=11), "k=11 is invalid"),
    (dict(k=2.0), "k=2.0 is invalid"),
    (dict(k=True), "k=True is invalid"),
    (dict(p=1.01), r"p=1.01 is invalid; it must be a real number in \[0, 1\]"),
    (dict(mode="slow"), "mode='slow' is invalid; it must be one of 'fast', 'exact'"),
    (dict(mode=None), "mode=None is invalid"),
    (dict(metric="manhattan"), "metric='manhattan' is invalid; it must be one of 'euclidean' or a callable"),
    (dict(init=[1, 2]), r"init=\[1, 2\] is invalid; it must be one of None or an instance of ndarray"),
    (dict(n_jobs=0), "n_jobs=0 is invalid"),
    (dict(n_jobs=1.5), "n_jobs=1.5 is invalid"),
    (dict(n_jobs=True), "n_jobs=True is invalid"),
    (dict(random_state=-1), "random_state=-1 is invalid"),
    (dict(random_state=2 ** 32), "random_state=4294967296 is invalid"),
    (dict(random_state="seed"), "random_state='seed' is invalid"),
])
def test_out_of_range_hyperparameters(rng, params, msg):
    X, y = data(rng)
    with pytest.raises(ValueError, match="Tiny: parameter " + msg):
        Tiny(**params).fit(X, y)


def test_valid_hyperparameters_accepted(rng):
    X, y = data(rng)
    for params in (dict(alpha=1e-9, k=10, p=0, mode="exact", metric=lambda a, b: 0, init=np.zeros(2)),
                   dict(n_jobs=-1, random_state=0), dict(n_jobs=2, random_state=np.random.RandomState(0)),
                   dict(random_state=np.random.default_rng(1), p=1, k=np.int64(3), alpha=np.float32(2))):
        Tiny(**params).fit(X, y)
    assert Tiny(n_jobs=1).fit(X, y).n_threads_ == 1
    assert Tiny(n_jobs=2).fit(X, y).n_threads_ == 2


def test_validate_sample_weight():
    np.testing.assert_array_equal(validate_sample_weight(None, 3), [1, 1, 1])
    np.testing.assert_array_equal(validate_sample_weight(2, 3), [2, 2, 2])
    sw = validate_sample_weight([1, 0, 3], 3, np.float32)
    assert sw.dtype == np.float32 and sw.tolist() == [1, 0, 3]
    for bad, msg in [([1, 2], "sample_weight has 2 entries but X has 3 samples"),
                     ([[1, 2, 3]], "sample_weight must be 1-d"),
                     ([1, -1, 1], "non-negative"),
                     ([1, np.nan, 1], "NaN or infinity"),
                     ([1, np.inf, 1], "NaN or infinity"),
                     ([0, 0, 0], "sums to zero"),
                     ([1e308, 1e308, 1], "sums to more than float64 can hold"),
                     (["a", "b", "c"], "sample_weight must be numeric")]:
        with pytest.raises(ValueError, match=msg):
            validate_sample_weight(bad, 3)
    with pytest.raises(ValueError, match="sums to more than float32 can hold"):
        validate_sample_weight([3e38, 3e38, 1], 3, np.float32)
    # finite, each of them, and their sum too: kept
    assert validate_sample_weight([1e308, 1, 0], 3).tolist() == [1e308, 1, 0]


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_sample_weights_whose_sum_overflows_are_refused_by_every_fit(rng):
    # regression: weights of 1e308 (each finite, their sum infinite) warned "overflow
    # encountered in reduce / matmul / multiply" in most fits, and gradient boosting raised an
    # OverflowError from its exact sums
    from smml.ensemble import GradientBoostingClassifier, RandomForestRegressor
    from smml.linear import LinearRegression
    X, y = data(rng)
    yc = (y > np.median(y)).astype(int)
    big = np.full(len(y), 1e308)
    for est, target in ((GradientBoostingClassifier(n_estimators=2), yc), (RandomForestRegressor(n_estimators=2), y),
                        (LinearRegression(), y)):
        with pytest.raises(ValueError, match="sample_weight sums to more than float64"):
            est.fit(X, target, sample_weight=big)


def test_sample_weight_through_the_estimator(rng):
    X, y = data(rng)
    with pytest.raises(ValueError, match="sample_weight has 3 entries but X has 20 samples"):
        Tiny().fit(X, y, sample_weight=[1, 2, 3])


def test_encode_classes_with_strings():
    classes, enc = encode_classes(np.array(["spam", "ham", "spam", "eggs"]))
    assert classes.tolist() == ["eggs", "ham", "spam"]
    assert enc.tolist() == [2, 1, 2, 0] and enc.dtype == np.intp and enc.flags.c_contiguous
    assert (classes[enc] == ["spam", "ham", "spam", "eggs"]).all()
    X = np.array([[0.0], [0.1], [5.0], [5.1]])
    est = Tiny().fit(X, ["b", "b", "a", "a"])
    assert est.predict([[0.05], [4.9]]).tolist() == ["b", "a"]
    classes, enc = encode_classes([3, -1, 3])
    assert classes.tolist() == [-1, 3] and enc.tolist() == [1, 0, 1]


def test_constraint_descriptions():
    assert str(Interval(int, 1, None)) == "an integer in [1, inf]"
    assert str(Interval(float, 0, 1, "neither")) == "a real number in (0, 1)"
    assert str(Interval(float, None, 0, "left")) == "a real number in [-inf, 0)"
    assert not Interval(float, 0, 1, "right").is_satisfied_by(0)
    assert Interval(float, 0, 1, "right").is_satisfied_by(1)
    assert not Interval(float, 0, 1, "left").is_satisfied_by(1)
    assert not Interval(float, None, None).is_satisfied_by(np.inf)
    assert Options(None, "a").is_satisfied_by(None) and not Options(1).is_satisfied_by(True)


# ---- smml.cli and smml._tour ----------------------------------------------------

class Majority(ClassifierMixin, SmmlEstimator):
    _parameter_spec = {}

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, classifier=True)
        self.classes_, enc = encode_classes(y)
        self.label_ = self.classes_[np.argmax(np.bincount(enc))]
        return self

    def predict(self, X):
        X = validate_X(self, X)
        return np.full(X.shape[0], self.label_)


def test_cli_info(monkeypatch):
    # cli.info and _tour.run bind sys.stdout as a default at import time, so pass a buffer explicitly
    buf = io.StringIO()
    monkeypatch.setattr(cli, "info", functools.partial(cli.info, out=buf))
    assert cli.main(["info"]) == 0
    out = buf.getvalue()
    assert "OpenMP: on" in out
    assert "smml " in out and "threads: " in out and "BLAS" in out


def test_python_m_smml_info():
    res = subprocess.run([sys.executable, "-m", "smml", "info"], capture_output=True, text=True, check=True)
    assert "OpenMP: on" in res.stdout


def test_cli_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit):
        cli.main(["tour", "--delta", "2"])
    assert "--delta must lie in (0, 1)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main([])


def test_tour_run_with_given_entries():
    entries = [_tour.TourEntry("majority", Majority, ["iris", "breast_cancer"], reference=Majority),
               _tour.TourEntry("mean", TinyRegressor, ["diabetes"], scale=False)]
    out, progress = io.StringIO(), io.StringIO()
    rows = _tour.run(entries=entries, out=out, progress=progress, delta=0.1, verbose=1)
    assert [(r["estimator"], r["dataset"]) for r in rows] == [
        ("majority", "iris"), ("majority", "breast_cancer"), ("mean", "diabetes")]
    bar = progress.getvalue()          # a tqdm bar naming the entry being run
    assert "majority on iris" in bar and "mean on diabetes: 100%" in bar and "3/3" in bar
    # iris: 150 examples, three balanced classes; the stratified 70/30 split keeps them balanced
    X, y = _tour.load("iris")
    Xtr, Xte, ytr, yte = _tour.split("iris", X, y)
    label = np.bincount(ytr).argmax()
    r = rows[0]
    assert r["train_error"] == pytest.approx(np.mean(ytr != label))
    assert r["test_error"] == pytest.approx(np.mean(yte != label))
    assert r["interval"] == hoeffding_interval(r["test_error"], len(yte), 0.1)
    assert r["speedup"] is not None and r["loss"] == "zero-one"
    reg = rows[2]
    X, y = _tour.load("diabetes")
    Xtr, Xte, ytr, yte = _tour.split("diabetes", X, y)
    assert reg["interval"] is None and reg["loss"] == "square" and reg["speedup"] is None
    assert reg["test_error"] == pytest.approx(np.mean((yte - ytr.mean()) ** 2))
    table = out.getvalue()
    assert "majority" in table and "breast_cancer" in table and "90% Hoeffding" in table


def test_cli_tour_quick_uses_collected_entries(monkeypatch):
    entries = [_tour.TourEntry("majority-quick", Majority, ["wine"]),
               _tour.TourEntry("majority-slow", Majority, ["wine"], quick=False)]
    monkeypatch.setattr(_tour, "collect_entries", lambda: entries)
    out, progress, seen = io.StringIO(), io.StringIO(), {}
    real_run = _tour.run

    def run(**kw):
        seen.update(kw)
        return real_run(out=out, progress=progress, **kw)

    monkeypatch.setattr(_tour, "run", run)
    assert cli.main(["tour", "--quick", "--delta", "0.2"]) == 0
    assert seen == {"quick": True, "delta": 0.2, "verbose": "auto"}
    assert "majority-quick" in out.getvalue() and "majority-slow" not in out.getvalue()
    assert "80% Hoeffding" in out.getvalue()
    assert progress.getvalue() == ""       # not a terminal: no progress bar
    seen.clear()
    assert cli.main(["tour", "--quick", "--verbose"]) == 0
    assert seen["verbose"] == 1 and "majority-quick on wine: 100%" in progress.getvalue()


def test_encode_classes_rejects_incomparable_labels():
    from smml._validation import encode_classes

    with pytest.raises(ValueError, match="mutually comparable"):
        encode_classes(np.array(["a", "b", None], dtype=object))
    classes, enc = encode_classes(["b", "a", "b"])
    assert list(classes) == ["a", "b"] and list(enc) == [1, 0, 1]


def test_classifier_fit_rejects_incomparable_labels():
    from smml._validation import validate_X_y

    from sklearn.base import BaseEstimator

    class _Est(BaseEstimator):
        pass

    with pytest.raises(ValueError, match="mutually comparable"):
        validate_X_y(_Est(), np.zeros((3, 2)), np.array(["a", "b", None], dtype=object), classifier=True)


# ---- the predict-time fast path of validate_X --------------------------------

@pytest.mark.parametrize("dtype,policy", [(np.float64, "floating"), (np.float32, "floating"),
                                          (np.float64, "float64")])
def test_fast_path_returns_valid_arrays_unchanged(rng, dtype, policy):
    X = rng.standard_normal((20, 3))
    est = Tiny(dtype=policy).fit(X, (X[:, 0] > 0).astype(int))
    Xq = rng.standard_normal((4, 3)).astype(dtype)
    out = validate_X(est, Xq, dtype=policy)
    assert out is Xq                                  # no copy, no conversion
    np.testing.assert_array_equal(est.predict(Xq), est.predict(Xq.tolist()))


def test_fast_path_keeps_every_check(rng):
    X = rng.standard_normal((20, 3))
    est = Tiny().fit(X, (X[:, 0] > 0).astype(int))
    for bad, msg in [(np.array([[np.nan, 0.0, 1.0]]), "NaN"),
                     (np.array([[np.inf, 0.0, 1.0]]), "infinity"),
                     (np.array([[-np.inf, 0.0, 1.0]]), "infinity"),
                     (np.zeros((2, 4)), "features"),
                     (np.zeros((0, 3)), "0 sample")]:
        with pytest.raises(ValueError, match=msg):
            est.predict(bad)
    # finite values whose sum overflows are valid input, not an error
    huge = np.full((2, 3), 1e308)
    assert validate_X(est, huge) is huge
    # float32 is converted under the float64 policy; F order becomes C order
    est64 = Tiny(dtype="float64").fit(X, (X[:, 0] > 0).astype(int))
    assert validate_X(est64, X[:2].astype(np.float32), dtype="float64").dtype == np.float64
    F = np.asfortranarray(rng.standard_normal((5, 3)))
    out = validate_X(est, F)
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, F)


def test_fast_path_still_warns_about_missing_feature_names(rng):
    X = pd.DataFrame(rng.standard_normal((20, 3)), columns=["a", "b", "c"])
    est = Tiny().fit(X, (X["a"] > 0).astype(int))
    with pytest.warns(UserWarning, match="feature names"):
        est.predict(X.to_numpy())


def test_tour_registry_makes_fresh_estimators_of_the_named_family():
    from sklearn.base import is_classifier, is_clusterer, is_regressor
    names = [e.name for e in _tour.collect_entries()]
    assert len(names) == len(set(names))
    for e in _tour.collect_entries():
        a, b = e.make(), e.make()
        assert a is not b and type(a).__module__.startswith("smml.")
        assert type(a).__name__ == e.name.split("(")[0]
        for ds in e.datasets:
            assert ds in _tour.CLASSIFICATION + _tour.REGRESSION
            if e.clustering:
                assert is_clusterer(a), (e.name, ds)
            else:
                assert (is_regressor(a) if ds in _tour.REGRESSION else is_classifier(a)), (e.name, ds)
        if e.reference is not None:
            assert type(e.reference()).__module__.startswith("smml.reference")


def test_estimator_modules_do_not_import_the_tour():
    import subprocess
    import sys
    code = ("import sys, smml.neighbors, smml.tree, smml.linear, smml.ensemble, smml.cluster; "
            "sys.exit(int('smml._tour' in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_drop_zero_weight():
    from smml._validation import drop_zero_weight

    X = np.arange(12.0).reshape(6, 2)
    y = np.arange(6)
    w = np.array([1.0, 0.0, 2.0, 0.0, 0.5, 3.0])
    w2, X2, y2 = drop_zero_weight(w, X, y)
    assert np.array_equal(w2, [1.0, 2.0, 0.5, 3.0]) and np.array_equal(y2, [0, 2, 4, 5])
    assert np.array_equal(X2, X[[0, 2, 4, 5]]) and X2.flags.c_contiguous
    ones = np.ones(6)
    w3, X3, y3 = drop_zero_weight(ones, X, y)
    assert w3 is ones and X3 is X and y3 is y        # nothing to drop: no copy


def test_every_public_estimator_has_a_class_docstring():
    # A docstring built as '"""...""" + TEXT' in a class body is an expression, not a docstring:
    # __doc__ is then None and help() / the API pages show nothing (it happened to ERMClassifier).
    from smml._discovery import all_estimators

    missing = [name for name, c in all_estimators()
               if not (c.__doc__ and c.__doc__.strip() and c.__doc__ is not getattr(c.__mro__[1], "__doc__", None))]
    assert missing == []


def test_nan_and_string_errors_point_to_smml():
    # scikit-learn's NaN message recommends its HistGradientBoosting; smml's names its own
    # estimators that take NaN, and a string column says how to declare or encode it
    from smml.neighbors import KNNClassifier
    from smml.tree import TreeClassifier
    X = np.ones((4, 2))
    X[0, 0] = np.nan
    S = np.array([["a", 1], ["b", 2], ["a", 3], ["c", 1]], dtype=object)
    for est in (KNNClassifier(), TreeClassifier()):
        with pytest.raises(ValueError, match="contains NaN") as info:
            est.fit(X, [0, 1, 0, 1])
        assert "smml's GradientBoostingClassifier" in str(info.value)
        assert "HistGradientBoosting" not in str(info.value)
        fitted = type(est)().fit(np.ones((4, 2)), [0, 1, 0, 1])
        with pytest.raises(ValueError, match="smml's GradientBoostingClassifier"):
            fitted.predict(X)
    with pytest.raises(ValueError, match="categorical_features"):
        TreeClassifier().fit(S, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="OneHotEncoder"):
        KNNClassifier().fit(S, [0, 1, 0, 1])


def _misaligned(a):
    """A copy of ``a`` whose data start one byte past an aligned address (np.frombuffer at an
    odd offset): equal values, flags.aligned False."""
    a = np.ascontiguousarray(a)
    buf = np.zeros(a.nbytes + 1, np.uint8)
    out = np.frombuffer(buf.data, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def test_misaligned_inputs_are_copied_before_the_kernels():
    """The kernels load doubles at their alignment (a misaligned load is undefined behaviour,
    reported by the UBSan build of .ci/sanitize): validation hands them aligned copies, the
    results equal those on the aligned arrays."""
    from smml._validation import validate_X, validate_X_y, validate_sample_weight
    from smml.cluster import KMeans
    from smml.ensemble import GradientBoostingClassifier
    from smml.linear import RidgeRegression
    from smml.neighbors import KNNClassifier
    from smml.tree import TreeClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] > 0).astype(np.int64)
    sw = rng.uniform(0.5, 1.5, 60)
    Xm, swm = _misaligned(X), _misaligned(sw)
    est = KNNClassifier(n_neighbors=3).fit(X, y)
    assert validate_X(est, Xm).flags.aligned
    Xv, yv = validate_X_y(TreeClassifier(), Xm, _misaligned(y.astype(np.float64)), y_numeric=True)
    assert Xv.flags.aligned and yv.flags.aligned
    assert validate_sample_weight(swm, 60).flags.aligned
    for make in (lambda: KNNClassifier(n_neighbors=3), lambda: TreeClassifier(random_state=0),
                 lambda: GradientBoostingClassifier(n_estimators=3, random_state=0)):
        a, b = make().fit(X, y), make().fit(Xm, y)
        assert np.array_equal(a.predict(X), b.predict(Xm))
        assert np.array_equal(a.predict(X), a.predict(Xm))
    a = RidgeRegression(alpha=0.5).fit(X, X[:, 1], sample_weight=sw)
    b = RidgeRegression(alpha=0.5).fit(Xm, _misaligned(X[:, 1]), sample_weight=swm)
    assert np.array_equal(a.predict(X), b.predict(Xm))
    a, b = KMeans(n_clusters=3, random_state=0).fit(X), KMeans(n_clusters=3, random_state=0).fit(Xm)
    assert np.array_equal(a.labels_, b.labels_)


def test_revalidation_caches_only_unchanged_immutable_parameters():
    # smml.base._revalidate_params (predict time): an int parameter that is the same object is
    # not checked again; a new value is; a list (changeable in place) is checked every time
    from smml.base import SmmlEstimator
    from smml._validation import InstanceOf, Interval

    seen = []

    class Spy:
        def __init__(self, c):
            self.c = c

        def is_satisfied_by(self, v):
            seen.append(v)
            return self.c.is_satisfied_by(v)

        def __str__(self):
            return str(self.c)

    class Est(SmmlEstimator):
        _parameter_spec = {"a": Spy(Interval(int, 0, None)), "b": Spy(InstanceOf(list, type(None)))}

        def __init__(self, a=1, b=None):
            self.a, self.b = a, b

    e = Est(a=2)
    e._revalidate_params()
    e._revalidate_params()
    assert seen == [2, None]                          # the second call: cached
    e.set_params(a=-1)
    with pytest.raises(ValueError, match="parameter a"):
        e._revalidate_params()
    seen.clear()
    f = Est(a=2, b=[1])
    f._revalidate_params()
    f._revalidate_params()
    assert seen == [2, [1], 2, [1]]                   # a list: never cached
    f.set_params(b="not a list")
    with pytest.raises(ValueError, match="parameter b"):
        f._revalidate_params()


def _float32_models():
    from smml.kernels import KernelPegasos, KernelPerceptron, KernelRidge, KernelSVC
    from smml.linear import Perceptron
    from smml.neighbors import KNNClassifier
    from smml.neural import MLPClassifier, MLPRegressor
    return [KernelSVC(), KernelRidge(), KernelPerceptron(), KernelPegasos(), MLPClassifier(max_iter=3, random_state=0),
            MLPRegressor(max_iter=3, random_state=0), Perceptron(), KNNClassifier(n_neighbors=3)]


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("est", _float32_models(), ids=lambda e: type(e).__name__)
def test_float64_rows_that_overflow_a_float32_model_are_refused(rng, est):
    # regression: a model fitted in float32 cast float64 queries (and partial_fit chunks) of
    # 1e300 with "RuntimeWarning: overflow encountered in cast" and scored the infinite rows
    # (the kernels: the bias alone); now a ValueError, as for k-NN
    from smml.linear import Perceptron
    X = rng.standard_normal((40, 3)).astype(np.float32)
    y = X[:, 0] + 0.5 if type(est).__name__.endswith(("Ridge", "Regressor")) else (X[:, 0] > 0).astype(int)
    est.fit(X, y)
    huge = np.full((2, 3), 1e300)
    if isinstance(est, Perceptron):
        # the linear scores of float64 rows are computed in float64: finite here, no cast
        assert np.all(np.isfinite(est.decision_function(huge)))
    else:
        with pytest.raises(ValueError, match="overflows float32"):
            est.predict(huge)
    # float64 rows that fit float32 are scored as their float32 cast
    np.testing.assert_array_equal(est.predict(X[:5].astype(np.float64)), est.predict(X[:5]))
    if hasattr(est, "partial_fit"):
        with pytest.raises(ValueError, match="overflows float32"):
            est.partial_fit(huge, y[:2])
