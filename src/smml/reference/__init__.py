"""Plain-Python reference implementations of smml's algorithms.

Each module mirrors the notes' pseudo-code line by line with loops over Python
lists and floats: readable before fast. They are the oracle that the tests
compare the compiled kernels with, and the baseline that ``bench/`` and
``smml tour`` measure speed-ups against. One module per algorithm family, named
as the estimators' modules are, each mirroring the notes' file and section it cites
(000, 001, 002, 003: the files of the specification):

- ``smml.reference.neighbors``: k-NN (000 "The Nearest Neighbour algorithm"; 002
  "Nearest neighbors" for the Mahalanobis and Hamming distances and the weighted vote);
- ``.tree``: tree predictors (000 "Tree Predictors"; 002 "Tree-based classifiers" for
  ``split_score="002"``);
- ``.adaboost``: AdaBoost with decision stumps (002 "Adaboost"; 003 section 16);
- ``.gradient_boosting``: second-order gradient boosting (002 section 3.2 "XGBoost");
- ``.linear``: Perceptron, least squares, ridge, LMS, logistic regression, OGD, Pegasos,
  the hard-margin SVM, polynomial features (000 "Training linear classifiers", "Linear
  regression", "Ridge Regression"; 001 LMS and logistic regression; 002 polynomial
  regression; 003 sections 10 and 12);
- ``.kernels``: the kernels, kernel Perceptron / Pegasos, kernel ridge, the SVM (003
  sections 11 and 12);
- ``.cluster``: k-means (001 "Clustering and the k-means algorithm");
- ``.neural``: the feed-forward network's SGD and backpropagation (003 section 14);
- ``.losses``: the losses, one example at a time (000 "Loss functions"; 002; 003
  sections 10, 12, 15);
- ``.model_selection``: K-fold and nested cross-validation estimates (000 "Evaluating a
  learning algorithm using external cross-validation"; 003 section 6).

The ensembles built from these (bagging, random forests) have no twin of their own.

Sums of floats are loops that add one term at a time, in the kernels' order
(``s = s + v``), never builtin ``sum()``: from Python 3.12 on ``sum()`` of
floats is compensated and rounds differently, so a bit-exact comparison with
a kernel would hold on some Pythons only.
"""
