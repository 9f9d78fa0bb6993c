"""
Comparing two learners: the Wilcoxon signed-rank test
=====================================================

001, "Wilcoxon Test": is k-NN with k = 1 better than with k = 5, or is the difference
chance? Both learners run on the same ten folds; the paired differences of their
fold errors go to a two-sided Wilcoxon signed-rank test.
"""
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from smml.model_selection import compare
from smml.neighbors import KNNClassifier
from smml.plot import plot_compare

X, y = load_breast_cancer(return_X_y=True)
result = compare(make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=1)),
                 make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=5)), X, y, K=10, random_state=0)
print(f"mean errors {result.mean_a:.4f} vs {result.mean_b:.4f}, p = {result.pvalue:.4f}, "
      f"better: {result.better}")
plot_compare(result, names=("1-NN", "5-NN"))
