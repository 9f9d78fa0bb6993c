"""Pruning of the fitted trees of :mod:`smml.tree`: reduced-error pruning on held-out rows
(002 "When to stop?") and the Occam-bound selection among the pruned subtrees (000 "A more
refined bound"), as mixins of the tree estimators."""
from __future__ import annotations

from typing import Literal, TypeVar

from numpy.typing import ArrayLike

import numbers

import numpy as np

from smml._core import _tree_predict
from smml._validation import check_is_fitted

_Self = TypeVar("_Self")

_OCCAM_MAX_CELLS = 50_000_000   # prune_occam's tables: at most 400 MB of float64
_REP_RULES = ("unchanged", "no_worse")   # prune_reduced_error's rules (002's words, Quinlan's)
_REP_PRUNING = {"reduced_error": "unchanged", "reduced_error_no_worse": "no_worse"}


class _ReducedErrorPruningMixin:
    """prune_reduced_error and the fit-time reduced-error pruning (``pruning=``) of both trees."""

    def prune_reduced_error(self: _Self, X_val: ArrayLike, y_val: ArrayLike,
                            rule: Literal["unchanged", "no_worse"] = "unchanged") -> _Self:
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

        Parameters
        ----------
        X_val : array-like of shape (n_val, n_features)
            The validation samples.
        y_val : array-like of shape (n_val,)
            Their labels (targets for the regressor).
        rule : {"unchanged", "no_worse"}, default="unchanged"
            When a node is replaced by a leaf (see above).

        Returns
        -------
        self : object
            The pruned estimator.
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
        _tree_predict.path_sums(X, np.ascontiguousarray(T, dtype=np.float64), t._records(), t._bits, out)
        return out


class _OccamPruningMixin:
    """prune_occam (the classifier's)."""

    def prune_occam(self: _Self, delta: float = 0.05, n_attributes: int | None = None) -> _Self:
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

        Parameters
        ----------
        delta : float, default=0.05
            The bound holds with probability at least 1 - delta.
        n_attributes : int or None, default=None
            d of the code length; None: ``n_features_in_``.

        Returns
        -------
        self : object
            The pruned classifier.
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
