"""The fitted trees of :mod:`smml.tree` as text: ``export_text`` (both trees) and the
classifier's DNF formula ``export_rules`` (000 "Tree Predictors"), as mixins."""
from __future__ import annotations

from typing import Any, Sequence


import numbers

import numpy as np

from smml._validation import check_is_fitted


class _TextExportMixin:
    """export_text and the test / feature-name formatting it shares with export_rules; the
    estimator supplies ``_leaf_text(v, decimals)``."""

    def export_text(self, feature_names: Sequence[str] | None = None, decimals: int = 4) -> str:
        """The tree as indented text, one test or leaf per line, with feature names.

        Parameters
        ----------
        feature_names : list of str or None, default=None
            Names of the features; None: ``feature_names_in_`` when fitted on a DataFrame,
            else ``x0``, ``x1``, ...
        decimals : int, default=4
            Significant digits of the thresholds and leaf values.

        Returns
        -------
        text : str
            The tree, one line per node.
        """
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


class _RulesExportMixin:
    """export_rules (the classifier's)."""

    def export_rules(self, class_label: Any = None, feature_names: Sequence[str] | None = None,
                     decimals: int = 4) -> str:
        """The classifier as a DNF formula for one class (000 "Tree Predictors").

        The disjunction, over the leaves labelled ``class_label``, of the conjunction of the
        tests on the path from the root to that leaf (``"False"`` if no leaf has that label,
        ``"True"`` if the tree is a single such leaf).  Default class: ``classes_[-1]`` (the
        +1 of binary labels in {-1, +1}).

        Parameters
        ----------
        class_label : object or None, default=None
            The class whose leaves are described; None: ``classes_[-1]``.
        feature_names : list of str or None, default=None
            Names of the features (as :meth:`export_text`).
        decimals : int, default=4
            Significant digits of the thresholds.

        Returns
        -------
        formula : str
            The DNF formula, e.g. ``"(x0 <= 1.5 and x1 > 0.5) or (...)"``.
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
