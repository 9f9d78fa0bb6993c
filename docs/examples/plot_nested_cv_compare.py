"""
Tuning k by nested CV, then comparing two learners with Wilcoxon
=================================================================

Two questions of the notes on one data set:

* *How good is "k-NN with k tuned by CV"?* Nested cross-validation (003 section 6,
  Algorithm 1) estimates the risk of the whole procedure, tuning included: each
  outer fold tunes k by an internal CV on the other folds, then tests the chosen k
  on its own fold.
* *Is k-NN better than a tree here?* 001's Wilcoxon test ("Wilcoxon Test") pairs the
  two learners' errors on the same folds and asks whether the differences could be
  due to chance.
"""
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from smml.model_selection import compare, nested_cv_estimate
from smml.neighbors import KNNClassifier
from smml.tree import TreeClassifier

X, y = load_breast_cancer(return_X_y=True)
knn = make_pipeline(StandardScaler(), KNNClassifier())
grid = {"knnclassifier__n_neighbors": [1, 5, 9, 15, 25]}

nested = nested_cv_estimate(knn, grid, X, y, K_outer=5, K_inner=4, shuffle=True, random_state=0)
print(f"nested CV estimate: {nested.estimate:.4f}")
print("k chosen per outer fold:", [p["knnclassifier__n_neighbors"] for p in nested.chosen_params])
print(f"best CV estimate (biased low): {nested.best_cv_estimate:.4f}")

# %%
# The internal CV errors of each outer fold: the curves differ, and so does the k
# each fold chooses. The nested estimate averages the outer folds' test errors of
# those choices.
ks = [p["knnclassifier__n_neighbors"] for p in nested.params]
fig, ax = plt.subplots(figsize=(6, 3.5))
for i, errors in enumerate(nested.inner_cv_errors):
    ax.plot(ks, errors, marker="o", label=f"outer fold {i + 1}")
ax.set_xlabel("k")
ax.set_ylabel("internal CV error")
ax.legend(fontsize="small")
fig.tight_layout()

# %%
# Now the comparison: 10-fold CV repeated twice, the same folds for both learners,
# and the Wilcoxon signed-rank test on the 20 paired differences (two-sided,
# ``alpha=0.05``).
result = compare(make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=9)), TreeClassifier(max_depth=4),
                 X, y, K=10, n_repeats=2, random_state=0)
print(f"CV error: k-NN {result.mean_a:.4f}, tree {result.mean_b:.4f}")
print(f"p-value {result.pvalue:.4g}, significant: {result.significant}, better: {result.better}")

fig, ax = plt.subplots(figsize=(6, 3))
ax.bar(np.arange(len(result.differences)) + 1, result.differences)
ax.axhline(0, color="black", lw=0.8)
ax.set_xlabel("fold")
ax.set_ylabel("error(k-NN) - error(tree)")
fig.tight_layout()
