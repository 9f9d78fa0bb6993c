"""Plain-Python reference implementations of smml's algorithms.

Each module mirrors the notes' pseudo-code line by line with loops over Python
lists and floats: readable before fast. They are the oracle that the tests
compare the compiled kernels with, and the baseline that ``bench/`` and
``smml tour`` measure speed-ups against. One module per algorithm family, named
as the estimators' modules are: ``smml.reference.neighbors`` (k-NN),
``.tree`` (tree predictors), ``.adaboost`` (AdaBoost with stumps),
``.gradient_boosting`` (second-order gradient boosting), ``.linear`` (Perceptron,
least squares, ridge, logistic regression, OGD, Pegasos), ``.kernels`` (kernel
Perceptron / Pegasos, kernel ridge, the SVM), ``.cluster`` (k-means), ``.neural``
(the feed-forward network's SGD), ``.losses`` and ``.model_selection`` (risk
estimates).

Sums of floats are loops that add one term at a time, in the kernels' order
(``s = s + v``), never builtin ``sum()``: from Python 3.12 on ``sum()`` of
floats is compensated and rounds differently, so a bit-exact comparison with
a kernel would hold on some Pythons only.
"""
