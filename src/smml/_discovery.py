"""What smml contains, found by walking its modules (nothing is listed by hand).

- :func:`public_modules`: every importable public module of smml (no part of
  its dotted name starts with "_"), except the plain-Python twins of
  ``smml.reference``. A family added later (``smml.kernels``,
  ``smml.cluster``, ...) is found without any edit; the documentation's API
  pages and the save/load round-trip test are built from this list.
- :func:`all_estimators`: the estimator classes named in those modules'
  ``__all__`` (scikit-learn ``BaseEstimator`` subclasses with a ``fit``,
  defined in smml).
- :func:`model_types`: every class defined anywhere in smml, private modules
  included (a fitted model holds private helpers such as ``smml.tree.Tree``),
  except exceptions and the twins of ``smml.reference``: the types a model
  file may name (``smml.load`` trusts exactly these, see ``smml._persist``).
"""
import functools
import importlib
import inspect
import pkgutil

__all__ = ["public_modules", "all_estimators", "model_types"]

#: modules never walked: importing ``smml.__main__`` runs the command
_NEVER_IMPORT = ("smml.__main__",)
#: subpackages whose classes are not models smml saves (plain-Python twins for tests and benchmarks)
_NOT_MODELS = ("smml.reference",)
#: public modules of optional engines (the ``[dask]`` extra): documented and listed by
#: :func:`public_modules`, never imported by :func:`model_types` (``smml.load`` must not
#: import dask; their objects hold a cluster's futures and are not saved)
_ENGINES = ("smml.dask",)


def _module_names():
    import smml

    names = ["smml"]

    def walk(path, prefix):
        # pkgutil.walk_packages, except that an engine's package is listed, not imported (its
        # own modules are private): listing smml must not import dask
        for info in pkgutil.iter_modules(path, prefix):
            if info.name in _NEVER_IMPORT:
                continue
            names.append(info.name)
            if not info.ispkg or _under(info.name, _ENGINES):
                continue
            try:
                mod = importlib.import_module(info.name)
            except Exception:        # as walk_packages with an onerror that ignores it
                continue
            walk(getattr(mod, "__path__", None) or [], info.name + ".")

    walk(smml.__path__, "smml.")
    return sorted(names)


def _under(name, prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@functools.lru_cache(maxsize=None)
def public_modules():
    """Dotted names of smml's public modules, sorted (``smml`` itself first)."""
    return tuple(n for n in _module_names()
                 if not any(part.startswith("_") for part in n.split(".")) and not _under(n, _NOT_MODELS))


def all_estimators():
    """``[(name, class)]`` of every public in-memory smml estimator, sorted by module then name
    (the engines' classes, which take a cluster's arrays and are not saved, are not listed)."""
    from sklearn.base import BaseEstimator

    found = {}
    for modname in public_modules():
        if _under(modname, _ENGINES):
            continue
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if (inspect.isclass(obj) and issubclass(obj, BaseEstimator) and not inspect.isabstract(obj)
                    and callable(getattr(obj, "fit", None)) and obj.__module__.startswith("smml.")):
                found.setdefault(obj, f"{modname}.{name}")
    return sorted(((path, cls) for cls, path in found.items()), key=lambda t: t[0])


@functools.lru_cache(maxsize=None)
def model_types():
    """``{"module.QualName": class}`` for every class defined in smml (see the module docstring).

    A module that cannot be imported (an optional dependency missing) is skipped:
    its classes cannot be in a model this interpreter could use anyway.
    """
    types = {}
    for modname in _module_names():
        if _under(modname, _NOT_MODELS) or _under(modname, _ENGINES):
            continue
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue
        for obj in vars(mod).values():
            if (inspect.isclass(obj) and obj.__module__ == modname and not issubclass(obj, BaseException)
                    and "<locals>" not in obj.__qualname__):
                types[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return types
