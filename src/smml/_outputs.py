"""What every family does to an output before returning it: the input's precision where the
value fits, and a clear error where finite inputs gave a non-finite output (an overflow)."""
import numpy as np


def in_input_precision(out, dtype):
    """``out`` (computed in float64 when the model is float64) in the input's precision: float32
    input gives float32 output, the float64 result rounded once - unless a value lies beyond
    float32's range, where rounding would turn a finite result into inf: then the float64
    result is returned as it is."""
    if dtype == np.float32 and out.dtype == np.float64:
        with np.errstate(over="ignore"):
            out32 = out.astype(np.float32)
        if np.all(np.isfinite(out32) | ~np.isfinite(out)):
            return out32
    return out


def check_finite_output(est, out, what):
    """Raise a ValueError naming the overflow if ``out`` (computed from validated, finite
    inputs) holds an inf or a NaN; return ``out`` otherwise. ``what`` names the quantity
    (e.g. "w.x + b")."""
    if np.isfinite(out).all():
        return out
    bad = ~np.isfinite(out)
    n_bad = int(bad.reshape(bad.shape[0], -1).any(axis=1).sum()) if bad.ndim else 1
    n = out.shape[0] if out.ndim else 1
    raise ValueError(f"{type(est).__name__}: {what} overflows float64 on {n_bad} of these {n} rows "
                     "(the values are too large for the fitted model); rescale the features")


def sum_scale(n_terms):
    """2^-k with 2^k >= n_terms: a sum of ``n_terms`` finite float64 values each multiplied by
    it cannot overflow. A power of two scales exactly (outside the subnormal range), so a mean
    computed as ((sum of x 2^-k) / n) 2^k has the bits of sum / n computed without overflow:
    the fallback when the plain sum of finite values came out inf."""
    return 2.0 ** -int(np.ceil(np.log2(max(int(n_terms), 2))))
