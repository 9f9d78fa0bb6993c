"""Plain-Python references for ``smml.linear``: the notes' pseudo-code, line by line.

Lists of Python floats and explicit loops; the same ``order`` / step indices as
the kernels so the tests can compare weights to rounding. The estimator-like
classes (fit / predict) serve ``smml tour`` and the benchmarks.

Sources: 000 "Training linear classifiers" (Perceptron), "Linear regression"
and "Ridge Regression"; 001 (LMS, logistic regression); 003 sections 10
(projected OGD) and 12 (Pegasos).
"""
import math

import numpy as np

__all__ = ["perceptron_epoch", "lms_epoch", "lms_batch_step", "pegasos", "ogd",
           "logistic_objective_grad", "solve_normal_equations", "ridge_closed_form",
           "svm_optimum", "hard_margin_dual_epoch", "polynomial_design", "Perceptron", "LinearRegression", "RidgeRegression", "LMSRegressor",
           "LogisticRegression", "Pegasos", "OnlineGradientDescent"]


def _rows(X):
    return [[float(v) for v in row] for row in np.asarray(X)]


def _aug(x, fit_intercept):
    return list(x) + [1.0] if fit_intercept else list(x)


def _dot(a, b):
    s = 0.0
    for ai, bi in zip(a, b):
        s = s + ai * bi
    return s


# ---- the algorithms ------------------------------------------------------------------

def perceptron_epoch(X, y, order, w, fit_intercept=True):
    """One epoch of 000's Perceptron; w (list) is updated in place; returns the update count."""
    rows = _rows(X)
    updates = 0
    for t in order:
        x = _aug(rows[t], fit_intercept)
        if y[t] * _dot(w, x) <= 0:
            for j in range(len(w)):
                w[j] += y[t] * x[j]
            updates += 1
    return updates


def lms_epoch(X, y, order, w, lr, fit_intercept=True):
    """001's stochastic LMS: theta <- theta + lr (y_i - theta.x_i) x_i, in the given order."""
    rows = _rows(X)
    for i in order:
        x = _aug(rows[i], fit_intercept)
        r = float(y[i]) - _dot(w, x)
        for j in range(len(w)):
            w[j] += lr * r * x[j]
    return w


def lms_batch_step(X, y, w, lr, fit_intercept=True):
    """001's batch LMS: theta <- theta + lr sum_i (y_i - theta.x_i) x_i."""
    rows = [_aug(r, fit_intercept) for r in _rows(X)]
    step = [0.0] * len(w)
    for x, yi in zip(rows, y):
        r = float(yi) - _dot(w, x)
        for j in range(len(w)):
            step[j] += r * x[j]
    return [wj + lr * sj for wj, sj in zip(w, step)]


def pegasos(X, y, steps, lam, fit_intercept=True, average=False):
    """003, section 12: w_{t+1} = (1 - 1/t) w_t + (1/(lam t)) y x I{1 - y w_t.x > 0}.

    ``steps`` are the indices of the examples drawn at t = 1, 2, ...; returns
    w_{T+1}, or the average (1/T) sum_{t=1}^T w_t when ``average``.
    """
    rows = _rows(X)
    p = len(rows[0]) + int(fit_intercept)
    w = [0.0] * p
    total = [0.0] * p
    t = 0
    for i in steps:
        t += 1
        x = _aug(rows[i], fit_intercept)
        yi = float(y[i])
        active = 1.0 - yi * _dot(w, x) > 0
        total = [a + b for a, b in zip(total, w)]
        eta = 1.0 / (lam * t)
        w = [(1.0 - 1.0 / t) * wj + (eta * yi * xj if active else 0.0) for wj, xj in zip(w, x)]
    return [a / t for a in total] if average else w


def _loss_slope(loss, z, y):
    if loss == "hinge":
        return (1.0 - y * z, -y) if 1.0 - y * z > 0 else (0.0, 0.0)
    if loss == "logistic":
        m = y * z
        return math.log1p(math.exp(-m)) if m > 0 else -m + math.log1p(math.exp(m)), -y / (1.0 + math.exp(m))
    return (z - y) ** 2, 2.0 * (z - y)


def ogd(X, y, order, loss="hinge", eta=1.0, radius=None, sigma=None, fit_intercept=True, w=None, t0=0):
    """003, section 10: projected OGD on the stream X[order].

    w' = w_t - eta_t grad l_t(w_t), w_{t+1} = projection of w' on {||w|| <= radius};
    eta_t = eta/sqrt(t), or 1/(sigma t) with l_t + sigma/2 ||w||^2 when sigma is
    given. Returns (w, cumulative loss sum_t l_t(w_t)).
    """
    rows = _rows(X)
    p = len(rows[0]) + int(fit_intercept)
    w = [0.0] * p if w is None else list(w)
    cum = 0.0
    t = t0
    for i in order:
        t += 1
        x = _aug(rows[i], fit_intercept)
        lt, g = _loss_slope(loss, _dot(w, x), float(y[i]))
        if sigma is not None:
            lt += 0.5 * sigma * _dot(w, w)
            eta_t = 1.0 / (sigma * t)
            grad = [g * xj + sigma * wj for xj, wj in zip(x, w)]
        else:
            eta_t = eta / math.sqrt(t)
            grad = [g * xj for xj in x]
        cum += lt
        w = [wj - eta_t * gj for wj, gj in zip(w, grad)]
        if radius is not None:
            nrm = math.sqrt(_dot(w, w))
            if nrm > radius:
                w = [wj * radius / nrm for wj in w]
    return w, cum


