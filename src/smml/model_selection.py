"""Risk estimates and hyper-parameter tuning of the course notes.

- :func:`empirical_risk`: the average loss of a fitted predictor on a sample
  (000, "Bounding the risk": the test error).
- :func:`cv_estimate`: the K-fold CV estimate (000, "Evaluating a learning
  algorithm using external cross-validation"; leave-one-out when K = m).
- :func:`tune`: train/dev tuning over a grid with a refit on the whole
  training set (000, "Tuning hyperparameters on a given training set").
- :func:`nested_cv_estimate`: the nested CV estimate (003, section 6,
  "Hyperparameter Tuning and Risk Estimates", Algorithm 1).

scikit-learn is used for plumbing only (``KFold``, ``ParameterGrid``,
``clone``, ``train_test_split``) and joblib runs folds in parallel. Each
estimate can come with its Chernoff-Hoeffding interval
(:func:`smml.bounds.hoeffding_interval`), which needs a loss with values in
[0, 1]: asking for it with a loss that takes a value outside [0, 1] raises.
"""
import numbers
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import KFold, ParameterGrid, train_test_split
from sklearn.utils import indexable
from sklearn.utils import _safe_indexing

from smml._validation import check_random_state
from smml.bounds import _check_delta, hoeffding_interval
from smml.losses import get_loss

__all__ = ["empirical_risk", "cv_estimate", "tune", "nested_cv_estimate", "TuneResult",
           "NestedCVResult"]


# ---- helpers ------------------------------------------------------------------

def _check_n_jobs(n_jobs):
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
                               or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")


def _check_data(X, y):
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


def _seed_from(random_state):
    """An int or None usable twice with identical results (KFold / train_test_split)."""
    if random_state is None or (isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)):
        return random_state
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


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


# ---- empirical risk -----------------------------------------------------------

def empirical_risk(estimator, X, y, loss="zero_one", method="predict", return_interval=False, delta=0.05):
    """Average loss of a FITTED ``estimator`` on (X, y).

    000, "Bounding the risk": the test error (1/n) sum_t l(y_t, h(x_t)). With
    ``return_interval`` also returns the Chernoff-Hoeffding interval (valid when
    (X, y) was not used to train the estimator and the loss lies in [0, 1]).

    Parameters
    ----------
    loss : str or callable
        A name of :data:`smml.losses.LOSSES` or ``loss(y, y_pred) -> per-example losses``.
    method : {"predict", "decision_function", "predict_proba"}
        How predictions are made ("decision_function" for margin losses,
        "predict_proba" for the logarithmic loss of a binary {0, 1} problem).

    Returns
    -------
    risk : float, or (risk, (low, high)) with ``return_interval``.
    """
    loss_fn = get_loss(loss)
    if return_interval:
        _check_delta(delta)        # before any fitting, not after it
    X, y, n = _check_data(X, y)
    losses = _losses(loss_fn, y, _predict(estimator, X, method))
    risk = float(np.mean(losses))
    if return_interval:
        return risk, _interval(losses, risk, n, delta)
    return risk


# ---- K-fold CV estimate -------------------------------------------------------

def _cv_fold_losses(estimator, params, X, y, K, loss_fn, shuffle, random_state, method, parallel):
    """The losses of h_i = A_theta(S_{-i}) on S_i, one array per fold, and the CV estimate."""
    folds = list(_kfold(K, shuffle, random_state).split(np.zeros((len(y), 1))))
    per_fold = parallel(delayed(_fit_and_losses)(estimator, params, X, y, tr, te, loss_fn, method)
                        for tr, te in folds)
    return per_fold, float(np.mean([_fold_error(l) for l in per_fold]))


def cv_estimate(estimator, X, y, K=5, loss="zero_one", shuffle=False, random_state=None, n_jobs=None,
                return_interval=False, delta=0.05, method="predict"):
    """The K-fold cross-validation estimate l_S^CV(A) of the expected risk of A.

    000, "Evaluating a learning algorithm using external cross-validation"
    (also 003, section 6): S is split into folds S_1, ..., S_K; for each i a
    clone of ``estimator`` is trained on S_{-i} = S \\ S_i, giving h_i = A(S_{-i});
    its rescaled error on the testing part is l_{S_i}(h_i) = (K/m) sum_{(x, y) in S_i}
    l(y, h_i(x)); the estimate is (1/K) sum_i l_{S_i}(h_i). ``K = m`` is
    leave-one-out.

    Folds are those of scikit-learn's ``KFold``: without ``shuffle`` they are
    consecutive (S_1 = first m/K examples, ... as in the notes' example). When K
    does not divide m (the notes assume it does) the first m mod K folds have
    one extra example and each fold's error is its mean loss
    (1/|S_i|) sum_{S_i} l, which equals the notes' (K/m) sum when K divides m.

    Parameters
    ----------
    K : int, 2 <= K <= m.
    loss : str or callable (see :func:`empirical_risk`).
    shuffle, random_state : shuffle S before splitting (KFold's semantics).
    n_jobs : int or None
        Folds trained in parallel by joblib (None: joblib's default, 1 unless in a
        ``joblib.parallel_config`` context). Results do not depend on it. Threads
        are preferred: smml's kernels release the GIL, and threads need no
        pickling or data copies (``joblib.parallel_config(backend="loky")``
        selects processes, e.g. for pure-Python estimators).
    return_interval, delta : also return the Hoeffding interval of 000,
        "Bounding the risk", with n = m. Each example is tested once, by a
        predictor not trained on it; the interval is the notes' test-set
        interval applied to the m pooled test losses (a heuristic for CV, since
        the K predictors differ); [0, 1]-valued losses only.

    Returns
    -------
    estimate : float, or (estimate, (low, high)) with ``return_interval``.
    """
    loss_fn = get_loss(loss)
    if return_interval:
        _check_delta(delta)        # before any fitting, not after it
    _check_n_jobs(n_jobs)
    X, y, m = _check_data(X, y)
    K = _check_K("K", K, m)
    per_fold, estimate = _cv_fold_losses(estimator, None, X, y, K, loss_fn, shuffle, _seed_from(random_state),
                                         method, Parallel(n_jobs=n_jobs, prefer="threads"))
    if return_interval:
        return estimate, _interval(np.concatenate(per_fold), estimate, m, delta)
    return estimate


