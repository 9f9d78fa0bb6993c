"""The API reference's docstrings, validated as numpydoc defines them, and their examples run
(issue 34): every public class and function of every public module, and every public method a
class defines or inherits from smml's base classes (inherited scikit-learn plumbing is
scikit-learn's).

Checked (numpydoc codes): GL08 a docstring exists; SS01 it starts with a summary; PR01 every
parameter is documented; PR02 no parameter is documented that does not exist; RT01 a method or
function that returns something has a Returns section (``fit`` returns ``self``); EX01 a class
or function has an Examples section.  Every Examples section runs as a doctest."""
import doctest
import importlib
import inspect

import numpy as np
import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

from smml._discovery import public_modules  # noqa: E402

CHECKS = {"GL08", "SS01", "PR01", "PR02", "RT01", "EX01"}
#: methods whose docstring is scikit-learn's (inherited) or Python's
SKIP_METHODS = {"get_params", "set_params", "score", "fit_predict", "fit_transform", "get_metadata_routing",
                "with_traceback", "add_note", "get_feature_names_out", "set_output"}
#: modules whose public objects are not the library's API (the command line's entry point)
SKIP_MODULES = {"smml.cli"}


def _public_objects():
    out = []
    for modname in public_modules():
        if modname in SKIP_MODULES:
            continue
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if getattr(obj, "__module__", "").split(".")[0] != "smml":
                continue
            qual = f"{modname}.{name}"
            out.append((qual, obj, True))
            if inspect.isclass(obj):
                for mname, member in vars(obj).items():
                    if mname.startswith("_") or mname in SKIP_METHODS:
                        continue
                    if inspect.isfunction(member) or isinstance(member, property):
                        out.append((f"{qual}.{mname}", member, False))
                # public methods inherited from smml's (private) base classes: checked where
                # they are defined (their page shows that docstring)
                for klass in obj.__mro__[1:]:
                    if not klass.__module__.startswith("smml"):
                        continue
                    for mname, member in vars(klass).items():
                        if mname.startswith("_") or mname in SKIP_METHODS or mname in vars(obj):
                            continue
                        if inspect.isfunction(member):
                            out.append((f"{klass.__module__}.{klass.__qualname__}.{mname}", member, False))
    # one entry per object (a class re-exported by two modules is checked once)
    seen, unique = set(), []
    for qual, obj, top in out:
        key = id(obj)
        if key not in seen:
            seen.add(key)
            unique.append((qual, obj, top))
    return unique


OBJECTS = _public_objects()


def _errors(qual, top):
    res = numpydoc_validate.validate(qual)
    errs = []
    for code, msg in res["errors"]:
        if code not in CHECKS:
            continue
        if code == "EX01" and not top:
            continue            # methods: the class's examples show them
        errs.append(f"{code}: {msg}")
    return errs


@pytest.mark.parametrize("qual,obj,top", OBJECTS, ids=[q for q, _, _ in OBJECTS])
def test_numpydoc(qual, obj, top):
    errs = _errors(qual, top)
    assert not errs, f"{qual}:\n  " + "\n  ".join(errs)


@pytest.mark.parametrize("qual,obj", [(q, o) for q, o, top in OBJECTS if top],
                         ids=[q for q, _, top in OBJECTS if top])
def test_examples_run(qual, obj):
    """The Examples section runs as printed (doctest; whitespace normalised, ``...`` allowed)."""
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(obj, qual, globs={})           # an example imports what it uses
    examples = [t for t in tests if t.examples]
    if not examples:
        pytest.skip(f"{qual} has no examples (test_numpydoc's EX01 reports it)")
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for t in examples:
        runner.run(t)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{qual}: {res.failed} of {res.attempted} examples failed (run above)"
