"""The exceptions and warnings smml raises (one module: every family imports them from here).

Each is also importable where it was first defined: ``smml.linear.DivergenceError``,
``smml.linear.NotSeparableError``, ``smml.InconsistentVersionWarning``.
"""

__all__ = ["DivergenceError", "NotSeparableError", "InconsistentVersionWarning"]


class DivergenceError(ValueError, FloatingPointError):
    """A sequential learner produced a non-finite weight (overflow / NaN)."""


class NotSeparableError(ValueError):
    """The linear program y_t w.x_t >= 1 has no solution."""


class InconsistentVersionWarning(UserWarning):
    """A model file written by a newer smml than the one loading it (same file format).

    The file is read (the format version says this smml can), but the newer smml may have
    fitted the model differently; refit it, or upgrade smml, if its results matter.
    Like scikit-learn's warning of the same name, it carries the two versions.

    Attributes
    ----------
    file_version : str
        The smml version that wrote the file.
    current_version : str
        The smml version loading it.
    """

    def __init__(self, path, file_version, current_version):
        super().__init__(path, file_version, current_version)     # args: pickles, copies
        self.path = path
        self.file_version = file_version
        self.current_version = current_version

    def __str__(self):
        return (f"{self.path} was written by smml {self.file_version}, newer than this smml "
                f"{self.current_version}: the model loads, but may not behave as it did there "
                f"(upgrade smml, or refit the model)")
