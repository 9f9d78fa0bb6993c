"""Plain-Python tree growth of 000 "Tree Predictors" (the oracle for smml.tree's exact splitter).

Growth: one leaf; repeatedly pick a leaf (best-first: the largest decrease of the training
objective, ties to the leaf created first; or depth-first) and replace it with an internal
node and two leaves.  Each split is found by exhaustive search: every feature, every
threshold between consecutive distinct values (midpoint), the children's cost
``W_L psi(L) + W_R psi(R)`` recomputed from scratch for each candidate.  Categorical
features: categories ordered by a key (see smml.tree) and every prefix tried;
:func:`best_categorical_subset_exhaustive` tries every subset instead.

``split_score="002"``: 002's slide formulas instead of the weighted decrease (see smml.tree):
the children's cost is ``psi(L) + psi(R)`` (classification, psi = W psi / W) or
``W_L^2 V(L) + W_R^2 V(R)`` (regression), the score ``psi(I) - psi(L) - psi(R)`` or
``V(I) - (W_L^2 V(L) + W_R^2 V(R)) / W^2``; a split is made when the score exceeds 1e-12
(regression: 1e-12 times the node's mean w y^2) and is at least min_impurity_decrease.

Same tie rules and stopping rules as smml.tree; no max_features, no histograms.
"""
import math
from itertools import combinations

import numpy as np

__all__ = ["TreeClassifier", "TreeRegressor", "psi_cost", "best_categorical_subset_exhaustive"]


def psi_cost(wk, criterion):
    """W * psi(p) for class weights wk (same arithmetic, in the same order, as the kernel)."""
    W = 0.0
    for v in wk:
        W += v
    if W <= 0.0:
        return 0.0
    if criterion == "error":
        return W - max(wk)
    if criterion == "gini":
        s = 0.0
        for v in wk:
            s = s + v * v
        return W - s / W
    if criterion == "entropy":
        s = 0.0
        for v in wk:
            if v > 0.0:
                s = s - v * math.log2(v / W)
        return 0.5 * s
    if criterion == "sqrt":
        s = 0.0
        for v in wk:
            r = W - v
            if r > 0.0 and v > 0.0:
                s = s + math.sqrt(v * r)
        return 0.5 * s
    raise ValueError(criterion)


def _sq_sse(S, Q, W):
    """W^2 V = W (Q - S^2 / W) of a side (W, S = sum w y, Q = sum w y^2), as the kernel."""
    if W <= 0.0:
        return 0.0
    v = Q - S * S / W
    return W * v if v > 0.0 else 0.0


