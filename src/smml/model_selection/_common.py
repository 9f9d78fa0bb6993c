"""What the estimates of :mod:`smml.model_selection` share: the checks of data, fold counts
and grids, the K folds, a fit scored by its per-example losses, the Hoeffding interval of an
estimate and a fold's error (000, "Evaluating a learning algorithm using external
cross-validation").
"""
from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any, Union

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold, ParameterGrid
from sklearn.utils import indexable
from sklearn.utils import _safe_indexing

from smml._typing import ArrayLike
from smml.bounds import hoeffding_interval


# ---- helpers ------------------------------------------------------------------
#: ``param_grid``: {name: values to try}, or a list of such grids (scikit-learn's ParameterGrid)
ParamGrid = Union[Mapping[str, Sequence[Any]], Sequence[Mapping[str, Sequence[Any]]]]


def _check_data(X: ArrayLike, y: ArrayLike) -> tuple[Any, Any, int]:
    X, y = indexable(X, y)
    if y is None:
        raise ValueError("y is required")
    y_arr = np.asarray(y)
    if y_arr.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y_arr.shape}")
    m = y_arr.shape[0]
    if m == 0:
        raise ValueError("X and y are empty")
    return X, y, m


def _check_K(name, K, m):
    if isinstance(K, bool) or not isinstance(K, numbers.Integral) or K < 2:
        raise ValueError(f"{name} must be an integer >= 2, got {K!r}")
    if K > m:
        raise ValueError(f"{name}={K} folds need at least {K} examples, got m={m} "
                         f"(K = m is leave-one-out)")
    return int(K)


def _check_grid(param_grid):
    if isinstance(param_grid, ParameterGrid):
        grid = param_grid
    else:
        if not isinstance(param_grid, (dict, list, tuple)) or len(param_grid) == 0:
            raise ValueError("param_grid must be a non-empty dict {name: list of values} or a list of such dicts")
        dicts = [param_grid] if isinstance(param_grid, dict) else list(param_grid)
        for d in dicts:
            if not isinstance(d, dict):
                raise ValueError(f"param_grid must contain dicts, got {type(d).__name__}")
            for k, v in d.items():
                if isinstance(v, (str, bytes)) or not hasattr(v, "__len__") or len(v) == 0:
                    raise ValueError(f"param_grid[{k!r}] must be a non-empty list of values, got {v!r}")
        try:
            grid = ParameterGrid(dicts)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"invalid param_grid: {exc}") from None
    thetas = list(grid)
    if not thetas:
        raise ValueError("param_grid is empty")
    return thetas


def _check_params_exist(estimator, thetas):
    valid = estimator.get_params(deep=True)
    for theta in thetas:
        for k in theta:
            if k not in valid:
                raise ValueError(f"param_grid names {k!r}, which is not a parameter of "
                                 f"{type(estimator).__name__} (parameters: {sorted(valid)})")


def _kfold(K, shuffle, random_state):
    return KFold(n_splits=K, shuffle=shuffle, random_state=random_state if shuffle else None)


def _losses(loss_fn, y, y_pred):
    out = np.asarray(loss_fn(np.asarray(y), np.asarray(y_pred)), dtype=np.float64)
    if out.shape != (np.asarray(y).shape[0],):
        raise ValueError(f"the loss must return one value per example, got shape {out.shape}")
    return out


def _predict(est, X, method):
    if method not in ("predict", "decision_function", "predict_proba"):
        raise ValueError(f"method must be 'predict', 'decision_function' or 'predict_proba', got {method!r}")
    out = getattr(est, method)(X)
    if method == "predict_proba":  # binary: probability of the class classes_[1] (y in {0, 1})
        out = np.asarray(out)
        if out.ndim != 2 or out.shape[1] != 2:
            raise ValueError("method='predict_proba' is supported for binary problems only")
        out = out[:, 1]
    return out


def _fit_eval(estimator, params, X_tr, y_tr, X_te, y_te, loss_fn, method):
    """Train a clone of A_theta on (X_tr, y_tr); its losses on (X_te, y_te)."""
    est = clone(estimator).set_params(**(params or {}))
    est.fit(X_tr, y_tr)
    return _losses(loss_fn, y_te, _predict(est, X_te, method))


def _fit_and_losses(estimator, params, X, y, train, test, loss_fn, method):
    """:func:`_fit_eval` on the training part (train) and the testing part (test) of a fold."""
    return _fit_eval(estimator, params, _safe_indexing(X, train), _safe_indexing(y, train),
                     _safe_indexing(X, test), _safe_indexing(y, test), loss_fn, method)


def _concat(a, b):
    """S_train + S_dev, keeping pandas objects (and their column names) as pandas."""
    if hasattr(a, "iloc") and hasattr(b, "iloc"):
        import pandas as pd

        return pd.concat([a, b], ignore_index=True)
    return np.concatenate([np.asarray(a), np.asarray(b)])


def _interval(losses, estimate, n, delta):
    if np.any(losses < 0) or np.any(losses > 1):
        raise ValueError("a Hoeffding interval needs a loss with values in [0, 1] "
                         "(000, 'Bounding the risk'); this loss took values outside [0, 1]")
    return hoeffding_interval(float(min(max(estimate, 0.0), 1.0)), n, delta)


def _fold_error(losses):
    # 000: l_{S_i}(h_i) = (K/m) sum_{S_i} l = mean over S_i when |S_i| = m/K
    return float(np.mean(losses))
