"""Risk estimates and hyper-parameter tuning of the course notes.

- :func:`empirical_risk`: the average loss of a fitted predictor on a sample
  (000, "Bounding the risk": the test error).
- :func:`cv_estimate`: the K-fold CV estimate (000, "Evaluating a learning
  algorithm using external cross-validation"; leave-one-out when K = m).
- :func:`tune`: train/dev tuning over a grid with a refit on the whole
  training set (000, "Tuning hyperparameters on a given training set").
- :func:`nested_cv_estimate`: the nested CV estimate (003, section 6,
  "Hyperparameter Tuning and Risk Estimates", Algorithm 1).
- :func:`compare`: two learners on the same folds and the Wilcoxon
  signed-rank test on the paired differences of their errors (001, "Wilcoxon
  Test").
- :func:`learning_curve`: test error against the training-set size, with the
  Hoeffding interval of each test error (000, "Bounding the risk").
- :func:`risk_decomposition`: the risk of A(S_m) split into estimation,
  approximation and Bayes error (000, "Overfitting and underfitting") on a
  distribution whose Bayes predictor is known (:mod:`smml.datasets`).

scikit-learn is used for plumbing only (``KFold``, ``ParameterGrid``,
``clone``, ``train_test_split``) and joblib runs folds in parallel: on threads by
default, on a cluster inside ``joblib.parallel_config(backend="dask")`` (or
``"ray"``), with the same results given ``random_state`` (the folds are drawn
in the calling process). A worker lost mid-run raises a ``RuntimeError``; no
partial result is returned. With
``verbose=1`` a progress bar on stderr counts the fits (``smml._progress``). Each
estimate can come with its Chernoff-Hoeffding interval
(:func:`smml.bounds.hoeffding_interval`), which needs a loss with values in
[0, 1]: asking for it with a loss that takes a value outside [0, 1] raises.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

import numpy as np
from joblib import delayed
from sklearn.base import clone
from sklearn.model_selection import KFold, ParameterGrid, RepeatedKFold, train_test_split
from sklearn.utils import indexable
from sklearn.utils import _safe_indexing

from smml._progress import check_verbose
from smml._random import replayable_seed
from smml._threads import check_n_jobs, run_tasks
from smml._typing import ArrayLike, Estimator, LossLike, PredictMethod, RandomStateLike, Verbose
from smml._validation import check_delta, check_random_state
from smml.bounds import hoeffding_interval
from smml.datasets import KnownDistribution
from smml.losses import get_loss

__all__ = ["empirical_risk", "cv_estimate", "tune", "nested_cv_estimate", "compare", "learning_curve",
           "risk_decomposition", "TuneResult", "NestedCVResult", "CompareResult", "LearningCurveResult",
           "RiskDecompositionResult"]


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


# ---- empirical risk -----------------------------------------------------------

def empirical_risk(estimator: Estimator, X: ArrayLike, y: ArrayLike, loss: LossLike = "zero_one",
                   method: PredictMethod = "predict", return_interval: bool = False,
                   delta: float = 0.05) -> float | tuple[float, tuple[float, float]]:
    """Average loss of a FITTED ``estimator`` on (X, y).

    000, "Bounding the risk": the test error (1/n) sum_t l(y_t, h(x_t)). With
    ``return_interval`` also returns the Chernoff-Hoeffding interval (valid when
    (X, y) was not used to train the estimator and the loss lies in [0, 1]).

    Parameters
    ----------
    estimator : estimator
        A fitted predictor h (not refit).
    X : array-like of shape (n, d)
        The examples it is tested on.
    y : array-like of shape (n,)
        Their labels.
    loss : str or callable, default="zero_one"
        A name of :data:`smml.losses.LOSSES` or ``loss(y, y_pred) -> per-example losses``.
    method : {"predict", "decision_function", "predict_proba"}, default="predict"
        How predictions are made ("decision_function" for margin losses,
        "predict_proba" for the logarithmic loss of a binary {0, 1} problem).
    return_interval : bool, default=False
        Also return the Chernoff-Hoeffding interval of the risk (a loss with
        values in [0, 1] only).
    delta : float, default=0.05
        Its confidence parameter: the risk lies in the interval with
        probability at least 1 - delta.

    Returns
    -------
    risk : float
        The empirical risk (1/n) sum_t l(y_t, h(x_t)).
    interval : tuple of float (low, high)
        Only with ``return_interval``: then ``(risk, interval)`` is returned.

    See Also
    --------
    smml.bounds.hoeffding_interval : The interval returned with ``return_interval``.
    sklearn.metrics.zero_one_loss : The same risk for the zero-one loss.

    Examples
    --------
    >>> from smml.model_selection import empirical_risk
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> h = KNNClassifier(n_neighbors=3).fit(X[:40], y[:40])
    >>> risk, (low, high) = empirical_risk(h, X[40:], y[40:], return_interval=True)
    >>> print(f"{risk:.3f} in [{low:.3f}, {high:.3f}]")
    0.250 in [0.000, 0.554]
    """
    loss_fn = get_loss(loss)
    if return_interval:
        check_delta(delta)        # before any fitting, not after it
    X, y, n = _check_data(X, y)
    losses = _losses(loss_fn, y, _predict(estimator, X, method))
    risk = float(np.mean(losses))
    if return_interval:
        return risk, _interval(losses, risk, n, delta)
    return risk


# ---- K-fold CV estimate -------------------------------------------------------

def _grid_cv(estimator, thetas, X, y, K, loss_fn, shuffle, seed, method, n_jobs, verbose=0,
             desc="grid x folds"):
    """l^CV_S(A_theta) for every theta of the grid on the same folds (h_i = A_theta(S_{-i}) scored
    on S_i; theta None: the estimator as given); the (theta, fold) fits run in parallel.
    Returns (per-theta lists of per-fold losses, per-theta CV estimates)."""
    folds = list(_kfold(K, shuffle, seed).split(np.zeros((len(y), 1))))
    flat = run_tasks((delayed(_fit_and_losses)(estimator, theta, X, y, tr, te, loss_fn, method)
                       for theta in thetas for tr, te in folds), n_jobs, verbose, desc)
    per_theta = [flat[i * K:(i + 1) * K] for i in range(len(thetas))]
    return per_theta, [float(np.mean([_fold_error(l) for l in f])) for f in per_theta]


def cv_estimate(estimator: Estimator, X: ArrayLike, y: ArrayLike, K: int = 5, loss: LossLike = "zero_one",
                shuffle: bool = False, random_state: RandomStateLike = None, n_jobs: int | None = None,
                return_interval: bool = False, delta: float = 0.05, method: PredictMethod = "predict",
                verbose: Verbose = 0) -> float | tuple[float, tuple[float, float]]:
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
    estimator : estimator
        The learner A (cloned for each fold).
    X : array-like of shape (m, d)
        The examples S.
    y : array-like of shape (m,)
        Their labels.
    K : int, default=5
        The number of folds, 2 <= K <= m.
    loss : str or callable, default="zero_one"
        See :func:`empirical_risk`.
    shuffle : bool, default=False
        Shuffle S before splitting (``KFold``'s semantics).
    random_state : int, RandomState instance or None
        Seeds the shuffle.
    n_jobs : int or None
        Folds trained in parallel by joblib (None: joblib's default, 1 unless in a
        ``joblib.parallel_config`` context). Results do not depend on it. Threads
        are preferred: smml's kernels release the GIL, and threads need no
        pickling or data copies (``joblib.parallel_config(backend="loky")``
        selects processes, e.g. for pure-Python estimators).
    return_interval : bool, default=False
        Also return the Hoeffding interval of 000, "Bounding the risk", with
        n = m. Each example is tested once, by a predictor not trained on it;
        the interval is the notes' test-set interval applied to the m pooled
        test losses (a heuristic for CV, since the K predictors differ);
        [0, 1]-valued losses only.
    delta : float, default=0.05
        The confidence parameter of that interval.
    method : {"predict", "decision_function", "predict_proba"}, default="predict"
        How predictions are made (see :func:`empirical_risk`).
    verbose : bool, int or "auto"
        A progress bar on stderr counting the K fits (see ``smml._progress``).

    Returns
    -------
    estimate : float
        The CV estimate l_S^CV(A).
    interval : tuple of float (low, high)
        Only with ``return_interval``: then ``(estimate, interval)`` is returned.

    See Also
    --------
    sklearn.model_selection.cross_val_score : The per-fold scores of K-fold CV.
    nested_cv_estimate : The estimate for a learner tuned over a grid.

    Examples
    --------
    >>> from smml.model_selection import cv_estimate
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> print(f"{cv_estimate(KNNClassifier(n_neighbors=3), X, y, K=3):.3f}")
    0.200
    """
    loss_fn = get_loss(loss)
    if return_interval:
        check_delta(delta)        # before any fitting, not after it
    check_n_jobs(n_jobs)
    check_verbose(verbose)
    X, y, m = _check_data(X, y)
    K = _check_K("K", K, m)
    (per_fold,), (estimate,) = _grid_cv(estimator, [None], X, y, K, loss_fn, shuffle, replayable_seed(random_state),
                                        method, n_jobs, verbose, desc="CV folds")
    if return_interval:
        return estimate, _interval(np.concatenate(per_fold), estimate, m, delta)
    return estimate


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


