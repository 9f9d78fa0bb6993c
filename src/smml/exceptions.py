"""The exceptions and warnings smml raises (one module: every family imports them from here).

Each is also importable where it was first defined: ``smml.linear.DivergenceError``,
``smml.linear.NotSeparableError``, ``smml.InconsistentVersionWarning``.
"""
from __future__ import annotations


__all__ = ["DivergenceError", "NotSeparableError", "InconsistentVersionWarning"]


class DivergenceError(ValueError, FloatingPointError):
    """A sequential learner produced a non-finite weight (overflow / NaN).

    A ``ValueError`` and a ``FloatingPointError``: either ``except`` catches it.

    Examples
    --------
    >>> from smml.exceptions import DivergenceError
    >>> issubclass(DivergenceError, ValueError), issubclass(DivergenceError, FloatingPointError)
    (True, True)
    """


class NotSeparableError(ValueError):
    """The linear program y_t w.x_t >= 1 has no solution.

    Raised when a learner that needs linearly separable data (e.g.
    :class:`smml.linear.HardMarginSVM`) is fitted on data that is not.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.exceptions import NotSeparableError
    >>> from smml.linear import HardMarginSVM
    >>> X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.]])
    >>> y = np.array([1, 1, -1, -1])                  # XOR: no line separates it
    >>> try:
    ...     HardMarginSVM().fit(X, y)
    ... except NotSeparableError:
    ...     print("not separable")
    not separable
    """


class InconsistentVersionWarning(UserWarning):
    """A model file written by a newer smml than the one loading it (same file format).

    The file is read (the format version says this smml can), but the newer smml may have
    fitted the model differently; refit it, or upgrade smml, if its results matter.
    Like scikit-learn's warning of the same name, it carries the two versions.

    Parameters
    ----------
    path : str
        The model file (its name, or a description of the file object).
    file_version : str
        The smml version that wrote the file.
    current_version : str
        The smml version loading it.

    Attributes
    ----------
    path : str
        The model file.
    file_version : str
        The smml version that wrote the file.
    current_version : str
        The smml version loading it.

    Examples
    --------
    >>> from smml import InconsistentVersionWarning
    >>> w = InconsistentVersionWarning("model.smml", "9.0.0", "0.1.0")
    >>> w.file_version, w.current_version
    ('9.0.0', '0.1.0')
    >>> print(w)
    model.smml was written by smml 9.0.0, newer than this smml 0.1.0: ...
    """

    def __init__(self, path: str, file_version: str, current_version: str) -> None:
        super().__init__(path, file_version, current_version)     # args: pickles, copies
        self.path = path
        self.file_version = file_version
        self.current_version = current_version

    def __str__(self) -> str:
        return (f"{self.path} was written by smml {self.file_version}, newer than this smml "
                f"{self.current_version}: the model loads, but may not behave as it did there "
                f"(upgrade smml, or refit the model)")
