"""
Pegasos: the objective and its bound
====================================

003, section 12: for the SVM objective F(w) = lam/2 ||w||^2 + (1/m) sum_t [1 - y_t w.x_t]_+,
the average iterate of T Pegasos steps satisfies
E[F(w_bar)] - F(w*) <= G^2 / (2 lam T) (ln T + 1). F(w*) is computed from the dual.
"""
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

from smml.plot import plot_pegasos

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
plot_pegasos(X, y, lam=1e-2, n_iters=np.unique(np.logspace(1, 5, 12).astype(int)))
