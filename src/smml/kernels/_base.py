"""Shared pieces of the kernel learners: the kernels' parameters, Gram matrices and
decision values through the compiled tiles, and the classifier base (binary or
one-vs-rest, sgn(0) = -1)."""
import numpy as np
from numpy.typing import ArrayLike

from smml._core import _kernel_methods as _k
from smml._core._sums import row_norms_sq
from smml._threads import blas_single_thread, threads_for
from smml._validation import (Callable, Interval, Options, cast_to_model, check_is_fitted, problem_labels,
                              validate_sample_weight, validate_X, validate_X_y)
from smml.base import ClassifierMixin, SmmlEstimator

#: kernel names -> compiled codes; scikit-learn's "rbf" / "poly" and the notes' "gaussian" /
#: "polynomial" are synonyms
KERNEL_CODES = {"linear": 0, "polynomial": 1, "poly": 1, "gaussian": 2, "rbf": 2}
MAX_DEGREE = 2 ** 31 - 1    # the compiled kernels hold the degree in a C int
CALLABLE = 3

#: the constraints every kernel estimator declares for its kernel parameters
KERNEL_SPEC = {"kernel": (Options("linear", "rbf", "poly", "gaussian", "polynomial"), Callable()),
               "degree": Interval(int, 1, MAX_DEGREE),
               "gamma": (Options("scale", "auto"), Interval(float, 0, None, "neither"))}
CACHE_SIZE = Interval(float, 0, None, "neither")

_GRAM_GRAIN = 1 << 16       # kernel entries worth a thread of their own (Gram, decision values)
_CALLABLE_BLOCK = 1024      # query rows per call of a user kernel at predict time


class Kernel:
    """A resolved kernel: its compiled code and parameters, or a user callable.

    ``gamma`` is scikit-learn's: K(x, x') = exp(-gamma ||x - x'||^2) (003's
    Gaussian of width sigma, exp(-||x - x'||^2 / (2 sigma)), is gamma = 1 / (2 sigma));
    the tiles use ``scale`` = gamma. For the Gaussian the data are
    centred on ``center`` (the training mean) before any product: the kernel
    depends on x - x' only, and centred rows keep ||x||^2 + ||x'||^2 - 2 x.x'
    accurate (no cancellation between large norms).
    """

    def __init__(self, kernel, degree=3, gamma=0.5, center=None):
        if callable(kernel):
            self.code, self.func = CALLABLE, kernel
        else:
            self.code, self.func = KERNEL_CODES[kernel], None
        self.degree = int(degree)
        self.gamma = float(gamma)
        self.scale = self.gamma if self.code == 2 else 0.0
        self.center = center

    def prepare(self, X):
        """X as the tiles see it (centred for the Gaussian), C-contiguous."""
        if self.code == 2 and self.center is not None:
            X = X - self.center.astype(X.dtype, copy=False)
        return np.ascontiguousarray(X)

    def norms(self, Xp, n_threads=1):
        return row_norms_sq(Xp, n_threads)

    def diag(self, Xp, norms=None):
        """K(x_t, x_t) exactly (float64)."""
        if self.func is not None:
            return np.array([float(np.asarray(self.func(Xp[i:i + 1], Xp[i:i + 1])).reshape(-1)[0])
                             for i in range(Xp.shape[0])])
        norms = self.norms(Xp) if norms is None else norms
        out = np.empty(Xp.shape[0])
        _k.gram_diag(norms, self.code, self.degree, self.scale, out)
        return out


def weighted_var(X, sample_weight=None):
    """The variance of all entries of X, each row counted with its weight (None: unweighted)."""
    if sample_weight is None:
        return float(np.var(X, dtype=np.float64))
    w = np.asarray(sample_weight, dtype=np.float64)
    mean = float(w @ X.sum(axis=1, dtype=np.float64)) / (w.sum() * X.shape[1])
    return float(w @ ((X - mean) ** 2).sum(axis=1, dtype=np.float64)) / (w.sum() * X.shape[1])