# ---- comparing two learners: the Wilcoxon signed-rank test ------------------------

@dataclass
class CompareResult:
    """Outcome of :func:`compare` (001, "Wilcoxon Test").

    The constructor's parameters are the result's attributes.

    Parameters
    ----------
    errors_a, errors_b : ndarray of shape (n_repeats * K,)
        The test error of each learner on each fold (the mean loss over the
        fold's testing part), folds in order, repeat after repeat.
    differences : ndarray of shape (n_repeats * K,)
        ``errors_a - errors_b``, the paired differences the test ranks.
    mean_a, mean_b : float
        The CV estimates of the two learners (means of their fold errors).
    statistic : float
        The Wilcoxon statistic as ``scipy.stats.wilcoxon`` returns it (the
        smaller of the two signed-rank sums for a two-sided test); 0 when
        every difference is 0.
    pvalue : float
        Two-sided p-value of the null hypothesis "the differences are
        symmetric about 0" (neither learner is better); 1 when every
        difference is 0.
    alpha : float
        The significance level.
    significant : bool
        ``pvalue <= alpha``: the null hypothesis is rejected at level alpha.
    better : {"A", "B"} or None
        With a significant result, the learner whose errors are smaller (the
        one the signed ranks favour); None otherwise (no decision).
    zero_method : str
        How zero differences are ranked (``scipy.stats.wilcoxon``'s argument).

    Examples
    --------
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.model_selection import CompareResult, compare
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> res = compare(KNNClassifier(n_neighbors=1), KNNClassifier(n_neighbors=5), X, y, K=5, random_state=0)
    >>> isinstance(res, CompareResult), res.errors_a.shape, res.zero_method
    (True, (5,), 'pratt')
    """
    errors_a: np.ndarray
    errors_b: np.ndarray
    differences: np.ndarray
    mean_a: float
    mean_b: float
    statistic: float
    pvalue: float
    alpha: float
    significant: bool
    better: Optional[str]
    zero_method: str


