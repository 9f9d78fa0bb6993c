"""Plain-Python AdaBoost with decision stumps (002 "Adaboost", 003 section 16).

Lists and floats only, line by line as the notes' pseudo-code: the oracle for
``smml._core._adaboost`` and the baseline of ``smml tour`` / ``bench``.

Stump tie rule (the same as the kernel, see ``smml.ensemble.DecisionStump``):
smallest weighted error; then smallest feature index; then smallest threshold
(the constant stump, threshold -inf, first); then polarity +1 before -1. Errors
within TIE_TOL * (total weight) count as equal: each feature keeps the first
candidate (in threshold, then polarity order) not beaten by more than that,
then the features' winners are compared the same way in index order.
"""
import math

__all__ = ["best_stump_exhaustive", "best_stump_sorted", "AdaBoostStumps"]

TIE_TOL = 1e-10


def _pick(per_feature, tol):
    best = None
    for cand in per_feature:
        if best is None or cand[3] < best[3] - tol:
            best = cand
    return best


def _candidates(column):
    """Thresholds: -inf (constant stump) and every midpoint of consecutive distinct values."""
    vals = sorted(set(column))
    out = [-math.inf]
    for a, b in zip(vals[:-1], vals[1:]):
        m = 0.5 * a + 0.5 * b
        out.append(m if a <= m < b else a)
    return out


def best_stump_exhaustive(X, y, w):
    """Exhaustive weighted stump search, each error recomputed from scratch.

    X: list of rows, y: list of -1/+1, w: list of non-negative weights.
    h(x) = s if x[j] > theta else -s. Returns (feature, theta, s, error) with
    error = sum of the weights of the misclassified examples.
    """
    n, d = len(X), len(X[0])
    W = 0.0
    for v in w:
        W = W + v
    tol = TIE_TOL * W
    winners = []
    for j in range(d):
        col = [X[t][j] for t in range(n)]
        cands = []
        for theta in _candidates(col):
            for s in (1, -1):
                err = 0.0
                for t in range(n):
                    h = s if col[t] > theta else -s
                    if h != y[t]:
                        err += w[t]
                cands.append((j, theta, s, err))
        winners.append(_pick(cands, tol))
    return _pick(winners, tol)


def best_stump_sorted(X, y, w):
    """The same search in O(d n log n): sort each feature, scan cumulative weights."""
    n, d = len(X), len(X[0])
    w_pos = w_neg = 0.0
    for t in range(n):
        if y[t] > 0:
            w_pos = w_pos + w[t]
        elif y[t] < 0:
            w_neg = w_neg + w[t]
    tol = TIE_TOL * (w_pos + w_neg)
    winners = []
    for j in range(d):
        order = sorted(range(n), key=lambda t: X[t][j])
        cand = [(w_neg, -math.inf, 1), (w_pos, -math.inf, -1)]
        cum = 0.0
        for p in range(n - 1):
            t = order[p]
            cum += w[t] * y[t]
            a, b = X[t][j], X[order[p + 1]][j]
            if a < b:
                m = 0.5 * a + 0.5 * b
                theta = m if a <= m < b else a
                cand.append((w_neg + cum, theta, 1))
                cand.append((w_pos - cum, theta, -1))
        winners.append(_pick([(j, theta, s, err) for err, theta, s in cand], tol))
    return _pick(winners, tol)


class AdaBoostStumps:
    """AdaBoost (002 Algorithm 1 / 003 Algorithm 5) with stumps, multiplicative updates.

    P_1 uniform; epsilon_i the P_i-weighted error of the best stump;
    w_i = 1/2 ln((1 - eps)/eps); P_{i+1}(t) = P_i(t) exp(-w_i y_t h_i(x_t)) / Z_i;
    f = sgn(sum w_i h_i), sgn(0) = -1 (000). eps = 0: the stump decides alone
    (weight 1 + sum of earlier |w|) and boosting stops; eps = 1/2: stop.
    """

    def __init__(self, n_estimators=50, exhaustive=False):
        self.n_estimators = n_estimators
        self.exhaustive = exhaustive

    def fit(self, X, y):
        X = [[float(v) for v in row] for row in X]
        labels = sorted(set(y.tolist() if hasattr(y, "tolist") else y))
        self.classes_ = labels
        yy = [1 if v == labels[-1] else -1 for v in (y.tolist() if hasattr(y, "tolist") else y)]
        m = len(X)
        P = [1.0 / m] * m
        search = best_stump_exhaustive if self.exhaustive else best_stump_sorted
        self.stumps, self.weights, self.errors, self.distributions = [], [], [], [P]
        for _ in range(self.n_estimators):
            j, theta, s, _ = search(X, yy, P)
            h = [s if X[t][j] > theta else -s for t in range(m)]
            eps = 0.0
            for t in range(m):
                if h[t] != yy[t]:
                    eps = eps + P[t]
            if eps <= 0.0:
                self.stumps.append((j, theta, s))
                abs_sum = 0.0
                for a in self.weights:
                    abs_sum = abs_sum + abs(a)
                self.weights.append(1.0 + abs_sum)
                self.errors.append(0.0)
                break
            if abs(eps - 0.5) <= 1e-10:
                break
            a = 0.5 * math.log((1.0 - eps) / eps)
            P = [P[t] * math.exp(-a * yy[t] * h[t]) for t in range(m)]
            Z = 0.0
            for p in P:
                Z = Z + p
            P = [p / Z for p in P]
            self.stumps.append((j, theta, s))
            self.weights.append(a)
            self.errors.append(eps)
            self.distributions.append(P)
        return self

    def decision_function(self, X):
        out = []
        for row in X:
            F = 0.0
            for (j, theta, s), a in zip(self.stumps, self.weights):
                F += a * (s if float(row[j]) > theta else -s)
            out.append(F)
        return out

    def predict(self, X):
        import numpy as np

        return np.array([self.classes_[-1] if F > 0 else self.classes_[0] for F in self.decision_function(X)])
