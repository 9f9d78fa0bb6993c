r"""
Tree predictors: errors and the Occam bound
===========================================

000, "A more refined bound": with probability at least :math:`1 - \delta`, every tree h with
:math:`N_h` nodes on d attributes has

.. math::

   \ell_{\mathcal{D}}(h) \le \ell_S(h) + \sqrt{\frac{|\sigma(h)| + \ln(2/\delta)}{2m}},
   \qquad |\sigma(h)| = (N_h + 1)\lceil \log_2(d + 3)\rceil + 2\lfloor \log_2 N_h\rfloor + 1 \text{ bits}.

The training error falls as the tree grows; the bound pays for the size.
"""
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from smml.plot import plot_tree_occam

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
plot_tree_occam(X_train, y_train, X_test, y_test, leaves=range(2, 31))
