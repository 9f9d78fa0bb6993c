"""The linear programs of 002: linear classification and absolute-loss regression."""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
import scipy.linalg
import scipy.optimize
import scipy.sparse

from smml._validation import (N_JOBS, validate_X_y)

from smml.exceptions import NotSeparableError
from smml.linear._base import (_BOOL, _problem_labels, _LinearClassifier,
                               _LinearRegressorBase)

def _augment(X, fit_intercept):
    return np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X


def _pow2_scale(A, axis=0):
    """Powers of two near max |A| (per column by default; 1 where all zero).

    HiGHS treats coefficients beyond ~1e15 as infinite and drops those below ~1e-9,
    so both linear programs are solved on exactly rescaled data (a power of two
    rescales without rounding) and the weights are scaled back.
    """
    amax = np.max(np.abs(A), axis=axis)
    with np.errstate(divide="ignore"):
        e = np.where(amax > 0, np.ceil(np.log2(np.where(amax > 0, amax, 1.0))), 0.0)
    return np.ldexp(1.0, e.astype(int))


def _check_lp_weights(est, w):
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{type(est).__name__}: the solution overflows float64 (the weights are too "
                         "large to represent); rescale the features")


def _separating_lp(A, y_pm):
    """HiGHS on 002's LP: find w with y_t w.a_t >= 1 (A already rescaled). The result of linprog."""
    p = A.shape[1]
    return scipy.optimize.linprog(np.zeros(p), A_ub=-(y_pm[:, None] * A), b_ub=-np.ones(len(y_pm)),
                                  bounds=[(None, None)] * p, method="highs")


#: the hinge LP's weights read from its dual are accepted when their hinge sum is within this
#: relative distance of the dual optimum (strong duality), else the primal LP is solved
_DUAL_RTOL = 1e-9


def _hinge_lp_primal(A, y_pm):
    """HiGHS on min sum_t xi_t s.t. y_t w.a_t >= 1 - xi_t, xi_t >= 0: (w, optimum) or None.

    Variables (w, xi) in R^{p+m}; the constraint matrix [-diag(y) A, -I] is sparse in its
    identity part.
    """
    m, p = A.shape
    A_ub = scipy.sparse.hstack([scipy.sparse.csr_matrix(-(y_pm[:, None] * A)),
                                -scipy.sparse.identity(m, format="csr")], format="csr")
    c = np.concatenate([np.zeros(p), np.ones(m)])
    res = scipy.optimize.linprog(c, A_ub=A_ub, b_ub=-np.ones(m), bounds=[(None, None)] * p + [(0, None)] * m,
                                 method="highs")
    if res.status != 0:
        raise ValueError(f"LinearProgramClassifier: linprog failed: {res.message}")
    return res.x[:p], float(res.fun)


def _hinge_lp(A, y_pm):
    """min_w sum_t [1 - y_t w.a_t]_+ as an LP (A already rescaled): (w, the optimal hinge sum).

    Solved through its LP dual, max sum_t a_t s.t. sum_t a_t y_t a_t = 0 and 0 <= a_t <= 1
    (p equality rows instead of the primal's m inequality rows and m slack columns: a far
    smaller LP; timings in bench/linear.md). The primal weights are the dual's equality multipliers
    (HiGHS's marginals, w = -marginals for this sign convention). They are accepted only if
    their hinge sum equals the dual optimum (strong duality, relative ``_DUAL_RTOL``), which
    proves them optimal; otherwise the primal LP with slack variables is solved.
    """
    m, p = A.shape
    Z = y_pm[:, None] * A
    res = scipy.optimize.linprog(-np.ones(m), A_eq=Z.T, b_eq=np.zeros(p), bounds=(0, 1), method="highs")
    if res.status == 0 and getattr(res, "eqlin", None) is not None:
        w = -np.asarray(res.eqlin.marginals, dtype=float)
        dual_opt = -float(res.fun)
        primal = float(np.maximum(0.0, 1.0 - Z @ w).sum()) if np.all(np.isfinite(w)) else np.inf
        if abs(primal - dual_opt) <= _DUAL_RTOL * max(1.0, dual_opt):
            return w, primal
    return _hinge_lp_primal(A, y_pm)


