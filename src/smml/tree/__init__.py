"""Tree predictors (000 "Tree Predictors", "Risk analysis for tree predictors"; 002 "Tree-based classifiers").

Growth (000): start from a single leaf labelled with the most frequent label; repeatedly
replace a leaf by an internal node carrying a binary test and two new leaves, the first
child receiving the examples the test sends to 1.  ``growth="best"`` expands the leaf whose
best split decreases the training objective ``sum_leaves N_leaf * psi(leaf)`` the most (ties:
the leaf created first; with ``split_score="002"``: the largest score); ``growth="depth"``
expands the first child before the second (depth-first).  A leaf is not split when: its depth
is ``max_depth``; it has fewer than ``min_samples_split`` examples; no split leaves
``min_samples_leaf`` examples on each side; the best decrease divided by the total training
weight is below ``min_impurity_decrease``; or no split decreases the objective at all (000:
"the algorithm might even get stuck" with psi = min; the decrease must exceed 1e-12 times the
node weight, to absorb rounding).  (``split_score="002"``: the last two rules are on the score,
see below.)
Growth stops when the tree has ``max_leaf_nodes`` leaves (the N of 000's bounds counts
nodes: a tree with L leaves has N = 2L - 1 nodes).

Splitting functions psi (000, 003 section 3), for the weighted class proportions p_k of a node:

- ``"error"``:  1 - max_k p_k   (binary: min(p, 1 - p), the training error of 000)
- ``"gini"``:   sum_k p_k (1 - p_k) (002's Gini impurity; binary: 2p(1 - p))
- ``"entropy"``: (1/2) sum_k -p_k log2 p_k (002's entropy halved; binary: 000's scaled entropy)
- ``"sqrt"``:   (1/2) sum_k sqrt(p_k (1 - p_k)) (binary: sqrt(p(1 - p)) of 003)

Split scores (``split_score``).  By default (``"weighted"``) a split of node I into I_L, I_R is
scored by 000's decrease of the training objective ``sum_leaves N_leaf psi(leaf)`` (weights W:
the weighted numbers of examples),

    ``W psi(I) - W_L psi(I_L) - W_R psi(I_R)``,

the children weighted by their share of the node.  It is the default because it is the
decrease of the objective the growth minimises: each psi is concave, so by Jensen's inequality
(000) ``psi(I) >= (W_L/W) psi(I_L) + (W_R/W) psi(I_R)`` and a split never increases it (with
psi = "error" the objective is the training error, which thus never goes up as the tree grows).
Regression: leaves predict the weighted mean and the score is the decrease of the weighted
squared error, ``W V(I) - W_L V(I_L) - W_R V(I_R)`` (V the weighted variance: the CART weights
``|I_L|/|I|``, as scikit-learn).

``split_score="002"`` uses 002's slide formulas literally ("ID3 and C4.5", "CART trees,
classification", "CART trees for regression"), with *unweighted* children:

- classification: ``psi(I) - psi(I_L) - psi(I_R)`` for the chosen psi: with ``"entropy"``
  002's C4.5 score ``H(I) - H(I_L) - H(I_R)`` halved (smml's entropy is 000's scaled entropy,
  H / 2: the same argmax, half the value), with ``"gini"`` 002's CART score
  ``G(I) - G(I_L) - G(I_R)``;
- regression: ``V(I) - (W_L^2 V(I_L) + W_R^2 V(I_R)) / W^2``, 002's ``|I_L|^2/|I|^2`` weights
  with the example weights generalising the counts.

These are not decreases of the training objective: a classification score can be negative
for every split (a node with p = 1/2 split into two children with p near 1/2), and the
regression score is positive for every split of a non-constant node.  The best split maximises
the score (same tie rule as below) and a split is made when its score exceeds the rounding
tolerance (1e-12, in psi units; regression: 1e-12 times the node's weighted mean of y^2) and
is at least ``min_impurity_decrease`` (002's "do a split only if gain greater than gamma"),
compared with the score itself (not divided by the training weight as in the default);
``Tree.improvement`` holds the score and ``growth="best"`` expands the leaf with the largest
score.  Only with the exact splitter (``splitter="auto"`` resolves to ``"exact"``) and
numerical features: ``splitter="hist"`` or ``categorical_features`` raise ValueError.

Tests: numerical ``x_i <= threshold``; categorical ``x_i in S`` for a subset S of the
categories (000's ``smoker in {yes, ex}``).  For binary classification and regression the
categories present at a node are ordered by the proportion of the second class / the mean
target and the best prefix of that order is taken: an optimal subset (Breiman et al. 1984).
For multiclass the order is by the proportion of the node's most frequent class (a heuristic,
not always optimal).  Categories unseen at a node or in training go to the second child.

Tie rule among equally good splits: lowest feature index, then lowest threshold (numerical) or
shortest prefix (categorical).  Leaf labels (000): the most frequent label; ties go to the
class that sorts last (000: "+1 if N+ >= N-").

Splitters: ``"exact"`` tries every threshold between consecutive distinct values (each
feature is sorted once; nodes are partitioned in place keeping the order; the threshold is the
midpoint of the two values);  ``"hist"`` bins each feature once into at most ``max_bins``
quantile bins (bin edges at midpoints between values; with at most ``max_bins`` distinct values
it makes the same partitions as ``"exact"``, its threshold being the lowest bin edge between the
two values) and scans histograms;  ``"auto"`` is ``"hist"`` from 20,000 samples on.

Parallelism (OpenMP, ``n_jobs``): the split search of large nodes runs over features in
parallel, one record per feature and a serial argmin; from 20,000 samples on and without
``max_leaf_nodes``, the subtrees of the nodes with fewer than n/16 examples are grown
independently (in parallel) and appended in a fixed order.  The tree is the same as with the
plain growth (only node numbering, and the ``max_features`` draws, differ), and it never
depends on the thread count.  The whole growth runs without the GIL.
"""
# The package's tunables live here, in the namespace users and tests see (``smml.tree._GRAIN``
# set with monkeypatch reaches the growth): smml.tree._classes reads them at fit time.
_AUTO_HIST_MIN_SAMPLES = 20_000
_DECOMPOSE_MIN = 20_000   # from this many samples on, subtrees below n/16 samples grow independently
# Threading grains (smml._threads.threads_for): the least work worth a thread of its own.
#: samples x features: a node's split search and partition run on several threads from 2 grains
#: on; the independent subtrees on several threads from 8 grains of the tree's whole n x d
_GRAIN = 32_768

from smml._binning import apply_bins, bin_edges, bin_features, sort_columns, sort_columns_ranked  # noqa: E402,F401
from smml.tree._tree_record import Tree  # noqa: E402
from smml.tree._classes import TreeClassifier, TreeRegressor  # noqa: E402

__all__ = ["TreeClassifier", "TreeRegressor", "Tree", "sort_columns", "bin_edges", "bin_features"]

# The public classes keep their path from before the split into modules: pickles and smml.save
# files name smml.tree.Tree / smml.tree.TreeClassifier / smml.tree.TreeRegressor, and smml.load
# trusts a class under the module path it is found at (smml._discovery.model_types), so files
# saved before the split still load and new files are the same as before.
Tree.__module__ = TreeClassifier.__module__ = TreeRegressor.__module__ = __name__