def resolve_kernel(est, X, sample_weight=None):
    """The :class:`Kernel` of estimator ``est`` for training data X; sets ``gamma_``.

    ``gamma`` as scikit-learn's: ``"scale"`` is 1 / (d Var(X)) (1 when Var(X) = 0),
    ``"auto"`` is 1 / d, a number is used as it is (d = n_features). With sample
    weights, Var(X) counts each row with its weight (so an integer weight is that
    many copies and a zero weight drops the row, for gamma too; scikit-learn's
    SVC uses the unweighted variance).
    """
    if isinstance(est.gamma, str):
        d = X.shape[1]
        if est.gamma == "scale":
            var = weighted_var(X, sample_weight)
            gamma = 1.0 / (d * var) if var > 0 else 1.0
        else:
            gamma = 1.0 / d
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"{type(est).__name__}: gamma={est.gamma!r} gives an unusable value {gamma!r} "
                             "(the variance of X is too large or too small); rescale the features (a "
                             "StandardScaler in a Pipeline) or pass gamma explicitly")
    else:
        gamma = float(est.gamma)
    est.gamma_ = gamma
    gaussian = not callable(est.kernel) and KERNEL_CODES[est.kernel] == 2
    center = X.mean(axis=0, dtype=np.float64) if gaussian else None
    if center is not None and not np.all(np.isfinite(center)):
        center = None
    return Kernel(est.kernel, est.degree, gamma, center)


def user_kernel(kern, A, B, name):
    """A user kernel's block K(A, B) as a finite float64 (len(A), len(B)) array."""
    K = np.asarray(kern.func(A, B), dtype=np.float64)
    if K.shape != (A.shape[0], B.shape[0]):
        raise ValueError(f"{name}: the kernel callable returned shape {K.shape}; expected "
                         f"{(A.shape[0], B.shape[0])} (one value per pair of rows)")
    if not np.all(np.isfinite(K)):
        raise ValueError(f"{name}: the kernel callable returned NaN or infinite values")
    return K


def gram(kern, Ap, Bp=None, a_norms=None, b_norms=None, out_dtype=None, fill=0, n_threads=1,
         name="kernel"):
    """K(A, B) (or K(A, A) with ``Bp=None``) on prepared rows. ``fill`` as
    ``smml._core._kernel_methods.gram`` (1: lower triangle only, 2: mirrored)."""
    sym = Bp is None
    Bp = Ap if sym else Bp
    if kern.func is not None:
        K = user_kernel(kern, Ap, Bp, name)
        return K if out_dtype is None else K.astype(out_dtype, copy=False)
    out_dtype = Ap.dtype if out_dtype is None else out_dtype
    a_norms = kern.norms(Ap) if a_norms is None else a_norms
    b_norms = a_norms if sym else (kern.norms(Bp) if b_norms is None else b_norms)
    out = np.empty((Ap.shape[0], Bp.shape[0]), dtype=out_dtype)
    nt = threads_for(n_threads, Ap.shape[0] * Bp.shape[0], _GRAM_GRAIN)
    with blas_single_thread(None if nt > 1 else 0):      # pinned only under our OpenMP threads
        bad = _k.gram(Ap, Bp, kern.code, kern.degree, kern.scale, a_norms, b_norms, out,
                      fill if sym else 0, nt)
    if bad:
        raise ValueError(f"{name}: the kernel matrix overflows {np.dtype(out_dtype).name} ({bad} "
                         "entries are infinite: a polynomial or linear kernel of large features?); "
                         "rescale the features")
    return out


def decision_values(kern, Qp, Sp, s_norms, coef, n_threads=1, name="kernel"):
    """sum_s K(q, s) coef[s, :] for every query row, blocked (never len(Q) x len(S))."""
    coef = np.ascontiguousarray(coef, dtype=Qp.dtype)
    out = np.empty((Qp.shape[0], coef.shape[1]), dtype=Qp.dtype)
    if kern.func is not None:
        for q0 in range(0, Qp.shape[0], _CALLABLE_BLOCK):
            Kb = user_kernel(kern, Qp[q0:q0 + _CALLABLE_BLOCK], Sp, name)
            out[q0:q0 + _CALLABLE_BLOCK] = Kb @ coef
        return out
    q_norms = kern.norms(Qp)
    nt = threads_for(n_threads, Qp.shape[0] * max(1, Sp.shape[0]), _GRAM_GRAIN)
    with blas_single_thread(None if nt > 1 else 0):      # pinned only under our OpenMP threads
        _k.decision(Qp, Sp, kern.code, kern.degree, kern.scale, q_norms, s_norms, coef, out, nt)
    return out


