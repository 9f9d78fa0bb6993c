"""The tree estimators of :mod:`smml.tree`: parameters, fit (the growth kernels), predict."""
from __future__ import annotations

from typing import Any, Literal, TypeVar

from numpy.typing import ArrayLike, NDArray

import math
import numbers

import numpy as np

import smml.tree as _package   # the growth's tunables, read at fit time (see smml/tree/__init__.py)
from smml._binning import bin_features, sort_columns
from smml._categorical import CategoricalMixin
from smml._class_weight import CLASS_WEIGHT, weighted_by_class
from smml._core import _tree_predict, _tree
from smml._random import seed64
from smml._threads import threads_for
from smml._validation import (Interval, Options, InstanceOf, N_JOBS, RANDOM_STATE, check_is_fitted,
                              drop_zero_weight, encode_classes, validate_sample_weight, validate_X,
                              validate_X_y)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator
from smml.tree._export import _RulesExportMixin, _TextExportMixin
from smml.tree._pruning import _REP_PRUNING, _OccamPruningMixin, _ReducedErrorPruningMixin
from smml.tree._tree_record import Tree

__all__ = ["TreeClassifier", "TreeRegressor"]

_Self = TypeVar("_Self")

_MAX_SAMPLES = 2**30 - 1        # node ids (< 2n) are int32 in the node records
_SPLIT_SCORES = ("weighted", "002")     # split_score: 000's weighted decrease, 002's slide formulas

# Threading grain (smml._threads.threads_for): the least work worth a thread of its own.
#: rows routed through a tree (prediction)
_PREDICT_GRAIN = 1_024


def _presorted_d(presorted):
    """The features of ``_fit_encoded``'s presorted columns (either form)."""
    return presorted[2].shape[0] if isinstance(presorted[0], str) else presorted[1].shape[0]


def _check_max_features(mf, d):
    if mf is None:
        return d
    if isinstance(mf, str):
        return max(1, int(math.sqrt(d))) if mf == "sqrt" else max(1, int(math.log2(d)))
    if isinstance(mf, numbers.Integral):
        if mf > d:
            raise ValueError(f"max_features={mf} exceeds the number of features {d}")
        return int(mf)
    return max(1, int(mf * d))