def logistic_objective_grad(X, y, w, lam, fit_intercept=True):
    """(1/m) sum ln(1 + e^{-y w.x}) + lam/2 ||w without intercept||^2, and its gradient."""
    rows = [_aug(r, fit_intercept) for r in _rows(X)]
    m = len(rows)
    d = len(rows[0]) - int(fit_intercept)
    val = 0.0
    grad = [0.0] * len(w)
    for x, yi in zip(rows, y):
        lt, g = _loss_slope("logistic", _dot(w, x), float(yi))
        val += lt
        for j in range(len(w)):
            grad[j] += g * x[j]
    val /= m
    grad = [g / m for g in grad]
    for j in range(d):
        val += 0.5 * lam * w[j] * w[j]
        grad[j] += lam * w[j]
    return val, grad


def _gauss_solve(A, b):
    """Gaussian elimination with partial pivoting (plain Python)."""
    n = len(A)
    M = [list(map(float, A[i])) + [float(b[i])] for i in range(n)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(M[r][c]))
        if M[piv][c] == 0.0:
            raise ZeroDivisionError("singular system")
        M[c], M[piv] = M[piv], M[c]
        for r in range(c + 1, n):
            f = M[r][c] / M[c][c]
            for k in range(c, n + 1):
                M[r][k] -= f * M[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        s = 0.0
        for k in range(r + 1, n):
            s = s + M[r][k] * x[k]
        x[r] = (M[r][n] - s) / M[r][r]
    return x


def ridge_closed_form(X, y, alpha):
    """000, "Ridge Regression": w = (alpha I + S^T S)^{-1} S^T y (solved, plain Python)."""
    rows = _rows(X)
    d = len(rows[0])
    A = [[0.0] * d for _ in range(d)]
    b = [0.0] * d
    for r, yi in zip(rows, y):                  # S^T S and S^T y, example by example
        for i in range(d):
            for j in range(d):
                A[i][j] = A[i][j] + r[i] * r[j]
            b[i] = b[i] + r[i] * float(yi)
    for i in range(d):
        A[i][i] = A[i][i] + alpha
    return _gauss_solve(A, b)


def solve_normal_equations(X, y):
    """000/001: w = (S^T S)^{-1} S^T y (S^T S must be nonsingular)."""
    return ridge_closed_form(X, y, 0.0)


def svm_optimum(X, y, lam):
    """F(w*) of min lam/2 ||w||^2 + (1/m) sum hinge (no intercept), via its dual.

    Dual: max_{0 <= a_i <= 1/m} sum a_i - 1/(2 lam) ||sum a_i y_i x_i||^2, with
    w = (1/lam) sum a_i y_i x_i; solved with L-BFGS-B (box constraints).
    Returns (w, F(w), dual value): F(w) - dual >= 0 is the duality gap.
    """
    from scipy.optimize import minimize

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    m = len(y)
    Z = y[:, None] * X

    def neg_dual(a):
        v = Z.T @ a
        return -(a.sum() - v @ v / (2 * lam)), -(1.0 - Z @ v / lam)

    res = minimize(neg_dual, np.full(m, 0.5 / m), jac=True, method="L-BFGS-B",
                   bounds=[(0, 1.0 / m)] * m, options={"maxiter": 10000, "gtol": 1e-12, "ftol": 1e-15})
    w = Z.T @ res.x / lam
    F = 0.5 * lam * w @ w + np.mean(np.maximum(0.0, 1 - y * (X @ w)))
    return w, float(F), float(-res.fun)


def hard_margin_dual_epoch(X, y, order, alpha, w, fit_intercept=True):
    """One epoch of exact coordinate ascent on the dual of 003 section 12's hard-margin SVM.

    Dual of min 1/2 ||w||^2 s.t. y_t w.x'_t >= 1: max_{alpha >= 0} sum alpha_t
    - 1/2 ||sum alpha_t y_t x'_t||^2. For t in order: alpha_t <- max(0, alpha_t -
    (y_t w.x'_t - 1) / ||x'_t||^2) and w <- w + (change) y_t x'_t. alpha and w (lists)
    are updated in place; returns the largest |projected gradient| seen.
    """
    rows = _rows(X)
    viol = 0.0
    for t in order:
        x = _aug(rows[t], fit_intercept)
        g = y[t] * _dot(w, x) - 1.0
        pg = g if alpha[t] > 0 else min(g, 0.0)
        viol = max(viol, abs(pg))
        new = max(0.0, alpha[t] - g / _dot(x, x))
        delta = new - alpha[t]
        if delta != 0.0:
            alpha[t] = new
            for j in range(len(w)):
                w[j] += delta * y[t] * x[j]
    return viol


def polynomial_design(x, degree):
    """002's feature map phi(x) = (1, x, x^2, ..., x^p) of scalar inputs, as rows (lists)."""
    return [[float(v) ** k for k in range(degree + 1)] for v in np.asarray(x).reshape(-1)]


# ---- estimator-like twins (fit / predict) for the tour and the benches ----------------

class _Binary:
    def _labels(self, y):
        self.classes_ = np.unique(y)
        return [1.0 if v == self.classes_[1] else -1.0 for v in y]

    def predict(self, X):
        return np.array([self.classes_[1] if _dot(self.w, _aug(x, True)) > 0 else self.classes_[0]
                         for x in _rows(X)])


class Perceptron:
    """One-vs-rest Perceptron epochs in order (000), plain Python."""

    def __init__(self, max_epochs=1000):
        self.max_epochs = max_epochs

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        probs = [self.classes_[1:]] if len(self.classes_) == 2 else [[c] for c in self.classes_]
        self.W = []
        for pos in probs:
            yy = [1 if v in pos else -1 for v in y]
            w = [0.0] * (np.shape(X)[1] + 1)
            for _ in range(self.max_epochs):
                if perceptron_epoch(X, yy, range(len(yy)), w) == 0:
                    break
            self.W.append(w)
        return self

    def predict(self, X):
        rows = [_aug(x, True) for x in _rows(X)]
        if len(self.W) == 1:
            return np.array([self.classes_[1] if _dot(self.W[0], x) > 0 else self.classes_[0] for x in rows])
        return np.array([self.classes_[max(range(len(self.W)), key=lambda c: _dot(self.W[c], x))]
                         for x in rows])


class LinearRegression:
    """Normal equations with a constant feature, plain Python."""

    def fit(self, X, y):
        self.w = solve_normal_equations([_aug(r, True) for r in _rows(X)], y)
        return self

    def predict(self, X):
        return np.array([_dot(self.w, _aug(x, True)) for x in _rows(X)])


class RidgeRegression(LinearRegression):
    """Closed form on centred data (intercept unpenalised), plain Python."""

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def fit(self, X, y):
        rows = _rows(X)
        m, d = len(rows), len(rows[0])
        mu, ym = [0.0] * d, 0.0
        for r, v in zip(rows, y):
            for j in range(d):
                mu[j] = mu[j] + r[j]
            ym = ym + float(v)
        mu = [v / m for v in mu]
        ym = ym / m
        w = ridge_closed_form([[r[j] - mu[j] for j in range(d)] for r in rows], [float(v) - ym for v in y],
                              self.alpha)
        self.w = w + [ym - _dot(mu, w)]
        return self


class LMSRegressor(LinearRegression):
    """Stochastic LMS epochs in order with learning rate 1 / max ||x'||^2."""

    def __init__(self, mode="stochastic", max_epochs=100):
        self.mode, self.max_epochs = mode, max_epochs

    def fit(self, X, y):
        rows = _rows(X)
        lr = 1.0 / max(_dot(r, r) + 1.0 for r in rows)
        self.w = [0.0] * (len(rows[0]) + 1)
        for _ in range(self.max_epochs):
            lms_epoch(X, y, range(len(rows)), self.w, lr)
        return self


class LogisticRegression(_Binary):
    """Gradient descent on the regularised mean logistic loss (plain Python, fixed 500 steps)."""

    def __init__(self, lam=1e-2, steps=500, lr=1.0):
        self.lam, self.steps, self.lr = lam, steps, lr

    def fit(self, X, y):
        yy = self._labels(y)
        self.w = [0.0] * (np.shape(X)[1] + 1)
        for _ in range(self.steps):
            _, g = logistic_objective_grad(X, yy, self.w, self.lam)
            self.w = [wj - self.lr * gj for wj, gj in zip(self.w, g)]
        return self


class Pegasos(_Binary):
    def __init__(self, lam=1e-2, n_iter=10000, random_state=0):
        self.lam, self.n_iter, self.random_state = lam, n_iter, random_state

    def fit(self, X, y):
        yy = self._labels(y)
        steps = np.random.default_rng(self.random_state).integers(0, len(yy), self.n_iter)
        self.w = pegasos(X, yy, steps, self.lam)
        return self


class OnlineGradientDescent(_Binary):
    def __init__(self, loss="hinge", eta=1.0, radius=None, n_epochs=5):
        self.loss, self.eta, self.radius, self.n_epochs = loss, eta, radius, n_epochs

    def fit(self, X, y):
        yy = self._labels(y)
        w, t = None, 0
        for _ in range(self.n_epochs):
            w, _ = ogd(X, yy, range(len(yy)), self.loss, self.eta, self.radius, w=w, t0=t)
            t += len(yy)
        self.w = w
        return self