def cache_rows(cache_size, m, itemsize):
    """How many kernel rows of length m fit in ``cache_size`` megabytes (at least 2, at most m)."""
    n = int(cache_size * (1 << 20)) // max(1, m * itemsize)
    return int(max(2, min(m, n)))


class RowCacheArrays:
    """The storage and bookkeeping arrays of a compiled kernel-row cache."""

    def __init__(self, n_slots, m, dtype):
        self.rows = np.empty((n_slots, m), dtype=dtype)
        # ordinary pages: the rows are first touched one at a time during the solve, where
        # the huge pages numpy asks for can stall every fault on memory compaction
        _k.no_hugepages(self.rows.reshape(-1).view(np.uint8))
        self.slot_of = np.full(m, -1, dtype=np.intp)
        self.owner = np.full(n_slots, -1, dtype=np.intp)
        self.stamp = np.zeros(n_slots, dtype=np.int64)
        self.tag = np.zeros(n_slots, dtype=np.int64)
        self.state = np.zeros(3, dtype=np.int64)

    def args(self):
        return self.rows, self.slot_of, self.owner, self.stamp, self.tag, self.state

    def put(self, i, row):
        """Store K(x_i, .) (user kernel) and return its slot."""
        s = _k.cache_put(i, self.slot_of, self.owner, self.stamp, self.tag, self.state)
        self.rows[s] = row
        return s


