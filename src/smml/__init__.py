"""smml: the learning methods of "Statistical Methods for Machine Learning",
exactly as the course notes define them, on Cython + OpenMP kernels.

Families: ``smml.neighbors``, ``smml.tree``, ``smml.linear``, ``smml.ensemble``,
``smml.kernels``, ``smml.cluster``; risk tools: ``smml.losses``,
``smml.bounds``, ``smml.model_selection``, and ``smml.datasets`` (distributions
whose Bayes predictor is known); figures: ``smml.plot``; plain-Python
twins of every kernel: ``smml.reference``. Model files without pickle:
``smml.save(model, path)`` / ``smml.load(path)``. Run ``smml info`` and ``smml tour``.
"""
__version__ = "0.1.0"


def _load_openmp_runtime():
    """Load the kernels' OpenMP runtime with idle threads that spin briefly, then sleep.

    Between two parallel regions an idle OpenMP thread busy-waits by default (libgomp: about
    300,000 PAUSE iterations, some milliseconds; LLVM's libomp: 200 ms).  On a machine whose
    cores are shared (virtual machines, CI runners, two processes with OpenMP threads) a
    spinning thread holds a core that the thread it waits for needs, and the hypervisor
    deschedules spinning vCPUs: 2-thread fits ran many times slower than 1-thread ones there
    (bench/gradient_boosting.md).  Sleeping at once (``OMP_WAIT_POLICY=PASSIVE``) makes every
    parallel region pay a wake-up, which cost the quiet-machine speed of the kernels with short
    regions (k-means, small k-NN queries).  So unless the user chose a policy
    (``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``, ``KMP_BLOCKTIME``), smml's runtime starts with a
    short spin: ``GOMP_SPINCOUNT=30000`` (libgomp, a tenth of its default; as fast as the default
    on a quiet machine in bench/bench_grid.py's quick cells) and ``KMP_BLOCKTIME=1`` (libomp,
    1 ms).  The kernels give a parallel region enough work to pay for a wake-up (their grains).
    The variables are set only while the runtime reads them (its initialisation, forced here)
    and removed afterwards, so other libraries and child processes see the environment
    unchanged.  The wheels carry their own copy of the runtime; a runtime another library
    loaded before smml keeps the policy it started with."""
    import os

    ours = {"GOMP_SPINCOUNT": "30000", "KMP_BLOCKTIME": "1"}
    if any(os.environ.get(k) for k in ("OMP_WAIT_POLICY", *ours)):
        ours = {}                                   # the user's policy
    os.environ.update(ours)
    try:
        from smml._core import _openmp_helpers
        _openmp_helpers.omp_max_threads()           # LLVM's libomp reads its settings here
    finally:
        for k in ours:
            os.environ.pop(k, None)


_load_openmp_runtime()


def _check_simd_switch():
    """SMML_SIMD (smml/_core/include/smml_platform.h) lowers the kernels' vector path; a value the C does
    not know leaves the CPU's choice, which the user should hear about."""
    import os
    import warnings
    value = os.environ.get("SMML_SIMD")
    if value is not None and value not in ("scalar", "avx2", "avx512"):
        warnings.warn(f"SMML_SIMD={value!r} is not one of 'scalar', 'avx2', 'avx512': ignored, the "
                      f"kernels use the widest vector path this CPU runs", RuntimeWarning, stacklevel=2)


_check_simd_switch()

from smml._persist import InconsistentVersionWarning, load, save  # noqa: E402
from smml._threads import effective_n_threads, openmp_enabled  # noqa: E402

__all__ = ["__version__", "effective_n_threads", "openmp_enabled", "save", "load", "InconsistentVersionWarning"]
