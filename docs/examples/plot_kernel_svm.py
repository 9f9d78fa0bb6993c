"""
Kernel SVM: the Gaussian kernel's gamma and the regularisation
===============================================================

:class:`~smml.kernels.KernelSVC` solves the SVM problem of 003 section 12 exactly
(an SMO solver) in the space of a kernel (003 section 11). ``gamma`` is scikit-learn's,
:math:`K(x, x') = \\exp(-\\gamma \\lVert x - x' \\rVert^2)` (003 writes the Gaussian
with a width :math:`w`, :math:`\\exp(-\\lVert x - x' \\rVert^2 / (2w))`, so
:math:`\\gamma = 1/(2w)`): a large ``gamma`` gives a wiggly boundary and a small one a
smooth boundary.
"""
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split

from smml.kernels import KernelPegasos, KernelSVC

X, y = make_moons(n_samples=300, noise=0.25, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)

xx, yy = np.meshgrid(np.linspace(-1.7, 2.8, 150), np.linspace(-1.2, 1.7, 120))
grid = np.c_[xx.ravel(), yy.ravel()]

fig, axes = plt.subplots(1, 3, figsize=(10, 3.2), sharey=True)
for ax, gamma in zip(axes, [25.0, 1.0, 0.0625]):
    svc = KernelSVC(C=1.0, kernel="rbf", gamma=gamma).fit(X_train, y_train)
    ax.contourf(xx, yy, svc.decision_function(grid).reshape(xx.shape) > 0, alpha=0.3, cmap="coolwarm")
    ax.scatter(*X_train.T, c=y_train, s=10, cmap="coolwarm")
    ax.set_title(f"gamma = {gamma}: test error {1 - svc.score(X_test, y_test):.3f}\n"
                 f"{len(svc.support_)} support vectors", fontsize="small")
fig.tight_layout()

# %%
# 003 writes the objective as :math:`\frac{\lambda}{2}\lVert g \rVert^2 +
# \frac{1}{m}\sum_t h_t(g)` with the hinge loss :math:`h_t`; libsvm's ``C`` is
# :math:`1/(\lambda m)`: ``KernelSVC`` takes ``C`` (as scikit-learn's ``SVC``) and
# ``KernelPegasos`` takes 003's :math:`\lambda` as ``alpha``. Pegasos (003 section 12) minimises the same objective by
# stochastic steps :math:`\eta_t = 1/(\lambda t)`; with enough steps it comes close
# to the exact solution. Pegasos has no intercept, so the exact SVM is solved here
# without one too (``fit_intercept=False``, 003's problem as written; the default adds
# an unpenalised bias, as libsvm does).
m = len(y_train)
lam = 1.0 / m                       # C = 1 / (lam m) = 1
exact = KernelSVC(C=1 / (lam * m), gamma=1.0, fit_intercept=False).fit(X_train, y_train)
sgd = KernelPegasos(alpha=lam, max_iter=20 * m, gamma=1.0, random_state=0).fit(X_train, y_train)
print(f"C_ = {exact.C_:.3f}")
print(f"test error: exact SVM {1 - exact.score(X_test, y_test):.3f}, "
      f"kernel Pegasos {1 - sgd.score(X_test, y_test):.3f}")
