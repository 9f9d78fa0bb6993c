"""smml on a Dask cluster: blockwise prediction, sharded k-NN, k-means, linear models and gradient
boosting on dask arrays.

Needs the optional ``[dask]`` extra (``pip install "smml[dask]"``: dask and
distributed); the rest of smml never imports dask. Every function and estimator
here runs on the active Dask scheduler: the ``distributed.Client`` of an existing
cluster when one was created (``Client("tcp://scheduler:8786")``), else dask's
local threads. Nothing else changes: the same estimators, the same parameters,
the same results, bit for bit, as the in-memory run (the linear models: to rounding, or
to the solver's tolerance, unless their sums are added in the same order; see below).

- :func:`predict`, :func:`predict_proba`, :func:`transform`: any FITTED smml
  estimator on a dask array, block by block of rows (each block is predicted by
  the in-memory estimator, which predicts every row independently of the others:
  the result is the in-memory one).
- :class:`KNNClassifier`, :class:`KNNRegressor`: k-NN (000, "The Nearest
  Neighbour algorithm") whose training set stays sharded across the workers:
  on a distributed client one shard per worker (consecutive row blocks of the
  training dask array, about as many rows each), on dask's local schedulers one
  per row block. Each shard finds, for each
  query, its own k' closest points (the k' rule of 000 inside the shard); the
  candidates of all shards are merged with the same rule over their union, so
  every point tied with the global k-th is taken, whichever shard holds it.
- :class:`KMeans`: 001's Lloyd iterations on a dask array; each worker holds
  consecutive row blocks of X and their labels (a Dask actor); each iteration
  every worker computes the per-block partial sums of its blocks with smml's
  compiled kernel and the driver reduces them, in block order, into the new
  centroids.
- :class:`LinearRegression`, :class:`RidgeRegression`, :class:`LogisticRegression`:
  the in-memory estimators of :mod:`smml.linear` (subclasses: parameters, predict,
  ``smml.save`` / ``smml.load`` as in memory) fitted on dask arrays. Each row block's
  sums (X^T X, X^T y and column sums for least squares and ridge; the loss and gradient
  sums of the in-memory fit's compiled routine for logistic regression, per L-BFGS
  evaluation, the blocks kept on the workers) are added on the client in block order, and
  the client solves the normal equations or runs scipy's L-BFGS-B as the in-memory fit
  does. On one block the fit is the in-memory one bit for bit (binary and one-vs-rest
  logistic regression also on blocks of whole 512-row chunks); otherwise to rounding, or
  to the solver's tolerance. The single-stream learners (Perceptron, Pegasos, LMS, online
  gradient descent, ``LogisticRegression(solver="sgd")``) update after every example in
  turn and are not distributed.
- :class:`GradientBoostingClassifier`, :class:`GradientBoostingRegressor`: 002's
  second-order boosting on a dask array; the rows stay on the workers (actors), each
  tree grows a level at a time from the workers' histograms summed on the driver, the
  splits chosen by the in-memory kernel's compiled scan; fixed-point gradients make the
  sums exact, so the model is the in-memory one bit for bit (any chunking).

Meta-parallelism (``cv_estimate``, ``tune``, ``nested_cv_estimate``,
``compare``, ``learning_curve``, bagging and forests) needs nothing from this
module: run it inside ``joblib.parallel_config(backend="dask")`` (a
``distributed.Client`` being active) and joblib sends the folds, candidates or
trees to the cluster's workers.
"""
try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
except ImportError as exc:        # pragma: no cover - exercised without the extra only
    raise ImportError("smml.dask needs dask[array] and distributed: install the extra with "
                      "pip install 'smml[dask]'") from exc

# The package's modules: _validation (inputs, the cluster's workers and the split of the rows),
# _blockwise (predict / predict_proba / transform), _knn (sharded k-NN), _kmeans (k-means),
# _linear (least squares, ridge, logistic regression).

#: on a distributed client: one k-NN shard per worker (else one per row block); read at each fit
_SHARD_PER_WORKER = True
#: the merge of the k-NN shards' candidates: at most this many cells per candidate in its
#: padded matrix (``smml.neighbors.merge_shard_candidates``); read at each merge
_MERGE_PAD = 4

from smml.dask._blockwise import predict, predict_proba, transform  # noqa: E402
from smml.dask._kmeans import KMeans  # noqa: E402
from smml.dask._linear import LinearRegression, LogisticRegression, RidgeRegression  # noqa: E402
from smml.dask._gbm import GradientBoostingClassifier, GradientBoostingRegressor  # noqa: E402
from smml.dask._knn import KNNClassifier, KNNRegressor, _merge_taken  # noqa: E402,F401
from smml.dask._validation import _distributed_client, _split_rows  # noqa: E402,F401

__all__ = ["predict", "predict_proba", "transform", "KNNClassifier", "KNNRegressor", "KMeans",
           "LinearRegression", "RidgeRegression", "LogisticRegression",
           "GradientBoostingClassifier", "GradientBoostingRegressor"]

for _name in __all__:                 # documented (and shown) as smml.dask's own names
    globals()[_name].__module__ = __name__
del _name