def _check_fraction(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < v < 1:
        raise ValueError(f"{name} must be a number in (0, 1), got {v!r}")


def _signed_rank_sums(d, zero_method):
    """(R+, R-): the rank sums of the positive and negative differences (zeros ranked per zero_method)."""
    from scipy.stats import rankdata

    if zero_method == "wilcox":
        d = d[d != 0]
    r = rankdata(np.abs(d))
    if zero_method == "zsplit":
        half = 0.5 * r[d == 0].sum()
        return r[d > 0].sum() + half, r[d < 0].sum() + half
    return r[d > 0].sum(), r[d < 0].sum()      # pratt: zeros take the smallest ranks, then drop out


def compare(estimator_a: Estimator, estimator_b: Estimator, X: ArrayLike, y: ArrayLike, K: int = 10,
            n_repeats: int = 1, loss: LossLike = "zero_one", alpha: float = 0.05, shuffle: bool = True,
            random_state: RandomStateLike = None, zero_method: Literal["pratt", "zsplit", "wilcox"] = "pratt",
            n_jobs: int | None = None, method: PredictMethod = "predict",
            verbose: Verbose = 0) -> CompareResult:
    """Compare two learners on the same folds with the Wilcoxon signed-rank test.

    001, "Wilcoxon Test": to tell whether A (e.g. k-NN with k = 1) is better
    than B (k-NN with k = 5), pair the experiments - the same train/test
    splits for both - and test whether the differences of their test errors
    could be due to chance. Here the splits are the K folds of K-fold CV
    (000, "Evaluating a learning algorithm using external cross-validation"),
    repeated ``n_repeats`` times on fresh shuffles: on fold i, clones of A and
    B are trained on S_{-i} and tested on S_i, and d_i = l_{S_i}(A(S_{-i})) -
    l_{S_i}(B(S_{-i})). ``scipy.stats.wilcoxon(d)`` then tests the null
    hypothesis that the d_i are symmetric about 0.

    The variant:

    - **two-sided**: the question of 001 is which learner is better, so a
      difference in either direction counts; ``better`` says which one wins.
    - **zero differences** (both learners make the same error on a fold, common
      with the zero-one loss on small folds) are ranked with Pratt's method
      (``zero_method="pratt"``): they take the smallest ranks and then count
      in neither sum. Dropping them first (scipy's default "wilcox") throws
      away the folds where the learners agree and overstates the evidence;
      "zsplit" (half of each zero's rank to each side) is the more
      conservative choice and can be passed instead.
    - **every difference zero** (e.g. A and B are the same deterministic
      learner): there is nothing to rank; the result is statistic 0,
      p-value 1 and no decision, without calling scipy.
    - the exact distribution is used for small samples without ties, the
      normal approximation with tie correction otherwise (scipy's "auto").

    The p-value is approximate: folds of CV share training examples, so the
    d_i are not independent as the test assumes (Dietterich 1998); more
    repeats give more differences, not independent ones.

    Parameters
    ----------
    estimator_a, estimator_b : estimator
        The two learners A and B (cloned for each fold).
    X : array-like of shape (m, d)
        The examples.
    y : array-like of shape (m,)
        Their labels.
    K : int, default=10
        The number of folds, 2 <= K <= m.
    n_repeats : int, default=1
        K-fold CV is run this many times, each on a fresh shuffle (needs
        ``shuffle=True`` when > 1); the test gets ``n_repeats * K`` differences.
    loss : str or callable, default="zero_one"
        See :func:`empirical_risk`.
    alpha : float, default=0.05
        The significance level in (0, 1).
    shuffle : bool, default=True
        Shuffle the examples before splitting (``KFold``/``RepeatedKFold``);
        without it the folds are consecutive, as in 000's example.
    random_state : int, RandomState instance or None
        Seeds the shuffles.
    zero_method : {"pratt", "zsplit", "wilcox"}, default="pratt"
        How zero differences are handled (``scipy.stats.wilcoxon``).
    n_jobs : int or None
        Fits run in parallel by joblib threads; results do not depend on it.
    method : {"predict", "decision_function", "predict_proba"}
        How predictions are made (see :func:`empirical_risk`).
    verbose : bool, int or "auto"
        A progress bar on stderr counting the 2 n_repeats K fits.

    Returns
    -------
    CompareResult
        The fold errors, the differences, the test's statistic and p-value,
        and the decision at level alpha.

    See Also
    --------
    scipy.stats.wilcoxon : The signed-rank test applied to the differences.
    sklearn.model_selection.cross_val_score : The fold scores of one learner.

    Examples
    --------
    >>> from smml.model_selection import compare
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.neighbors import KNNClassifier
    >>> from smml.tree import TreeClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> res = compare(KNNClassifier(n_neighbors=1), TreeClassifier(max_depth=2), X, y, K=5, random_state=0)
    >>> print(f"{res.mean_a:.3f} {res.mean_b:.3f} p={res.pvalue:.3f}")
    0.300 0.250 p=0.750
    >>> res.significant, res.better
    (False, None)
    """
    from scipy.stats import wilcoxon

    loss_fn = get_loss(loss)
    _check_fraction("alpha", alpha)
    check_n_jobs(n_jobs)
    check_verbose(verbose)
    if zero_method not in ("pratt", "zsplit", "wilcox"):
        raise ValueError(f"zero_method must be 'pratt', 'zsplit' or 'wilcox', got {zero_method!r}")
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"n_repeats must be an integer >= 1, got {n_repeats!r}")
    if n_repeats > 1 and not shuffle:
        raise ValueError("n_repeats > 1 repeats K-fold CV on fresh shuffles: set shuffle=True "
                         "(unshuffled repeats would be identical)")
    X, y, m = _check_data(X, y)
    K = _check_K("K", K, m)
    seed = replayable_seed(random_state) if shuffle else None
    if n_repeats == 1:
        splitter = _kfold(K, shuffle, seed)
    else:
        splitter = RepeatedKFold(n_splits=K, n_repeats=int(n_repeats), random_state=seed)
    folds = list(splitter.split(np.zeros((m, 1))))
    # both learners on the same folds: the pairing of 001
    losses = run_tasks((delayed(_fit_and_losses)(est, None, X, y, tr, te, loss_fn, method)
                         for tr, te in folds for est in (estimator_a, estimator_b)),
                        n_jobs, verbose, "compare")
    errors = np.array([_fold_error(fl) for fl in losses]).reshape(len(folds), 2)
    err_a, err_b = errors[:, 0].copy(), errors[:, 1].copy()
    d = err_a - err_b
    if not np.any(d != 0):
        statistic, pvalue = 0.0, 1.0
    else:
        res = wilcoxon(d, zero_method=zero_method, alternative="two-sided")
        statistic, pvalue = float(res.statistic), float(res.pvalue)
    significant = bool(pvalue <= alpha)
    better = None
    if significant:
        r_plus, r_minus = _signed_rank_sums(d, zero_method)
        better = "B" if r_plus > r_minus else "A" if r_minus > r_plus else None
    return CompareResult(errors_a=err_a, errors_b=err_b, differences=d, mean_a=float(err_a.mean()),
                         mean_b=float(err_b.mean()), statistic=statistic, pvalue=pvalue, alpha=float(alpha),
                         significant=significant, better=better, zero_method=zero_method)


