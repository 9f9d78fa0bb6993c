"""Property-based tests (hypothesis) of every public estimator (issue 32, item 3).

The estimators are discovered (``smml._discovery.all_estimators``): a family
added later is covered without editing this file. Each is built with cheap
settings (``cheap``: those of ``CHEAP`` its signature has, e.g.
``n_estimators=5``, ``max_iter=20`` for the online learners, as in the scikit-learn check tests), so
an example runs in milliseconds.

Properties, on the data of ``tests/_strategies.py`` (1 row, 1 feature, more
features than rows, float32 and float64, duplicated rows, constant columns,
magnitudes from 0 and 5e-324 to 1e308, labels of any type):

1. ``test_valid_input``: finite input is fitted, or refused with a ValueError
   saying why (``REFUSALS``: one class, not separable, overflow / divergence,
   fewer samples than clusters); never another exception; ``fit`` does not
   write into X or y; the fitted model's outputs on its training rows are
   finite and well formed (labels of ``classes_``' dtype, probabilities in
   [0, 1] summing to 1). ``test_extreme_queries``: a model fitted on ordinary
   data, queried at extreme magnitudes, returns finite outputs or a ValueError
   saying the query overflows;
2. ``test_bad_input``: NaN / inf (where not accepted), a wrong width, an empty
   array, no features, 1-d or 3-d X, 2-d y, y of another length or missing, a
   string column, continuous class labels: a ValueError / TypeError whose
   message names the problem (``FIT_CASES``, ``PREDICT_CASES``); an
   estimator whose tags accept NaN fits and predicts finite values instead;
3. ``test_deterministic``: two fits with the same ``random_state`` predict the
   same bits;
4. ``test_n_jobs`` (and ``test_n_jobs_medium_size``, one 400-row fit each):
   ``n_jobs=1`` and ``n_jobs=2`` predict the same bits, fitted with 1 / 2
   threads and the 1-thread model predicting with 2. Small data never start a
   second thread (``smml._threads.threads_for``: one thread below twice the
   grain), so these run with every Python-level grain forced to 1
   (``forced_threads``); the grains inside the compiled kernels stay;
5. ``test_row_permutation`` (k-NN, k-means): permuting the training rows does
   not change the predictions (see the comment there for what is exact).

Every example is timed: one over ``HANG_SECONDS`` fails as a hang.

Bugs found are listed in ``KNOWN_BUGS`` (each with a minimal reproduction in
``test_known_bug``): the properties they break are marked
``xfail(strict=True)``, and explicit examples (``@example``) make sure the
normal run meets each one. When a bug is fixed, its entry goes.

Runs:

- normal: ``EXAMPLES`` (15) examples per estimator and property (8 for ``test_n_jobs``), a
  fixed seed (``derandomize``), no shrinking (the examples are small already);
- long: ``SMML_PROPERTY_EXAMPLES=N`` tries N per estimator and property, each
  run different, with shrinking (the known bugs' marks are then not strict);
- survey: ``SMML_PROPERTY_SURVEY=1`` counts a violated property instead of
  failing, so a long run counts every failing example (and keeps the first
  message of each kind) instead of stopping at the first; no xfail marks;
- ``SMML_PROPERTY_REPORT=path`` writes the per-estimator counts (examples,
  passed, refused, crash, unclear error, non-finite output, wrong output,
  hang; seconds: time in the estimators, slowest: the longest example) as JSON; a long or
  survey run also prints them (``-s``).

Hypothesis keeps no example database (nothing is written into the checkout).
"""
import collections
import contextlib
import json
import os
import re
import sys
import tempfile
import time
import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_clusterer, is_regressor
from sklearn.utils import get_tags

# hypothesis caches what it learns (and a cache of the constants in the code it tests) under
# ./.hypothesis unless told otherwise: not in the checkout (test_persist_fuzz does the same)
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "smml-hypothesis"))
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, event, example, given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import _strategies as S  # noqa: E402  (beside this file: tests/conftest.py puts tests/ on sys.path)

import smml._threads  # noqa: E402
from smml._discovery import all_estimators  # noqa: E402

LONG = int(os.environ.get("SMML_PROPERTY_EXAMPLES", "0") or 0)
EXAMPLES = LONG or 15
SURVEY = bool(os.environ.get("SMML_PROPERTY_SURVEY"))
REPORT = os.environ.get("SMML_PROPERTY_REPORT")
#: an example running longer than this is a hang (generous: the machine may be loaded)
HANG_SECONDS = 30.0

SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not LONG,
                    print_blob=True,
                    phases=[Phase.explicit, Phase.generate] + ([Phase.shrink, Phase.explain] if LONG else []),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


#: the thread property starts OpenMP teams on tiny work (forced_threads): on a loaded machine a
#: team costs milliseconds (libgomp's threads spin while they wait; OMP_WAIT_POLICY=passive in
#: the environment makes that property about 3x faster), so the normal run tries fewer examples
JOBS_SETTINGS = settings(SETTINGS, max_examples=LONG or 8)


