"""k-nearest-neighbour classification and regression exactly as the notes define them.

000, 'The Nearest Neighbour algorithm' and 002, 'Nearest neighbors' /
'Weighted nearest neighbors'. The rules, for a query x:

- rank the m training points by distance from x and take the k' closest, k'
  the smallest integer >= k such that the (k'+1)-th point is strictly farther
  than the k'-th (all m points if there is no such k'): points tied with the
  k-th are all taken, so the result never depends on the order of the
  training rows;
- classification: the majority label of the taken points; when several labels
  tie for the majority, the *default label*, the most frequent label of the
  training set (``default_label_``; if several labels are equally frequent,
  the smallest in sorted order). The notes state this for binary labels; for
  more classes the same rule is applied literally: any tie for the top vote
  predicts the default label;
- regression: the average of the taken labels.

Distances are compared on values computed exactly as defined (by direct
subtraction, summed in float64 in feature order; Euclidean and Mahalanobis on
the squared distance), so duplicated rows really tie. The Euclidean search runs
through BLAS gemm (``||x||^2 - 2 x.y + ||y||^2``) on centred data and then
re-ranks the candidates on their exact distances, with a rigorous bound on the
gemm rounding deciding whether the candidate list provably holds every tied
point (otherwise that query is scanned exactly); see ``smml._core._knn``.
"""

import numpy as np

from smml._core import _knn
from smml._threads import blas_single_thread
from smml._validation import (
    Callable, InstanceOf, N_JOBS, Interval, Options, check_is_fitted, encode_classes,
    validate_X, validate_X_y,
)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator

__all__ = ["KNNClassifier", "KNNRegressor"]

# Kernel chunking (module-level so that tests can check that results do not depend on it).
_Q_CHUNK = 256                  # queries per gemm tile (at most)
_T_CHUNK = {np.float32: 2048, np.float64: 1024}   # training points per gemm tile
_HEAP_BUDGET = 1 << 20          # max (queries x candidates) heap entries per thread
_OUT_BUDGET = 1 << 21           # max (queries x candidates) entries per kernel call
_FALLBACK_BUDGET = 1 << 22      # max float64 entries of one exact fallback block
_SERIAL_WORK = 1 << 23       # below this many multiply-adds a call runs on one thread
_MIN_QUERIES_PER_THREAD = 8   # fewer queries per thread: fewer threads
_SPLIT_TRAIN_BELOW = 64        # fewer queries per thread (Euclidean): threads share out the training chunks
_SLACK = 8                      # extra candidates kept beyond 1.5 k
_MAX_KEY = 1e300                # keys (squared / Manhattan distances) must stay below this
_GEMM_LIMIT = {np.float32: 1e17, np.float64: 1e150}   # gemm only while centred norms are below


def _euclidean_error_bound(q_norm, radius, d, dtype):
    """A rigorous bound on |gemm-approximated - exactly-computed| squared distance.

    Centred data x~ = fl(x - mu), y~ (rounded to ``dtype``, unit roundoff u; float64's
    is u64) and S = ||x~|| + max ||y~||. The error terms, each a multiple of S^2:
    centring 2u (||x~ - y~||^2 vs ||x - y||^2); the dot product in ``dtype``,
    2 gamma_d ||x~|| ||y~|| <= (d/2) u; the float64 norms and the two float64 additions
    (d + 2) u64; the float64 "exact" sum itself (d + 2) u64. In all about
    (d/2 + 2) u + (2d + 4) u64; we use (2d + 8)(u + u64) * 1.1, i.e. at least 1.7 times
    more (4 times more for float32).
    """
    u = 2.0 ** -24 if dtype == np.float32 else 2.0 ** -53
    u64 = 2.0 ** -53
    c = (2 * d + 8) * (u + u64) * 1.1
    s = np.sqrt(q_norm) + radius
    return c * s * s + 1e-300