# ---- learning curve -------------------------------------------------------------

@dataclass
class LearningCurveResult:
    """Outcome of :func:`learning_curve`.

    The constructor's parameters are the result's attributes.

    Parameters
    ----------
    train_sizes : ndarray of shape (n_sizes,)
        The numbers of training examples used.
    train_errors : ndarray of shape (n_sizes,)
        The training error of each predictor on the examples it was trained on.
    test_errors : ndarray of shape (n_sizes,)
        Its test error on the held-out test set.
    intervals : ndarray of shape (n_sizes, 2) or None
        The Chernoff-Hoeffding interval (low, high) of each test error
        (``return_interval``).
    n_test : int
        The size of the test set.
    delta : float
        The confidence parameter of the intervals.

    Examples
    --------
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.model_selection import LearningCurveResult, learning_curve
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> res = learning_curve(KNNClassifier(n_neighbors=3), X, y, train_sizes=[10, 20, 42], random_state=0)
    >>> isinstance(res, LearningCurveResult), res.n_test, res.intervals.shape
    (True, 18, (3, 2))
    """
    train_sizes: np.ndarray
    train_errors: np.ndarray
    test_errors: np.ndarray
    intervals: Optional[np.ndarray]
    n_test: int
    delta: float


def _train_sizes(train_sizes, n_train):
    sizes = np.asarray(train_sizes)
    if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iuf":
        raise ValueError(f"train_sizes must be a non-empty 1-d sequence of numbers, got {train_sizes!r}")
    if sizes.dtype.kind == "f":
        if not np.all((sizes > 0) & (sizes <= 1)):
            raise ValueError(f"train_sizes given as fractions must lie in (0, 1], got {sizes.tolist()}")
        sizes = np.maximum(1, np.floor(sizes * n_train + 1e-9)).astype(np.intp)
    elif not np.all((sizes >= 1) & (sizes <= n_train)):
        raise ValueError(f"train_sizes given as counts must lie in [1, {n_train}] (the size of the "
                         f"training part), got {sizes.tolist()}")
    return np.unique(sizes.astype(np.intp))


