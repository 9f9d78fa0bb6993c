"""Random forests: bagging of smml's CART trees (002 "Random forests")."""
from __future__ import annotations

from typing import Any, Literal

from numpy.typing import NDArray

import math

import numpy as np

from smml._binning import rank_columns, sort_columns_ranked
from smml._class_weight import CLASS_WEIGHT_SUBSAMPLE
from smml._core import _tree
from smml._progress import VERBOSE
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, Options, check_is_fitted)
from smml.base import ClassifierMixin, RegressorMixin, store_params
from smml.ensemble._bagging import (_BaggingClassifierMixin, _BaggingRegressorMixin, _BaseBagging,
                                    _default_tree)


#: a forest grows its trees in the tree kernel's ranked mode (``_BaseForest._shared``) when they
#: try fewer than 1 / (_RANKED_RATIO + _RANKED_PER_DOUBLING log2(N / 16384)) of the d features
#: per node (N rows): a split costs d partitions in the sorted-columns mode, and in the ranked
#: one a gather and sort per candidate, whose gathers miss the cache more as the rank columns
#: grow with N (the timing: bench/forest.md)
_RANKED_RATIO = 8.0
_RANKED_PER_DOUBLING = 2.0


def _ranked(n_rows, d, n_candidates):
    """Whether a forest's trees on n_rows x d try few enough candidates for the ranked mode."""
    return d >= n_candidates * (_RANKED_RATIO + _RANKED_PER_DOUBLING * max(0.0, math.log2(n_rows / 16384)))