def _centre(A, mu, dtype):
    """(A - mu) rounded to ``dtype``, and the float64 squared norms of the rounded rows."""
    out = np.empty(A.shape, dtype=dtype)
    norms = np.empty(A.shape[0], dtype=np.float64)
    step = max(1, (1 << 20) // max(1, A.shape[1]))
    for s in range(0, A.shape[0], step):
        block = np.subtract(A[s:s + step], mu, dtype=np.float64)
        out[s:s + step] = block
        if dtype != np.float64:
            block = out[s:s + step].astype(np.float64)
        norms[s:s + step] = np.einsum("ij,ij->i", block, block)
    return out, norms


class _KNNBase(SmmlEstimator):
    _parameter_spec = {
        "k": Interval(int, 1, None),
        "metric": Options("euclidean", "manhattan", "mahalanobis", "hamming"),
        "weights": (Options("uniform", "distance"), Callable()),
        "metric_params": (Options(None), InstanceOf(dict)),
        "n_jobs": N_JOBS,
    }

    def __init__(self, k=1, metric="euclidean", weights="uniform", metric_params=None, n_jobs=None):
        self.k = k
        self.metric = metric
        self.weights = weights
        self.metric_params = metric_params
        self.n_jobs = n_jobs

    # ---- fit -------------------------------------------------------------

    def _mahalanobis_transform(self, X):
        """(L, s) with L L^T = s^2 S^-1 (002, 'Nearest neighbors', Example (ii)): delta = ||(x - y) L / s||.

        s = 1 for a given matrix; for the estimated covariance s is a power of two near
        max |X|, so the covariance of X / s cannot overflow (the distance is scale-free).
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
        return Qm * np.sqrt(np.clip(w, 0.0, None)), scale

    def _checked_k(self, m, k=None):
        """k (default ``self.k``, validated with the other parameters) as an int in [1, m]
        (no upper limit when m is None)."""
        if k is None:
            k = self.k
        elif not Interval(int, 1, None).is_satisfied_by(k):
            raise ValueError(f"k must be a positive integer, got {k!r}")
        if m is not None and k > m:
            raise ValueError(f"k={k} is larger than the number of training points, n_samples={m} "
                             "(000: k cannot be taken larger than the size of the training set)")
        return int(k)

    def _fitted_queries(self, X):
        """(queries, k) for a predict-time call. The parameters are validated again:
        ``set_params`` after fit may have changed ``k`` or ``weights``."""
        check_is_fitted(self, "n_samples_fit_")
        self._validate_params()
        return self._queries(X), self._checked_k(self.n_samples_fit_)

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

    def _fit(self, X, y):
        m = X.shape[0]
        self._checked_k(m)
        self._metric = self.metric      # the fitted metric (set_params(metric=...) needs a refit)
        self._dtype = X.dtype.type
        self._L = None
        if self._metric == "mahalanobis":
            self._L, self._L_scale = self._mahalanobis_transform(X.astype(np.float64, copy=False))
            with np.errstate(over="ignore", invalid="ignore"):
                X = ((X.astype(np.float64, copy=False) / self._L_scale) @ self._L).astype(self._dtype)
            if not np.all(np.isfinite(X)):
                raise ValueError(f"{type(self).__name__}: the Mahalanobis transform of X overflows "
                                 f"{np.dtype(self._dtype).name}; rescale the features or the matrix")
        self._T0 = np.array(X, dtype=self._dtype, order="C", copy=True)
        self._lo = self._T0.min(axis=0).astype(np.float64)
        self._hi = self._T0.max(axis=0).astype(np.float64)
        self._check_key_range(self._lo, self._hi)
        self.n_samples_fit_ = m
        self._gemm = False
        if self._metric in ("euclidean", "mahalanobis"):
            self._mu = self._T0.mean(axis=0, dtype=np.float64)
            self._Tc, self._t_norm = _centre(self._T0, self._mu, self._dtype)
            self._radius = float(np.sqrt(self._t_norm.max()))
            limit = _GEMM_LIMIT[self._dtype]
            self._gemm = bool(np.isfinite(self._radius) and self._radius < limit)
            if not self._gemm:
                del self._Tc, self._t_norm
        return self

    # ---- search ------------------------------------------------------------

    def _queries(self, X):
        Xq = validate_X(self, X, reset=False, dtype="floating")
        if self._L is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                Xq = (Xq.astype(np.float64, copy=False) / self._L_scale) @ self._L
        with np.errstate(over="ignore"):
            Q0 = np.ascontiguousarray(Xq, dtype=self._dtype)
        if not np.all(np.isfinite(Q0)):
            what = ("the Mahalanobis transform of X" if self._L is not None
                    else "X (cast to the dtype of the training data)")
            raise ValueError(f"{type(self).__name__}: {what} overflows "
                             f"{np.dtype(self._dtype).name}; rescale the features")
        self._check_key_range(np.minimum(self._lo, Q0.min(axis=0)),
                              np.maximum(self._hi, Q0.max(axis=0)))
        return Q0

    def _metric_code(self):
        name = "sqeuclidean" if self._metric in ("euclidean", "mahalanobis") else self._metric
        return _knn.METRIC_CODES[name]

    def _distance(self, key):
        return np.sqrt(key) if self._metric in ("euclidean", "mahalanobis") else key

    def _search(self, Q0, k, n_threads):
        """Yield (start, stop, counts, indptr, indices, keys) per block of queries.

        For query i of the block its taken points (the notes' k' closest) are
        ``indices[indptr[i]:indptr[i+1]]``, sorted by (exact key, index), with
        their exact keys (squared distance for euclidean/mahalanobis).
        """
        m, d = self._T0.shape
        n = Q0.shape[0]
        cap = min(m, k + k // 2 + _SLACK)
        block = max(1, _OUT_BUDGET // cap)
        code = self._metric_code()
        for start in range(0, n, block):
            stop = min(n, start + block)
            Qb = Q0[start:stop]
            nb = stop - start
            # a parallel region costs more than it saves on small work
            nt = 1 if nb * m * d < _SERIAL_WORK else n_threads
            out_key = np.empty((nb, cap), dtype=np.float64)
            out_idx = np.empty((nb, cap), dtype=np.intp)
            cnt = np.empty(nb, dtype=np.intp)
            use_gemm = self._gemm
            if use_gemm:
                with np.errstate(over="ignore"):
                    Qc, q_norm = _centre(Qb, self._mu, self._dtype)
                # far queries could overflow the gemm tile (float32): exact scan instead
                use_gemm = bool(np.sqrt(q_norm.max()) < _GEMM_LIMIT[self._dtype])
            if use_gemm:
                eps = _euclidean_error_bound(q_norm, self._radius, d, self._dtype)
                t_chunk = int(_T_CHUNK[self._dtype])
                # too few queries to feed the threads: split the training chunks among them
                # instead (the same candidates, see _knn.knn_gemm_split_train)
                split = nt > 1 and nb < nt * _SPLIT_TRAIN_BELOW
                q_chunk = int(min(_Q_CHUNK, max(1, nb if split else -(-nb // nt)),
                                  max(1, _HEAP_BUDGET // cap)))
                kernel = _knn.knn_gemm_split_train if split else _knn.knn_gemm
                with blas_single_thread(work=2.0 * nb * m * d):
                    kernel(Qc, self._Tc, q_norm, self._t_norm, Qb, self._T0, eps,
                           k, cap, out_key, out_idx, cnt, q_chunk, t_chunk, nt)
            else:
                nt = min(nt, -(-nb // _MIN_QUERIES_PER_THREAD))
                _knn.knn_direct(Qb, self._T0, code, k, cap, out_key, out_idx, cnt, nt)
            yield (start, stop) + self._assemble(Qb, k, cap, code, out_key, out_idx, cnt, nt)

    def _assemble(self, Qb, k, cap, code, out_key, out_idx, cnt, n_threads):
        """CSR of the taken points from the kernel's candidates, scanning flagged queries exactly."""
        m = self._T0.shape[0]
        nb = Qb.shape[0]
        flagged = np.flatnonzero(cnt < 0)
        counts = cnt.copy()
        extra = []
        step = max(1, _FALLBACK_BUDGET // m)
        for s in range(0, flagged.size, step):
            rows = np.ascontiguousarray(flagged[s:s + step])
            D = np.empty((rows.size, m), dtype=np.float64)
            _knn.exact_rows(Qb, self._T0, rows, code, D, n_threads)
            kth = np.partition(D, k - 1, axis=1)[:, k - 1]
            r, c = np.nonzero(D <= kth[:, None])
            v = D[r, c]
            order = np.lexsort((c, v, r))
            r, c, v = r[order], c[order], v[order]
            per_row = np.bincount(r, minlength=rows.size)
            counts[rows] = per_row
            offsets = np.concatenate(([0], np.cumsum(per_row)[:-1]))
            extra.append((rows, r, np.arange(r.size) - offsets[r], c, v))
        indptr = np.zeros(nb + 1, dtype=np.intp)
        np.cumsum(counts, out=indptr[1:])
        indices = np.empty(indptr[-1], dtype=np.intp)
        keys = np.empty(indptr[-1], dtype=np.float64)
        ok = np.where(cnt < 0, 0, cnt)
        r, c = np.nonzero(np.arange(cap) < ok[:, None])
        pos = indptr[r] + c
        indices[pos] = out_idx[r, c]
        keys[pos] = out_key[r, c]
        for rows, r, rank, c, v in extra:
            pos = indptr[rows[r]] + rank
            indices[pos] = c
            keys[pos] = v
        return counts, indptr, indices, keys

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
        zero = dist == 0.0
        has_zero = np.bincount(rows, weights=zero, minlength=nb) > 0
        with np.errstate(divide="ignore"):
            inv = 1.0 / dist
        return np.where(has_zero[rows], zero.astype(np.float64), inv)

    def kneighbors(self, X=None, k=None, return_distance=True):
        """The k nearest training points of each query, sorted by (distance, index).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or None
            None queries the training points, each excluding itself (as in scikit-learn).
        k : int, default ``self.k``
            Exactly k neighbours are returned: ties beyond the k-th are cut by training index
            (prediction takes them all; this method mirrors scikit-learn's).
        return_distance : bool

        Returns
        -------
        distances : ndarray (n_queries, k), float64 (only if return_distance)
        indices : ndarray (n_queries, k), intp
        """
        check_is_fitted(self, "n_samples_fit_")
        self._validate_params()
        m = self.n_samples_fit_
        k = self._checked_k(m) if k is None else self._checked_k(None, k)
        self_query = X is None
        kk = k + 1 if self_query else k
        if kk > m:
            raise ValueError(f"k={k} neighbours requested but only m={m} training points"
                             + (" (excluding the query point itself)" if self_query else ""))
        Q0 = self._T0 if self_query else self._queries(X)
        n = Q0.shape[0]
        D = np.empty((n, kk), dtype=np.float64)
        I = np.empty((n, kk), dtype=np.intp)
        for start, stop, counts, indptr, idx, keys in self._search(Q0, kk, self._n_threads()):
            pos = indptr[:-1, None] + np.arange(kk)
            I[start:stop] = idx[pos]
            D[start:stop] = keys[pos]
        D = self._distance(D)
        if self_query:
            is_self = I == np.arange(n)[:, None]
            drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), kk - 1)
            keep = np.arange(kk)[None, :] != drop[:, None]
            I = I[keep].reshape(n, k)
            D = D[keep].reshape(n, k)
        return (D, I) if return_distance else I