def _fit_train_test(estimator, X_tr, y_tr, X_te, y_te, loss_fn, method):
    est = clone(estimator).fit(X_tr, y_tr)
    return (_losses(loss_fn, y_tr, _predict(est, X_tr, method)),
            _losses(loss_fn, y_te, _predict(est, X_te, method)))


def learning_curve(estimator: Estimator, X: ArrayLike, y: ArrayLike,
                   train_sizes: Sequence[float] = (0.1, 0.325, 0.55, 0.775, 1.0), test_size: float = 0.3,
                   test_set: tuple[ArrayLike, ArrayLike] | None = None, loss: LossLike = "zero_one",
                   shuffle: bool = True, random_state: RandomStateLike = None, return_interval: bool = True,
                   delta: float = 0.05, n_jobs: int | None = None, method: PredictMethod = "predict",
                   verbose: Verbose = 0) -> LearningCurveResult:
    """Test error against the training-set size, each with its Hoeffding interval.

    A test set is held out once (``test_size`` of the data, or the given
    ``test_set``); the rest, in a random order, is the training part, and
    for each size m_i the learner is trained on its first m_i examples (so
    each training set contains the smaller ones). Every predictor is tested
    on the same test set, never used for training, so each test error comes
    with the interval of 000, "Bounding the risk": with probability at least
    1 - delta, the risk lies within test error -/+ sqrt(ln(2/delta) / (2n)),
    n the size of the test set (for a [0, 1]-valued loss). The curve shows
    000's "Consistency" picture: the risk of A(S_m) as m grows.

    scikit-learn's ``learning_curve`` averages over CV folds instead; one
    fixed test set is what makes the Hoeffding interval of each point valid.

    Parameters
    ----------
    estimator : estimator
        The learner (cloned for each size).
    X : array-like of shape (m, d)
        The examples.
    y : array-like of shape (m,)
        Their labels.
    train_sizes : sequence of float or int
        Fractions in (0, 1] of the training part, or counts of examples.
    test_size : float or int, default=0.3
        The held-out part (``train_test_split``'s semantics, stratified for
        classifiers); ignored with ``test_set``.
    test_set : (X_test, y_test), optional
        A given test set; then all of (X, y) is the training part.
    loss : str or callable, default="zero_one"
        See :func:`empirical_risk`.
    shuffle : bool, default=True
        Shuffle before holding out and before taking the first m_i examples.
    random_state : int, RandomState instance or None
        Seeds the shuffle.
    return_interval : bool, default=True
        Compute the Hoeffding intervals (a loss with values in [0, 1] only).
    delta : float, default=0.05
        Their confidence parameter.
    n_jobs : int or None
        Sizes trained in parallel by joblib threads.
    method : {"predict", "decision_function", "predict_proba"}
        How predictions are made (see :func:`empirical_risk`).
    verbose : bool, int or "auto"
        A progress bar on stderr counting the fits.

    Returns
    -------
    LearningCurveResult
        The sizes, training errors, test errors and intervals.

    See Also
    --------
    sklearn.model_selection.learning_curve : The CV-averaged version.

    Examples
    --------
    >>> from smml.model_selection import learning_curve
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.neighbors import KNNClassifier
    >>> X, y, _ = make_bayes_classification(n_samples=60, random_state=0)
    >>> res = learning_curve(KNNClassifier(n_neighbors=3), X, y, train_sizes=[10, 20, 42], random_state=0)
    >>> res.train_sizes.tolist(), res.n_test
    ([10, 20, 42], 18)
    >>> print([f"{e:.3f}" for e in res.test_errors])
    ['0.500', '0.222', '0.111']
    """
    loss_fn = get_loss(loss)
    if return_interval:
        check_delta(delta)
    check_n_jobs(n_jobs)
    check_verbose(verbose)
    X, y, m = _check_data(X, y)
    seed = replayable_seed(random_state) if shuffle else None
    X_tr: Any
    y_tr: Any
    if test_set is not None:
        if not isinstance(test_set, (tuple, list)) or len(test_set) != 2:
            raise ValueError("test_set must be a pair (X_test, y_test)")
        X_te, y_te, n_test = _check_data(*test_set)
        X_tr, y_tr = X, y
        if shuffle:
            order = check_random_state(seed).permutation(m)
            X_tr, y_tr = _safe_indexing(X, order), _safe_indexing(y, order)
    else:
        from sklearn.base import is_classifier

        strat = y if (shuffle and is_classifier(estimator)) else None
        try:
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, shuffle=shuffle,
                                                      random_state=seed, stratify=strat)
        except ValueError as exc:
            raise ValueError(f"cannot hold out test_size={test_size!r} of m={m} examples: {exc}") from None
        n_test = len(y_te)
    sizes = _train_sizes(train_sizes, len(y_tr))
    out = run_tasks((delayed(_fit_train_test)(estimator, _safe_indexing(X_tr, np.arange(s)),
                                               _safe_indexing(y_tr, np.arange(s)), X_te, y_te, loss_fn, method)
                      for s in sizes), n_jobs, verbose, "learning curve")
    train_errors = np.array([float(np.mean(tr)) for tr, _ in out])
    test_errors = np.array([float(np.mean(te)) for _, te in out])
    intervals = None
    if return_interval:
        intervals = np.array([_interval(te, err, n_test, delta) for (_, te), err in zip(out, test_errors)])
    return LearningCurveResult(train_sizes=sizes, train_errors=train_errors, test_errors=test_errors,
                               intervals=intervals, n_test=int(n_test), delta=float(delta))


