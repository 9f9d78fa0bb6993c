"""k-means clustering exactly as the notes define it (001 "Clustering and the k-means algorithm").

001's algorithm: initialise the centroids mu_1..mu_k with k training examples chosen at
random, then repeat until convergence

- c_i = argmin_j ||x_i - mu_j||^2 for every i (assignment);
- mu_j = the mean of the points assigned to j, for every j (update);

and the distortion J(c, mu) = sum_i ||x_i - mu_{c_i}||^2 is non-increasing. The rules the
notes leave open, as smml decides them (see :class:`KMeans`): ties go to the lowest
centroid index, decided on distances computed exactly; an empty cluster is re-seeded at
the farthest point; the loop stops when no label changes, when the relative decrease of J
falls to ``tol`` or below, or after ``max_iter`` iterations. The compiled Lloyd iteration
(``smml._core._kmeans``) computes distances through BLAS gemm and re-checks every
near-tie on exact distances, so its labels are those of the plain-Python reference
(``smml.reference.cluster``), whatever the thread count.
"""
from __future__ import annotations

from typing import Any, Literal, TypeVar

from numpy.typing import ArrayLike, NDArray

import time

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from smml import _kmeans_loop as _loop
from smml._kmeans_loop import Operands as _Operands
from smml._core import _kmeans, _knn
from smml._core._sums import row_norms_sq
from smml._outputs import in_input_precision
from smml._progress import VERBOSE, check_verbose, progress
from smml._threads import blas_single_thread, threads_for
from smml._validation import (
    N_JOBS, RANDOM_STATE, InstanceOf, Interval, Options, check_is_fitted, check_random_state,
    validate_sample_weight, validate_X,
)
from smml.base import ClusterMixin, SmmlEstimator, store_params
from smml._gemm_bounds import euclidean_error_coef as _euclidean_error_coef

__all__ = ["KMeans", "adjusted_rand_index"]

_Self = TypeVar("_Self")

# Kernel layout (module-level so that tests can check that results do not depend on it).
_CHUNK_ROWS = _loop.CHUNK_ROWS      # rows per gemm tile
_BLOCK_ROWS = _loop.BLOCK_ROWS      # rows per block of partial sums (fixed: results do not depend on threads)
_ACC_BUDGET = _loop.ACC_BUDGET      # at most this many float64 partial sums (n_blocks x acc_width(k, d))
_MIN_BLOCKS = _loop.MIN_BLOCKS      # fewer rows per block on small data (threads share the blocks evenly)
_GRAIN = _loop.GRAIN                # multiply-adds (rows x clusters x features) worth a thread
_MAX_NORM_SQ = _loop.MAX_NORM_SQ    # squared norms above this could overflow the float64 distances
_GEMM_LIMIT32 = _loop.GEMM_LIMIT32  # float32 data with squared norms above this is computed in float64
_FAST_TILE = _loop.FAST_TILE        # the packed-panel AVX2 tile where the CPU has it (else the BLAS tile)
_BOUNDS = None                      # distance bounds: None by smml._kmeans_loop.use_bounds, or forced on / off
_GROUPS = None                      # groups of the bounds: None by smml._kmeans_loop.group_count, or forced (0: Hamerly's)


def _block_rows(n, k, d):
    """Rows per block (:func:`smml._kmeans_loop.block_rows` with this module's layout)."""
    return _loop.block_rows(n, k, d, _BLOCK_ROWS, _CHUNK_ROWS, _ACC_BUDGET, _MIN_BLOCKS)


def _draw(rng, weights):
    """One index drawn with probability proportional to ``weights`` (one uniform number;
    an index of zero weight is never drawn)."""
    c = np.cumsum(weights)
    i = int(np.searchsorted(c, rng.random_sample() * c[-1], side="right"))
    return min(i, len(c) - 1)


def _iteration_reporter(bar):
    """A callback (iteration, J) showing the current run's Lloyd iteration and J on the tqdm
    ``bar`` of the runs, redrawn at most every ``bar.mininterval`` seconds."""
    last = [0.0]

    def report(it, J):
        bar.set_postfix_str(f"Lloyd iteration {it}, J={J:.6g}", refresh=False)
        now = time.monotonic()
        if now - last[0] >= bar.mininterval:
            last[0] = now
            bar.refresh()
    return report


def check_kmeans_params(params):
    """Check k-means parameters (a dict of :class:`KMeans`'s) as ``KMeans.fit`` does (for a
    fit run elsewhere, ``smml.dask.KMeans``)."""
    KMeans(**params)._validate_params()


