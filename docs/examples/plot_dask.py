"""
The same results on Dask
========================

:mod:`smml.dask` runs smml on dask arrays: on the ``distributed.Client`` of a cluster
when one was created, else (as here, but for the last part, which starts a
``LocalCluster``) on dask's local threads. The results are the
in-memory ones, bit for bit. This example uses a small array so that it runs in
seconds; on a cluster only the line creating the ``Client`` changes (see the
:doc:`Dask page of the user guide </user_guide/dask>`).
"""
import dask.array as da
import numpy as np
from sklearn.datasets import make_blobs

import smml.dask
from smml.cluster import KMeans
from smml.neighbors import KNNClassifier

X, y = make_blobs(n_samples=20_000, centers=5, n_features=8, random_state=0)
Xd = da.from_array(X, chunks=(4096, -1))

# %%
# k-means (001's Lloyd iterations) on the dask array, from the same initial
# centroids as the in-memory :class:`~smml.cluster.KMeans`:
init = X[:5]
local = KMeans(n_clusters=5, init=init, tol=0).fit(X)
dist = smml.dask.KMeans(n_clusters=5, init=init, tol=0).fit(Xd)
print("same centroids:", np.array_equal(local.cluster_centers_, dist.cluster_centers_))
print("same labels:", np.array_equal(local.labels_, np.asarray(dist.labels_)))
print("iterations:", local.n_iter_, dist.n_iter_)

# %%
# Any fitted smml estimator predicts a dask array block by block of rows, lazily:
knn = KNNClassifier(n_neighbors=5).fit(X[:2000], y[:2000])
labels = smml.dask.predict(knn, Xd)          # a dask array, nothing computed yet
print(labels)
print("equal to the in-memory prediction:", np.array_equal(labels.compute(), knn.predict(X)))

# %%
# k-NN whose training set stays sharded (one shard per row block here): each shard
# answers with its own k' closest points (000's tie rule) and the candidates are
# merged with the same rule, so the predictions are those of the in-memory k-NN.
sharded = smml.dask.KNNClassifier(n_neighbors=5).fit(Xd[:8000], y[:8000])
Q = X[-500:]
print("sharded k-NN equals k-NN:",
      np.array_equal(np.asarray(sharded.predict(da.from_array(Q, chunks=250))),
                     KNNClassifier(n_neighbors=5).fit(X[:8000], y[:8000]).predict(Q)))

# %%
# Logistic regression on the dask array (one-vs-rest over the 5 classes): the rows stay
# where they are, each L-BFGS evaluation adds the blocks' loss and gradient sums in block
# order. The blocks hold whole 512-row chunks of the compiled loss kernel, so the fit is
# the in-memory one bit for bit; the fitted model is an in-memory one.
from smml.linear import LogisticRegression

local_lr = LogisticRegression().fit(X, y)
dist_lr = smml.dask.LogisticRegression().fit(Xd, da.from_array(y, chunks=4096))
print("same weights:", np.array_equal(local_lr.coef_, dist_lr.coef_),
      "- predicts numpy:", dist_lr.predict(X[:3]))

# %%
# Gradient boosting on a cluster. A ``LocalCluster`` of two workers (threads of this
# process here, to keep the example light; ``processes=True``, the default, starts
# worker processes as on a real cluster). Each worker holds its row blocks for the whole
# fit; the workers run the boosting rounds together, summing each level's histograms
# between them, and the driver makes one call. With the same ``random_state`` the
# model is the in-memory one, bit for bit.
from distributed import Client, LocalCluster

from smml.ensemble import GradientBoostingClassifier

yb = (y >= 2).astype(int)
with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
        Client(cluster):
    gb = smml.dask.GradientBoostingClassifier(n_estimators=20, max_depth=4, random_state=0).fit(
        Xd, da.from_array(yb, chunks=4096))
local_gb = GradientBoostingClassifier(n_estimators=20, max_depth=4, random_state=0).fit(X, yb)
print("same trees and probabilities:",
      np.array_equal(gb.predict_proba(X), local_gb.predict_proba(X)),
      "- an in-memory model:", type(gb.to_local()).__name__)
