"""Small estimator bases on scikit-learn's BaseEstimator and mixins.

Every smml estimator declares ``_parameter_spec`` ({name: constraints}, see
``smml._validation``) and calls ``self._validate_params()`` first thing in
``fit``; inputs go through ``smml._validation``.
"""
from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from sklearn.base import BaseEstimator, ClassifierMixin, ClusterMixin, RegressorMixin

from smml._threads import effective_n_threads
from smml._validation import validate_params

__all__ = ["SmmlEstimator", "ClassifierMixin", "RegressorMixin", "ClusterMixin"]

# parameter values last validated, per estimator (predict-time re-validation; not an attribute,
# so never pickled or saved)
_VALIDATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# values that cannot change in place: the same object is the same value
_IMMUTABLE = (type(None), bool, int, float, str)


def store_params(est: object, params: Mapping[str, Any]) -> None:
    """``__init__``: every argument stored under its own name, unchanged (scikit-learn's rule);
    call as ``store_params(self, locals())``."""
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(est, name, value)


class SmmlEstimator(BaseEstimator):
    """Base of every smml estimator: parameter validation and thread count.

    A scikit-learn ``BaseEstimator``: ``get_params``, ``set_params`` and ``clone``
    work on every smml estimator.

    Examples
    --------
    >>> from sklearn.base import clone
    >>> from smml.base import SmmlEstimator
    >>> from smml.erm import ERMClassifier
    >>> issubclass(ERMClassifier, SmmlEstimator)
    True
    >>> clone(ERMClassifier(delta=0.1)).get_params()["delta"]
    0.1
    """

    _parameter_spec: dict[str, Any] = {}

    def _validate_params(self) -> None:
        validate_params(self, self._parameter_spec)

    def _revalidate_params(self) -> None:
        """:meth:`_validate_params` at predict time (``set_params`` after fit may have changed a
        parameter), skipped when every parameter is the very object last validated and
        immutable (None, bool, int, float, str): about 15 us of every ``predict`` call."""
        spec = self._parameter_spec
        vals = tuple(getattr(self, name) for name in spec)
        try:
            old = _VALIDATED.get(self)
        except TypeError:                   # an unhashable subclass: validate every time
            validate_params(self, spec)
            return
        if old is not None and all(a is b for a, b in zip(old, vals)):
            return
        validate_params(self, spec)
        if all(type(v) in _IMMUTABLE for v in vals):
            _VALIDATED[self] = vals

    def _n_threads(self) -> int:
        return effective_n_threads(getattr(self, "n_jobs", None))
