"""The Perceptron (000 "Linear predictors"; 001; 003 section 9)."""

import numpy as np

from smml._core import _linear as _k
from smml._validation import (N_JOBS, RANDOM_STATE, Interval, encode_classes, validate_X_y)
from smml.base import ClassifierMixin, SmmlEstimator, store_params

from smml.linear._base import (_BOOL, _check_rng, _raise_divergence, _scores)

class Perceptron(ClassifierMixin, SmmlEstimator):
    """The Perceptron of 000, "Training linear classifiers" (also 001, 003 section 9).

    w = 0; epochs over the training set in order (or, with ``shuffle=True``, in
    a new random order per epoch drawn from ``random_state``); whenever
    y_t w.x_t <= 0 the update w <- w + y_t x_t; stop after an epoch without any
    update (``converged_ = True``) or after ``max_epochs`` epochs. On a linearly
    separable training set the number of updates is at most
    (min_{u: gamma(u) >= 1} ||u||^2)(max_t ||x_t||^2) (000, Theorem 3; see
    :func:`smml.bounds.perceptron_convergence_bound`).

    More than two classes: one-vs-rest, one Perceptron per class (labels +1 for
    the class, -1 otherwise), prediction by the largest score (first class on
    ties). float32 input is learnt in float32 (no conversion).

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the constant feature 1 (000, "Hyperplanes").
    max_epochs : int, default=1000
    shuffle : bool, default=False
        Visit the examples in a fresh random order every epoch.
    random_state : None, int or Generator
    n_jobs : None or int
        Threads of ``decision_function`` (training is sequential).

    Attributes
    ----------
    coef_ : (1, d) or (n_classes, d); intercept_ : (1,) or (n_classes,)
    n_updates_, n_epochs_, converged_ : int/bool for two classes, arrays
        (one per class) for one-vs-rest.
    """

    _parameter_spec = {"fit_intercept": _BOOL, "max_epochs": Interval(int, 1, None),
                       "shuffle": _BOOL, "random_state": RANDOM_STATE, "n_jobs": N_JOBS}

    def __init__(self, fit_intercept=True, max_epochs=1000, shuffle=False, random_state=None,
                 n_jobs=None):
        store_params(self, locals())

    def _run(self, X, y_pm, rng):
        n, d = X.shape
        w = np.zeros(d + int(self.fit_intercept), dtype=X.dtype)
        order = np.arange(n, dtype=np.intp)
        updates, epochs, converged = 0, 0, False
        for epoch in range(self.max_epochs):
            if self.shuffle:
                order = rng.permutation(n).astype(np.intp, copy=False)
            n_up, status = _k.perceptron_epoch(X, y_pm, order, w, bool(self.fit_intercept))
            epochs += 1
            updates += n_up
            if status:
                _raise_divergence(self, f"in epoch {epochs}", "rescale the features")
            if n_up == 0:
                converged = True
                break
        return w, updates, epochs, converged

    def fit(self, X, y):
        """Run the Perceptron (one per class for more than two classes)."""
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        self.classes_, y_enc = encode_classes(y)
        rng = _check_rng(self.random_state)
        d = X.shape[1]
        k = len(self.classes_)
        if k == 1:
            # a single class: every prediction is that class (nothing to learn)
            self.coef_ = np.zeros((1, d), dtype=X.dtype)
            self.intercept_ = np.ones(1, dtype=X.dtype)
            self.n_updates_, self.n_epochs_, self.converged_ = 0, 0, True
            return self
        problems = [y_enc == 1] if k == 2 else [y_enc == c for c in range(k)]
        coefs, intercepts, ups, eps, convs = [], [], [], [], []
        for pos in problems:
            y_pm = np.where(pos, 1, -1).astype(np.int8)
            w, u, e, c = self._run(X, y_pm, rng)
            coefs.append(w[:d])
            intercepts.append(w[d] if self.fit_intercept else 0.0)
            ups.append(u), eps.append(e), convs.append(c)
        self.coef_ = np.array(coefs, dtype=X.dtype)
        self.intercept_ = np.array(intercepts, dtype=X.dtype)
        if k == 2:
            self.n_updates_, self.n_epochs_, self.converged_ = ups[0], eps[0], convs[0]
        else:
            self.n_updates_ = np.array(ups)
            self.n_epochs_ = np.array(eps)
            self.converged_ = np.array(convs)
        return self

    def decision_function(self, X):
        """w.x' per row (two classes: shape (n,)), or per class (one-vs-rest: (n, n_classes))."""
        s = _scores(self, X)
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X):
        """sgn(w.x') with sgn(0) = -1 (two classes), or the class of largest score."""
        s = _scores(self, X)
        if len(self.classes_) == 1:
            return np.repeat(self.classes_, s.shape[0])
        if s.shape[1] == 1:
            return self.classes_[(s[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]
