"""The hard-margin SVM (003 section 12): the maximum-margin separating hyperplane."""
from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning

from smml._core import _linear as _k
from smml._threads import blas_single_thread, threads_for
from smml._validation import N_JOBS, Interval, validate_X_y

from smml.exceptions import NotSeparableError
from smml.linear._base import _BOOL, _problem_labels, _raise_divergence, _LinearClassifier
from smml.linear._lp import _augment, _pow2_scale, _separating_lp
from smml.base import store_params


#: multiply-adds (rows x features) per thread worth starting for a pass over X
_PASS_GRAIN = 1 << 20
#: NNLS picks entering constraints among the rows of smallest margin at the last full pass (at
#: least this many, or this many per weight); a full pass over X confirms the end
_WORKING_SET_MIN = 1024
_WORKING_SET_PER_WEIGHT = 32


def _exact_w(X, y, alpha, fit_intercept):
    """w = sum_t alpha_t y_t x'_t, recomputed from alpha (no drift from the incremental updates)."""
    ay = alpha * y
    w = X.T @ ay
    return np.append(w, ay.sum()) if fit_intercept else w


def _margins(X, y, w, fit_intercept, n_threads=1):
    """y_t w.x'_t for every t (the compiled, thread-count independent decision_function)."""
    d = X.shape[1]
    out = np.empty((X.shape[0], 1))
    _k.decision_function(X, np.ascontiguousarray(w[:d]).reshape(1, d),
                         np.array([w[d] if fit_intercept else 0.0]), out, n_threads)
    return y * out[:, 0]


def _lstsq_small(E, f):
    """Least squares on the passive columns (at most d + 2 of them): LAPACK's QR driver."""
    return scipy.linalg.lstsq(E, f, lapack_driver="gelsy", check_finite=False)[0]


def _lawson_hanson(X, y, fi, n_threads):
    """The dual of the hard-margin SVM by Lawson and Hanson's NNLS, exactly (in exact arithmetic).

    min 1/2 ||w||^2 s.t. Z w >= 1 (rows of Z: y_t x'_t) is a least-distance program; Lawson &
    Hanson (Solving Least Squares Problems, 1974, ch. 23) reduce it to the non-negative least
    squares problem min_{a >= 0} ||E a - f|| with E = [Z^T; 1^T] and f = (0, ..., 0, 1): if
    r = E a - f, then w = -r[:p] / r[p] and the dual variables are alpha = a / (1 - sum a).
    NNLS is solved by their active-set algorithm (finite): the constraint that enters is the
    one with the largest g_t = s (1 - y_t w.x'_t) (s = 1 - sum a > 0), i.e. the most violated
    margin; each inner step solves the small least-squares problem on the passive set. Any
    constraint with a positive g may enter (the residual still decreases strictly), so the
    search runs on a working set, the rows of smallest margin at the last pass over all of X,
    and a pass over all of X ends the algorithm (no g > 0 left anywhere) or renews the set.
    Returns alpha (n,).
    """
    n, d = X.shape
    p = d + fi
    f = np.zeros(p + 1)
    f[p] = 1.0
    a = np.zeros(n)
    passive = []
    in_p = np.zeros(n, dtype=bool)
    v = np.zeros(p)
    s = 1.0

    def columns(P):
        Ep = np.empty((p + 1, len(P)))
        Ep[:d] = (X[P] * y[P, None]).T
        if fi:
            Ep[d] = y[P]
        Ep[p] = 1.0
        return Ep

    n_work = min(n, max(_WORKING_SET_MIN, _WORKING_SET_PER_WEIGHT * (p + 1)))
    cand = None                                    # None: the next pass is over all of X
    for _ in range(3 * (n + p) + 100):
        full = cand is None
        if full:
            g = s - _margins(X, y, v, fi, n_threads)        # = s (1 - margin of w = v / s)
            g[in_p] = -np.inf
            ids = None
            if n_work < n:                         # the working set: the n_work smallest margins
                cand = np.sort(np.argpartition(g, n - n_work)[n - n_work:])
                Xc, yc = np.ascontiguousarray(X[cand]), y[cand]
        else:
            g = s - _margins(Xc, yc, v, fi, 1)
            g[in_p[cand]] = -np.inf
            ids = cand
        while True:
            k = int(np.argmax(g))
            if not g[k] > 1e-13 * max(s, 1e-300):
                break
            j = k if ids is None else int(ids[k])
            passive.append(j)
            P = np.array(passive)
            z = _lstsq_small(columns(P), f)
            if z[-1] > 0:                          # L&H: the entering variable must be positive
                break
            passive.pop()                          # degenerate: try the next candidate
            g[k] = -np.inf
        if not g[k] > 1e-13 * max(s, 1e-300):
            if full:
                return a / s                       # no margin of all of X below 1: optimal
            cand = None                            # the working set is done: check all of X
            continue
        in_p[j] = True
        while True:
            if np.all(z > 0):
                a[P] = z
                break
            uP = a[P]
            neg = z <= 0
            step = float(np.min(uP[neg] / (uP[neg] - z[neg])))
            uP = uP + step * (z - uP)
            a[P] = uP
            keep = uP > 0
            keep[np.argmin(np.where(neg, uP, np.inf))] = False    # the one that hit 0 leaves
            for t in P[~keep]:
                a[t] = 0.0
                in_p[t] = False
            passive = [int(t) for t in P[keep]]
            P = np.array(passive, dtype=np.intp)
            if len(P) == 0:
                break
            z = _lstsq_small(columns(P), f)
        Ep = columns(P) if len(P) else np.zeros((p + 1, 0))
        r = Ep @ a[P] - f if len(P) else -f
        v = r[:p]
        s = -r[p]
        if not s > 0:
            break
    return a / s