# ---- train/dev tuning ---------------------------------------------------------

@dataclass
class TuneResult:
    """Outcome of :func:`tune`.

    best_params_ : the grid point with the smallest dev error (first in grid order on ties).
    best_estimator_ : A_{best} refit on the whole training set (None if ``refit=False``).
    best_dev_error_ : its dev error.
    dev_errors_ : list of (params, dev error) in grid order.
    dev_interval_ : Hoeffding interval of the best dev error (if requested); note that
        the dev error of the selected theta is optimistically biased.
    """
    best_params_: dict
    best_estimator_: Any
    best_dev_error_: float
    dev_errors_: list
    dev_interval_: Optional[tuple] = None


def tune(estimator, param_grid, X, y, dev_size=0.2, dev_set=None, loss="zero_one", shuffle=True,
         random_state=None, refit=True, n_jobs=None, method="predict", return_interval=False, delta=0.05):
    """Train/dev tuning over a grid, then a refit on the whole training set.

    000, "Tuning hyperparameters on a given training set": the training data S
    is split into S_train and S_dev; A_theta is run on S_train for each theta of
    the grid Theta_0 and tested on S_dev; the final predictor is A_theta* run
    once more on the whole of S, theta* the grid point with the smallest dev
    error (ties: the first in grid order, that is ``ParameterGrid``'s order).

    Parameters
    ----------
    param_grid : dict {name: values} or list of such dicts (``ParameterGrid``).
    dev_size : float in (0, 1) or int
        Size of S_dev carved out of (X, y) (``train_test_split``'s semantics).
    dev_set : (X_dev, y_dev), optional
        A given dev set instead: (X, y) is S_train and S = S_train + S_dev is
        used for the refit.
    shuffle, random_state : how S_dev is drawn (``train_test_split``).
    n_jobs : grid points trained in parallel by joblib.

    Returns
    -------
    TuneResult
    """
    loss_fn = get_loss(loss)
    if return_interval:
        _check_delta(delta)        # before any fitting, not after it
    _check_n_jobs(n_jobs)
    thetas = _check_grid(param_grid)
    _check_params_exist(estimator, thetas)
    X, y, m = _check_data(X, y)
    if dev_set is not None:
        if not isinstance(dev_set, (tuple, list)) or len(dev_set) != 2:
            raise ValueError("dev_set must be a pair (X_dev, y_dev)")
        X_dev, y_dev, n_dev = _check_data(*dev_set)
        X_tr, y_tr = X, y
    else:
        if isinstance(dev_size, bool) or not isinstance(dev_size, numbers.Real) or \
                (isinstance(dev_size, numbers.Integral) and not 1 <= dev_size < m) or \
                (not isinstance(dev_size, numbers.Integral) and not 0 < dev_size < 1):
            raise ValueError(f"dev_size must be a fraction in (0, 1) or an integer in [1, m-1] "
                             f"(m = {m}), got {dev_size!r}")
        X_tr, X_dev, y_tr, y_dev = train_test_split(X, y, test_size=dev_size, shuffle=shuffle,
                                                    random_state=_seed_from(random_state) if shuffle else None)
        n_dev = len(y_dev)

    dev_losses = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_fit_eval)(estimator, t, X_tr, y_tr, X_dev, y_dev, loss_fn, method) for t in thetas)
    errors = [float(np.mean(l)) for l in dev_losses]
    best = int(np.argmin(errors))  # first minimum in grid order
    best_est = None
    if refit:
        best_est = clone(estimator).set_params(**thetas[best])
        if dev_set is None:
            best_est.fit(X, y)
        else:
            X_all, y_all = _concat(X_tr, X_dev), _concat(y_tr, y_dev)
            best_est.fit(X_all, y_all)
    interval = _interval(dev_losses[best], errors[best], n_dev, delta) if return_interval else None
    return TuneResult(best_params_=dict(thetas[best]), best_estimator_=best_est,
                      best_dev_error_=errors[best], dev_errors_=list(zip(thetas, errors)),
                      dev_interval_=interval)


