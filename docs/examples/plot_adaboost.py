r"""
AdaBoost: training error and its bounds
=======================================

002, "Training error of AdaBoost": after T rounds with edges
:math:`\gamma_i = 1/2 - \varepsilon_i`, the training error of
:math:`\operatorname{sgn}\bigl(\sum_i w_i h_i\bigr)` is at most
:math:`\prod_i \sqrt{1 - 4\gamma_i^2}`, itself at most
:math:`\exp\bigl(-2\sum_i \gamma_i^2\bigr)`. smml's AdaBoost records all three per round.
"""
from sklearn.datasets import load_breast_cancer

from smml.ensemble import AdaBoostClassifier
from smml.plot import plot_adaboost

X, y = load_breast_cancer(return_X_y=True)
ada = AdaBoostClassifier(n_estimators=60).fit(X, y)
plot_adaboost(ada)
print(f"after {len(ada.train_errors_)} rounds: training error {ada.train_errors_[-1]:.4f} "
      f"<= {ada.training_error_bound_[-1]:.4f} <= {ada.training_error_exp_bound_[-1]:.4f}")
