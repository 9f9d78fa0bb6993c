# OpenMP shims that compile with and without OpenMP (no `cimport openmp`,
# which would #include <omp.h> unconditionally).
cdef extern from "smml_platform.h":
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
