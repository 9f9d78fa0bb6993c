"""Plain-Python k-means, 001 "Clustering and the k-means algorithm" line by line (the oracle of smml.cluster).

1. Initialise the centroids mu_1, ..., mu_k: k training examples chosen at random.
2. Repeat until convergence:
   - for every i, c_i = argmin_j ||x_i - mu_j||^2;
   - for every j, mu_j = sum_i 1{c_i = j} x_i / sum_i 1{c_i = j}.

With the rules :class:`smml.cluster.KMeans` documents where the notes are silent, and
the same random draws, so that both give the same result from the same seed: ties to
the lowest centroid index; distances squared, by direct subtraction in float64, summed
feature by feature in order; means in float64 rounded to the data's dtype (a cluster
whose points are all one row: that row exactly); an empty
cluster re-seeded at the farthest point; stop when no label changes, when J decreased by
at most ``tol`` times its previous value, or after ``max_iter`` iterations, then one more
assignment step unless the labels converged. ``sample_weight`` weighs each point in the
means and in J.
"""
import bisect

import numpy as np

from smml._validation import check_random_state
from smml.reference.neighbors import _sq_euclidean

__all__ = ["KMeans", "sq_distance", "assign", "update", "distortion", "kmeans_plus_plus"]


def sq_distance(a, b):
    """||a - b||^2: direct subtraction, summed in float64 in feature order (the k-NN reference's)."""
    return _sq_euclidean(a, b)


def assign(rows, mu):
    """c_i = argmin_j ||x_i - mu_j||^2, the lowest j on ties; and each point's distance."""
    labels, dist = [], []
    for x in rows:
        best, bj = None, None
        for j, m in enumerate(mu):
            e = sq_distance(x, m)
            if best is None or e < best:
                best, bj = e, j
        labels.append(bj)
        dist.append(best)
    return labels, dist


def update(rows, weights, labels, mu, to_dtype):
    """mu_j = weighted mean of the points with c_i = j (kept when the cluster has no weight);
    when every point with c_i = j is the same row x, mu_j = x exactly (its mean in exact
    arithmetic, which the rounded sum / total may miss)."""
    k, d = len(mu), len(rows[0])
    sums = [[0.0] * d for _ in range(k)]
    total = [0.0] * k
    first = [None] * k
    mixed = [False] * k
    for x, w, c in zip(rows, weights, labels):
        for f in range(d):
            sums[c][f] = sums[c][f] + w * x[f]
        total[c] = total[c] + w
        if first[c] is None:
            first[c] = x
        elif any(a != b for a, b in zip(x, first[c])):
            mixed[c] = True
    new = []
    for j in range(k):
        if total[j] > 0 and not mixed[j]:
            new.append([to_dtype(v) for v in first[j]])
        elif total[j] > 0:
            new.append([to_dtype(sums[j][f] / total[j]) for f in range(d)])
        else:
            new.append(list(mu[j]))
    return new, total


def distortion(rows, weights, labels, mu):
    """J(c, mu) = sum_i w_i ||x_i - mu_{c_i}||^2."""
    J = 0.0
    for x, w, c in zip(rows, weights, labels):
        J = J + w * sq_distance(x, mu[c])
    return J


def _draw(rng, weights):
    """An index drawn with probability proportional to ``weights`` (one uniform number)."""
    c, s = [], 0.0
    for v in weights:
        s = s + v
        c.append(s)
    i = bisect.bisect_right(c, rng.random_sample() * c[-1])
    return min(i, len(c) - 1)


def kmeans_plus_plus(rows, weights, k, rng):
    """k-means++ (Arthur and Vassilvitskii, 2007): draws proportional to w_i D(x_i)^2."""
    mu = [list(rows[_draw(rng, weights)])]
    mind = [float("inf")] * len(rows)
    for _ in range(1, k):
        for i, x in enumerate(rows):
            e = sq_distance(x, mu[-1])
            if e < mind[i]:
                mind[i] = e
        pot = [w * m for w, m in zip(weights, mind)]
        s = 0.0
        for v in pot:
            s = s + v
        mu.append(list(rows[_draw(rng, pot if s > 0 else weights)]))
    return mu


