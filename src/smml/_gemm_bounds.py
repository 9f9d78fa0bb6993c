"""The exact-distance error bounds of the gemm-based Euclidean searches, and the centring
they assume (shared by ``smml.neighbors`` and ``smml.cluster``).

A squared distance computed through a matrix product (gemm) on centred, rounded rows
differs from the exactly computed one by at most a known multiple of S^2; the searches
keep every candidate within that bound and settle them with exact distances.
"""
import numpy as np

__all__ = ["euclidean_error_coef", "euclidean_error_bound", "relative_slack", "centre"]


def euclidean_error_coef(d, dtype):
    """c such that c S^2 rigorously bounds |gemm-approximated - exactly-computed| squared
    distance (see :func:`euclidean_error_bound`; used by smml.neighbors and smml.cluster)."""
    u = 2.0 ** -24 if dtype == np.float32 else 2.0 ** -53
    u64 = 2.0 ** -53
    return (2 * d + 8) * (u + u64) * 1.1


def euclidean_error_bound(q_norm, radius, d, dtype):
    """A rigorous bound on |gemm-approximated - exactly-computed| squared distance.

    Centred data x~ = fl(x - mu), y~ (rounded to ``dtype``, unit roundoff u; float64's
    is u64) and S = ||x~|| + max ||y~||. The gemm runs on the augmented rows [x~, -1/2]
    and [y~, fl(||y~||^2)] (see ``centre``), so the tile, times -2, holds ||y~||^2 -
    2 x~.y~ and the key adds ||x~||^2 in float64. The error terms, each a multiple of S^2:
    centring 2u (||x~ - y~||^2 vs ||x - y||^2); ||y~||^2 rounded to ``dtype``, u; the
    dot product of d + 1 terms in ``dtype``, 2 gamma_(d+1) (||x~|| ||y~|| + ||y~||^2 / 2)
    <= 2 (d + 1) u (1/4 + 1/2) = 1.5 (d + 1) u (to first order); the float64 norm of x~
    and the float64 addition (d + 1) u64; the float64 "exact" sum itself (d + 2) u64. In
    all about (1.5 d + 4.5) u + (2d + 3) u64; we use (2d + 8)(u + u64) * 1.1, i.e. at
    least 1.45 times more. (The plain tile ||x~||^2 - 2 x~.y~ + ||y~||^2 with float64
    norms, which ``_knn.knn_gemm`` also accepts, needs less: (d/2 + 2) u + (2d + 4) u64.)
    """
    s = np.sqrt(q_norm) + radius
    return euclidean_error_coef(d, dtype) * s * s + 1e-300


def relative_slack(d, dtype):
    """delta of ``_knn._pair_eps``: a relative bound (with a factor 2 to spare) on how far
    sqrt of a computed centred squared norm (:func:`centre`: rows rounded to ``dtype``,
    unit roundoff u, then squared and summed in float64) is from the real norm of the
    centred row, u + (d/2 + 2) u64, and on how far the float64 exact key is from the real
    squared distance, (d + 2) u64."""
    u = 2.0 ** -24 if dtype == np.float32 else 2.0 ** -53
    u64 = 2.0 ** -53
    return 2.0 * (u + (d + 4) * u64) + 1e-15


def centre(A, mu, dtype, augment=None):
    """(A - mu) rounded to ``dtype``, and the float64 squared norms of the rounded rows.

    ``augment`` "norm" (training rows) or "half" (queries) appends a column: the row's
    squared norm rounded to ``dtype``, or -1/2; the gemm of the two augmented matrices
    times -2 is then ||t||^2 - 2 q.t (``_knn.knn_gemm`` with no ``t_norm``)."""
    n, d = A.shape
    out = np.empty((n, d + (augment is not None)), dtype=dtype)
    norms = np.empty(n, dtype=np.float64)
    step = max(1, (1 << 20) // max(1, d))
    for s in range(0, n, step):
        block = np.subtract(A[s:s + step], mu, dtype=np.float64)
        out[s:s + step, :d] = block
        if dtype != np.float64:
            block = out[s:s + step, :d].astype(np.float64)
        norms[s:s + step] = np.einsum("ij,ij->i", block, block)
    if augment == "norm":
        out[:, d] = norms
    elif augment == "half":
        out[:, d] = -0.5
    return out, norms
