# One place for the C types every kernel uses, so no kernel needs `cimport numpy`.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

ctypedef double float64_t
ctypedef float float32_t
ctypedef Py_ssize_t intp_t

# float32 / float64 kernels share one source through this fused type.
ctypedef fused floating:
    float
    double
