"""The linear programs of 002: linear classification and absolute-loss regression."""

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse

from smml._validation import (N_JOBS, validate_X_y)

from smml.linear._base import (NotSeparableError, _BOOL, _binary_labels, _split_w, _BinaryLinearClassifier,
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


class LinearProgramClassifier(_BinaryLinearClassifier):
    """ERM on linearly separable data as a linear program (000 "Training linear classifiers"; 002).

    Finds w with y_t w.x_t >= 1 for every t (002: maximise <u, w> subject to
    A w <= v with A_{t,j} = -y_t x_{t,j}, v = -1 and u = 0), solved by
    ``scipy.optimize.linprog`` (HiGHS). Raises :class:`NotSeparableError` (a
    ``ValueError``) when the system has no solution, i.e. the training set is
    not linearly separable (with the constant feature if ``fit_intercept``).
    """

    _parameter_spec = {"fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept=True, n_jobs=None):
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, y_pm, _ = _binary_labels(self, y)
        A = _augment(X, self.fit_intercept)
        p = A.shape[1]
        scale = _pow2_scale(A)
        A = A / scale               # y_t w.x_t >= 1 <=> y_t (w * scale).(x_t / scale) >= 1
        res = scipy.optimize.linprog(np.zeros(p), A_ub=-(y_pm[:, None] * A), b_ub=-np.ones(len(y_pm)),
                                     bounds=[(None, None)] * p, method="highs")
        if res.status == 2:
            raise NotSeparableError(
                "LinearProgramClassifier: the training set is not linearly separable (the linear program "
                "y_t w.x_t >= 1 for all t has no solution); use Pegasos, LogisticRegression or the "
                "Perceptron with max_epochs instead")
        if res.status != 0:
            raise ValueError(f"LinearProgramClassifier: linprog failed: {res.message}")
        with np.errstate(over="ignore"):
            w = res.x / scale
        _check_lp_weights(self, w)
        self.coef_, self.intercept_ = _split_w(w, X.shape[1], self.fit_intercept)
        return self


class LADRegressor(_LinearRegressorBase):
    """Least absolute deviations: ERM of the absolute loss as the linear program of 002's exercise.

    Variables v = (w, s) in R^{d+n}; minimise sum_i s_i subject to
    [-X -I; X -I] v <= (-y, y) (so s_i >= |y_i - w.x_i|), solved by
    ``scipy.optimize.linprog`` (HiGHS) with a sparse constraint matrix.
    The intercept is the weight of the constant feature.
    """

    _parameter_spec = {"fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept=True, n_jobs=None):
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs

    def fit(self, X, y):
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
