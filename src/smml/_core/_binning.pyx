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


cdef enum:
    BIN_BLOCK = 256         # rows a task of bin_columns codes, a column at a time


cdef inline void _lower_bound4(const double* e, intp_t m, double v0, double v1, double v2, double v3,
                               uint8_t* out, intp_t step) noexcept nogil:
    """_lower_bound of four values on the same edges, in lockstep: four independent chains of
    loads and compares (one search is a chain of dependent loads: its latency, not the
    compares, was the cost)."""
    cdef intp_t b0 = 0, b1 = 0, b2 = 0, b3 = 0, half
    while m > 1:
        half = m >> 1
        b0 = b0 + half if e[b0 + half] < v0 else b0
        b1 = b1 + half if e[b1 + half] < v1 else b1
        b2 = b2 + half if e[b2 + half] < v2 else b2
        b3 = b3 + half if e[b3 + half] < v3 else b3
        m = m - half
    out[0] = <uint8_t>(b0 + (e[b0] < v0))
    out[step] = <uint8_t>(b1 + (e[b1] < v1))
    out[2 * step] = <uint8_t>(b2 + (e[b2] < v2))
    out[3 * step] = <uint8_t>(b3 + (e[b3] < v3))


def bin_columns(const floating[:, ::1] X,      # IN (n, d)
                const double[:, ::1] edges,      # IN (d, n_edges_max) ascending, padded with +inf
                const intp_t[::1] n_edges,       # IN (d,)
                const uint8_t[::1] skip,         # IN (d,) 1: leave that column of out untouched
                uint8_t[:, :] out,               # OUT (n, d), any layout (row- or column-major)
                int n_threads):
    """out[i, f] = the number of column f's edges below X[i, f] (code <= b <=> x <= edge b);
    blocks of BIN_BLOCK rows a task, a column at a time, four rows' searches at once."""
    cdef intp_t f, i, r0, r1, b, n = X.shape[0], d = X.shape[1], nb = (n + BIN_BLOCK - 1) // BIN_BLOCK
    cdef intp_t step = out.strides[0]
    cdef const double* e
    with nogil:
        for b in prange(nb, num_threads=max(1, n_threads), schedule="static"):
            r0 = b * BIN_BLOCK
            r1 = min(r0 + BIN_BLOCK, n)
            for f in range(d):
                if skip[f]:
                    continue
                if n_edges[f] == 0:
                    for i in range(r0, r1):
                        out[i, f] = 0
                    continue
                e = &edges[f, 0]
                i = r0
                while i + 4 <= r1:
                    _lower_bound4(e, n_edges[f], X[i, f], X[i + 1, f], X[i + 2, f], X[i + 3, f], &out[i, f],
                                  step)
                    i = i + 4
                while i < r1:
                    out[i, f] = <uint8_t>_lower_bound(e, n_edges[f], X[i, f])
                    i = i + 1
