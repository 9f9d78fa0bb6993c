"""
k-means: the distortion, local optima and restarts
==================================================

:class:`~smml.cluster.KMeans` runs 001's algorithm ("Clustering and the k-means
algorithm"): initial centroids are k training examples drawn at random, then the
assignment step :math:`c_i = \\arg\\min_j \\lVert x_i - \\mu_j \\rVert^2` and the update
step (each :math:`\\mu_j` becomes the mean of its points) alternate until no label
changes. The distortion :math:`J(c, \\mu) = \\sum_i \\lVert x_i - \\mu_{c_i} \\rVert^2`
never increases, so the algorithm converges, but only to a local optimum.
"""
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

from smml.cluster import KMeans, adjusted_rand_index

X, y_true = make_blobs(n_samples=600, centers=6, cluster_std=0.6, random_state=0)

# %%
# 001's plain algorithm is one run to convergence: ``n_init=1, tol=0``.
# ``inertia_path_`` holds J after each assignment step. Different random initial
# centroids end in different local optima.
fig, ax = plt.subplots(figsize=(6, 3.5))
runs = [KMeans(n_clusters=6, n_init=1, tol=0, random_state=seed).fit(X) for seed in range(8)]
for seed, km in enumerate(runs):
    ax.plot(np.arange(1, len(km.inertia_path_) + 1), km.inertia_path_, marker=".",
            label=f"seed {seed}: J = {km.inertia_:.0f}")
ax.set_xlabel("iteration")
ax.set_ylabel("distortion J")
ax.legend(fontsize="x-small", ncol=2)
fig.tight_layout()

# %%
# ``n_init`` restarts keep the run of smallest J. The adjusted Rand index compares
# the clusters with the blobs that generated the data (1: the same partition).
worst = max(runs, key=lambda km: km.inertia_)
best = KMeans(n_clusters=6, n_init=10, tol=0, random_state=0).fit(X)
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
for ax, km, title in [(axes[0], worst, "worst single run"), (axes[1], best, "best of n_init=10")]:
    ax.scatter(*X.T, c=km.labels_, s=8, cmap="tab10")
    ax.scatter(*km.cluster_centers_.T, c="black", marker="x", s=80)
    ax.set_title(f"{title}: J = {km.inertia_:.0f}, ARI = {adjusted_rand_index(y_true, km.labels_):.2f}",
                 fontsize="small")
fig.tight_layout()
