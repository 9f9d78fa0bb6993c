"""The shard interface of ``smml.dask``: a k-NN search over a training set split into parts.
"""
from __future__ import annotations

import numpy as np

from smml.neighbors._classes import KNNClassifier, KNNRegressor

# ---- shards: one search over a training set split into parts (smml.dask) --------------------------
#
# A training set cut into consecutive row blocks ("shards"), each searched on its own: each
# shard takes, for each query, its own k' closest points (the k' rule inside the shard);
# the k' rule over the union of the shards' candidates is then the rule over the whole set
# (a shard's k-th key is >= the global k-th key, so every globally taken point, ties
# included, is among its shard's candidates). These names are smml's interface for its
# engines (``smml.dask``), not part of ``__all__``.

SHARD_MERGE_PAD = 4     # merge_shard_candidates' padded matrix: at most this many cells per candidate


class Shard:
    """One shard of a training set: an in-memory searcher fitted on its rows (k capped at
    the shard's size: a smaller shard offers all of its points), its labels (class codes
    into ``classes``, or float64 values) and the global index of its first row.

    Parameters
    ----------
    X : ndarray (n_rows, n_features), the shard's rows
    y : ndarray (n_rows,), their labels
    params : dict, the k-NN estimator's parameters
    k : int
    offset : int, the global index of the shard's first row
    classes : ndarray or None, the sorted classes of the whole training set (None: regression)
    """

    def __init__(self, X, y, params, k, offset, classes=None):
        est = KNNRegressor(**dict(params, n_neighbors=min(k, X.shape[0])))
        if classes is not None:
            codes = np.searchsorted(classes, y)
            est.fit(X, np.zeros(X.shape[0]))
            self.y = np.ascontiguousarray(codes, dtype=np.intp)
        else:
            est.fit(X, y)
            self.y = est._y
        self.searcher, self.offset = est, offset

    @property
    def n_rows(self):
        """The shard's number of rows."""
        return self.searcher.n_samples_fit_

    @property
    def nbytes(self):
        """The bytes of the shard's arrays (its searcher's and its labels)."""
        return int(self.y.nbytes + sum(v.nbytes for v in vars(self.searcher).values()
                                       if isinstance(v, np.ndarray)))

    def search(self, Q, k):
        """The shard's taken points (its own k' rule) for each query of Q: (counts, global
        indices, exact keys, labels), rows in query order, each sorted by (key, index)."""
        est = self.searcher
        Q0, Qm = est._queries(Q)
        kk = min(k, est.n_samples_fit_)
        counts, idx, keys = [], [], []
        for _, taken in est._search(Q0, kk, est._n_threads(), in_order=True, Qm=Qm):
            indptr, i, key = taken.csr()
            counts.append(np.diff(indptr))
            idx.append(i)
            keys.append(key)
        idx = np.concatenate(idx)
        return (np.concatenate(counts), idx + self.offset, np.concatenate(keys), self.y[idx])


def merge_shard_candidates(parts, k, nb, pad=SHARD_MERGE_PAD):
    """The notes' k' rule over the union of the shards' candidates (:meth:`Shard.search` of
    each shard for the same ``nb`` queries): per query every candidate whose key is <= the
    k-th smallest key (000, "The Nearest Neighbour algorithm"). Returns (rows, global
    indices, keys, labels) sorted by (query, key, index). ``pad``: the k-th keys are found
    in a matrix padded with +inf while it has at most ``pad`` cells per candidate (then only
    the kept candidates are sorted), else all the candidates are sorted; the same result."""
    counts = [np.asarray(p[0]) for p in parts]
    rows = np.concatenate([np.repeat(np.arange(nb), c) for c in counts])
    idx = np.concatenate([p[1] for p in parts])
    keys = np.concatenate([p[2] for p in parts])
    labs = np.concatenate([p[3] for p in parts])
    width = [int(c.max()) if c.size else 0 for c in counts]
    if nb == 0:
        return rows, idx, keys, labs
    if nb * sum(width) <= pad * keys.size:
        # the k-th smallest key of each query from the shards' candidates side by side (a
        # matrix padded with +inf), then only the kept candidates are sorted
        M = np.full((nb, sum(width)), np.inf)
        col = base = 0
        for c, w in zip(counts, width):
            n = int(c.sum())
            first = np.repeat(np.cumsum(c) - c, c)
            M[rows[base:base + n], col + np.arange(n) - first] = keys[base:base + n]
            col += w
            base += n
        kth = np.partition(M, k - 1, axis=1)[:, k - 1]
        keep = keys <= kth[rows]
        rows, idx, keys, labs = rows[keep], idx[keep], keys[keep], labs[keep]
        order = np.lexsort((idx, keys, rows))
        return rows[order], idx[order], keys[order], labs[order]
    # a query with many tied candidates would make the matrix wide: sort them all
    order = np.lexsort((idx, keys, rows))
    rows, idx, keys, labs = rows[order], idx[order], keys[order], labs[order]
    start = np.searchsorted(rows, np.arange(nb))
    kth = keys[start + (k - 1)]
    keep = keys <= kth[rows]
    return rows[keep], idx[keep], keys[keep], labs[keep]


def shard_decider(params, classifier):
    """The in-memory estimator (:class:`KNNClassifier` or :class:`KNNRegressor`, its
    parameters checked) that turns merged candidates into predictions
    (:func:`decide_candidates`); a classifier needs :func:`set_decider_classes` too."""
    est = (KNNClassifier if classifier else KNNRegressor)(**params)
    est._validate_params()
    est._metric = est.metric
    return est


def set_decider_classes(decider, classes, counts):
    """Give a classifier decider the sorted classes of the whole training set and their
    counts (the default label: the most frequent, the smallest on equal counts). Returns
    the default label."""
    decider.classes_ = classes
    decider._default = int(np.argmax(counts))     # first maximum: smallest label
    decider.default_label_ = classes[decider._default]
    return decider.default_label_


def decide_candidates(decider, kind, rows, labels, keys, nb):
    """The in-memory estimator's own last steps on merged candidates (sorted as its search
    returns them: by query, key, index; labels as in :class:`Shard`): ``kind`` "predict"
    (classes), "proba" (class shares) or "regress" (mean labels), for ``nb`` queries."""
    if kind == "regress":
        return decider._mean_label(rows, labels, keys, nb)
    votes = decider._class_votes(rows, labels, keys, nb)
    if kind == "predict":
        return decider.classes_[decider._decide(votes)]
    return decider._proba(votes)
