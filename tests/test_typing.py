"""Type hints on the public API (issue 33): smml ships a ``py.typed`` marker (PEP 561), and every
public function, every ``__init__`` and every public method or property of every public class
(those a class defines or inherits from smml's base classes; scikit-learn's plumbing is
scikit-learn's) annotates all its parameters and its return.

The walk is the one of tests/test_docstrings.py: every name in each public module's ``__all__``
(:func:`smml._discovery.public_modules`), so a family or a function added later is checked
without any edit here.  A failure lists every missing annotation by name."""
import importlib
import importlib.resources
import inspect
import typing

import pytest

from smml._discovery import public_modules

#: methods that are scikit-learn's (inherited) or Python's, annotated (or not) there
SKIP_METHODS = {"get_params", "set_params", "score", "fit_predict", "fit_transform", "get_metadata_routing",
                "with_traceback", "add_note", "get_feature_names_out", "set_output"}


def _ours(obj):
    return getattr(obj, "__module__", "").split(".")[0] == "smml"


def _public_callables():
    """``[(qualified name, function or property, is_method)]``, one entry per object."""
    out = []
    for modname in public_modules():
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if not _ours(obj):
                continue            # re-exported from numpy / scikit-learn (smml.base's mixins)
            qual = f"{modname}.{name}"
            if inspect.isfunction(obj) or (callable(obj) and not inspect.isclass(obj)):
                out.append((qual, obj, False))
                continue
            if not inspect.isclass(obj):
                continue            # constants (FORMAT_VERSION, __version__)
            # the class's own members, then those it inherits from smml's (private) bases, named
            # where they are defined
            for klass in obj.__mro__:
                if not _ours(klass) or issubclass(klass, BaseException) and klass is not obj:
                    continue
                where = qual if klass is obj else f"{klass.__module__}.{klass.__qualname__}"
                for mname, member in vars(klass).items():
                    if mname in SKIP_METHODS or (mname.startswith("_") and mname not in ("__init__", "__call__")):
                        continue
                    if klass is not obj and mname in vars(obj):
                        continue
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    if inspect.isfunction(member) or isinstance(member, property):
                        out.append((f"{where}.{mname}", member, True))
    seen, unique = set(), []
    for qual, obj, is_method in out:
        key = id(obj.fget if isinstance(obj, property) else obj)
        if key not in seen:
            seen.add(key)
            unique.append((qual, obj, is_method))
    return unique


OBJECTS = _public_callables()


def _missing(qual, obj, is_method):
    """The annotations ``obj`` lacks, as ``"qual(param)"`` / ``"qual -> return"``."""
    if isinstance(obj, property):
        obj = obj.fget
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return [f"{qual}: no inspectable signature"]
    params = list(sig.parameters.values())
    if is_method and params and params[0].name in ("self", "cls"):
        params = params[1:]
    miss = [f"{qual}({p.name})" for p in params if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        miss.append(f"{qual} -> return")
    return miss


def test_walk_finds_the_api():
    names = {qual for qual, _, _ in OBJECTS}
    # one of each kind: a function, a class's __init__ and method, a method inherited from a
    # private base, a property, a dataclass's generated __init__
    for qual in ("smml.save", "smml.bounds.hoeffding_epsilon", "smml.losses.zero_one",
                 "smml.linear.Perceptron.__init__", "smml.linear.Perceptron.fit",
                 "smml.datasets.KnownDistribution.bayes_risk", "smml.datasets.KnownDistribution.__init__",
                 "smml.dask.KMeans.fit"):
        assert qual in names, qual


def test_public_api_is_annotated():
    """Every parameter and every return of the public API is annotated; the message names them all."""
    missing = [m for qual, obj, is_method in OBJECTS for m in _missing(qual, obj, is_method)]
    assert not missing, f"{len(missing)} missing annotations:\n" + "\n".join(missing)


def test_annotations_resolve():
    """The annotations (strings under ``from __future__ import annotations``) name real objects:
    ``typing.get_type_hints`` evaluates them, as documentation tools and runtime checkers do."""
    broken = []
    for qual, obj, _ in OBJECTS:
        fn = obj.fget if isinstance(obj, property) else obj
        try:
            typing.get_type_hints(fn)
        except Exception as exc:  # noqa: BLE001 - every failure is reported by name
            broken.append(f"{qual}: {type(exc).__name__}: {exc}")
    assert not broken, "\n".join(broken)


def test_py_typed_marker_ships():
    """PEP 561: the installed package carries ``py.typed`` (setuptools' package-data lists it)."""
    marker = importlib.resources.files("smml").joinpath("py.typed")
    assert marker.is_file()


def test_py_typed_in_package_data():
    """The wheel's package data names ``py.typed`` (pyproject.toml's [tool.setuptools.package-data])."""
    import pathlib

    tomllib = pytest.importorskip("tomllib")        # Python >= 3.11
    root = pathlib.Path(__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file():
        pytest.skip("no source tree (tests run against an installed wheel)")
    cfg = tomllib.loads((root / "pyproject.toml").read_text())
    data = cfg["tool"]["setuptools"]["package-data"]
    assert "py.typed" in data.get("smml", [])
