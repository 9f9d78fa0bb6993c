"""Risk bounds of the course notes, as plain functions.

Each function cites the section of the notes that states the bound. The bounds are grouped
by concern, one private module each (every name is imported from ``smml.bounds``):

- ``_hoeffding``: Hoeffding's inequality for test and validation errors, and the union
  bound over a finite class (000 "Bounding the risk", "Risk analysis"; 001 Appendix 1);
- ``_vc``: VC dimension and VC bounds (001 Appendix 2; 002 "VC dimension of halfspaces");
- ``_online``: mistake and regret bounds of the online learners of ``smml.linear`` and
  ``smml.kernels`` (000 "Training linear classifiers"; 003 sections 10, 11, 12);
- ``_ensemble``: training-error bounds of AdaBoost and of a majority vote (002 "Training
  error of AdaBoost"; 003 section 16);
- ``_tree``: Occam and ERM bounds of tree predictors (000 "Risk analysis for tree
  predictors"; 003 section 5);
- ``_neighbors``: risk of 1-NN and k-NN (000 "Risk Analysys for Nearest-Neighbor",
  "Consistency and nonparametric algorithms"; 002 "Generalization error of 1-NN");
- ``_bayes``: Bayes optimal predictors and risks, consistent surrogate losses (000 "Bayes
  optimal predictor"; 003 sections 4, 15);
- ``_stability``: stability of regularised ERM and the SVM's consistent regularisation
  (003 section 13);
- ``_checks``: the argument checks several of them share.
"""
import numpy as np  # noqa: F401  (StabilityEstimate's annotations, resolved here: see the end)

from smml.bounds._bayes import bayes_optimal_predictor, bayes_risk, surrogate_consistency_condition
from smml.bounds._ensemble import adaboost_rounds_for_zero_error, adaboost_training_error_bound, majority_vote_bound
from smml.bounds._hoeffding import (erm_finite_class_bound, finite_class_uniform_bound, hoeffding_epsilon,
                                    hoeffding_interval, hoeffding_one_sided_epsilon, hoeffding_test_size,
                                    hoeffding_upper_bound)
from smml.bounds._neighbors import knn_asymptotic_risk_bound, knn_consistent_k, one_nn_risk_bound
from smml.bounds._online import (kernel_perceptron_convergence_bound, kernel_perceptron_mistake_bound,
                                 ogd_regret_bound, ogd_strongly_convex_regret_bound, pegasos_bound,
                                 perceptron_convergence_bound, perceptron_mistake_bound)
from smml.bounds._stability import StabilityEstimate, empirical_stability, svm_consistent_lambda, svm_stability_bound
from smml.bounds._tree import erm_tree_bound, occam_tree_bound, tree_code_length
from smml.bounds._vc import halfspace_vc_dimension, vc_bound, vc_sample_complexity

__all__ = ["hoeffding_epsilon", "hoeffding_interval", "hoeffding_one_sided_epsilon", "hoeffding_upper_bound",
           "hoeffding_test_size", "erm_finite_class_bound",
           "halfspace_vc_dimension", "vc_bound", "vc_sample_complexity",
           "perceptron_convergence_bound", "perceptron_mistake_bound", "pegasos_bound",
           "ogd_regret_bound", "ogd_strongly_convex_regret_bound",
           "kernel_perceptron_convergence_bound", "kernel_perceptron_mistake_bound",
           "adaboost_training_error_bound", "adaboost_rounds_for_zero_error", "majority_vote_bound",
           "tree_code_length", "occam_tree_bound", "erm_tree_bound",
           "one_nn_risk_bound",
           "bayes_optimal_predictor", "bayes_risk", "surrogate_consistency_condition", "svm_stability_bound",
           "svm_consistent_lambda", "empirical_stability", "StabilityEstimate",
           "knn_asymptotic_risk_bound", "knn_consistent_k", "finite_class_uniform_bound"]

# StabilityEstimate keeps its path from before the split into modules: smml.save files and
# pickles name smml.bounds.StabilityEstimate, and smml.load trusts a class under the module
# path it is found at (smml._discovery.model_types), so files saved before the split still
# load and new files are the same as before. typing.get_type_hints resolves a class's
# annotations in the namespace of its __module__: its fields' ``np.ndarray`` needs ``np`` above.
StabilityEstimate.__module__ = __name__
