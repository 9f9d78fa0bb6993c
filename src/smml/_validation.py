"""The one input-validation path every smml estimator goes through.

Built on scikit-learn's ``validate_data`` (plumbing only), so numpy arrays,
lists and pandas DataFrames are accepted, ``n_features_in_`` and
``feature_names_in_`` are set and checked, and bad input (NaN/inf, empty
input, wrong dimensionality, mismatched lengths) is rejected with a
``ValueError`` that names the problem before any kernel runs.

dtype policy: with ``dtype="floating"`` float32 input stays float32 (for
kernels that have a float32 path) and everything else becomes float64; with
``dtype="float64"`` everything becomes float64. Arrays come out C-contiguous;
they may be read-only views of the caller's data, so kernels take ``const``
memoryviews and never write into X.
"""
import numbers

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from smml._random import check_random_state

__all__ = [
    "validate_X", "validate_X_y", "validate_sample_weight", "drop_zero_weight", "encode_classes",
    "check_is_fitted", "check_random_state", "Interval", "Options", "validate_params", "BOOL",
    "problem_labels", "check_delta", "check_positive_int",
]

_DTYPES = {"floating": [np.float64, np.float32], "float64": np.float64}


_FAST_TYPES = {"floating": (np.float64, np.float32), "float64": (np.float64,)}


def _aligned(a):
    """``a``, or an aligned copy when its data are not aligned to its item size (an array
    made by np.frombuffer at an odd offset, a view into a packed record): the kernels load
    doubles and floats at their natural alignment, a misaligned load is undefined behaviour
    in C (found by the UBSan build, .ci/sanitize)."""
    if isinstance(a, np.ndarray) and not a.flags.aligned:
        return a.copy(order="K")            # a fresh buffer, in the same memory layout
    return a


def _is_valid_as_is(est, X, dtype, order):
    """True when the full check would return this X unchanged: a plain, non-empty,
    finite float ndarray of the fitted width, in the requested order, for an
    estimator fitted without feature names. A NaN/inf makes the sum non-finite;
    a finite sum that merely overflowed also falls back to the full check."""
    if type(X) is not np.ndarray or X.ndim != 2 or X.shape[0] == 0:
        return False
    if X.dtype.type not in _FAST_TYPES[dtype]:
        return False
    if X.shape[1] != getattr(est, "n_features_in_", -1) or hasattr(est, "feature_names_in_"):
        return False
    if (order == "C" and not X.flags.c_contiguous) or not X.flags.aligned:
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(X.sum()))


def validate_X(est, X, *, reset=False, dtype="floating", order="C", allow_nan=False):
    """Validate X alone (predict-time, or unsupervised fit with reset=True).

    Predict-time calls on a plain float ndarray that is already valid skip
    scikit-learn's machinery (about 90 microseconds a call): pipelines call
    ``predict`` on a handful of rows at a time. Anything else takes the full
    path, with its error messages. ``allow_nan``: NaN (a missing value) is
    accepted, +-inf is not.
    """
    if not reset and _is_valid_as_is(est, X, dtype, order):
        return X
    with _smml_errors(est):
        return _aligned(validate_data(est, X, reset=reset, dtype=_DTYPES[dtype], order=order,
                                      ensure_all_finite="allow-nan" if allow_nan else True,
                                      ensure_min_samples=1, ensure_min_features=1))


def cast_to_model(est, X, dtype, order="K"):
    """A validated (finite) X in the fitted model's dtype (e.g. float64 queries of a model
    fitted in float32); a ValueError, not a RuntimeWarning and infinite rows, when the cast
    overflows that dtype."""
    dtype = np.dtype(dtype)
    if X.dtype == dtype and (order != "C" or X.flags.c_contiguous):
        return X
    with np.errstate(over="ignore"):
        Xc = np.asarray(X, dtype=dtype, order=order)
    if X.dtype.itemsize > dtype.itemsize and not np.all(np.isfinite(Xc)):
        raise ValueError(f"{type(est).__name__}: X (cast to the dtype of the training data) overflows "
                         f"{dtype.name}; rescale the features")
    return Xc


_NAN_ADVICE = ("smml's GradientBoostingClassifier and GradientBoostingRegressor accept missing "
               "values encoded as NaN (each split learns the side they go to); otherwise impute "
               "them in a Pipeline (sklearn.impute.SimpleImputer) or drop those rows.")


