"""Row-major BLAS wrappers over scipy.linalg.cython_blas (float32 / float64): dot, axpy,
scal, gemv, gemm.

BLAS is column-major. A row-major C = op(A) op(B) is the column-major
C^T = op(B)^T op(A)^T, so _gemm swaps the operands and passes the same
transpose flags. scipy's signatures take non-const pointers; the casts are safe
because BLAS never writes to its inputs (scipy#14262).
"""
from scipy.linalg.cython_blas cimport (
    ddot, sdot, daxpy, saxpy, dscal, sscal, dgemv, sgemv, dgemm, sgemm)

from smml._core._typedefs cimport floating


cdef floating _dot(int n, const floating *x, int incx,
                   const floating *y, int incy) noexcept nogil:
    if floating is double:
        return ddot(&n, <double *> x, &incx, <double *> y, &incy)
    else:
        return sdot(&n, <float *> x, &incx, <float *> y, &incy)


cdef void _axpy(int n, floating alpha, const floating *x, int incx,
                floating *y, int incy) noexcept nogil:
    if floating is double:
        daxpy(&n, &alpha, <double *> x, &incx, y, &incy)
    else:
        saxpy(&n, &alpha, <float *> x, &incx, y, &incy)


cdef void _scal(int n, floating alpha, floating *x, int incx) noexcept nogil:
    if floating is double:
        dscal(&n, &alpha, x, &incx)
    else:
        sscal(&n, &alpha, x, &incx)


cdef void _gemv(bint trans_a, int m, int n, floating alpha, const floating *A, int lda,
                const floating *x, int incx, floating beta, floating *y, int incy) noexcept nogil:
    # row-major A (m x n) is the column-major A^T (n x m): swap the transpose flag
    cdef char t = b'N' if trans_a else b'T'
    if m == 0 or n == 0:
        return
    if floating is double:
        dgemv(&t, &n, &m, &alpha, <double *> A, &lda, <double *> x, &incx, &beta, y, &incy)
    else:
        sgemv(&t, &n, &m, &alpha, <float *> A, &lda, <float *> x, &incx, &beta, y, &incy)


cdef void _gemm(bint trans_a, bint trans_b, int m, int n, int k,
                floating alpha, const floating *A, int lda,
                const floating *B, int ldb, floating beta,
                floating *C, int ldc) noexcept nogil:
    cdef char ta = b'T' if trans_a else b'N'
    cdef char tb = b'T' if trans_b else b'N'
    if m == 0 or n == 0:
        return
    # column-major: C^T (n x m) = op(B)^T (n x k) @ op(A)^T (k x m)
    if floating is double:
        dgemm(&tb, &ta, &n, &m, &k, &alpha, <double *> B, &ldb,
              <double *> A, &lda, &beta, C, &ldc)
    else:
        sgemm(&tb, &ta, &n, &m, &k, &alpha, <float *> B, &ldb,
              <float *> A, &lda, &beta, C, &ldc)


# ---- test hooks (tests/test_core.py checks each against numpy) ----------

def dot_memview(const floating[::1] x, const floating[::1] y):
    return _dot(<int> x.shape[0], &x[0], 1, &y[0], 1)


def axpy_memview(double alpha, const floating[::1] x, floating[::1] y):
    _axpy(<int> x.shape[0], <floating> alpha, &x[0], 1, &y[0], 1)


def scal_memview(double alpha, floating[::1] x):
    _scal(<int> x.shape[0], <floating> alpha, &x[0], 1)


def gemv_memview(bint trans_a, double alpha, const floating[:, ::1] A, const floating[::1] x,
                 double beta, floating[::1] y):
    """y = alpha op(A) x + beta y on C-contiguous arrays (shapes checked)."""
    cdef int m = <int> A.shape[0], n = <int> A.shape[1], lda = <int> A.shape[1]
    if x.shape[0] != (m if trans_a else n) or y.shape[0] != (n if trans_a else m):
        raise ValueError("gemv_memview: incompatible shapes")
    if m == 0 or n == 0:
        raise ValueError("gemv_memview: empty matrix")
    with nogil:
        _gemv(trans_a, m, n, <floating> alpha, &A[0, 0], lda, &x[0], 1, <floating> beta, &y[0], 1)


def gemm_memview(bint trans_a, bint trans_b, double alpha,
                 const floating[:, ::1] A, const floating[:, ::1] B,
                 double beta, floating[:, ::1] C):
    """C = alpha op(A) op(B) + beta C on C-contiguous arrays (shapes checked)."""
    cdef int m = <int> (A.shape[1] if trans_a else A.shape[0])
    cdef int k = <int> (A.shape[0] if trans_a else A.shape[1])
    cdef int kb = <int> (B.shape[1] if trans_b else B.shape[0])
    cdef int n = <int> (B.shape[0] if trans_b else B.shape[1])
    if k != kb or C.shape[0] != m or C.shape[1] != n:
        raise ValueError("gemm_memview: incompatible shapes")
    if k == 0:
        raise ValueError("gemm_memview: empty inner dimension")
    cdef int lda = <int> A.shape[1], ldb = <int> B.shape[1], ldc = <int> C.shape[1]
    with nogil:
        _gemm(trans_a, trans_b, m, n, k, <floating> alpha, &A[0, 0], lda,
              &B[0, 0], ldb, <floating> beta, &C[0, 0], ldc)