class _BaseTree(CategoricalMixin, _ReducedErrorPruningMixin, _TextExportMixin, SmmlEstimator):
    _criteria = ()

    def __setstate__(self, state):
        super().__setstate__(state)
        # a loaded tree (its records checked by Tree.__setstate__) must also test only the
        # features that X will have at predict time (checked against n_features_in_ there)
        t = self.__dict__.get("tree_")
        if isinstance(t, Tree):
            internal = t.children_left >= 0
            d = self.__dict__.get("n_features_in_")
            if internal.any() and (not isinstance(d, (int, np.integer))
                                   or int(t.feature[internal].max()) >= d):
                raise ValueError(f"{type(self).__name__}: the tree tests a feature index beyond "
                                 f"n_features_in_ = {d}")

    def _spec(self):
        return {
            "criterion": Options(*self._criteria),
            "splitter": Options("auto", "exact", "hist"),
            "growth": Options("best", "depth"),
            "max_depth": (Options(None), Interval(int, 0, None)),
            "min_samples_split": Interval(int, 2, None),
            "min_samples_leaf": Interval(int, 1, None),
            "min_impurity_decrease": Interval(float, 0, None),
            "max_leaf_nodes": (Options(None), Interval(int, 2, None)),
            "max_features": (Options(None, "sqrt", "log2"), Interval(int, 1, None),
                             Interval(float, 0, 1, closed="right")),
            "max_bins": Interval(int, 2, 256),
            "split_score": Options(*_SPLIT_SCORES),
            "categorical_features": (Options(None, "from_dtype"), InstanceOf(list, tuple, np.ndarray)),
            "pruning": Options(*self._prunings),
            "validation_fraction": Interval(float, 0, 1, closed="neither"),
            "delta": Interval(float, 0, 1, closed="neither"),
            "random_state": RANDOM_STATE,
            "n_jobs": N_JOBS,
        }

    @property
    def _parameter_spec(self):
        return self._spec()

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """Each feature's share of the decrease of the training objective (sum over the
        leaves of N psi, 000 'Tree Predictors') made by the splits that test it, summed over
        those nodes and normalised to sum 1 (scikit-learn's mean decrease in impurity, MDI;
        all zeros for a tree that is a single leaf). Computed on the training data: it
        favours features with many distinct values, as scikit-learn's does."""
        check_is_fitted(self)
        t = self.tree_
        imp = np.zeros(self.n_features_in_)
        internal = t.children_left >= 0
        np.add.at(imp, t.feature[internal], t.improvement[internal])
        s = imp.sum()
        return imp / s if s > 0 else imp

    # ---- fit ----------------------------------------------------------------
    def _prepare(self, X, y, classifier):
        Xe = self._encode_categorical(X, fit=True)
        X, y = validate_X_y(self, Xe, y, dtype="floating", classifier=classifier, y_numeric=not classifier)
        return X, y

    def _fit_encoded(self, X, y, classes, sample_weight, presorted=None):
        """Fast path for smml's ensembles, which validate once and fit many trees.

        ``X``: finite float64/float32 C-contiguous (n, d) array, numerical features only;
        ``y``: classifier: intp array of indices into ``classes`` (sorted, all present or not);
        regressor: finite float64 targets (``classes`` is None); ``sample_weight``:
        non-negative float64 (n,) array with a positive sum.  No checks are made here beyond
        the hyper-parameters: the caller guarantees the rest.  ``presorted``: the exact
        splitter's sorted columns when the caller has them (a forest cuts each tree's from one
        sort of all the rows): (values, order, ranks), ``build_tree``'s Xs, Si and Rs, where
        values may be a pair (Xv, Sg): all rows as float64 and their sort (``build_tree``'s Xv
        and Sg, in place of a sorted copy of the values); or ("ranked", Xv, Rrow, rows), the
        ranked mode: no sorted columns of the samples, but all N rows as float64, the rank of
        every row's value (d, N; ``rank_columns``) and the samples' rows (n,) int32, increasing
        (``build_tree``'s Xv, Rrow and glob); then
        every weight must be positive, and X may be None (the exact splitter reads only the
        sorted columns).
        """
        self._validate_params()
        if self.categorical_features or self.pruning is not None:
            raise ValueError("_fit_encoded supports neither categorical_features nor pruning")
        self._cat_idx = []
        self.categories_ = {}
        self.n_features_in_ = X.shape[1] if presorted is None else _presorted_d(presorted)
        ycls, yreg, n_classes = self._encoded_targets(y, classes)
        if getattr(self, "class_weight", None) is not None:
            sample_weight = weighted_by_class(sample_weight, self.class_weight, self.classes_, ycls)
        self.tree_ = self._fit_arrays(X, ycls, yreg, n_classes,
                                      np.ascontiguousarray(sample_weight, dtype=np.float64), self._seed(),
                                      presorted)
        self._after_tree_change()
        return self

    def _n_candidates(self, d):
        """Features tried per node on d features (``max_features`` resolved)."""
        return _check_max_features(self.max_features, d)

    def _fit_arrays(self, X, ycls, yreg, n_classes, sw, rng_seed, presorted=None):
        if presorted is not None:             # positive weights; X unused (exact splitter)
            n, d = len(sw), _presorted_d(presorted)
        else:
            if n_classes > 0:
                sw, X, ycls = drop_zero_weight(sw, X, ycls)
            else:
                sw, X, yreg = drop_zero_weight(sw, X, yreg)
            n, d = X.shape
        if n > _MAX_SAMPLES:
            raise ValueError(f"smml.tree grows trees on at most {_MAX_SAMPLES:,} samples (of positive weight), "
                             f"got {n:,}")
        is_cat = np.zeros(d, np.uint8)
        is_cat[self._cat_idx] = 1
        splitter = self.splitter
        literal = self.split_score == "002"
        if literal:
            if splitter == "hist":
                raise ValueError('split_score="002" (002\'s slide formulas) is supported with '
                                 'splitter="exact" or "auto" only, got splitter="hist"')
            if self._cat_idx:
                raise ValueError('split_score="002" (002\'s slide formulas) supports numerical '
                                 'features only: use categorical_features=None (e.g. one-hot encode '
                                 'the categories) or split_score="weighted"')
        if splitter == "auto":
            splitter = "hist" if n >= _package._AUTO_HIST_MIN_SAMPLES and not literal else "exact"
        self.splitter_ = splitter
        if presorted is not None and (splitter != "exact" or self._cat_idx):
            raise RuntimeError("smml.tree: presorted columns serve the exact splitter only")
        n_threads = self._n_threads()
        if splitter == "hist" or self._cat_idx:
            n_cats = {j: len(self.categories_[j]) for j in self._cat_idx}
            Xb, edges = bin_features(X, self.max_bins if splitter == "hist" else None, rng_seed, n_threads,
                                     is_cat, n_cats)
        else:
            Xb, edges = np.zeros((1, 1), np.uint8), np.full((d, 1), np.inf)
        Rs = np.zeros((0, 0), np.int32)          # the kernel ranks Xs itself
        Xv = Sg = Rrow = glob = None
        if presorted is not None and isinstance(presorted[0], str):     # ranked mode
            _, Xv, Rrow, glob = presorted
            N = Xv.shape[0]
            if (Xv.shape[1] != d or Xv.dtype != np.float64 or Rrow.shape != (d, N)
                    or Rrow.dtype != (np.uint16 if N <= 65536 else np.int32)
                    or glob.shape != (n,) or glob.dtype != np.int32):
                raise RuntimeError("smml.tree: the ranked columns do not match X")
            Xs = np.zeros((1, 1))
            Si = Rs = np.zeros((1, 1), np.int32)
        elif presorted is not None:
            Xs, Si, Rs = presorted
            if isinstance(Xs, tuple):           # the values through X and its sort (Xv, Sg)
                Xv, Sg = Xs
                Xs = np.zeros((1, 1))
                if Xv.shape[1] != d or Sg.shape != (d, Xv.shape[0]) or Xv.dtype != np.float64:
                    raise RuntimeError("smml.tree: the presorted columns do not match X")
            if Si.shape != (d, n) or Rs.shape != (d, n) or (Xv is None and Xs.shape[0] != d):
                raise RuntimeError("smml.tree: the presorted columns do not match X")
        elif splitter == "exact":
            Xs, Si = sort_columns(X, n_threads, skip=is_cat)
        else:
            Si = np.zeros((1, 1), np.int32)
            Xs = np.zeros((1, 1))
        # integer limits past n change nothing: clamp them so any valid value fits the kernel's intp
        max_depth = -1 if self.max_depth is None else min(self.max_depth, n)
        mf = _check_max_features(self.max_features, d)
        # Scale-free arithmetic.  The kernel sums w, w y and w y^2 and stops on relative tolerances
        # (1e-12 of the node's weight / sum w y^2), so huge or tiny weights overflow/underflow and a
        # target with a large offset (y = 1e8 + signal) loses the signal to cancellation.  The
        # weights are scaled by a power of two (exact: the same tree) so the largest is in
        # [0.5, 1); regression targets with a dominating offset are shifted by it (exactly), and all are
        # scaled by a power of two so |y| < 1.  Node values are mapped back after growth.
        e_w = int(np.frexp(sw.max())[1])
        sw = np.ldexp(sw, -e_w)
        mid = float(self.min_impurity_decrease)
        if n_classes == 0:
            lo, hi = float(yreg.min()), float(yreg.max())
            c0, half = lo / 2.0 + hi / 2.0, hi / 2.0 - lo / 2.0
            if half > 0.0 and abs(c0) > 16.0 * half:
                # an offset that dominates the spread: subtract it, rounded to a multiple of
                # 2**e(half) so that every y - c0 is exact (Sterbenz: y within a factor 2 of c0)
                e_h = int(np.frexp(half)[1])
                c0 = float(np.ldexp(np.round(np.ldexp(c0, -e_h)), e_h))
            else:
                c0 = 0.0        # small offsets: untouched values keep exact ties exact
            yc = yreg - c0
            e_y = int(np.frexp(np.abs(yc).max())[1])
            yreg = np.ascontiguousarray(np.ldexp(yc, -e_y))
            with np.errstate(over="ignore", under="ignore"):
                mid = float(np.ldexp(mid, -2 * e_y))     # min_impurity_decrease is in units of y^2
        nodes, value, bits = _tree.build_tree(
            0 if splitter == "exact" else 1, _tree.CRITERIA[self.criterion], n_classes,
            Xs, Si, Rs, Xb, edges, is_cat, ycls, yreg, sw,
            max_depth, min(self.min_samples_split, n + 1), min(self.min_samples_leaf, n + 1), mid,
            0 if self.max_leaf_nodes is None else min(self.max_leaf_nodes, 2 * n + 2), mf,
            self.growth == "best", rng_seed, n_threads, _package._GRAIN, _package._DECOMPOSE_MIN,
            _tree.SPLIT_SCORES[self.split_score], Xv, Sg, Rrow, glob)
        # the weighted decrease scales with the weights; 002's scores do not (psi and V are
        # proportions / weighted means), the regression one scales with y^2
        e_imp = 0 if literal else e_w
        with np.errstate(over="ignore", under="ignore"):
            nodes["weighted_n_node_samples"] = np.ldexp(nodes["weighted_n_node_samples"], e_w)
            if n_classes == 0:
                value = np.ldexp(value, e_y) + c0
                nodes["impurity"] = np.ldexp(nodes["impurity"], 2 * e_y)
                nodes["improvement"] = np.ldexp(nodes["improvement"], 2 * e_y + e_imp)
            else:
                value = np.ldexp(value, e_w)
                nodes["improvement"] = np.ldexp(nodes["improvement"], e_imp)
        return Tree(nodes, value, bits)

    def _seed(self):
        return seed64(self.random_state)

    # ---- predict ------------------------------------------------------------
    def _validate_predict(self, X):
        check_is_fitted(self, "tree_")
        Xe = self._encode_categorical(X, fit=False)
        return validate_X(self, Xe, reset=False, dtype="floating")

    def apply(self, X: ArrayLike) -> NDArray[np.intp]:
        """Index (in ``tree_``) of the leaf each row is routed to (000: "x is routed to l").

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        leaves : ndarray of shape (n_samples,)
            The node index of each row's leaf.
        """
        X = self._validate_predict(X)
        return self._apply(X)

    def _apply(self, X):
        t = self.tree_
        out = np.empty(X.shape[0], np.intp)
        _tree_predict.apply_tree(X, t._records(), t._bits, out,
                            threads_for(self._n_threads, X.shape[0], _PREDICT_GRAIN))
        return out

    def get_depth(self) -> int:
        """The depth of the fitted tree (0 for a single leaf).

        Returns
        -------
        depth : int
            ``tree_.max_depth``.
        """
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self) -> int:
        """The number of leaves of the fitted tree.

        Returns
        -------
        n_leaves : int
            ``tree_.n_leaves``.
        """
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    def _after_tree_change(self):
        pass



