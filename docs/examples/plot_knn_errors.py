"""
k-NN: training and test error against k
=======================================

000, "The Nearest Neighbour algorithm": the training error of k-NN is 0 for
:math:`k = 1` (each training point is its own nearest neighbour, barring duplicates
with other labels) and tends to grow with k; small k can overfit and large k
underfit. What the test error does in between depends on the data: on this split
it is smallest for several k, 1-NN among them.
"""
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from smml.plot import knn_error_table, plot_knn_errors

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
plot_knn_errors(X_train, y_train, X_test, y_test, ks=range(1, 40, 2))

# %%
# The numbers behind the figure: the test error is smallest at these k. With 171
# test examples one mistake is 0.006 of test error, and the Hoeffding interval of
# each test error (000, *Bounding the risk*) is far wider than the differences: the
# test set cannot tell these k apart. Choosing k is a job for
# :func:`~smml.model_selection.tune` or nested CV (see
# :doc:`plot_nested_cv_compare`), not for the test set.
table = knn_error_table(X_train, y_train, X_test, y_test, ks=range(1, 40, 2))
best = table["test_error"].min()
print(f"smallest test error {best:.4f} at k =", table["k"][np.isclose(table["test_error"], best)])
