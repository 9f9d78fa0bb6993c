# OpenMP shims that compile with and without OpenMP (no `cimport openmp`,
# which would #include <omp.h> unconditionally).
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define SMML_OPENMP_ENABLED 1
    #else
    #define SMML_OPENMP_ENABLED 0
    static inline int omp_get_max_threads(void) { return 1; }
    static inline int omp_get_thread_num(void) { return 0; }
    static inline int omp_get_num_threads(void) { return 1; }
    #endif
    """
    bint SMML_OPENMP_ENABLED
    int omp_get_max_threads() noexcept nogil
    int omp_get_thread_num() noexcept nogil
    int omp_get_num_threads() noexcept nogil