class _RefTree:
    def __init__(self, criterion, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_impurity_decrease=0.0, max_leaf_nodes=None, growth="best", categorical_features=(),
                 split_score="weighted"):
        if split_score not in ("weighted", "002"):
            raise ValueError(f"split_score must be 'weighted' or '002', got {split_score!r}")
        self.split_score = split_score
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.growth = growth
        self.categorical_features = tuple(categorical_features or ())

    # -- statistics of a set of examples -------------------------------------
    def _stats(self, idx):
        """(W, class weights or (S, Q))."""
        W = 0.0
        if self._clf:
            wk = [0.0] * self.n_classes_
            for i in idx:
                wk[self._y[i]] += self._w[i]
                W += self._w[i]
            return W, wk
        S = Q = 0.0
        for i in idx:
            W += self._w[i]
            S += self._w[i] * self._y[i]
            Q += self._w[i] * self._y[i] * self._y[i]
        return W, (S, Q)

    def _children_cost(self, L, R):
        WL, sL = self._stats(L)
        WR, sR = self._stats(R)
        if self.split_score == "002":
            if self._clf:      # psi(L) + psi(R), unweighted (002)
                cl = psi_cost(sL, self.criterion)
                cr = psi_cost(sR, self.criterion)
                return (cl / WL if WL > 0.0 else 0.0) + (cr / WR if WR > 0.0 else 0.0)
            return _sq_sse(sL[0], sL[1], WL) + _sq_sse(sR[0], sR[1], WR)    # W_L^2 V_L + W_R^2 V_R
        if self._clf:
            return psi_cost(sL, self.criterion) + psi_cost(sR, self.criterion)
        s = 0.0
        if WL > 0.0:
            s = s + sL[0] * sL[0] / WL
        if WR > 0.0:
            s = s + sR[0] * sR[0] / WR
        return -s

    def _cat_key_class(self, idx):
        W, wk = self._stats(idx)
        if self.n_classes_ == 2:
            return 1
        kmaj = 0
        for k in range(1, self.n_classes_):
            if wk[k] >= wk[kmaj]:
                kmaj = k
        return kmaj

    def _best_split(self, idx, depth):
        """None or (improvement, feature, test) with test ('num', thr) / ('cat', frozenset)."""
        n = len(idx)
        if self.max_depth is not None and depth >= self.max_depth:
            return None
        if n < self.min_samples_split or n < 2 * self.min_samples_leaf:
            return None
        W, st = self._stats(idx)
        if self._clf:
            parent = psi_cost(st, self.criterion)
            scale = W
            if parent <= 1e-12 * scale:
                return None
        else:
            S, Q = st
            parent = -(S * S / W) if W > 0 else 0.0
            scale = Q
            if Q - S * S / W <= 1e-12 * Q:
                return None
        best = None   # (cost, feature, test)
        msl = self.min_samples_leaf
        for f in range(self._X.shape[1]):
            col = {i: self._X[i, f] for i in idx}
            if f in self.categorical_features:
                kclass = self._cat_key_class(idx) if self._clf else None
                cats = sorted(set(int(col[i]) for i in idx))
                keys = []
                for c in cats:
                    members = [i for i in idx if int(col[i]) == c]
                    Wc, sc = self._stats(members)
                    if self._clf:
                        kv = sc[kclass] / Wc if Wc > 0 else 0.0
                    else:
                        kv = sc[0] / Wc if Wc > 0 else 0.0
                    keys.append((kv, c))
                keys.sort()
                for j in range(len(keys) - 1):
                    subset = frozenset(c for _, c in keys[:j + 1])
                    L = [i for i in idx if int(col[i]) in subset]
                    R = [i for i in idx if int(col[i]) not in subset]
                    if len(L) < msl or len(R) < msl:
                        continue
                    c = self._children_cost(L, R)
                    if best is None or c < best[0]:
                        best = (c, f, ("cat", subset))
                continue
            values = sorted(set(col.values()))
            for a, b in zip(values[:-1], values[1:]):
                thr = a / 2.0 + b / 2.0
                if thr >= b or thr < a:
                    thr = a
                L = [i for i in idx if col[i] <= thr]
                R = [i for i in idx if col[i] > thr]
                if len(L) < msl or len(R) < msl:
                    continue
                c = self._children_cost(L, R)
                if best is None or c < best[0]:
                    best = (c, f, ("num", thr))
        if best is None:
            return None
        if self.split_score == "002":
            if self._clf:
                improvement = parent / W - best[0]          # psi(I) - psi(L) - psi(R)
                scale = 1.0
            else:
                S, Q = st
                V = max((Q - S * S / W) / W, 0.0)
                improvement = V - best[0] / (W * W)          # V(I) - (W_L^2 V_L + W_R^2 V_R) / W^2
                scale = Q / W
            if not improvement > 1e-12 * scale or improvement < self.min_impurity_decrease:
                return None
            return improvement, best[1], best[2]
        improvement = parent - best[0]
        if not improvement > 1e-12 * scale or improvement < self.min_impurity_decrease * self._W_root:
            return None
        return improvement, best[1], best[2]

    def _goes_left(self, x, f, test):
        if test[0] == "cat":
            return int(x[f]) in test[1]
        return x[f] <= test[1]

    def _new_node(self, idx, depth):
        W, st = self._stats(idx)
        node = {"idx": idx, "depth": depth, "feature": -1, "test": None, "left": -1, "right": -1,
                "n": len(idx), "w": W}
        if self._clf:
            node["value"] = list(st)
            # 000: the most frequent label; ties -> the class that sorts last
            best = 0
            for k in range(len(st)):
                if st[k] >= st[best]:
                    best = k
            node["label"] = best
        else:
            node["value"] = st[0] / W if W > 0 else 0.0
        self.nodes_.append(node)
        return len(self.nodes_) - 1

    def _fit(self, X, y, sample_weight):
        self._X = np.asarray(X, dtype=np.float64)
        n = self._X.shape[0]
        self._w = [1.0] * n if sample_weight is None else [float(v) for v in sample_weight]
        self.nodes_ = []
        root = self._new_node(list(range(n)), 0)
        self._W_root = self.nodes_[root]["w"]
        frontier = []   # (node id, split)
        s = self._best_split(self.nodes_[root]["idx"], 0)
        if s is not None:
            frontier.append((root, s))
        n_leaves = 1
        while frontier:
            if self.max_leaf_nodes is not None and n_leaves >= self.max_leaf_nodes:
                break
            if self.growth == "best":
                j = 0
                for t in range(1, len(frontier)):
                    if frontier[t][1][0] > frontier[j][1][0] or (
                            frontier[t][1][0] == frontier[j][1][0] and frontier[t][0] < frontier[j][0]):
                        j = t
                v, (imp, f, test) = frontier.pop(j)
            else:
                v, (imp, f, test) = frontier.pop()
            node = self.nodes_[v]
            L = [i for i in node["idx"] if self._goes_left(self._X[i], f, test)]
            R = [i for i in node["idx"] if not self._goes_left(self._X[i], f, test)]
            node["feature"], node["test"], node["improvement"] = f, test, imp
            n_leaves += 1
            kids = []
            for part in (L, R):
                c = self._new_node(part, node["depth"] + 1)
                kids.append((c, self._best_split(part, node["depth"] + 1)))
            node["left"], node["right"] = kids[0][0], kids[1][0]
            order = kids if self.growth == "best" else kids[::-1]
            for c, s in order:
                if s is not None:
                    frontier.append((c, s))
        return self

    def apply(self, X):
        X = np.asarray(X, dtype=np.float64)
        out = []
        for x in X:
            v = 0
            while self.nodes_[v]["left"] >= 0:
                nd = self.nodes_[v]
                v = nd["left"] if self._goes_left(x, nd["feature"], nd["test"]) else nd["right"]
            out.append(v)
        return np.array(out, dtype=np.intp)


