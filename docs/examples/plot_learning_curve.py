r"""
A learning curve with Hoeffding intervals
=========================================

The test error of k-NN trained on more and more examples, tested on one held-out
set: each test error comes with the interval of 000, "Bounding the risk"
(test error :math:`\pm\sqrt{\ln(2/\delta) / (2n)}`), which holds because the test set is
never used for training.
"""
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from smml.model_selection import learning_curve
from smml.neighbors import KNNClassifier
from smml.plot import plot_learning_curve

X, y = load_breast_cancer(return_X_y=True)
result = learning_curve(make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=5)), X, y,
                        train_sizes=np.linspace(0.05, 1.0, 12), random_state=0)
plot_learning_curve(result)
