"""The shared building blocks of smml._core and the thread-count policy."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from smml import effective_n_threads, openmp_enabled
from smml._core import _blas
from smml._core._openmp_helpers import omp_max_threads, threads_in_parallel_region

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


# ---- OpenMP ---------------------------------------------------------------

def test_openmp_is_enabled_in_the_build():
    assert openmp_enabled(), "smml was built without OpenMP"


def test_parallel_region_really_runs_two_threads():
    assert threads_in_parallel_region(2) == 2
    assert threads_in_parallel_region(1) == 1


def test_bundled_openmp_runtime_is_seen_by_threadpoolctl():
    apis = {m["user_api"] for m in threadpool_info()}
    assert "openmp" in apis


def test_threadpoolctl_limits_the_openmp_thread_count():
    with threadpool_limits(limits=1, user_api="openmp"):
        assert omp_max_threads() == 1
        assert effective_n_threads(None) == 1
        assert effective_n_threads(-1) == 1
    assert effective_n_threads(None) >= 1


def test_omp_num_threads_is_respected():
    code = "from smml import effective_n_threads as e; print(e(None), e(-1))"
    for n in ("1", "3"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={"OMP_NUM_THREADS": n, "PATH": ""}, check=True).stdout.split()
        assert out == [n, n]


def _openmp_display(env):
    """What the kernels' OpenMP runtime prints of its settings at start (OMP_DISPLAY_ENV), and
    what smml left of the wait settings in the environment."""
    code = ("import os, smml; print('left:', os.environ.get('OMP_WAIT_POLICY'), "
            "os.environ.get('GOMP_SPINCOUNT'), os.environ.get('KMP_BLOCKTIME'))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")} | env
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=env | {"OMP_DISPLAY_ENV": "VERBOSE"}, check=True)
    return r.stdout + r.stderr


@pytest.mark.skipif(not openmp_enabled(), reason="built without OpenMP")
def test_openmp_threads_spin_briefly_unless_the_user_chose():
    """smml's runtime starts with a short spin of idle threads (GOMP_SPINCOUNT=30000, a tenth
    of libgomp's default: long spins stall fork-joins on shared cores), the variables are
    removed after, and a user's own policy wins."""
    out = _openmp_display({})
    assert "left: None None None" in out
    if "OPENMP DISPLAY ENVIRONMENT" not in out or "GOMP_SPINCOUNT" not in out:
        pytest.skip("this OpenMP runtime does not print its spin count (OMP_DISPLAY_ENV)")
    assert re.search(r"GOMP_SPINCOUNT = '?30000(?!\d)", out), out
    out = _openmp_display({"OMP_WAIT_POLICY": "ACTIVE"})
    assert re.search(r"OMP_WAIT_POLICY = '?ACTIVE", out), out
    assert not re.search(r"GOMP_SPINCOUNT = '?30000(?!\d)", out), out
    assert "left: ACTIVE None None" in out


def test_n_jobs_policy():
    all_threads = effective_n_threads(None)
    assert effective_n_threads(-1) == all_threads
    assert effective_n_threads(1) == 1
    assert effective_n_threads(5) == 5
    # an absurd count is capped (libgomp aborted the process allocating 10^9 threads' table)
    from smml._threads import _MAX_PER_CPU, _usable_cpus
    cap = max(all_threads, _MAX_PER_CPU * _usable_cpus())
    assert effective_n_threads(10 ** 9) == cap == effective_n_threads(cap)
    assert effective_n_threads(-2) == max(1, all_threads - 1)
    assert effective_n_threads(-1000) == 1
    for bad in (0, 1.5, "2", True):
        with pytest.raises(ValueError, match="n_jobs"):
            effective_n_threads(bad)


