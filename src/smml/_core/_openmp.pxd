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


cdef inline int threads_for(int n_threads, long long work, long long grain) noexcept nogil:
    """How many of n_threads threads to start for `work` units: the C twin of
    smml._threads.threads_for (tested equal), for decisions taken inside a kernel.
    Below 2 * grain one thread; never more threads than whole grains of work."""
    if n_threads <= 1 or work < 2 * grain:
        return 1
    if work // grain < n_threads:
        return <int>(work // grain)
    return n_threads
