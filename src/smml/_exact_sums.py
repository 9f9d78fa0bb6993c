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
    """The exact sum of the finite float64 values v as ``{exponent: integer}`` (sum of integer
    * 2^(exponent - 53)): parts of several arrays add exactly (``exact_total``).  One pass of
    ``smml._core._sums.exact_bins`` (integer sums per binary exponent), 2^36 values at a time."""
    from smml._core import _sums
    v = np.ascontiguousarray(v, dtype=np.float64).ravel()
    hi = np.zeros(2048, np.int64)
    lo = np.zeros(2048, np.int64)
    out = {}
    step = 1 << 36
    for a in range(0, len(v), step):
        if not _sums.exact_bins(v[a:a + step], hi, lo):
            raise ValueError("exact_parts: the values must be finite")
        for i in np.flatnonzero((hi != 0) | (lo != 0)):
            key = int(i) - 1021
            out[key] = out.get(key, 0) + (int(hi[i]) << 26) + int(lo[i])
        hi[:] = 0
        lo[:] = 0
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