def _reseed(rows, weights, labels, dist, total, k):
    """Empty clusters (no weight), in index order, take the farthest points (not at
    distance 0, not the last positive-weight member of their cluster). Returns the moves."""
    members = [0] * k
    for c, w in zip(labels, weights):
        if w > 0:
            members[c] += 1
    cand = sorted((i for i in range(len(rows)) if weights[i] > 0 and dist[i] > 0),
                  key=lambda i: (-dist[i], i))
    moved, pos = 0, 0
    for j in range(k):
        if total[j] > 0:
            continue
        while pos < len(cand) and members[labels[cand[pos]]] < 2:
            pos += 1
        if pos == len(cand):
            break
        i = cand[pos]
        pos += 1
        members[labels[i]] -= 1
        members[j] += 1
        labels[i] = j
        moved += 1
    return moved


class KMeans:
    """The notes' k-means with :class:`smml.cluster.KMeans`'s parameters and rules (one
    thread, plain Python; ``n_init`` runs, the smallest J kept)."""

    def __init__(self, n_clusters=8, *, init="random", n_init="auto", max_iter=300, tol=1e-4,
                 random_state=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _initial(self, X, rows, weights, rng):
        k = self.n_clusters
        if not isinstance(self.init, str):
            return [[float(v) for v in r] for r in np.asarray(self.init, dtype=X.dtype)]
        if self.init == "random":
            pool = np.flatnonzero(np.asarray(weights) > 0)
            return [list(rows[i]) for i in rng.choice(pool, k, replace=False)]
        return kmeans_plus_plus(rows, weights, k, rng)

    def _run(self, rows, weights, mu, to_dtype):
        k = self.n_clusters
        labels = None
        path = []
        converged = False
        it = 0
        for it in range(1, self.max_iter + 1):
            new_labels, dist = assign(rows, mu)
            J = distortion(rows, weights, new_labels, mu)
            path.append(J)
            changed = labels is None or new_labels != labels
            labels = new_labels
            new_mu, total = update(rows, weights, labels, mu, to_dtype)
            moved = 0
            if any(not t > 0 for t in total):
                moved = _reseed(rows, weights, labels, dist, total, k)
                if moved:
                    new_mu, total = update(rows, weights, labels, mu, to_dtype)
            mu = new_mu
            if not changed and not moved:
                converged = True
                break
            if self.tol > 0 and len(path) > 1 and path[-2] - J <= self.tol * path[-2]:
                break
        if not converged:
            labels, _ = assign(rows, mu)
        return mu, labels, distortion(rows, weights, labels, mu), path, it, converged

    def fit(self, X, y=None, sample_weight=None):
        X = np.asarray(X)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        to_dtype = (lambda v: float(np.float32(v))) if X.dtype == np.float32 else float
        rows = [[float(v) for v in r] for r in X]
        weights = [1.0] * len(rows) if sample_weight is None else [float(v) for v in sample_weight]
        rng = check_random_state(self.random_state)
        runs = self.n_init
        if runs == "auto":
            runs = 10 if isinstance(self.init, str) and self.init == "random" else 1
        if not isinstance(self.init, str):
            runs = 1
        best = None
        for _ in range(runs):
            mu0 = self._initial(X, rows, weights, rng)
            run = self._run(rows, weights, mu0, to_dtype)
            if best is None or run[2] < best[2]:
                best = run
        mu, labels, J, path, it, converged = best
        self.cluster_centers_ = np.array(mu, dtype=X.dtype)
        self.labels_ = np.array(labels, dtype=np.int32)
        self.inertia_ = J
        self.inertia_path_ = np.array(path)
        self.n_iter_ = it
        self.converged_ = converged
        return self

    def predict(self, X):
        rows = [[float(v) for v in r] for r in np.asarray(X)]
        return np.array(assign(rows, self.cluster_centers_.tolist())[0], dtype=np.int32)