_DOC_PARAMS = """
    Parameters
    ----------
    k : int, default=1
        Number of neighbours (000: k <= m, the training set size; checked in fit).
    metric : {"euclidean", "manhattan", "mahalanobis", "hamming"}, default="euclidean"
        002, 'Nearest neighbors': Euclidean ||x - y|| (the fast gemm path); Manhattan
        sum |x_i - y_i|; Mahalanobis sqrt((x - y)^T S^-1 (x - y)) with S^-1 from
        ``metric_params={"VI": S^-1}`` or ``{"V": S}``, else S = the training sample
        covariance (pseudo-inverse if singular; computed as the Euclidean distance after
        x -> x L with L L^T = S^-1); Hamming, the number of coordinates that differ.
    weights : {"uniform", "distance"} or callable, default="uniform"
        "distance" is 002, 'Weighted nearest neighbors': the taken points count with
        weights proportional to 1 / distance (the slide prints delta_i / sum_j delta_j,
        which would favour the *farthest* points; we read it as the usual inverse-distance
        rule). If any taken point is at distance 0 exactly, only the points at distance 0
        count, each with weight 1. A callable (002: "possible to extend to arbitrary
        weights") receives the 1-d array of distances of all taken points of a block of
        queries and returns their non-negative weights (same shape).
    metric_params : dict or None
        For metric="mahalanobis": ``{"VI": inverse covariance}`` or ``{"V": covariance}``.
    n_jobs : int or None
        OpenMP threads (None or -1: all usable cores). Results do not depend on it.
"""


