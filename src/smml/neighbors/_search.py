"""The k-NN search: :class:`_KNNBase`, the fit (search structures, Mahalanobis transform)
and the exact search of the notes' k' closest points shared by :class:`KNNClassifier` and
:class:`KNNRegressor` (brute force through the gemm filter, or the kd-tree), ``kneighbors``
and ``radius_neighbors``; the kernels' chunking and threading tunables and the
``algorithm="auto"`` rule. See the package docstring for the rules.
"""
from __future__ import annotations

from collections.abc import Callable as _Callable
from typing import Any, Literal

from numpy.typing import ArrayLike, NDArray

import numpy as np

from smml._core import _kdtree, _knn
from smml._threads import blas_single_thread, threads_for
from smml._validation import (
    Callable, InstanceOf, N_JOBS, Interval, Options, check_is_fitted,
    drop_zero_weight, validate_X, validate_sample_weight,
)
from smml.base import SmmlEstimator, store_params
from smml._gemm_bounds import (centre as _centre, euclidean_error_bound as _euclidean_error_bound,
                               euclidean_error_coef as _euclidean_error_coef, relative_slack as _relative_slack)
from smml.neighbors._structures import (_Scaled, _Taken, _build_tree, _column_range, _csr, _flat_tree,
                                        _leaf_size, _mahalanobis_error_coef, _padded, _split_planes,
                                        _sqrt_threshold, _with_over)

# Kernel chunking (module-level so that tests can check that results do not depend on it).
_Q_CHUNK = 1024                 # queries per gemm tile (at most)
_T_CHUNK = {np.float32: 256, np.float64: 512}   # training points per gemm tile (the tile stays in L2)
_HEAP_BUDGET = 1 << 20          # max (queries x candidates) heap entries per thread
_OUT_BUDGET = 1 << 21           # max (queries x candidates) entries per kernel call
_FALLBACK_BUDGET = 1 << 22      # max candidate entries of one block of re-searched (flagged) queries
_GRAIN = 1 << 22             # multiply-adds worth one thread (threads_for)
_MIN_QUERIES_PER_THREAD = 8   # fewer queries per thread: fewer threads
_SPLIT_TRAIN_BELOW = 64        # fewer queries per thread (Euclidean): threads share out the training chunks
_MEDIAN_ROWS = 8192             # the gemm rows' centre: the median of at most this many rows
_SLACK = 8                      # extra candidates kept beyond 1.5 k
_MAX_KEY = 1e300                # keys (squared / Manhattan distances) must stay below this
_GEMM_LIMIT = {np.float32: 1e17, np.float64: 1e150}   # gemm only while centred norms are below
# float64 data: the candidate filter runs in float32 gemm (twice the flops per cycle) while
# the centred training norms are within this range (no float32 overflow, no subnormal
# rounding large against the error bound); candidates are re-ranked on exact float64 keys.
_F32_FILTER = (1e-30, 1e17)
_NO_NORMS = np.empty(0, dtype=np.float64)   # the gemm kernels' t_norm for augmented rows
_LEAF_SIZE = None               # kd-tree: max points per leaf; None: _leaf_size(d) (measured)
_TREE_GRAIN = 64                # kd-tree: queries worth a thread of their own
_ORDER_MIN = 256                # kd-tree: from this many queries, search them in tree order
_TREE_OUT_BUDGET = 1 << 16      # kd-tree: max (queries x cap) output entries per kernel call
_WIDEN_MAX = 8                  # kd-tree: rows of more than cap ties padded up to this x cap, else CSR
# algorithm="auto" (measured: bench/README.md, 'The algorithm="auto" rule'): the kd-tree up to
# _TREE_ALWAYS_D features; up to _TREE_MAX_D the tree when m >= 2^(d + _TREE_LOG2_M_OVER_D),
# else both structures. With both, up to _TREE_MAX_D features a call of at most _FEW_QUERIES
# queries takes the tree; otherwise, until the cost model has picked, a call's queries are
# searched by the tree in probe stages that count the tree's work (_PROBE_FIRST queries, then
# up to _PROBE_QUERIES in all, over the model's calls), and the model (_both_costs) picks the
# structure of the rest and of every later call: after the first stage when one structure is
# estimated over _PROBE_DECISIVE times cheaper, else after _PROBE_QUERIES. Brute force always
# for Hamming (a box bound is almost always 0 there), and for Manhattan beyond _TREE_MAX_D.
_TREE_ALWAYS_D = {"euclidean": 6, "mahalanobis": 6, "manhattan": 48}
_TREE_MAX_D = {"euclidean": 10, "mahalanobis": 10, "manhattan": 48}
_TREE_BOTH = ("euclidean", "mahalanobis")       # metrics with both structures beyond _TREE_MAX_D
_TREE_LOG2_M_OVER_D = 8
_FEW_QUERIES = 64
_PROBE_FIRST = 8
_PROBE_QUERIES = 128
_PROBE_DECISIVE = 2.0
# the cost model of "both" (single-thread ns; measured with bench/bench_grid.py's k-NN data,
# d = 7-10, m = 5,000-60,000, gaussian, uniform, heavy-tailed, clustered and lattice data:
# a tree key or box bound 0.46-0.9 ns per feature, the gemm filter 0.08-0.26 ns per training
# point and feature (the most at small m: per-query costs), see bench/neighbors.md)
_COST_TREE_KEY = 0.75
_COST_TREE_QUERY = 1000.0
_COST_BRUTE_POINT = 0.12
_COST_BRUTE_QUERY = 3000.0


