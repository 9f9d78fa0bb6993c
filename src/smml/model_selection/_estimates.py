"""The test error of a fitted predictor (:func:`empirical_risk`, 000 "Bounding the risk") and
the K-fold CV estimate (:func:`cv_estimate`, 000 "Evaluating a learning algorithm using
external cross-validation"), with ``_grid_cv``, the CV of a whole grid on the same folds that
the tuning estimates share.
"""
from __future__ import annotations

import numpy as np
from joblib import delayed

from smml._progress import check_verbose
from smml._random import replayable_seed
from smml._threads import check_n_jobs, run_tasks
from smml._typing import ArrayLike, Estimator, LossLike, PredictMethod, RandomStateLike, Verbose
from smml._validation import check_delta
from smml.losses import get_loss
from smml.model_selection._common import (_check_data, _check_K, _kfold, _losses, _predict, _fit_and_losses,
                                          _interval, _fold_error)


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
