"""The exact kernel SVM (003 section 12), solved in the dual by SMO."""
import sys
import warnings
from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_class_weight

from smml._core import _svm
from smml._progress import VERBOSE, check_verbose, progress
from smml._threads import blas_single_thread
from smml._validation import BOOL, N_JOBS, InstanceOf, Interval, Options

from smml.kernels._base import (CACHE_SIZE, KERNEL_SPEC, KernelClassifierBase, RowCacheArrays,
                                cache_rows, gram, user_kernel)
from smml.base import store_params


#: SMO steps between two calls of the verbose bar (the solver takes the GIL for each)
_REPORT_EVERY = 1000


def kkt_gap(alpha, F, y, Cv, bias):
    """The violation of the optimality conditions at the solver's end (what it stops on).

    With the bias: libsvm's max_{I_up} -y_t G_t - min_{I_low} -y_t G_t, G = Q a - 1 the dual
    gradient (here -y_t G_t = -F_t); without: the largest projected-gradient violation."""
    G = y * F
    lower, upper = alpha <= 0.0, alpha >= Cv
    if bias:
        up = ((y > 0) & ~upper) | ((y < 0) & ~lower)
        low = ((y > 0) & ~lower) | ((y < 0) & ~upper)
        if not up.any() or not low.any():
            return 0.0
        return float(max(0.0, np.max(-F[up]) - np.min(-F[low])))
    viol = np.where(lower, np.minimum(G, 0.0), np.where(upper, np.maximum(G, 0.0), G))
    return float(np.max(np.abs(viol))) if viol.size else 0.0


_Self = TypeVar("_Self")