class TreeClassifier(_RefTree):
    """Reference tree classifier (000 "Tree Predictors"), criterion in error/gini/entropy/sqrt."""

    _clf = True

    def __init__(self, criterion="gini", **kw):
        super().__init__(criterion, **kw)

    def fit(self, X, y, sample_weight=None):
        self.classes_, yenc = np.unique(np.asarray(y), return_inverse=True)
        self.n_classes_ = len(self.classes_)
        self._y = [int(v) for v in yenc]
        return self._fit(X, y, sample_weight)

    def predict(self, X):
        return self.classes_[[self.nodes_[v]["label"] for v in self.apply(X)]]


class TreeRegressor(_RefTree):
    """Reference regression tree (002 "CART trees for regression"): leaf = mean."""

    _clf = False

    def __init__(self, criterion="squared_error", **kw):
        super().__init__(criterion, **kw)

    def fit(self, X, y, sample_weight=None):
        self._y = [float(v) for v in np.asarray(y, dtype=np.float64)]
        return self._fit(X, y, sample_weight)

    def predict(self, X):
        return np.array([self.nodes_[v]["value"] for v in self.apply(X)])


def best_categorical_subset_exhaustive(codes, y, w=None, criterion="gini", classification=True):
    """Smallest children cost over every subset S of the categories present (x in S -> first child).

    Used to check Breiman's ordering result: for binary classification and regression the
    best prefix of the categories ordered by mean target reaches this minimum.
    """
    codes = [int(c) for c in codes]
    w = [1.0] * len(codes) if w is None else list(w)
    cats = sorted(set(codes))
    best = math.inf
    for r in range(1, len(cats)):
        for S in combinations(cats, r):
            S = set(S)
            L = [i for i in range(len(codes)) if codes[i] in S]
            R = [i for i in range(len(codes)) if codes[i] not in S]
            if classification:
                K = int(max(y)) + 1
                wl, wr = [0.0] * K, [0.0] * K
                for i in L:
                    wl[int(y[i])] += w[i]
                for i in R:
                    wr[int(y[i])] += w[i]
                c = psi_cost(wl, criterion) + psi_cost(wr, criterion)
            else:
                c = 0.0
                for part in (L, R):
                    W = S_ = Q = 0.0
                    for i in part:
                        W += w[i]
                        S_ += w[i] * y[i]
                        Q += w[i] * y[i] * y[i]
                    c += Q - S_ * S_ / W
            best = min(best, c)
    return best
