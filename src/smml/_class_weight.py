"""``class_weight`` of smml's classifiers, with scikit-learn's semantics.

A class weight multiplies the sample weight of every example of that class: a dict
``{label: weight}`` (labels missing from it weigh 1), or "balanced", the weight
``n_samples / (n_classes * n_c)`` of class c with n_c examples (unweighted counts, as
scikit-learn's :func:`sklearn.utils.class_weight.compute_class_weight`). "balanced_subsample"
(forests and bagging) is "balanced" computed on each bootstrap sample, repeats counted.
"""
from __future__ import annotations

from typing import Optional, Union

import numpy as np
from sklearn.utils.class_weight import compute_class_weight

from smml._validation import InstanceOf, Options

ClassWeight = Optional[Union[str, dict]]

#: the parameter spec of ``class_weight`` (smml._validation.validate_params)
CLASS_WEIGHT = (Options(None, "balanced"), InstanceOf(dict))
CLASS_WEIGHT_SUBSAMPLE = (Options(None, "balanced", "balanced_subsample"), InstanceOf(dict))


def class_weights(class_weight: ClassWeight, classes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The weight of each class of ``classes`` (sorted labels) as a float64 array (ones for
    None), given the training labels as ``codes`` (indices into ``classes``).

    Raises ValueError for a weight that is negative, NaN or infinite, and (as scikit-learn)
    for a dict naming a label that is not a class while some class is missing from it.
    """
    n_classes = len(classes)
    if class_weight is None:
        return np.ones(n_classes)
    if isinstance(class_weight, str) and class_weight in ("balanced", "balanced_subsample"):
        counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
        with np.errstate(divide="ignore"):
            # scikit-learn's formula; a class without examples (possible only with the codes
            # of a subsample) weighs 0 (it has no example to weigh)
            return np.where(counts > 0, len(codes) / (np.count_nonzero(counts) * counts), 0.0)
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {class_weight!r}")
    try:
        w = compute_class_weight(class_weight, classes=np.asarray(classes), y=np.asarray(classes))
        w = np.asarray(w, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"class_weight: {exc}") from None
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"class_weight must hold non-negative finite weights, got {class_weight!r}")
    return w


def weighted_by_class(sample_weight: Optional[np.ndarray], class_weight: ClassWeight,
                      classes: np.ndarray, codes: np.ndarray) -> Optional[np.ndarray]:
    """``sample_weight`` (None: ones) times the weight of each example's class; None when
    ``class_weight`` is None (the sample weights unchanged). Raises ValueError when the
    product is zero for every example."""
    if class_weight is None:
        return sample_weight
    w = class_weights(class_weight, classes, codes)[codes]
    if sample_weight is not None:
        w = w * sample_weight
    if not np.any(w > 0):
        raise ValueError("class_weight times sample_weight is zero for every example")
    return np.ascontiguousarray(w, dtype=np.float64)
