"""Tree predictors (000 "Tree Predictors", "Risk analysis for tree predictors"; 002 "Tree-based classifiers").

Growth (000): start from a single leaf labelled with the most frequent label; repeatedly
replace a leaf by an internal node carrying a binary test and two new leaves, the first
child receiving the examples the test sends to 1.  ``growth="best"`` expands the leaf whose
best split decreases the training objective ``sum_leaves N_leaf * psi(leaf)`` the most (ties:
the leaf created first; with ``split_score="002"``: the largest score); ``growth="depth"``
expands the first child before the second (depth-first).  A leaf is not split when: its depth
is ``max_depth``; it has fewer than ``min_samples_split`` examples; no split leaves
``min_samples_leaf`` examples on each side; the best decrease divided by the total training
weight is below ``min_impurity_decrease``; or no split decreases the objective at all (000:
"the algorithm might even get stuck" with psi = min; the decrease must exceed 1e-12 times the
node weight, to absorb rounding).  (``split_score="002"``: the last two rules are on the score,
see below.)
Growth stops when the tree has ``max_leaf_nodes`` leaves (the N of 000's bounds counts
nodes: a tree with L leaves has N = 2L - 1 nodes).

Splitting functions psi (000, 003 section 3), for the weighted class proportions p_k of a node:

- ``"error"``:  1 - max_k p_k   (binary: min(p, 1 - p), the training error of 000)
- ``"gini"``:   sum_k p_k (1 - p_k) (002's Gini impurity; binary: 2p(1 - p))
- ``"entropy"``: (1/2) sum_k -p_k log2 p_k (002's entropy halved; binary: 000's scaled entropy)
- ``"sqrt"``:   (1/2) sum_k sqrt(p_k (1 - p_k)) (binary: sqrt(p(1 - p)) of 003)

Split scores (``split_score``).  By default (``"weighted"``) a split of node I into I_L, I_R is
scored by 000's decrease of the training objective ``sum_leaves N_leaf psi(leaf)`` (weights W:
the weighted numbers of examples),

    ``W psi(I) - W_L psi(I_L) - W_R psi(I_R)``,

the children weighted by their share of the node.  It is the default because it is the
decrease of the objective the growth minimises: each psi is concave, so by Jensen's inequality
(000) ``psi(I) >= (W_L/W) psi(I_L) + (W_R/W) psi(I_R)`` and a split never increases it (with
psi = "error" the objective is the training error, which thus never goes up as the tree grows).
Regression: leaves predict the weighted mean and the score is the decrease of the weighted
squared error, ``W V(I) - W_L V(I_L) - W_R V(I_R)`` (V the weighted variance: the CART weights
``|I_L|/|I|``, as scikit-learn).

``split_score="002"`` uses 002's slide formulas literally ("ID3 and C4.5", "CART trees,
classification", "CART trees for regression"), with *unweighted* children:

- classification: ``psi(I) - psi(I_L) - psi(I_R)`` for the chosen psi: with ``"entropy"``
  002's C4.5 score ``H(I) - H(I_L) - H(I_R)`` halved (smml's entropy is 000's scaled entropy,
  H / 2: the same argmax, half the value), with ``"gini"`` 002's CART score
  ``G(I) - G(I_L) - G(I_R)``;
- regression: ``V(I) - (W_L^2 V(I_L) + W_R^2 V(I_R)) / W^2``, 002's ``|I_L|^2/|I|^2`` weights
  with the example weights generalising the counts.

These are not decreases of the training objective: a classification score can be negative
for every split (a node with p = 1/2 split into two children with p near 1/2), and the
regression score is positive for every split of a non-constant node.  The best split maximises
the score (same tie rule as below) and a split is made when its score exceeds the rounding
tolerance (1e-12, in psi units; regression: 1e-12 times the node's weighted mean of y^2) and
is at least ``min_impurity_decrease`` (002's "do a split only if gain greater than gamma"),
compared with the score itself (not divided by the training weight as in the default);
``Tree.improvement`` holds the score and ``growth="best"`` expands the leaf with the largest
score.  Only with the exact splitter (``splitter="auto"`` resolves to ``"exact"``) and
numerical features: ``splitter="hist"`` or ``categorical_features`` raise ValueError.

Tests: numerical ``x_i <= threshold``; categorical ``x_i in S`` for a subset S of the
categories (000's ``smoker in {yes, ex}``).  For binary classification and regression the
categories present at a node are ordered by the proportion of the second class / the mean
target and the best prefix of that order is taken: an optimal subset (Breiman et al. 1984).
For multiclass the order is by the proportion of the node's most frequent class (a heuristic,
not always optimal).  Categories unseen at a node or in training go to the second child.

Tie rule among equally good splits: lowest feature index, then lowest threshold (numerical) or
shortest prefix (categorical).  Leaf labels (000): the most frequent label; ties go to the
class that sorts last (000: "+1 if N+ >= N-").

Splitters: ``"exact"`` tries every threshold between consecutive distinct values (each
feature is sorted once; nodes are partitioned in place keeping the order; the threshold is the
midpoint of the two values);  ``"hist"`` bins each feature once into at most ``max_bins``
quantile bins (bin edges at midpoints between values; with at most ``max_bins`` distinct values
it makes the same partitions as ``"exact"``, its threshold being the lowest bin edge between the
two values) and scans histograms;  ``"auto"`` is ``"hist"`` from 20,000 samples on.

Parallelism (OpenMP, ``n_jobs``): the split search of large nodes runs over features in
parallel, one record per feature and a serial argmin; from 20,000 samples on and without
``max_leaf_nodes``, the subtrees of the nodes with fewer than n/16 examples are grown
independently (in parallel) and appended in a fixed order.  The tree is the same as with the
plain growth (only node numbering, and the ``max_features`` draws, differ), and it never
depends on the thread count.  The whole growth runs without the GIL.
"""
import math
import numbers
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from smml._core import _binning, _tree_predict, _tree
from smml._threads import threads_for
from smml._validation import (Interval, Options, InstanceOf, N_JOBS, RANDOM_STATE, check_is_fitted,
                              drop_zero_weight, encode_classes, validate_sample_weight, validate_X,
                              validate_X_y)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator

__all__ = ["TreeClassifier", "TreeRegressor", "Tree", "sort_columns", "bin_edges", "bin_features"]

_AUTO_HIST_MIN_SAMPLES = 20_000
_BIN_SUBSAMPLE = 50_000
_DECOMPOSE_MIN = 20_000   # from this many samples on, subtrees below n/16 samples grow independently
_MAX_CATEGORIES = 256
_MAX_SAMPLES = 2**30 - 1        # node ids (< 2n) are int32 in the node records
_OCCAM_MAX_CELLS = 50_000_000   # prune_occam's tables: at most 400 MB of float64
_REP_RULES = ("unchanged", "no_worse")   # prune_reduced_error's rules (002's words, Quinlan's)
_REP_PRUNING = {"reduced_error": "unchanged", "reduced_error_no_worse": "no_worse"}
_SPLIT_SCORES = ("weighted", "002")     # split_score: 000's weighted decrease, 002's slide formulas

# Threading grains (smml._threads.threads_for): the least work worth a thread of its own.
#: samples x features: a node's split search and partition run on several threads from 2 grains
#: on; the independent subtrees on several threads from 8 grains of the tree's whole n x d
_GRAIN = 32_768
#: values sorted: the column sorts and the bin edges run in a thread pool from 2 grains on
_SORT_GRAIN = 100_000
#: rows routed through a tree (prediction)
_PREDICT_GRAIN = 1_024