def fitted_kmeans(params, centers, inertia, path, n_iter, converged, shift, round32, dtype):
    """A fitted :class:`KMeans` (without ``labels_``) from a fit run elsewhere
    (``smml.dask.KMeans``): its parameters, results and the training data's centring
    (:func:`smml._kmeans_loop.centring`: shift, float32 rounding, compute dtype)."""
    km = KMeans(**params)
    km._shift, km._round32, km._dtype = shift, round32, dtype
    km.cluster_centers_ = centers
    km.labels_ = None
    km.inertia_ = float(inertia)
    km.inertia_path_ = path
    km.n_iter_ = int(n_iter)
    km.converged_ = bool(converged)
    km.n_features_in_ = int(centers.shape[1])
    km._n_features_out = centers.shape[0]
    km._predict_cache = {}
    return km


class KMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, SmmlEstimator):
    """k-means clustering: 001 "Clustering and the k-means algorithm", on a compiled Lloyd kernel.

    One run: initial centroids (``init``), then iterations of the notes' two steps,
    assignment c_i = argmin_j ||x_i - mu_j||^2 and update mu_j = mean of the points
    assigned to j, until convergence. Each iteration's distortion
    J(c, mu) = sum_i w_i ||x_i - mu_{c_i}||^2, taken at its assignment step (new labels,
    the centroids they were assigned to), is recorded in ``inertia_path_``; it is
    non-increasing (001).

    Rules the notes leave open:

    - **ties**: a point at the same distance from several centroids goes to the lowest
      centroid index. Distances are compared as computed exactly (squared, by direct
      subtraction in float64, feature by feature): the kernel's gemm distances decide
      only when the gemm error bound shows that the exact ones would decide the same;
    - **empty clusters**: a cluster left without points (without weight) after an
      assignment step is re-seeded at the farthest point: the empty clusters, in index
      order, take the points farthest (exact distance) from the centroid they were
      assigned to, farthest first, lowest row index on ties, skipping points at distance
      0 and points that are the last member of their cluster; then the means are
      recomputed. J still decreases. A cluster whose points are all the same row has that
      row, exactly, as its mean (a rounded sum / count could land off it and leave the
      copies at a tiny positive distance, which the re-seeding would then pick, cycling
      until ``max_iter``). A cluster that cannot be re-seeded (every point sits
      on its centroid, e.g. fewer distinct points than clusters) keeps its centroid, and a
      ConvergenceWarning says so;
    - **convergence**: the loop stops after an iteration in which no label changed (then
      the centroids no longer move: a fixed point), or, when ``tol > 0``, in which J
      decreased by at most ``tol`` times its previous value, or after ``max_iter``
      iterations. Unless the labels converged, a final assignment step puts ``labels_`` in
      agreement with ``cluster_centers_`` (as scikit-learn does); ``inertia_`` is J of
      ``labels_`` and ``cluster_centers_`` with every distance computed exactly;
    - **centroids** are means in float64, stored in the data's dtype (float32 data gives
      float32 centroids).

    Speed without changing the algorithm: with many clusters (``k >= 64`` and
    ``k (d + 8) >= 1280``) each row keeps two distance bounds (Hamerly, 2010), an upper
    bound on its distance to its centroid and a lower bound on its distance to every
    other, moved by the centroids' shifts after each update; a row whose bounds prove its
    centroid still nearest (by a relative margin of 1e-9, far above the rounding of the
    exact distances) keeps its label without its distances being computed. The labels,
    centroids and J are the same, bit for bit, as without the bounds; the bounds cost two
    float32 per row. With many clusters of many features (``k >= 256``, ``d >= 64``) the
    centroids are split once into ``k // 16`` groups of neighbours and a row keeps one lower
    bound per group instead of one (Ding et al., "Yinyang K-means", 2015): a row the bounds
    do not settle computes only the groups its upper bound reaches. Again the same labels,
    centroids and J, bit for bit; ``k // 16 + 1`` float32 per row.

    Parameters
    ----------
    n_clusters : int, default=8
        k; at most the number of samples.
    init : {"random", "k-means++"} or array of shape (n_clusters, n_features), default="random"
        "random" is 001's initialisation: k distinct training examples drawn uniformly
        without replacement from ``random_state`` (examples of positive weight when
        ``sample_weight`` is given). "k-means++" (Arthur and Vassilvitskii, 2007; an
        extension, not in the notes): the first centroid is an example drawn with
        probability proportional to its weight, each next one with probability
        proportional to w_i D(x_i)^2, D the exact distance to the nearest centroid chosen
        so far. An array gives the initial centroids (one run).
    n_init : "auto" or int, default="auto"
        Runs from different initial centroids; the run of smallest ``inertia_`` is kept
        (the first one on ties). "auto": 10 for init="random", 1 otherwise. 001's plain
        algorithm is one run: ``n_init=1`` (with ``tol=0``).
    max_iter : int, default=300
        Iterations per run.
    tol : float, default=1e-4
        Relative decrease of J at or below which a run stops (scikit-learn's habit: the
        last iterations of a long run barely move J). 001's algorithm runs until
        convergence, i.e. until the labels stop changing: ``tol=0`` (then only
        ``max_iter`` can stop it earlier).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the initial centroids.
    n_jobs : None or int, default=None
        OpenMP threads. Results do not depend on it, bit for bit.
    verbose : bool, int or "auto", default=0
        A progress bar on stderr over the ``n_init`` runs, showing the current run's Lloyd
        iteration and its J (1), none (0), or one only when stderr is a terminal ("auto").
        Results do not depend on it.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The centroids (in the data's dtype).
    labels_ : ndarray of shape (n_samples,), int32
        Each training point's cluster.
    inertia_ : float
        J(labels_, cluster_centers_) (weighted by ``sample_weight``).
    inertia_path_ : ndarray of shape (n_iter_,)
        J at each iteration's assignment step (kept run).
    n_iter_ : int
        Iterations of the kept run.
    converged_ : bool
        Whether the kept run stopped because its labels stopped changing.

    See Also
    --------
    sklearn.cluster.KMeans : scikit-learn's k-means (k-means++ initialisation by default).
    smml.dask.KMeans : the same algorithm on a dask array.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.cluster import KMeans
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 10.0], [10.0, 11.0]])
    >>> km = KMeans(n_clusters=2, n_init=1, random_state=0).fit(X)
    >>> sorted(km.cluster_centers_.tolist())
    [[0.0, 0.5], [10.0, 10.5]]
    >>> bool(km.labels_[0] == km.labels_[1]), bool(km.labels_[0] != km.labels_[2])
    (True, True)
    >>> print(f"{km.inertia_:.3f}")
    1.000
    """

    _parameter_spec = {
        "n_clusters": Interval(int, 1, None),
        "init": (Options("random", "k-means++"), InstanceOf(np.ndarray, list, tuple)),
        "n_init": (Options("auto"), Interval(int, 1, None)),
        "max_iter": Interval(int, 1, None),
        "tol": Interval(float, 0, None),
        "random_state": RANDOM_STATE,
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

    def __init__(self, n_clusters: int = 8, *, init: Literal["random", "k-means++"] | ArrayLike = "random",
                 n_init: Literal["auto"] | int = "auto", max_iter: int = 300, tol: float = 1e-4,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None, verbose: bool | int | Literal["auto"] = 0) -> None:
        store_params(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # ---- fit ---------------------------------------------------------------------------------

    def _init_array(self, d, dtype):
        return _loop.init_array(self.init, self.n_clusters, d, dtype)

    def _n_runs(self):
        return _loop.n_runs(self.init, self.n_init, stacklevel=4)

    def _initial_centroids(self, X, w, rng, nt):
        """k centroids: 001's random examples, k-means++ or the given array (rows of X)."""
        n, k = X.shape[0], self.n_clusters
        if not isinstance(self.init, str):
            return self._init_C
        if self.init == "random":
            pool = np.arange(n) if w is None else np.flatnonzero(w > 0)
            return X[rng.choice(pool, k, replace=False)]
        weights = np.ones(n) if w is None else w
        C = np.empty((k, X.shape[1]), dtype=X.dtype)
        mind = np.full(n, np.inf)
        C[0] = X[_draw(rng, weights)]
        for j in range(1, k):
            _kmeans.min_sqdist_update(X, C[j - 1], mind, nt)
            pot = weights * mind
            # every point sits on a chosen centroid: draw by weight alone
            C[j] = X[_draw(rng, pot if pot.sum() > 0 else weights)]
        return C

    def _prepare(self, X):
        """Compute dtype, shift and the kernels' operands for the training data.

        The gemm runs on X - m (m the column means) when the offset ||m||^2 exceeds the
        spread mean_i ||x_i - m||^2 (float64 data) or 64 times the spread (float32 data):
        far from the origin the gemm error bound grows with ||x||^2 and more rows would be
        re-checked exactly. Centred float32 data is computed in float64 (a float32 copy
        of X - m would round it, and the means with it); so is float32 data whose
        squared norms pass ``_GEMM_LIMIT32``. Either way the centroids stay float32.
        """
        dtype = X.dtype.type
        xn = row_norms_sq(X, self._nt)
        top = float(xn.max())
        _loop.check_norms(top, _MAX_NORM_SQ)
        mean = X.mean(axis=0, dtype=np.float64)
        self._shift, self._round32, self._dtype = _loop.centring(mean, float(xn.mean()), top, dtype,
                                                                 _GEMM_LIMIT32)
        if self._shift is None and not self._round32:
            return _Operands(X, None, dtype, xn)
        return _Operands(X, self._shift, self._dtype)

    def _gemm_centroids(self, C, dtype=None, round32=None):
        """(C in the compute dtype, its gemm twin fl(C - m), squared norms of the twin); the
        fitted compute dtype and float32 rounding unless given (predict-time calls)."""
        dtype = self._dtype if dtype is None else dtype
        round32 = self._round32 if round32 is None else round32
        return _loop.gemm_centroids(C, self._shift, dtype, round32)

    def _run(self, ops, w, C0, nt, on_lloyd=None):
        """One run of the notes' loop from centroids C0 (:func:`smml._kmeans_loop.lloyd_loop`,
        in process): (C, labels, inertia, path, n_iter, converged, n_empty). ``on_lloyd``: called
        with (iteration, J) after each iteration (the progress bar), or None."""
        n, d = ops.X.shape
        k = self.n_clusters
        group = _loop.InProcess(ops, w, self._shift, self._round32, k, _block_rows(n, k, d), _CHUNK_ROWS,
                                _FAST_TILE, _euclidean_error_coef(d, self._dtype), nt, _BOUNDS, _GROUPS)
        return _loop.run_in_process(_loop.lloyd_loop(self._gemm_centroids(C0), self.max_iter, self.tol), group,
                                    on_lloyd)

    def fit(self: _Self, X: ArrayLike, y: None = None, sample_weight: ArrayLike | None = None) -> _Self:
        """Run k-means on X (``n_init`` runs, the best kept).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (float32 data keeps float32 centroids).
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights w_i of the points in J and in the means; None: all 1.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X = validate_X(self, X, reset=True, dtype="floating")
        n, d = X.shape
        k = self.n_clusters
        if k > n:
            raise ValueError(f"n_clusters={k} is larger than the number of samples, n_samples={n}")
        w = None if sample_weight is None else validate_sample_weight(sample_weight, n)
        if w is not None and isinstance(self.init, str) and self.init == "random" and np.count_nonzero(w) < k:
            raise ValueError(f"init='random' draws n_clusters={k} distinct examples of positive weight, "
                             f"but only {np.count_nonzero(w)} have positive sample_weight")
        self._nt = threads_for(self._n_threads(), n * k * d, _GRAIN)
        if not isinstance(self.init, str):
            self._init_C = self._init_array(d, X.dtype.type)
        rng = check_random_state(self.random_state)
        ops = self._prepare(X)
        best = None
        n_runs = self._n_runs()
        runs = progress(range(n_runs), total=n_runs, desc="KMeans runs", verbose=self.verbose, unit="run")
        on_lloyd = _iteration_reporter(runs) if check_verbose(self.verbose) else None
        with blas_single_thread(work=2.0 * n * k * d):
            for _ in runs:
                C0 = self._initial_centroids(X, w, rng, self._nt)
                run = self._run(ops, w, C0, self._nt, on_lloyd)
                if best is None or run[2] < best[2]:
                    best = run
        C, labels, inertia, path, n_iter, converged, n_empty = best
        _loop.warn_empty(k, n_empty)
        self.cluster_centers_ = C.astype(X.dtype.type)
        self.labels_ = labels
        self.inertia_ = float(inertia)
        self.inertia_path_ = path
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self._n_features_out = k
        self._predict_cache = {}
        return self

    # ---- predict ------------------------------------------------------------------------------

    def _query(self, X):
        """(operands of X, centroid triple, compute dtype) for a predict-time call."""
        check_is_fitted(self, "cluster_centers_")
        Q = validate_X(self, X, reset=False, dtype="floating")
        dt = np.float32 if (Q.dtype == np.float32 and self._dtype == np.float32) else np.float64
        ops = _Operands(Q, self._shift, dt)
        top = float(ops.xn.max())
        _loop.check_norms(top, _MAX_NORM_SQ)
        if dt == np.float32 and not top < _GEMM_LIMIT32:
            dt = np.float64
            ops = _Operands(Q, self._shift, dt)
        if dt not in self._predict_cache:
            self._predict_cache[dt] = self._gemm_centroids(self.cluster_centers_, dt, False)
        return ops, self._predict_cache[dt], Q.dtype.type

    def _labels_inertia(self, X, sample_weight=None, want_J=False):
        ops, (C, Cg, cn), _ = self._query(X)
        n, d = ops.X.shape
        dt = ops.X.dtype.type
        k = self.n_clusters
        w = np.empty(0) if sample_weight is None else validate_sample_weight(sample_weight, n)
        labels = np.full(n, -1, dtype=np.int32)     # no previous labels (the kernel's fast path)
        nt = threads_for(self._n_threads(), n * k * d, _GRAIN)
        with blas_single_thread(work=2.0 * n * k * d):
            J, _ = _kmeans.assign(ops.Xg, ops.X, ops.xn, w, Cg, C, cn, _euclidean_error_coef(d, dt),
                                  labels, True, want_J, _block_rows(n, k, d), _CHUNK_ROWS,
                                  _FAST_TILE, nt)
        return labels, J

    def predict(self, X: ArrayLike) -> NDArray[np.int32]:
        """The index of the nearest centroid of each row (exact distances; lowest index on ties).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points to assign.

        Returns
        -------
        labels : ndarray of shape (n_samples,) of int32
            Index of each row's nearest centroid.
        """
        return self._labels_inertia(X)[0]

    def score(self, X: ArrayLike, y: None = None, sample_weight: ArrayLike | None = None) -> float:
        """-J(X): minus the (weighted) sum of squared distances to the nearest centroids."""
        return -self._labels_inertia(X, sample_weight, want_J=True)[1]

    def transform(self, X: ArrayLike) -> NDArray[np.floating[Any]]:
        """Euclidean distances from each row to every centroid, computed exactly.

        The square roots of the exact squared distances.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The points.

        Returns
        -------
        distances : ndarray of shape (n_samples, n_clusters)
            Distance of each row to each centroid, in X's floating dtype.
        """
        ops, (C, _, _), in_dtype = self._query(X)
        out = np.empty((ops.X.shape[0], C.shape[0]))
        _knn.exact_rows(ops.X, C, np.arange(len(out), dtype=np.intp), _knn.METRIC_CODES["sqeuclidean"], out,
                        threads_for(self._n_threads(), out.size * ops.X.shape[1], _GRAIN))
        return in_input_precision(np.sqrt(out), in_dtype)


def adjusted_rand_index(labels_a: ArrayLike, labels_b: ArrayLike) -> float:
    """The adjusted Rand index of two partitions of the same points (Hubert and Arabie, 1985).

    The Rand index counts the pairs of points that both partitions put together or both
    put apart; the adjusted index subtracts its expectation under random partitions with
    the same cluster sizes and rescales: 1 for identical partitions (up to renaming),
    about 0 for independent ones (it can be negative). ``smml tour`` uses it to compare
    clusters with classes. Two partitions with a single cluster each give 1.

    Parameters
    ----------
    labels_a : array-like of shape (n_samples,)
        The first partition: one label per point.
    labels_b : array-like of shape (n_samples,)
        The second partition, of the same points.

    Returns
    -------
    ari : float
        The adjusted Rand index (at most 1).

    See Also
    --------
    sklearn.metrics.adjusted_rand_score : scikit-learn's adjusted Rand index.

    Examples
    --------
    >>> from smml.cluster import adjusted_rand_index
    >>> adjusted_rand_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    >>> print(f"{adjusted_rand_index([0, 0, 1, 1], [0, 1, 0, 1]):.3f}")
    -0.500
    """
    a = np.asarray(labels_a).reshape(-1)
    b = np.asarray(labels_b).reshape(-1)
    if a.shape != b.shape:
        raise ValueError(f"the partitions label {a.size} and {b.size} points")
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    table = np.zeros((ia.max(initial=-1) + 1, ib.max(initial=-1) + 1))
    np.add.at(table, (ia, ib), 1.0)

    def pairs(c):
        return float(np.sum(c * (c - 1.0) / 2.0))

    both = pairs(table)
    rows, cols, total = pairs(table.sum(axis=1)), pairs(table.sum(axis=0)), a.size * (a.size - 1.0) / 2.0
    expected = rows * cols / total if total > 0 else 0.0
    top = (rows + cols) / 2.0
    if top == expected:        # both partitions trivial (one cluster, or every point alone)
        return 1.0
    return (both - expected) / (top - expected)