# ---- nested CV ----------------------------------------------------------------

@dataclass
class NestedCVResult:
    """Outcome of :func:`nested_cv_estimate` (003, section 6, Algorithm 1).

    estimate : (eps_1 + ... + eps_K) / K.
    fold_errors : eps_i = l_{S_i}(h_i) for each outer fold.
    chosen_params : theta_i chosen by the internal CV on S_{-i}, per outer fold.
    inner_cv_errors : (K_outer, |Theta_0|) array of the internal CV estimates
        l^CV_{S_{-i}}(A_theta), grid in ``params`` order.
    params : the grid Theta_0 in order.
    interval : Hoeffding interval (with ``return_interval``), n = m.
    """
    estimate: float
    fold_errors: list
    chosen_params: list
    inner_cv_errors: np.ndarray
    params: list
    interval: Optional[tuple] = field(default=None)


def _nested_outer_fold(estimator, thetas, X, y, train, test, K_inner, loss_fn, shuffle, inner_seed, method):
    X_tr, y_tr = _safe_indexing(X, train), _safe_indexing(y, train)
    serial = Parallel(n_jobs=None)
    # line 4: run CV on S_{-i} for each theta of Theta_0
    cv = [_cv_fold_losses(estimator, theta, X_tr, y_tr, K_inner, loss_fn, shuffle, inner_seed,
                          method, serial)[1] for theta in thetas]
    best = int(np.argmin(cv))  # theta_i: first minimiser in grid order
    # lines 5-6: retrain A_{theta_i} on S_{-i}, error on S_i
    losses = _fit_and_losses(estimator, thetas[best], X, y, train, test, loss_fn, method)
    return cv, best, losses


def nested_cv_estimate(estimator, param_grid, X, y, K_outer=5, K_inner=5, loss="zero_one", shuffle=False,
                       random_state=None, n_jobs=None, method="predict", return_interval=False,
                       delta=0.05):
    """The nested K-fold CV estimate of E[min_theta l_D(A_theta)].

    003, section 6, "Hyperparameter Tuning and Risk Estimates", Algorithm 1 (and
    000, "Tuning parameters via nested cross-validation"):

    1. split S into folds S_1, ..., S_K (``K_outer``);
    2. for i = 1..K: S_{-i} = S \\ S_i; run K_inner-fold CV on S_{-i} for each
       theta in the grid and take theta_i = argmin_theta l^CV_{S_{-i}}(A_theta)
       (ties: the first theta in grid order); retrain h_i = A_{theta_i}(S_{-i});
       eps_i = l_{S_i}(h_i);
    3. output (eps_1 + ... + eps_K) / K.

    Folds follow :func:`cv_estimate` (consecutive ``KFold`` folds; the mean loss
    per fold when K does not divide the size). With ``shuffle``, the outer split
    and every inner split use seeds derived once from ``random_state``.
    Outer folds run in parallel with joblib (``n_jobs``).

    Returns
    -------
    NestedCVResult
    """
    loss_fn = get_loss(loss)
    if return_interval:
        _check_delta(delta)        # before any fitting, not after it
    _check_n_jobs(n_jobs)
    thetas = _check_grid(param_grid)
    _check_params_exist(estimator, thetas)
    X, y, m = _check_data(X, y)
    K_outer = _check_K("K_outer", K_outer, m)
    smallest_train = m - (m // K_outer + (1 if m % K_outer else 0))
    if isinstance(K_inner, bool) or not isinstance(K_inner, numbers.Integral) or K_inner < 2:
        raise ValueError(f"K_inner must be an integer >= 2, got {K_inner!r}")
    if K_inner > smallest_train:
        raise ValueError(f"K_inner={K_inner} folds need at least {K_inner} examples in each outer "
                         f"training part S_-i, the smallest has {smallest_train}")
    rs = check_random_state(_seed_from(random_state)) if shuffle else None
    outer_seed = int(rs.randint(np.iinfo(np.int32).max)) if shuffle else None
    inner_seed = int(rs.randint(np.iinfo(np.int32).max)) if shuffle else None
    folds = list(_kfold(K_outer, shuffle, outer_seed).split(np.zeros((m, 1))))
    out = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_nested_outer_fold)(estimator, thetas, X, y, tr, te, int(K_inner), loss_fn, shuffle,
                                    inner_seed, method)
        for tr, te in folds)
    fold_errors = [_fold_error(l) for _, _, l in out]
    estimate = float(np.mean(fold_errors))
    interval = None
    if return_interval:
        interval = _interval(np.concatenate([l for _, _, l in out]), estimate, m, delta)
    return NestedCVResult(estimate=estimate, fold_errors=fold_errors,
                          chosen_params=[dict(thetas[b]) for _, b, _ in out],
                          inner_cv_errors=np.array([cv for cv, _, _ in out]),
                          params=[dict(t) for t in thetas], interval=interval)
