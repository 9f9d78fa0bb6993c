"""Plain-Python references for ``smml.kernels``: the notes' formulas and pseudo-code.

Lists of Python floats and explicit loops, every kernel value computed from its
definition when it is needed (003 section 11):
linear x.x', polynomial (1 + x.x')^n, Gaussian exp(-||x - x'||^2 / (2 gamma)).
The learners take the same example order / step draws as the compiled ones so
the tests can compare them step for step; the estimator-like classes (fit /
predict) serve ``smml tour`` and the benchmarks.

Sources: 003 section 11 (kernels, Algorithm 4 the kernel Perceptron, the kernel
ridge closed form) and section 12 (the SVM objective, Pegasos).
"""
import math

import numpy as np

__all__ = ["linear", "polynomial", "gaussian", "make_kernel", "gram", "kernel_perceptron",
           "kernel_ridge_coef", "kernel_pegasos", "svm_objective", "svm_dual_objective",
           "svm_coordinate_descent", "KernelPerceptron", "KernelRidge", "KernelPegasos"]


def _rows(X):
    return [[float(v) for v in row] for row in np.asarray(X)]


def linear(x, z):
    """x.x'"""
    s = 0.0
    for a, b in zip(x, z):
        s = s + a * b
    return s


def polynomial(x, z, degree):
    """(1 + x.x')^n"""
    return (1.0 + linear(x, z)) ** degree


def gaussian(x, z, gamma):
    """exp(-||x - x'||^2 / (2 gamma)), gamma the width of 003."""
    s = 0.0
    for a, b in zip(x, z):
        s = s + (a - b) ** 2
    return math.exp(-s / (2.0 * gamma))


def make_kernel(kernel="gaussian", degree=3, gamma=1.0):
    """A function K(x, z) on two lists."""
    if callable(kernel):
        return lambda x, z: float(np.asarray(kernel(np.array([x]), np.array([z]))).reshape(-1)[0])
    if kernel == "linear":
        return linear
    if kernel == "polynomial":
        return lambda x, z: polynomial(x, z, degree)
    if kernel == "gaussian":
        return lambda x, z: gaussian(x, z, gamma)
    raise ValueError(f"unknown kernel {kernel!r}")


def gram(X, Y, K):
    """[[K(x, y) for y in Y] for x in X]"""
    A, B = _rows(X), _rows(Y)
    return [[K(a, b) for b in B] for a in A]


def scale_width(X):
    """003's width equivalent to scikit-learn's gamma='scale': d Var(X) / 2."""
    X = np.asarray(X, dtype=float)
    v = float(X.var())
    return X.shape[1] * v / 2.0 if v > 0 else 0.5


# ---- the learners -------------------------------------------------------------------

def kernel_perceptron(X, y, orders, K, budget=None):
    """003's Algorithm 4 over the epochs ``orders`` (a list of example orders).

    S <- {}; for t in the stream: y_hat = sgn(sum_{s in S} y_s K(x_s, x_t)) with
    sgn(0) = -1; if y_hat != y_t: S <- S + {t}. Stops after an epoch without a
    mistake. With a budget, the oldest member of S leaves when S is full.
    Returns (S in order of arrival, number of mistakes, epochs run).
    """
    rows = _rows(X)
    S = []
    mistakes, epochs = 0, 0
    for order in orders:
        epochs += 1
        made = 0
        for t in order:
            score = 0.0
            for s in S:
                score = score + y[s] * K(rows[s], rows[t])
            y_hat = 1 if score > 0 else -1
            if y_hat != y[t]:
                if budget is not None and len(S) == budget:
                    S.pop(0)
                S.append(t)
                made += 1
        mistakes += made
        if made == 0:
            break
    return S, mistakes, epochs


def kernel_ridge_coef(X, y, alpha, K):
    """(alpha I + K)^{-1} y by numpy.linalg.solve (003 section 11); g(x) = sum_i c_i K(x_i, x)."""
    G = np.array(gram(X, X, K))
    return np.linalg.solve(alpha * np.eye(len(G)) + G, np.asarray(y, dtype=float))


def kernel_pegasos(X, y, steps, lam, K, average=False):
    """003 section 12 in H_K, literally: g_1 = 0, and at step t with example i
    g_{t+1} = (1 - 1/t) g_t + (1/(lam t)) y_i K(x_i, .) I{1 - y_i g_t(x_i) > 0}.

    g is a dict {j: coefficient of K(x_j, .)}. Returns the coefficients of
    g_{T+1}, or of (1/T) sum_{t=1}^T g_t when ``average``.
    """
    rows = _rows(X)
    g = {}
    total = {}
    t = 0
    for i in steps:
        t += 1
        value = 0.0
        for j, c in g.items():
            value = value + c * K(rows[j], rows[i])
        active = 1.0 - y[i] * value > 0
        for j, c in g.items():
            total[j] = total.get(j, 0.0) + c
        g = {j: (1.0 - 1.0 / t) * c for j, c in g.items()}
        if active:
            g[i] = g.get(i, 0.0) + y[i] / (lam * t)
    if average:
        return {j: c / t for j, c in total.items()}
    return g