class _smml_errors:
    """Rewrite scikit-learn's validation messages where they send the user elsewhere: a NaN
    error names the smml estimators that take NaN; a string column says how to declare it
    categorical (the trees and gradient boosting) or encode it."""

    def __init__(self, est):
        self.est = est

    def __enter__(self):
        return self

    def __exit__(self, typ, exc, tb):
        if typ is not ValueError:
            return False
        msg = str(exc)
        name = type(self.est).__name__
        if "contains NaN" in msg and "HistGradientBoosting" in msg:
            first = msg.split("\n")[0]
            raise ValueError(f"{first}\n{name} does not accept missing values encoded as NaN. "
                             f"{_NAN_ADVICE}") from None
        if "could not convert string to float" in msg:
            hint = ("declare the column categorical (categorical_features=[...]) or encode it"
                    if hasattr(self.est, "categorical_features") else
                    "encode it first (sklearn.preprocessing.OneHotEncoder or OrdinalEncoder in a "
                    "Pipeline / ColumnTransformer); smml's trees and gradient boosting also take "
                    "it as categorical_features")
            raise ValueError(f"{name}: X holds a string column ({msg}); {hint}") from None
        return False


def validate_X_y(est, X, y, *, dtype="floating", order="C", y_numeric=False, classifier=False,
                 multi_output=False, allow_nan=False):
    """Validate a training pair; y is 1-d (2-d allowed with ``multi_output``) and as long as X.

    Classification targets are checked to be discrete (continuous floats are
    rejected with scikit-learn's 'Unknown label type' message); regression
    targets (``y_numeric``) become finite float64.
    """
    with _smml_errors(est):
        X, y = validate_data(est, X, y, reset=True, dtype=_DTYPES[dtype], order=order,
                             ensure_all_finite="allow-nan" if allow_nan else True, y_numeric=y_numeric,
                             multi_output=multi_output,
                             ensure_min_samples=1, ensure_min_features=1)
    if classifier:
        try:
            check_classification_targets(y)
        except TypeError as exc:
            raise ValueError(f"class labels must be mutually comparable (all numbers or all strings, "
                             f"no None): {exc}") from None
    elif y_numeric:
        y = np.ascontiguousarray(y, dtype=np.float64)
    return _aligned(X), _aligned(y)


