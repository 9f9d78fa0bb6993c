"""Pegasos (003 section 12)."""

import numpy as np

from smml._core import _linear as _k
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, validate_X_y)

from smml.linear._base import (_BOOL, _PEGASOS_CHUNK, _binary_labels, _check_rng, _draw_integers,
                               _raise_divergence, _split_w, _BinaryLinearClassifier)

def _step_indices(rng, m, n_steps, chunk=_PEGASOS_CHUNK):
    """The examples of steps 1..n_steps, drawn uniformly with replacement, in chunks."""
    done = 0
    while done < n_steps:
        c = min(chunk, n_steps - done)
        yield _draw_integers(rng, m, c).astype(np.intp, copy=False)
        done += c


class Pegasos(_BinaryLinearClassifier):
    """Pegasos for the SVM objective F(w) = lam/2 ||w||^2 + (1/m) sum_t [1 - y_t w.x_t]_+.

    Exactly 003, section 12: w_1 = 0; at step t = 1..n_iter draw one training
    example (x, y) uniformly at random (from ``random_state``) and set
    w_{t+1} = (1 - 1/t) w_t + (1/(lam t)) y x I{1 - y w_t.x > 0}
    (eta_t = 1/(lam t)). The kernel keeps w = s v so the shrink costs O(1) and a
    step O(d). ``average=True`` returns w_bar = (1/T) sum_{t=1}^T w_t, the
    iterate of the bound E[F(w_bar)] <= F(w*) + (G^2 / (2 lam T)) (ln T + 1)
    (:func:`smml.bounds.pegasos_bound`); otherwise the last iterate w_{T+1}.

    With ``fit_intercept`` the constant feature is part of x, so its weight is
    penalised as well (unlike scikit-learn's SGDClassifier).
    """

    _parameter_spec = {"lam": Interval(float, 0, None, "neither"), "n_iter": Interval(int, 1, None),
                       "average": _BOOL, "fit_intercept": _BOOL, "random_state": RANDOM_STATE,
                       "n_jobs": N_JOBS}

    def __init__(self, lam=1e-3, n_iter=10000, average=False, fit_intercept=True, random_state=None,
                 n_jobs=None):
        self.lam = lam
        self.n_iter = n_iter
        self.average = average
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=True)
        self.classes_, _, y8 = _binary_labels(self, y)
        n, d = X.shape
        fi = bool(self.fit_intercept)
        rng = _check_rng(self.random_state)
        v = np.zeros(d + fi)
        u = np.zeros(d + fi)
        state = np.array([1.0, 0.0, 0.0])
        for idx in _step_indices(rng, n, self.n_iter):
            if _k.pegasos_steps(X, y8, idx, v, u, state, float(self.lam), fi, bool(self.average)):
                _raise_divergence(self, f"by step {int(state[1])}", "rescale the features")
        T = int(state[1])
        w = (u + state[2] * v) / T if self.average else state[0] * v
        self.coef_, self.intercept_ = _split_w(w, d, fi)
        self.n_iter_ = T
        return self

    def objective(self, X, y):
        """F(w) = lam/2 ||w||^2 + mean hinge loss of the fitted w on (X, y) (003, section 12)."""
        from smml.losses import hinge
        y_pm = self._pm(y)
        w = np.append(self.coef_.ravel(), self.intercept_ if self.fit_intercept else [])
        return float(0.5 * self.lam * (w @ w) + np.mean(hinge(y_pm, self.decision_function(X))))
