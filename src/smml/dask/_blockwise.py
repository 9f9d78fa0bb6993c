"""``predict``, ``predict_proba`` and ``transform`` of any fitted smml estimator on a dask
array, block by block of rows."""
from __future__ import annotations

import numpy as np
import dask
import dask.array as da

from smml._typing import Estimator
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


def predict(estimator: Estimator, X: da.Array) -> da.Array:
    """``estimator.predict`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml estimator
        Any estimator with ``predict``; shipped once to the workers.
    X : dask array of shape (n_samples, n_features)
        Numeric, finite (checked block by block), as many features as the fit.

    Returns
    -------
    y_pred : dask array of shape (n_samples,)
        The in-memory ``estimator.predict(X)``, row blocks as those of X.

    See Also
    --------
    dask_ml.wrappers.ParallelPostFit : dask-ml's blockwise prediction of an in-memory
        estimator.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from smml.neighbors import KNNClassifier
    >>> from smml.dask import predict
    >>> clf = KNNClassifier(n_neighbors=1).fit([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1])
    >>> Xd = da.from_array(np.array([[0.5], [9.0], [12.0]]), chunks=2)
    >>> predict(clf, Xd).compute().tolist()
    [0, 1, 1]
    """
    return _blockwise(estimator, X, "predict")


def predict_proba(estimator: Estimator, X: da.Array) -> da.Array:
    """``estimator.predict_proba`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml classifier
        Any classifier with ``predict_proba``; shipped once to the workers.
    X : dask array of shape (n_samples, n_features)
        Numeric, finite (checked block by block), as many features as the fit.

    Returns
    -------
    proba : dask array of shape (n_samples, n_classes)
        The in-memory ``estimator.predict_proba(X)``, row blocks as those of X.

    See Also
    --------
    dask_ml.wrappers.ParallelPostFit : dask-ml's blockwise prediction of an in-memory
        estimator.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from smml.neighbors import KNNClassifier
    >>> from smml.dask import predict_proba
    >>> clf = KNNClassifier(n_neighbors=1).fit([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1])
    >>> Xd = da.from_array(np.array([[0.5], [9.0], [12.0]]), chunks=2)
    >>> predict_proba(clf, Xd).compute().tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    """
    return _blockwise(estimator, X, "predict_proba")


def transform(estimator: Estimator, X: da.Array) -> da.Array:
    """``estimator.transform`` on a dask array, block by block of rows (lazy).

    Parameters
    ----------
    estimator : fitted smml transformer
        Any estimator with ``transform`` (e.g. :class:`smml.cluster.KMeans`); shipped once
        to the workers.
    X : dask array of shape (n_samples, n_features)
        Numeric, finite (checked block by block), as many features as the fit.

    Returns
    -------
    X_new : dask array of shape (n_samples, n_outputs)
        The in-memory ``estimator.transform(X)``, row blocks as those of X.

    See Also
    --------
    dask_ml.wrappers.ParallelPostFit : dask-ml's blockwise transform of an in-memory
        estimator.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from smml.cluster import KMeans
    >>> from smml.dask import transform
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> km = KMeans(n_clusters=2, n_init=1, random_state=0).fit(X)
    >>> D = transform(km, da.from_array(np.array([[0.5], [9.0], [12.0]]), chunks=2))
    >>> D.shape
    (3, 2)
    >>> np.sort(D.compute(), axis=1).round(3).tolist()
    [[0.0, 10.0], [1.5, 8.5], [1.5, 11.5]]
    """
    return _blockwise(estimator, X, "transform")