class LinearProgramClassifier(_LinearClassifier):
    """ERM of linear classifiers as a linear program (000 "Training linear classifiers"; 002).

    ``soft_margin=False`` (default): finds w with y_t w.x_t >= 1 for every t
    (002: maximise <u, w> subject to A w <= v with A_{t,j} = -y_t x_{t,j},
    v = -1 and u = 0), solved by ``scipy.optimize.linprog`` (HiGHS). Raises
    :class:`NotSeparableError` (a ``ValueError``) when the system has no
    solution, i.e. the training set is not linearly separable (with the
    constant feature if ``fit_intercept``).

    ``soft_margin=True``: the same constraints with slack variables,
    minimise sum_t xi_t subject to y_t w.x_t >= 1 - xi_t and xi_t >= 0 (the
    slack variables of 003 section 12, in 002's LP form), i.e. ERM of the hinge
    loss [1 - y_t w.x_t]_+ (at the optimum xi_t is the hinge loss of example
    t). Always feasible, so it works on any training set; on a separable one
    its optimum is 0 and the solution satisfies the hard constraints. No
    regulariser is added: the LP is the notes' ERM (an L2 term would make it
    003's SVM quadratic program, which :class:`Pegasos` and
    :class:`HardMarginSVM` solve; an L1 term would add a hyper-parameter the
    notes do not have). Solved through its LP dual (max sum_t a_t subject to
    sum_t a_t y_t x'_t = 0, 0 <= a_t <= 1, far fewer rows), the weights being
    the dual's multipliers, accepted when their hinge sum equals the dual
    optimum (which proves them optimal), else the primal LP is solved. The
    minimiser need not be unique (e.g. every w with margin >= 1 on separable
    data); the one returned is deterministic.

    More than two classes (an extension): one-vs-rest, one linear program per
    class (classes_[c] +1, the rest -1); ``predict`` is the class of the
    largest score (first class on ties). In hard mode every class must be
    separable from the rest.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the constant feature 1.
    soft_margin : bool, default=False
        Solve the hinge-loss LP with slack variables instead of the separating one.
    n_jobs : None or int, default=None
        Threads of ``decision_function``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, d) or (n_classes, d)
        The weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The weight of the constant feature.
    training_hinge_loss_ : float or ndarray of shape (n_classes,)
        With ``soft_margin``: (1/m) sum_t xi_t at the optimum (one per class for one-vs-rest).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import LinearProgramClassifier
    >>> X = np.array([[-2., -1.], [-1., -2.], [1., 2.], [2., 1.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = LinearProgramClassifier().fit(X, y)
    >>> clf.predict([[3., 3.], [-3., -3.]]).tolist()
    [1, 0]
    >>> print(f"{clf.score(X, y):.3f}")
    1.000
    """

    _parameter_spec = {"fit_intercept": _BOOL, "soft_margin": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept: bool = True, soft_margin: bool = False, n_jobs: int | None = None) -> None:
        self.fit_intercept = fit_intercept
        self.soft_margin = soft_margin
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike, y: ArrayLike) -> LinearProgramClassifier:
        """Solve the linear program (one per class for one-vs-rest).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.

        Returns
        -------
        self : object
            The fitted LinearProgramClassifier.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, Y = _problem_labels(self, y)
        A = _augment(X, self.fit_intercept)
        scale = _pow2_scale(A)
        A = A / scale               # y_t w.x_t >= 1 <=> y_t (w * scale).(x_t / scale) >= 1
        W, hinge = [], []
        for c, y_pm in enumerate(Y):
            if self.soft_margin:
                w, h = _hinge_lp(A, y_pm)
                with np.errstate(over="ignore"):
                    w = w / scale
                _check_lp_weights(self, w)
                W.append(w)
                hinge.append(h / A.shape[0])
                continue
            res = _separating_lp(A, y_pm)
            if res.status == 2:
                which = "" if len(Y) == 1 else f" (class {getattr(self.classes_[c], 'tolist', lambda: self.classes_[c])()!r} against the rest)"
                raise NotSeparableError(
                    f"LinearProgramClassifier: the training set is not linearly separable{which} (the "
                    "linear program y_t w.x_t >= 1 for all t has no solution); use soft_margin=True, "
                    "Pegasos, LogisticRegression or the Perceptron with max_iter instead")
            if res.status != 0:
                raise ValueError(f"LinearProgramClassifier: linprog failed: {res.message}")
            with np.errstate(over="ignore"):
                w = res.x[:A.shape[1]] / scale
            _check_lp_weights(self, w)
            W.append(w)
        self._set_problems(np.array(W), X.shape[1])
        if self.soft_margin:
            self.training_hinge_loss_ = hinge[0] if len(Y) == 1 else np.array(hinge)
        elif hasattr(self, "training_hinge_loss_"):
            del self.training_hinge_loss_
        return self


class LADRegressor(_LinearRegressorBase):
    """Least absolute deviations: ERM of the absolute loss as the linear program of 002's exercise.

    Variables v = (w, s) in R^{d+n}; minimise sum_i s_i subject to
    [-X -I; X -I] v <= (-y, y) (so s_i >= |y_i - w.x_i|), solved by
    ``scipy.optimize.linprog`` (HiGHS) with a sparse constraint matrix.
    The intercept is the weight of the constant feature.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the constant feature 1.
    n_jobs : None or int, default=None
        Threads of ``predict``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    training_absolute_loss_ : float
        The mean absolute loss (1/n) sum_i |y_i - w.x_i - b| at the optimum.

    See Also
    --------
    sklearn.linear_model.QuantileRegressor : scikit-learn's quantile regression (``quantile=0.5, alpha=0``: least absolute deviations).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import LADRegressor
    >>> X = np.array([[0.], [1.], [2.], [3.], [4.]])
    >>> y = np.array([1., 3., 5., 7., 30.])
    >>> reg = LADRegressor().fit(X, y)
    >>> print(f"{reg.coef_[0]:.3f} {reg.intercept_:.3f}")
    2.000 1.000
    """

    _parameter_spec = {"fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept: bool = True, n_jobs: int | None = None) -> None:
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike, y: ArrayLike) -> LADRegressor:
        """Solve the least-absolute-deviations linear program.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The targets.

        Returns
        -------
        self : object
            The fitted LADRegressor.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        A = _augment(X, self.fit_intercept)
        n, p = A.shape
        scale, y_scale = _pow2_scale(A), float(_pow2_scale(y, axis=None))
        A, y = A / scale, y / y_scale       # exact rescaling; the weights are scaled back below
        eye = scipy.sparse.identity(n, format="csr")
        As = scipy.sparse.csr_matrix(A)
        A_ub = scipy.sparse.vstack([scipy.sparse.hstack([-As, -eye]), scipy.sparse.hstack([As, -eye])],
                                   format="csr")
        b_ub = np.concatenate([-y, y])
        c = np.concatenate([np.zeros(p), np.ones(n)])
        res = scipy.optimize.linprog(c, A_ub=A_ub, b_ub=b_ub,
                                     bounds=[(None, None)] * p + [(0, None)] * n, method="highs")
        if res.status != 0:
            raise ValueError(f"LADRegressor: linprog failed: {res.message}")
        with np.errstate(over="ignore"):
            w = res.x[:p] * y_scale / scale
        _check_lp_weights(self, w)
        self._set_augmented(w, X.shape[1])
        self.training_absolute_loss_ = float(res.fun) * y_scale / n
        return self
