# Row-major BLAS over scipy.linalg.cython_blas for float32 and float64.
from smml._core._typedefs cimport floating

cdef floating _dot(int n, const floating *x, int incx,
                   const floating *y, int incy) noexcept nogil

cdef void _axpy(int n, floating alpha, const floating *x, int incx,
                floating *y, int incy) noexcept nogil

cdef void _scal(int n, floating alpha, floating *x, int incx) noexcept nogil

# C (m x n, row-major, leading dim ldc) = alpha * op(A) @ op(B) + beta * C
# where op(A) is m x k and op(B) is k x n; A, B, C all row-major.
cdef void _gemm(bint trans_a, bint trans_b, int m, int n, int k,
                floating alpha, const floating *A, int lda,
                const floating *B, int ldb, floating beta,
                floating *C, int ldc) noexcept nogil