class _BaseForest(_BaseBagging):
    """Random forest = bagging of smml's CART trees with a random subset of features per node.

    002 "Random forests": train many trees, each on a bootstrap sample of
    alpha m examples drawn with replacement (``max_samples`` = alpha, default
    1: m draws), each node trying a random subset of ``max_features``
    features (default sqrt(d)); classification by majority vote (ties: the
    smallest class), regression by the mean. Each tree gets its bootstrap
    multiset as distinct rows weighted by their multiplicity (see
    ``_fit_member``) and is grown fully, depth-first (``growth="depth"``: without
    ``max_leaf_nodes`` the order only decides which node gets which draw of features).
    The trees are grown in a thread
    pool of ``n_jobs`` threads whose tree kernels release the GIL; all
    bootstrap indices and tree seeds are drawn up front from
    ``random_state``, so the forest is the same whatever the thread count.
    Prediction routes the rows through all T trees in one compiled call
    (``_bagging._Forest``, ``_core/_tree_predict.pyx``: ``forest_sum``), with the votes and means
    of the loop over the trees, bit for bit.
    """

    def _shared(self, X, est):
        """Trees with the exact splitter: every column of X sorted once (stable: equal values
        by row) and ranked. Only for bootstrap samples of at least m / 2 draws: otherwise
        each tree sorts its own rows (cutting passes over all m rows per tree, which costs more
        than sorting a small sample's rows: bench/forest.md). Two ways to use the sort:

        - sorted columns (``max_features`` a large share of the d features: ``_ranked``): each
          tree's sorted rows and ranks are cut from it by ``_tree.sorted_subset``, and every
          split partitions all d of them (the scans then read them in order);
        - ranked (fewer candidates: sqrt(d) of d = 128 or 500): only each row's rank per
          column is kept (``rank_columns``: 2 bytes per entry of X up to 65,536 rows, else 4);
          the trees keep no sorted columns, a node puts its samples of each candidate in order
          when it scans it, by their ranks (``build_tree``'s ranked mode). A split then costs
          the candidates' work, not d partitions, and a tree's memory does not grow with d.

        Either way the trees look their thresholds up in the values of all rows and are the
        same trees."""
        if est.splitter != "exact" or 2 * self._n_draw(X.shape[0]) < X.shape[0]:
            return None
        nt = self._n_threads()
        Xv = np.ascontiguousarray(X, dtype=np.float64)
        d = X.shape[1]
        if _ranked(X.shape[0], d, est._n_candidates(d)):
            return "ranked", Xv, rank_columns(X, nt)
        Si, Rs = sort_columns_ranked(X, nt)
        # the thresholds' values are looked up in X through Si (no sorted copy of the values:
        # the shared sort costs 8 bytes per entry of X, not 16)
        return "sorted", (Xv, Si), Si, Rs

    def _fit_member(self, est, X, y, idx, sw, shared=None):
        """The tree on the bootstrap multiset S_i, given as its distinct rows with
        sample_weight = multiplicity (as scikit-learn's forests do): the weighted
        impurities, leaf values and exact thresholds are those of the repeated rows,
        and each tree handles ~63% of the rows. (``min_samples_split`` and
        ``min_samples_leaf`` then count distinct rows.) With ``shared`` (``_shared``) the
        tree's sorted columns are those of all rows restricted to its own: the tree is then
        the one ``TreeClassifier`` / ``TreeRegressor`` grows on these rows and weights, up to
        the order of equal values in the sorted columns (row order here; the tree's own sort
        is numpy's unstable one): the same tree for a classifier with integer weights (the
        bootstrap's multiplicities), while a regressor's sums of w y over equal values can
        round differently."""
        counts = np.bincount(idx, minlength=X.shape[0])
        rows = np.flatnonzero(counts)
        w = counts[rows].astype(np.float64)
        if sw is not None:
            w *= sw[rows]
            keep = w > 0
            if keep.any():          # the rows of weight 0 are not in the tree (its fit drops them)
                rows, w = rows[keep], w[keep]
        presorted = None
        if shared is not None and w.all():
            if shared[0] == "ranked":           # (Xv, Rrow, the tree's rows, increasing)
                presorted = ("ranked", shared[1], shared[2], rows.astype(np.int32))
            else:
                local = np.full(X.shape[0], -1, dtype=np.int32)
                local[rows] = np.arange(len(rows), dtype=np.int32)
                presorted = (shared[1], *_tree.sorted_subset(shared[2], shared[3], local))
        # X, y and the weights were validated once in fit: the tree's fast path skips
        # re-validating them per tree (classification: y holds the codes 0..K-1 of classes_)
        classes = np.arange(len(self.classes_)) if self._classifier else None
        return est._fit_encoded(X[rows] if presorted is None else None, y[rows], classes, w, presorted)

    def _make_estimator(self, seed):
        # "auto" is "exact" here (a single tree's "auto" is "hist" from 20,000 rows). Fully
        # grown trees make most of their splits in small, deep nodes, where 255 global
        # quantile bins cannot place a threshold between close values: "hist" forests lost
        # test accuracy against "exact" and scikit-learn (`python bench/bench_ensemble.py
        # --forest-accuracy`, bench/forest.md). A regression forest (max_features=1.0) was
        # faster exact, at the same R^2.
        splitter = "exact" if self.splitter == "auto" else self.splitter
        # depth-first growth: a forest's trees have no max_leaf_nodes, so the order in which
        # leaves are split decides only which node gets which draw of max_features features;
        # a stack costs less than best-first's heap (50 trees: 1.02-1.20x on 20,000 x 8 and x 32,
        # 1.16x on 100,000 x 8 regression: bench/forest.md, bench/ab_forest_growth.py)
        return _default_tree(self._classifier, criterion=self.criterion, max_depth=self.max_depth,
                             min_samples_split=self.min_samples_split,
                             min_samples_leaf=self.min_samples_leaf, max_features=self.max_features,
                             splitter=splitter, growth="depth", random_state=seed, n_jobs=1)

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """Mean over the trees of each tree's normalised total decrease of the training
        objective (sum_leaves N psi) made by the splits on each feature (scikit-learn's MDI)."""
        check_is_fitted(self)
        return np.mean([t.feature_importances_ for t in self.estimators_], axis=0)


_FOREST_SPEC = {"n_estimators": Interval(int, 1, None),
                "max_samples": (Options(None), Interval(int, 1, None), Interval(float, 0.0, None, "neither")),
                "max_depth": (Options(None), Interval(int, 1, None)),
                "min_samples_split": Interval(int, 2, None),
                "min_samples_leaf": Interval(int, 1, None),
                "max_features": (Options(None, "sqrt", "log2"), Interval(int, 1, None),
                                 Interval(float, 0.0, 1.0, "right")),
                "splitter": Options("auto", "exact", "hist"),
                "oob_score": Options(True, False), "warm_start": Options(True, False),
                "n_jobs": N_JOBS, "random_state": RANDOM_STATE, "verbose": VERBOSE}