def _certify(est, X, y, qdiag, alpha, best, n_threads):
    """Polish alpha by dual coordinate ascent until the duality gap certifies the best feasible point.

    For a dual point alpha >= 0, w = sum_t alpha_t y_t x'_t gives the lower bound
    D(alpha) = sum alpha - 1/2 ||w||^2 on the optimum (weak duality) and, if its smallest
    margin gamma is > 0, the feasible point u = w / gamma with the upper bound 1/2 ||u||^2.
    ``best``: a feasible point or None. Returns (u, alpha, relative gap, polish epochs, converged);
    u is None when no feasible point was found.
    """
    fi = bool(est.fit_intercept)
    P_best = np.inf if best is None else 0.5 * float(best @ best)
    order = np.arange(X.shape[0], dtype=np.intp)
    gap = np.inf
    for epoch in range(est.max_iter + 1):
        if epoch:
            _, status = _k.hard_margin_epoch(X, y, order, qdiag, alpha, _exact_w(X, y, alpha, fi), fi)
            if status:
                _raise_divergence(est, f"in dual epoch {epoch}", "rescale the features")
        w = _exact_w(X, y, alpha, fi)
        D = float(alpha.sum()) - 0.5 * float(w @ w)
        gamma = float(np.min(_margins(X, y, w, fi, n_threads)))
        if gamma > 0:
            u = w / gamma
            P = 0.5 * float(u @ u)
            if P < P_best:
                best, P_best = u, P
        if best is None:
            return None, alpha, np.inf, epoch, False
        gap = max(0.0, (P_best - D) / P_best)
        if gap <= est.tol:
            return best, alpha, gap, epoch, True
    return best, alpha, gap, est.max_iter, False


