"""Type aliases shared by smml's annotations (PEP 484; the package ships ``py.typed``).

The public signatures use numpy's :data:`numpy.typing.ArrayLike` for array inputs,
:data:`numpy.typing.NDArray` for arrays returned, and the aliases below.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "NDArray", "RandomStateLike", "Estimator", "LossFunction", "LossLike", "PredictMethod",
           "Verbose"]

#: what every ``random_state`` accepts: None, a seed, a RandomState or a Generator
#: (:func:`smml._random.check_random_state`)
RandomStateLike = Union[int, np.integer, np.random.RandomState, np.random.Generator, None]


if TYPE_CHECKING:
    class Estimator(Protocol):
        """An estimator with scikit-learn's interface (``fit`` returning the fitted estimator)."""

        def fit(self, X: Any, *args: Any, **kwargs: Any) -> Any: ...
else:
    # no class at run time: smml.load trusts every class defined in smml (smml._discovery.model_types)
    Estimator = Any


#: a loss as :mod:`smml.losses` defines one: ``loss(y, y_pred)`` -> the per-example losses
LossFunction = Callable[..., Any]
#: a loss by name (:func:`smml.losses.get_loss`) or as a function
LossLike = Union[str, LossFunction]
#: the output a risk estimate scores (``method=``)
PredictMethod = Literal["predict", "decision_function", "predict_proba"]
#: ``verbose``: False / 0 silent, True / 1 a progress bar, "auto" a bar when stderr is a terminal
Verbose = Union[bool, int, Literal["auto"]]
