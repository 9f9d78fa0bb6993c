r"""
Perceptron: updates and the convergence theorem
===============================================

000, "Training linear classifiers", Theorem 3: on a linearly separable set the
Perceptron makes at most
:math:`\bigl(\min \lVert u\rVert^2\bigr)\bigl(\max_t \lVert x_t\rVert^2\bigr)` updates,
the minimum over the u with :math:`y_t u^\top x_t \ge 1`. The bound is evaluated with the separator of
:class:`smml.linear.LinearProgramClassifier`, rescaled to margin 1.
"""
import numpy as np

from smml.plot import plot_perceptron

rng = np.random.default_rng(0)
X = rng.normal(size=(1200, 5))
s = X @ np.array([1.0, -0.5, 0.3, 0.8, -1.2]) + 0.1
keep = np.abs(s) > 0.1                     # a margin: the set is linearly separable
X, y = X[keep][:400], (s[keep][:400] > 0).astype(int)
plot_perceptron(X, y, max_epochs=30)