class KernelClassifierBase(ClassifierMixin, SmmlEstimator):
    """decision_function / predict of a kernel classifier.

    Fitted state: ``support_vectors_`` (the training rows the predictor uses),
    ``dual_coef_`` (n_problems, n_SV) and ``intercept_`` (n_problems,): the
    score of problem c is sum_s dual_coef_[c, s] K(x_s, x) + intercept_[c].
    Two classes: one problem, score > 0 means ``classes_[1]`` and a score of
    exactly 0 gives ``classes_[0]`` (sgn(0) = -1, 000 "Linear predictors").
    More classes: one-vs-rest, the class of largest score (the first on ties).
    """

    def _fit_start(self, X, y, sample_weight=None, weighted=False):
        """The common start of a kernel classifier's fit: validated X, y, classes_ and the
        +-1 problems, the kernel (``gamma_``), the prepared rows and their squared norms
        (and, with ``weighted``, the validated sample weights, ones for None)."""
        self._validate_params()
        self._stream = None                                   # a fit ends any partial_fit stream
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        self._n_fit_rows = X.shape[0]
        self.classes_, problems = problem_labels(self, y)     # rows: the +-1 label vectors
        sw = None if sample_weight is None else validate_sample_weight(sample_weight, X.shape[0])
        kern = resolve_kernel(self, X, sw)
        if weighted:
            sw = validate_sample_weight(None, X.shape[0]) if sw is None else sw
            Xp = kern.prepare(X)
            return X, problems, kern, Xp, kern.norms(Xp), sw
        Xp = kern.prepare(X)
        return X, problems, kern, Xp, kern.norms(Xp)

    def _row_cache(self, Xp):
        """An empty kernel-row cache of ``cache_size`` megabytes for the rows of Xp."""
        m = Xp.shape[0]
        return RowCacheArrays(cache_rows(self.cache_size, m, Xp.dtype.itemsize), m, Xp.dtype)

    def _set_model(self, kern, X, dual, intercept):
        """Keep the rows with a non-zero coefficient in some problem."""
        dual = np.atleast_2d(np.asarray(dual, dtype=np.float64))
        sv = np.flatnonzero(np.any(dual != 0, axis=0))
        self.support_ = sv.astype(np.intp)
        self.support_vectors_ = X[sv]
        self.dual_coef_ = dual[:, sv]
        self.intercept_ = np.asarray(intercept, dtype=np.float64).reshape(-1)
        self._kern = kern
        self._sv_prepared = kern.prepare(self.support_vectors_)
        self._sv_norms = kern.norms(self._sv_prepared)

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_X(self, X, reset=False, dtype="floating")
        X = cast_to_model(self, X, self.support_vectors_.dtype)
        Qp = self._kern.prepare(X)
        s = decision_values(self._kern, Qp, self._sv_prepared, self._sv_norms, self.dual_coef_.T,
                            self._n_threads(), type(self).__name__)
        return s + self.intercept_.astype(s.dtype)

    def decision_function(self, X: ArrayLike) -> np.ndarray:
        """Return the scores of the kernel predictor for each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The decision values; > 0 means ``classes_[1]`` for two classes.
        """
        s = self._scores(X)
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict classes_[1] where the score is > 0, else classes_[0]; one-vs-rest: the largest score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted class labels.
        """
        s = self._scores(X)
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]


def stream_labels(est, y):
    """The class index of every label of a ``partial_fit`` chunk (labels must be in ``classes_``)."""
    y = np.asarray(y).reshape(-1)
    idx = np.searchsorted(est.classes_, y)
    idx = np.clip(idx, 0, len(est.classes_) - 1)
    bad = est.classes_[idx] != y
    if np.any(bad):
        raise ValueError(f"{type(est).__name__}: partial_fit got labels not in classes_ "
                         f"{est.classes_.tolist()}: {np.unique(y[bad]).tolist()}")
    return idx.astype(np.intp)


def problem_signs(cls_idx, n_classes, c):
    """The +-1 labels of problem c (binary: classes_[1] is +1; else one-vs-rest)."""
    pos = 1 if n_classes == 2 else c
    return np.where(cls_idx == pos, 1.0, -1.0)


class KernelStream:
    """The state of a kernel learner's ``partial_fit`` (one pass over a stream of chunks).

    A learner whose scores are g(x) = sum_{s in S} y_s K(x_s, x), S growing in the
    order of the stream (the kernel Perceptron's mistakes, Pegasos' steps with a
    positive hinge loss), needs only the rows of S: ``rows`` keeps them (prepared,
    in the order they joined any problem), ``joins[c]`` the members of problem c in
    join order and ``coef[c]`` their coefficients (y_s in a pass; y_s times the
    multiplicity for the members a ``fit`` left, when ``partial_fit`` continues it).
    The scores of a new chunk are summed member by member in that order, exactly
    the order in which ``fit`` adds the members' kernel rows to its scores (y_s
    K(x_s, x) added to a float64 score, one member at a time), and the chunk itself
    is then run by the same compiled loop as ``fit``.
    """

    def __init__(self, kern, n_classes, n_problems, X0):
        self.kern = kern
        self.n_classes = n_classes
        self.dtype = X0.dtype
        d = X0.shape[1]
        self.X = np.empty((0, d), dtype=self.dtype)       # the members' rows as given
        self.rows = np.empty((0, d), dtype=self.dtype)    # ... prepared
        self.norms = np.empty(0)
        self.cls = np.empty(0, dtype=np.intp)             # class index of each member
        self.pos = np.empty(0, dtype=np.intp)             # position in the stream
        self.joins = [np.empty(0, dtype=np.intp) for _ in range(n_problems)]
        self.coef = [np.empty(0) for _ in range(n_problems)]
        self.n_seen = 0
        self.mistakes = np.zeros(n_problems, dtype=np.int64)

    def scores(self, c, Qp, q_norms, name, block=256):
        """g(x) = sum over problem c's members s, in join order, of y_s K(x_s, x), for Qp's rows."""
        g = np.zeros(Qp.shape[0])
        J = self.joins[c]
        signs = self.coef[c]
        for b0 in range(0, len(J), block):
            Jb = J[b0:b0 + block]
            A = self.rows[Jb]
            if self.kern.func is not None:
                K = user_kernel(self.kern, A, Qp, name).astype(self.dtype, copy=False)
            else:
                K = gram(self.kern, A, Qp, a_norms=self.norms[Jb], b_norms=q_norms, out_dtype=self.dtype,
                         name=name)
            for k in range(len(Jb)):
                g += signs[b0 + k] * K[k].astype(np.float64)
        return g

    def add(self, X, Xp, norms, cls_idx, joined):
        """Store the chunk's rows that joined some problem; ``joined[c]``: chunk indices in join
        order. Returns nothing; advances the stream position."""
        new = np.unique(np.concatenate(joined)) if joined else np.empty(0, dtype=np.intp)
        where = np.full(X.shape[0], -1, dtype=np.intp)
        where[new] = len(self.pos) + np.arange(len(new))
        self.X = np.concatenate([self.X, X[new]])
        self.rows = np.concatenate([self.rows, Xp[new]])
        self.norms = np.concatenate([self.norms, norms[new]])
        self.cls = np.concatenate([self.cls, cls_idx[new]])
        self.pos = np.concatenate([self.pos, self.n_seen + new.astype(np.intp)])
        for c, jc in enumerate(joined):
            self.joins[c] = np.concatenate([self.joins[c], where[jc]])
            self.coef[c] = np.concatenate([self.coef[c], problem_signs(cls_idx[jc], self.n_classes, c)])
        self.n_seen += X.shape[0]

    def seed(self, X, pos, n_seen, coef):
        """Continue a ``fit``: the training rows X (at positions ``pos``) become the members,
        problem c's with the coefficients ``coef[c]`` (zeros: not a member), in row order."""
        X = np.ascontiguousarray(X, dtype=self.dtype)
        Xp = self.kern.prepare(X)
        self.X, self.rows, self.norms = X, Xp, self.kern.norms(Xp)
        self.pos = np.asarray(pos, dtype=np.intp)
        self.cls = np.zeros(len(X), dtype=np.intp)        # unused: the coefficients carry the signs
        for c in range(len(self.joins)):
            J = np.flatnonzero(coef[c])
            self.joins[c], self.coef[c] = J.astype(np.intp), np.asarray(coef[c], dtype=np.float64)[J]
        self.n_seen = n_seen


