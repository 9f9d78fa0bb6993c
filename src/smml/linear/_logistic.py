"""Logistic regression (001; 002; 003 section 15)."""

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse

from smml._core import _linear as _k
from smml._threads import blas_single_thread
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, Options, validate_X_y)

from smml.linear._base import (_BOOL, _binary_labels, _check_rng, _raise_divergence, _small_change, _split_w,
                               _BinaryLinearClassifier)

class LogisticRegression(_BinaryLinearClassifier):
    """Binary logistic regression: min_w (1/m) sum_t ln(1 + e^{-y_t w.x_t}) + lam/2 ||w||^2.

    The logistic loss with the natural log, as in 002 ("Logistic regression");
    003, section 15 writes it with log2, which multiplies the loss by the
    constant 1/ln 2 (the same minimiser when lam is scaled by ln 2). The
    regulariser is 003 section 15's lam/2 ||w||^2; the intercept (the weight of
    the constant feature) is not penalised. Equivalent to scikit-learn's
    ``LogisticRegression(C=1 / (lam m))``.

    ``solver="lbfgs"``: scipy's L-BFGS-B on the compiled loss-and-gradient kernel
    (OpenMP over rows, thread-count independent result). ``solver="sgd"``: the
    stochastic gradient rule of 001, theta <- theta + lr ((y_i - h(x_i)) x_i -
    lam theta) (the lam term leaves the intercept out), epochs in a random
    order drawn from ``random_state``.

    Labels of any type; ``classes_[1]`` is the positive class (y = 1 of 001).
    ``max_iter``: L-BFGS iterations, or SGD epochs.
    """

    _parameter_spec = {"lam": Interval(float, 0, None), "fit_intercept": _BOOL,
                       "solver": Options("lbfgs", "sgd"), "max_iter": Interval(int, 1, None),
                       "tol": Interval(float, 0, None), "learning_rate": Interval(float, 0, None, "neither"),
                       "random_state": RANDOM_STATE, "n_jobs": N_JOBS}

    def __init__(self, lam=1e-3, fit_intercept=True, solver="lbfgs", max_iter=1000, tol=1e-6,
                 learning_rate=0.01, random_state=None, n_jobs=None):
        self.lam = lam
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _loss_grad(self, X, y_pm, n_threads):
        """f(w) -> (objective, gradient) on the compiled kernel."""
        n_chunks = _k.n_chunks_for(X.shape[0])
        slabs = np.empty((n_chunks, X.shape[1] + 2))
        n_threads = max(1, min(n_threads, n_chunks // 2))   # small problems: no thread team
        fi = bool(self.fit_intercept)
        lam = float(self.lam)

        def fun(w):
            w = np.ascontiguousarray(w, dtype=np.float64)
            g = np.empty_like(w)
            val, bad = _k.logistic_loss_grad(X, y_pm, w, g, slabs, lam, fi, n_threads)
            if bad:
                _raise_divergence(self, "while evaluating the loss", "rescale the features")
            return val, g
        return fun

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, y_pm, _ = _binary_labels(self, y)
        n, d = X.shape
        fi = bool(self.fit_intercept)
        w0 = np.zeros(d + fi)
        if self.solver == "lbfgs":
            fun = self._loss_grad(X, y_pm, self._n_threads())
            # L-BFGS works on (d+1)-vectors: BLAS threads there only cost (and the
            # kernel's per-row dot/axpy are single-threaded BLAS called from OpenMP threads)
            with blas_single_thread():
                res = scipy.optimize.minimize(fun, w0, jac=True, method="L-BFGS-B",
                                              options={"maxiter": self.max_iter, "gtol": self.tol,
                                                       "ftol": 64 * np.finfo(float).eps, "maxls": 50})
            w = res.x
            self.n_iter_ = int(res.nit)
        else:
            rng = _check_rng(self.random_state)
            w = w0
            cum = np.zeros(1)
            self.n_iter_ = 0
            for epoch in range(self.max_iter):
                prev = w.copy()
                order = rng.permutation(n).astype(np.intp, copy=False)
                st = _k.sgd_steps(X, y_pm, order, w, cum, _k.LOSS_LOGISTIC, _k.SCHED_CONST,
                                  float(self.learning_rate), float(self.lam), False, 0.0, 0, fi)
                self.n_iter_ += 1
                if st:
                    _raise_divergence(self, f"in SGD epoch {self.n_iter_}", "lower learning_rate")
                if _small_change(w, prev, self.tol):
                    break
        self.coef_, self.intercept_ = _split_w(w, d, fi)
        return self

    def predict_proba(self, X):
        """[P(classes_[0] | x), P(classes_[1] | x)] with P(classes_[1] | x) = 1/(1 + e^{-w.x'})."""
        from scipy.special import expit
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def objective(self, X, y):
        """The minimised objective at the fitted weights, on (X, y)."""
        from smml.losses import logistic
        y_pm = self._pm(y)
        w = self.coef_.ravel()
        return float(np.mean(logistic(y_pm, self.decision_function(X))) + 0.5 * self.lam * (w @ w))