def _balanced_chunk(n, n_threads, limit):
    """Rows per chunk, at most ``limit``, splitting n rows into a multiple of n_threads
    chunks of (nearly) equal size: the kernels hand each thread a contiguous run of chunks
    (static schedule), so 5 chunks of 1,024 among 2 threads would leave one thread idle for
    a fifth of the time (measured: 14% of a 5,000-query predict)."""
    per_thread = -(-n // n_threads)
    chunks = -(-per_thread // max(1, limit))
    return int(max(1, -(-per_thread // chunks)))


def _pick_rule(metric, d, m):
    """algorithm="auto" for ``metric`` on m training points of d features: "tree", "brute"
    or "both" (both built; the structure of each call is routed by :meth:`_KNNBase._route`:
    the tree's counted work on the first queries feeds a cost model of both structures,
    :meth:`_KNNBase._both_costs`, a model and not a timing, so the choice is the same on
    every run). Measured on this machine (bench/README.md): the tree wins by far at low d,
    for every m and number of queries; in the middle it wins when m is large against 2^d,
    and on few-row calls (a few leaves against all m rows); beyond, which one wins depends
    on the data more than on d: on clustered data the tree searched 100,000 x 16-128 points
    5-10x faster than the gemm filter, on Gaussian data 5-25x slower. Manhattan has no gemm
    filter: the tree won at every d measured (2-48). Mahalanobis searches its candidates as
    Euclidean on the transformed data (then ranks them on the exact Mahalanobis keys): the
    Euclidean rule."""
    if d <= _TREE_ALWAYS_D.get(metric, 0):
        return "tree"
    if d <= _TREE_MAX_D.get(metric, 0):
        return "tree" if m >= 2 ** (d + _TREE_LOG2_M_OVER_D) else "both"
    return "both" if metric in _TREE_BOTH else "brute"


class _KNNBase(SmmlEstimator):
    _tree_labels = False        # the kd-tree search also returns the points' class codes
    _parameter_spec = {
        "n_neighbors": Interval(int, 1, None),
        "metric": Options("euclidean", "manhattan", "mahalanobis", "hamming"),
        "weights": (Options("uniform", "distance", "slide"), Callable()),
        "metric_params": (Options(None), InstanceOf(dict)),
        "algorithm": Options("auto", "brute", "tree"),
        "n_jobs": N_JOBS,
    }

    def __init__(self, n_neighbors: int = 1,
                 metric: Literal["euclidean", "manhattan", "mahalanobis", "hamming"] = "euclidean",
                 weights: Literal["uniform", "distance", "slide"] | _Callable[..., Any] = "uniform",
                 metric_params: dict[str, Any] | None = None,
                 algorithm: Literal["auto", "brute", "tree"] = "auto", n_jobs: int | None = None) -> None:
        store_params(self, locals())

    # ---- fit -------------------------------------------------------------

    def _mahalanobis_transform(self, X):
        """(L, s) with L L^T = M = s^2 S^-1 (002, 'Nearest neighbors', Example (ii)); M is
        kept as ``_M``: the exact key is (x/s - y/s)^T M (x/s - y/s) (:meth:`_search`).

        s = 1 for a given matrix (the key is then literally (x - y)^T VI (x - y)); for the
        estimated covariance s is a power of two near max |X|, so the covariance of X / s
        cannot overflow. The distance is scale-free, and scaling by a power of two is exact:
        the key is bit for bit (x - y)^T (M / s^2) (x - y) wherever that does not overflow.
        """
        d = X.shape[1]
        params = dict(self.metric_params or {})
        unknown = set(params) - {"VI", "V"}
        if unknown:
            raise ValueError(f"metric_params: unknown keys {sorted(unknown)}; use 'VI' or 'V'")
        if "VI" in params and "V" in params:
            raise ValueError("metric_params: give either 'VI' (inverse covariance) or 'V', not both")
        if "VI" in params or "V" in params:
            key = "VI" if "VI" in params else "V"
            M = np.asarray(params[key])
            if np.iscomplexobj(M):
                raise ValueError(f"metric_params[{key!r}] must be a real matrix, got complex values")
            M = M.astype(np.float64)
            if M.shape != (d, d):
                raise ValueError(f"metric_params[{key!r}] must have shape ({d}, {d}), got {M.shape}")
            if not np.all(np.isfinite(M)):
                raise ValueError(f"metric_params[{key!r}] contains NaN or infinity")
            if not np.allclose(M, M.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(M).max())):
                raise ValueError(f"metric_params[{key!r}] must be symmetric")
            M = (M + M.T) / 2
            if key == "V":
                M = np.linalg.pinv(M, hermitian=True)
            scale = 1.0
        else:
            if X.shape[0] < 2:
                raise ValueError("metric='mahalanobis' needs at least 2 training points to estimate "
                                 "the covariance, or metric_params={'VI': ...}")
            amax = float(np.max(np.abs(X)))
            scale = 2.0 ** np.ceil(np.log2(amax)) if amax > 0 else 1.0
            M = np.linalg.pinv(np.atleast_2d(np.cov(X / scale, rowvar=False)), hermitian=True)
        w, Qm = np.linalg.eigh(M)
        tol = 1e-10 * max(1.0, np.abs(w).max())
        if w.min() < -tol:
            raise ValueError("the Mahalanobis matrix must be positive semi-definite")
        with np.errstate(over="ignore", under="ignore"):
            self.VI_ = M / (scale * scale)
        self._M = np.ascontiguousarray(M)
        return Qm * np.sqrt(np.clip(w, 0.0, None)), scale

    def _checked_k(self, m, k=None):
        """k (default ``self.n_neighbors``, validated with the other parameters) as an int in
        [1, m] (no upper limit when m is None)."""
        if k is None:
            k = self.n_neighbors
        elif not Interval(int, 1, None).is_satisfied_by(k):
            raise ValueError(f"n_neighbors must be a positive integer, got {k!r}")
        if m is not None and k > m:
            raise ValueError(f"n_neighbors={k} is larger than the number of training points, "
                             f"n_samples={m} (000: k cannot be taken larger than the size of the "
                             "training set)")
        return int(k)

    def _check_fitted(self):
        """Every predict-time call: fitted, and the parameters validated again (``set_params``
        after fit may have changed ``n_neighbors`` or ``weights``; unchanged parameters are
        not checked twice: ``_revalidate_params``)."""
        if "n_samples_fit_" not in self.__dict__:
            check_is_fitted(self, "n_samples_fit_")         # raises scikit-learn's NotFittedError
        self._revalidate_params()

    def _fitted_queries(self, X):
        """(queries, k) for a predict-time call (:meth:`_check_fitted` first)."""
        self._check_fitted()
        return self._queries(X) + (self._checked_k(self.n_samples_fit_),)

    def _check_key_range(self, lo, hi):
        """Reject data whose distances overflow float64 (the keys are summed in float64).

        With per-feature ranges r_f = hi_f - lo_f, every key is at most d max_f r_f^2
        (squared Euclidean / Mahalanobis) or d max_f r_f (Manhattan); it must stay
        below ``_MAX_KEY``, otherwise all far points would tie at infinity.
        """
        if self._metric == "hamming":
            return
        with np.errstate(over="ignore", invalid="ignore"):
            r = float(np.max(np.subtract(hi, lo, dtype=np.float64)))
            bound = lo.shape[0] * (r if self._metric == "manhattan" else r * r)
        if not bound < _MAX_KEY:
            raise ValueError(f"{type(self).__name__}: the {self._metric} distances overflow float64 "
                             f"(the features span up to {r:.3g}"
                             + (" after the Mahalanobis transform" if self._metric == "mahalanobis"
                                else "") + "); rescale the features")

    def _take_weights(self, X, y, sample_weight):
        """(X, y) without the zero-weight rows; ``self._sw`` the others' weights (None: no
        weights, or all ones, which is the same)."""
        self._sw = None
        if sample_weight is None:
            return X, y
        sw = validate_sample_weight(sample_weight, X.shape[0])
        sw, X, y = drop_zero_weight(sw, X, y)
        if not np.all(sw == 1.0):
            self._sw = np.ascontiguousarray(sw, dtype=np.float64)
        return X, y

    def _fit(self, X, y):
        m = X.shape[0]
        self._checked_k(m)
        self._metric = self.metric      # the fitted metric (set_params(metric=...) needs a refit)
        # Mahalanobis searches float64 rows of its transform, whatever X's dtype: the filter's
        # error bound is then float64's (float32 rows left ~10^-7 relative slack, so many
        # queries needed the radius search), and float32 and float64 X give the same results
        self._dtype = np.float64 if self.metric == "mahalanobis" else X.dtype.type
        self._L = None
        self._Xm = None
        if self._metric == "mahalanobis":
            X64 = X.astype(np.float64, copy=False)
            self._L, self._L_scale = self._mahalanobis_transform(X64)
            self._L_mu_s = X64.mean(axis=0) / self._L_scale
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                S, centred = _Scaled.of(X64, self._L_scale, self._L_mu_s)
                X = centred @ self._L
            self._Xm, self._Xm_radius = S.X, S.radius
            self._L_radius = float(S.radius.max())
            if not np.all(np.isfinite(X)) or not np.isfinite(self._L_radius):
                raise ValueError(f"{type(self).__name__}: the Mahalanobis transform of X overflows "
                                 f"{np.dtype(self._dtype).name}; rescale the features or the matrix")
            self._L_coef = _mahalanobis_error_coef(self._L, self._M)
        self._T0 = np.array(X, dtype=self._dtype, order="C", copy=True)
        lo, hi = _column_range(self._T0)
        self._lo, self._hi = lo.astype(np.float64), hi.astype(np.float64)
        self._check_key_range(self._lo, self._hi)
        self.n_samples_fit_ = m
        self.algorithm_ = self._pick_algorithm(m, X.shape[1])
        self._both_pick = None          # "both": the structure the cost model picked
        self._probe = (0, 0, 0)         # "both": queries probed by the tree, their keys and box bounds
        self._tree = None
        self._split = None
        self._ytree = None
        self._flat = None
        self._gemm = False
        if self.algorithm_ in ("tree", "both"):
            self._tree = _build_tree(self._T0, _LEAF_SIZE or _leaf_size(X.shape[1]),
                                     self._n_threads())
            self._split = _split_planes(self._tree[4], self._tree[5])
            if self._tree_labels:       # the class codes in tree order, for the vote
                self._ytree = np.ascontiguousarray(self._y[self._tree[1]], dtype=np.intp)
        if self.algorithm_ in ("brute", "both") and self._metric in ("euclidean", "mahalanobis"):
            # the centre of the gemm rows: any mu gives the same keys in exact arithmetic, and
            # the error bound grows with the centred norms; the coordinate-wise median keeps
            # them small when a few far outliers would drag the mean (heavy-tailed data); the
            # median of at most _MEDIAN_ROWS evenly spaced rows (the whole column's median cost
            # as much as the kd-tree: 0.29 s on 100,000 x 128, strided reads)
            step = -(-m // _MEDIAN_ROWS)
            self._mu = np.median(self._T0[::step], axis=0).astype(np.float64)
            self._gemm_dtype = self._dtype
            if self._dtype == np.float64 and _F32_FILTER is not None:
                with np.errstate(over="ignore"):
                    self._Tc, t_norm = _centre(self._T0, self._mu, np.float32, "norm")
                radius = float(np.sqrt(t_norm.max()))
                if _F32_FILTER[0] < radius < _F32_FILTER[1]:
                    self._gemm_dtype = np.float32
            if self._gemm_dtype != np.float32 or self._dtype == np.float32:
                self._Tc, t_norm = _centre(self._T0, self._mu, self._dtype, "norm")
            self._radius = float(np.sqrt(t_norm.max()))
            limit = _GEMM_LIMIT[self._gemm_dtype]
            self._gemm = bool(np.isfinite(self._radius) and self._radius < limit)
            if not self._gemm:
                del self._Tc
        return self

    def _pick_algorithm(self, m, d):
        if self.algorithm != "auto":
            return self.algorithm
        return _pick_rule(self._metric, d, m)

    # ---- search ------------------------------------------------------------

    def _queries(self, X):
        """(Q0, Qm): the validated queries as searched (Mahalanobis: transformed, see
        :meth:`_search`) and, for Mahalanobis only (else None), a :class:`_Scaled` of them
        (the exact keys' operand)."""
        Xq = validate_X(self, X, reset=False, dtype="floating")
        Qm = None
        if self._L is not None:
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                Qm, centred = _Scaled.of(Xq, self._L_scale, self._L_mu_s)
                Xq = centred @ self._L
        with np.errstate(over="ignore"):
            Q0 = np.ascontiguousarray(Xq, dtype=self._dtype)
        # validate_X let through finite values only: a cast (float64 queries of a float32 model)
        # or the transform may overflow
        if (Q0 is not Xq or Qm is not None) and not np.all(np.isfinite(Q0)):
            what = ("the Mahalanobis transform of X" if self._L is not None
                    else "X (cast to the dtype of the training data)")
            raise ValueError(f"{type(self).__name__}: {what} overflows "
                             f"{np.dtype(self._dtype).name}; rescale the features")
        lo, hi = _column_range(Q0)
        # queries within the training data's ranges: fit checked those ranges already
        if not (np.all(lo >= self._lo) and np.all(hi <= self._hi)):
            self._check_key_range(np.minimum(self._lo, lo), np.maximum(self._hi, hi))
        return Q0, Qm

    def _metric_code(self):
        name = "sqeuclidean" if self._metric in ("euclidean", "mahalanobis") else self._metric
        return _knn.METRIC_CODES[name]

    def _distance(self, key):
        return np.sqrt(key) if self._metric in ("euclidean", "mahalanobis") else key

    def _search(self, Q0, k, n_threads, in_order=False, Qm=None, votes=False):
        """Yield (rows, taken) per block of queries: ``rows`` the block's rows of Q0 (a
        slice, or an index array when the tree searches the queries in its own order,
        unless ``in_order``), ``taken`` a :class:`_Taken`.

        For the i-th query of the block its taken points (the notes' k' closest) are
        ``indices[indptr[i]:indptr[i+1]]`` of ``taken.csr()``, sorted by (exact key,
        index), with their exact keys (squared distance for euclidean/mahalanobis).
        ``Qm``: for Mahalanobis, the queries' :class:`_Scaled` (``Q0`` holds them transformed).
        With ``votes`` (a classifier's vote that only counts the points: uniform weights, no
        sample weights), the kd-tree's blocks may give only each query's class counts of its
        taken points (``taken.votes``, (n, n_classes)) and ``taken.counts``, nothing per point.
        """
        if self._metric == "mahalanobis":
            yield from self._search_mahalanobis(Q0, Qm, k, n_threads, in_order)
        else:
            yield from self._search_keys(Q0, k, n_threads, in_order, votes)

    def _search_mahalanobis(self, Q0, Qm, k, n_threads, in_order):
        """:meth:`_search` for Mahalanobis: a candidate search, then the exact ranking.

        002's key (x - q)^T VI (x - q) is computed as defined (``_knn.mahalanobis_rank``),
        never through the transform: two points at the same Mahalanobis distance tie, as the
        k' rule needs. The candidates come from the Euclidean search on the transformed
        rows z = ((x - mu) / s) L (L L^T = s^2 VI), whose keys a differ from the exact keys E
        by at most e(q) (:func:`_mahalanobis_error_coef`). The search takes the k + 1
        nearest in a (with their ties): the first k have E <= a_k + e, so the exact k-th key
        E_(k) <= a_k + e and every point with E <= E_(k) has a <= a_k + 2 e. When the last
        candidate has a > a_k + 2 e (or all m points are candidates) they hold every such
        point; the other queries (points within 2 e of the k-th: near-ties in a) are
        completed by a radius search of threshold a_k + 2 e. The candidates are then ranked
        on (E, index) and the k' rule applied on E."""
        m = self.n_samples_fit_
        k1 = min(m, k + 1)
        d = Qm.X.shape[1]
        for rows, taken in self._search_keys(Q0, k1, n_threads, in_order):
            counts = taken.counts
            if taken.idx is not None:       # padded rows: (key, idx) of the first counts[i]
                cand, akey = taken.idx, taken.key
            else:
                cand, akey = _padded(taken)
            Qb = np.ascontiguousarray(Qm.X[rows])
            q_rad = np.ascontiguousarray(Qm.radius[rows])
            out_key = np.empty(cand.shape, dtype=np.float64)
            out_idx = np.empty(cand.shape, dtype=np.intp)
            cnt = np.empty(counts.shape[0], dtype=np.intp)
            nt = threads_for(n_threads, cand.size * d * d, _GRAIN)
            n_short = _knn.mahalanobis_rank(Qb, self._Xm, self._M, cand, counts, k, out_key,
                                            out_idx, cnt, nt, akey, q_rad, self._L_coef,
                                            self._L_radius, m)
            if n_short:
                short = np.flatnonzero(cnt < 0)
                e = self._L_coef * (q_rad[short] + self._L_radius) ** 2 + 1e-300
                cand2, counts2 = self._widen(Q0[rows][short], akey[short, k - 1] + 2.0 * e)
                key2 = np.empty(cand2.shape, dtype=np.float64)
                idx2 = np.empty(cand2.shape, dtype=np.intp)
                cnt2 = np.empty(short.size, dtype=np.intp)
                _knn.mahalanobis_rank(np.ascontiguousarray(Qb[short]), self._Xm, self._M, cand2,
                                      counts2, k, key2, idx2, cnt2, nt)
                if cand2.shape[1] > out_key.shape[1]:
                    pad = cand2.shape[1] - out_key.shape[1]
                    out_key = np.pad(out_key, ((0, 0), (0, pad)), constant_values=np.inf)
                    out_idx = np.pad(out_idx, ((0, 0), (0, pad)), constant_values=-1)
                out_key[short] = np.inf
                out_idx[short] = -1
                out_key[short, :key2.shape[1]] = key2
                out_idx[short, :idx2.shape[1]] = idx2
                cnt[short] = cnt2
            yield rows, _Taken(cnt, out_key, out_idx)

    def _self_scaled(self):
        """The training rows as Mahalanobis queries (None for other metrics)."""
        return None if self._Xm is None else _Scaled(self._Xm, self._Xm_radius)

    def _widen(self, Qs, thr):
        """Padded candidates (idx (n, width), counts) of the transformed queries Qs: every
        point whose transformed key is <= its ``thr`` (a radius search)."""
        if self._tree is None and self._flat is None:
            self._flat = _flat_tree(self._T0)
        tree = self._tree if self._tree is not None else self._flat
        code = self._metric_code()
        Qs = np.ascontiguousarray(Qs)
        thr = np.ascontiguousarray(thr, dtype=np.float64)
        nt = threads_for(self._n_threads(), Qs.shape[0], _TREE_GRAIN)
        ip = np.zeros(Qs.shape[0] + 1, dtype=np.intp)
        none_i, none_k = np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float64)
        _kdtree.radius(Qs, *tree, code, 0.0, ip, none_i, none_k, False, nt, thr)
        np.cumsum(ip, out=ip)
        ii = np.empty(ip[-1], dtype=np.intp)
        kk = np.empty(ip[-1], dtype=np.float64)
        _kdtree.radius(Qs, *tree, code, 0.0, ip, ii, kk, True, nt, thr)
        counts = np.diff(ip)
        cand, _ = _padded(_Taken(counts, csr=(ip, ii, kk)))
        return cand, counts

    def _search_keys(self, Q0, k, n_threads, in_order=False, votes=False):
        """:meth:`_search` on the exact keys of ``self._metric_code()`` over ``self._T0``."""
        m, d = self._T0.shape
        n = Q0.shape[0]
        cap = min(m, k + k // 2 + _SLACK)
        code = self._metric_code()
        route = self._route(n)
        if route == "tree":
            yield from self._tree_blocks(Q0, k, cap, code, n_threads, in_order, None, votes)
            return
        if route == "brute":
            yield from self._brute_blocks(Q0, k, cap, code, n_threads)
            return
        # both structures, not yet picked: which one is faster depends on the data as much
        # as on its shape (clustered or tie-heavy data favour the tree, spread-out data the
        # gemm filter), so queries go through the tree in probe stages that count its work
        # (keys and box bounds computed: the same on every run and thread count), and the
        # cost model (_both_costs) picks from the counts the structure of the rest of the
        # call and of every later call of this fitted model
        done = 0
        while done < n and self.__dict__.get("_both_pick") is None:
            probed, keys, bounds = self.__dict__.get("_probe") or (0, 0, 0)
            stage = _PROBE_FIRST if probed < _PROBE_FIRST else _PROBE_QUERIES
            take = min(n - done, max(1, stage - probed))
            work = []
            part = list(self._tree_blocks(Q0[done:done + take], k, cap, code, n_threads, True, work, votes))
            w = np.sum(work, axis=0)
            probed, keys, bounds = probed + take, keys + int(w[0]), bounds + int(w[1])
            self._probe = (probed, keys, bounds)
            tree_ns, brute_ns = self._both_costs((keys, bounds), probed)
            if probed >= _PROBE_QUERIES:
                self._both_pick = "tree" if tree_ns <= brute_ns else "brute"
            elif probed >= _PROBE_FIRST and (tree_ns * _PROBE_DECISIVE < brute_ns
                                             or brute_ns * _PROBE_DECISIVE < tree_ns):
                self._both_pick = "tree" if tree_ns < brute_ns else "brute"
            for rows, taken in part:
                yield slice(rows.start + done, rows.stop + done), taken
            done += take
        if done == n:
            return
        rest = (self._tree_blocks(Q0[done:], k, cap, code, n_threads, in_order, None, votes)
                if self.__dict__.get("_both_pick") == "tree" else self._brute_blocks(Q0[done:], k, cap, code, n_threads))
        for rows, taken in rest:
            yield (slice(rows.start + done, rows.stop + done) if isinstance(rows, slice)
                   else rows + done), taken

    def _route(self, n):
        """The structure of a call of n queries: "tree", "brute" or "probe" (see
        :func:`_pick_rule`)."""
        if self._tree is None:
            return "brute"
        if self.algorithm_ == "tree":
            return "tree"
        if n <= _FEW_QUERIES and self._T0.shape[1] <= _TREE_MAX_D.get(self._metric, 0):
            return "tree"
        return self.__dict__.get("_both_pick") or "probe"

    def _both_costs(self, work, p):
        """(tree, brute force) estimated single-thread ns of p queries whose tree search
        computed ``work`` = (keys, box bounds) in all: each costs ``_COST_TREE_KEY`` ns per
        feature, plus ``_COST_TREE_QUERY`` per query; brute force ``_COST_BRUTE_POINT`` ns
        per training point and feature (the gemm filter; without it the exact scan, which
        costs what a tree key does) plus ``_COST_BRUTE_QUERY`` per query."""
        m, d = self._T0.shape
        keys, bounds = (float(w) for w in work)
        tree = _COST_TREE_KEY * d * (keys + bounds) + _COST_TREE_QUERY * p
        per_point = _COST_BRUTE_POINT if self._gemm else _COST_TREE_KEY
        brute = (per_point * m * d + _COST_BRUTE_QUERY) * p
        return tree, brute

    def _brute_blocks(self, Q0, k, cap, code, n_threads):
        """:meth:`_search_keys` by brute force: the gemm filter, else the exact scan."""
        m, d = self._T0.shape
        n = Q0.shape[0]
        block = max(1, _OUT_BUDGET // cap)
        for start in range(0, n, block):
            stop = min(n, start + block)
            Qb = Q0[start:stop]
            nb = stop - start
            # a parallel region costs more than it saves on small work
            nt = threads_for(n_threads, nb * m * d, _GRAIN)
            use_gemm = self._gemm
            if use_gemm:
                with np.errstate(over="ignore"):
                    Qc, q_norm = _centre(Qb, self._mu, self._gemm_dtype, "half")
                # far queries could overflow the gemm tile (float32): exact scan instead
                use_gemm = bool(np.sqrt(q_norm.max()) < _GEMM_LIMIT[self._gemm_dtype])
            if not use_gemm:
                # no gemm filter (Manhattan, Hamming, or data too wide for it): the exact
                # scan is the one-leaf tree's search (its keys computed several points at
                # a time)
                if self._flat is None:
                    self._flat = _flat_tree(self._T0)
                nt = min(nt, -(-nb // _MIN_QUERIES_PER_THREAD))
                yield slice(start, stop), self._tree_search(Qb, k, cap, code, nt, flat=True)
                continue
            eps = _euclidean_error_bound(q_norm, self._radius, d, self._gemm_dtype)
            out_key, out_idx, cnt = self._gemm_candidates(Qc, q_norm, Qb, eps, k, cap, nt)
            yield slice(start, stop), self._assemble(Qc, q_norm, Qb, eps, k, cap,
                                                     out_key, out_idx, cnt, n_threads)

    def _gemm_candidates(self, Qc, q_norm, Qb, eps, k, cap, nt):
        """(out_key, out_idx, cnt) of ``_knn.knn_gemm`` for the queries Qb (Qc, q_norm:
        centred by :func:`_centre`; eps: their error bounds) with ``cap`` candidates each."""
        nb, d = Qb.shape
        m = self._T0.shape[0]
        out_key = np.empty((nb, cap), dtype=np.float64)
        out_idx = np.empty((nb, cap), dtype=np.intp)
        cnt = np.empty(nb, dtype=np.intp)
        t_chunk = int(_T_CHUNK[self._gemm_dtype])
        # too few queries to feed the threads: split the training chunks among them
        # instead (the same candidates, see _knn.knn_gemm_split_train)
        split = nt > 1 and nb < nt * _SPLIT_TRAIN_BELOW
        q_chunk = _balanced_chunk(nb, 1 if split else nt,
                                  min(_Q_CHUNK, max(1, _HEAP_BUDGET // cap)))
        kernel = _knn.knn_gemm_split_train if split else _knn.knn_gemm
        with blas_single_thread(work=2.0 * nb * m * d):
            kernel(Qc, self._Tc, q_norm, _NO_NORMS, Qb, self._T0, eps,
                   k, cap, out_key, out_idx, cnt, q_chunk, t_chunk, nt,
                   _euclidean_error_coef(d, self._gemm_dtype),
                   _relative_slack(d, self._gemm_dtype))
        return out_key, out_idx, cnt

    def _tree_blocks(self, Q0, k, cap, code, n_threads, in_order, work=None, votes=False):
        """:meth:`_search` through the kd-tree. From ``_ORDER_MIN`` queries they are searched
        leaf by leaf (:func:`_kdtree.query_order`: the same results, fewer cache misses),
        in blocks of at most ``_TREE_OUT_BUDGET`` output entries (small outputs are reused
        by the allocator instead of being faulted in afresh, and stay in cache for the vote)."""
        n = Q0.shape[0]
        order = None
        if n >= _ORDER_MIN and not in_order:
            order = np.empty(n, dtype=np.intp)
            _kdtree.query_order(Q0, *self._split, order, n_threads)
            Q0 = np.take(Q0, order, axis=0)        # a row gather (fancy indexing: 8x slower at d = 2)
        block = max(1, _TREE_OUT_BUDGET // cap)
        for start in range(0, n, block):
            stop = min(n, start + block)
            rows = slice(start, stop) if order is None else order[start:stop]
            yield rows, self._tree_search(Q0[start:stop], k, cap, code, n_threads, work=work, votes=votes)

    def _tree_search(self, Qb, k, cap, code, n_threads, flat=False, work=None, votes=False):
        """The taken points (a :class:`_Taken`) of the queries Qb through the kd-tree, or
        with ``flat`` through the one-leaf tree over the training rows in their own order
        (the exact brute-force scan; ``n_threads`` is then used as given). ``work``: a list
        to which the search's total (keys, box bounds) computed is appended. ``votes``: a
        classifier's counts-only vote (:meth:`_search`): only each query's class counts, when
        they take no more room than the cap points per query they replace (n_classes <= cap)."""
        nb = Qb.shape[0]
        tree = self._flat if flat else self._tree
        ytree = (self._y if self._tree_labels else None) if flat else self._ytree
        nt = n_threads if flat else threads_for(n_threads, nb, _TREE_GRAIN)
        w = None if work is None else np.empty((nb, 2), dtype=np.intp)
        if votes and ytree is not None and self.classes_.size <= cap:
            cnt = np.empty(nb, dtype=np.intp)
            V = np.empty((nb, self.classes_.size), dtype=np.intp)
            pred = np.empty(nb, dtype=np.intp)
            _kdtree.knn_votes(Qb, *tree, code, k, ytree, V, cnt, self._default, pred, nt, out_work=w)
            if work is not None:
                work.append(w.sum(axis=0))
            return _Taken(cnt, votes=V, pred=pred)
        out_key = np.empty((nb, cap), dtype=np.float64)
        out_idx = np.empty((nb, cap), dtype=np.intp)
        cnt = np.empty(nb, dtype=np.intp)
        lab = None if ytree is None else np.empty((nb, cap), dtype=np.intp)
        # more ties than cap: the kernel keeps those queries' whole results (no second
        # search), as padded rows up to _WIDEN_MAX x cap wide (the compiled vote reads them)
        over = _kdtree.knn(Qb, *tree, code, k, cap, out_key, out_idx, cnt, nt, ytree, lab,
                           out_work=w, keep_over=True, widen=_WIDEN_MAX * cap)
        if work is not None:
            work.append(w.sum(axis=0))
        if over is None:
            return _Taken(cnt, out_key, out_idx, lab=lab)
        return _with_over(cnt, out_key, out_idx, lab, over)

    def _assemble(self, Qc, q_norm, Qb, eps, k, cap, out_key, out_idx, cnt, n_threads):
        """The taken points (a :class:`_Taken`) from the kernel's candidates. A flagged query
        (more points within its error bound of the k-th key than ``cap``: ties, duplicates)
        is searched again by the same kernel with four times the room, until certified;
        with room for all m points every query is (nothing is left out), so this ends.
        Each retry handles at most ``_FALLBACK_BUDGET`` candidate entries at a time."""
        m, d = self._T0.shape
        flagged = np.flatnonzero(cnt < 0)
        counts = cnt.copy()
        if not flagged.size:
            return _Taken(counts, out_key, out_idx)
        found = []
        rows, cap2 = flagged, cap
        while rows.size:
            cap2 = min(m, 4 * cap2)
            step = max(1, _FALLBACK_BUDGET // cap2)
            left = []
            for s in range(0, rows.size, step):
                r = rows[s:s + step]
                nt = threads_for(n_threads, r.size * m * d, _GRAIN)
                key2, idx2, cnt2 = self._gemm_candidates(Qc[r], q_norm[r], Qb[r], eps[r],
                                                         k, cap2, nt)
                ok = cnt2 >= 0
                if ok.any():
                    w = int(cnt2[ok].max())
                    found.append((r[ok], key2[ok, :w], idx2[ok, :w], cnt2[ok]))
                left.append(r[~ok])
            rows = np.concatenate(left)
        pos = np.empty(cnt.shape[0], dtype=np.intp)
        pos[flagged] = np.arange(flagged.size)
        width = max(f[1].shape[1] for f in found)
        extra_key = np.full((flagged.size, width), np.inf)
        extra_idx = np.full((flagged.size, width), -1, dtype=np.intp)
        for r, key2, idx2, cnt2 in found:
            counts[r] = cnt2
            extra_key[pos[r], :key2.shape[1]] = key2
            extra_idx[pos[r], :idx2.shape[1]] = idx2
        return _Taken(counts, csr=_csr(counts, out_key, out_idx, flagged, extra_key, extra_idx))

    def _neighbour_weights(self, keys, rows, nb):
        """002, 'Weighted nearest neighbors' (None for uniform weights)."""
        if isinstance(self.weights, str) and self.weights == "uniform":
            return None
        dist = self._distance(keys)
        if callable(self.weights):
            w = np.asarray(self.weights(dist), dtype=np.float64)
            if w.shape != dist.shape:
                raise ValueError(f"the weights callable returned shape {w.shape}, expected {dist.shape}")
            if not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError("the weights callable must return finite non-negative weights")
            return w
        if self.weights == "slide":     # delta_i / sum_j delta_j (the sums divide it out)
            all_zero = np.bincount(rows, weights=dist, minlength=nb) == 0.0
            return np.where(all_zero[rows], 1.0, dist)
        zero = dist == 0.0
        has_zero = np.bincount(rows, weights=zero, minlength=nb) > 0
        with np.errstate(divide="ignore"):
            inv = 1.0 / dist
        return np.where(has_zero[rows], zero.astype(np.float64), inv)

    def kneighbors(self, X: ArrayLike | None = None, n_neighbors: int | None = None, return_distance: bool = True
                  ) -> tuple[NDArray[np.float64], NDArray[np.intp]] | NDArray[np.intp]:
        """The n_neighbors nearest training points of each query, sorted by (distance, index).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or None
            None queries the training points, each excluding itself (as in scikit-learn).
        n_neighbors : int, default ``self.n_neighbors``
            Exactly n_neighbors (k) neighbours are returned: ties beyond the k-th are cut by
            training index (prediction takes them all; this method mirrors scikit-learn's).
        return_distance : bool

        Returns
        -------
        distances : ndarray (n_queries, n_neighbors), float64 (only if return_distance)
        indices : ndarray (n_queries, n_neighbors), intp
        """
        self._check_fitted()
        m = self.n_samples_fit_
        k = self._checked_k(m) if n_neighbors is None else self._checked_k(None, n_neighbors)
        self_query = X is None
        kk = k + 1 if self_query else k
        if kk > m:
            raise ValueError(f"n_neighbors={k} neighbours requested but only m={m} training points"
                             + (" (excluding the query point itself)" if self_query else ""))
        Q0, Qm = (self._T0, self._self_scaled()) if self_query else self._queries(X)
        n = Q0.shape[0]
        D = np.empty((n, kk), dtype=np.float64)
        I = np.empty((n, kk), dtype=np.intp)
        for rows, taken in self._search(Q0, kk, self._n_threads(), Qm=Qm):
            if taken.idx is not None:
                I[rows] = taken.idx[:, :kk]
                D[rows] = taken.key[:, :kk]
                continue
            indptr, idx, keys = taken.csr()
            pos = indptr[:-1, None] + np.arange(kk)
            I[rows] = idx[pos]
            D[rows] = keys[pos]
        D = self._distance(D)
        if self_query:
            is_self = I == np.arange(n)[:, None]
            drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), kk - 1)
            keep = np.arange(kk)[None, :] != drop[:, None]
            I = I[keep].reshape(n, k)
            D = D[keep].reshape(n, k)
        return (D, I) if return_distance else I


    def _radius_key(self, r):
        """The key threshold of ``radius_neighbors``: a point is within r when the distance
        this estimator reports for it (``kneighbors``' value: fl(sqrt(key)) for Euclidean
        and Mahalanobis, the key itself otherwise) is <= r; for the square root that is
        key <= K(r), the largest double with fl(sqrt(K)) <= r (see ``_sqrt_threshold``)."""
        if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)) \
                or not r >= 0:
            raise ValueError(f"r must be a non-negative real number, got {r!r}")
        r = float(r)
        return _sqrt_threshold(r) if self._metric in ("euclidean", "mahalanobis") else r

    def radius_neighbors(self, X: ArrayLike | None = None, r: float | None = None, return_distance: bool = True
                        ) -> tuple[NDArray[np.object_], NDArray[np.object_]] | NDArray[np.object_]:
        """Every training point within distance r of each query, sorted by (distance, index).

        Both algorithms compare the same exact keys (``smml._core._distances.exact_key``)
        with the same threshold: a point is returned when the distance ``kneighbors``
        would report for it is <= r (Euclidean / Mahalanobis: fl(sqrt(squared distance))
        <= r, decided as squared distance <= the largest double whose square root rounds
        to <= r; Manhattan and Hamming: distance <= r). The tree prunes a node only when
        its lower bound exceeds that threshold.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or None
            None queries the training points, each excluding itself (as ``kneighbors``).
        r : float >= 0 (``inf`` returns every point)
        return_distance : bool

        Returns
        -------
        distances : ndarray of n_queries float64 arrays (only if return_distance)
        indices : ndarray of n_queries intp arrays
        """
        self._check_fitted()
        thr = exact_thr = self._radius_key(r)
        self_query = X is None
        Q0, Qm = (self._T0, self._self_scaled()) if self_query else self._queries(X)
        n = Q0.shape[0]
        if Qm is not None and n:    # candidates on the transformed keys, see _search_mahalanobis
            e = self._L_coef * (Qm.radius.max() + self._L_radius) ** 2 + 1e-300
            thr = exact_thr + e
        if self._tree is not None:
            tree = self._tree
            nt = threads_for(self._n_threads(), n, _TREE_GRAIN)
        else:
            if self._flat is None:
                self._flat = _flat_tree(self._T0)
            tree = self._flat
            nt = threads_for(self._n_threads(), n * self._T0.size, _GRAIN)
        code = self._metric_code()
        indptr = np.zeros(n + 1, dtype=np.intp)
        none_i, none_k = np.empty(0, dtype=np.intp), np.empty(0, dtype=np.float64)
        _kdtree.radius(Q0, *tree, code, thr, indptr, none_i, none_k, False, nt)
        np.cumsum(indptr, out=indptr)
        idx = np.empty(indptr[-1], dtype=np.intp)
        keys = np.empty(indptr[-1], dtype=np.float64)
        _kdtree.radius(Q0, *tree, code, thr, indptr, idx, keys, True, nt)
        if Qm is not None and n:    # the exact keys decide (and order)
            qrow = np.repeat(np.arange(n), np.diff(indptr))
            keys = np.empty(idx.size, dtype=np.float64)
            _knn.mahalanobis_pairs(Qm.X, self._Xm, self._M, qrow, idx, keys,
                                   threads_for(self._n_threads(), idx.size * Qm.X.shape[1] ** 2, _GRAIN))
            order = np.lexsort((idx, keys, qrow))
            qrow, idx, keys = qrow[order], idx[order], keys[order]
            within = keys <= exact_thr
            qrow, idx, keys = qrow[within], idx[within], keys[within]
            indptr = np.zeros(n + 1, dtype=np.intp)
            np.cumsum(np.bincount(qrow, minlength=n), out=indptr[1:])
        if self_query:     # drop each point itself (key 0 <= thr: it is always there)
            keep = idx != np.repeat(np.arange(n), np.diff(indptr))
            counts = np.diff(indptr) - 1
            idx, keys = idx[keep], keys[keep]
            indptr = np.zeros(n + 1, dtype=np.intp)
            np.cumsum(counts, out=indptr[1:])
        ind = np.empty(n, dtype=object)
        ind[:] = np.split(idx, indptr[1:-1])
        if not return_distance:
            return ind
        dist = np.empty(n, dtype=object)
        dist[:] = np.split(self._distance(keys), indptr[1:-1])
        return dist, ind
