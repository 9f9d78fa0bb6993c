"""smml: the learning methods of "Statistical Methods for Machine Learning",
exactly as the course notes define them, on Cython + OpenMP kernels.

Families: ``smml.neighbors``, ``smml.tree``, ``smml.linear``, ``smml.ensemble``,
``smml.kernels``, ``smml.cluster``; risk tools: ``smml.losses``,
``smml.bounds``, ``smml.model_selection``, and ``smml.datasets`` (distributions
whose Bayes predictor is known); figures: ``smml.plot``; plain-Python
twins of every kernel: ``smml.reference``. Model files without pickle:
``smml.save(model, path)`` / ``smml.load(path)``. Run ``smml info`` and ``smml tour``.
"""
__version__ = "0.1.0"

from smml._persist import InconsistentVersionWarning, load, save  # noqa: E402
from smml._threads import effective_n_threads, openmp_enabled  # noqa: E402

__all__ = ["__version__", "effective_n_threads", "openmp_enabled", "save", "load", "InconsistentVersionWarning"]