# ---- estimation / approximation / Bayes error --------------------------------------

@dataclass
class RiskDecompositionResult:
    """Outcome of :func:`risk_decomposition`.

    The constructor's parameters are the result's attributes.

    Parameters
    ----------
    train_sizes : ndarray of shape (n_sizes,)
        The training-set sizes m.
    risks : ndarray of shape (n_sizes,)
        The estimate of E[l_D(A(S_m))]: the mean over the repeats of ``risks_per_repeat``.
    risks_per_repeat : ndarray of shape (n_sizes, n_repeats)
        l_D(A(S_m)) for each training set drawn (exact in Y, Monte-Carlo in X).
    train_errors : ndarray of shape (n_sizes,)
        The mean training error l_S(A(S_m)) (zero-one loss).
    estimation_error : ndarray of shape (n_sizes,)
        ``risks - best_in_class_risk``: the estimate of E[l_D(h_S)] - l_D(h*).
    approximation_error : float
        ``best_in_class_risk - bayes_error``: the estimate of l_D(h*) - l_D(f*).
    bayes_error : float
        l_D(f*), exact (the distribution's ``bayes_risk``).
    best_in_class_risk : float
        The value used for l_D(h*): the risk of A trained on ``reference_size`` examples,
        or the value given.
    reference_size : int or None
        The size of that large training set (None when ``best_in_class_risk`` was given).
    n_test : int
        The number of points X over which every risk is averaged.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.model_selection import RiskDecompositionResult, risk_decomposition
    >>> from smml.tree import TreeClassifier
    >>> _, _, D = make_bayes_classification(boundary="diagonal", noise=0.1)
    >>> r = risk_decomposition(TreeClassifier(max_depth=2), D, train_sizes=(50, 200), n_repeats=2,
    ...                        reference_size=2000, n_test=2000, random_state=0)
    >>> isinstance(r, RiskDecompositionResult), r.risks_per_repeat.shape, r.reference_size
    (True, (2, 2), 2000)
    >>> risks = r.estimation_error + r.approximation_error + r.bayes_error
    >>> bool(np.allclose(r.risks, risks))
    True
    """
    train_sizes: np.ndarray
    risks: np.ndarray
    risks_per_repeat: np.ndarray
    train_errors: np.ndarray
    estimation_error: np.ndarray
    approximation_error: float
    bayes_error: float
    best_in_class_risk: float
    reference_size: Optional[int]
    n_test: int


