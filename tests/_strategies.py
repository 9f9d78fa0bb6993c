"""Hypothesis strategies for tests/test_properties.py: small data sets with awkward shapes and values.

Everything here is small on purpose (at most ``MAX_ROWS`` rows and ``MAX_COLS``
columns): each example fits an estimator in milliseconds, so a long run
(``SMML_PROPERTY_EXAMPLES``) can try thousands per estimator.

- :func:`matrices`: X of 1..MAX_ROWS rows and 1..MAX_COLS columns (more columns
  than rows included), float64 or float32, with duplicated rows, constant
  columns, integer-valued (tie-heavy) or continuous entries, and each column
  scaled by a magnitude from 0 and 1e-300 to 1e300 (float32: to 1e38);
- :func:`labels`: class labels of one type per data set (ints, strings, bools,
  or floats holding integers), 1 to 4 distinct values;
- :func:`targets`: regression targets, finite, of any magnitude;
- :func:`extreme_rows`: query rows whose entries are +-(tiny or huge magnitudes), 0 or +-1;
- :func:`continuous`: Gaussian data from a seed, no two distances equal (for the
  permutation properties, whose tie rules are defined on exact distances).
"""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

MAX_ROWS = 24
MAX_COLS = 8

#: column magnitudes: 0, the smallest subnormal, tiny, ordinary, huge (near the largest float)
SCALES64 = (0.0, 5e-324, 1e-300, 1e-150, 1e-30, 1e-5, 1.0, 1.0, 1.0, 1.0, 1e5, 1e30, 1e150, 1e300, 1e308)
#: the same for float32 (max ~3.4e38, smallest subnormal ~1.4e-45)
SCALES32 = (0.0, 1e-45, 1e-30, 1e-5, 1.0, 1.0, 1.0, 1.0, 1e5, 1e30, 1e38, 3e38)
#: the magnitudes of the extreme queries (``extreme_rows``)
EXTREME64 = (5e-324, 1e-300, 1e154, 1e300, 1e308)
EXTREME32 = (1e-45, 1e-30, 1e19, 1e30, 3e38)
#: 1.0 only: data that overflow nothing (determinism, threads, bad-input properties)
ORDINARY = (1.0,)

LABEL_POOLS = {
    "int": [0, 1, 2, 3],
    "negative int": [-7, 3, 1000, -1],
    "str": ["a", "b", "spam", "eggs"],
    "bool": [False, True],
    "integral float": [0.0, 1.0, 2.0, -3.0],
}


@st.composite
def shapes(draw, min_rows=1, max_rows=MAX_ROWS, max_cols=MAX_COLS):
    n = draw(st.integers(min_rows, max_rows))
    if draw(st.booleans()):
        d = draw(st.integers(1, max_cols))           # any width
    else:
        d = draw(st.integers(1, 3))                  # narrow (the kd-tree's home)
    return n, d


@st.composite
def matrices(draw, n=None, d=None, dtype=None, scales=None, min_rows=1):
    """(X, info): X a C-contiguous float array; info a dict describing how it was made."""
    if n is None or d is None:
        n, d = draw(shapes(min_rows=min_rows))
    dtype = dtype or draw(st.sampled_from([np.float64, np.float32]))
    if scales is None:
        scales = SCALES64 if dtype == np.float64 else SCALES32
    kind = draw(st.sampled_from(["continuous", "integers", "floats"]))
    if kind == "continuous":
        seed = draw(st.integers(0, 2 ** 32 - 1))
        X = np.random.default_rng(seed).normal(size=(n, d))
    elif kind == "integers":
        X = draw(hnp.arrays(np.int64, (n, d), elements=st.integers(-3, 3))).astype(np.float64)
    else:
        X = draw(hnp.arrays(np.float64, (n, d),
                            elements=st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)))
    # duplicated rows: copy some rows over others
    if n > 1 and draw(st.booleans()):
        for _ in range(draw(st.integers(1, max(1, n // 2)))):
            src, dst = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
            X[dst] = X[src]
    # constant columns
    if draw(st.booleans()):
        for j in draw(st.lists(st.integers(0, d - 1), min_size=1, max_size=d, unique=True)):
            X[:, j] = draw(st.sampled_from([0.0, 1.0, -2.5]))
    # one magnitude per column (or one for all), on entries brought into [-1, 1] first so that
    # the largest scales stay finite
    if len(scales) > 1 and draw(st.booleans()):
        X = np.clip(X / 4.0, -1.0, 1.0)
        if draw(st.booleans()):
            col_scales = np.full(d, draw(st.sampled_from(scales)))
        else:
            col_scales = np.array([draw(st.sampled_from(scales)) for _ in range(d)])
        X = X * col_scales
    else:
        col_scales = np.ones(d)
    X = np.ascontiguousarray(X.astype(dtype))
    assert np.all(np.isfinite(X))
    return X, {"kind": kind, "dtype": np.dtype(dtype).name, "max_abs": float(np.max(np.abs(X), initial=0.0))}


@st.composite
def labels(draw, n, pool=None, min_classes=1, max_classes=4):
    """A 1-d label array of length n, all of one type (a pool of LABEL_POOLS)."""
    pool = pool or draw(st.sampled_from(sorted(LABEL_POOLS)))
    values = LABEL_POOLS[pool]
    k = draw(st.integers(min(min_classes, len(values)), min(max_classes, len(values))))
    chosen = values[:k]
    idx = draw(hnp.arrays(np.int64, n, elements=st.integers(0, k - 1)))
    # every chosen class present when there are enough rows
    if n >= k:
        idx[:k] = np.arange(k)
    y = np.array([chosen[i] for i in idx])
    if pool == "str":
        y = y.astype(object) if draw(st.booleans()) else y.astype(str)
    return y


@st.composite
def targets(draw, n, scales=SCALES64):
    """Finite float64 regression targets of length n, of one magnitude (or constant)."""
    kind = draw(st.sampled_from(["continuous", "integers", "constant"]))
    if kind == "continuous":
        y = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1))).normal(size=n)
    elif kind == "integers":
        y = draw(hnp.arrays(np.int64, n, elements=st.integers(-3, 3))).astype(np.float64)
    else:
        y = np.full(n, draw(st.sampled_from([0.0, 1.0, -4.5])))
    scale = draw(st.sampled_from(scales))
    return y if scale == 1.0 else np.clip(y / 4.0, -1.0, 1.0) * scale


@st.composite
def continuous(draw, min_rows=2, max_rows=MAX_ROWS, max_cols=6):
    """(X, seed): Gaussian float64 data from a seed (no duplicated rows, no equal distances
    with probability 1) and the seed, for the permutation properties."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(1, max_cols))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return np.random.default_rng(seed).normal(size=(n, d)), seed


@st.composite
def extreme_rows(draw, d, max_rows=6):
    """A float64 or float32 query of 1..max_rows rows and d columns, each entry +-m for m one of
    EXTREME64 / EXTREME32 (the dtype's tiny and huge magnitudes), 0 or 1."""
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    n = draw(st.integers(1, max_rows))
    mags = np.array((EXTREME64 if dtype == np.float64 else EXTREME32) + (0.0, 1.0))
    which = draw(hnp.arrays(np.int64, (n, d), elements=st.integers(0, len(mags) - 1)))
    signs = draw(hnp.arrays(np.int64, (n, d), elements=st.sampled_from([-1, 1])))
    Q = (mags[which] * signs).astype(dtype)
    assert np.all(np.isfinite(Q))
    return Q
