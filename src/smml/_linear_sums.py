"""Pieces of the linear learners' fits shared with smml.dask (the ground floor: both the
in-memory estimators of smml.linear and their distributed drivers use these, one copy):
the divergence error, the rows-per-thread grain of the compiled kernels, and the multinomial
logistic loss's sums over rows."""
import numpy as np
from scipy.special import logsumexp

from smml._core import _linear as _k
from smml.exceptions import DivergenceError

#: rows worth one thread of the parallel kernels (threads_for)
GRAIN = 2 * _k.CHUNK_ROWS


def raise_divergence(est, where, hint):
    raise DivergenceError(f"{type(est).__name__}: the weights became non-finite (overflow or NaN) "
                          f"{where}; {hint}")


def softmax_sums(X, yk, theta, K, fi, n, rw=None):
    """The multinomial loss's sums over the rows (X, yk) at theta = (W.ravel(), b): the summed
    cross-entropy sum_t (lse_t - z_t,yk_t) (or, with row weights ``rw``, their weighted sum),
    G^T X and the column sums of G (None without intercept), G = (softmax(Z) - onehot) / n
    (or * rw). ``n``: the rows of the whole problem. One copy for the in-memory fit (all rows
    at once) and smml.dask's (one row block at a time; the blocks' sums added in block order):
    on a single block the two are equal bit for bit."""
    d = X.shape[1]
    W = theta[:K * d].reshape(K, d)
    rows = np.arange(X.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):
        Z = X @ W.T
        if fi:
            Z += theta[K * d:]
        lse = logsumexp(Z, axis=1)
        ce = lse - Z[rows, yk]
        loss = float(np.sum(ce)) if rw is None else float(rw @ ce)
        G = np.exp(Z - lse[:, None])
        G[rows, yk] -= 1.0
        G = G / n if rw is None else G * rw[:, None]
        return loss, G.T @ X, (G.sum(axis=0) if fi else None)


def softmax_finish(est, loss, GX, Gb, theta, K, d, n, mean, lam):
    """(objective, gradient) from the sums of :func:`softmax_sums` (``mean``: loss / n)."""
    W = theta[:K * d].reshape(K, d)
    with np.errstate(over="ignore", invalid="ignore"):
        val = (loss / n if mean else loss) + 0.5 * lam * float(np.sum(W * W))
        grad = np.concatenate([(GX + lam * W).ravel(), Gb if Gb is not None else []])
    if not (np.isfinite(val) and np.all(np.isfinite(grad))):
        raise_divergence(est, "while evaluating the softmax loss", "rescale the features")
    return val, grad