class KernelSVC(KernelClassifierBase):
    """The SVM of 003 section 12 with a kernel, solved exactly (to ``tol``) in the dual.

    003's objective, in the space H_K of the kernel::

        F(g) = lam/2 ||g||_K^2 + (1/m) sum_t [1 - y_t g(x_t)]_+ .

    Dividing by lam gives libsvm's form 1/2 ||g||_K^2 + C sum_t [1 - y_t g(x_t)]_+
    with **C = 1 / (lam m)** (003's lambda is 1 / (C m)); the parameter is ``C``, as
    scikit-learn's ``SVC(C=C)``, which solves the same problem.

    Weights (as libsvm / scikit-learn's ``SVC``): row t's hinge term is multiplied by
    C_t = C * class_weight[y_t] * sample_weight[t], i.e. the dual's box is
    0 <= a_t <= C_t (the compiled solver takes one bound per row). An integer
    weight is that many copies of the row (the copies' dual variables add up to
    one of box k C) and a zero weight drops the row before the solve; ``"balanced"``
    class weights are m / (n_classes * count of the class), counted without the
    sample weights, as ``SVC``.

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

    ``verbose``: with ``verbose > 0`` a progress bar (``smml._progress``, tqdm on
    stderr) runs over the one-vs-rest problems and, during each solve, a bar counts its
    SMO steps and shows the size of the active set (shrinking); the compiled solver takes
    the GIL for it once every 1,000 steps, and never when ``verbose=0``. Each problem then
    reports once at its end, on stderr: its SMO steps, its final KKT gap (the quantity the
    stopping rule compares with ``tol``) and its number of support vectors.

    Parameters
    ----------
    C : float > 0, default=1.0
        The weight C of the hinge sum (libsvm's C; 003's lambda = 1 / (C m)).
    kernel : "rbf", "poly", "linear", "gaussian", "polynomial" or callable, default="rbf"
        The kernel (see :class:`KernelPerceptron`).
    degree : int >= 1, default=3
        The degree of the polynomial kernel.
    gamma : float > 0, "scale" or "auto", default="scale"
        scikit-learn's ``gamma`` of the Gaussian kernel exp(-gamma ||x - x'||^2) (003's width
        is 1 / (2 gamma)); ``SVC(gamma=g)`` is ``KernelSVC(gamma=g)``.
    class_weight : None, "balanced" or dict, default=None
        Multiplies C on the rows of each class (scikit-learn's ``SVC(class_weight=...)``).
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
    verbose : bool, int >= 0 or "auto", default=0
        With verbose > 0, a bar over the problems and, per problem, one report at the
        end of its solve (steps, KKT gap, support vectors) on stderr.

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
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class (ones without ``class_weight``).
    gamma_ : float
        The gamma used (``gamma`` resolved).
    objective_ : float or ndarray of shape (n_classes,)
        003's F(g) (with g + b when fit_intercept) per problem, lam = 1 / (C m), each
        hinge term weighted by C_t / C (m: the rows of positive weight); libsvm's
        primal value 1/2 ||g||^2 + sum_t C_t hinge_t is C m F.
    kkt_gap_ : float or ndarray of shape (n_classes,)
        The KKT gap at the end of each solve (< ``tol`` unless ``max_iter`` stopped it).
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
    >>> clf = KernelSVC(gamma=5.0).fit(X, y)
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _parameter_spec = {"C": Interval(float, 0, None, "neither"),
                       **KERNEL_SPEC, "class_weight": (Options(None, "balanced"), InstanceOf(dict)),
                       "fit_intercept": BOOL, "tol": Interval(float, 0, None, "neither"),
                       "shrinking": BOOL, "cache_size": CACHE_SIZE,
                       "max_iter": (Options(None), Interval(int, 1, None)), "n_jobs": N_JOBS,
                       "verbose": VERBOSE}

    def __init__(self, C: float = 1.0, kernel: str = "rbf", degree: int = 3, gamma: float | str = "scale",
                 class_weight: dict | str | None = None, fit_intercept: bool = True, tol: float = 1e-3,
                 shrinking: bool = True, cache_size: float = 1024.0, max_iter: int | None = None,
                 n_jobs: int | None = None, verbose: bool | int | str = 0) -> None:
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

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Solve the SVM dual (one per class for more than two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.
        sample_weight : None or array-like of shape (n_samples,), default=None
            Non-negative row weights: row t's bound is C_t = C * class_weight[y_t] * w_t
            (libsvm's per-row C); a zero weight drops the row.

        Returns
        -------
        self : object
            The fitted KernelSVC.
        """
        X, problems, kern, Xp, norms, sw = self._fit_start(X, y, sample_weight, weighted=True)
        # each row's class index, from the +-1 problems (binary: +1 is classes_[1])
        y_idx = (problems[0] > 0).astype(np.intp) if len(problems) == 1 else np.argmax(problems, axis=0)
        self.class_weight_ = self._class_weights(y_idx)
        C = float(self.C)
        self.C_ = C
        Cv_all = C * self.class_weight_[y_idx] * sw
        keep = np.flatnonzero(Cv_all > 0)
        if keep.size == 0:
            raise ValueError(f"{type(self).__name__}: every row has weight 0 (sample_weight times "
                             "class_weight)")
        if keep.size < X.shape[0]:                     # a zero weight drops the row (as libsvm)
            Xp, norms = np.ascontiguousarray(Xp[keep]), norms[keep].copy()
            problems = problems[:, keep]
        Cv = np.ascontiguousarray(Cv_all[keep])
        m = Xp.shape[0]
        nt = self._n_threads()
        max_iter = self.max_iter if self.max_iter is not None else max(10_000_000, 100 * m)
        verbose = check_verbose(self.verbose)
        duals, bs, objs, iters, gaps, solver_stats = [], [], [], [], [], []
        with blas_single_thread():
            cache, QD = self._kernel_cache(kern, Xp, norms, nt)
            for c, y_pm in enumerate(progress(problems, total=len(problems), desc="KernelSVC problems",
                                              verbose=self.verbose if len(problems) > 1 else 0)):
                y_pm = np.ascontiguousarray(y_pm)
                alpha = np.empty(m)
                F = np.empty(m)
                stats = np.zeros(_svm.SOLVER_STATS, dtype=np.int64)
                bar = progress(None, desc=f"{type(self).__name__} SMO {c + 1}/{len(problems)}",
                               verbose=self.verbose, unit="step", leave=False)
                report = None
                if bar is not None:
                    def report(steps, n_active, bar=bar):
                        bar.update(steps - bar.n)
                        bar.set_postfix(active=n_active, refresh=False)
                try:
                    n_it, rho, hit = _svm.smo(Xp, norms, kern.code, kern.degree, kern.scale, y_pm, Cv,
                                              QD, *cache.args(), alpha, F, stats, bool(self.fit_intercept),
                                              float(self.tol), bool(self.shrinking), int(max_iter), nt,
                                              report=report, report_every=_REPORT_EVERY)
                finally:
                    if bar is not None:
                        bar.close()
                solver_stats.append(stats)
                if hit:
                    warnings.warn(f"{type(self).__name__}: the solver stopped after max_iter={max_iter} "
                                  "steps before reaching tol; the solution is not optimal",
                                  ConvergenceWarning, stacklevel=2)
                gap = kkt_gap(alpha, F, y_pm, Cv, bool(self.fit_intercept))
                if verbose:
                    print(f"{type(self).__name__}: problem {c + 1}/{len(problems)}: {n_it} SMO steps, "
                          f"KKT gap {gap:.3g} (tol {self.tol:g}), {int(np.count_nonzero(alpha))} support "
                          "vectors", file=sys.stderr)
                b = -rho if self.fit_intercept else 0.0
                f = F + y_pm                                  # sum_s a_s y_s K(x_s, x_t)
                norm2 = float(np.dot(alpha * y_pm, f))         # ||g||_K^2
                hinge = np.maximum(0.0, 1.0 - y_pm * (f + b))
                objs.append(0.5 * norm2 / (C * m) + float(np.dot(Cv / C, hinge)) / m)
                duals.append(alpha * y_pm)
                bs.append(b)
                iters.append(n_it)
                gaps.append(gap)
        self._set_model(kern, X[keep] if keep.size < X.shape[0] else X, duals, bs)
        self.support_ = keep[self.support_].astype(np.intp)
        one = len(problems) == 1
        self.objective_ = objs[0] if one else np.array(objs)
        self.n_iter_ = iters[0] if one else np.array(iters)
        self.kkt_gap_ = gaps[0] if one else np.array(gaps)
        # rows computed, block fills, shrinking passes, gradient reconstructions, rows re-laid
        self.solver_stats_ = np.array(solver_stats)
        return self

    def _class_weights(self, y_idx):
        """class_weight_ as scikit-learn's SVC: compute_class_weight on the (unweighted) labels."""
        if self.class_weight is None:
            return np.ones(len(self.classes_))
        y = self.classes_[y_idx]
        if isinstance(self.class_weight, dict):
            unknown = [k for k in self.class_weight if k not in set(self.classes_.tolist())]
            if unknown:
                raise ValueError(f"{type(self).__name__}: class_weight names classes not in y: {unknown!r}")
            for k, v in self.class_weight.items():
                if isinstance(v, bool) or not np.isfinite(float(v)) or float(v) < 0:
                    raise ValueError(f"{type(self).__name__}: class_weight[{k!r}] must be a finite "
                                     f"number >= 0, got {v!r}")
        return np.asarray(compute_class_weight(self.class_weight, classes=self.classes_, y=y),
                          dtype=np.float64)
