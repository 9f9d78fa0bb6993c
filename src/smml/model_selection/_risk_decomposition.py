"""The risk of A(S_m) split into estimation, approximation and Bayes error on a distribution
whose Bayes predictor is known (:func:`risk_decomposition`, 000 "Overfitting and
underfitting").
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np
from joblib import delayed
from sklearn.base import clone

from smml._progress import check_verbose
from smml._threads import check_n_jobs, run_tasks
from smml._typing import Estimator, RandomStateLike, Verbose
from smml._validation import check_random_state
from smml.datasets import KnownDistribution


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