def stream_chunk(est, X, y, classes):
    """Validate a ``partial_fit`` chunk; on the first call set up ``est._stream`` (the kernel
    and ``gamma_`` from this chunk, ``classes_`` from ``classes``; after a ``fit``, the
    fitted kernel and classes, the stream seeded by ``est._seed_stream``). Returns (X, Xp,
    norms, class indices)."""
    first = getattr(est, "_stream", None) is None
    if first and hasattr(est, "_kern") and hasattr(est, "classes_"):     # continue a fit
        check_is_fitted(est)
        n_problems = 1 if len(est.classes_) == 2 else len(est.classes_)
        est._stream = KernelStream(est._kern, len(est.classes_), n_problems, est.support_vectors_)
        est._seed_stream(est._stream)
        first = False
    if first:
        est._validate_params()
        if classes is None:
            raise ValueError(f"{type(est).__name__}: classes must be passed on the first call to "
                             "partial_fit")
        X, y = validate_X_y(est, X, y, dtype="floating", classifier=True)
        classes = np.unique(np.asarray(classes))
        if len(classes) < 2:
            raise ValueError(f"{type(est).__name__}: classes must hold at least 2 labels, got "
                             f"{classes.tolist()}")
        est.classes_ = classes
        kern = resolve_kernel(est, X)
        n_problems = 1 if len(classes) == 2 else len(classes)
        est._stream = KernelStream(kern, len(classes), n_problems, X)
    else:
        check_is_fitted(est)
        X = validate_X(est, X, reset=False, dtype="floating")
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != X.shape[0]:
            raise ValueError(f"{type(est).__name__}: y must be 1-d with {X.shape[0]} entries, got "
                             f"shape {np.shape(y)}")
    X = cast_to_model(est, X, est._stream.dtype, order="C")
    cls_idx = stream_labels(est, y)
    kern = est._stream.kern
    Xp = kern.prepare(X)
    return X, Xp, kern.norms(Xp), cls_idx
