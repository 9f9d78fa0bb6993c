"""Plain-Python second-order gradient boosting (002 section 3.2 "XGBoost"): the oracle for
smml.ensemble.GradientBoostingRegressor / GradientBoostingClassifier.

Each round: g_i, h_i of the loss at F(x_i); one regression tree grown depth-first (per class for
softmax), every split found by exhaustive search over every feature and every threshold ("x <= t"
for t the midpoint between one of the node's values and the next distinct value of the whole
training set: smml's bin edges when a feature has at most max_bins values), with G_L, H_L, G_R,
H_R summed from scratch for each candidate and

    gain = 1/2 [G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda) - (G_L+G_R)^2/(H_L+H_R+lambda)];

the best candidate (largest gain; ties up to a relative 1e-12, i.e. rounding: lowest feature, then
lowest threshold) is made only when gain > gamma (and is not rounding: gain > 1e-12 of the
children's score, smml's rule); each child must hold H >= min_child_weight.  Leaves:
learning_rate * (-G / (H + lambda)).  F_0 is the best constant, as in smml.

Missing values (NaN, xgboost's / LightGBM's rule, smml's): per feature, the candidates first send
the node's missing rows to the second child (every finite cut, and all finite | missing when the
node has both), then, when it has both, to the first child (missing | all finite, then missing and
"x <= t" | the rest); a split remembers the side of its missing values (``miss_left``), and a NaN
at prediction follows it (the second child at a split that never saw one).
"""
import math

import numpy as np

__all__ = ["GradientBoostingRegressor", "GradientBoostingClassifier", "grad_hess"]


def grad_hess(loss, y, F):
    """Lists g, h (one per class for softmax) at scores F (list of lists, one row per sample)."""
    n = len(y)
    if loss == "squared_error":
        return [[-2.0 * (y[i] - F[i][0]) for i in range(n)]], [[2.0] * n]
    if loss == "log_loss":
        g, h = [], []
        for i in range(n):
            p = 1.0 / (1.0 + math.exp(-F[i][0]))
            g.append(p - y[i])
            h.append(p * (1.0 - p))
        return [g], [h]
    K = len(F[0])
    G = [[0.0] * n for _ in range(K)]
    H = [[0.0] * n for _ in range(K)]
    for i in range(n):
        m = max(F[i])
        e = [math.exp(f - m) for f in F[i]]
        s = 0.0
        for v in e:
            s = s + v
        for k in range(K):
            p = e[k] / s
            G[k][i] = p - (1.0 if int(y[i]) == k else 0.0)
            H[k][i] = p * (1.0 - p)
    return G, H


def _goes_left(v, thr, miss_left):
    """A split's test: x <= thr sends x to the first child; a missing x (NaN) goes where the
    split learned (miss_left)."""
    return miss_left if math.isnan(v) else v <= thr


class _Node:
    def __init__(self, value):
        self.value = value
        self.feature = -1
        self.threshold = 0.0
        self.miss_left = False
        self.gain = 0.0
        self.left = self.right = None


