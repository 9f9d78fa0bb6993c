"""Two learners on the same folds and the Wilcoxon signed-rank test on the paired differences
of their errors (:func:`compare`, 001 "Wilcoxon Test").
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Literal, Optional

import numpy as np
from joblib import delayed
from sklearn.model_selection import RepeatedKFold

from smml._progress import check_verbose
from smml._random import replayable_seed
from smml._threads import check_n_jobs, run_tasks
from smml._typing import ArrayLike, Estimator, LossLike, PredictMethod, RandomStateLike, Verbose
from smml.losses import get_loss
from smml.model_selection._common import _check_data, _check_K, _kfold, _fit_and_losses, _fold_error


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
