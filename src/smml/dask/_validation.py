"""smml.dask's inputs (dask arrays checked as the in-memory estimators check theirs), the
active cluster, and the split of a dask array's row blocks among its workers."""
import numpy as np
import dask
import dask.array as da

# ---- input validation ---------------------------------------------------------------------------

def _check_dask_X(X, n_features=None, name="X", what=None):
    """A 2-d numeric dask array of known chunk sizes, one block of columns; the feature count
    checked against ``n_features``. Finiteness is checked block by block when computed (the
    in-memory estimators validate each block)."""
    if not isinstance(X, da.Array):
        raise TypeError(f"{name} must be a dask array, got {type(X).__name__} "
                        "(use dask.array.from_array, or the in-memory estimator)")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d (n_samples, n_features), got a {X.ndim}-d dask array "
                         f"of shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {X.dtype}")
    if any(np.isnan(c) for c in X.chunks[0]) or np.isnan(X.shape[1]):
        raise ValueError(f"{name} has unknown chunk sizes: call {name}.compute_chunk_sizes() first")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {X.shape})")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {what or 'the estimator'} was fitted "
                         f"with {n_features} features")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    return X


def _check_dask_y(y, n, X_chunks):
    """y as a 1-d dask array of n entries chunked as the rows of X."""
    if not isinstance(y, da.Array):
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-d, got shape {y.shape}")
        if y.shape[0] != n:
            raise ValueError(f"X and y have inconsistent numbers of samples: {n} and {y.shape[0]}")
        y = da.from_array(y, chunks=(tuple(X_chunks),))
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got a {y.ndim}-d dask array")
    if y.shape[0] != n:
        raise ValueError(f"X and y have inconsistent numbers of samples: {n} and {y.shape[0]}")
    if y.chunks[0] != tuple(X_chunks):
        y = y.rechunk((X_chunks,))
    return y


def _as_dask(X, n_features, what):
    """(dask array, was it one): an ndarray query set becomes a dask array of one block per
    100,000 rows (numpy in, numpy out)."""
    if isinstance(X, da.Array):
        return _check_dask_X(X, n_features, what=what), True
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d (n_samples, n_features), got shape {X.shape}")
    return _check_dask_X(da.from_array(X, chunks=(100_000, -1)), n_features, what=what), False



def _stacked(blocks):
    """Consecutive row blocks as one array (the block itself when there is one: no copy)."""
    blocks = [np.asarray(b) for b in blocks]
    return blocks[0] if len(blocks) == 1 else np.concatenate(blocks)


def _distributed_client():
    """The ``distributed.Client`` that ``dask.compute`` would use, or None (dask's local
    schedulers)."""
    try:
        from distributed import Client
    except ImportError:       # pragma: no cover - distributed is part of the extra
        return None
    c = getattr(dask.base.get_scheduler(), "__self__", None)
    return c if isinstance(c, Client) else None


def _split_rows(sizes, parts):
    """Cut consecutive chunks of ``sizes`` rows into at most ``parts`` groups of consecutive
    chunks, as even in rows as the chunk boundaries allow. Returns the groups' first chunks
    and the number of chunks (ascending, no empty group)."""
    ends = np.concatenate(([0], np.cumsum(sizes)))
    bounds = [0]
    for g in range(1, parts):
        c = int(np.argmin(np.abs(ends - ends[-1] * g / parts)))
        if bounds[-1] < c < len(sizes):
            bounds.append(c)
    bounds.append(len(sizes))
    return bounds
