"""Column sorts and histogram bins of the tree learners (shared by ``smml.tree`` and the
ensembles in ``smml.ensemble``).

- :func:`sort_columns` / :func:`sort_columns_ranked`: each column sorted once (the exact
  splitter's presorted columns; a forest's shared sort);
- :func:`bin_edges`: quantile bin edges per column;
- :func:`bin_features` / :func:`apply_bins`: the uint8 codes the histogram kernels read.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from numpy.typing import ArrayLike, NDArray

import numpy as np

from smml._core import _binning
from smml._threads import threads_for

__all__ = ["sort_columns", "sort_columns_ranked", "bin_edges", "bin_features", "apply_bins"]

_BIN_SUBSAMPLE = 200_000
# (LightGBM's bin_construct_sample_cnt and HistGradientBoosting's subsample, 200,000 each: from
# 50,000 rows the quantiles moved enough to cost a boosting fit on 500,000 x 8 up to 0.01 of
# test R^2, seed to seed.)
#: columns whose sampled rows are gathered at once by bin_edges
_EDGE_BLOCK = 16
# Threading grain (smml._threads.threads_for): the least work worth a thread of its own.
#: values sorted: the column sorts and the bin edges run in a thread pool from 2 grains on
_SORT_GRAIN = 100_000


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


def sort_columns(X: ArrayLike, n_threads: int = 1, stable: bool = False, skip: ArrayLike | None = None
                 ) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """Each column of X sorted once: ``(values, order)``, both (d, n), float64 and int32.

    ``order[j]`` lists the rows by increasing ``X[:, j]`` (ties: numpy's default sort, or by
    row with ``stable=True``), ``values[j] = X[order[j], j]`` in float64.  Columns with
    ``skip[j]`` are not sorted (zeros).  Threads: ``threads_for(n_threads, n * d, _SORT_GRAIN)``,
    one column per task; the result does not depend on them.

    Parameters
    ----------
    X : array-like of shape (n, d)
        The data.
    n_threads : int, default=1
        Most threads of the column sorts (the result does not depend on them).
    stable : bool, default=False
        Sort equal values by row (numpy's stable sort).
    skip : array-like of bool of shape (d,) or None, default=None
        Columns not to sort (their rows of the result are zeros).

    Returns
    -------
    values : ndarray of shape (d, n), float64
        ``values[j]`` the column ``X[:, j]`` in increasing order.
    order : ndarray of shape (d, n), int32
        ``order[j]`` the rows by increasing ``X[:, j]``.

    See Also
    --------
    numpy.argsort : the sort of each column.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.tree import sort_columns
    >>> X = np.array([[3.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> values, order = sort_columns(X, stable=True)
    >>> order.tolist()
    [[1, 2, 0], [2, 0, 1]]
    >>> values.tolist()
    [[1.0, 2.0, 3.0], [0.0, 1.0, 1.0]]
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


def rank_columns(X, n_threads=1):
    """The rank of each row's value in each column of X: (d, n), ``ranks[j, i]`` the first
    position of ``X[i, j]`` in the column's increasing order (equal values, equal ranks), uint16
    when n <= 65536 else int32: ``build_tree``'s Rrow (a forest's ranked mode)."""
    return sort_columns_ranked(X, n_threads, by_row=True)[1]


def sort_columns_ranked(X, n_threads=1, by_row=False):
    """Each column of X sorted once, stably (equal values by row): ``(order, ranks)``, both
    (d, n) int32, ``order[j]`` the rows by increasing ``X[:, j]`` and ``ranks[j, p]`` the first
    position in that order of the value at position p (equal values, equal ranks: the
    kernel's ``first_positions``); with ``by_row``, ``ranks[j, i]`` is that rank of row i's
    value instead (``rank_columns``; uint16 when n <= 65536) and order is None (not kept).
    The sorted values are not kept (a forest looks a
    threshold's value up in X through ``order``: ``build_tree``'s Xv / Sg), so the shared
    sort of a forest costs 8 bytes per entry of X instead of 16."""
    n, d = X.shape
    Si = None if by_row else np.empty((d, n), np.int32)
    Rs = np.empty((d, n), np.uint16 if by_row and n <= 65536 else np.int32)
    pos = np.arange(n, dtype=np.int32)

    def work(j):
        col = np.ascontiguousarray(X[:, j], dtype=np.float64)
        o = np.argsort(col, kind="stable")
        if not by_row:
            Si[j] = o
        v = col[o]
        r = np.empty(n, np.int32) if by_row else Rs[j]
        r[0] = 0
        if n > 1:
            np.copyto(r[1:], pos[1:])
            r[1:][v[1:] <= v[:-1]] = 0          # not a new value: take the previous first position
            np.maximum.accumulate(r, out=r)
        if by_row:
            Rs[j][o] = r

    nt = min(d, threads_for(n_threads, n * d, _SORT_GRAIN))
    if nt > 1:
        with ThreadPoolExecutor(nt) as pool:
            list(pool.map(work, range(d)))
    else:
        for j in range(d):
            work(j)
    return Si, Rs


def bin_edges(X: NDArray[np.floating[Any]], max_bins: int, seed: int | None, n_threads: int = 1,
              skip: ArrayLike | None = None, reserve: ArrayLike | None = None) -> list[NDArray[np.float64]]:
    """Quantile bin edges per column (at most max_bins bins): a list of d ascending arrays.

    NaN values are left out (boosting's missing values); a column with ``reserve[j]`` gets at
    most ``max_bins - 1`` bins (a code is kept for its missing values).

    With at most max_bins distinct values the edges are the midpoints between them (the
    histogram search then equals the exact one); otherwise midpoints at the quantiles of (a
    subsample of ``_BIN_SUBSAMPLE`` rows drawn with ``seed`` of) the column.  A midpoint that
    rounds outside [a, b) is a.  Columns with ``skip[j]`` get no edges.  Codes: ``bin_columns``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The data (NaN: missing, left out).
    max_bins : int
        At most this many bins per column (``max_bins - 1`` edges).
    seed : int or None
        Seed of the subsample of rows drawn when n exceeds ``_BIN_SUBSAMPLE``.
    n_threads : int, default=1
        Most threads (the result does not depend on them).
    skip : array-like of bool of shape (d,) or None, default=None
        Columns that get no edges (e.g. categorical ones).
    reserve : array-like of bool of shape (d,) or None, default=None
        Columns that get at most ``max_bins - 1`` bins (one code kept for missing values).

    Returns
    -------
    edges : list of ndarray
        For each column, its ascending edges (empty for a skipped or constant column).

    See Also
    --------
    bin_features : the codes of X for these edges.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.tree import bin_edges
    >>> X = np.array([[0.0], [1.0], [1.0], [3.0]])
    >>> [e.tolist() for e in bin_edges(X, max_bins=4, seed=0)]
    [[0.5, 2.0]]
    >>> [e.tolist() for e in bin_edges(X, max_bins=2, seed=0)]
    [[2.0]]
    """
    n, d = X.shape
    sub = None
    if n > _BIN_SUBSAMPLE:
        sub = np.random.default_rng(seed).choice(n, _BIN_SUBSAMPLE, replace=False)
        sub.sort()
    edges = [np.zeros(0)] * d

    def work(lo, hi):
        for c0 in range(lo, hi, _EDGE_BLOCK):
            c1 = min(c0 + _EDGE_BLOCK, hi)
            # the subsample's rows, a block of columns at a time (no copy of all of X's sampled
            # rows: at 500 features that was 8 bytes x 500 x the subsample)
            B = X[:, c0:c1] if sub is None else X[sub, c0:c1]
            for j in range(c0, c1):
                if skip is not None and skip[j]:
                    continue
                v = _distinct(B[:, j - c0])
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

    _for_column_blocks(work, d, threads_for(n_threads, min(n, _BIN_SUBSAMPLE) * d, _SORT_GRAIN))
    return edges


def _distinct(col):
    """The distinct values of col, ascending, NaN left out (``np.unique`` without NaN, at half
    its cost: one sort, one comparison)."""
    v = np.sort(np.asarray(col, dtype=np.float64))
    if len(v) and np.isnan(v[-1]):                  # the sort puts NaN last
        v = v[:int(np.searchsorted(v, np.nan, side="left"))]
    if len(v) < 2:
        return v
    keep = np.empty(len(v), dtype=bool)
    keep[0] = True
    np.not_equal(v[1:], v[:-1], out=keep[1:])
    return v[keep]


def bin_features(X: NDArray[np.floating[Any]], max_bins: int | None, seed: int | None, n_threads: int,
                 is_cat: ArrayLike, n_cats: ArrayLike, missing: bool = False) -> tuple[NDArray[Any], ...]:
    """``(codes, edges)``: the (n, d) uint8 codes of X and the (d, n_bins_max) threshold of each
    code, ``code <= b  <=>  x <= edges[j, b]`` (padded with +inf), from :func:`bin_edges`.

    ``max_bins=None``: numerical columns are not binned (code 0).  Categorical columns
    (``is_cat[j]``, ``n_cats[j]`` categories) hold their category codes 0..255 (no unknowns in
    training data) and have no edges.  The histogram kernels of the trees and of boosting read these.

    ``missing=True`` (boosting; X may hold NaN in numerical columns): returns ``(codes, edges,
    nan_code)``; a column with NaN gets at most ``max_bins - 1`` finite bins and its NaN rows the
    code after them, ``nan_code[j]`` (-1 for a column without NaN).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The data (categorical columns hold category codes 0..255).
    max_bins : int or None
        At most this many bins per numerical column; None: numerical columns unbinned.
    seed : int or None
        Seed of the subsample of rows for the quantiles (:func:`bin_edges`).
    n_threads : int
        Most threads (the result does not depend on them).
    is_cat : array-like of bool of shape (d,)
        Which columns are categorical.
    n_cats : dict
        ``{column: number of categories}`` of the categorical columns.
    missing : bool, default=False
        Give the NaN of each numerical column a code of its own and return ``nan_code``.

    Returns
    -------
    codes : ndarray of shape (n, d), uint8
        The bin (or category) code of each entry.
    edges : ndarray of shape (d, n_bins_max)
        The threshold of each code of each column (padded with +inf).
    nan_code : ndarray of shape (d,)
        The code of NaN in each column, -1 for a column without NaN (``missing=True`` only).

    See Also
    --------
    bin_edges : the edges of each column.
    sklearn.ensemble.HistGradientBoostingClassifier : scikit-learn's binning of the same kind.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.tree import bin_features
    >>> X = np.array([[0.0], [1.0], [1.0], [3.0]])
    >>> codes, edges = bin_features(X, 4, 0, 1, is_cat=[0], n_cats={})
    >>> codes[:, 0].tolist(), edges.tolist()
    ([0, 1, 1, 2], [[0.5, 2.0, inf]])
    >>> X = np.array([[0.0], [np.nan], [2.0]])
    >>> codes, edges, nan_code = bin_features(X, 4, 0, 1, is_cat=[0], n_cats={}, missing=True)
    >>> codes[:, 0].tolist(), nan_code.tolist()
    ([0, 2, 1], [2])
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
