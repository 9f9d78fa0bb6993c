"""Ensembles: AdaBoost, bagging, random forests and gradient boosting.

- :class:`AdaBoostClassifier` follows 002 "Adaboost" (Algorithm 1, the
  exercise and the training-error bound) and 003 section 16 (Algorithm 5 and
  its special cases) exactly for two classes; SAMME for more than two classes
  is an extension beyond the notes.
- :class:`DecisionStump` is AdaBoost's default weak learner, on the compiled
  stump kernel ``smml._core._adaboost``.
- :class:`BaggingClassifier` / :class:`BaggingRegressor` follow 002 "Random
  forests" / "Bagging" and 003 section 16 ("Explain how the Bagging Algorithm
  works"): T bootstrap samples of size alpha m drawn with replacement, one
  predictor each, majority vote (classification) or mean (regression).
- :class:`RandomForestClassifier` / :class:`RandomForestRegressor` are bagging
  of smml's CART trees with ``max_features="sqrt"`` (002 "Random forests").
- :class:`GradientBoostingRegressor` / :class:`GradientBoostingClassifier` are
  second-order gradient boosting (002 section 3.2 "XGBoost") on the compiled
  histogram kernel ``smml._core._gbm``.
"""
from smml.ensemble._adaboost import AdaBoostClassifier, DecisionStump
from smml.ensemble._bagging import BaggingClassifier, BaggingRegressor
from smml.ensemble._forest import RandomForestClassifier, RandomForestRegressor
from smml.ensemble._gradient_boosting import GradientBoostingClassifier, GradientBoostingRegressor

__all__ = ["DecisionStump", "AdaBoostClassifier", "BaggingClassifier", "BaggingRegressor",
           "RandomForestClassifier", "RandomForestRegressor", "GradientBoostingClassifier",
           "GradientBoostingRegressor"]