class _Booster:
    def __init__(self, n_estimators=10, learning_rate=0.3, max_depth=6, reg_lambda=1.0, gamma=0.0,
                 min_child_weight=1.0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.reg_lambda = reg_lambda
        self.gamma = gamma
        self.min_child_weight = min_child_weight

    def _leaf(self, G, H):
        den = H + self.reg_lambda
        return self.learning_rate * (-G / den) if den > 0.0 else 0.0

    def _score(self, G, H):
        den = H + self.reg_lambda
        return G * G / den if den > 0.0 else 0.0

    def _grow(self, X, g, h, rows, depth):
        G = H = 0.0
        for i in rows:
            G = G + g[i]
            H = H + h[i]
        node = _Node(self._leaf(G, H))
        if (self.max_depth is not None and depth >= self.max_depth) or len(rows) < 2:
            return node
        best = None   # (children score, feature, threshold, missing values to the first child)
        for f in range(len(X[0])):
            vals = sorted(set(X[i][f] for i in rows if not math.isnan(X[i][f])))
            has_missing = any(math.isnan(X[i][f]) for i in rows)
            cuts = vals[:-1] + (vals[-1:] if has_missing else [])
            candidates = [(self._after[f].get(a, math.inf), False) for a in cuts]
            if has_missing and vals:
                candidates += [(-math.inf, True)] + [(self._after[f][a], True) for a in vals[:-1]]
            for thr, miss_left in candidates:
                GL = HL = GR = HR = 0.0
                for i in rows:
                    if _goes_left(X[i][f], thr, miss_left):
                        GL += g[i]
                        HL += h[i]
                    else:
                        GR += g[i]
                        HR += h[i]
                if self.min_child_weight > 0.0 and (HL < self.min_child_weight or HR < self.min_child_weight):
                    continue
                sc = self._score(GL, HL) + self._score(GR, HR)
                if best is None or sc > best[0] + 1e-12 * abs(best[0]):
                    best = (sc, f, thr, miss_left)
        if best is None:
            return node
        sc, f, thr, miss_left = best
        gain = 0.5 * (sc - self._score(G, H))
        if not (gain > self.gamma) or not (gain > 1e-12 * sc):
            return node
        node.feature, node.threshold, node.miss_left, node.gain = f, thr, miss_left, gain
        node.left = self._grow(X, g, h, [i for i in rows if _goes_left(X[i][f], thr, miss_left)], depth + 1)
        node.right = self._grow(X, g, h, [i for i in rows if not _goes_left(X[i][f], thr, miss_left)],
                                depth + 1)
        return node

    @staticmethod
    def _eval(node, x):
        while node.feature >= 0:
            node = node.left if _goes_left(x[node.feature], node.threshold, node.miss_left) else node.right
        return node.value

    def _boost(self, X, y, F0, loss):
        X = [list(map(float, r)) for r in np.asarray(X)]
        # the threshold after each training value: the midpoint to the next distinct value of the
        # whole training set (smml's bin edges when there are at most max_bins values)
        self._after = []
        for f in range(len(X[0])):
            vals = sorted(set(r[f] for r in X if not math.isnan(r[f])))
            after = {}
            for a, b in zip(vals[:-1], vals[1:]):
                thr = a / 2.0 + b / 2.0
                after[a] = a if (thr >= b or thr < a) else thr
            self._after.append(after)
        n, K = len(X), len(F0)
        F = [list(F0) for _ in range(n)]
        self.F0_ = list(F0)
        self.trees_ = []
        for _ in range(self.n_estimators):
            Gs, Hs = grad_hess(loss, y, F)
            round_trees = [self._grow(X, Gs[k], Hs[k], list(range(n)), 0) for k in range(K)]
            for i in range(n):
                for k in range(K):
                    F[i][k] += self._eval(round_trees[k], X[i])
            self.trees_.append(round_trees)
        return self

    def raw(self, X):
        out = []
        for x in np.asarray(X, dtype=float):
            f = list(self.F0_)
            for rt in self.trees_:
                for k, t in enumerate(rt):
                    f[k] += self._eval(t, x)
            out.append(f)
        return np.array(out)


class GradientBoostingRegressor(_Booster):
    """002's square loss (y - y')^2: g = -2 (y - F), h = 2; F_0 = mean(y)."""

    def fit(self, X, y):
        y = [float(v) for v in y]
        s = 0.0
        for v in y:
            s = s + v
        return self._boost(X, y, [s / len(y)], "squared_error")

    def predict(self, X):
        return self.raw(X)[:, 0]


class GradientBoostingClassifier(_Booster):
    """Logistic loss (two classes) or softmax (more); F_0 the log-odds / log class frequencies."""

    def fit(self, X, y):
        self.classes_, yi = np.unique(np.asarray(y), return_inverse=True)
        yi = [int(v) for v in yi]
        K = len(self.classes_)
        n = len(yi)
        if K == 2:
            p = sum(yi) / n                      # integers: exact
            return self._boost(X, [float(v) for v in yi], [math.log(p) - math.log1p(-p)], "log_loss")
        return self._boost(X, [float(v) for v in yi], [math.log(yi.count(k) / n) for k in range(K)], "softmax")

    def predict_proba(self, X):
        F = self.raw(X)
        if F.shape[1] == 1:
            p = 1.0 / (1.0 + np.exp(-F[:, 0]))
            return np.column_stack([1.0 - p, p])
        E = np.exp(F - F.max(axis=1, keepdims=True))
        return E / E.sum(axis=1, keepdims=True)

    def predict(self, X):
        P = self.predict_proba(X)
        return self.classes_[np.argmax(P, axis=1)]