class HardMarginSVM(_LinearClassifier):
    """The hard-margin SVM: min_w 1/2 ||w||^2 subject to y_t w.x_t >= 1 (003, section 12).

    On a linearly separable training set the unique solution w* is the
    maximum-margin separating hyperplane; its margin is
    gamma* = max_{||u|| = 1} min_t y_t u.x_t = 1 / ||w*|| (003 section 12), stored
    as ``margin_``. ``fit_intercept`` adds the constant feature of 000
    "Hyperplanes" (x' = (x, 1)): the intercept is one more weight of w and is
    part of ||w|| (the notes' homogeneous problem on x'; this is the separator
    for which :func:`smml.bounds.perceptron_convergence_bound` gives the
    Perceptron's bound, 000 Theorem 3). A training set that is not linearly
    separable raises :class:`NotSeparableError`, as :class:`LinearProgramClassifier`.

    Solver (exact up to a certified tolerance). The problem is a
    least-distance program, which Lawson and Hanson (Solving Least Squares
    Problems, 1974, ch. 23) reduce exactly to a non-negative least-squares
    problem in the dual variables; their finite active-set NNLS algorithm
    solves it (the constraint that enters is the most violated margin; one
    pass over X per entering constraint, through the compiled
    ``decision_function`` kernel). The answer is then certified, not trusted:
    for the dual point alpha >= 0, w = sum_t alpha_t y_t x'_t is recomputed,
    D(alpha) = sum_t alpha_t - 1/2 ||w||^2 is a lower bound on the optimum
    (weak duality), and u = w / min_t y_t w.x'_t is feasible with
    1/2 ||u||^2 an upper bound. Accepted when the relative duality gap
    (1/2 ||u||^2 - D(alpha)) / (1/2 ||u||^2) <= ``tol``, which implies
    ||u||^2 <= ||w*||^2 / (1 - tol); otherwise alpha is polished by epochs of
    exact dual coordinate ascent (each step maximises the dual in one
    alpha_t; a compiled nogil loop) until it is, at most ``max_iter`` epochs.
    The returned u satisfies y_t u.x'_t >= 1 for every t (up to the rounding
    of one division). If the NNLS step yields no separator, 002's linear
    program (HiGHS) decides: no solution raises :class:`NotSeparableError`;
    a solution is the starting point of the polish. If ``max_iter`` epochs
    pass without certification, the best feasible point is returned with a
    ``ConvergenceWarning`` and ``duality_gap_`` says how far it may be.

    More than two classes (an extension): one-vs-rest, one max-margin problem
    per class (every class must be separable from the rest); predict is the
    class of the largest score (first class on ties).

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the constant feature 1 (its weight is part of ||w||).
    tol : float, default=1e-8
        The relative duality gap that certifies the solution, 0 < tol < 1.
    max_iter : int, default=1000
        The largest number of epochs of dual coordinate ascent.
    n_jobs : None or int, default=None
        Threads of the margin computations and of ``decision_function``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, d) or (n_classes, d)
        The separator u.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The weight of the constant feature of u.
    margin_ : float or ndarray of shape (n_classes,)
        1 / ||u|| (with the intercept weight): the margin of u, at most gamma* and at
        least gamma* sqrt(1 - tol) when converged. An array for one-vs-rest.
    duality_gap_ : float or ndarray of shape (n_classes,)
        The relative gap at the end (an array for one-vs-rest).
    alpha_ : ndarray of shape (n,) or (n_classes, n)
        The dual variables alpha_t >= 0 of every example (w = sum_t alpha_t y_t x'_t)
        (not scikit-learn's ``dual_coef_``, which holds y_t alpha_t of the support
        vectors only).
    support_ : ndarray
        Indices with alpha_t > 0 (two classes only).
    n_iter_ : int or ndarray of shape (n_classes,)
        Epochs of coordinate-ascent polish after the NNLS solve (0 when the NNLS dual
        point is certified at once; an array for one-vs-rest).

    See Also
    --------
    sklearn.svm.LinearSVC : scikit-learn's linear (soft-margin) SVM.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import HardMarginSVM
    >>> X = np.array([[-2., -1.], [-1., -2.], [1., 2.], [2., 1.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> svm = HardMarginSVM().fit(X, y)
    >>> svm.predict([[3., 3.], [-3., -3.]]).tolist()
    [1, 0]
    >>> print(f"{svm.margin_:.3f}")
    2.121
    """

    _parameter_spec = {"fit_intercept": _BOOL, "tol": Interval(float, 0, 1, "neither"),
                       "max_iter": Interval(int, 1, None), "n_jobs": N_JOBS}

    def __init__(self, fit_intercept: bool = True, tol: float = 1e-8, max_iter: int = 1000,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> HardMarginSVM:
        """Solve the hard-margin SVM (one problem per class for one-vs-rest).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.

        Returns
        -------
        self : object
            The fitted HardMarginSVM.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, Y = _problem_labels(self, y)
        fi = bool(self.fit_intercept)
        with np.errstate(over="ignore", under="ignore"):
            qdiag = np.einsum("ij,ij->i", X, X) + float(fi)
        if not np.all(np.isfinite(qdiag)):
            raise ValueError("HardMarginSVM: ||x_t||^2 overflows float64; rescale the features")
        n_threads = threads_for(self._n_threads(), X.shape[0] * (X.shape[1] + 1), _PASS_GRAIN)
        out = []
        for c, y_pm in enumerate(Y):
            with np.errstate(all="ignore"), blas_single_thread():   # tiny least-squares problems
                alpha = _lawson_hanson(X, y_pm, fi, n_threads)
            if not np.all(np.isfinite(alpha)) or np.any(qdiag == 0):
                alpha = np.zeros(X.shape[0])
            sol = _certify(self, X, y_pm, qdiag, alpha, None, n_threads) if np.any(alpha) else None
            if sol is None or sol[0] is None:
                # no separator found: 002's LP (HiGHS) decides separability
                sol = self._lp_fallback(X, y_pm, qdiag, c, alpha, n_threads)
            out.append(sol)
        U = np.array([o[0] for o in out])
        self._set_problems(U, X.shape[1])
        margins = 1.0 / np.sqrt(np.einsum("ij,ij->i", U, U))
        gaps = np.array([o[2] for o in out])
        epochs = np.array([o[3] for o in out])
        alphas = np.array([o[1] for o in out])
        one = len(Y) == 1
        self.margin_ = float(margins[0]) if one else margins
        self.duality_gap_ = float(gaps[0]) if one else gaps
        self.n_iter_ = int(epochs[0]) if one else epochs
        self.alpha_ = alphas[0] if one else alphas
        if one:
            self.support_ = np.flatnonzero(alphas[0] > 0)
        if not all(o[4] for o in out):
            warnings.warn(f"HardMarginSVM: max_iter={self.max_iter} dual epochs did not reach the relative "
                          f"duality gap tol={self.tol:g} (reached {float(np.max(gaps)):.3g}); the separator "
                          "returned is feasible but its margin may be below the maximum by that relative "
                          "amount. Increase max_iter or tol.", ConvergenceWarning, stacklevel=2)
        return self

    def _lp_fallback(self, X, y_pm, qdiag, c, alpha, n_threads):
        fi = bool(self.fit_intercept)
        A = _augment(X, fi)
        scale = _pow2_scale(A)
        res = _separating_lp(A / scale, y_pm)   # feasibility does not change under column scaling
        if res.status == 2:
            which = "" if len(self.classes_) == 2 else f" (class {getattr(self.classes_[c], 'tolist', lambda: self.classes_[c])()!r} against the rest)"
            raise NotSeparableError(
                f"HardMarginSVM: the training set is not linearly separable{which}: the constraints "
                "y_t w.x_t >= 1 have no solution; use Pegasos (the soft-margin SVM), "
                "LinearProgramClassifier(soft_margin=True) or LogisticRegression instead")
        if res.status != 0:
            raise ValueError(f"HardMarginSVM: linprog failed: {res.message}")
        with np.errstate(over="ignore"):
            u0 = res.x / scale
        if not np.all(np.isfinite(u0)) or np.any(qdiag == 0):
            raise ValueError("HardMarginSVM: the separator overflows float64 (or ||x_t||^2 underflows); "
                             "rescale the features")
        u0 = u0 / float(np.min(_margins(X, y_pm, u0, fi, n_threads)))
        return _certify(self, X, y_pm, qdiag, alpha, u0, n_threads)
