"""Test error against the training-set size, with the Hoeffding interval of each test error
(:func:`learning_curve`, 000 "Bounding the risk").
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
from smml.model_selection._common import _check_data, _losses, _predict, _interval


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
