"""``predict``, ``predict_proba`` and ``transform`` of any fitted smml estimator on a dask
array, block by block of rows."""
import numpy as np
import dask
import dask.array as da

from smml._validation import check_is_fitted
from smml.dask._validation import _check_dask_X


def _call(est, method, Xb):
    return np.asarray(getattr(est, method)(Xb))


def _blockwise(estimator, X, method):
    if not hasattr(estimator, method):
        raise AttributeError(f"{type(estimator).__name__} has no {method}")
    check_is_fitted(estimator)
    X = _check_dask_X(X, getattr(estimator, "n_features_in_", None), what=type(estimator).__name__)
    # one row tells the output's dtype and width (an exception here is the estimator's own)
    probe = _call(estimator, method, X[:1].compute())
    est = dask.delayed(estimator, pure=True)          # one copy in the graph, shared by the blocks
    if probe.ndim == 1:
        return da.map_blocks(_call, est, method, X, dtype=probe.dtype, drop_axis=1,
                             meta=np.empty((0,), dtype=probe.dtype))
    return da.map_blocks(_call, est, method, X, dtype=probe.dtype,
                         chunks=(X.chunks[0], (probe.shape[1],)),
                         meta=np.empty((0, 0), dtype=probe.dtype))


def predict(estimator, X):
    """``estimator.predict`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml estimator
        Any estimator with ``predict``; shipped once to the workers.
    X : dask array of shape (n_samples, n_features)
        Numeric, finite (checked block by block), as many features as the fit.

    Returns
    -------
    dask array of shape (n_samples,)
        The in-memory ``estimator.predict(X)``, row blocks as those of X.
    """
    return _blockwise(estimator, X, "predict")


def predict_proba(estimator, X):
    """``estimator.predict_proba`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml classifier with ``predict_proba``
    X : dask array of shape (n_samples, n_features)

    Returns
    -------
    dask array of shape (n_samples, n_classes)
    """
    return _blockwise(estimator, X, "predict_proba")


def transform(estimator, X):
    """``estimator.transform`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml transformer (e.g. :class:`smml.cluster.KMeans`)
    X : dask array of shape (n_samples, n_features)

    Returns
    -------
    dask array of shape (n_samples, n_outputs)
    """
    return _blockwise(estimator, X, "transform")

