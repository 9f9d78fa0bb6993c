"""
A neural network trained by SGD
===============================

:class:`~smml.neural.MLPClassifier` is a feed-forward network trained by 003's
stochastic gradient descent (003 section 14): each step takes a random example
:math:`Z_t` and updates every weight,
:math:`w_{ij} \\leftarrow w_{ij} - \\eta_t\\, \\partial \\ell_{Z_t}(w) / \\partial w_{ij}`
for :math:`(i, j) \\in E`. Two classes use one output unit and the logistic loss
:math:`\\ln(1 + e^{-yz})`. Here the width of the hidden layer goes from a linear
predictor (no hidden layer) to 32 units on the two moons. ``batch_size=8`` is smml's
minibatch extension (the mean gradient over 8 examples per step); ``batch_size=1`` is
003's update.
"""
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split

from smml.neural import MLPClassifier

X, y = make_moons(n_samples=400, noise=0.2, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
xx, yy = np.meshgrid(np.linspace(-1.6, 2.6, 150), np.linspace(-1.2, 1.7, 120))
grid = np.c_[xx.ravel(), yy.ravel()]

fig, axes = plt.subplots(1, 3, figsize=(10, 3.2), sharey=True)
nets = {}
for ax, hidden in zip(axes, [(), (4,), (32,)]):
    net = MLPClassifier(hidden_layer_sizes=hidden, activation="tanh", batch_size=8,
                        learning_rate=0.1, max_iter=300, random_state=0)
    net.fit(X_train, y_train)
    nets[hidden] = net
    ax.contourf(xx, yy, net.predict(grid).reshape(xx.shape), alpha=0.3, cmap="coolwarm")
    ax.scatter(*X_train.T, c=y_train, s=10, cmap="coolwarm")
    ax.set_title(f"hidden layers {hidden}: test error {1 - net.score(X_test, y_test):.3f}",
                 fontsize="small")
fig.tight_layout()

# %%
# ``loss_curve_`` holds, per epoch, the mean loss of the examples before their
# step; training stops once ``n_iter_no_change`` epochs have not lowered it by
# ``tol`` (scikit-learn's rule), or after ``max_iter``.
fig, ax = plt.subplots(figsize=(6, 3.2))
for hidden, net in nets.items():
    ax.plot(np.arange(1, net.n_iter_ + 1), net.loss_curve_, label=f"hidden layers {hidden}")
ax.set_xlabel("epoch")
ax.set_ylabel("mean training loss")
ax.legend()
fig.tight_layout()
