"""
Gradient boosting with early stopping
=====================================

:class:`~smml.ensemble.GradientBoostingClassifier` is 002's second-order boosting
(002 section 3.2, "XGBoost"): each round fits a tree to the second-order Taylor
expansion of the loss at the current scores, with leaf values
:math:`w_j^\\star = -G_j / (H_j + \\lambda)` times the learning rate, and splits made
only when their gain exceeds :math:`\\gamma`. More rounds keep lowering the training
loss; past some round they no longer lower the loss on new data, and can raise it. Early stopping picks the
number of rounds on a held-out part of the training set.
"""
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from smml.ensemble import GradientBoostingClassifier
from smml.model_selection import empirical_risk

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)

# %%
# First 300 rounds without stopping. ``eval_set`` records the loss on the test set
# after every round (``evals_result_``, as in xgboost): here only to draw the curve,
# never to choose the number of rounds.
full = GradientBoostingClassifier(n_estimators=300, learning_rate=0.1, max_depth=3, random_state=0)
full.fit(X_train, y_train, eval_set=[(X_test, y_test)])
test_loss = full.evals_result_["validation_0"]["log_loss"]

fig, ax = plt.subplots(figsize=(6, 3.5))
rounds = np.arange(1, full.n_estimators_ + 1)
ax.plot(rounds, full.train_score_, label="training loss (train_score_)")
ax.plot(rounds, test_loss, label="test loss (evals_result_)")
ax.set_xlabel("boosting round")
ax.set_ylabel("logistic loss")
ax.set_yscale("log")
ax.legend()
fig.tight_layout()
print(f"test loss smallest after round {np.argmin(test_loss) + 1}")

# %%
# With ``early_stopping=True`` a stratified ``validation_fraction`` of the training
# set is held out; the fit stops once ``n_iter_no_change`` rounds have not lowered
# the validation loss by ``tol``, and the model keeps the rounds up to the best one
# (``best_iteration_``, 0-based). The test set plays no part.
gb = GradientBoostingClassifier(n_estimators=300, learning_rate=0.1, max_depth=3,
                                early_stopping=True, validation_fraction=0.2,
                                n_iter_no_change=20, random_state=0)
gb.fit(X_train, y_train)
print(f"early stopping kept {gb.best_iteration_ + 1} rounds")

# %%
# The test error of both models, each with its Chernoff-Hoeffding interval (000,
# *Bounding the risk*; the test set was used neither for fitting nor for stopping).
for name, model in [("300 rounds", full), ("early stopping", gb)]:
    err, (low, high) = empirical_risk(model, X_test, y_test, return_interval=True)
    print(f"{name}: test error {err:.3f}, 95% interval [{low:.3f}, {high:.3f}]")
