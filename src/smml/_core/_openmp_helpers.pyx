"""OpenMP build flag and thread counts (tested in tests/test_core.py)."""
from cython.parallel cimport parallel

from smml._core._openmp cimport (
    SMML_OPENMP_ENABLED, omp_get_max_threads, omp_get_num_threads, threads_for)


def openmp_enabled():
    """True when the kernels were compiled with OpenMP."""
    return bool(SMML_OPENMP_ENABLED)


def omp_max_threads():
    """omp_get_max_threads(): follows OMP_NUM_THREADS and threadpoolctl limits."""
    return omp_get_max_threads()


def threads_in_parallel_region(int n_threads):
    """How many threads actually run a parallel region asked for n_threads.

    Used by the tests to prove that OpenMP really runs in parallel."""
    cdef int seen[1]
    seen[0] = 1
    with nogil, parallel(num_threads=n_threads):
        seen[0] = omp_get_num_threads()
    return seen[0]


def _threads_for(int n_threads, long long work, long long grain):
    """The kernels' threads_for (smml._core._openmp), exposed for the test that it is
    smml._threads.threads_for."""
    return threads_for(n_threads, work, grain)
