"""Exact sums for gradient boosting (002): what the in-memory fit and smml.dask's distributed
fit share so that their models are equal bit for bit.

- ``fixed_scale``: the power of two to which each round's gradients and hessians are rounded
  (``smml._core._gbm.quantize``) so that every sum of them (histogram bins, node totals, sibling
  subtraction) is exact, in any order, on any chunking of the rows.
- ``exact_parts`` / ``exact_total``: the correctly rounded sum of float64 values, computed from
  parts that add exactly (one part per worker); ``baseline_scores``: F_0 from such sums.
"""
import math

import numpy as np

__all__ = ["fixed_scale", "exact_parts", "exact_total", "baseline_scores"]

def fixed_scale(n, vmax):
    """The power of two 2^(51 - e), n * vmax < 2^e (e the sum of the binary exponents of n and
    vmax, so that nothing overflows): gradients rounded to multiples of its inverse
    (``_gbm.quantize``) have exact sums over any subset of the n rows, in any order (integers
    below 2^53 times a power of two): the histograms, node totals and sibling subtractions of a
    tree do not depend on the row order, the thread count or how the rows are cut into chunks
    (smml.dask's workers). Every rounded value is below 2^51 in units of the scale (``_gbm.quantize``'s fast
    rounding); the rounding is at most n * vmax * 2^-52 per value."""
    if not vmax > 0.0:
        return 1.0
    e = math.frexp(float(n))[1] + math.frexp(float(vmax))[1]
    return math.ldexp(1.0, max(min(51 - e, 1000), -1000))


def exact_parts(v):
    """The exact sum of the float64 values v as ``{exponent: integer}`` (sum of integer *
    2^(exponent - 53)): parts of several arrays add exactly (``exact_total``)."""
    v = np.ascontiguousarray(v, dtype=np.float64).ravel()
    out = {}
    step = 1 << 22
    for a in range(0, len(v), step):
        m, e = np.frexp(v[a:a + step])
        M = (m * 2.0 ** 53).astype(np.int64)           # exact: m has 53 bits, |m| < 1
        hi = M >> 26                                   # M = hi 2^26 + lo, 0 <= lo < 2^26
        lo = M - (hi << 26)
        e0 = int(e.min()) if len(e) else 0
        # float64 bin sums of at most 2^22 values below 2^27 in magnitude: exact
        sh = np.bincount(e - e0, weights=hi)
        sl = np.bincount(e - e0, weights=lo)
        for i in np.flatnonzero((sh != 0) | (sl != 0)):
            key = int(i) + e0
            out[key] = out.get(key, 0) + (int(sh[i]) << 26) + int(sl[i])
    return out


def exact_total(parts):
    """The correctly rounded sum of values whose ``exact_parts`` are ``parts`` (a list):
    the same float whatever the order or grouping of the values."""
    from fractions import Fraction
    merged = {}
    for p in parts:
        for e, m in p.items():
            merged[e] = merged.get(e, 0) + m
    tot = Fraction(0)
    for e, m in merged.items():
        tot += Fraction(m) * (Fraction(2) ** (e - 53))
    return float(tot)


def baseline_scores(loss, K, wy_parts, class_parts, wsum):
    """F_0, the best constant of the loss, from exact sums: the weighted mean (square loss),
    the log-odds of the weighted positive rate (logistic), the log of the weighted class
    frequencies (softmax; ``class_parts[g][k]``: the parts of the weights of class k)."""
    if loss in ("squared_error", "half_squared_error"):
        return np.array([exact_total(wy_parts) / wsum])
    if loss == "log_loss":
        p = exact_total(wy_parts) / wsum
        with np.errstate(divide="ignore"):
            return np.clip([np.log(p) - np.log1p(-p)], -30.0, 30.0)  # one class of positive weight: +-30
    prior = np.array([exact_total([c[k] for c in class_parts]) for k in range(K)]) / wsum
    with np.errstate(divide="ignore"):
        F0 = np.log(prior)
    F0[~np.isfinite(F0)] = -30.0        # a class of zero weight, or absent after the validation split
    return F0
