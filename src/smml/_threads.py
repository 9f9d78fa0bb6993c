"""Thread counts for the OpenMP kernels, and BLAS pinning around them.

``effective_n_threads(n_jobs)`` is the one place that turns an estimator's
``n_jobs`` into the number of OpenMP threads a kernel gets:

- ``None`` or ``-1``: every usable core, i.e. ``omp_get_max_threads()`` (which
  follows ``OMP_NUM_THREADS`` and ``threadpoolctl.threadpool_limits(...,
  user_api="openmp")``), capped by the CPUs this process may run on (affinity
  and cgroup quotas) unless ``OMP_NUM_THREADS`` is set explicitly;
- ``-k`` (k > 1): that count plus 1 minus k, at least 1 (joblib's convention);
- ``k > 0``: k threads, at most ``_MAX_PER_CPU`` per usable CPU (more only oversubscribes
  the cores; a count like 10^9 made libgomp abort the process allocating its thread table);
- ``0``: a ``ValueError``.

Without OpenMP in the build every kernel runs on one thread.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import numbers
import os
import sys

from smml._core._openmp_helpers import omp_max_threads, openmp_enabled as _openmp_enabled

__all__ = ["check_n_jobs", "effective_n_threads", "threads_for", "openmp_enabled", "blas_single_thread", "blas_threads",
           "joblib_backend_active", "engine_errors", "run_tasks"]


@functools.lru_cache(maxsize=1)
def _usable_cpus():
    import joblib

    return max(1, int(joblib.cpu_count(only_physical_cores=False)))


def _all_threads():
    max_threads = omp_max_threads()
    if os.environ.get("OMP_NUM_THREADS"):  # an explicit request wins over the CPU count
        return max(1, max_threads)
    return max(1, min(max_threads, _usable_cpus()))


#: the most OpenMP threads a positive n_jobs gets, per usable CPU (see the module doc)
_MAX_PER_CPU = 8


def check_n_jobs(n_jobs):
    """Raise ``ValueError`` unless ``n_jobs`` is None or a non-zero integer (the one check of
    ``n_jobs`` outside the estimators' parameter specs: ``smml.model_selection`` uses it too)."""
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)):
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    if n_jobs == 0:
        raise ValueError("n_jobs=0 is not a thread count: use None or -1 for all cores, or a positive integer")


def openmp_enabled() -> bool:
    """Whether the kernels were compiled with OpenMP (else they run serially).

    Returns
    -------
    bool
        True when the compiled kernels run their loops on OpenMP threads.

    Examples
    --------
    >>> from smml import openmp_enabled
    >>> isinstance(openmp_enabled(), bool)
    True
    """
    return _openmp_enabled()


def effective_n_threads(n_jobs: int | None = None) -> int:
    """Number of OpenMP threads to use for ``n_jobs`` (see the module doc).

    Parameters
    ----------
    n_jobs : None or int, default=None
        None or -1: every usable core; -k (k > 1): that count plus 1 minus k, at
        least 1; k > 0: k, at most 8 per usable CPU. 0 raises ``ValueError``.

    Returns
    -------
    int
        The number of threads, at least 1 (1 without OpenMP in the build).

    Examples
    --------
    >>> from smml import effective_n_threads
    >>> effective_n_threads(1)
    1
    >>> effective_n_threads(None) >= 1
    True
    """
    check_n_jobs(n_jobs)
    if not openmp_enabled():
        return 1
    if n_jobs is None or n_jobs == -1:
        return _all_threads()
    if n_jobs < 0:
        return max(1, _all_threads() + 1 + int(n_jobs))
    return min(int(n_jobs), max(_all_threads(), _MAX_PER_CPU * _usable_cpus()))