def _learner_for(estimator, m):
    """A fresh learner for a training set of size m: a clone, or ``estimator(m)`` for a schedule."""
    if hasattr(estimator, "fit"):
        return clone(estimator)
    est = estimator(int(m))
    if not hasattr(est, "fit"):
        raise ValueError("estimator must be an estimator or a callable m -> estimator; the callable "
                         f"returned {type(est).__name__}, which has no fit")
    return est


def _fit_risk(estimator, m, X_tr, y_tr, distribution, X_test):
    h = _learner_for(estimator, m).fit(X_tr, y_tr)
    train_error = float(np.mean(np.asarray(h.predict(X_tr)).reshape(-1) != np.asarray(y_tr)))
    return float(distribution.risk(h, X=X_test)), train_error


def _check_count(name, v, low=1):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


def risk_decomposition(estimator: Estimator | Callable[[int], Estimator], distribution: KnownDistribution,
                       train_sizes: Sequence[int] = (25, 100, 400, 1600), n_repeats: int = 5,
                       reference_size: int = 20_000, best_in_class_risk: float | None = None, n_test: int = 20_000,
                       random_state: RandomStateLike = None, n_jobs: int | None = None,
                       verbose: Verbose = 0) -> RiskDecompositionResult:
    """The risk of A(S_m) as estimation error + approximation error + Bayes error, for growing m.

    000, "Overfitting and underfitting" (003 section 4): for h_S = A(S), h* a predictor
    of minimum risk in the class H_A of the predictors A can output and f* the Bayes
    optimal predictor,

        l_D(h_S) = (l_D(h_S) - l_D(h*))     estimation error (large when overfitting)
                 + (l_D(h*) - l_D(f*))      approximation error (large when underfitting)
                 + l_D(f*)                  Bayes error (unavoidable).

    On a distribution whose f* is known (:func:`smml.datasets.make_bayes_classification`)
    the terms are measured, for each training-set size m, as follows (zero-one loss):

    - **Bayes error** l_D(f*): exact, the distribution's ``bayes_risk``.
    - **Risk** l_D(A(S_m)): for each of ``n_repeats`` training sets S_m drawn from D,
      ``distribution.risk(h)``: the probability of a mistake given X is exact (from
      eta), its expectation over X is the mean over ``n_test`` points drawn once from
      D_X and shared by every predictor (so differences between sizes are not blurred
      by different test points); the standard error of each value is at most
      (1 - 2 noise) / (2 sqrt(n_test)). ``risks`` is the mean over the repeats: it
      estimates the expected risk E[l_D(A(S_m))] of 000 "Consistency", and the
      estimation error below is the expected one.
    - **Best-in-class risk** l_D(h*) = min over H_A: not computable for k-NN or trees.
      It is *approximated* by the risk of A trained once on a large sample of
      ``reference_size`` examples, A(S_big), unless ``best_in_class_risk`` is given
      (e.g. a value computed by hand for the class). A(S_big) is in H_A, so its risk is
      >= l_D(h*): the approximation error is over-estimated and the estimation error
      under-estimated by the same amount (it can even come out negative at a size
      where A(S_m) does better than A(S_big)). For an algorithm of limited capacity (a
      tree of bounded depth, a linear classifier) it approaches the best risk the
      algorithm reaches; for a nonparametric one (000, "Consistency and nonparametric
      algorithms": k-NN, trees grown without limit), whose H_A's approximation error
      vanishes, what remains is the excess risk A keeps on large samples: 0 in the
      limit for a consistent schedule (``estimator`` a callable m -> learner, e.g.
      k_m = :func:`smml.bounds.knn_consistent_k`), at most l_D(f*) for 1-NN and
      2 sqrt(l_D(f*) / k) for k-NN with a fixed k (:func:`smml.bounds.knn_asymptotic_risk_bound`).

    So ``risks = estimation_error + approximation_error + bayes_error`` for the
    estimates returned (up to floating-point rounding).

    Parameters
    ----------
    estimator : estimator or callable
        The learner A (cloned for every fit), or a callable ``m -> learner`` giving the
        learner for a training set of size m (a schedule such as k_m).
    distribution : smml.datasets.KnownDistribution
        D: anything with ``sample(n, random_state)``, ``risk(h, X=...)`` and ``bayes_risk``.
    train_sizes : sequence of int, default=(25, 100, 400, 1600)
        The sizes m.
    n_repeats : int, default=5
        Training sets drawn per size.
    reference_size : int, default=20000
        The size of the large sample that stands in for h*; ignored with ``best_in_class_risk``.
    best_in_class_risk : None or float, default=None
        A known l_D(h*), used as is.
    n_test : int, default=20000
        The points X over which every risk is averaged.
    random_state : int, RandomState instance or None
        Seeds every draw (the samples are drawn in the calling process, in a fixed order).
    n_jobs : int or None
        Fits run in parallel by joblib threads.
    verbose : bool, int or "auto"
        A progress bar on stderr counting the fits.

    Returns
    -------
    RiskDecompositionResult
        The sizes, risks and the three terms.

    Examples
    --------
    >>> from smml.datasets import make_bayes_classification
    >>> from smml.model_selection import risk_decomposition
    >>> from smml.tree import TreeClassifier
    >>> _, _, D = make_bayes_classification(boundary="diagonal", noise=0.1)
    >>> r = risk_decomposition(TreeClassifier(max_depth=2), D, train_sizes=(50, 500), n_repeats=3,
    ...                        reference_size=5000, n_test=5000, random_state=0)
    >>> r.bayes_error                      # exact
    0.1
    >>> bool(r.approximation_error > 0.05) # a depth-2 tree cannot follow the diagonal
    True
    """
    check_n_jobs(n_jobs)
    check_verbose(verbose)
    if not (hasattr(estimator, "fit") or callable(estimator)):
        raise ValueError("estimator must be an estimator or a callable m -> estimator")
    for attr in ("sample", "risk", "bayes_risk"):
        if not hasattr(distribution, attr):
            raise ValueError(f"distribution must have sample, risk and bayes_risk (a "
                             f"smml.datasets.KnownDistribution); it has no {attr}")
    sizes = np.asarray(train_sizes)
    if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iu" or np.any(sizes < 1):
        raise ValueError(f"train_sizes must be a non-empty sequence of positive integers, got {train_sizes!r}")
    sizes = sizes.astype(np.intp)
    n_repeats = _check_count("n_repeats", n_repeats)
    n_test = _check_count("n_test", n_test)
    if best_in_class_risk is None:
        reference_size = _check_count("reference_size", reference_size)
    else:
        if isinstance(best_in_class_risk, bool) or not isinstance(best_in_class_risk, numbers.Real) \
                or not 0 <= best_in_class_risk <= 1:
            raise ValueError(f"best_in_class_risk must be a number in [0, 1], got {best_in_class_risk!r}")
        reference_size = None
    rs = check_random_state(random_state)
    X_test, _ = distribution.sample(n_test, rs)
    draws = [(int(m),) + tuple(distribution.sample(int(m), rs)) for m in sizes for _ in range(n_repeats)]
    if reference_size is not None:
        draws.append((reference_size,) + tuple(distribution.sample(reference_size, rs)))
    out = run_tasks((delayed(_fit_risk)(estimator, m, X_tr, y_tr, distribution, X_test) for m, X_tr, y_tr in draws),
                    n_jobs, verbose, "risk decomposition")
    if reference_size is not None:
        best = out.pop()[0]
    else:
        best = float(best_in_class_risk)
    risks = np.array([r for r, _ in out]).reshape(sizes.size, n_repeats)
    train_errors = np.array([e for _, e in out]).reshape(sizes.size, n_repeats).mean(axis=1)
    bayes = float(distribution.bayes_risk)
    mean_risk = risks.mean(axis=1)
    return RiskDecompositionResult(train_sizes=sizes, risks=mean_risk, risks_per_repeat=risks,
                                   train_errors=train_errors, estimation_error=mean_risk - best,
                                   approximation_error=best - bayes, bayes_error=bayes,
                                   best_in_class_risk=best, reference_size=reference_size, n_test=n_test)
