"""The exact kernel SVM (003 section 12), solved in the dual by SMO."""
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from smml._core import _svm
from smml._threads import blas_single_thread
from smml._validation import BOOL, N_JOBS, Interval, Options

from smml.kernels._base import (CACHE_SIZE, KERNEL_SPEC, KernelClassifierBase, RowCacheArrays,
                                cache_rows, gram, user_kernel)
from smml.base import store_params


class KernelSVC(KernelClassifierBase):
    """The SVM of 003 section 12 with a kernel, solved exactly (to ``tol``) in the dual.

    003's objective, in the space H_K of the kernel::

        F(g) = lam/2 ||g||_K^2 + (1/m) sum_t [1 - y_t g(x_t)]_+ .

    Dividing by lam gives libsvm's form 1/2 ||g||_K^2 + C sum_t [1 - y_t g(x_t)]_+
    with **C = 1 / (lam m)**: pass ``C`` (as scikit-learn's ``SVC``) or 003's
    ``lam`` (which then overrides ``C``); ``C_`` is the value used.

    Intercept: ``fit_intercept=True`` (default) adds an *unpenalised* bias b,
    g(x) + b, exactly as libsvm / scikit-learn's ``SVC`` (so the two solve the
    same problem and reach the same objective); ``fit_intercept=False`` is 003's
    SVM as written, without b.

    Solver: the dual min 1/2 a^T Q a - sum a, 0 <= a_t <= C (Q_st = y_s y_t
    K(x_s, x_t)), plus y^T a = 0 with the bias. With the bias, SMO with libsvm's
    second-order working-set selection (Fan, Chen & Lin 2005), its analytic
    two-variable step, shrinking and its stopping rule (max_{I_up} -y G -
    min_{I_low} -y G < ``tol``); b as libsvm's rho. Without the bias, the same
    machinery on one variable at a time (the exact coordinate step; the
    variable that decreases the objective most), stopping when the projected
    gradient violations are below ``tol``. The solver is compiled and runs
    without the GIL (``smml._core._svm``).

    Kernel values: float32, as libsvm's cache (the optimisation's state is
    float64). When the m x m matrix fits in ``cache_size`` megabytes it is
    computed once (blocked gemm, OpenMP, exactly symmetric); otherwise rows
    K(x_i, .) are computed on demand (on the active variables only once
    shrinking has started) into a least-recently-used cache of that size.
    A user callable kernel gets its whole Gram matrix computed (by the
    callable) and must be symmetric; an indefinite one is handled as libsvm
    does (a curvature K_ii + K_jj - 2 K_ij <= 0 is replaced by 1e-12, so every
    step decreases the objective and the solver ends at a stationary point),
    and ``max_iter`` bounds the steps in every case.

    More than two classes: one-vs-rest (one SVM per class, the largest score
    wins), sharing the kernel cache.

    Parameters
    ----------
    C : float > 0, default=1.0
        The weight C of the hinge sum (libsvm's C).
    lam : None or float > 0, default=None
        003's lam; when given, C = 1 / (lam m).
    kernel : "linear", "polynomial", "gaussian" or callable, default="gaussian"
        The kernel (see :class:`KernelPerceptron`).
    degree : int >= 1, default=3
        The degree of the polynomial kernel.
    gamma : float > 0 or "scale", default="scale"
        003's Gaussian width: scikit-learn's ``SVC(gamma=g_sk)`` is ``gamma = 1 / (2 g_sk)`` here.
    fit_intercept : bool, default=True
        True (the default, as scikit-learn's ``SVC``) adds the unpenalised bias b; 003's SVM
        has none: ``fit_intercept=False`` solves the notes' problem exactly as written.
    tol : float > 0, default=1e-3
        The stopping tolerance (libsvm's eps).
    shrinking : bool, default=True
        Use libsvm's shrinking heuristic.
    cache_size : float, default=1024
        Megabytes of cached kernel values.
    max_iter : None or int >= 1, default=None
        The largest number of solver steps (None: max(10^7, 100 m), libsvm's cap).
    n_jobs : None or int, default=None
        Threads of the kernel computations and of ``decision_function``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The support vectors.
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        y_t a_t of the support vectors.
    intercept_ : ndarray of shape (n_problems,)
        The bias b of each problem.
    C_ : float
        The C used.
    gamma_ : float
        The Gaussian width used (``gamma`` resolved).
    objective_ : float or ndarray of shape (n_classes,)
        003's F(g) (with g + b when fit_intercept) per problem, lam = 1 / (C m);
        libsvm's primal value 1/2 ||g||^2 + C sum hinge is C m F.
    n_iter_ : int or ndarray of shape (n_classes,)
        SMO steps (one per class for one-vs-rest).
    solver_stats_ : ndarray of shape (n_problems, 5)
        Kernel rows computed, block fills, shrinking passes, gradient
        reconstructions, cached rows re-laid over a smaller active set.

    See Also
    --------
    sklearn.svm.SVC : scikit-learn's kernel SVM (libsvm).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.kernels import KernelSVC
    >>> X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = KernelSVC(gamma=0.1).fit(X, y)
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _parameter_spec = {"C": Interval(float, 0, None, "neither"),
                       "lam": (Options(None), Interval(float, 0, None, "neither")),
                       **KERNEL_SPEC, "fit_intercept": BOOL, "tol": Interval(float, 0, None, "neither"),
                       "shrinking": BOOL, "cache_size": CACHE_SIZE,
                       "max_iter": (Options(None), Interval(int, 1, None)), "n_jobs": N_JOBS}

    def __init__(self, C=1.0, lam=None, kernel="gaussian", degree=3, gamma="scale", fit_intercept=True,
                 tol=1e-3, shrinking=True, cache_size=1024.0, max_iter=None, n_jobs=None):
        store_params(self, locals())

    def _kernel_cache(self, kern, Xp, norms, nt):
        """(cache arrays, K(x_t, x_t)): the whole Gram matrix when it fits, else an empty cache."""
        m = Xp.shape[0]
        name = type(self).__name__
        if kern.func is not None:
            K = user_kernel(kern, Xp, Xp, name)
            if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.max(np.abs(K))))):
                raise ValueError(f"{name}: the kernel callable must be symmetric (K(x, x') = K(x', x)); "
                                 "the Gram matrix it returned is not")
            QD = np.ascontiguousarray(np.diag(K))
            n_slots, full = m, K.astype(np.float32)
        else:
            QD = kern.diag(Xp, norms)
            n_slots = cache_rows(self.cache_size, m, 4)
            full = None
            if n_slots >= m:
                full = gram(kern, Xp, a_norms=norms, out_dtype=np.float32, fill=2, n_threads=nt,
                            name=name)
        cache = RowCacheArrays(0 if full is not None else n_slots, m, np.float32)
        if full is not None:
            cache.rows = full
            cache.slot_of[:] = np.arange(m)
            cache.owner = np.arange(m, dtype=np.intp)
            cache.stamp = np.zeros(m, dtype=np.int64)
            cache.tag = np.full(m, -1, dtype=np.int64)        # every row complete
            cache.state[1] = m
        return cache, QD

    def fit(self, X, y):
        """Solve the SVM dual (one per class for more than two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.

        Returns
        -------
        self : object
            The fitted KernelSVC.
        """
        X, problems, kern, Xp, norms = self._fit_start(X, y)
        m = Xp.shape[0]
        C = 1.0 / (float(self.lam) * m) if self.lam is not None else float(self.C)
        if not np.isfinite(C) or C <= 0:
            raise ValueError(f"{type(self).__name__}: C = 1 / (lam m) = {C!r} is not a positive number")
        self.C_ = C
        nt = self._n_threads()
        max_iter = self.max_iter if self.max_iter is not None else max(10_000_000, 100 * m)
        Cv = np.full(m, C)
        duals, bs, objs, iters, solver_stats = [], [], [], [], []
        with blas_single_thread():
            cache, QD = self._kernel_cache(kern, Xp, norms, nt)
            for y_pm in problems:
                alpha = np.empty(m)
                F = np.empty(m)
                stats = np.zeros(_svm.SOLVER_STATS, dtype=np.int64)
                n_it, rho, hit = _svm.smo(Xp, norms, kern.code, kern.degree, kern.scale, y_pm, Cv, QD,
                                          *cache.args(), alpha, F, stats, bool(self.fit_intercept),
                                          float(self.tol), bool(self.shrinking), int(max_iter), nt)
                solver_stats.append(stats)
                if hit:
                    warnings.warn(f"{type(self).__name__}: the solver stopped after max_iter={max_iter} "
                                  "steps before reaching tol; the solution is not optimal",
                                  ConvergenceWarning, stacklevel=2)
                b = -rho if self.fit_intercept else 0.0
                f = F + y_pm                                  # sum_s a_s y_s K(x_s, x_t)
                norm2 = float(np.dot(alpha * y_pm, f))         # ||g||_K^2
                hinge = np.maximum(0.0, 1.0 - y_pm * (f + b))
                objs.append(0.5 * norm2 / (C * m) + float(hinge.mean()))
                duals.append(alpha * y_pm)
                bs.append(b)
                iters.append(n_it)
        self._set_model(kern, X, duals, bs)
        self.objective_ = objs[0] if len(problems) == 1 else np.array(objs)
        self.n_iter_ = iters[0] if len(problems) == 1 else np.array(iters)
        # rows computed, block fills, shrinking passes, gradient reconstructions, rows re-laid
        self.solver_stats_ = np.array(solver_stats)
        return self