class RandomForestClassifier(_BaggingClassifierMixin, ClassifierMixin, _BaseForest):
    """Random forest classifier (002 "Random forests"): majority vote of bagged CART trees.

    Parameters
    ----------
    n_estimators : int, default=100
        T, the number of trees.
    criterion : {"gini", "entropy", "error", "sqrt"}, default="gini"
        The trees' psi (``smml.tree.TreeClassifier``).
    max_depth : int or None, default=None
        Passed to every ``TreeClassifier`` (None: grown until the leaves are pure).
    min_samples_split : int, default=2
        Passed to every ``TreeClassifier``.
    min_samples_leaf : int, default=1
        Passed to every ``TreeClassifier``.
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Features tried at each node (sqrt(d) by default, 002).
    max_samples : float, int or None, default=None
        A float is alpha: each bootstrap sample has alpha m examples; an int is
        the number of examples (scikit-learn's convention); None = m.
    splitter : {"auto", "exact", "hist"}, default="auto"
        The trees' split search. "auto" is "exact" for a forest (unlike a single tree,
        where it is "hist" from 20,000 samples): histogram splits cost fully grown trees
        accuracy in their deep nodes (measured: bench/forest.md in the repository);
        "hist" is faster on very large data.
    oob_score : bool, default=False
        Out-of-bag estimate of the risk (``oob_error_``, zero-one loss) and
        ``oob_score_`` = 1 - ``oob_error_``.
    warm_start : bool, default=False
        A later ``fit`` (on the same data) keeps the fitted trees and adds
        ``n_estimators - len(estimators_)`` new ones: with an int ``random_state``, the
        trees a fresh fit with ``n_estimators`` trees would have (scikit-learn's semantics).
    n_jobs : int or None, default=None
        Threads of the pool growing the trees (results do not depend on it).
    random_state : None, int, RandomState or Generator, default=None
        Seed of the bootstrap samples and of the trees.
    verbose : bool, int or "auto", default=0
        A progress bar of the tree fits on stderr (1), none (0), or one only
        when stderr is a terminal ("auto").
    class_weight : dict, "balanced", "balanced_subsample" or None, default=None
        Weights of the classes, multiplying the sample weights (scikit-learn's semantics):
        a dict ``{label: weight}`` (missing labels weigh 1), or "balanced": class c weighs
        ``n_samples / (n_classes * n_c)``, n_c its number of training examples;
        "balanced_subsample": the same computed on each tree's bootstrap sample (repeats
        counted; a class absent from it weighs 0). None: every class weighs 1.

    Attributes
    ----------
    estimators_ : list of TreeClassifier
        The T fitted trees.
    estimators_samples_ : list of ndarray
        The bootstrap indices of each tree (int32 below 2**31 rows).
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    feature_importances_ : ndarray of shape (n_features,)
        Mean over the trees of their normalised impurity decreases (MDI).
    oob_score_ : float
        1 - ``oob_error_`` (``oob_score=True`` only).
    oob_error_ : float
        Out-of-bag zero-one loss (``oob_score=True`` only).

    See Also
    --------
    sklearn.ensemble.RandomForestClassifier : scikit-learn's random forest.
    BaggingClassifier : bagging of any classifier.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.ensemble import RandomForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> rf = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> rf.predict([[-2.0, -2.0, 0.0], [2.0, 2.0, 0.0]]).tolist()
    [0, 1]
    >>> rf.feature_importances_.shape
    (3,)
    """

    _parameter_spec = dict(_FOREST_SPEC, criterion=Options("gini", "entropy", "error", "sqrt"),
                           class_weight=CLASS_WEIGHT_SUBSAMPLE)

    def __init__(self, n_estimators: int = 100, criterion: str = "gini", max_depth: int | None = None,
                 min_samples_split: int = 2, min_samples_leaf: int = 1,
                 max_features: int | float | Literal["sqrt", "log2"] | None = "sqrt",
                 max_samples: int | float | None = None, splitter: Literal["auto", "exact", "hist"] = "auto",
                 oob_score: bool = False, warm_start: bool = False, n_jobs: int | None = None,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 verbose: bool | int | Literal["auto"] = 0,
                 class_weight: dict[Any, float] | Literal["balanced", "balanced_subsample"] | None = None
                ) -> None:
        store_params(self, locals())


