"""Hyper-parameter tuning: train/dev tuning with a refit (:func:`tune`, 000 "Tuning
hyperparameters on a given training set") and the nested CV estimate
(:func:`nested_cv_estimate`, 003 section 6, Algorithm 1).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
from joblib import delayed
from sklearn.base import clone
from sklearn.model_selection import train_test_split
from sklearn.utils import _safe_indexing

from smml._progress import check_verbose
from smml._random import replayable_seed
from smml._threads import check_n_jobs, run_tasks
from smml._typing import ArrayLike, Estimator, LossLike, PredictMethod, RandomStateLike, Verbose
from smml._validation import check_delta, check_random_state
from smml.losses import get_loss
from smml.model_selection._common import (ParamGrid, _check_data, _check_K, _check_grid, _check_params_exist,
                                          _kfold, _fit_eval, _fit_and_losses, _concat, _interval, _fold_error)
from smml.model_selection._estimates import _grid_cv


# ---- train/dev tuning ---------------------------------------------------------

@dataclass
class TuneResult:
    """Outcome of :func:`tune`.

    The constructor's parameters are the result's attributes.

    Parameters
    ----------
    best_params_ : dict
        The grid point with the smallest dev error (or CV estimate with ``cv``; first in
        grid order on ties).
    best_estimator_ : estimator or None
        A_{best} refit on the whole training set (None if ``refit=False``).
    best_dev_error_ : float or None
        Its dev error (None with ``cv``).
    dev_errors_ : list or None
        (params, dev error) pairs in grid order (None with ``cv``).
    dev_interval_ : tuple or None
        Hoeffding interval of the best dev error, or with ``cv`` of the best CV estimate
        (if requested); note that the error of the selected theta is optimistically
        biased.
    best_cv_estimate_ : float or None
        With ``cv=K``, min_theta l^CV_S(A_theta), 000's "best CV-estimate" of
        E[min_theta l_D(A_theta)] (None without ``cv``).
    cv_errors_ : list or None
        With ``cv=K``, (params, l^CV_S(A_theta)) pairs in grid order.

    Examples
    --------
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.model_selection import TuneResult, tune
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> res = tune(KNNClassifier(), {"n_neighbors": [1, 3, 5]}, X, y, cv=3, random_state=0)
    >>> isinstance(res, TuneResult), res.best_params_, res.best_dev_error_
    (True, {'n_neighbors': 3}, None)
    >>> print(f"{res.best_cv_estimate_:.3f}")
    0.183
    """
    best_params_: dict
    best_estimator_: Any
    best_dev_error_: Optional[float]
    dev_errors_: Optional[list]
    dev_interval_: Optional[tuple] = None
    best_cv_estimate_: Optional[float] = None
    cv_errors_: Optional[list] = None


def tune(estimator: Estimator, param_grid: ParamGrid, X: ArrayLike, y: ArrayLike, dev_size: float = 0.2,
         dev_set: tuple[ArrayLike, ArrayLike] | None = None, loss: LossLike = "zero_one", shuffle: bool = True,
         random_state: RandomStateLike = None, refit: bool = True, n_jobs: int | None = None,
         method: PredictMethod = "predict", return_interval: bool = False, delta: float = 0.05,
         verbose: Verbose = 0, cv: int | None = None) -> TuneResult:
    """Train/dev tuning over a grid, then a refit on the whole training set.

    000, "Tuning hyperparameters on a given training set": the training data S
    is split into S_train and S_dev; A_theta is run on S_train for each theta of
    the grid Theta_0 and tested on S_dev; the final predictor is A_theta* run
    once more on the whole of S, theta* the grid point with the smallest dev
    error (ties: the first in grid order, that is ``ParameterGrid``'s order).

    Parameters
    ----------
    estimator : estimator
        The learner A (cloned for each grid point).
    param_grid : dict or list of dict
        The grid Theta_0: ``{name: values}`` or a list of such dicts (``ParameterGrid``).
    X : array-like of shape (m, d)
        The training data S (S_train with ``dev_set``).
    y : array-like of shape (m,)
        Their labels.
    dev_size : float in (0, 1) or int, default=0.2
        Size of S_dev carved out of (X, y) (``train_test_split``'s semantics).
    dev_set : (X_dev, y_dev), optional
        A given dev set instead: (X, y) is S_train and S = S_train + S_dev is
        used for the refit.
    loss : str or callable, default="zero_one"
        See :func:`empirical_risk`.
    shuffle : bool, default=True
        Whether S_dev is drawn at random (``train_test_split``), or with ``cv``
        whether the folds are (``KFold``: consecutive folds unless ``shuffle``).
    random_state : int, RandomState instance or None
        Seeds that shuffle.
    refit : bool, default=True
        Refit A_theta* on the whole of S (``best_estimator_``).
    n_jobs : int or None
        Grid points (and folds) trained in parallel by joblib.
    method : {"predict", "decision_function", "predict_proba"}, default="predict"
        How predictions are made (see :func:`empirical_risk`).
    return_interval : bool, default=False
        Also compute the Hoeffding interval of the best dev error (or best CV
        estimate), ``dev_interval_``.
    delta : float, default=0.05
        Its confidence parameter.
    verbose : bool, int or "auto"
        A progress bar on stderr counting the fits (see :func:`cv_estimate`).
    cv : None or int K >= 2
        K-fold CV instead of the train/dev split: every theta is scored by its CV estimate
        l^CV_S(A_theta) on (X, y) (the folds of :func:`cv_estimate`, the same for every
        theta), theta* is the minimiser and the result reports the minimum,
        ``best_cv_estimate_`` = min_theta l^CV_S(A_theta): 000's "best CV-estimate", a cheap
        estimate of E[min_theta l_D(A_theta)] that "tends to underestimate" it (the nested
        CV estimate, :func:`nested_cv_estimate`, is the better one).

    Returns
    -------
    TuneResult
        The chosen grid point, the refit predictor and the errors of the grid.

    See Also
    --------
    sklearn.model_selection.GridSearchCV : Grid search scored by cross-validation.

    Examples
    --------
    >>> from smml.model_selection import tune
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> res = tune(KNNClassifier(), {"n_neighbors": [1, 3, 5]}, X, y, dev_size=0.25, random_state=0)
    >>> res.best_params_, type(res.best_estimator_).__name__
    ({'n_neighbors': 3}, 'KNNClassifier')
    >>> print([(p["n_neighbors"], f"{e:.3f}") for p, e in res.dev_errors_])
    [(1, '0.200'), (3, '0.133'), (5, '0.200')]
    """
    loss_fn = get_loss(loss)
    if return_interval:
        check_delta(delta)        # before any fitting, not after it
    check_n_jobs(n_jobs)
    check_verbose(verbose)
    thetas = _check_grid(param_grid)
    _check_params_exist(estimator, thetas)
    X, y, m = _check_data(X, y)
    if cv is not None:
        if dev_set is not None:
            raise ValueError("pass either cv (K-fold CV tuning) or dev_set (train/dev tuning), not both")
        K = _check_K("cv", cv, m)
        seed = replayable_seed(random_state) if shuffle else None
        per_theta, cv_errs = _grid_cv(estimator, thetas, X, y, K, loss_fn, shuffle, seed, method, n_jobs, verbose)
        best = int(np.argmin(cv_errs))  # first minimum in grid order
        best_est = clone(estimator).set_params(**thetas[best]).fit(X, y) if refit else None
        interval = (_interval(np.concatenate(per_theta[best]), cv_errs[best], m, delta)
                    if return_interval else None)
        return TuneResult(best_params_=dict(thetas[best]), best_estimator_=best_est, best_dev_error_=None,
                          dev_errors_=None, dev_interval_=interval, best_cv_estimate_=cv_errs[best],
                          cv_errors_=list(zip(thetas, cv_errs)))
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
                                                    random_state=replayable_seed(random_state) if shuffle else None)
        n_dev = len(y_dev)

    dev_losses = run_tasks((delayed(_fit_eval)(estimator, t, X_tr, y_tr, X_dev, y_dev, loss_fn, method)
                             for t in thetas), n_jobs, verbose, "grid")
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

    The constructor's parameters are the result's attributes.

    Parameters
    ----------
    estimate : float
        (eps_1 + ... + eps_K) / K.
    fold_errors : list of float
        eps_i = l_{S_i}(h_i) for each outer fold.
    chosen_params : list of dict
        theta_i chosen by the internal CV on S_{-i}, per outer fold.
    inner_cv_errors : ndarray of shape (K_outer, |Theta_0|)
        The internal CV estimates l^CV_{S_{-i}}(A_theta), grid in ``params`` order.
    params : list of dict
        The grid Theta_0 in order.
    interval : tuple or None
        Hoeffding interval (with ``return_interval``), n = m.
    best_cv_estimate : float or None
        min_theta l^CV_S(A_theta) on the whole S with the outer folds, 000's "best
        CV-estimate" of the same quantity, cheaper and biased low (None with
        ``best_cv=False``).
    cv_errors : ndarray of shape (|Theta_0|,) or None
        The l^CV_S(A_theta) it is the minimum of (None with ``best_cv=False``).

    Examples
    --------
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.model_selection import NestedCVResult, nested_cv_estimate
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> res = nested_cv_estimate(KNNClassifier(), {"n_neighbors": [1, 5]}, X, y, K_outer=3, K_inner=3)
    >>> isinstance(res, NestedCVResult), len(res.fold_errors), res.inner_cv_errors.shape
    (True, 3, (3, 2))
    """
    estimate: float
    fold_errors: list
    chosen_params: list
    inner_cv_errors: np.ndarray
    params: list
    interval: Optional[tuple] = field(default=None)
    best_cv_estimate: Optional[float] = None
    cv_errors: Optional[np.ndarray] = None


def _nested_outer_fold(estimator, thetas, X, y, train, test, K_inner, loss_fn, shuffle, inner_seed, method):
    X_tr, y_tr = _safe_indexing(X, train), _safe_indexing(y, train)
    # line 4: run CV on S_{-i} for each theta of Theta_0
    _, cv = _grid_cv(estimator, thetas, X_tr, y_tr, K_inner, loss_fn, shuffle, inner_seed, method, None)
    best = int(np.argmin(cv))  # theta_i: first minimiser in grid order
    # lines 5-6: retrain A_{theta_i} on S_{-i}, error on S_i
    losses = _fit_and_losses(estimator, thetas[best], X, y, train, test, loss_fn, method)
    return cv, best, losses


def nested_cv_estimate(estimator: Estimator, param_grid: ParamGrid, X: ArrayLike, y: ArrayLike, K_outer: int = 5,
                       K_inner: int = 5, loss: LossLike = "zero_one", shuffle: bool = False,
                       random_state: RandomStateLike = None, n_jobs: int | None = None,
                       method: PredictMethod = "predict", return_interval: bool = False,
                       delta: float = 0.05, verbose: Verbose = 0, best_cv: bool = True) -> NestedCVResult:
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
    Outer folds run in parallel with joblib (``n_jobs``); ``verbose`` shows a
    progress bar on stderr counting them.

    With ``best_cv`` (default) the result also holds 000's cheap estimate of the same
    quantity, the best CV-estimate min_theta l^CV_S(A_theta) on the whole S ("although this
    estimate tends to underestimate (2), in practice the difference is typically small"),
    computed on the outer folds: |Theta_0| K_outer more fits.

    Parameters
    ----------
    estimator : estimator
        The learner A (cloned for every fit).
    param_grid : dict or list of dict
        The grid Theta_0: ``{name: values}`` or a list of such dicts (``ParameterGrid``).
    X : array-like of shape (m, d)
        The examples S.
    y : array-like of shape (m,)
        Their labels.
    K_outer : int, default=5
        The number of outer folds, 2 <= K_outer <= m.
    K_inner : int, default=5
        The number of folds of the internal CV on each S_{-i}.
    loss : str or callable, default="zero_one"
        See :func:`empirical_risk`.
    shuffle : bool, default=False
        Shuffle before the outer and the inner splits.
    random_state : int, RandomState instance or None
        Seeds those shuffles.
    n_jobs : int or None
        Outer folds run in parallel by joblib.
    method : {"predict", "decision_function", "predict_proba"}, default="predict"
        How predictions are made (see :func:`empirical_risk`).
    return_interval : bool, default=False
        Also compute the Hoeffding interval of the estimate (n = m), as
        :func:`cv_estimate` does.
    delta : float, default=0.05
        Its confidence parameter.
    verbose : bool, int or "auto"
        A progress bar on stderr counting the outer folds.
    best_cv : bool, default=True
        Also compute the best CV-estimate on the whole S (``best_cv_estimate``).

    Returns
    -------
    NestedCVResult
        The estimate, the error of each outer fold and the theta_i chosen.

    See Also
    --------
    sklearn.model_selection.cross_val_score : Applied to a ``GridSearchCV``, the same
        nested estimate.
    cv_estimate : The K-fold estimate of a learner with fixed hyper-parameters.

    Examples
    --------
    >>> from smml.model_selection import nested_cv_estimate
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> res = nested_cv_estimate(KNNClassifier(), {"n_neighbors": [1, 5]}, X, y, K_outer=3, K_inner=3)
    >>> print(f"{res.estimate:.3f}", res.chosen_params)
    0.200 [{'n_neighbors': 5}, {'n_neighbors': 5}, {'n_neighbors': 1}]
    >>> print(f"{res.best_cv_estimate:.3f}")
    0.200
    """
    loss_fn = get_loss(loss)
    if return_interval:
        check_delta(delta)        # before any fitting, not after it
    check_n_jobs(n_jobs)
    check_verbose(verbose)
    if not isinstance(best_cv, (bool, np.bool_)):
        raise ValueError(f"best_cv must be True or False, got {best_cv!r}")
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
    rs = check_random_state(replayable_seed(random_state)) if shuffle else None
    outer_seed = int(rs.randint(np.iinfo(np.int32).max)) if shuffle else None
    inner_seed = int(rs.randint(np.iinfo(np.int32).max)) if shuffle else None
    folds = list(_kfold(K_outer, shuffle, outer_seed).split(np.zeros((m, 1))))
    out = run_tasks((delayed(_nested_outer_fold)(estimator, thetas, X, y, tr, te, int(K_inner), loss_fn,
                                                  shuffle, inner_seed, method)
                      for tr, te in folds), n_jobs, verbose, "outer folds")
    fold_errors = [_fold_error(l) for _, _, l in out]
    estimate = float(np.mean(fold_errors))
    interval = None
    if return_interval:
        interval = _interval(np.concatenate([l for _, _, l in out]), estimate, m, delta)
    best_cv_est = cv_errs = None
    if best_cv:
        _, cv_errs = _grid_cv(estimator, thetas, X, y, K_outer, loss_fn, shuffle, outer_seed, method, n_jobs,
                              verbose)
        best_cv_est, cv_errs = float(np.min(cv_errs)), np.array(cv_errs)
    return NestedCVResult(estimate=estimate, fold_errors=fold_errors,
                          chosen_params=[dict(thetas[b]) for _, b, _ in out],
                          inner_cv_errors=np.array([cv for cv, _, _ in out]),
                          params=[dict(t) for t in thetas], interval=interval,
                          best_cv_estimate=best_cv_est, cv_errors=cv_errs)
