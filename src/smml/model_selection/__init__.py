"""Risk estimates and hyper-parameter tuning of the course notes.

- :func:`empirical_risk`: the average loss of a fitted predictor on a sample
  (000, "Bounding the risk": the test error).
- :func:`cv_estimate`: the K-fold CV estimate (000, "Evaluating a learning
  algorithm using external cross-validation"; leave-one-out when K = m).
- :func:`tune`: train/dev tuning over a grid with a refit on the whole
  training set (000, "Tuning hyperparameters on a given training set").
- :func:`nested_cv_estimate`: the nested CV estimate (003, section 6,
  "Hyperparameter Tuning and Risk Estimates", Algorithm 1).
- :func:`compare`: two learners on the same folds and the Wilcoxon
  signed-rank test on the paired differences of their errors (001, "Wilcoxon
  Test").
- :func:`learning_curve`: test error against the training-set size, with the
  Hoeffding interval of each test error (000, "Bounding the risk").
- :func:`risk_decomposition`: the risk of A(S_m) split into estimation,
  approximation and Bayes error (000, "Overfitting and underfitting") on a
  distribution whose Bayes predictor is known (:mod:`smml.datasets`).

scikit-learn is used for plumbing only (``KFold``, ``ParameterGrid``,
``clone``, ``train_test_split``) and joblib runs folds in parallel: on threads by
default, on a cluster inside ``joblib.parallel_config(backend="dask")`` (or
``"ray"``), with the same results given ``random_state`` (the folds are drawn
in the calling process). A worker lost mid-run raises a ``RuntimeError``; no
partial result is returned. With
``verbose=1`` a progress bar on stderr counts the fits (``smml._progress``). Each
estimate can come with its Chernoff-Hoeffding interval
(:func:`smml.bounds.hoeffding_interval`), which needs a loss with values in
[0, 1]: asking for it with a loss that takes a value outside [0, 1] raises.
"""
from smml.model_selection._common import ParamGrid
from smml.model_selection._estimates import empirical_risk, cv_estimate
from smml.model_selection._tuning import TuneResult, tune, NestedCVResult, nested_cv_estimate
from smml.model_selection._compare import CompareResult, compare
from smml.model_selection._learning_curve import LearningCurveResult, learning_curve
from smml.model_selection._risk_decomposition import RiskDecompositionResult, risk_decomposition

__all__ = ["empirical_risk", "cv_estimate", "tune", "nested_cv_estimate", "compare", "learning_curve",
           "risk_decomposition", "TuneResult", "NestedCVResult", "CompareResult", "LearningCurveResult",
           "RiskDecompositionResult"]

# The public classes keep their path from before the split into modules: pickles and smml.save
# files name smml.model_selection.TuneResult, ..., and smml.load trusts a class under the module
# path it is found at (smml._discovery.model_types), so files saved before the split still load
# and new files are the same as before.
for _cls in (TuneResult, NestedCVResult, CompareResult, LearningCurveResult, RiskDecompositionResult):
    _cls.__module__ = __name__
del _cls
