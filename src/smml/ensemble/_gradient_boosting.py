"""Second-order gradient boosting of regression trees (002 section 3.2 "XGBoost").

Round t fits one regression tree f to the second-order Taylor expansion of the loss at the
current scores F_t (002 "Tree boosting"): with g_i, h_i the first and second derivatives of
l(y_i, .) at F_t(x_i) and Omega(f) = gamma L_f + 1/2 lambda sum_j w_j^2 (002 "Regularization"),
a tree with leaves I_j has the best leaf values w_j* = -G_j / (H_j + lambda) and objective
obj* = -1/2 sum_j G_j^2 / (H_j + lambda) + gamma L_f (002 "Structure score"); leaves are split
greedily at the largest

    gain = 1/2 [G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda) - (G_L+G_R)^2/(H_L+H_R+lambda)]

(002 "Learning the tree structure"), and only when gain > gamma, i.e. when the split lowers
obj* (one more leaf costs gamma).  Then F_{t+1} = F_t + learning_rate * f.

The kernel is ``smml._core._gbm`` on the tree kernel's histograms (``_core/_histogram.pxd``) and node
record; features are binned once with :func:`smml.tree.bin_features` (at most ``max_bins``
quantile bins, the tree's thresholds).  Prediction routes the rows through all trees in one
compiled call (``_core/_tree_predict.pyx``).

Choices where the notes are silent (a scikit-learn / xgboost user's expectations):

- Losses.  Regression: 002's square loss l = (y - y')^2, so g = -2 (y - F), h = 2 (not
  xgboost's 1/2 (y - y')^2 with g = F - y, h = 1: smml's lambda is twice xgboost's for the
  same trees, ``reg_lambda=2`` here is xgboost's ``reg_lambda=1``; min_child_weight likewise
  counts 2 per sample). ``loss="half_squared_error"`` is xgboost's loss, with xgboost's meaning
  of ``reg_lambda``, ``gamma`` and ``min_child_weight``.  Binary classification: 002's logistic loss (natural log) on
  p = 1 / (1 + e^-F): g = p - y, h = p (1 - p) (xgboost's binary:logistic).  More classes:
  softmax cross-entropy, one tree per class per round, g_k = p_k - [y = k] and
  h_k = p_k (1 - p_k), the exact diagonal of the Hessian (xgboost uses 2 p_k (1 - p_k)).
- F_0 is the best constant of the loss: the weighted mean (square loss), the log-odds of the
  weighted positive rate (logistic), the log of the weighted class frequencies (softmax).
- learning_rate (xgboost's eta) multiplies each tree's values; default 0.3 as xgboost.
- A split whose gain is within 1e-12 of the children's score sum G^2/(H+lambda) is rounding,
  not a decrease: it is not made (the tree kernel's rule).
- min_child_weight: least sum of h on each side of a split (xgboost's).
- subsample: each tree sees a fraction of the rows drawn without replacement; colsample_bytree:
  each tree sees a fraction of the features (at least one), drawn without replacement.
- Missing values: NaN in a numerical feature is a missing value, handled as xgboost and LightGBM
  do.  A feature with NaN in the training rows keeps one bin for them (at most max_bins - 1 finite
  bins); every split scans its candidates twice, with the node's missing rows in the second child
  (the finite cuts, and finite | missing) and then in the first (missing | finite, missing and
  "x <= t" | the rest); the second direction wins only when clearly better (a relative 1e-12), and
  the split stores the side (``Tree.missing_left``).  At prediction a NaN follows that side; at a
  split that never saw a missing value, the second child.  +-inf is an error; NaN in a categorical
  feature too.  (Single trees and forests reject NaN.)
- Early stopping: hold out validation_fraction of the rows (stratified for the classifier);
  stop when the validation loss has not improved by more than tol for n_iter_no_change rounds
  and keep the rounds up to the best one (``n_estimators_``).
- Ties: the lowest feature, then the lowest threshold / shortest prefix of the category
  ordering (categories ordered by G/H, the tree module's rule for regression).
- Fixed-point gradients: each round every g_i and h_i (times its weight) is rounded to a
  multiple of 2^-k, k the largest with n max|g| 2^k < 2^51 (``smml._exact_sums.fixed_scale``; separately for
  g and h and per class). Every sum of them (histogram bins, node totals, the sibling
  subtraction) is then exact, so a tree does not depend on the row order, the thread count or
  how the rows are split among machines: :mod:`smml.dask`'s distributed fit sums the workers'
  histograms and gets this fit's model bit for bit. The rounding changes each value by at most
  n max|g| 2^-53 (about 1e-10 relative for a million rows). F_0 is computed from exactly
  rounded sums for the same reason.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Literal, TypeVar

from numpy.typing import ArrayLike, NDArray

import warnings

import numpy as np

from smml._gbm_rounds import boosting_rounds, draws, drive, gradients, quantize
from smml._exact_sums import (baseline_scores as _baseline_scores, exact_parts as _exact_parts,
                              exact_total as _exact_total)
from smml._binning import apply_bins, bin_features
from smml._categorical import CategoricalMixin
from smml._core import _gbm, _tree, _tree_predict
from smml._random import seed_sequence_seed
from smml._threads import threads_for
from smml._validation import (InstanceOf, Interval, N_JOBS, Options, RANDOM_STATE, check_is_fitted,
                              drop_zero_weight, encode_classes, validate_sample_weight, validate_X,
                              validate_X_y)
from smml._progress import VERBOSE, progress
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator, store_params
from smml.tree import Tree

__all__ = ["GradientBoostingRegressor", "GradientBoostingClassifier"]

_Self = TypeVar("_Self")

#: work of one split's pass worth a thread of its own (threads_for): rows x features of the
#: histogram plus features x bins of each scan.  The best of 8192 ... 2^19 in sweeps with smml's
#: short spin of idle threads (smml/__init__.py; bench/gradient_boosting.md) and of 32768 / 8192 /
#: 2048 under libgomp's default spin (bench/experiments/sweep_boost_grain.py).  With threads that
#: sleep at once (OMP_WAIT_POLICY=PASSIVE set by the user) larger grains would be better.
_GRAIN = 8192
#: rows routed through all trees at prediction, worth a thread
_PREDICT_GRAIN = 256




class _InProcess:
    """The answers to the requests of the boosting rounds (``smml._gbm_rounds``) on all the
    rows of this process: the gradients, the tree kernel (``_gbm.grow_tree``, which adds the
    tree's values to the scores of its own rows), the routing of the rows left out of the
    subsample and of the eval sets through each tree, and their losses.

    ``routed``: [codes, y, sample weights, their sum, F, rows] per eval set, the first
    ``n_reported`` reported in ``evals_result_``; with ``stopping`` the last one is the
    early-stopping set. ``params``: (lambda, gamma, min_child_weight, learning rate, max depth,
    max leaves), the loss's scale applied."""

    def __init__(self, Xb, XbT, edges, is_cat, nan_code, y, sw, F, G, H, loss_code, routed, n_reported,
                 stopping, scale, params, n_threads):
        self.Xb, self.XbT, self.edges, self.is_cat, self.nan_code = Xb, XbT, edges, is_cat, nan_code
        self.y, self.sw, self.F, self.G, self.H, self.loss_code = y, sw, F, G, H, loss_code
        self.routed, self.n_reported, self.stopping, self.scale = routed, n_reported, stopping, scale
        self.params, self.nt = params, n_threads
        n, d = Xb.shape
        self.all_rows = np.arange(n, dtype=np.intp)
        # the kernel's working copy of a tree's rows (it reorders them), allocated once: a new
        # n-row array per tree was 1-3 ms of page faults on tall data
        self.work_rows = np.empty(n, dtype=np.intp)
        self.all_feats = np.arange(d, dtype=np.intp)
        self.out_rows = None
        self.pool = _gbm.HistPool()            # the trees' histogram buffers, reused
        # K classes: tree k writes its rows' values into G[k] (contiguous; the tree is done with
        # its gradients, and the next round makes new ones), and G is folded into F after the
        # round's last tree (_gbm.fold_scores): F's column k puts each row's entry on its own
        # cache line (500,000 x 8, 5 classes, depth 3: the kernel's F update was 10% of the
        # fit's CPU), and a buffer of its own would cost K n doubles
        self.buffered = G.shape[0] > 1
        # the square loss's h = 2 w is the same every round: after the first round's (written,
        # then rounded) H is neither written nor rounded again, its maximum kept (500,000 x 8:
        # 12 of the 20 MB the two passes moved a round)
        self.fixed_h = loss_code == _gbm.LOSSES["squared_error"]
        self.h_max = None
        self.h_rounded = False

    def grads(self, want_loss):
        loss, maxima = gradients(self.loss_code, self.y, self.F, self.sw, self.G, self.H, self.nt, want_loss,
                                 self.h_max)
        if self.fixed_h:
            self.h_max = maxima[0][1]
        return loss, maxima

    def quantize(self, scales):
        quantize(self.G, self.H, scales, self.nt, hess=not self.h_rounded)
        self.h_rounded = self.fixed_h

    def tree(self, k, rows, feats, more):
        lam, gam, mcw, lr, max_depth, max_leaf = self.params
        if k == 0:                  # the round's rows left out of the subsample
            self.out_rows = None
            if rows is not None:
                keep = np.ones(len(self.all_rows), bool)
                keep[rows] = False
                self.out_rows = np.flatnonzero(keep)
        # the tree's own rows get their scores in the kernel (from its leaves' rows)
        # (all rows: the kernel writes them in on its threads, not a serial copy here)
        if rows is None:
            work = self.work_rows
        else:
            work = self.work_rows[:len(rows)]
            np.copyto(work, rows)
        if self.buffered:
            F, col = self.G[k].reshape(-1, 1), 0
        else:
            F, col = self.F, k
        nodes, value, bits, sbin = _gbm.grow_tree(
            self.Xb, self.edges, self.is_cat, self.nan_code, self.G[k], self.H[k],
            work, self.all_feats if feats is None else feats,
            F, col, lam, gam, mcw, lr, max_depth, max_leaf, self.nt, _GRAIN, self.pool, Xbt=self.XbT,
            assign=self.buffered, fill_rows=rows is None)
        tree = Tree._grown(nodes, value, bits)
        # the rows left out of the subsample, then the eval sets, through the tree
        if self.out_rows is not None:
            if self.buffered:
                F[self.out_rows] = 0.0
            self._route_rows(tree, sbin, col, [(self.Xb, self.out_rows, F)])
        self._route(tree, sbin, k, [])
        if self.buffered and k == len(self.G) - 1:
            _gbm.fold_scores(self.F, self.G, self.nt)
        return tree, sbin

    def replay(self, tree, sbin, k):
        """A tree of the rounds fitted before (warm start) added to the scores of every row
        and of the eval sets, as the first fit added it."""
        self._route(tree, sbin, k, [(self.Xb, self.all_rows, self.F)])

    def _route(self, tree, sbin, k, sets):
        """The tree's values added to column k of the scores of ``sets`` [(codes, rows, F)],
        then of the eval sets'."""
        self._route_rows(tree, sbin, k, sets + [(r[0], r[5], r[4]) for r in self.routed])

    def _route_rows(self, tree, sbin, k, sets):
        """The tree's values added to column k of the scores of ``sets`` [(codes, rows, F)]."""
        if not sets:
            return
        rec = tree._records()
        for codes, rows, F in sets:
            _gbm.add_tree_codes(codes, rows, rec, sbin, self.nan_code, tree._bits, tree.value, F, k,
                                self.nt)

    def _loss(self, r):
        return _gbm.loss_sum(self.loss_code, r[1], r[4], r[2], self.nt) / r[3] / self.scale

    def scores(self):
        losses = [self._loss(r) for r in self.routed[:self.n_reported]]
        return losses, (self._loss(self.routed[-1]) if self.stopping else None)

    def finish(self):
        return _gbm.loss_sum(self.loss_code, self.y, self.F, self.sw, self.nt)


def _check_target_scale(est, y, sw):
    """Refuse targets so large that a split's gain overflows float64. With the square loss
    |g_i| = 2 |y_i - F(x_i)| <= 4 max|y| (the scores stay within the targets' range), so a
    node's G = sum_i w_i g_i is at most 4 max|y| sum_i w_i, and the gain G^2 / (H + lambda)
    (002 section 3.2) is finite while that bound squared is: beyond it every gain would be inf
    or NaN and the model would silently stay the baseline."""
    m = float(np.max(np.abs(y))) if y.size else 0.0
    with np.errstate(over="ignore"):
        bound = 4.0 * m * float(np.sum(sw))
        ok = np.isfinite(bound * bound)
    if not ok:
        raise ValueError(f"{type(est).__name__}: targets of magnitude {m:.3g} over {y.size} samples make "
                         "the split gains (sums of gradients, squared) overflow float64; rescale y")


class _BaseGradientBoosting(CategoricalMixin, SmmlEstimator):   # categorical columns as smml.tree's
    _loss_options = ()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True        # NaN is a missing value (a learned side per split)
        return tags

    @property
    def _parameter_spec(self):
        return {
            "loss": Options(*self._loss_options),
            "n_estimators": Interval(int, 1, None),
            "learning_rate": Interval(float, 0, None, closed="neither"),
            "max_depth": (Options(None), Interval(int, 0, None)),
            "max_leaf_nodes": (Options(None), Interval(int, 2, None)),
            "reg_lambda": Interval(float, 0, None),
            "gamma": Interval(float, 0, None),
            "min_child_weight": Interval(float, 0, None),
            "subsample": Interval(float, 0, 1, closed="right"),
            "colsample_bytree": Interval(float, 0, 1, closed="right"),
            "max_bins": Interval(int, 2, 256),
            "categorical_features": (Options(None, "from_dtype"), InstanceOf(list, tuple, np.ndarray)),
            "early_stopping": Options(True, False),
            "validation_fraction": Interval(float, 0, 1, closed="neither"),
            "n_iter_no_change": Interval(int, 1, None),
            "tol": Interval(float, 0, None),
            "warm_start": Options(True, False),
            "importance_type": Options("gain", "split"),
            "verbose": VERBOSE,
            "random_state": RANDOM_STATE,
            "n_jobs": N_JOBS,
        }

    # ---- fit ----------------------------------------------------------------
    def _fit(self, X, y, sample_weight, classifier, eval_set=None):
        self._validate_params()
        Xe = self._encode_categorical(X, fit=True)
        X, y = validate_X_y(self, Xe, y, dtype="floating", classifier=classifier, y_numeric=not classifier,
                            allow_nan=True)
        sw = validate_sample_weight(sample_weight, X.shape[0])
        if classifier:
            self.classes_, yenc = encode_classes(y)
            if len(self.classes_) < 2:
                raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes, "
                                 f"got only one class: {self.classes_[0]!r}")
            K = 1 if len(self.classes_) == 2 else len(self.classes_)
            self.loss_ = "log_loss" if K == 1 else "softmax"
            yf = yenc.astype(np.float64)
        else:
            K = 1
            self.loss_ = self.loss
            yf = np.ascontiguousarray(y, dtype=np.float64)
            yenc = None
        # "half_squared_error" (xgboost's reg:squarederror, 1/2 (y - F)^2: g = F - y, h = 1) runs
        # as the square loss, whose g and h are exactly twice its own, with lambda, gamma and
        # min_child_weight doubled: every leaf value -2G/(2H + 2 lambda), gain comparison and
        # weight test is then the half loss's, bit for bit (a power of two scales exactly)
        half = self.loss_ == "half_squared_error"
        scale = 2.0 if half else 1.0
        sw, X, yf = drop_zero_weight(sw, X, yf)
        if not classifier:
            _check_target_scale(self, yf, sw)
        if yenc is not None:
            yenc = yf.astype(np.intp)
        n, d = X.shape
        warm = bool(self.warm_start) and hasattr(self, "estimators_")
        T0 = 0
        if warm:
            T0 = self._warm_rounds(classifier, K, d)
            if T0 is None:
                return self
            entropy = self._rng_entropy
        else:
            entropy = np.random.SeedSequence(self._seed_sequence()).entropy
        # the stream of the fit's random draws, kept so warm_start can replay it
        rng = np.random.default_rng(np.random.SeedSequence(entropy))
        n_threads = self._n_threads()
        is_cat = np.zeros(d, np.uint8)
        is_cat[self._cat_idx] = 1
        n_cats = {j: len(self.categories_[j]) for j in self._cat_idx}

        # validation split (early stopping)
        val = None
        evals = self._eval_sets(eval_set, classifier)
        if self.early_stopping and evals:
            val = evals[-1]                     # xgboost's rule: the last eval set stops the rounds
        elif self.early_stopping:
            n_val = int(np.floor(self.validation_fraction * n))
            if n_val < 1 or n - n_val < 1:
                raise ValueError(f"early_stopping: validation_fraction={self.validation_fraction} of {n} "
                                 f"samples leaves an empty training or validation set")
            from sklearn.model_selection import train_test_split   # plumbing: the split only
            idx = np.arange(n)
            strat = yenc if classifier and np.min(np.bincount(yenc)) >= 2 else None
            tr, va = train_test_split(idx, test_size=n_val, random_state=int(rng.integers(2**31)),
                                      stratify=strat)
            tr.sort()
            va.sort()
            val = (X[va], yf[va], sw[va])
            X, yf, sw = np.ascontiguousarray(X[tr]), yf[tr], sw[tr]
            n = X.shape[0]
        Xb, edges, nan_code = bin_features(X, self.max_bins, int(rng.integers(2**63)), n_threads, is_cat,
                                           n_cats, missing=True)
        XbT = np.ascontiguousarray(Xb.T)

        # F_0: the best constant of the loss, from exactly rounded sums (the same on any
        # chunking of the rows: smml.dask)
        wsum = _exact_total([_exact_parts(sw)])
        F0 = _baseline_scores(self.loss_, K, [_exact_parts(sw * yf)],
                              [[_exact_parts(sw[yf == k]) for k in range(K)]] if K > 1 else None, wsum)
        self._baseline = F0
        self.n_trees_per_iteration_ = K
        F = np.tile(F0, (n, 1))
        G = np.empty((K, n))
        H = np.empty((K, n))
        loss_code = _gbm.LOSSES["squared_error" if half else self.loss_]
        m = n if self.subsample >= 1.0 else max(1, int(round(self.subsample * n)))
        mf = d if self.colsample_bytree >= 1.0 else max(1, int(round(self.colsample_bytree * d)))
        max_depth = -1 if self.max_depth is None else min(self.max_depth, 62)
        max_leaf = 0 if self.max_leaf_nodes is None else self.max_leaf_nodes
        n_edges = np.isfinite(edges).sum(axis=1)
        routed = []                             # [X codes, y, sw, sum sw, F, rows] per eval set
        for Xe, ye, swe in evals:
            routed.append([apply_bins(Xe, edges, n_edges, is_cat, n_cats, n_threads, nan_code), ye, swe,
                           float(swe.sum()), np.tile(F0, (Xe.shape[0], 1)),
                           np.arange(Xe.shape[0], dtype=np.intp)])
        if val is not None and not (evals and val is evals[-1]):
            # the held-out rows: routed as an eval set is, but not reported in evals_result_
            Xv, yv, swv = val
            routed.append([apply_bins(Xv, edges, n_edges, is_cat, n_cats, n_threads, nan_code), yv, swv,
                           float(swv.sum()), np.tile(F0, (Xv.shape[0], 1)),
                           np.arange(Xv.shape[0], dtype=np.intp)])
        old_trees = list(self.estimators_) if warm else []
        old_bins = list(self._split_bins) if warm else []
        old_score = list(self.train_score_) if warm else []
        driver = _InProcess(Xb, XbT, edges, is_cat, nan_code, yf, sw, F, G, H, loss_code, routed,
                            len(evals), val is not None, scale,
                            (scale * float(self.reg_lambda), scale * float(self.gamma),
                             scale * float(self.min_child_weight), float(self.learning_rate), max_depth,
                             max_leaf), n_threads)
        # warm start: the fitted rounds again, as the first fit made them: the same draws from
        # the stream, and F through the same additions in the same order
        for t in range(T0):
            draws(rng, n, m, d, mf)
            for k in range(K):
                driver.replay(old_trees[t * K + k], old_bins[t * K + k], k)
        bar = progress(range(T0, self.n_estimators), total=self.n_estimators - T0,
                       desc=f"{type(self).__name__} rounds", verbose=self.verbose, unit="round")
        stop = (self.tol, self.n_iter_no_change) if val is not None else None
        res = drive(boosting_rounds(bar, T0, self.n_estimators, K, n, d, m, mf, rng, wsum, scale, stop,
                                    type(self).__name__, self.learning_rate), driver)
        if hasattr(bar, "close"):       # stopped early: the bar ends where the rounds did
            bar.close()
        self._store_rounds(res, old_trees, old_bins, old_score, entropy, classifier, val is not None)
        return self

    def _store_rounds(self, res, old_trees=(), old_bins=(), old_score=(), entropy=None, classifier=False,
                      stopped=False):
        """The fitted attributes from the rounds' result (``smml._gbm_rounds.boosting_rounds``),
        after the trees of the rounds fitted before (warm start)."""
        trees = list(old_trees) + res["trees"]
        K = self.n_trees_per_iteration_
        self.estimators_ = trees
        self._split_bins = list(old_bins) + res["split_bins"]
        self._rng_entropy = entropy
        if classifier:
            self._warm_classes = self.classes_
        self.n_estimators_ = len(trees) // K
        self.train_score_ = np.array(list(old_score) + res["train_score"])
        self.validation_score_ = np.array(res["val_score"])
        self.evals_result_ = {f"validation_{i}": {self.loss_: h} for i, h in enumerate(res["history"])}
        self.best_iteration_ = res["best_round"] if stopped else self.n_estimators_ - 1
        self._pack()

    def _eval_sets(self, eval_set, classifier):
        """The validated eval sets: [(X, y as the fit's targets, sample weights)]."""
        if eval_set is None:
            return []
        if not isinstance(eval_set, (list, tuple)) or not all(
                isinstance(e, (list, tuple)) and len(e) in (2, 3) for e in eval_set):
            raise ValueError("eval_set must be a list of (X, y) or (X, y, sample_weight) tuples")
        out = []
        for i, e in enumerate(eval_set):
            Xe = validate_X(self, self._encode_categorical(e[0], fit=False), reset=False,
                            dtype="floating", allow_nan=True)
            ye = np.asarray(e[1])
            if ye.ndim != 1 or len(ye) != Xe.shape[0]:
                raise ValueError(f"eval_set[{i}]: y must be 1-d with {Xe.shape[0]} entries, got "
                                 f"shape {ye.shape}")
            if classifier:
                code = np.searchsorted(self.classes_, ye)
                code = np.minimum(code, len(self.classes_) - 1)
                if np.any(self.classes_[code] != ye):
                    raise ValueError(f"eval_set[{i}]: y holds labels outside classes_ "
                                     f"{self.classes_.tolist()}")
                ye = code.astype(np.float64)
            else:
                ye = np.ascontiguousarray(ye, dtype=np.float64)
                if not np.all(np.isfinite(ye)):
                    raise ValueError(f"eval_set[{i}]: y must be finite")
            swe = validate_sample_weight(e[2] if len(e) == 3 else None, Xe.shape[0])
            if Xe.shape[0] == 0 or not swe.sum() > 0:
                raise ValueError(f"eval_set[{i}] is empty or has no positive weight")
            out.append((Xe, ye, swe))
        return out

    def _warm_rounds(self, classifier, K, d):
        """warm_start: the rounds already fitted (None: nothing to add), after the checks."""
        name = type(self).__name__
        if self.early_stopping or len(getattr(self, "validation_score_", ())):
            raise ValueError(f"{name}: warm_start does not combine with early_stopping")
        if "_rng_entropy" not in self.__dict__ or "_split_bins" not in self.__dict__:
            raise ValueError(f"{name}: this model was fitted without what warm_start needs "
                             "(a model from an older smml): refit it")
        if K != self.n_trees_per_iteration_ or (
                classifier and not np.array_equal(self.__dict__.get("_warm_classes"), self.classes_)):
            raise ValueError(f"{name}: warm_start needs the classes of the first fit")
        T0 = self.n_estimators_
        if self.n_estimators < T0:
            raise ValueError(f"{name}: n_estimators={self.n_estimators} is below the {T0} rounds "
                             "already fitted; warm_start only adds rounds")
        if self.n_estimators == T0:
            warnings.warn(f"{name}: warm_start with n_estimators={T0} fits no new round",
                          UserWarning, stacklevel=3)
            return None
        return T0

    def _seed_sequence(self):
        return seed_sequence_seed(self.random_state)

    def _pack(self):
        """All trees in one record array (children_left made global) for the predict kernel."""
        K = self.n_trees_per_iteration_
        sizes = np.array([t.node_count for t in self.estimators_], np.intp)
        roots = np.zeros(len(sizes), np.intp)
        if len(sizes):
            roots[1:] = np.cumsum(sizes)[:-1]
        nodes = np.concatenate([t.nodes for t in self.estimators_])
        left = nodes["children_left"]
        offs = np.repeat(roots, sizes)
        nodes["children_left"] = np.where(left >= 0, left + offs, -1)
        cat = len(nodes) and nodes["is_categorical"].any()
        self._packed = (nodes.view(np.uint8),
                        # (one row of zeros when no test is categorical: the kernel reads none)
                        np.concatenate([t.category_bits for t in self.estimators_]) if cat
                        else np.zeros((1, _tree.CATEGORY_WORDS), np.uint64),
                        np.concatenate([t.value[:, 0] for t in self.estimators_]),
                        roots, np.tile(np.arange(K, dtype=np.intp), len(sizes) // K))
        self._levels = None
        if len(nodes) and not nodes["is_categorical"].any():
            # the tests as flat arrays, a leaf routing to itself, for _tree_predict.sum_trees_levels
            leaf = nodes["children_left"] < 0
            depth = np.array([t.nodes["depth"].max() for t in self.estimators_], np.intp)
            self._levels = (np.where(leaf, 0, nodes["feature"]).astype(np.int32),
                            np.where(leaf, np.inf, nodes["threshold"]),
                            np.where(leaf, np.arange(len(nodes)), nodes["children_left"]).astype(np.int32),
                            np.where(leaf, 0, nodes["missing_left"] == 0).astype(np.uint8),
                            depth)

    # ---- predict ------------------------------------------------------------
    def _validate_predict(self, X):
        check_is_fitted(self, "estimators_")
        Xe = self._encode_categorical(X, fit=False)
        return validate_X(self, Xe, reset=False, dtype="floating", allow_nan=True)

    def _raw(self, X, lo=0, hi=None, baseline=True):
        """F_0 (with baseline) + the sum of the rounds lo..hi-1 (all by default): (n, K)."""
        records, bits, value, roots, column = self._packed
        K = self.n_trees_per_iteration_
        hi = self.n_estimators_ if hi is None else hi
        out = np.empty((X.shape[0], K))
        out[:] = self._baseline if baseline else 0.0
        nt = threads_for(self._n_threads, X.shape[0], _PREDICT_GRAIN)
        levels = getattr(self, "_levels", None)     # (a model pickled before _levels: none)
        if levels is not None:
            feat, thr, left, miss_right, depth = levels
            _tree_predict.sum_trees_levels(X, feat, thr, left, miss_right, value, roots[lo * K:hi * K],
                                      depth[lo * K:hi * K], column[lo * K:hi * K], out, nt)
        else:
            _tree_predict.sum_trees(X, records, bits, value, roots[lo * K:hi * K], column[lo * K:hi * K], out, nt)
        return out

    def _staged_raw(self, X):
        X = self._validate_predict(X)
        F = np.tile(self._baseline, (X.shape[0], 1))
        for t in range(self.n_estimators_):
            F = F + self._raw(X, t, t + 1, baseline=False)
            yield F

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """Each feature's importance, normalised to sum 1, as ``importance_type`` says:
        "gain" (default), the total gain of the splits on it (002 "XGBoost" gain; xgboost's
        "total_gain", LightGBM's "gain"); "split", how many splits test it (xgboost's
        "weight", LightGBM's "split")."""
        check_is_fitted(self, "estimators_")
        imp = np.zeros(self.n_features_in_)
        by_split = getattr(self, "importance_type", "gain") == "split"
        for t in self.estimators_:
            internal = t.children_left >= 0
            np.add.at(imp, t.feature[internal], 1.0 if by_split else t.improvement[internal])
        s = imp.sum()
        return imp / s if s > 0 else imp


class GradientBoostingRegressor(RegressorMixin, _BaseGradientBoosting):
    """Second-order gradient boosting for regression (002 section 3.2 "XGBoost").

    Each round fits a regression tree to the Taylor expansion of 002's square loss
    l(y, y') = (y - y')^2 at the current scores: g_i = -2 (y_i - F(x_i)), h_i = 2 (002 "Quadratic
    loss": the expansion is exact), leaf values w_j* = -G_j / (H_j + lambda) times the learning
    rate, splits at the largest gain, made only when gain > gamma (see the module docstring; smml's
    reg_lambda = 2 x xgboost's for the same trees).

    Parameters
    ----------
    loss : {"squared_error", "half_squared_error"}, default="squared_error"
        "squared_error" is 002's l = (y - y')^2. "half_squared_error" is xgboost's
        reg:squarederror, 1/2 (y - y')^2 (g = F - y, h = 1): with it ``reg_lambda``,
        ``gamma`` and ``min_child_weight`` mean exactly what they mean in xgboost (the same
        trees as "squared_error" with the three doubled); ``train_score_`` is its loss.
    n_estimators : int, default=100
        The number of boosting rounds (002's conclusion slide).
    learning_rate : float > 0, default=0.3
        Shrinkage of each tree's values (xgboost's eta and default). 002's update adds the
        tree itself, F_{t+1} = F_t + f: ``learning_rate=1`` is the notes' plain algorithm.
    max_depth : int or None, default=6
        Maximum depth of each tree (002); None: no depth limit.
    max_leaf_nodes : int or None, default=None
        Maximum number of leaves of each tree; with it, leaves are split best gain first.
    reg_lambda : float >= 0, default=1.0
        002's lambda, the L2 penalty on the leaf values.
    gamma : float >= 0, default=0.0
        002's gamma, the cost of a leaf: a split is made only when its gain exceeds it.
    min_child_weight : float >= 0, default=1.0
        Least sum of h_i in each child of a split.
    subsample : float in (0, 1], default=1.0
        Fraction of the rows each tree sees (drawn without replacement).
    colsample_bytree : float in (0, 1], default=1.0
        Fraction of the features each tree sees (at least one, drawn without replacement).
    max_bins : int in [2, 256], default=256
        At most this many quantile bins per feature.
    categorical_features : "from_dtype", indices, names, mask or None, default="from_dtype"
        The tree module's categorical tests on these columns; "from_dtype": the columns of a
        pandas DataFrame whose dtype is ``category`` (as scikit-learn's HistGradientBoosting
        and LightGBM), none for other inputs; None: every column numerical.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows (or use the last
        ``eval_set`` of ``fit``) and stop when the validation loss has not improved by more
        than ``tol`` for ``n_iter_no_change`` rounds; the rounds up to the best one are kept.
    validation_fraction : float in (0, 1), default=0.1
        Fraction of the rows held out for early stopping.
    n_iter_no_change : int, default=10
        Rounds without improvement after which early stopping stops.
    tol : float >= 0, default=1e-7
        Least decrease of the validation loss that counts as an improvement.
    warm_start : bool, default=False
        A later ``fit`` on the same data keeps the fitted rounds and adds
        ``n_estimators - n_estimators_`` more: the model a fresh fit with ``n_estimators``
        rounds gives, bit for bit (the same bins, the same row / column draws, the same
        scores F; the random stream of the first fit is kept). Not with ``early_stopping``.
    importance_type : {"gain", "split"}, default="gain"
        What ``feature_importances_`` counts: the splits' total gain, or the number of splits.
    random_state : None, int, RandomState or Generator, default=None
        Seeds the row and column draws and the validation split.
    n_jobs : int or None, default=None
        OpenMP threads (results do not depend on it).
    verbose : bool, int or "auto", default=0
        A progress bar of the rounds on stderr (tqdm).

    Attributes
    ----------
    estimators_ : list of smml.tree.Tree
        The trees, one per round; with early stopping, up to the best round.
    n_estimators_ : int
        The number of rounds kept: with early stopping, the best round's number (rounds
        after it were run but dropped).
    train_score_ : ndarray of shape (n_estimators_,)
        Training loss after each round kept (with early stopping it ends at the best round).
    validation_score_ : ndarray of shape (n_estimators_,)
        Validation loss after each round kept (early stopping only, else empty; it ends at
        the best round).
    feature_importances_ : ndarray of shape (n_features,)
        Normalised total gain (or number of splits, ``importance_type``) of each feature.
    evals_result_ : dict
        ``{"validation_i": {loss name: [loss after each round]}}`` for ``fit``'s
        ``eval_set``, as xgboost's (every round run, including those after the best one).
    best_iteration_ : int
        0-based index of the last round kept: the best one under early stopping, where
        prediction stops.

    See Also
    --------
    sklearn.ensemble.HistGradientBoostingRegressor : scikit-learn's histogram gradient boosting.
    xgboost.XGBRegressor : xgboost's regressor (``loss="half_squared_error"`` matches its
        ``reg_lambda``, ``gamma`` and ``min_child_weight``).
    lightgbm.LGBMRegressor : LightGBM's regressor.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.ensemble import GradientBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(100, 2))
    >>> y = X[:, 0] ** 2 + X[:, 1]
    >>> gb = GradientBoostingRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    >>> gb.n_estimators_, gb.train_score_.shape
    (20, (20,))
    >>> bool(gb.train_score_[-1] < gb.train_score_[0])
    True
    >>> gb.predict(X[:3]).shape
    (3,)
    """

    _loss_options = ("squared_error", "half_squared_error")

    def __init__(self, loss: str | Callable[..., Any] = "squared_error", *, n_estimators: int = 100,
                 learning_rate: float = 0.3, max_depth: int | None = 6, max_leaf_nodes: int | None = None,
                 reg_lambda: float = 1.0, gamma: float = 0.0, min_child_weight: float = 1.0,
                 subsample: float = 1.0, colsample_bytree: float = 1.0, max_bins: int = 256,
                 categorical_features: Literal["from_dtype"] | ArrayLike | None = "from_dtype",
                 early_stopping: bool = False, validation_fraction: float = 0.1, n_iter_no_change: int = 10,
                 tol: float = 1e-7, warm_start: bool = False,
                 importance_type: Literal["gain", "split"] = "gain",
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None, verbose: bool | int | Literal["auto"] = 0) -> None:
        store_params(self, locals())

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
            eval_set: list[tuple[Any, ...]] | None = None) -> _Self:
        """Fit the boosting rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (NaN: missing; pandas ``category`` columns: categorical).
        y : array-like of shape (n_samples,)
            Training targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Example weights (multiply g and h); None: all 1.
        eval_set : list of tuple, default=None
            ``(X_val, y_val)`` or ``(X_val, y_val, sample_weight_val)`` pairs whose loss is
            recorded after every round in ``evals_result_`` (xgboost's ``fit(...,
            eval_set=...)``); with ``early_stopping=True`` the last of them is the
            validation set (no rows are held out).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, classifier=False, eval_set=eval_set)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The scores F(x) of the kept rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predictions.
        """
        X = self._validate_predict(X)
        return self._raw(X)[:, 0]

    def staged_predict(self, X: ArrayLike) -> Iterator[NDArray[Any]]:
        """Predictions after each round.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing).

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
            The predictions after rounds 1..t.
        """
        for F in self._staged_raw(X):
            yield F[:, 0].copy()


class GradientBoostingClassifier(ClassifierMixin, _BaseGradientBoosting):
    """Second-order gradient boosting for classification (002 section 3.2 "XGBoost").

    Two classes: 002's logistic loss l = -(1-y) log(1-p) - y log p on p = 1 / (1 + e^-F)
    (g = p - y, h = p (1 - p)), one tree per round.  K > 2 classes: softmax cross-entropy with
    one tree per class per round (g_k = p_k - [y = k], h_k = p_k (1 - p_k)).  Leaf values
    -G/(H + lambda) times the learning rate; splits made only when gain > gamma.  Parameters and
    attributes as :class:`GradientBoostingRegressor` (``loss="log_loss"`` covers both cases),
    plus ``classes_``; ``estimators_`` lists the rounds' trees, K per round for K > 2 classes.

    Parameters
    ----------
    loss : {"log_loss"}, default="log_loss"
        002's logistic loss for two classes, the softmax cross-entropy for more.
    n_estimators : int, default=100
        The number of boosting rounds (002's conclusion slide).
    learning_rate : float > 0, default=0.3
        Shrinkage of each tree's values (xgboost's eta and default). 002's update adds the
        tree itself, F_{t+1} = F_t + f: ``learning_rate=1`` is the notes' plain algorithm.
    max_depth : int or None, default=6
        Maximum depth of each tree (002); None: no depth limit.
    max_leaf_nodes : int or None, default=None
        Maximum number of leaves of each tree; with it, leaves are split best gain first.
    reg_lambda : float >= 0, default=1.0
        002's lambda, the L2 penalty on the leaf values.
    gamma : float >= 0, default=0.0
        002's gamma, the cost of a leaf: a split is made only when its gain exceeds it.
    min_child_weight : float >= 0, default=1.0
        Least sum of h_i in each child of a split.
    subsample : float in (0, 1], default=1.0
        Fraction of the rows each tree sees (drawn without replacement).
    colsample_bytree : float in (0, 1], default=1.0
        Fraction of the features each tree sees (at least one, drawn without replacement).
    max_bins : int in [2, 256], default=256
        At most this many quantile bins per feature.
    categorical_features : "from_dtype", indices, names, mask or None, default="from_dtype"
        The tree module's categorical tests on these columns; "from_dtype": the columns of a
        pandas DataFrame whose dtype is ``category`` (as scikit-learn's HistGradientBoosting
        and LightGBM), none for other inputs; None: every column numerical.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the rows (stratified by class) (or use the last
        ``eval_set`` of ``fit``) and stop when the validation loss has not improved by more
        than ``tol`` for ``n_iter_no_change`` rounds; the rounds up to the best one are kept.
    validation_fraction : float in (0, 1), default=0.1
        Fraction of the rows held out for early stopping.
    n_iter_no_change : int, default=10
        Rounds without improvement after which early stopping stops.
    tol : float >= 0, default=1e-7
        Least decrease of the validation loss that counts as an improvement.
    warm_start : bool, default=False
        A later ``fit`` on the same data keeps the fitted rounds and adds
        ``n_estimators - n_estimators_`` more: the model a fresh fit with ``n_estimators``
        rounds gives, bit for bit (the same bins, the same row / column draws, the same
        scores F; the random stream of the first fit is kept). Not with ``early_stopping``.
    importance_type : {"gain", "split"}, default="gain"
        What ``feature_importances_`` counts: the splits' total gain, or the number of splits.
    random_state : None, int, RandomState or Generator, default=None
        Seeds the row and column draws and the validation split.
    n_jobs : int or None, default=None
        OpenMP threads (results do not depend on it).
    verbose : bool, int or "auto", default=0
        A progress bar of the rounds on stderr (tqdm).

    Attributes
    ----------
    estimators_ : list of smml.tree.Tree
        The trees, one per round (K per round for K > 2 classes); with early stopping, up to the best round.
    n_estimators_ : int
        The number of rounds kept: with early stopping, the best round's number (rounds
        after it were run but dropped).
    train_score_ : ndarray of shape (n_estimators_,)
        Training loss after each round kept (with early stopping it ends at the best round).
    validation_score_ : ndarray of shape (n_estimators_,)
        Validation loss after each round kept (early stopping only, else empty; it ends at
        the best round).
    feature_importances_ : ndarray of shape (n_features,)
        Normalised total gain (or number of splits, ``importance_type``) of each feature.
    evals_result_ : dict
        ``{"validation_i": {loss name: [loss after each round]}}`` for ``fit``'s
        ``eval_set``, as xgboost's (every round run, including those after the best one).
    best_iteration_ : int
        0-based index of the last round kept: the best one under early stopping, where
        prediction stops.
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.

    See Also
    --------
    sklearn.ensemble.HistGradientBoostingClassifier : scikit-learn's histogram gradient boosting.
    xgboost.XGBClassifier : xgboost's classifier (binary:logistic, multi:softprob).
    lightgbm.LGBMClassifier : LightGBM's classifier.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.ensemble import GradientBoostingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 2))
    >>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> gb = GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    >>> gb.predict([[1.5, 1.5], [-1.5, 1.5]]).tolist()
    [1, 0]
    >>> gb.predict_proba(X[:4]).shape
    (4, 2)
    >>> gb.n_estimators_, len(gb.estimators_)
    (10, 10)
    """

    _loss_options = ("log_loss",)

    def __init__(self, loss: str | Callable[..., Any] = "log_loss", *, n_estimators: int = 100,
                 learning_rate: float = 0.3, max_depth: int | None = 6, max_leaf_nodes: int | None = None,
                 reg_lambda: float = 1.0, gamma: float = 0.0, min_child_weight: float = 1.0,
                 subsample: float = 1.0, colsample_bytree: float = 1.0, max_bins: int = 256,
                 categorical_features: Literal["from_dtype"] | ArrayLike | None = "from_dtype",
                 early_stopping: bool = False, validation_fraction: float = 0.1, n_iter_no_change: int = 10,
                 tol: float = 1e-7, warm_start: bool = False,
                 importance_type: Literal["gain", "split"] = "gain",
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None, verbose: bool | int | Literal["auto"] = 0) -> None:
        store_params(self, locals())

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None,
            eval_set: list[tuple[Any, ...]] | None = None) -> _Self:
        """Fit the boosting rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (NaN: missing; pandas ``category`` columns: categorical).
        y : array-like of shape (n_samples,)
            Training labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Example weights (multiply g and h); None: all 1.
        eval_set : list of tuple, default=None
            ``(X_val, y_val)`` or ``(X_val, y_val, sample_weight_val)`` pairs whose loss is
            recorded after every round in ``evals_result_`` (xgboost's ``fit(...,
            eval_set=...)``); with ``early_stopping=True`` the last of them is the
            validation set (no rows are held out).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight, classifier=True, eval_set=eval_set)

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Raw scores F(x): log-odds of ``classes_[1]`` for two classes, class scores for more.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            (n,) for two classes, else (n, K).
        """
        X = self._validate_predict(X)
        F = self._raw(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def _proba(self, F):
        if F.shape[1] == 1:
            with np.errstate(over="ignore"):        # exp(-F) = inf for F < -709: p1 = 0, its limit
                p1 = 1.0 / (1.0 + np.exp(-F[:, 0]))
            return np.column_stack([1.0 - p1, p1])
        E = np.exp(F - F.max(axis=1, keepdims=True))
        return E / E.sum(axis=1, keepdims=True)

    def _label(self, F):
        if F.shape[1] == 1:
            return self.classes_[(F[:, 0] > 0.0).astype(np.intp)]
        return self.classes_[np.argmax(F, axis=1)]

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities: the sigmoid (two classes) or softmax of the scores F(x).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing).

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probabilities, columns as ``classes_``.
        """
        X = self._validate_predict(X)
        return self._proba(self._raw(X))

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """The log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing).

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities, columns as ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The most probable class (F > 0 for two classes; ties: the first class).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted labels.
        """
        X = self._validate_predict(X)
        return self._label(self._raw(X))

    def staged_predict(self, X: ArrayLike) -> Iterator[NDArray[Any]]:
        """Predicted labels after each round.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing).

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
            The predicted labels after rounds 1..t.
        """
        for F in self._staged_raw(X):
            yield self._label(F)

    def staged_predict_proba(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """Class probabilities after each round.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples (NaN: missing).

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes)
            The probabilities after rounds 1..t.
        """
        for F in self._staged_raw(X):
            yield self._proba(F)
