"""k-nearest-neighbour classification and regression exactly as the notes define them.

000, 'The Nearest Neighbour algorithm' and 002, 'Nearest neighbors' /
'Weighted nearest neighbors'. The rules, for a query x:

- rank the m training points by distance from x and take the k' closest, k'
  the smallest integer >= k such that the (k'+1)-th point is strictly farther
  than the k'-th (all m points if there is no such k'): points tied with the
  k-th are all taken, so the result never depends on the order of the
  training rows;
- classification: the majority label of the taken points; when several labels
  tie for the majority, the *default label*, the most frequent label of the
  training set (``default_label_``; if several labels are equally frequent,
  the smallest in sorted order). The notes state this for binary labels; for
  more classes the same rule is applied literally: any tie for the top vote
  predicts the default label;
- regression: the average of the taken labels.

Distances are compared on values computed exactly as defined (by direct
subtraction, summed in float64 in feature order; Euclidean and Mahalanobis on
the squared distance, Mahalanobis as sum_i sum_j (delta_i VI_ij) delta_j), so
duplicated rows, and points at equal distance, really tie. Mahalanobis finds its
candidates by a Euclidean search on linearly transformed data with a rigorous bound
on the transform's rounding, then ranks them on the exact keys (see
``_KNNBase._search_mahalanobis``). Two search paths give the same points, bit for
bit (``algorithm``):

- brute force: the Euclidean search runs through BLAS gemm (``||x||^2 - 2 x.y +
  ||y||^2``, in float32 for float64 data while the data's scale allows) on
  centred data and then re-ranks the candidates on their exact distances, with a
  rigorous bound on the gemm rounding deciding whether the candidate list
  provably holds every tied point (otherwise that query is scanned exactly); see
  ``smml._core._knn``. Manhattan and Hamming (and data too wide for the gemm filter) are
  scanned exactly by the kd-tree kernel over a one-leaf tree, its keys computed several
  points at a time;
- an exact kd-tree (``smml._core._kdtree``) whose node bounds are lower bounds
  of the exact keys in floating point and which keeps every point tied with the
  k-th.
"""
from smml.neighbors._classes import KNNClassifier, KNNRegressor
from smml.neighbors._shards import (SHARD_MERGE_PAD, Shard, decide_candidates, merge_shard_candidates,
                                    set_decider_classes, shard_decider)

__all__ = ["KNNClassifier", "KNNRegressor"]

# The public classes keep their path from before the split into modules: pickles and smml.save
# files name smml.neighbors.KNNClassifier / KNNRegressor, and smml.load trusts a class under the
# module path it is found at (smml._discovery.model_types), so files saved before the split still
# load and new files are the same as before.
KNNClassifier.__module__ = KNNRegressor.__module__ = Shard.__module__ = __name__
