"""Shared pieces of the kernel learners: the kernels' parameters, Gram matrices and
decision values through the compiled tiles, and the classifier base (binary or
one-vs-rest, sgn(0) = -1)."""
import numpy as np

from smml._core import _kernel_methods as _k
from smml._core._utils import row_norms_sq
from smml._threads import blas_single_thread, threads_for
from smml._validation import (Callable, Interval, Options, check_is_fitted, problem_labels,
                              validate_X, validate_X_y)
from smml.base import ClassifierMixin, SmmlEstimator

KERNEL_CODES = {"linear": 0, "polynomial": 1, "gaussian": 2}
MAX_DEGREE = 2 ** 31 - 1    # the compiled kernels hold the degree in a C int
CALLABLE = 3

#: the constraints every kernel estimator declares for its kernel parameters
KERNEL_SPEC = {"kernel": (Options("linear", "polynomial", "gaussian"), Callable()),
               "degree": Interval(int, 1, MAX_DEGREE),
               "gamma": (Options("scale"), Interval(float, 0, None, "neither"))}
CACHE_SIZE = Interval(float, 0, None, "neither")

_GRAM_GRAIN = 1 << 16       # kernel entries worth a thread of their own (Gram, decision values)
_CALLABLE_BLOCK = 1024      # query rows per call of a user kernel at predict time


class Kernel:
    """A resolved kernel: its compiled code and parameters, or a user callable.

    ``gamma`` is 003's Gaussian width: K(x, x') = exp(-||x - x'||^2 / (2 gamma));
    the tiles use ``scale`` = 1 / (2 gamma). For the Gaussian the data are
    centred on ``center`` (the training mean) before any product: the kernel
    depends on x - x' only, and centred rows keep ||x||^2 + ||x'||^2 - 2 x.x'
    accurate (no cancellation between large norms).
    """

    def __init__(self, kernel, degree=3, gamma=1.0, center=None):
        if callable(kernel):
            self.code, self.func = CALLABLE, kernel
        else:
            self.code, self.func = KERNEL_CODES[kernel], None
        self.degree = int(degree)
        self.gamma = float(gamma)
        self.scale = 0.5 / self.gamma if self.code == 2 else 0.0
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


def resolve_kernel(est, X):
    """The :class:`Kernel` of estimator ``est`` for training data X; sets ``gamma_``.

    ``gamma="scale"`` is the width equivalent to scikit-learn's default
    ``gamma="scale"`` (gamma_sk = 1 / (d Var(X))): 003's gamma = d Var(X) / 2
    (1/2 when Var(X) = 0, i.e. gamma_sk = 1, as scikit-learn).
    """
    if est.gamma == "scale":
        var = float(np.var(X, dtype=np.float64))
        gamma = X.shape[1] * var / 2.0 if var > 0 else 0.5
        if not np.isfinite(gamma) or gamma <= 0:
            raise ValueError(f"{type(est).__name__}: gamma='scale' gives an unusable width {gamma!r} "
                             "(the variance of X overflows or is 0); pass gamma explicitly")
    else:
        gamma = float(est.gamma)
    est.gamma_ = gamma
    center = X.mean(axis=0, dtype=np.float64) if est.kernel == "gaussian" else None
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

    def _fit_start(self, X, y):
        """The common start of a kernel classifier's fit: validated X, y, classes_ and the
        +-1 problems, the kernel (``gamma_``), the prepared rows and their squared norms."""
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        self.classes_, problems = problem_labels(self, y)     # rows: the +-1 label vectors
        kern = resolve_kernel(self, X)
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
        X = X.astype(self.support_vectors_.dtype, copy=False)
        Qp = self._kern.prepare(X)
        s = decision_values(self._kern, Qp, self._sv_prepared, self._sv_norms, self.dual_coef_.T,
                            self._n_threads(), type(self).__name__)
        return s + self.intercept_.astype(s.dtype)

    def decision_function(self, X):
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

    def predict(self, X):
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
