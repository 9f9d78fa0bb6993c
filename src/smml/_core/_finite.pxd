# The finiteness test of the iterative solvers (_linear.pyx, _neural.pyx): a weight vector
# that has become inf or NaN means divergence (smml.exceptions.DivergenceError). Written once,
# here, as an inline function; cimport it, never copy it.
from libc.math cimport isfinite

from smml._core._typedefs cimport floating, intp_t


cdef inline bint all_finite(const floating *w, intp_t n) noexcept nogil:
    """True when w[0..n-1] are all finite (neither inf nor NaN); stops at the first that is not."""
    cdef intp_t j
    for j in range(n):
        if not isfinite(w[j]):
            return False
    return True
