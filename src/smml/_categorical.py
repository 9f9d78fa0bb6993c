"""Categorical columns of the tree learners: which columns are categorical
(``categorical_features``) and their integer codes (``categories_`` learned at fit).

Shared by ``smml.tree`` and ``smml.ensemble``'s gradient boosting through
:class:`CategoricalMixin`.
"""
import math
import numbers

import numpy as np

__all__ = ["CategoricalMixin", "MAX_CATEGORIES"]

#: categories a column may have (the split kernels hold a category set in 4 x 64 bits)
MAX_CATEGORIES = 256


class CategoricalMixin:
    """``_categorical_indices`` and ``_encode_categorical`` for an estimator with a
    ``categorical_features`` parameter; ``_encode_categorical(X, fit=True)`` sets
    ``_cat_idx`` and ``categories_``."""

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
                if len(cats) > MAX_CATEGORIES:
                    raise ValueError(f"categorical feature {j} has {len(cats)} categories; at most "
                                     f"{MAX_CATEGORIES} are supported")
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
