# Row-major BLAS over scipy.linalg.cython_blas for float32 and float64.
from smml._core._typedefs cimport floating

cdef floating _dot(int n, const floating *x, int incx,
                   const floating *y, int incy) noexcept nogil

cdef void _axpy(int n, floating alpha, const floating *x, int incx,
                floating *y, int incy) noexcept nogil

cdef void _scal(int n, floating alpha, floating *x, int incx) noexcept nogil

# y = alpha * op(A) @ x + beta * y with A (m x n, row-major, leading dim lda);
# op(A) = A (y has m entries) or A^T (trans_a: y has n entries).
cdef void _gemv(bint trans_a, int m, int n, floating alpha, const floating *A, int lda,
                const floating *x, int incx, floating beta, floating *y, int incy) noexcept nogil

# C (m x n, row-major, leading dim ldc) = alpha * op(A) @ op(B) + beta * C
# where op(A) is m x k and op(B) is k x n; A, B, C all row-major.
cdef void _gemm(bint trans_a, bint trans_b, int m, int n, int k,
                floating alpha, const floating *A, int lda,
                const floating *B, int ldb, floating beta,
                floating *C, int ldc) noexcept nogil