def short(path):
    return path.rsplit(".", 1)[1]


ESTIMATORS = all_estimators()

#: cheap settings, applied to the parameters of these names an estimator has
CHEAP = {"n_estimators": 5, "hidden_layer_sizes": (8,), "n_clusters": 2}
#: ``max_iter`` means epochs, steps or solver iterations depending on the estimator: a cheap
#: value for those whose defaults are long passes (the others keep theirs)
CHEAP_MAX_ITER = {"MLPClassifier": 20, "MLPRegressor": 20, "Perceptron": 20, "LMSRegressor": 20,
                  "KernelPerceptron": 20, "OnlineGradientDescent": 2,
                  "OnlineGradientDescentRegressor": 2, "Pegasos": 1000, "KernelPegasos": 1000}
OUTPUT_METHODS = ("predict", "predict_proba", "decision_function", "transform")

#: why a fit on finite, valid input may be refused (a ValueError whose message says so)
REFUSALS = (r"at least 2 classes|only one class", r"not linearly separable", r"non-finite|overflow",
            r"larger than the number of samples", r"rescale")
#: why a finite query may be refused
QUERY_REFUSALS = (r"overflow", r"rescale", r"too large", r"non-finite", r"infinity")


# ---- the bugs found (minimal reproductions: test_known_bug) ------------------------------------

#: id -> (what is wrong, {(property, estimator) it breaks})
KNOWN_BUGS = {
}


def _marks(prop, name):
    if SURVEY:
        return ()
    reasons = [f"bug '{bug}': {text}" for bug, (text, where) in KNOWN_BUGS.items() if (prop, name) in where]
    if not reasons:
        return ()
    return (pytest.mark.xfail(strict=not LONG, reason="; ".join(reasons)),)


def cases(prop, pairs):
    """pytest params (path, cls) for ``prop``, xfail where a known bug breaks it."""
    return [pytest.param(path, cls, id=short(path), marks=_marks(prop, short(path))) for path, cls in pairs]


# ---- helpers -----------------------------------------------------------------------------------

def params_of(cls):
    return cls().get_params(deep=False)


def cheap(cls, **extra):
    """cls with the ``CHEAP`` settings it takes (random_state=0, if it has one), then ``extra``."""
    have = params_of(cls)
    p = {k: v for k, v in CHEAP.items() if k in have}
    if cls.__name__ in CHEAP_MAX_ITER and "max_iter" in have:
        p["max_iter"] = CHEAP_MAX_ITER[cls.__name__]
    if "random_state" in have:
        p["random_state"] = 0
    p.update({k: v for k, v in extra.items() if k in have})
    return cls(**p)


def randomised(cls, **extra):
    """cheap(cls) with its random paths on (shuffle=True where there is a shuffle)."""
    if "shuffle" in params_of(cls):
        extra.setdefault("shuffle", True)
    return cheap(cls, **extra)


def supervised(est):
    return is_classifier(est) or is_regressor(est) or get_tags(est).target_tags.required


def target(est, labels, targets):
    """The y est takes: class labels (classifiers), targets (regressors) or None."""
    return labels if is_classifier(est) else targets if supervised(est) else None


def _event(text):
    """hypothesis.event, also callable outside a test (fitted_base's first fit may be)."""
    with contextlib.suppress(hypothesis.errors.InvalidArgument):
        event(text)


def fit(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y) if supervised(est) else est.fit(X)
    for w in caught:
        _event(f"warning: {w.category.__name__}")
    return est


def outputs(est, X):
    """{method: ndarray} of every output method the fitted estimator has."""
    out = {}
    for name in OUTPUT_METHODS:
        try:
            method = getattr(est, name)
        except AttributeError:             # available_if: not for this estimator / loss
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[name] = np.asarray(method(X))
    return out


