"""
k-NN: training and test error against k
=======================================

000, "The Nearest Neighbour algorithm": the training error of k-NN grows with k
(it is 0 for k = 1), the test error is smallest at a k whose training error is
above 0; small k overfits, large k underfits.
"""
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from smml.plot import plot_knn_errors

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
scaler = StandardScaler().fit(X_train)
plot_knn_errors(scaler.transform(X_train), y_train, scaler.transform(X_test), y_test, ks=range(1, 40, 2))
