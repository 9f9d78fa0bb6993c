"""Kernel methods of the notes: the kernels, the kernel Perceptron, kernel ridge
regression, kernel Pegasos and the exact kernel SVM (003 sections 11 and 12).

Kernels (003 section 11), selected by ``kernel=`` on every estimator:

- ``"linear"``: K(x, x') = x.x';
- ``"poly"`` (the notes' ``"polynomial"``): K_n(x, x') = (1 + x.x')^n, n = ``degree``
  (scikit-learn's ``poly`` kernel with ``gamma=1, coef0=1``);
- ``"rbf"`` (the notes' ``"gaussian"``, the default): K(x, x') = exp(-gamma ||x - x'||^2)
  with scikit-learn's ``gamma``. 003 writes K_w(x, x') = exp(-||x - x'||^2 / (2 w)) with
  a *width* w (003's gamma): w = 1 / (2 gamma), gamma = 1 / (2 w).
  ``gamma="scale"`` (default) is 1 / (d Var(X)) and ``"auto"`` 1 / d, as scikit-learn;
- a callable ``f(A, B)`` returning the (len(A), len(B)) Gram block.

SVM regularisation (003 section 12): 003 minimises lam/2 ||g||^2 + (1/m) sum
hinge; libsvm / scikit-learn minimise 1/2 ||g||^2 + C sum hinge: C = 1 / (lam m).
``KernelSVC`` takes ``C``; ``KernelPegasos`` takes 003's lambda as ``alpha`` and its T
as ``max_iter``.

Gram matrices and kernel rows are computed in blocks through the distance tile
shared with k-NN (``smml._core._distances``: one gemm per tile), in float32 or
float64, with OpenMP and without the GIL (``smml._core._kernel_methods``); the SVM's
SMO solver is ``smml._core._svm``. The sequential learners (Perceptron,
Pegasos) never hold an m x m matrix: kernel rows come from a bounded cache.

Labels: binary classifiers map ``classes_[0]`` to -1 and ``classes_[1]`` to +1
and predict with sgn(score) where sgn(0) = -1 (000 "Linear predictors"); more
classes: one-vs-rest. ``smml.reference.kernels`` holds the plain-Python twins.
"""
from smml.kernels._functions import gaussian_kernel, linear_kernel, polynomial_kernel
from smml.kernels._pegasos import KernelPegasos
from smml.kernels._perceptron import KernelPerceptron
from smml.kernels._ridge import KernelRidge
from smml.kernels._svc import KernelSVC

__all__ = ["linear_kernel", "polynomial_kernel", "gaussian_kernel", "KernelPerceptron",
           "KernelRidge", "KernelPegasos", "KernelSVC"]