class RandomForestRegressor(_BaggingRegressorMixin, RegressorMixin, _BaseForest):
    """Random forest regressor (002 "Random forests": regression returns the mean).

    As :class:`RandomForestClassifier` with ``smml.tree.TreeRegressor`` trees
    (squared error) averaged; ``max_features`` defaults to 1.0 (all features,
    as scikit-learn's regressor; pass "sqrt" for 002's default);
    ``oob_error_`` is the out-of-bag square loss and ``oob_score_`` its R^2.

    Parameters
    ----------
    n_estimators : int, default=100
        T, the number of trees.
    criterion : {"squared_error"}, default="squared_error"
        The trees' split criterion.
    max_depth : int or None, default=None
        Passed to every ``TreeRegressor`` (None: grown until the leaves are pure).
    min_samples_split : int, default=2
        Passed to every ``TreeRegressor``.
    min_samples_leaf : int, default=1
        Passed to every ``TreeRegressor``.
    max_features : int, float, "sqrt", "log2" or None, default=1.0
        Features tried at each node (1.0: all of them; "sqrt" is 002's default).
    max_samples : float, int or None, default=None
        A float is alpha: each bootstrap sample has alpha m examples; an int is
        the number of examples; None = m.
    splitter : {"auto", "exact", "hist"}, default="auto"
        The trees' split search ("auto" is "exact" for a forest).
    oob_score : bool, default=False
        Out-of-bag estimate of the risk (``oob_error_``, square loss) and its R^2
        ``oob_score_``.
    warm_start : bool, default=False
        A later ``fit`` (on the same data) keeps the fitted trees and adds new ones.
    n_jobs : int or None, default=None
        Threads of the pool growing the trees (results do not depend on it).
    random_state : None, int, RandomState or Generator, default=None
        Seed of the bootstrap samples and of the trees.
    verbose : bool, int or "auto", default=0
        A progress bar of the tree fits on stderr (1), none (0), or one only
        when stderr is a terminal ("auto").

    Attributes
    ----------
    estimators_ : list of TreeRegressor
        The T fitted trees.
    estimators_samples_ : list of ndarray
        The bootstrap indices of each tree (int32 below 2**31 rows).
    feature_importances_ : ndarray of shape (n_features,)
        Mean over the trees of their normalised impurity decreases (MDI).
    oob_score_ : float
        Out-of-bag R^2 (``oob_score=True`` only).
    oob_error_ : float
        Out-of-bag square loss (``oob_score=True`` only).

    See Also
    --------
    sklearn.ensemble.RandomForestRegressor : scikit-learn's random forest regressor.
    BaggingRegressor : bagging of any regressor.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.ensemble import RandomForestRegressor
    >>> X = np.arange(20.0).reshape(-1, 1)
    >>> y = np.where(X[:, 0] < 10, 0.0, 1.0)
    >>> rf = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    >>> rf.predict([[2.0], [17.0]]).round(3).tolist()
    [0.0, 1.0]
    """

    _parameter_spec = dict(_FOREST_SPEC, criterion=Options("squared_error"))

    def __init__(self, n_estimators: int = 100, criterion: str = "squared_error",
                 max_depth: int | None = None, min_samples_split: int = 2, min_samples_leaf: int = 1,
                 max_features: int | float | Literal["sqrt", "log2"] | None = 1.0,
                 max_samples: int | float | None = None, splitter: Literal["auto", "exact", "hist"] = "auto",
                 oob_score: bool = False, warm_start: bool = False, n_jobs: int | None = None,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 verbose: bool | int | Literal["auto"] = 0) -> None:
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_samples = max_samples
        self.splitter = splitter
        self.oob_score = oob_score
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