class TreeClassifier(ClassifierMixin, _OccamPruningMixin, _RulesExportMixin, _BaseTree):
    """Tree classifier of 000 "Tree Predictors" (binary and multiclass, labels of any type).

    Parameters
    ----------
    criterion : {"gini", "entropy", "error", "sqrt"}, default="gini"
        The function psi (see the module docstring for the multiclass forms).
    splitter : {"auto", "exact", "hist"}, default="auto"
        "exact" tries every threshold between consecutive distinct values: 000's growth as
        written. "hist" bins each feature into at most ``max_bins`` quantile bins first (the
        same splits as "exact" on features with at most ``max_bins`` distinct values, fewer
        candidates otherwise). "auto" is "hist" from 20,000 samples on (for speed; "exact"
        with ``split_score="002"``), else "exact": pass ``splitter="exact"`` for the notes' plain algorithm at every size.
    growth : {"best", "depth"}, default="best"
        Which leaf is expanded next (best-first: largest decrease of the training objective;
        with ``split_score="002"``, largest score).
    max_depth : int or None, default=None
        Stopping rule (module docstring): a leaf at this depth is not split; None: no limit.
    min_samples_split : int, default=2
        Stopping rule: a leaf with fewer examples is not split.
    min_samples_leaf : int, default=1
        Stopping rule: no split leaves fewer examples on either side.
    min_impurity_decrease : float, default=0.0
        Stopping rule: a split is made only when its decrease divided by the total training
        weight is at least this (with ``split_score="002"``: its score).
    max_leaf_nodes : int or None, default=None
        Growth stops when the tree has this many leaves; with ``growth="depth"`` it stops
        the depth-first growth when that many leaves exist.
    max_features : None, int, float, "sqrt" or "log2", default=None
        Size of the random subset of features tried at each node (002: random forests);
        exactly that many features are tried (no extra draws if they are all constant).
    max_bins : int in [2, 256], default=255
        Bins per feature for ``splitter="hist"``.
    categorical_features : list of column indices or names, a boolean mask, "from_dtype" or None, default=None
        Columns holding categories (any orderable values, e.g. strings in a DataFrame; at most
        256 per column); "from_dtype": a DataFrame's columns of pandas dtype ``category``.
    pruning : {None, "reduced_error", "reduced_error_no_worse", "occam"}, default=None
        "reduced_error": grow on ``1 - validation_fraction`` of the data, then
        :meth:`prune_reduced_error` on the rest with 002's rule (prune when the validation
        accuracy does not change); "reduced_error_no_worse": the same with ``rule="no_worse"``
        (prune when it does not decrease).  "occam": :meth:`prune_occam` with ``delta``
        (000 "A more refined bound").
    validation_fraction : float, default=0.2
        Fraction of the data held out for reduced-error pruning (``pruning="reduced_error"``
        or ``"reduced_error_no_worse"``).
    delta : float, default=0.05
        Confidence parameter of the Occam bound for ``pruning="occam"``.
    random_state : None, int or Generator, default=None
        Seeds max_features sampling, hist-binning subsamples and the validation split.
    n_jobs : int or None, default=None
        OpenMP threads for split search and prediction (results do not depend on it).
    split_score : {"weighted", "002"}, default="weighted"
        How a split is scored (module docstring).  "weighted": 000's decrease of the training
        objective, ``W psi(I) - W_L psi(I_L) - W_R psi(I_R)``.  "002": the slides' formula with
        unweighted children, ``psi(I) - psi(I_L) - psi(I_R)`` (002's C4.5 score H(I) - H(I_L) -
        H(I_R) halved with "entropy", smml's entropy being 000's H / 2; 002's CART score with
        "gini"); a split is then made when its score is positive (above 1e-12) and at least
        ``min_impurity_decrease``.  "002" needs the exact splitter ("auto" resolves to it) and
        numerical features only (ValueError otherwise).
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, with scikit-learn's semantics: each example's sample weight
        is multiplied by the weight of its class; a dict ``{label: weight}`` (missing labels
        weigh 1), or "balanced": class c weighs ``n_samples / (n_classes * n_c)``, n_c its
        number of examples (unweighted). None: every class weighs 1.

    Attributes
    ----------
    tree_ : Tree
        Plain numpy node arrays.
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    n_classes_ : int
        Number of classes.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Column names of a DataFrame given to fit.
    categories_ : dict
        ``{column index: categories}`` of the categorical columns.
    splitter_ : str
        The splitter used ("exact" or "hist").
    occam_bound_ : float
        The Occam bound of the pruned tree (after Occam pruning).

    See Also
    --------
    sklearn.tree.DecisionTreeClassifier : scikit-learn's CART classifier.
    TreeRegressor : the regression tree.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.tree import TreeClassifier
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0], [2.0, 0.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> clf = TreeClassifier().fit(X, y)
    >>> clf.predict([[0.0, 1.0], [1.0, 1.0], [2.5, 0.0]]).tolist()
    [0, 1, 1]
    >>> clf.get_n_leaves(), clf.get_depth()
    (4, 3)
    """

    _criteria = ("gini", "entropy", "error", "sqrt")
    _prunings = (None, "reduced_error", "reduced_error_no_worse", "occam")

    def __init__(self, criterion: str = "gini", *, splitter: Literal["auto", "exact", "hist"] = "auto",
                 growth: Literal["best", "depth"] = "best", max_depth: int | None = None,
                 min_samples_split: int = 2, min_samples_leaf: int = 1, min_impurity_decrease: float = 0.0,
                 max_leaf_nodes: int | None = None,
                 max_features: int | float | Literal["sqrt", "log2"] | None = None, max_bins: int = 255,
                 categorical_features: Literal["from_dtype"] | ArrayLike | None = None,
                 pruning: str | None = None, validation_fraction: float = 0.2, delta: float = 0.05,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None, split_score: Literal["weighted", "002"] = "weighted",
                 class_weight: dict[Any, float] | Literal["balanced"] | None = None) -> None:
        self.criterion = criterion
        self.splitter = splitter
        self.growth = growth
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.max_features = max_features
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.pruning = pruning
        self.validation_fraction = validation_fraction
        self.delta = delta
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.split_score = split_score
        self.class_weight = class_weight

    def _spec(self):
        return dict(super()._spec(), class_weight=CLASS_WEIGHT)

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Grow the tree on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (a DataFrame may hold categorical columns).
        y : array-like of shape (n_samples,)
            Training labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative example weights; None: all 1 (times ``class_weight``).

        Returns
        -------
        self : object
            The fitted tree.
        """
        self._validate_params()
        X, y = self._prepare(X, y, classifier=True)
        sw = validate_sample_weight(sample_weight, X.shape[0])
        self.classes_, yenc = encode_classes(y)
        self.n_classes_ = len(self.classes_)
        sw = weighted_by_class(sw, self.class_weight, self.classes_, yenc)
        seed = self._seed()
        if self.pruning in _REP_PRUNING:
            tr, va = self._holdout(X.shape[0], seed)
            self.tree_ = self._fit_arrays(X[tr], yenc[tr], np.zeros(1), self.n_classes_, sw[tr], seed)
            self._after_tree_change()
            self._prune_by_errors(self._errors_encoded(X[va], yenc[va]), _REP_PRUNING[self.pruning])
        else:
            self.tree_ = self._fit_arrays(X, yenc, np.zeros(1), self.n_classes_, sw, seed)
            self._after_tree_change()
            if self.pruning == "occam":
                self.prune_occam(self.delta)
        return self

    def _encoded_targets(self, y_encoded, classes):
        self.classes_ = np.asarray(classes)
        self.n_classes_ = len(self.classes_)
        return np.ascontiguousarray(y_encoded, dtype=np.intp), np.zeros(1), self.n_classes_

    def _after_tree_change(self):
        # leaf labels of 000: the most frequent label; ties -> the class that sorts last (in the
        # smallest unsigned type that holds a class index: a byte a node for up to 256 classes)
        v = self.tree_.value
        self._node_label = (v.shape[1] - 1 - np.argmax(v[:, ::-1], axis=1)).astype(
            np.min_scalar_type(max(v.shape[1] - 1, 0)))

    def _proba_of(self, nodes):
        """The class proportions of ``nodes`` (weighted counts over their sum; uniform where
        no weight reached the node), from ``tree_.value``: derived at each call, not kept
        per node (a forest's members would store V doubles a node more)."""
        v = self.tree_.value[nodes]
        w = v.sum(axis=1, keepdims=True)
        return np.divide(v, w, out=np.full_like(v, 1.0 / v.shape[1]), where=w > 0)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The label of the leaf each row is routed to (its most frequent training label).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted labels.
        """
        X = self._validate_predict(X)
        return self.classes_[self._node_label[self._apply(X)]]

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Weighted class proportions of the leaf each row is routed to.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Class proportions, columns as ``classes_``.
        """
        X = self._validate_predict(X)
        return self._proba_of(self._apply(X))

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """The log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log of the class proportions, columns as ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _validation_leaf_errors(self, X_val, y_val):
        y_val = np.asarray(y_val).reshape(-1)
        if y_val.shape[0] != X_val.shape[0]:
            raise ValueError(f"y_val has {y_val.shape[0]} entries but X_val has {X_val.shape[0]} rows")
        pos = np.searchsorted(self.classes_, y_val)
        pos = np.minimum(pos, self.n_classes_ - 1)
        yenc = np.where(self.classes_[pos] == y_val, pos, -1)
        return self._errors_encoded(X_val, yenc)

    def _errors_encoded(self, X_val, yenc):
        K = self.n_classes_
        T = np.zeros((X_val.shape[0], K + 1))
        ok = yenc >= 0
        T[np.flatnonzero(ok), yenc[ok]] = 1.0
        T[:, K] = 1.0
        S = self._route_sums(X_val, T)
        return S[:, K] - S[np.arange(S.shape[0]), self._node_label]


    def _leaf_text(self, v, decimals):
        return f"class: {self.classes_[self._node_label[v]]}"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class TreeRegressor(RegressorMixin, _BaseTree):
    """Regression tree (000 "Tree Predictors", 002 "CART trees for regression").

    Leaves predict the weighted mean target of their training examples; a split is worth the
    decrease of the weighted squared error, ``W V(I) - W_L V(I_L) - W_R V(I_R)``, or with
    ``split_score="002"`` 002's variance reduction ``V(I) - (W_L^2 V(I_L) + W_R^2 V(I_R)) / W^2``
    (the slide's ``|I_L|^2/|I|^2`` weights; ``min_impurity_decrease`` is then compared with it,
    in units of y^2).  Parameters as :class:`TreeClassifier` (criterion "squared_error"; pruning None, "reduced_error" or "reduced_error_no_worse" with the square loss
    (on real-valued targets an exactly unchanged validation error is rare, so the notes' rule
    mostly prunes subtrees that no validation example reaches); ``delta`` is unused,
    the Occam bound of 000 being for classification).

    Parameters
    ----------
    criterion : {"squared_error"}, default="squared_error"
        The weighted squared error (weighted variance V at each node).
    splitter : {"auto", "exact", "hist"}, default="auto"
        As :class:`TreeClassifier`: "exact" tries every threshold, "hist" bins each feature
        into at most ``max_bins`` quantile bins, "auto" is "hist" from 20,000 samples on.
    growth : {"best", "depth"}, default="best"
        Which leaf is expanded next (best-first or depth-first).
    max_depth : int or None, default=None
        Stopping rule (module docstring): a leaf at this depth is not split; None: no limit.
    min_samples_split : int, default=2
        Stopping rule: a leaf with fewer examples is not split.
    min_samples_leaf : int, default=1
        Stopping rule: no split leaves fewer examples on either side.
    min_impurity_decrease : float, default=0.0
        Stopping rule: a split is made only when its decrease divided by the total training
        weight is at least this (with ``split_score="002"``: its score).
    max_leaf_nodes : int or None, default=None
        Growth stops when the tree has this many leaves; with ``growth="depth"`` it stops
        the depth-first growth when that many leaves exist.
    max_features : None, int, float, "sqrt" or "log2", default=None
        Size of the random subset of features tried at each node.
    max_bins : int in [2, 256], default=255
        Bins per feature for ``splitter="hist"``.
    categorical_features : list of column indices or names, a boolean mask, "from_dtype" or None, default=None
        Columns holding categories (as :class:`TreeClassifier`).
    pruning : {None, "reduced_error", "reduced_error_no_worse"}, default=None
        Reduced-error pruning on ``validation_fraction`` of the data, with the square loss.
    validation_fraction : float, default=0.2
        Fraction of the data held out for reduced-error pruning.
    delta : float, default=0.05
        Unused (kept for the same parameters as :class:`TreeClassifier`).
    random_state : None, int or Generator, default=None
        Seeds max_features sampling, hist-binning subsamples and the validation split.
    n_jobs : int or None, default=None
        OpenMP threads for split search and prediction (results do not depend on it).
    split_score : {"weighted", "002"}, default="weighted"
        How a split is scored: the decrease of the weighted squared error, or 002's
        variance reduction (exact splitter and numerical features only).

    Attributes
    ----------
    tree_ : Tree
        Plain numpy node arrays (``value[:, 0]``: each node's mean target).
    n_features_in_ : int
        Number of features seen in fit.
    splitter_ : str
        The splitter used ("exact" or "hist").

    See Also
    --------
    sklearn.tree.DecisionTreeRegressor : scikit-learn's CART regressor.
    TreeClassifier : the classification tree.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.tree import TreeRegressor
    >>> X = np.arange(8.0).reshape(-1, 1)
    >>> y = np.array([1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 7.0, 7.0])
    >>> reg = TreeRegressor(max_depth=1).fit(X, y)
    >>> reg.predict([[2.0], [6.0]]).round(3).tolist()
    [1.0, 6.0]
    >>> print(f"{reg.tree_.threshold[0]:.3f}")
    3.500
    """

    _criteria = ("squared_error",)
    _prunings = (None, "reduced_error", "reduced_error_no_worse")

    def __init__(self, criterion: str = "squared_error", *,
                 splitter: Literal["auto", "exact", "hist"] = "auto",
                 growth: Literal["best", "depth"] = "best", max_depth: int | None = None,
                 min_samples_split: int = 2, min_samples_leaf: int = 1, min_impurity_decrease: float = 0.0,
                 max_leaf_nodes: int | None = None,
                 max_features: int | float | Literal["sqrt", "log2"] | None = None, max_bins: int = 255,
                 categorical_features: Literal["from_dtype"] | ArrayLike | None = None,
                 pruning: str | None = None, validation_fraction: float = 0.2, delta: float = 0.05,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None, split_score: Literal["weighted", "002"] = "weighted") -> None:
        self.criterion = criterion
        self.splitter = splitter
        self.growth = growth
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.max_features = max_features
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.pruning = pruning
        self.validation_fraction = validation_fraction
        self.delta = delta
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.split_score = split_score

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Grow the tree on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (a DataFrame may hold categorical columns).
        y : array-like of shape (n_samples,)
            Training targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative example weights; None: all 1.

        Returns
        -------
        self : object
            The fitted tree.
        """
        self._validate_params()
        X, y = self._prepare(X, y, classifier=False)
        sw = validate_sample_weight(sample_weight, X.shape[0])
        seed = self._seed()
        dummy = np.zeros(1, np.intp)
        if self.pruning in _REP_PRUNING:
            tr, va = self._holdout(X.shape[0], seed)
            self.tree_ = self._fit_arrays(X[tr], dummy, y[tr], 0, sw[tr], seed)
            self._prune_by_errors(self._validation_leaf_errors(X[va], y[va]), _REP_PRUNING[self.pruning])
        else:
            self.tree_ = self._fit_arrays(X, dummy, y, 0, sw, seed)
        return self

    def _encoded_targets(self, y, classes):
        return np.zeros(1, np.intp), np.ascontiguousarray(y, dtype=np.float64), 0

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The weighted mean target of the leaf each row is routed to.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predictions.
        """
        X = self._validate_predict(X)
        return self.tree_.value[self._apply(X), 0].copy()

    def _validation_leaf_errors(self, X_val, y_val):
        y_val = np.asarray(y_val, dtype=np.float64).reshape(-1)
        if y_val.shape[0] != X_val.shape[0]:
            raise ValueError(f"y_val has {y_val.shape[0]} entries but X_val has {X_val.shape[0]} rows")
        if not np.all(np.isfinite(y_val)):
            raise ValueError("y_val contains NaN or infinity")
        T = np.column_stack([np.ones_like(y_val), y_val, y_val * y_val])
        S = self._route_sums(X_val, T)
        v = self.tree_.value[:, 0]
        return np.maximum(S[:, 2] - 2 * v * S[:, 1] + v * v * S[:, 0], 0.0)

    def _leaf_text(self, v, decimals):
        return f"value: {self.tree_.value[v, 0]:.{decimals}g}"
