"""Plain-Python k-NN, the notes' definition line by line (the oracle of smml.neighbors).

000, 'The Nearest Neighbour algorithm':

1. rank the training points by their distance from x (ties in the ranking by
   training index, which never changes a prediction);
2. take the k' closest points, k' the smallest integer >= k such that the
   (k'+1)-th point is strictly farther than the k'-th (all m points if there
   is no such k');
3. classification: the majority label of the taken points; if several labels
   tie for the majority, the default label (the most frequent training label;
   if several are equally frequent, the smallest in sorted order);
   regression: the average of the taken labels.

002, 'Nearest neighbors' adds the Mahalanobis and Hamming distances and
'Weighted nearest neighbors' the distance-weighted rule (weights 1/distance,
see :class:`smml.neighbors.KNNClassifier` for the reading of the slide and for
zero distances).

Distances are compared on the same numbers as the compiled kernel: Euclidean
and Mahalanobis on the *squared* distance, summed in float64 in feature order.
"""
import math

import numpy as np

__all__ = ["KNNClassifier", "KNNRegressor", "distance_key"]


def _sq_euclidean(a, b):
    s = 0.0
    for ai, bi in zip(a, b):
        t = ai - bi
        s = s + t * t
    return s


def _manhattan(a, b):
    s = 0.0
    for ai, bi in zip(a, b):
        s = s + abs(ai - bi)
    return s


def _hamming(a, b):
    """002: the number of substitutions, i.e. of coordinates that differ."""
    s = 0.0
    for ai, bi in zip(a, b):
        if ai != bi:
            s = s + 1.0
    return s


def _mahalanobis_sq(a, b, VI):
    """002: (x - y)^T S^-1 (x - y), with VI = S^-1: sum_i sum_j (diff_i VI_ij) diff_j in
    the order (i, j); a negative sum (rounding of a positive semi-definite form) is 0."""
    diff = [ai - bi for ai, bi in zip(a, b)]
    s = 0.0
    for i in range(len(diff)):
        for j in range(len(diff)):
            s = s + diff[i] * VI[i][j] * diff[j]
    return s if s > 0.0 else 0.0


def distance_key(metric, a, b, VI=None):
    """The value k-NN ranks on: squared distance for euclidean/mahalanobis, else the distance."""
    if metric == "euclidean":
        return _sq_euclidean(a, b)
    if metric == "manhattan":
        return _manhattan(a, b)
    if metric == "hamming":
        return _hamming(a, b)
    if metric == "mahalanobis":
        return _mahalanobis_sq(a, b, VI)
    raise ValueError(f"unknown metric {metric!r}")


def _covariance_inverse(X):
    """Sample covariance (divisor m - 1) by loops, then its (pseudo-)inverse."""
    m, d = len(X), len(X[0])
    mean = [0.0] * d
    for row in X:                       # left to right: builtin sum() rounds otherwise on 3.12+
        for f in range(d):
            mean[f] = mean[f] + row[f]
    mean = [v / m for v in mean]
    S = [[0.0] * d for _ in range(d)]
    for row in X:
        for i in range(d):
            for j in range(d):
                S[i][j] += (row[i] - mean[i]) * (row[j] - mean[j])
    denom = max(m - 1, 1)
    S = [[v / denom for v in r] for r in S]
    return np.linalg.pinv(np.array(S), hermitian=True).tolist()


class _Base:
    def __init__(self, k=1, metric="euclidean", weights="uniform", VI=None):
        self.k, self.metric, self.weights, self.VI = k, metric, weights, VI

    def fit(self, X, y):
        self.X_ = [[float(v) for v in row] for row in np.asarray(X)]
        self.y_ = list(np.asarray(y).tolist())
        if not 1 <= self.k <= len(self.X_):
            raise ValueError("k must be between 1 and the number of training points")
        self.VI_ = None
        if self.metric == "mahalanobis":
            self.VI_ = (np.asarray(self.VI, dtype=float).tolist() if self.VI is not None
                        else _covariance_inverse(self.X_))
        return self

    def taken(self, x, k=None):
        """[(key, index)] of the k' closest training points, closest first."""
        k = self.k if k is None else k
        x = [float(v) for v in x]
        ranking = sorted((distance_key(self.metric, x, xt, self.VI_), t)
                         for t, xt in enumerate(self.X_))
        kp = k
        while kp < len(ranking) and ranking[kp][0] == ranking[kp - 1][0]:
            kp += 1
        return ranking[:kp]

    def _distance(self, key):
        return math.sqrt(key) if self.metric in ("euclidean", "mahalanobis") else key

    def _weights(self, keys):
        if self.weights == "uniform":
            return [1.0 for _ in keys]
        dist = [self._distance(key) for key in keys]
        if callable(self.weights):
            return [float(w) for w in self.weights(np.array(dist))]
        if self.weights == "slide":         # 002's delta_i / sum_j delta_j (votes / sums normalise)
            if all(dv == 0.0 for dv in dist):
                return [1.0 for _ in dist]
            return list(dist)
        if any(dv == 0.0 for dv in dist):
            return [1.0 if dv == 0.0 else 0.0 for dv in dist]
        return [1.0 / dv for dv in dist]

    def kneighbors(self, X, k=None):
        k = self.k if k is None else k
        D, I = [], []
        for x in np.asarray(X):
            first = self.taken(x, k)[:k]
            D.append([self._distance(key) for key, _ in first])
            I.append([t for _, t in first])
        return np.array(D), np.array(I)


class KNNClassifier(_Base):
    """k-NN classification by majority vote with the notes' tie rules."""

    def fit(self, X, y):
        super().fit(X, y)
        self.classes_ = sorted(set(self.y_))
        counts = {c: 0 for c in self.classes_}
        for label in self.y_:
            counts[label] += 1
        best = max(counts.values())
        self.default_label_ = [c for c in self.classes_ if counts[c] == best][0]
        return self

    def votes(self, x):
        taken = self.taken(x)
        weights = self._weights([key for key, _ in taken])
        votes = {c: 0.0 for c in self.classes_}
        for (_, t), w in zip(taken, weights):
            votes[self.y_[t]] += w
        return votes

    def predict_one(self, x):
        votes = self.votes(x)
        best = max(votes.values())
        winners = [c for c in self.classes_ if votes[c] == best]
        return winners[0] if len(winners) == 1 else self.default_label_

    def predict(self, X):
        return np.array([self.predict_one(x) for x in np.asarray(X)])

    def predict_proba(self, X):
        out = []
        for x in np.asarray(X):
            votes = self.votes(x)
            total = 0.0
            for c in self.classes_:         # in class order, as the kernel's numpy sum (< 8 classes)
                total = total + votes[c]
            out.append([votes[c] / total for c in self.classes_])
        return np.array(out)


class KNNRegressor(_Base):
    """k-NN regression: the (weighted) average of the taken labels."""

    def predict_one(self, x):
        taken = self.taken(x)
        pairs = sorted((key, float(self.y_[t])) for key, t in taken)  # a canonical order
        weights = self._weights([key for key, _ in pairs])
        num, den = 0.0, 0.0
        for (_, yv), w in zip(pairs, weights):
            num = num + w * yv
            den = den + w
        return num / den

    def predict(self, X):
        return np.array([self.predict_one(x) for x in np.asarray(X)])