def test_an_absurd_n_jobs_fits_instead_of_aborting():
    # regression: GradientBoostingClassifier(n_jobs=10**9) made libgomp abort the process ("Out of
    # memory allocating 224000001344 bytes"); run in a child so that a regression fails this test
    code = ("import numpy as np; from smml.ensemble import GradientBoostingClassifier as G; "
            "from smml.cluster import KMeans; X = np.random.default_rng(0).normal(size=(300, 3)); "
            "G(n_estimators=2, n_jobs=10**9).fit(X, X[:, 0] > 0); KMeans(3, n_jobs=10**9).fit(X); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


# ---- BLAS wrappers against numpy --------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_dot(dtype, rng):
    x, y = rng.standard_normal((2, 37)).astype(dtype)
    np.testing.assert_allclose(_blas.dot_memview(x, y), np.dot(x, y), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_axpy_and_scal(dtype, rng):
    x, y = rng.standard_normal((2, 23)).astype(dtype)
    expected = 2.5 * x + y
    _blas.axpy_memview(2.5, x, y)
    np.testing.assert_allclose(y, expected, **TOL[dtype])
    _blas.scal_memview(-0.5, y)
    np.testing.assert_allclose(y, -0.5 * expected, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_row_major(dtype, trans_a, trans_b, rng):
    m, n, k = 7, 5, 11
    A = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    B = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    C = rng.standard_normal((m, n)).astype(dtype)
    opA = A.T if trans_a else A
    opB = B.T if trans_b else B
    expected = -2.0 * opA @ opB + 0.5 * C
    _blas.gemm_memview(trans_a, trans_b, -2.0, A, B, 0.5, C)
    np.testing.assert_allclose(C, expected, **TOL[dtype])


def test_gemm_rejects_incompatible_shapes():
    A = np.ones((3, 4)); B = np.ones((5, 4)); C = np.zeros((3, 5))
    with pytest.raises(ValueError, match="incompatible"):
        _blas.gemm_memview(False, False, 1.0, A, B, 0.0, C)


# ---- a parallel kernel: identical results with 1 and 2 threads -------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_row_norms_identical_with_1_and_2_threads(dtype, rng):
    from smml._core._sums import row_norms_sq

    X = rng.standard_normal((1001, 37)).astype(dtype)
    one = row_norms_sq(X, 1)
    two = row_norms_sq(X, 2)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(one, (X.astype(np.float64) ** 2).sum(axis=1), rtol=1e-12)
    with threadpool_limits(limits=1, user_api="openmp"):
        np.testing.assert_array_equal(row_norms_sq(X, effective_n_threads(None)), two)
    assert row_norms_sq(X[:0], 2).shape == (0,)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans_a", [False, True])
def test_gemv_row_major(dtype, trans_a, rng):
    A = rng.standard_normal((7, 5)).astype(dtype)
    x = rng.standard_normal(7 if trans_a else 5).astype(dtype)
    y = rng.standard_normal(5 if trans_a else 7).astype(dtype)
    expected = -2.0 * (A.T if trans_a else A) @ x + 0.5 * y
    _blas.gemv_memview(trans_a, -2.0, A, x, 0.5, y)
    np.testing.assert_allclose(y, expected, **TOL[dtype])
    with pytest.raises(ValueError, match="incompatible"):
        _blas.gemv_memview(trans_a, 1.0, A, y, 0.0, x)


# ---- the one small-work threading rule ---------------------------------------

def test_threads_for_rule_and_its_kernel_twin():
    from smml._core._openmp_helpers import _threads_for
    from smml._threads import threads_for

    assert threads_for(8, 1999, 1000) == 1          # below 2 grains: one thread
    assert threads_for(8, 2000, 1000) == 2
    assert threads_for(8, 5999, 1000) == 5          # never more threads than whole grains
    assert threads_for(4, 10**9, 1000) == 4
    assert threads_for(1, 10**9, 1000) == 1
    for nt in (1, 2, 3, 8):
        for grain in (1, 7, 1000, 32_768):
            for work in (0, 1, grain, 2 * grain - 1, 2 * grain, 3 * grain + 1, 100 * grain, 2**40):
                assert _threads_for(nt, work, grain) == threads_for(nt, work, grain), (nt, work, grain)


def test_threads_for_asks_for_the_thread_count_only_for_enough_work():
    from smml._threads import threads_for

    calls = []

    def n_threads():
        calls.append(1)
        return 3

    assert threads_for(n_threads, 10, 1000) == 1 and calls == []
    assert threads_for(n_threads, 10**6, 1000) == 3 and calls == [1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_col_sums_continued_is_numpys_column_sum_in_pieces(dtype):
    # smml.dask.KMeans chains the centring mean's sums through consecutive row blocks: bit for
    # bit numpy's X.sum(axis=0, dtype=float64), whatever the cuts
    from smml._core._sums import col_sums_continued

    rng = np.random.default_rng(4)
    X = (rng.normal(size=(30001, 5)) * 1e3 + 7).astype(dtype)
    for cuts in ([0, 30001], [0, 1, 2, 29999, 30001], [0, 4096, 8192, 30001]):
        acc = np.zeros(5)
        for a, b in zip(cuts[:-1], cuts[1:]):
            col_sums_continued(X[a:b], acc)
        np.testing.assert_array_equal(acc, X.sum(axis=0, dtype=np.float64))
    with pytest.raises(ValueError, match="one entry per column"):
        col_sums_continued(X, np.zeros(4))