class Tree:
    """A fitted tree: one numpy array of node records and two side arrays (node 0 is the root).

    ``nodes`` has the dtype ``Tree.NODE_DTYPE``: the growth kernel's ``Node`` record
    (``smml/_core/_tree.pxd``), which prediction reads as it is.  Each of its fields is also an
    attribute (``tree.feature`` is ``tree.nodes["feature"]``): ``threshold``, ``feature``,
    ``children_left`` (-1 marks leaves), ``is_categorical``, ``impurity`` (psi at the node),
    ``weighted_n_node_samples``, ``improvement`` (the decrease of the training objective made by
    the node's split; with ``split_score="002"``, 002's score of the split), ``n_node_samples``,
    ``depth``.  ``children_left[v]`` is the first child
    (test true); the second child is stored right after it, ``children_right[v] =
    children_left[v] + 1``.  The test is ``x[feature] <= threshold`` unless ``is_categorical[v]``,
    when it is ``x[feature] in S`` with S the categories whose bit is set in
    ``category_bits[v]`` (4 x 64 bits).  ``value`` (n_nodes, V) holds the weighted class counts
    (classifier) or the mean target (regressor) of the training examples routed to each node.
    """

    NODE_DTYPE = _tree.NODE_DTYPE
    _FIELDS = NODE_DTYPE.names + ("children_right", "value", "category_bits")

    def __init__(self, nodes, value, category_bits):
        self.nodes, self.value, self.category_bits = self._checked(nodes, value, category_bits)
        self._derive()

    @classmethod
    def _checked(cls, nodes, value, category_bits):
        """The arrays as stored, after the checks that keep prediction (which walks the
        records without bounds checks) inside them; also run on unpickling / smml.load."""
        nodes = np.ascontiguousarray(nodes)
        if not isinstance(nodes, np.ndarray) or nodes.dtype != cls.NODE_DTYPE or nodes.ndim != 1 \
                or len(nodes) == 0:
            raise ValueError(f"tree nodes must be a non-empty 1-d array of dtype {cls.NODE_DTYPE}")
        m = len(nodes)
        category_bits = np.ascontiguousarray(category_bits, dtype=np.uint64)
        if len(value) != m or category_bits.shape != (m, _tree.CATEGORY_WORDS):
            raise ValueError("tree nodes, value and category_bits must have one row per node")
        left = nodes["children_left"]
        internal = np.flatnonzero(left >= 0)
        if np.any(left[internal] <= internal) or np.any(left[internal] >= m - 1) or np.any(left < -1):
            # prediction walks the records without bounds checks: children follow their parent
            raise ValueError("tree nodes: children_left must be -1 or a node after its parent with its "
                             "sibling right after it")
        if np.any(nodes["feature"][internal] < 0):
            raise ValueError("tree nodes: an internal node tests a negative feature index")
        return nodes, value, category_bits

    @classmethod
    def _grown(cls, nodes, value, category_bits):
        """A tree as a growth kernel returns it, without _checked's checks: the kernels
        number children after their parent, siblings adjacent, by construction (every
        tree of a boosting fit passes _checked in tests/test_gradient_boosting.py).  Boosting makes one tree per
        round; the checks cost more than growing a small tree."""
        tree = cls.__new__(cls)
        tree.nodes, tree.value, tree.category_bits = nodes, value, category_bits
        tree._derive()
        return tree

    def _derive(self):
        self._bytes = self.nodes.view(np.uint8)
        self._right = None                  # children_right, made when first asked for

    def _records(self):
        """The node records as bytes, for the prediction kernels (smml._core._tree_predict)."""
        return self._bytes

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_bytes"], state["_right"]         # derived from nodes: rebuilt on load
        return state

    def __setstate__(self, state):
        # a loaded file is checked as a new tree is: a crafted record must not send the
        # prediction walk outside the arrays
        state = dict(state)
        try:
            state["nodes"], state["value"], state["category_bits"] = self._checked(
                state["nodes"], state["value"], state["category_bits"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"tree state is incomplete or malformed: {exc}") from None
        self.__dict__.update(state)
        self._derive()

    @property
    def children_right(self):
        """Second child of each node (-1 at leaves): children_left + 1 (read-only)."""
        if self._right is None:
            left = self.nodes["children_left"]
            right = np.where(left >= 0, left + 1, -1).astype(np.intp)
            right.flags.writeable = False
            self._right = right
        return self._right

    @property
    def node_count(self):
        return int(self.nodes.shape[0])

    @property
    def n_leaves(self):
        return int(np.sum(self.children_left < 0))

    @property
    def max_depth(self):
        return int(self.depth.max()) if self.node_count else 0

    def _subtree(self, keep_leaf):
        """Copy with the nodes in ``keep_leaf`` turned into leaves, unreachable nodes dropped
        (nodes renumbered in creation order: siblings stay adjacent)."""
        left = self.children_left.copy()
        left[keep_leaf] = -1
        reach = np.zeros(self.node_count, bool)
        reach[0] = True
        for v in range(self.node_count):           # parents precede children
            if reach[v] and left[v] >= 0:
                reach[left[v]] = reach[left[v] + 1] = True
        new_id = np.cumsum(reach) - 1
        nodes = self.nodes[reach]
        bits = self.category_bits[reach]
        l = left[reach]
        nodes["children_left"] = np.where(l >= 0, new_id[np.maximum(l, 0)], -1)
        _tree.make_leaves(nodes.view(np.uint8), bits, np.flatnonzero(l < 0))
        return Tree(nodes, self.value[reach], bits)


def _node_field(name):
    def field(self):
        return self.nodes[name]

    return property(field, doc=f"``nodes[{name!r}]``")


for _name in Tree.NODE_DTYPE.names:
    setattr(Tree, _name, _node_field(_name))


def _for_column_blocks(work, d, n_threads):
    """work(lo, hi) on n_threads blocks of the d columns, in a thread pool when n_threads > 1
    (numpy's sorts release the GIL)."""
    n_threads = max(1, min(n_threads, d))
    if n_threads == 1:
        work(0, d)
        return
    cuts = np.linspace(0, d, n_threads + 1).astype(int)
    with ThreadPoolExecutor(n_threads) as pool:
        list(pool.map(work, cuts[:-1], cuts[1:]))


def sort_columns(X, n_threads=1, stable=False, skip=None):
    """Each column of X sorted once: ``(values, order)``, both (d, n), float64 and int32.

    ``order[j]`` lists the rows by increasing ``X[:, j]`` (ties: numpy's default sort, or by
    row with ``stable=True``), ``values[j] = X[order[j], j]`` in float64.  Columns with
    ``skip[j]`` are not sorted (zeros).  Threads: ``threads_for(n_threads, n * d, _SORT_GRAIN)``,
    one column per task; the result does not depend on them.
    """
    n, d = X.shape
    Xs = np.empty((d, n), np.float64)
    Si = np.empty((d, n), np.int32)
    kind = "stable" if stable else None
    keep = np.ones(d, bool) if skip is None else ~np.asarray(skip, bool)
    Xs[~keep] = 0.0
    Si[~keep] = 0

    def work(j):
        col = np.ascontiguousarray(X[:, j], dtype=np.float64)
        o = np.argsort(col, kind=kind)
        Si[j] = o
        np.take(col, o, out=Xs[j])

    # one column per task, handed out as threads free up (blocks fixed in advance leave a
    # thread idle when the machine runs one core slower)
    cols = np.flatnonzero(keep).tolist()
    nt = min(len(cols), threads_for(n_threads, n * d, _SORT_GRAIN))
    if nt > 1:
        with ThreadPoolExecutor(nt) as pool:
            list(pool.map(work, cols))
    else:
        for j in cols:
            work(j)
    return Xs, Si


def sort_columns_ranked(X, n_threads=1):
    """Each column of X sorted once, stably (equal values by row): ``(order, ranks)``, both
    (d, n) int32, ``order[j]`` the rows by increasing ``X[:, j]`` and ``ranks[j, p]`` the first
    position in that order of the value at position p (equal values, equal ranks: the
    kernel's ``first_positions``). The sorted values are not kept (a forest looks a
    threshold's value up in X through ``order``: ``build_tree``'s Xv / Sg), so the shared
    sort of a forest costs 8 bytes per entry of X instead of 16."""
    n, d = X.shape
    Si = np.empty((d, n), np.int32)
    Rs = np.empty((d, n), np.int32)
    pos = np.arange(n, dtype=np.int32)

    def work(j):
        col = np.ascontiguousarray(X[:, j], dtype=np.float64)
        o = np.argsort(col, kind="stable")
        Si[j] = o
        v = col[o]
        r = Rs[j]
        r[0] = 0
        if n > 1:
            np.copyto(r[1:], pos[1:])
            r[1:][v[1:] <= v[:-1]] = 0          # not a new value: take the previous first position
            np.maximum.accumulate(r, out=r)

    nt = min(d, threads_for(n_threads, n * d, _SORT_GRAIN))
    if nt > 1:
        with ThreadPoolExecutor(nt) as pool:
            list(pool.map(work, range(d)))
    else:
        for j in range(d):
            work(j)
    return Si, Rs


def bin_edges(X, max_bins, seed, n_threads=1, skip=None, reserve=None):
    """Quantile bin edges per column (at most max_bins bins): a list of d ascending arrays.

    NaN values are left out (boosting's missing values); a column with ``reserve[j]`` gets at
    most ``max_bins - 1`` bins (a code is kept for its missing values).

    With at most max_bins distinct values the edges are the midpoints between them (the
    histogram search then equals the exact one); otherwise midpoints at the quantiles of (a
    subsample of ``_BIN_SUBSAMPLE`` rows drawn with ``seed`` of) the column.  A midpoint that
    rounds outside [a, b) is a.  Columns with ``skip[j]`` get no edges.  Codes: ``bin_columns``.
    """
    n, d = X.shape
    if n > _BIN_SUBSAMPLE:
        sub = np.random.default_rng(seed).choice(n, _BIN_SUBSAMPLE, replace=False)
        sub.sort()
        Xsub = X[sub]
    else:
        Xsub = X
    edges = [np.zeros(0)] * d

    def work(lo, hi):
        for j in range(lo, hi):
            if skip is not None and skip[j]:
                continue
            v = np.unique(np.asarray(Xsub[:, j], dtype=np.float64))
            if len(v) and np.isnan(v[-1]):          # unique sorts NaN last
                v = v[~np.isnan(v)]
            mb = max_bins - 1 if reserve is not None and reserve[j] else max_bins
            if len(v) <= mb:
                a, b = v[:-1], v[1:]
                mid = a / 2.0 + b / 2.0
                bad = (mid >= b) | (mid < a)
                mid[bad] = a[bad]
                edges[j] = mid
            else:
                idx = (np.arange(1, mb) * (len(v) - 1)) // mb
                mid = v[idx] / 2.0 + v[idx + 1] / 2.0
                bad = (mid >= v[idx + 1]) | (mid < v[idx])
                mid[bad] = v[idx][bad]
                edges[j] = np.unique(mid)

    _for_column_blocks(work, d, threads_for(n_threads, Xsub.size, _SORT_GRAIN))
    return edges


def bin_features(X, max_bins, seed, n_threads, is_cat, n_cats, missing=False):
    """``(codes, edges)``: the (n, d) uint8 codes of X and the (d, n_bins_max) threshold of each
    code, ``code <= b  <=>  x <= edges[j, b]`` (padded with +inf), from :func:`bin_edges`.

    ``max_bins=None``: numerical columns are not binned (code 0).  Categorical columns
    (``is_cat[j]``, ``n_cats[j]`` categories) hold their category codes 0..255 (no unknowns in
    training data) and have no edges.  The histogram kernels of the trees and of boosting read these.

    ``missing=True`` (boosting; X may hold NaN in numerical columns): returns ``(codes, edges,
    nan_code)``; a column with NaN gets at most ``max_bins - 1`` finite bins and its NaN rows the
    code after them, ``nan_code[j]`` (-1 for a column without NaN).
    """
    n, d = X.shape
    is_cat = np.asarray(is_cat, np.uint8)
    nan_cols = np.zeros(d, bool)
    if missing and max_bins is not None:
        nan_cols = np.isnan(X).any(axis=0) & (is_cat == 0)
    n_bins = np.ones(d, np.intp)
    for j, c in n_cats.items():
        n_bins[j] = max(1, c)
    n_edges = np.zeros(d, np.intp)
    if max_bins is not None:
        edges_list = bin_edges(X, max_bins, seed, n_threads, skip=is_cat, reserve=nan_cols)
        for j in range(d):
            if not is_cat[j]:
                n_edges[j] = len(edges_list[j])
                n_bins[j] = n_edges[j] + 1 + int(nan_cols[j])
    edges = np.full((d, max(int(n_bins.max()), 1)), np.inf)
    if max_bins is not None:
        for j in range(d):
            if not is_cat[j]:
                edges[j, :n_edges[j]] = edges_list[j]
    nan_code = np.where(nan_cols, n_edges + 1, -1).astype(np.intp)
    Xb = apply_bins(X, edges, n_edges if max_bins is not None else None, is_cat, n_cats, n_threads,
                    nan_code)
    return (Xb, edges, nan_code) if missing else (Xb, edges)


def apply_bins(X, edges, n_edges, is_cat, cat_columns, n_threads, nan_code=None):
    """The (n, d) uint8 codes of X for the ``edges`` of :func:`bin_features` (``n_edges[j]``
    finite edges in column j; None: numerical columns unbinned, code 0); categorical columns
    (``is_cat``, ``cat_columns``) hold their category codes.  NaN in a numerical column: code
    ``nan_code[j]`` when that is >= 0, else the last finite code (above every edge)."""
    Xb = np.zeros(X.shape, np.uint8)
    if n_edges is not None:
        _binning.bin_columns(X, edges, np.asarray(n_edges, np.intp), np.asarray(is_cat, np.uint8), Xb,
                             n_threads)
    for j in cat_columns:
        Xb[:, j] = X[:, j].astype(np.intp).astype(np.uint8)
    if nan_code is not None:
        for j in np.flatnonzero(nan_code >= 0):
            Xb[np.isnan(X[:, j]), j] = nan_code[j]
    return Xb


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


class _BaseTree(SmmlEstimator):
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
    def feature_importances_(self):
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

    # ---- categorical columns ------------------------------------------------
    def _categorical_indices(self, X):
        cf = self.categorical_features
        if isinstance(cf, str) and cf == "from_dtype":
            # pandas' category columns (scikit-learn's HistGradientBoosting and LightGBM do the
            # same); anything else is numerical
            dtypes = getattr(X, "dtypes", None)
            if dtypes is None or not hasattr(X, "columns"):
                return []
            return [i for i, dt in enumerate(dtypes) if str(dt) == "category"]
        if cf is None or len(cf) == 0:
            return []
        cols = list(getattr(X, "columns", []))
        n_features = X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else None
        cf = list(np.asarray(cf).tolist()) if isinstance(cf, np.ndarray) else list(cf)
        if all(isinstance(c, (bool, np.bool_)) for c in cf):
            if n_features is not None and len(cf) != n_features:
                raise ValueError(f"categorical_features as a mask has {len(cf)} entries for {n_features} features")
            return [i for i, c in enumerate(cf) if c]
        out = []
        for c in cf:
            if isinstance(c, str):
                if c not in cols:
                    raise ValueError(f"categorical feature {c!r} is not a column of X")
                out.append(cols.index(c))
            elif isinstance(c, numbers.Integral):
                if n_features is not None and not 0 <= c < n_features:
                    raise ValueError(f"categorical feature index {c} is out of range for {n_features} features")
                out.append(int(c))
            else:
                raise ValueError(f"categorical_features must name columns by index or name, got {c!r}")
        return sorted(set(out))

    def _encode_categorical(self, X, fit):
        """Replace categorical columns by integer codes (fit: learn the categories)."""
        if fit:
            self._cat_idx = self._categorical_indices(X)
            self.categories_ = {}
        if not self._cat_idx:
            return X
        import pandas as pd

        is_df = isinstance(X, pd.DataFrame)
        if is_df:
            X = X.copy()
        else:
            X = np.array(X, dtype=object) if not isinstance(X, np.ndarray) or X.dtype == object else np.array(X)
            if X.ndim != 2:
                return X  # validation reports the shape problem
            X = X.astype(object) if X.dtype.kind not in "biuf" else X.astype(np.float64)
        for j in self._cat_idx:
            if j >= X.shape[1]:
                raise ValueError(f"categorical feature index {j} is out of range for {X.shape[1]} features")
            col = np.asarray(X.iloc[:, j] if is_df else X[:, j], dtype=object)
            if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in col):
                raise ValueError(f"categorical feature {j} contains missing values (None or NaN)")
            if fit:
                try:
                    cats = np.unique(col)
                except TypeError:
                    raise ValueError(f"categorical feature {j} mixes types that cannot be ordered") from None
                if len(cats) > _MAX_CATEGORIES:
                    raise ValueError(f"categorical feature {j} has {len(cats)} categories; at most "
                                     f"{_MAX_CATEGORIES} are supported")
                self.categories_[j] = cats
            cats = self.categories_[j]
            try:
                pos = np.searchsorted(cats, col)
            except TypeError:
                pos = np.zeros(len(col), dtype=np.intp)
            pos = np.minimum(pos, len(cats) - 1)
            known = np.array([cats[p] == v for p, v in zip(pos, col)], dtype=bool) if len(col) else np.zeros(0, bool)
            codes = np.where(known, pos, -1).astype(np.float64)   # unknown -> -1 -> second child
            if is_df:
                X[X.columns[j]] = codes
            else:
                X[:, j] = codes
        if not is_df:
            X = X.astype(np.float64)
        return X

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
        and Sg, in place of a sorted copy of the values); then
        every weight must be positive, and X may be None (the exact splitter reads only the
        sorted columns).
        """
        self._validate_params()
        if self.categorical_features or self.pruning is not None:
            raise ValueError("_fit_encoded supports neither categorical_features nor pruning")
        self._cat_idx = []
        self.categories_ = {}
        self.n_features_in_ = X.shape[1] if presorted is None else presorted[1].shape[0]
        ycls, yreg, n_classes = self._encoded_targets(y, classes)
        self.tree_ = self._fit_arrays(X, ycls, yreg, n_classes,
                                      np.ascontiguousarray(sample_weight, dtype=np.float64), self._seed(),
                                      presorted)
        self._after_tree_change()
        return self

    def _fit_arrays(self, X, ycls, yreg, n_classes, sw, rng_seed, presorted=None):
        if presorted is not None:             # positive weights; X unused (exact splitter)
            n, d = len(sw), presorted[1].shape[0]
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
            splitter = "hist" if n >= _AUTO_HIST_MIN_SAMPLES and not literal else "exact"
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
        Xv = Sg = None
        if presorted is not None:
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
            self.growth == "best", rng_seed, n_threads, _GRAIN, _DECOMPOSE_MIN,
            _tree.SPLIT_SCORES[self.split_score], Xv, Sg)
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
        rs = self.random_state
        if isinstance(rs, np.random.Generator):
            return int(rs.integers(0, 2**63))
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(0, 2**31)) * 2**31 + int(rs.randint(0, 2**31))
        if rs is None:
            return int(np.random.default_rng().integers(0, 2**63))
        # an int seed: one splitmix64 step (cheap, and distinct seeds give distinct streams)
        z = (int(rs) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    # ---- predict ------------------------------------------------------------
    def _validate_predict(self, X):
        check_is_fitted(self, "tree_")
        Xe = self._encode_categorical(X, fit=False)
        return validate_X(self, Xe, reset=False, dtype="floating")

    def apply(self, X):
        """Index (in ``tree_``) of the leaf each row is routed to (000: "x is routed to l")."""
        X = self._validate_predict(X)
        return self._apply(X)

    def _apply(self, X):
        t = self.tree_
        out = np.empty(X.shape[0], np.intp)
        _tree_predict.apply_tree(X, t._records(), t.category_bits, out,
                            threads_for(self._n_threads, X.shape[0], _PREDICT_GRAIN))
        return out

    def get_depth(self):
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self):
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    # ---- pruning ------------------------------------------------------------
    def prune_reduced_error(self, X_val, y_val, rule="unchanged"):
        """Reduced-error pruning on a validation set (002 "When to stop?").

        002: "starting at the leaves, each node replaced by its most common class; if
        prediction accuracy does not change, ditch the node" (errors computed on a validation
        set).  Children before parents, an internal node is replaced by a leaf predicting its
        training label when the validation error of that leaf, compared with the error of the
        node's current (already pruned) subtree on the validation examples routed to it, is

        - ``rule="unchanged"`` (default, the notes' words): equal, i.e. the accuracy does not
          change;
        - ``rule="no_worse"``: not larger, i.e. the accuracy does not decrease (Quinlan's
          original rule, which also prunes when pruning lowers the validation error).

        Zero-one loss (weighted counts of mistakes), square loss for regression; "equal" up to
        rounding (1e-12 relative: the counts of a classifier are exact).  Modifies the fitted
        tree in place and returns self.
        """
        if rule not in _REP_RULES:
            raise ValueError(f"rule must be one of {_REP_RULES}, got {rule!r}")
        X_val = self._validate_predict(X_val)
        self._prune_by_errors(self._validation_leaf_errors(X_val, y_val), rule)
        return self

    def _prune_by_errors(self, err_leaf, rule):
        """002's bottom-up rule on the validation error each node would make as a leaf:
        children before parents, a node becomes a leaf when that error equals its current
        subtree's (``rule="unchanged"``) or is at most it (``"no_worse"``), up to rounding."""
        t = self.tree_
        sub = err_leaf.copy()
        to_leaf = np.zeros(t.node_count, bool)
        unchanged = rule == "unchanged"
        for v in range(t.node_count - 1, -1, -1):
            l, r = t.children_left[v], t.children_right[v]
            if l < 0:
                continue
            s = sub[l] + sub[r]
            tol = 1e-12 * max(1.0, abs(s))
            if (abs(err_leaf[v] - s) <= tol) if unchanged else (err_leaf[v] <= s + tol):
                to_leaf[v] = True
                sub[v] = err_leaf[v]
            else:
                sub[v] = s
        self.tree_ = t._subtree(to_leaf)
        self._after_tree_change()

    def _holdout(self, n, seed):
        """(training rows, validation rows) for the reduced-error prunings."""
        perm = np.random.default_rng(seed).permutation(n)
        n_val = int(round(self.validation_fraction * n))
        if n_val < 1 or n - n_val < 1:
            raise ValueError(f"pruning={self.pruning!r} needs at least 2 samples to hold out "
                             f"validation_fraction={self.validation_fraction} of them; got n_samples = {n}")
        return np.sort(perm[n_val:]), np.sort(perm[:n_val])

    def _route_sums(self, X, T):
        t = self.tree_
        out = np.zeros((t.node_count, T.shape[1]))
        _tree_predict.path_sums(X, np.ascontiguousarray(T, dtype=np.float64), t._records(), t.category_bits, out)
        return out

    def _after_tree_change(self):
        pass

    def export_text(self, feature_names=None, decimals=4):
        """The tree as indented text, one test or leaf per line, with feature names."""
        check_is_fitted(self, "tree_")
        self._check_decimals(decimals)
        names = self._feature_names(feature_names)
        t = self.tree_
        lines = []
        stack = [(0, 0, None)]          # (node, indent, line to print first); no recursion: deep trees
        while stack:
            v, indent, head = stack.pop()
            pad = "|   " * indent
            if head is not None:
                lines.append(head)
            if t.children_left[v] < 0:
                lines.append(f"{pad}|--- {self._leaf_text(v, decimals)}")
                continue
            yes, no = self._test_text(v, names, decimals)
            stack.append((t.children_right[v], indent + 1, f"{pad}|--- {no}"))
            stack.append((t.children_left[v], indent + 1, f"{pad}|--- {yes}"))
        return "\n".join(lines) + "\n"

    @staticmethod
    def _check_decimals(decimals):
        if isinstance(decimals, bool) or not isinstance(decimals, numbers.Integral) or decimals < 0:
            raise ValueError(f"decimals must be a non-negative integer, got {decimals!r}")

    def _feature_names(self, feature_names):
        if feature_names is not None:
            names = list(feature_names)
            if len(names) != self.n_features_in_:
                raise ValueError(f"feature_names has {len(names)} entries for {self.n_features_in_} features")
            return names
        if hasattr(self, "feature_names_in_"):
            return [str(c) for c in self.feature_names_in_]
        return [f"x{j}" for j in range(self.n_features_in_)]

    def _test_text(self, v, names, decimals):
        t = self.tree_
        f = t.feature[v]
        if t.is_categorical[v]:
            bits = t.category_bits[v]
            cats = self.categories_[f]
            inside = [str(cats[c]) for c in range(len(cats)) if (int(bits[c >> 6]) >> (c & 63)) & 1]
            s = "{" + ", ".join(inside) + "}"
            return f"{names[f]} in {s}", f"{names[f]} not in {s}"
        thr = f"{t.threshold[v]:.{decimals}g}"
        return f"{names[f]} <= {thr}", f"{names[f]} > {thr}"


class TreeClassifier(ClassifierMixin, _BaseTree):
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
    max_depth, min_samples_split, min_samples_leaf, min_impurity_decrease, max_leaf_nodes :
        Stopping rules (module docstring).  ``max_leaf_nodes`` with ``growth="depth"`` stops
        the depth-first growth when that many leaves exist.
    max_features : None, int, float, "sqrt" or "log2"
        Size of the random subset of features tried at each node (002: random forests);
        exactly that many features are tried (no extra draws if they are all constant).
    max_bins : int in [2, 256], default=255
        Bins per feature for ``splitter="hist"``.
    split_score : {"weighted", "002"}, default="weighted"
        How a split is scored (module docstring).  "weighted": 000's decrease of the training
        objective, ``W psi(I) - W_L psi(I_L) - W_R psi(I_R)``.  "002": the slides' formula with
        unweighted children, ``psi(I) - psi(I_L) - psi(I_R)`` (002's C4.5 score H(I) - H(I_L) -
        H(I_R) halved with "entropy", smml's entropy being 000's H / 2; 002's CART score with
        "gini"); a split is then made when its score is positive (above 1e-12) and at least
        ``min_impurity_decrease``.  "002" needs the exact splitter ("auto" resolves to it) and
        numerical features only (ValueError otherwise).
    categorical_features : list of column indices or names, a boolean mask, "from_dtype" or None, default=None
        Columns holding categories (any orderable values, e.g. strings in a DataFrame; at most
        256 per column); "from_dtype": a DataFrame's columns of pandas dtype ``category``.
    pruning : {None, "reduced_error", "reduced_error_no_worse", "occam"}
        "reduced_error": grow on ``1 - validation_fraction`` of the data, then
        :meth:`prune_reduced_error` on the rest with 002's rule (prune when the validation
        accuracy does not change); "reduced_error_no_worse": the same with ``rule="no_worse"``
        (prune when it does not decrease).  "occam": :meth:`prune_occam` with ``delta``
        (000 "A more refined bound").
    random_state : None, int or Generator
        Seeds max_features sampling, hist-binning subsamples and the validation split.
    n_jobs : int or None
        OpenMP threads for split search and prediction (results do not depend on it).

    Attributes
    ----------
    tree_ : Tree
        Plain numpy node arrays.
    classes_, n_classes_, n_features_in_, feature_names_in_, categories_ ({index: categories}),
    splitter_ (the splitter used), occam_bound_ (after Occam pruning).
    """

    _criteria = ("gini", "entropy", "error", "sqrt")
    _prunings = (None, "reduced_error", "reduced_error_no_worse", "occam")

    def __init__(self, criterion="gini", *, splitter="auto", growth="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_impurity_decrease=0.0,
                 max_leaf_nodes=None, max_features=None, max_bins=255, categorical_features=None,
                 pruning=None, validation_fraction=0.2, delta=0.05, random_state=None, n_jobs=None,
                 split_score="weighted"):
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

    def fit(self, X, y, sample_weight=None):
        """Grow the tree on (X, y) with optional non-negative ``sample_weight``."""
        self._validate_params()
        X, y = self._prepare(X, y, classifier=True)
        sw = validate_sample_weight(sample_weight, X.shape[0])
        self.classes_, yenc = encode_classes(y)
        self.n_classes_ = len(self.classes_)
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
        # leaf labels of 000: the most frequent label; ties -> the class that sorts last
        v = self.tree_.value
        self._node_label = (v.shape[1] - 1 - np.argmax(v[:, ::-1], axis=1)).astype(np.intp)
        w = v.sum(axis=1, keepdims=True)
        self._node_proba = np.divide(v, w, out=np.full_like(v, 1.0 / v.shape[1]), where=w > 0)

    def predict(self, X):
        X = self._validate_predict(X)
        return self.classes_[self._node_label[self._apply(X)]]

    def predict_proba(self, X):
        """Weighted class proportions of the leaf each row is routed to."""
        X = self._validate_predict(X)
        return self._node_proba[self._apply(X)]

    def predict_log_proba(self, X):
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


    def prune_occam(self, delta=0.05, n_attributes=None):
        """Occam-bound selection among the pruned subtrees (000 "A more refined bound").

        Among all subtrees obtained by turning internal nodes into leaves, keep the one
        minimising ``training error + sqrt((|sigma(h)| + ln(2/delta)) / (2m))`` with
        ``|sigma(h)| = (N_h + 1) ceil(log2(d + 3)) + 2 floor(log2 N_h) + 1`` (N_h nodes,
        d attributes, m training examples; the training error is the weighted fraction of
        misclassified training examples).  The minimum is exact: a dynamic programme gives,
        for every number of leaves, the smallest training error of a pruned subtree with that
        many leaves (ties: the smaller tree).  Sets ``occam_bound_``; returns self.

        How the tests enter the code length.  000 derives |sigma(h)| for trees on d *binary*
        attributes, where an internal node is named by the index of the attribute it tests
        (ceil(log2(d + 3)) bits per node).  smml's tests are ``x_j <= threshold`` (and
        ``x_j in S`` for categories), so a test is a feature *and* a threshold.  By default
        ``d = n_attributes = n_features_in_``: each feature counts as one attribute and the
        threshold is not encoded.  That is exactly 000's code when every feature is binary
        (0/1 values: the only split is ``x_j <= 0.5``, the attribute itself).  With numerical
        features it treats each learned test as a fixed binary attribute, so the bound is the
        notes' bound for the binarised features, not a bound that pays for choosing the
        thresholds.  To pay for them, pass ``n_attributes`` = the number of distinct tests a
        node may choose from, e.g. sum_j (distinct values of feature j - 1) (every candidate
        threshold, or category subset, a binary attribute): each node then costs
        ceil(log2(n_attributes + 3)) bits.  (The candidate thresholds still come from the
        training inputs, though not from their labels.)
        """
        from smml.bounds import occam_tree_bound

        check_is_fitted(self, "tree_")
        t = self.tree_
        W = t.weighted_n_node_samples[0]
        m = int(t.n_node_samples[0])
        if n_attributes is None:
            d = self.n_features_in_
        elif isinstance(n_attributes, (bool, np.bool_)) or not isinstance(n_attributes, numbers.Integral) \
                or n_attributes < 1:
            raise ValueError(f"n_attributes must be a positive integer, got {n_attributes!r}")
        else:
            d = int(n_attributes)
        leaf_err = t.weighted_n_node_samples - t.value.max(axis=1)
        # the DP keeps one table per node, as long as the node's number of leaves + 1: its size
        # is the sum of the nodes' leaf counts (n log n when balanced, ~n^2/2 for a deep chain)
        n_leaves = np.ones(t.node_count, np.int64)
        for v in range(t.node_count - 1, -1, -1):
            if t.children_left[v] >= 0:
                n_leaves[v] = n_leaves[t.children_left[v]] + n_leaves[t.children_right[v]]
        cells = int(n_leaves.sum())
        if cells > _OCCAM_MAX_CELLS:
            raise ValueError(f"prune_occam: this tree ({t.node_count} nodes, depth {t.max_depth}) needs "
                             f"{cells:,} dynamic-programming cells (> {_OCCAM_MAX_CELLS:,}); limit its "
                             f"growth (max_depth, max_leaf_nodes, min_samples_leaf) first")
        E = [None] * t.node_count
        for v in range(t.node_count - 1, -1, -1):
            l, r = t.children_left[v], t.children_right[v]
            if l < 0:
                E[v] = np.array([np.inf, leaf_err[v]])
                continue
            a, b = E[l], E[r]
            if len(a) > len(b):
                a, b = b, a
            conv = np.full(len(a) + len(b) - 1, np.inf)
            for i in range(1, len(a)):
                seg = conv[i:i + len(b)]
                np.minimum(seg, a[i] + b, out=seg)
            conv[1] = leaf_err[v]          # one leaf: v itself turned into a leaf
            E[v] = conv
        root = E[0]
        ks = np.arange(1, len(root))
        bounds = np.array([occam_tree_bound(max(0.0, min(1.0, root[k] / W)), 2 * k - 1, d, m, delta)
                           for k in ks])
        k_best = int(ks[np.argmin(bounds)])
        self.occam_bound_ = float(bounds.min())
        to_leaf = np.zeros(t.node_count, bool)
        stack = [(0, k_best)]
        while stack:
            v, k = stack.pop()
            l, r = t.children_left[v], t.children_right[v]
            if l < 0:
                continue
            if k == 1:
                to_leaf[v] = True
                continue
            a, b = E[l], E[r]
            for k1 in range(1, min(len(a), k)):
                k2 = k - k1
                if k2 < len(b) and a[k1] + b[k2] == E[v][k]:
                    break
            stack.append((l, k1))
            stack.append((r, k - k1))
        self.tree_ = t._subtree(to_leaf)
        self._after_tree_change()
        return self

    def _leaf_text(self, v, decimals):
        return f"class: {self.classes_[self._node_label[v]]}"

    def export_rules(self, class_label=None, feature_names=None, decimals=4):
        """The classifier as a DNF formula for one class (000 "Tree Predictors").

        The disjunction, over the leaves labelled ``class_label``, of the conjunction of the
        tests on the path from the root to that leaf (``"False"`` if no leaf has that label,
        ``"True"`` if the tree is a single such leaf).  Default class: ``classes_[-1]`` (the
        +1 of binary labels in {-1, +1}).
        """
        check_is_fitted(self, "tree_")
        if class_label is None:
            class_label = self.classes_[-1]
        match = np.flatnonzero(self.classes_ == class_label)
        if len(match) == 0:
            raise ValueError(f"class_label {class_label!r} is not one of classes_ {list(self.classes_)}")
        k = match[0]
        self._check_decimals(decimals)
        names = self._feature_names(feature_names)
        t = self.tree_
        clauses = []
        stack = [(0, [])]               # first child first, as in a recursive walk
        while stack:
            v, path = stack.pop()
            if t.children_left[v] < 0:
                if self._node_label[v] == k:
                    clauses.append(path)
                continue
            yes, no = self._test_text(v, names, decimals)
            stack.append((t.children_right[v], path + [no]))
            stack.append((t.children_left[v], path + [yes]))
        if not clauses:
            return "False"
        if clauses == [[]]:
            return "True"
        return " or ".join("(" + " and ".join(c) + ")" for c in clauses)

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
    """

    _criteria = ("squared_error",)
    _prunings = (None, "reduced_error", "reduced_error_no_worse")

    def __init__(self, criterion="squared_error", *, splitter="auto", growth="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_impurity_decrease=0.0,
                 max_leaf_nodes=None, max_features=None, max_bins=255, categorical_features=None,
                 pruning=None, validation_fraction=0.2, delta=0.05, random_state=None, n_jobs=None,
                 split_score="weighted"):
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

    def fit(self, X, y, sample_weight=None):
        """Grow the tree on (X, y) with optional non-negative ``sample_weight``."""
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

    def predict(self, X):
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
