r"""
Pegasos: the objective and its bound
====================================

003, section 12: for the SVM objective
:math:`F(w) = \frac{\lambda}{2}\lVert w\rVert^2 + \frac{1}{m}\sum_t [1 - y_t w^\top x_t]_+`,
the average iterate :math:`\bar w` of T Pegasos steps satisfies
:math:`\mathbb{E}[F(\bar w)] - F(w^*) \le \frac{G^2}{2\lambda T}(\ln T + 1)`.
:math:`F(w^*)` is computed from the dual. See also :class:`smml.linear.Pegasos`.
"""
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

from smml.plot import plot_pegasos

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
plot_pegasos(X, y, lam=1e-2, n_iters=np.unique(np.logspace(1, 5, 12).astype(int)))
