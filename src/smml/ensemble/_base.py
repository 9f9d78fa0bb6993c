"""Helpers shared by the ensembles."""
from sklearn.base import clone


def _seeded_clone(estimator, seed):
    """A clone of ``estimator`` whose ``random_state`` (if it has one) is ``seed``."""
    est = clone(estimator)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=int(seed))
    return est

