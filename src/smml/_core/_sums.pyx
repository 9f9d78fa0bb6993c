"""Sums over the rows of an array in a fixed order, in float64: the parallel squared row norms
(the distance kernels' ||x||^2: k-means, kernel methods, the foundation's thread-invariance
test) and the chained column sums of row blocks (smml.dask's centring, bit for bit numpy's)."""
from cython.parallel cimport prange

from libc.string cimport memcpy

from smml._core._finite cimport all_finite
from smml._core._typedefs cimport floating, int64_t, intp_t, uint64_t


cdef void _row_norms_sq(const floating[:, ::1] X, double[::1] out,
                        int n_threads) noexcept nogil:
    cdef intp_t i, j, n = X.shape[0], d = X.shape[1]
    cdef double s
    for i in prange(n, nogil=True, schedule="static", num_threads=n_threads):
        s = 0.0
        for j in range(d):
            s = s + <double> X[i, j] * <double> X[i, j]
        out[i] = s


def row_norms_sq(const floating[:, ::1] X, int n_threads=1):
    """||x_i||^2 of every row, accumulated in float64 (OpenMP over rows).

    Each row is summed by one thread in a fixed order, so the result is the
    same bit for bit whatever the thread count."""
    import numpy as np

    out = np.empty(X.shape[0], dtype=np.float64)
    cdef double[::1] o = out
    if X.shape[0] == 0:
        return out
    with nogil:
        _row_norms_sq(X, o, n_threads)
    return out


def col_sums_continued(const floating[:, ::1] X, double[::1] acc):
    """acc[f] += X[i, f] for the rows i in order, in float64: numpy's order for
    ``X.sum(axis=0, dtype=np.float64)`` on a C-ordered X of more than one column (row after row,
    each column its own running sum), continued from ``acc``, so that the sums of consecutive
    row blocks chained through ``acc`` equal the sum of the whole array bit for bit."""
    cdef intp_t n = X.shape[0], d = X.shape[1], i, f
    if acc.shape[0] != d:
        raise ValueError("col_sums_continued: acc must have one entry per column")
    with nogil:
        for i in range(n):
            for f in range(d):
                acc[f] = acc[f] + <double> X[i, f]


cdef enum:
    EXP_SLOTS = 2048        # the binary exponents of finite float64 values: key + 1021 in 0..2045


def exact_bins(const double[::1] v, int64_t[::1] hi, int64_t[::1] lo):
    """The exact sum of v binned by binary exponent (smml._exact_sums.exact_parts): each
    value is M 2^(key - 53), M a signed integer below 2^53 (its 53-bit significand; key =
    max(biased exponent, 1) - 1022), split as M = h 2^26 + l with 0 <= l < 2^26, and
    hi[key + 1021] += h, lo[key + 1021] += l: int64 sums, exact up to 2^36 values.  hi and lo
    (EXP_SLOTS each) are added to, not cleared.  Returns False (nothing added) when a value is
    not finite."""
    cdef intp_t n = v.shape[0], i
    cdef uint64_t bits, e
    cdef int64_t M, h
    cdef bint ok
    if hi.shape[0] != EXP_SLOTS or lo.shape[0] != EXP_SLOTS:
        raise ValueError("exact_bins: hi and lo need 2048 slots")
    if n > (<intp_t>1 << 36):
        raise ValueError("exact_bins: at most 2^36 values a call")
    if n == 0:
        return True
    with nogil:
        ok = all_finite(&v[0], n)
        if ok:
            for i in range(n):
                memcpy(&bits, &v[i], sizeof(double))
                e = (bits >> 52) & 0x7FF
                M = <int64_t>(bits & ((<uint64_t>1 << 52) - 1))
                if e > 0:
                    M = M | (<int64_t>1 << 52)
                else:
                    e = 1
                if bits >> 63:
                    M = -M
                h = M >> 26                     # (floor: arithmetic shift)
                hi[e - 1] += h
                lo[e - 1] += M - h * 67108864   # (h 2^26 as a product: a negative h shifted is UB)
    return ok