def svm_objective(Kmat, y, coef, b, lam):
    """003's F(g) = lam/2 ||g||_K^2 + (1/m) sum_t [1 - y_t (g(x_t) + b)]_+, g = sum_s coef_s K(x_s, .)."""
    Kmat = np.asarray(Kmat, dtype=float)
    coef = np.asarray(coef, dtype=float)
    y = np.asarray(y, dtype=float)
    f = Kmat @ coef
    return float(0.5 * lam * coef @ f + np.mean(np.maximum(0.0, 1.0 - y * (f + b))))


def svm_dual_objective(Kmat, y, alpha):
    """sum_t a_t - 1/2 sum_{s,t} a_s a_t y_s y_t K_st (libsvm's scale)."""
    ay = np.asarray(alpha, dtype=float) * np.asarray(y, dtype=float)
    return float(np.sum(alpha) - 0.5 * ay @ np.asarray(Kmat, dtype=float) @ ay)


def svm_coordinate_descent(Kmat, y, C, tol=1e-10, max_sweeps=100000):
    """The SVM dual without bias, max sum a - 1/2 a^T Q a over 0 <= a <= C, by
    cyclic exact coordinate steps (plain loops) until no coordinate moves by more
    than ``tol``. Returns a (the coefficients of g are a_t y_t)."""
    Kmat = [[float(v) for v in row] for row in np.asarray(Kmat)]
    y = [float(v) for v in y]
    m = len(y)
    a = [0.0] * m
    f = [0.0] * m                        # f_t = sum_s a_s y_s K_st
    for _ in range(max_sweeps):
        moved = 0.0
        for i in range(m):
            G = y[i] * f[i] - 1.0
            q = Kmat[i][i]
            new = min(max(a[i] - G / q, 0.0), C) if q > 0 else (C if G < 0 else 0.0)
            d = new - a[i]
            if d != 0.0:
                a[i] = new
                for t in range(m):
                    f[t] += d * y[i] * Kmat[i][t]
                moved = max(moved, abs(d))
        if moved <= tol:
            break
    return np.array(a)


# ---- estimator-like twins (fit / predict) for the tour and the benches ----------------

def _expansion(terms, K, x):
    """sum_s c_s K(x_s, x) over terms [(x_s, c_s)], added in order."""
    s = 0.0
    for x_s, c in terms:
        s = s + c * K(x_s, x)
    return s


class _Kernelled:
    def _kernel(self, X):
        gamma = scale_width(X) if self.gamma == "scale" else self.gamma
        return make_kernel(self.kernel, self.degree, gamma)

    def _scores(self, X):
        rows = _rows(X)
        return [_expansion(self.terms_, self.K_, x) for x in rows]


class KernelPerceptron(_Kernelled):
    """One-vs-rest Algorithm 4, epochs in order (plain Python)."""

    def __init__(self, kernel="gaussian", degree=3, gamma="scale", max_epochs=1000):
        self.kernel, self.degree, self.gamma, self.max_epochs = kernel, degree, gamma, max_epochs

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.K_ = self._kernel(X)
        rows = _rows(X)
        problems = [self.classes_[1]] if len(self.classes_) == 2 else list(self.classes_)
        self.models_ = []
        for c in problems:
            y_pm = [1 if v == c else -1 for v in y]
            S, _, _ = kernel_perceptron(X, y_pm, [list(range(len(rows)))] * self.max_epochs, self.K_)
            self.models_.append([(rows[s], float(y_pm[s])) for s in S])
        return self

    def predict(self, X):
        rows = _rows(X)
        scores = [[_expansion(model, self.K_, x) for model in self.models_] for x in rows]
        if len(self.models_) == 1:
            return np.array([self.classes_[1] if s[0] > 0 else self.classes_[0] for s in scores])
        return np.array([self.classes_[int(np.argmax(s))] for s in scores])


class KernelRidge(_Kernelled):
    """The closed form of 003 section 11 with numpy.linalg.solve."""

    def __init__(self, alpha=1.0, kernel="gaussian", degree=3, gamma="scale"):
        self.alpha, self.kernel, self.degree, self.gamma = alpha, kernel, degree, gamma

    def fit(self, X, y):
        self.K_ = self._kernel(X)
        c = kernel_ridge_coef(X, y, self.alpha, self.K_)
        self.terms_ = list(zip(_rows(X), [float(v) for v in c]))
        return self

    def predict(self, X):
        return np.array(self._scores(X))


class KernelPegasos(_Kernelled):
    """003 section 12 in H_K, binary, the draws of smml.linear.Pegasos (random_state)."""

    def __init__(self, lam=1e-3, n_iter=10000, kernel="gaussian", degree=3, gamma="scale",
                 random_state=None):
        self.lam, self.n_iter, self.random_state = lam, n_iter, random_state
        self.kernel, self.degree, self.gamma = kernel, degree, gamma

    def fit(self, X, y):
        from smml._random import check_rng, step_indices

        self.classes_ = np.unique(y)
        self.K_ = self._kernel(X)
        y_pm = [1.0 if v == self.classes_[1] else -1.0 for v in y]
        steps = np.concatenate(list(step_indices(check_rng(self.random_state), len(y_pm), self.n_iter)))
        g = kernel_pegasos(X, y_pm, [int(i) for i in steps], self.lam, self.K_)
        rows = _rows(X)
        self.terms_ = [(rows[j], c) for j, c in sorted(g.items())]
        return self

    def predict(self, X):
        return np.array([self.classes_[1] if s > 0 else self.classes_[0] for s in self._scores(X)])