def threads_for(n_threads, work, grain):
    """How many of ``n_threads`` threads to start for ``work`` units of work.

    ``grain`` is the least work worth a thread of its own (each family names
    its grain once, in its own units: rows, rows x features, flops...): below
    ``2 * grain`` one thread runs alone, and never more threads than whole
    grains of work. This is the one "too small to parallelise" rule of smml.

    ``n_threads`` may be a callable returning the count (e.g. an estimator's
    ``_n_threads``): it is then called only when the work is worth several
    threads, so small calls (predict on a few rows) do not pay for the query.
    """
    if work < 2 * grain:
        return 1
    if callable(n_threads):
        n_threads = n_threads()
    if n_threads <= 1:
        return 1
    return int(max(1, min(n_threads, work // grain)))


@functools.lru_cache(maxsize=1)
def _controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


class _NoLimit:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


#: flops worth a BLAS thread of their own: BLAS libraries run products below 2 grains on one
#: thread anyway
BLAS_GRAIN = 1 << 21


def blas_single_thread(work=None):
    """Context manager pinning BLAS to one thread while our OpenMP threads call it.

    A kernel that calls BLAS from inside a ``prange`` must not let BLAS spawn its
    own threads too (oversubscription). Limiting costs tens of microseconds, so
    for small calls (``work`` flops that BLAS would run on one thread anyway,
    ``threads_for(2, work, BLAS_GRAIN) == 1``) nothing is limited.
    """
    if work is not None and threads_for(2, work, BLAS_GRAIN) == 1:
        return _NoLimit()
    return _controller().limit(limits=1, user_api="blas")


def blas_threads(n_threads):
    """Context manager limiting BLAS / LAPACK to ``n_threads`` threads (an estimator's
    ``n_jobs`` for a LAPACK call it makes directly, e.g. a Cholesky factorisation)."""
    return _controller().limit(limits=max(1, int(n_threads)), user_api="blas")


def joblib_backend_active():
    """True inside a ``joblib.parallel_config`` / ``parallel_backend`` context that names a
    backend (e.g. ``"dask"``, ``"ray"``, ``"loky"``), set by the caller: then work that smml
    would run in its own thread pool (bagging and forest fits) goes through
    ``joblib.Parallel`` instead, so that the chosen engine runs it. False in a call nested in
    a task that joblib (or a Dask worker) already runs: there the outer level spreads the
    work, and smml's own pool is the cheaper one. Never imports dask."""
    try:
        from joblib.parallel import _backend
        from joblib._utils import _Sentinel
    except ImportError:        # a joblib without the config machinery: no context can be active
        return False
    cfg = getattr(_backend, "config", None)
    if not cfg:
        return False
    b = cfg.get("backend")
    if b is None or isinstance(b, _Sentinel):
        return False
    if getattr(b, "nesting_level", 0):      # a call nested in a task joblib runs: not the top level
        return False
    # inside a task on a Dask worker (e.g. a forest fitted in one fold of a CV run on the
    # cluster): the outer level already spreads the work; the fits stay on this worker
    dist = sys.modules.get("distributed")
    if dist is not None:
        try:
            dist.get_worker()
            return False
        except ValueError:
            pass
    return True


@contextlib.contextmanager
def engine_errors(what):
    """Turn the errors of a distributed engine losing work (a Dask worker killed: distributed's
    ``KilledWorker`` or a cancelled future; Ray's worker errors) into one clear
    ``RuntimeError``. Errors raised by the work itself (an estimator's fit) pass unchanged.
    Either way nothing partial is returned: the caller gets no result at all."""
    try:
        yield
    except Exception as exc:
        root = (type(exc).__module__ or "").split(".")[0]
        if root in ("distributed", "ray") or isinstance(exc, concurrent.futures.CancelledError):
            raise RuntimeError(
                f"{what}: the parallel engine lost work ({type(exc).__name__}: {exc}); a worker probably "
                "died. No partial result is returned: run it again (given random_state the result is "
                "the same).") from exc
        raise


def _apply(func, args, kwargs):
    """A joblib ``delayed`` task's call, as a Dask task (a module-level function: picklable)."""
    return func(*args, **kwargs)


def _identity(x):
    return x


def _joblib_dask_client():
    """The ``distributed.Client`` of an active joblib ``"dask"`` backend at the top level
    (:func:`joblib_backend_active`), else None. Never imports dask."""
    if not joblib_backend_active():
        return None
    from joblib.parallel import get_active_backend

    backend = get_active_backend()[0]
    if type(backend).__name__ != "DaskDistributedBackend":
        return None
    return getattr(backend, "client", None)


def _dask_results(client, tasks):
    """The results of joblib ``delayed`` tasks run as Dask futures of ``client``, in order (a
    generator). joblib's dask backend was seen to wait forever in its result retrieval after a
    worker died (issue 32); as plain futures the scheduler runs a lost task again
    (``distributed.scheduler.allowed-failures`` times, then ``KilledWorker``) and every wait
    ends. An array argument shared by several tasks travels once, as a task of its own whose
    input the scheduler keeps: a copy lost with a worker is recomputed, never missing."""
    seen, shipped = {}, {}
    for _, args, kwargs in tasks:
        for a in list(args) + list(kwargs.values()):
            if type(a).__module__.split(".")[0] in ("numpy", "scipy", "pandas"):
                seen[id(a)] = seen.get(id(a), 0) + 1

    def ship(a):
        i = id(a)
        if seen.get(i, 0) < 2:
            return a
        if i not in shipped:
            shipped[i] = client.submit(_identity, a, pure=False)
        return shipped[i]

    futures = [client.submit(_apply, func, [ship(a) for a in args], {k: ship(v) for k, v in kwargs.items()},
                             pure=False)
               for func, args, kwargs in tasks]
    for f in futures:
        yield f.result()


def run_tasks(tasks, n_jobs, verbose, desc, unit="fit"):
    """Run joblib ``delayed`` tasks through ``joblib.Parallel`` (threads by default, the
    engine of an active ``joblib.parallel_config`` otherwise; under its ``"dask"`` backend
    as Dask futures of the backend's client, :func:`_dask_results`), results in order; a
    progress bar when ``verbose``; a lost worker is one clear error (:func:`engine_errors`)
    or, where the scheduler ran the lost task again, the exact result."""
    from joblib import Parallel

    from smml._progress import progress

    tasks = list(tasks)
    with engine_errors(desc):
        client = _joblib_dask_client()
        if client is not None:
            results = _dask_results(client, tasks)
        else:
            results = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(tasks)
        return list(progress(results, total=len(tasks), desc=desc, verbose=verbose, unit=unit))
