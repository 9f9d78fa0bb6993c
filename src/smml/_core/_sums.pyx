"""Sums over the rows of an array in a fixed order, in float64: the parallel squared row norms
(the distance kernels' ||x||^2: k-means, kernel methods, the foundation's thread-invariance
test) and the chained column sums of row blocks (smml.dask's centring, bit for bit numpy's)."""
from cython.parallel cimport prange

from smml._core._typedefs cimport floating, intp_t


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