class KNNClassifier(ClassifierMixin, _KNNBase):
    __doc__ = """k-NN classifier (000, 'The Nearest Neighbour algorithm'; 002, 'Nearest neighbors').

    Predicts the majority label of the k' nearest training points (k' >= k takes every
    point tied with the k-th); a tie in the vote predicts ``default_label_``, the most
    frequent training label (the smallest in sorted order if several are equally frequent).
    With weights, a tie is exact equality of the weighted sums. ``predict_proba`` is the
    (weighted) share of each class among the taken points, so its argmax can differ from
    ``predict`` exactly when the vote is tied.
""" + _DOC_PARAMS + """
    Attributes
    ----------
    classes_ : ndarray, the sorted labels
    default_label_ : the label predicted on vote ties
    n_samples_fit_ : int
    VI_ : ndarray, the inverse covariance used (metric="mahalanobis" only)
    """

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        self.classes_, self._y = encode_classes(y)
        counts = np.bincount(self._y, minlength=self.classes_.size)
        self._default = int(np.argmax(counts))     # first maximum: smallest label in sorted order
        self.default_label_ = self.classes_[self._default]
        return self._fit(X, y)

    def _votes(self, counts, idx, keys, nb):
        nc = self.classes_.size
        rows = np.repeat(np.arange(nb), counts)
        w = self._neighbour_weights(keys, rows, nb)
        return np.bincount(rows * nc + self._y[idx], weights=w, minlength=nb * nc).reshape(nb, nc)

    def _decide(self, votes):
        pred = np.argmax(votes, axis=1)
        best = votes[np.arange(votes.shape[0]), pred]
        tied = (votes == best[:, None]).sum(axis=1) > 1
        pred[tied] = self._default
        return pred

    def predict(self, X):
        """The notes' k-NN prediction for each row of X."""
        Q0, k = self._fitted_queries(X)
        pred = np.empty(Q0.shape[0], dtype=np.intp)
        for start, stop, counts, indptr, idx, keys in self._search(Q0, k, self._n_threads()):
            pred[start:stop] = self._decide(self._votes(counts, idx, keys, stop - start))
        return self.classes_[pred]

    def predict_proba(self, X):
        """(Weighted) fraction of the taken points in each class, columns as ``classes_``."""
        Q0, k = self._fitted_queries(X)
        proba = np.empty((Q0.shape[0], self.classes_.size), dtype=np.float64)
        for start, stop, counts, indptr, idx, keys in self._search(Q0, k, self._n_threads()):
            votes = self._votes(counts, idx, keys, stop - start)
            total = votes.sum(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                p = votes / total
            p[total[:, 0] == 0] = 1.0 / self.classes_.size   # only with a callable giving all-zero weights
            proba[start:stop] = p
        return proba


class KNNRegressor(RegressorMixin, _KNNBase):
    __doc__ = """k-NN regressor (000, 'The Nearest Neighbour algorithm'; 002, 'Nearest neighbors').

    Predicts the average label of the k' nearest training points (k' >= k takes every
    point tied with the k-th), weighted by 1 / distance for weights="distance". The sum
    runs over the taken points in the order of (distance, label), so the prediction does
    not depend on the order of the training rows, not even in its last bit.
""" + _DOC_PARAMS + """
    Attributes
    ----------
    n_samples_fit_ : int
    VI_ : ndarray, the inverse covariance used (metric="mahalanobis" only)
    """

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", y_numeric=True)
        self._y = np.ascontiguousarray(y, dtype=np.float64)
        return self._fit(X, y)

    def predict(self, X):
        """The (weighted) mean label of the taken points, for each row of X."""
        Q0, k = self._fitted_queries(X)
        pred = np.empty(Q0.shape[0], dtype=np.float64)
        for start, stop, counts, indptr, idx, keys in self._search(Q0, k, self._n_threads()):
            nb = stop - start
            rows = np.repeat(np.arange(nb), counts)
            yv = self._y[idx]
            order = np.lexsort((yv, keys, rows))
            rows, yv, keys = rows[order], yv[order], keys[order]
            w = self._neighbour_weights(keys, rows, nb)
            if w is None:
                pred[start:stop] = np.bincount(rows, weights=yv, minlength=nb) / counts
            else:
                den = np.bincount(rows, weights=w, minlength=nb)
                if np.any(den == 0):
                    raise ValueError("the weights of all taken neighbours of a query are zero")
                pred[start:stop] = np.bincount(rows, weights=w * yv, minlength=nb) / den
        return pred
