"""Where one Lloyd iteration of smml.cluster goes (issue 11): 200000 x 32, k=16, float32 and
float64, 1 and 2 threads; best of 30 calls of the kernel entry points, in ms:

- assign pass: the distance tile (gemm) + argmin + exact re-check of near-ties, no sums;
- accumulate pass: the float64 per-cluster sums alone (recompute_centroids);
- fused iter: lloyd_iter, both in one pass over X (what KMeans.fit runs per iteration);
- numpy X @ C.T: the bare distance product through OpenBLAS, for scale.

    OMP_NUM_THREADS=2 .venv/bin/python bench/experiments/profile_kmeans.py
"""
import time, numpy as np
from smml._core import _kmeans
from smml.cluster import _CHUNK_ROWS, _block_rows, _FAST_TILE, _Operands
from smml.neighbors import _euclidean_error_coef
from smml._core._sums import row_norms_sq
def best(f, r=30):
    ts = []
    for _ in range(r):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts) * 1e3, np.median(ts) * 1e3
for dt in (np.float32, np.float64):
    rng = np.random.default_rng(0)
    n, d, k = 200_000, 32, 16
    X = rng.normal(size=(n, d)).astype(dt)
    C = X[rng.choice(n, k, replace=False)].copy()
    ops = _Operands(X, None, dt)
    cn = row_norms_sq(C); coef = _euclidean_error_coef(d, dt)
    block = _block_rows(n, k, d); nb = -(-n // block)
    acc = np.empty((nb, k * (d + 2))); cnt = np.empty((nb, 2), np.intp); anch = np.empty((nb, k), np.intp)
    w = np.empty(0); mean = np.zeros(d)
    labels = np.full(n, -1, np.int32)
    Cn, Cgn, cnn = np.empty_like(C), np.empty_like(C), np.empty(k)
    _kmeans.lloyd_iter(ops.Xg, ops.X, ops.xn, w, C, C, cn, mean, False, False, coef, labels, Cn, Cn, cnn, acc, anch, cnt, block, _CHUNK_ROWS, _FAST_TILE, 2)
    for nt in (1, 2):
        lab = labels.copy()
        a = best(lambda: _kmeans.assign(ops.Xg, ops.X, ops.xn, w, C, C, cn, coef, lab, True, False, block, _CHUNK_ROWS, _FAST_TILE, nt))
        b = best(lambda: _kmeans.recompute_centroids(ops.Xg, ops.X, ops.xn, w, labels, C, C, cn, mean, False, False, Cn, Cn, cnn, acc, anch, cnt, block, nt))
        def it():
            lab2 = labels.copy()
            _kmeans.lloyd_iter(ops.Xg, ops.X, ops.xn, w, C, C, cn, mean, False, False, coef, lab2, Cn, Cn, cnn, acc, anch, cnt, block, _CHUNK_ROWS, _FAST_TILE, nt)
        c = best(it)
        cp = best(lambda: labels.copy())
        gm = best(lambda: X @ C.T)
        print(f"{np.dtype(dt).name} {nt} thr: assign pass {a[0]:.2f} ms | accumulate pass {b[0]:.2f} | fused iter {c[0]-cp[0]:.2f} | numpy X@C.T gemm {gm[0]:.2f} | stream read of X {X.nbytes/1e6:.0f} MB")
