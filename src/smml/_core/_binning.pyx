# Binning: the uint8 code of every value, "number of bin edges below x", so that
# code <= b  <=>  x <= edges[b].  The edges are computed in Python (smml.tree:
# quantile midpoints); the codes feed the histogram kernels (_histogram.pxd).
from cython.parallel cimport prange

from smml._core._typedefs cimport intp_t, uint8_t, floating


cdef inline intp_t _lower_bound(const double* e, intp_t m, double v) noexcept nogil:
    """Number of the m >= 1 sorted edges below v, without data-dependent branches."""
    cdef intp_t base = 0, half
    while m > 1:
        half = m >> 1
        base = base + half if e[base + half] < v else base
        m = m - half
    return base + (e[base] < v)


def bin_columns(const floating[:, ::1] X,      # IN (n, d)
                const double[:, ::1] edges,      # IN (d, n_edges_max) ascending, padded with +inf
                const intp_t[::1] n_edges,       # IN (d,)
                const uint8_t[::1] skip,         # IN (d,) 1: leave that column of out untouched
                uint8_t[:, :] out,               # OUT (n, d), any layout (row- or column-major)
                int n_threads):
    cdef intp_t f, i, n = X.shape[0], d = X.shape[1]
    with nogil:
        for i in prange(n, num_threads=max(1, n_threads), schedule="static"):
            for f in range(d):
                if skip[f] or n_edges[f] == 0:
                    if not skip[f]:
                        out[i, f] = 0
                    continue
                out[i, f] = <uint8_t>_lower_bound(&edges[f, 0], n_edges[f], X[i, f])
