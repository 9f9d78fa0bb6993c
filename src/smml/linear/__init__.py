"""Linear predictors of the notes: Perceptron, least squares, ridge, LMS,
logistic regression, Pegasos, projected online gradient descent, the two
linear programs (hard and soft margin for classification), the hard-margin
SVM and polynomial regression.

Sources: 000, "Linear predictors" ("Hyperplanes", "Training linear
classifiers", "Linear regression", "Ridge Regression"); 001 (LMS / Widrow-Hoff,
normal equations, logistic regression); 002, "Linear predictors" (linear
programs, pseudo-inverse, ridge, logistic regression, absolute-loss LP);
003, sections 9, 10, 12 and 15.

Intercept: ``fit_intercept=True`` adds the constant feature of 000
"Hyperplanes" (x' = (x_1, ..., x_d, 1)), so every learner that works on the
augmented vector (Perceptron, Pegasos, OGD, the LP classifier) treats the
intercept as one more weight: it is updated, projected and - for Pegasos and
the strongly convex OGD - penalised like the others. The constant column is
never materialised; the kernels keep its weight at ``w[d]``. The exceptions,
documented in each class, are the least-squares family (ridge leaves the
intercept unpenalised, as scikit-learn does) and logistic regression (intercept
unpenalised, as the issue and scikit-learn do).

Labels: binary classifiers map ``classes_[0]`` to -1 and ``classes_[1]`` to +1
and predict with sgn(w.x) where sgn(0) = -1 (000, "Linear predictors"), i.e.
a score of exactly 0 gives ``classes_[0]``. More than two classes (an
extension beyond the notes' binary definitions): every classifier runs one
binary problem per class (one-vs-rest: classes_[c] +1, the rest -1) and
predicts the class of the largest score, the first class on ties;
``LogisticRegression(multi_class="softmax")`` fits the multinomial model
instead. The random learners (Pegasos, OGD, SGD logistic regression) share
their random draws between the binary problems: problem c is exactly the
binary fit on (X, y == classes_[c]) with the same ``random_state``.

Precision: float32 input to ``decision_function``, ``predict_proba`` and a
regressor's ``predict`` gives float32 output (the compiled kernel works in the
model's precision and the result is rounded once; where a value lies beyond
float32's range the float64 result is returned instead of inf). The Perceptron
also learns in float32; the other learners fit in float64.

Weights, streams, restarts (issue 33): ``sample_weight`` on every learner but
the linear programs, the hard-margin SVM and polynomial regression;
``class_weight`` on LogisticRegression, Perceptron, Pegasos and
OnlineGradientDescent; ``partial_fit`` on Perceptron, Pegasos, LMS and both OGD
learners; ``warm_start`` on Perceptron, Pegasos, LMS, both OGD learners and
LogisticRegression. Each class says how its weights act (weighted steps or
weighted sampling) and why.

Every sequential learner draws the order of the examples in Python from
``random_state`` and runs a compiled nogil kernel on it
(``smml._core._linear``); ``smml.reference.linear`` holds the plain-Python
twins that the tests compare with on the same order.
"""
from smml.exceptions import DivergenceError, NotSeparableError
from smml.linear._hard_margin import HardMarginSVM
from smml.linear._least_squares import LinearRegression, LMSRegressor, RidgeRegression
from smml.linear._logistic import LogisticRegression
from smml.linear._lp import LADRegressor, LinearProgramClassifier
from smml.linear._ogd import OnlineGradientDescent, OnlineGradientDescentRegressor
from smml.linear._pegasos import Pegasos
from smml.linear._perceptron import Perceptron
from smml.linear._polynomial import PolynomialRegression

__all__ = ["Perceptron", "LinearRegression", "RidgeRegression", "LMSRegressor",
           "LogisticRegression", "Pegasos", "OnlineGradientDescent",
           "OnlineGradientDescentRegressor", "LinearProgramClassifier", "LADRegressor", "HardMarginSVM",
           "PolynomialRegression",
           "DivergenceError", "NotSeparableError"]