def validate_sample_weight(sample_weight, n_samples, dtype=np.float64):
    """Non-negative finite weights of length n_samples, not all zero (None -> ones)."""
    if sample_weight is None:
        return np.ones(n_samples, dtype=dtype)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=dtype)
    sw = np.asarray(sample_weight)
    if sw.ndim != 1:
        raise ValueError(f"sample_weight must be 1-d, got shape {sw.shape}")
    if sw.shape[0] != n_samples:
        raise ValueError(f"sample_weight has {sw.shape[0]} entries but X has {n_samples} samples")
    try:
        sw = np.ascontiguousarray(sw, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample_weight must be numeric: {exc}") from None
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be non-negative")
    if not np.any(sw > 0):
        raise ValueError("sample_weight sums to zero: at least one weight must be positive")
    with np.errstate(over="ignore"):
        total = float(np.sum(sw, dtype=np.float64))
    if not total <= float(np.finfo(sw.dtype).max):
        raise ValueError(f"sample_weight sums to more than {sw.dtype.name} can hold (the weighted sums "
                         "of the fit would overflow); rescale the weights")
    return _aligned(sw)


def drop_zero_weight(sample_weight, X, *arrays):
    """``(sample_weight, X, *arrays)`` without the rows of weight 0.

    A weight of 0 means "not in the weighted training set": learners whose search
    depends on the rows present (thresholds between distinct values) must not see
    such rows, or a zero weight would not be the same as removing the row.  The
    arrays are returned as they are when no weight is 0.
    """
    keep = sample_weight > 0
    if keep.all():
        return (sample_weight, X) + arrays
    return (sample_weight[keep], np.ascontiguousarray(X[keep])) + tuple(a[keep] for a in arrays)


def encode_classes(y):
    """(classes_, y_encoded): sorted distinct labels and each label's index (intp)."""
    try:
        classes, y_enc = np.unique(np.asarray(y), return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"class labels must be mutually comparable (all numbers or all strings, "
                         f"no None): {exc}") from None
    return classes, np.ascontiguousarray(y_enc.reshape(-1), dtype=np.intp)


def problem_labels(est, y):
    """classes_ and the label vectors of the binary problems, as an (n_problems, n) float64 array.

    Two classes: one problem, classes_[1] -> +1 and classes_[0] -> -1 (the notes' binary
    setting). More: one-vs-rest, problem c labels
    classes_[c] +1 and every other class -1.
    """
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type not in ("binary", "multiclass"):
        raise ValueError(f"{type(est).__name__}: unsupported target type {y_type!r}: expected binary "
                         "or multiclass labels")
    classes, y_enc = encode_classes(y)
    if len(classes) == 1:
        raise ValueError(f"{type(est).__name__} needs samples of at least 2 classes; "
                         f"the data contain only one class: {classes[0]!r}")
    if len(classes) == 2:
        return classes, np.where(y_enc == 1, 1.0, -1.0)[None, :]
    return classes, np.where(y_enc[None, :] == np.arange(len(classes))[:, None], 1.0, -1.0)


def check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be a real number in (0, 1), got {delta!r}")


def check_positive_int(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")


# ---- hyper-parameter validation ---------------------------------------------

class Interval:
    """A numeric range: ``Interval(int, 1, None)`` is an integer >= 1.

    ``kind`` is ``int`` (integers only), or ``float`` (any real, ints accepted).
    ``closed`` is one of "both", "left", "right", "neither".
    """

    def __init__(self, kind, left, right, closed="both"):
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def is_satisfied_by(self, v):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            return False
        if self.kind is int and not isinstance(v, numbers.Integral):
            return False
        if not np.isfinite(v):
            return False
        lo_ok = self.left is None or (v >= self.left if self.closed in ("both", "left") else v > self.left)
        hi_ok = self.right is None or (v <= self.right if self.closed in ("both", "right") else v < self.right)
        return lo_ok and hi_ok

    def __str__(self):
        lb = "[" if self.closed in ("both", "left") else "("
        rb = "]" if self.closed in ("both", "right") else ")"
        lo = "-inf" if self.left is None else self.left
        hi = "inf" if self.right is None else self.right
        what = "an integer" if self.kind is int else "a real number"
        return f"{what} in {lb}{lo}, {hi}{rb}"


class Options:
    """One of a fixed set of values (strings, None, ...)."""

    def __init__(self, *values):
        self.values = values

    def is_satisfied_by(self, v):
        return any(v is o or (type(v) is type(o) and v == o) for o in self.values)

    def __str__(self):
        return "one of " + ", ".join(repr(o) for o in self.values)


class Callable:
    def is_satisfied_by(self, v):
        return callable(v)

    def __str__(self):
        return "a callable"


class InstanceOf:
    def __init__(self, *types):
        self.types = types

    def is_satisfied_by(self, v):
        return isinstance(v, self.types)

    def __str__(self):
        return "an instance of " + " or ".join(t.__name__ for t in self.types)


#: a flag: True or False
BOOL = Options(True, False)
#: n_jobs: None, or a non-zero integer (0 is rejected)
N_JOBS = (Options(None), Interval(int, None, -1), Interval(int, 1, None))
#: random_state: None, an int seed, or a numpy Generator / RandomState
RANDOM_STATE = (Options(None), Interval(int, 0, 2**32 - 1),
                InstanceOf(np.random.RandomState, np.random.Generator))


def validate_params(est, spec):
    """Check ``est``'s hyper-parameters against ``spec`` {name: constraint(s)}.

    Raises ``ValueError`` naming the estimator, the parameter, its value and
    what it must be.
    """
    for name, constraints in spec.items():
        if not isinstance(constraints, (tuple, list)):
            constraints = (constraints,)
        value = getattr(est, name)   # the spec names __init__ parameters (get_params costs ~25 us)
        if not any(c.is_satisfied_by(value) for c in constraints):
            allowed = " or ".join(str(c) for c in constraints)
            raise ValueError(
                f"{type(est).__name__}: parameter {name}={value!r} is invalid; it must be {allowed}")