def same_bits(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        if a[k].dtype == object:
            assert a[k].tolist() == b[k].tolist(), k
        else:
            assert a[k].tobytes() == b[k].tobytes(), (k, a[k], b[k])


def refused_clearly(exc, reasons=REFUSALS):
    return isinstance(exc, ValueError) and any(re.search(r, str(exc), re.I) for r in reasons)


def fit_or_refusal(est, X, y):
    """(fitted est, None), or (None, (type, message)) of a clear refusal; else a Violation."""
    try:
        return fit(est, X, y), None
    except (ValueError, TypeError) as exc:
        if refused_clearly(exc):
            return None, (type(exc), str(exc))
        raise Violation("unclear error", f"{type(exc).__name__} on valid input: {exc}") from exc


def check_finite(out, what="finite input"):
    for name, v in out.items():
        if v.dtype.kind in "fc" and not np.all(np.isfinite(v)):
            raise Violation("non-finite output", f"{name} returned non-finite values from {what}: {v}")


def check_outputs(est, X, y, out):
    """Outputs of a fitted model on X (finite input): finite, well formed."""
    check_finite(out)
    n = X.shape[0]
    pred = out["predict"]
    assert pred.shape[0] == n
    if is_classifier(est):
        assert pred.shape == (n,)
        assert np.array_equal(est.classes_, np.unique(y)), (est.classes_, np.unique(y))
        assert pred.dtype == est.classes_.dtype, ("predict's dtype is not classes_'", pred.dtype,
                                                  est.classes_.dtype)
        assert np.all(np.isin(pred, est.classes_)), pred
        if "predict_proba" in out:
            P = out["predict_proba"]
            assert P.shape == (n, len(est.classes_))
            assert np.all((P >= 0) & (P <= 1)) and np.allclose(P.sum(axis=1), 1.0)
    elif is_regressor(est):
        assert pred.dtype.kind == "f" and pred.shape == np.shape(y)
    elif is_clusterer(est):
        assert pred.shape == (n,) and pred.dtype.kind in "iu"
        assert np.all((pred >= 0) & (pred < est.n_clusters))


# ---- outcome counts (the long run's report) ----------------------------------------------------

STATS = collections.defaultdict(collections.Counter)
TIMES = collections.defaultdict(float)
SLOWEST = collections.defaultdict(float)
FIRST = {}          # (prop, name, outcome) -> the first failing example's message (survey mode)


class Violation(AssertionError):
    """A property failed; ``kind`` is what the report counts ("unclear error", ...)."""

    def __init__(self, kind, message):
        super().__init__(f"{kind}: {message}")
        self.kind = kind


@contextlib.contextmanager
def counted(prop, name):
    """Count the example's outcome for (prop, name) (the test may set ``rec["outcome"]``, e.g.
    "refused"); an example longer than HANG_SECONDS fails as a hang. In survey mode a failure
    is counted and the test goes on: keep the ``with`` block last in the test."""
    t0 = time.perf_counter()
    rec = {"outcome": "passed"}
    failure = None
    try:
        yield rec
    except Violation as exc:
        rec["outcome"], failure = exc.kind, exc
    except AssertionError as exc:
        rec["outcome"], failure = "wrong output", exc
    except Exception as exc:  # noqa: BLE001 - counted, then raised (or kept in survey mode)
        rec["outcome"], failure = "crash", exc
    dt = time.perf_counter() - t0
    TIMES[prop, name] += dt
    SLOWEST[prop, name] = max(SLOWEST[prop, name], dt)
    STATS[prop, name]["examples"] += 1
    STATS[prop, name][rec["outcome"]] += 1
    if dt > HANG_SECONDS:
        STATS[prop, name]["hang"] += 1
        failure = failure or Violation("hang", f"{name}: one example took {dt:.1f} s")
    if failure is not None:
        if not SURVEY:
            raise failure
        FIRST.setdefault((prop, name, rec["outcome"]), f"{type(failure).__name__}: {str(failure)[:300]}")


@pytest.fixture(scope="module", autouse=True)
def report_outcomes():
    yield
    if not STATS:
        return
    rows = {f"{p}/{n}": dict(STATS[p, n], seconds=round(TIMES[p, n], 3), slowest=round(SLOWEST[p, n], 3))
            for p, n in sorted(STATS)}
    for (p, n, outcome), msg in sorted(FIRST.items()):
        rows[f"{p}/{n}"].setdefault("first", {})[outcome] = msg
    if REPORT:
        with open(REPORT, "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
    if LONG or SURVEY:
        print(f"\nproperty tests: {sum(c['examples'] for c in STATS.values())} examples")
        for key, row in rows.items():
            row = {k: v for k, v in row.items() if k != "first"}
            print(f"  {key:55s} {json.dumps(row, sort_keys=True)}")


# ---- data --------------------------------------------------------------------------------------

@st.composite
def problems(draw, scales=None, class_counts=(1, 2, 2, 2, 2), queries=False):
    """(X, labels, targets, Q): X from S.matrices, class labels with a number of classes from
    ``class_counts`` (1: any), regression targets, and (``queries``) X followed by fresh rows
    of the same width and dtype (else Q is X)."""
    X, info = draw(S.matrices(scales=scales))
    note(f"X {X.shape} {info}")
    n = X.shape[0]
    labels = draw(S.labels(n, min_classes=draw(st.sampled_from(class_counts))))
    targets = draw(S.targets(n, scales=S.SCALES64 if scales is None else scales))
    Q = X
    if queries:
        Q = np.concatenate([X, draw(S.matrices(n=draw(st.integers(1, 8)), d=X.shape[1], dtype=X.dtype,
                                               scales=scales))[0]])
    return X, labels, targets, Q


def _problem(X, labels, targets):
    X = np.asarray(X, dtype=float)
    return X, np.asarray(labels), np.asarray(targets, dtype=float), X


#: explicit examples, run first in every run: the known bugs' reproductions
THREE_OBJECT_LABELS = _problem([[0.1], [-0.1], [0.6]], np.array(["a", "b", "spam"], dtype=object), [0.0, 1.0, 2.0])
LARGE_ROWS = _problem([[1e299], [-1e299]], [False, True], [1.0, -1.0])
LARGE_TARGETS = _problem([[0.0], [0.0], [1.0], [2.0]], [0, 0, 1, 1], [1e308, 1e308, -1e308, 1e308])
OVERFLOWING_FIT = _problem([[-1.0], [-2.0]], [0, 1], [0.0, -1e308])
OVERFLOWING_POLY = _problem([[2.0], [-1.0]], [0, 1], [1.5e308, -1.5e308])
ERM_TARGETS = _problem([[0.0], [1.0]], [0, 1], [1e300, -1e300])


def base_data(n=40, d=4, seed=0):
    """Ordinary data every estimator fits: binary labels of a hyperplane with a margin (the
    hard-margin learners need separable data), a linear regression target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(5 * n, d))
    s = X @ np.linspace(1.0, -1.5, d)
    keep = np.abs(s) > 0.5
    X, s = X[keep][:n], s[keep][:n]
    return np.ascontiguousarray(X), np.where(s > 0, 1, 0), s + 0.1 * rng.normal(size=len(s))


_FITTED = {}


def fitted_base(cls):
    """cheap(cls) fitted on base_data() (cached: the predict-time properties share it)."""
    if cls not in _FITTED:
        X, y_clf, y_reg = base_data()
        est = cheap(cls)
        _FITTED[cls] = fit(est, X, target(est, y_clf, y_reg))
    return _FITTED[cls]


# ---- 1. valid input: fitted or refused clearly, outputs finite ---------------------------------

@pytest.mark.parametrize("path, cls", cases("valid_input", ESTIMATORS))
@SETTINGS
@given(problem=problems())
@example(problem=THREE_OBJECT_LABELS)
@example(problem=LARGE_ROWS)
@example(problem=LARGE_TARGETS)
@example(problem=OVERFLOWING_FIT)
@example(problem=OVERFLOWING_POLY)
@example(problem=ERM_TARGETS)
def test_valid_input(path, cls, problem):
    est = cheap(cls)
    X, labels, targets, _ = problem
    y = target(est, labels, targets)
    X0, y0 = X.copy(), None if y is None else y.copy()
    with counted("valid_input", short(path)) as rec:
        fitted, refusal = fit_or_refusal(est, X, y)
        if refusal:
            rec["outcome"] = "refused"
            event(f"refused: {refusal[0].__name__}")
            return
        event("fitted")
        assert np.array_equal(X, X0), "fit wrote into X"
        if y is not None:
            assert np.array_equal(y, y0), "fit wrote into y"
        check_outputs(fitted, X, y, outputs(fitted, X))


#: every sign pattern of 4 features, one per row: whatever the signs of a linear model's
#: weights, one row lines up with them (base_data has 4 features)
SIGN_PATTERNS = np.array([[1.0 if (i >> j) & 1 else -1.0 for j in range(4)] for i in range(16)])


@pytest.mark.parametrize("path, cls", cases("extreme_queries", ESTIMATORS))
@SETTINGS
@given(Q=S.extreme_rows(4))
@example(Q=1e308 * SIGN_PATTERNS)
@example(Q=(3e38 * SIGN_PATTERNS).astype(np.float32))
def test_extreme_queries(path, cls, Q):
    """A model fitted on ordinary data (base_data), queried at extreme magnitudes: finite
    outputs, or a ValueError saying the query overflows."""
    est = fitted_base(cls)
    assert est.n_features_in_ == Q.shape[1] == 4
    with counted("extreme_queries", short(path)) as rec:
        try:
            out = outputs(est, Q)
        except (ValueError, TypeError) as exc:
            if refused_clearly(exc, QUERY_REFUSALS):
                rec["outcome"] = "refused"
                return
            raise Violation("unclear error", f"{type(exc).__name__} on a finite query: {exc}") from exc
        check_finite(out)


# ---- 2. bad input: ValueError / TypeError naming the problem -----------------------------------

NAN, INF, WIDTH, EMPTY = r"NaN", r"infinity", r"features", r"0 sample"
TWO_D = r"Expected 2D array|2D|2-d"


def _poke(draw, X, value):
    X = X.copy()
    X[draw(st.integers(0, X.shape[0] - 1)), draw(st.integers(0, X.shape[1] - 1))] = value
    return X


def _strings(X):
    S_ = X.astype(object)
    S_[:, 0] = np.where(X[:, 0] > 0, "up", "down")
    return S_


def _always(est):
    return True


#: name -> (applies to est, make(draw, X, y) -> (X, y) to fit, expected message)
FIT_CASES = {
    "NaN in X": (_always, lambda dr, X, y: (_poke(dr, X, np.nan), y), NAN),
    "+inf in X": (_always, lambda dr, X, y: (_poke(dr, X, np.inf), y), INF),
    "-inf in X": (_always, lambda dr, X, y: (_poke(dr, X, -np.inf), y), INF),
    "empty X": (_always, lambda dr, X, y: (X[:0], None if y is None else y[:0]), EMPTY),
    "no features": (_always, lambda dr, X, y: (X[:, :0], y), r"0 feature"),
    "1-d X": (_always, lambda dr, X, y: (X[:, 0], y), TWO_D),
    "3-d X": (_always, lambda dr, X, y: (X[:, :, None], y), r"dim 3|3D|2D"),
    "string column": (_always, lambda dr, X, y: (_strings(X), y), r"string|could not convert"),
    "NaN in y": (supervised, lambda dr, X, y: (X, _poke(dr, y.astype(float)[:, None], np.nan)[:, 0]), NAN),
    "inf in y": (supervised, lambda dr, X, y: (X, _poke(dr, y.astype(float)[:, None], np.inf)[:, 0]), INF),
    "2-d y": (lambda e: supervised(e) and not get_tags(e).target_tags.multi_output,
              lambda dr, X, y: (X, np.column_stack([y, y[::-1]])), r"1d|1-d|column|y should be"),
    "y of another length": (supervised, lambda dr, X, y: (X, y[:-1]), r"inconsistent numbers of samples"),
    "y is None": (supervised, lambda dr, X, y: (X, None), r"requires y|y to be passed|y is None"),
    "continuous class labels": (is_classifier, lambda dr, X, y: (X, y + 0.5), r"Unknown label type|continuous"),
}

#: name -> (make(draw, X) -> a query for the fitted model, expected message)
PREDICT_CASES = {
    "NaN in X": (lambda dr, X: _poke(dr, X, np.nan), NAN),
    "inf in X": (lambda dr, X: _poke(dr, X, dr(st.sampled_from([np.inf, -np.inf]))), INF),
    "wrong width": (lambda dr, X: np.ones((X.shape[0], dr(st.sampled_from(
        [w for w in range(1, X.shape[1] + 4) if w != X.shape[1]])))), WIDTH),
    "empty X": (lambda dr, X: X[:0], EMPTY),
    "no features": (lambda dr, X: X[:, :0], r"0 feature|features"),
    "1-d X": (lambda dr, X: X[0], TWO_D),
    "string column": (lambda dr, X: _strings(X), r"string|could not convert"),
}


@pytest.mark.parametrize("path, cls", cases("bad_input", ESTIMATORS))
@SETTINGS
@given(data=st.data())
def test_bad_input(path, cls, data):
    est = cheap(cls)
    allow_nan = get_tags(est).input_tags.allow_nan
    at_fit = data.draw(st.booleans(), label="at fit")
    dtype = data.draw(st.sampled_from([np.float64, np.float32]), label="dtype")
    X, y_clf, y_reg = base_data(n=data.draw(st.integers(8, 30), label="rows"),
                                d=data.draw(st.integers(1, 5), label="features"))
    X = X.astype(dtype)
    y = target(est, y_clf, y_reg)
    if at_fit:
        case = data.draw(st.sampled_from([c for c, (ok, _, _) in FIT_CASES.items() if ok(est)]), label="case")
        _, make, expected = FIT_CASES[case]
        Xb, yb = make(data.draw, X, y)
        call = (lambda: est.fit(Xb, yb)) if supervised(est) else (lambda: est.fit(Xb))  # noqa: E731
    else:
        case = data.draw(st.sampled_from(sorted(PREDICT_CASES)), label="case")
        make, expected = PREDICT_CASES[case]
        fitted = fit(est, X, y)
        Xb = make(data.draw, X)
        method = data.draw(st.sampled_from([m for m in OUTPUT_METHODS if hasattr(fitted, m)]), label="method")
        call = lambda: getattr(fitted, method)(Xb)  # noqa: E731
    nan_ok = allow_nan and case == "NaN in X"        # the estimator takes NaN: no error, finite outputs
    event(f"{'fit' if at_fit else 'predict'}: {case}")
    with counted("bad_input", short(path)) as rec:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = call()
        except Exception as exc:  # noqa: BLE001 - the property is about which exceptions
            kind = "unclear error" if isinstance(exc, (ValueError, TypeError)) else "crash"
            if nan_ok:
                raise Violation(kind, f"{short(path)} takes NaN (its tags say so) but {case} raised "
                                      f"{type(exc).__name__}: {exc}") from exc
            if not (isinstance(exc, (ValueError, TypeError)) and re.search(expected, str(exc), re.I)):
                raise Violation(kind, f"{case}: {type(exc).__name__} {exc!s:.300} (expected a "
                                      f"ValueError/TypeError matching {expected!r})") from exc
            rec["outcome"] = "refused"
            return
        if not nan_ok:
            raise Violation("accepted bad input", f"{case} ({'fit' if at_fit else 'predict'}) was accepted")
        check_finite(outputs(result, Xb) if at_fit else {method: np.asarray(result)}, "data with NaN")


# ---- 3. determinism: the same random_state, the same bits --------------------------------------

@pytest.mark.parametrize("path, cls", cases("deterministic", ESTIMATORS))
@SETTINGS
@given(problem=problems(scales=S.ORDINARY, class_counts=(2,), queries=True),
       random_state=st.integers(0, 2 ** 32 - 1))
@example(problem=THREE_OBJECT_LABELS, random_state=0)
def test_deterministic(path, cls, problem, random_state):
    proto = randomised(cls)
    X, labels, targets, Q = problem
    y = target(proto, labels, targets)
    if "random_state" in proto.get_params():
        proto.set_params(random_state=random_state)
    with counted("deterministic", short(path)) as rec:
        a, ra = fit_or_refusal(clone(proto), X, y)
        b, rb = fit_or_refusal(clone(proto), X, y)
        if ra or rb:
            assert ra == rb, f"one fit refused, the other not: {ra} / {rb}"
            rec["outcome"] = "refused"
            return
        same_bits(outputs(a, Q), outputs(b, Q))


# ---- 4. threads: n_jobs=1 and n_jobs=2 give the same bits --------------------------------------

@contextlib.contextmanager
def forced_threads():
    """Every smml module's ``threads_for`` with grain 1, and its integer ``*GRAIN`` constants set
    to 1: work of 2 units or more is then split between the requested threads (the compiled
    kernels' own grains stay). Restored on exit."""
    real = smml._threads.threads_for

    def threads_for(n_threads, work, grain):
        return real(n_threads, work, 1)

    saved = []
    for name, mod in list(sys.modules.items()):
        if not name.startswith("smml.") or mod is None or name == "smml._threads":
            continue
        for attr, value in list(vars(mod).items()):
            if value is real or (attr.endswith("GRAIN") and type(value) is int):
                saved.append((mod, attr, value))
                setattr(mod, attr, threads_for if value is real else 1)
    try:
        yield
    finally:
        for mod, attr, value in saved:
            setattr(mod, attr, value)


JOBS_ESTIMATORS = [(p, c) for p, c in ESTIMATORS if "n_jobs" in params_of(c)]


def _one_and_two_threads(proto, X, y, Q):
    with forced_threads():
        one, r1 = fit_or_refusal(clone(proto).set_params(n_jobs=1), X, y)
        two, r2 = fit_or_refusal(clone(proto).set_params(n_jobs=2), X, y)
        if r1 or r2:
            assert r1 == r2, f"n_jobs=1 / 2: one fit refused, the other not: {r1} / {r2}"
            return "refused"
        o1 = outputs(one, Q)
        same_bits(o1, outputs(two, Q))                         # fitted with 1 / 2 threads
        same_bits(o1, outputs(one.set_params(n_jobs=2), Q))    # the 1-thread model predicting with 2
    return "passed"


@pytest.mark.parametrize("path, cls", cases("n_jobs", JOBS_ESTIMATORS))
@JOBS_SETTINGS
@given(problem=problems(scales=S.ORDINARY, class_counts=(2,), queries=True))
@example(problem=THREE_OBJECT_LABELS)
def test_n_jobs(path, cls, problem):
    proto = randomised(cls)
    X, labels, targets, Q = problem
    with counted("n_jobs", short(path)) as rec:
        rec["outcome"] = _one_and_two_threads(proto, X, target(proto, labels, targets), Q)


@pytest.mark.parametrize("path, cls", cases("n_jobs_medium_size", JOBS_ESTIMATORS))
def test_n_jobs_medium_size(path, cls):
    """One larger fit (400 x 8) per estimator, grains forced as above: blocks and chunks of
    hundreds of rows, where the examples of test_n_jobs have a handful."""
    X, y_clf, y_reg = base_data(n=400, d=8, seed=1)
    proto = randomised(cls)
    Q = np.concatenate([X, np.random.default_rng(2).normal(size=(200, 8))])
    assert _one_and_two_threads(proto, X, target(proto, y_clf, y_reg), Q) == "passed"


# ---- 5. row order: k-NN and k-means ------------------------------------------------------------
# The notes' tie rules are defined on exact distances and row indices. k-NN takes every point
# tied with the k-th (smml.neighbors' docstring: "the result never depends on the order of the
# training rows"), but a regression average sums the taken labels in some order, and k-means
# draws its initial centroids by row index and sums each centroid in row order. So the strict
# property runs on continuous (Gaussian) data, where no two distances are equal, k-means starts
# from given centroids (init=array; the labels are then exact, the centroids equal to rounding);
# test_row_permutation_ties checks k-NN's tie rule on integer data (duplicated rows, equal
# distances): exact for the classifier, equal to rounding for the regressor.

KNN_PARAMS = st.fixed_dictionaries({"n_neighbors": st.integers(1, 5), "weights": st.sampled_from(["uniform", "distance"]),
                                    "algorithm": st.sampled_from(["auto", "brute", "tree"]),
                                    "metric": st.sampled_from(["euclidean", "manhattan"])})
PERMUTED = [(p, c) for p, c in ESTIMATORS if p.startswith(("smml.neighbors.", "smml.cluster."))]
KNN = [(p, c) for p, c in PERMUTED if p.startswith("smml.neighbors.")]


def _permuted_fits(cls, params, X, y, perm, Q):
    a = fit(cls(**params), X, y)
    b = fit(cls(**params), X[perm], None if y is None else y[perm])
    return a, b, outputs(a, Q), outputs(b, Q)


@pytest.mark.parametrize("path, cls", cases("row_permutation", PERMUTED))
@SETTINGS
@given(data=st.data())
def test_row_permutation(path, cls, data):
    X, _ = data.draw(S.continuous(min_rows=2), label="X")
    n, d = X.shape
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    Q = np.concatenate([X, rng.normal(size=(5, d))])
    perm = rng.permutation(n)
    clusterer = is_clusterer(cls())
    if clusterer:
        k = data.draw(st.integers(1, min(3, n)), label="k")
        params, y = dict(n_clusters=k, init=X[rng.choice(n, k, replace=False)], n_init=1), None
    else:
        params = data.draw(KNN_PARAMS, label="params")
        params["n_neighbors"] = min(params["n_neighbors"], n)
        y = rng.integers(0, 3, size=n) if is_classifier(cls()) else rng.normal(size=n)
    with counted("row_permutation", short(path)):
        a, b, oa, ob = _permuted_fits(cls, params, X, y, perm, Q)
        if clusterer:
            assert np.array_equal(oa["predict"], ob["predict"])
            assert np.array_equal(a.labels_[perm], b.labels_)
            np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(oa["transform"], ob["transform"], rtol=1e-12, atol=1e-14)
        else:
            same_bits(oa, ob)


@pytest.mark.parametrize("path, cls", cases("row_permutation_ties", KNN))
@SETTINGS
@given(data=st.data())
def test_row_permutation_ties(path, cls, data):
    n = data.draw(st.integers(2, S.MAX_ROWS), label="n")
    d = data.draw(st.integers(1, 3), label="d")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    Q = np.concatenate([X, rng.integers(-2, 3, size=(5, d)).astype(float)])
    perm = rng.permutation(n)
    params = data.draw(KNN_PARAMS, label="params")
    params["n_neighbors"] = min(params["n_neighbors"], n)
    classifier = is_classifier(cls())
    y = rng.integers(0, 3, size=n) if classifier else rng.normal(size=n)
    with counted("row_permutation_ties", short(path)):
        a, b, oa, ob = _permuted_fits(cls, params, X, y, perm, Q)
        if classifier:
            same_bits(oa, ob)
        else:
            for k in oa:
                np.testing.assert_allclose(oa[k], ob[k], rtol=1e-12, atol=1e-15, err_msg=k)


# ---- the known bugs, one minimal reproduction each ---------------------------------------------

def _repro_object_labels_crash():
    from smml.linear import HardMarginSVM, LinearProgramClassifier
    X = [[0.1], [-0.1], [0.6]]
    y = np.array(["a", "b", "spam"], dtype=object)     # the same labels as str ('<U4') work
    for est in (HardMarginSVM(), LinearProgramClassifier()):
        with pytest.raises(ValueError, match="not linearly separable"):
            est.fit(X, y)


def _repro_decision_overflow_after_fit():
    """Fixed: Perceptron / Pegasos fitted on data of magnitude 1e299 returned +-inf from
    decision_function on their own training rows: now the fit refuses (rescale)."""
    from smml.linear import Pegasos, Perceptron
    for est in (Perceptron(), Pegasos(random_state=0)):
        with pytest.raises(ValueError, match="overflow float64 on the training rows.*rescale"):
            est.fit([[1e299], [-1e299]], [0, 1])
    with pytest.raises(ValueError, match="overflow float32 on the training rows"):     # the model's dtype
        Perceptron().fit(np.array([[1e29], [-1e29]], dtype=np.float32), [0, 1])
    est = Perceptron().fit([[1e150], [-1e150]], [0, 1])          # large, but its scores fit
    assert np.all(np.isfinite(est.decision_function([[1e150], [-1e150]])))


def _repro_erm_overflow_message():
    from smml.erm import ERMRegressor
    with pytest.raises(ValueError, match="overflow|rescale"):
        ERMRegressor().fit([[0.0], [1.0]], [1e300, -1e300])


def _repro_erm_predict_dtype():
    from smml.erm import ERMClassifier
    est = ERMClassifier().fit([[0.0], [1.0], [2.0]], np.array(["a", "b", "a"], dtype=object))
    assert est.predict([[0.0]]).dtype == est.classes_.dtype          # '<U1' != object


def _repro_large_targets_nonfinite():
    """Fixed: regressors fitted on finite targets near the float64 limit predicted NaN / +-inf
    on their training rows. The forests' and k-NN's means are now computed in scaled
    arithmetic where the plain sum overflows (the exact mean's bits); least squares refuses
    a fit whose scores overflow; boosting refuses such targets (its gains would overflow)."""
    from smml.ensemble import BaggingRegressor, GradientBoostingRegressor, RandomForestRegressor
    from smml.linear import LinearRegression, PolynomialRegression
    from smml.neighbors import KNNRegressor
    X, y = np.array([[0.0], [0.0], [1.0], [2.0]]), np.array([1e308, 1e308, -1e308, 1e308])
    for est in (RandomForestRegressor(n_estimators=5, random_state=0),
                BaggingRegressor(n_estimators=5, random_state=0)):
        got = est.fit(X, y).predict(X)                            # was +-inf
        want = np.mean([m.predict(X) / 8 for m in est.estimators_], axis=0) * 8
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(KNNRegressor(n_neighbors=2).fit(X, y).predict(X[:1]), [1e308])   # was inf
    got = KNNRegressor(n_neighbors=4).fit(X, y).predict(X[:1])
    np.testing.assert_array_equal(got, [np.mean(y / 8) * 8])
    w = KNNRegressor(n_neighbors=2, weights="distance").fit(X, y).predict([[0.25]])
    np.testing.assert_array_equal(w, [1e308])
    for est, Xt, yt in ((LinearRegression(), [[-1.0], [-2.0]], [0.0, -1e308]),     # predicted -inf
                        (PolynomialRegression(), [[2.0], [-1.0]], [1.5e308, -1.5e308])):   # inf
        with pytest.raises(ValueError, match=f"^{type(est).__name__}: .*overflow.*rescale"):
            est.fit(Xt, yt)
    with pytest.raises(ValueError, match="rescale y"):           # predicted NaN
        GradientBoostingRegressor(n_estimators=5).fit(X, y)


def _repro_extreme_queries():
    """Fixed: finite rows of magnitude 1e308 (3e38 in float32) used to give +-inf / NaN outputs
    from every linear model, the MLPs and KMeans.transform (float32): now a ValueError naming the
    overflow, or (KMeans.transform) the float64 distances."""
    from smml.cluster import KMeans
    from smml.linear import LogisticRegression
    from smml.neural import MLPClassifier, MLPRegressor
    X, y, _ = base_data()
    Q = 1e308 * SIGN_PATTERNS                          # one row lines up with the weights' signs
    for est, method in ((LogisticRegression(), "predict_proba"), (LogisticRegression(), "predict"),
                        (MLPClassifier(hidden_layer_sizes=(8,), max_iter=20, random_state=0), "predict_proba"),
                        (MLPRegressor(hidden_layer_sizes=(8,), max_iter=20, random_state=0), "predict")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        with pytest.raises(ValueError, match=f"^{type(est).__name__}: .* overflows float64 on [1-9][0-9]* of these 16 rows"):
            getattr(est, method)(Q)                     # was [[nan, nan]] / a class from a NaN score / inf
    km = KMeans(n_clusters=2, random_state=0).fit(X.astype(np.float32))
    D = km.transform(np.full((1, 4), 3e38, dtype=np.float32))
    assert np.all(np.isfinite(D)) and D.dtype == np.float64     # was inf in float32


def _repro_gb_large_targets_constant():
    """Fixed: targets of magnitude 1e154 learned nothing (the gains overflowed): now a clear
    refusal; targets as large as the gains allow still fit like the small ones."""
    from smml.ensemble import GradientBoostingRegressor
    X, y = np.arange(6.0).reshape(-1, 1), np.array([1.0, 2.0, 1.0, 2.0, 5.0, 6.0])
    small = GradientBoostingRegressor(n_estimators=5).fit(X, y).predict(X)
    with pytest.raises(ValueError, match="overflow float64; rescale y"):
        GradientBoostingRegressor(n_estimators=5).fit(X, y * 1e154)  # was 2.8333 (the mean) everywhere
    large = GradientBoostingRegressor(n_estimators=5).fit(X, y * 2.0 ** 500).predict(X) / 2.0 ** 500
    np.testing.assert_allclose(large, small, rtol=1e-12)


def _repro_poly_message_names_linear():
    from smml.linear import PolynomialRegression
    with pytest.raises(ValueError, match="^PolynomialRegression"):
        PolynomialRegression().fit([[0.0], [1.0], [2.0]], [1e308, -1e308, 1e308])


# bugs fixed since: their reproductions are regression tests
FIXED = {"object-labels-crash": _repro_object_labels_crash,
         "decision-overflow-after-fit": _repro_decision_overflow_after_fit,
         "large-targets-nonfinite": _repro_large_targets_nonfinite,
         "extreme-queries": _repro_extreme_queries,
         "erm-overflow-message": _repro_erm_overflow_message,
         "erm-predict-dtype": _repro_erm_predict_dtype,
         "gb-large-targets-constant": _repro_gb_large_targets_constant,
         "poly-message-names-linear": _repro_poly_message_names_linear}

REPRODUCTIONS = {}


@pytest.mark.parametrize("bug", [pytest.param(b, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[b][0]))
                                 for b in REPRODUCTIONS])
def test_known_bug(bug):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        REPRODUCTIONS[bug]()


def test_every_known_bug_has_a_reproduction():
    assert sorted(REPRODUCTIONS) == sorted(KNOWN_BUGS)


@pytest.mark.parametrize("bug", sorted(FIXED))
def test_fixed_bug_stays_fixed(bug):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        FIXED[bug]()
