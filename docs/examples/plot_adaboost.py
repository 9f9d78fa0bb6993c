"""
AdaBoost: training error and its bounds
=======================================

002, "Training error of AdaBoost": after T rounds with edges gamma_i = 1/2 - epsilon_i,
the training error of sign(sum_i w_i h_i) is at most prod_i sqrt(1 - 4 gamma_i^2),
itself at most exp(-2 sum_i gamma_i^2). smml's AdaBoost records all three per round.
"""
from sklearn.datasets import load_breast_cancer

from smml.ensemble import AdaBoostClassifier
from smml.plot import plot_adaboost

X, y = load_breast_cancer(return_X_y=True)
ada = AdaBoostClassifier(n_estimators=60).fit(X, y)
plot_adaboost(ada)
print(f"after {len(ada.train_errors_)} rounds: training error {ada.train_errors_[-1]:.4f} "
      f"<= {ada.training_error_bound_[-1]:.4f} <= {ada.training_error_exp_bound_[-1]:.4f}")
