"""Model files that load without executing code: :func:`save` and :func:`load`.

pickle runs code while it loads, so a model file from someone else is a
program. ``smml.save`` writes a zip archive instead:

- ``smml.json``: the metadata - ``format`` ("smml-model"), ``format_version``
  (:data:`FORMAT_VERSION`, smml's own), the smml version that wrote it, the
  model's class and the ``backend`` that holds its state;
- the state itself, by one of two backends:

  - ``"skops"`` (preferred): ``model.skops``, scikit-learn's ecosystem format
    (``skops.io``): a JSON schema plus ``.npy`` arrays, loaded node by node
    after every type it names has been checked against a list of trusted types;
  - ``"npz"`` (the fallback): ``state.json`` (the object graph as JSON) plus
    ``arrays.npz`` (every array, loaded with ``allow_pickle=False``), written
    by this module.

Why two formats: skops holds every smml estimator there is today (the
round-trip test checks that ``save`` picks skops for each), and is the format
other tools read. The npz backend stays for state that skops rebuilds wrongly
or not at all - objects with ``__slots__`` and no ``__setstate__``, for one -
which a model added later, or an attribute a user sets, may hold: rather than
refuse such a model, ``save`` writes it with npz (the test of a family added
later shows one). It also needs nothing but numpy, so files can be written
and read where skops is missing.

``save`` tries skops first and checks the round trip at once: the finished
file is read back by the code ``load`` runs and its state compared with the
model's, attribute by attribute and bit for bit; if skops fails or loses
anything, the npz backend is used (and checked the same way); if neither holds
the model, ``save`` raises ``TypeError`` instead of writing a file that would
load a different model. ``save`` also refuses (``TypeError``) a model holding
a type that ``load`` would refuse, unless the same ``trusted`` list is passed
to both: a file ``save`` writes is always one ``load`` reads back. The file is
written to a temporary file next to ``path`` and moved over it, so ``path``
never holds half a model; it gets the mode ``open(path, "wb")`` would give it
(the process umask applied to 0o666, or the mode of the file it replaces).

``load`` trusts exactly: every class defined in smml
(:func:`smml._discovery.model_types`, found by walking smml's modules, so
models added later need no list), plus :func:`allowed_types`, a short explicit
list of numpy and builtin types and of scikit-learn classes that only hold
data (``Pipeline``, ``ColumnTransformer``, ``StandardScaler``,
``MinMaxScaler``, ``PolynomialFeatures``, ``OneHotEncoder``), plus whatever the
caller passes as ``trusted``. A file naming any other type (a function such as
``os.system`` included) is refused with a ``ValueError`` that names the types,
before anything is built. Every other way a file can be unreadable - not a
zip, truncated, bit-flipped, hand-edited into nonsense - is also a
``ValueError`` naming the file, with the parser's own exception chained as its
``__cause__``; a file of a newer ``format_version`` is refused with a message
saying to upgrade smml, and a file written by a newer smml in the same format
loads with an :class:`InconsistentVersionWarning`. Only an ``OSError`` opening
``path`` (missing file, no permission) and the ``ImportError`` of a missing
skops pass through as they are. What ``load`` cannot check is that a trusted
type's arrays are consistent (a hand-crafted file can hold a tree whose child
indices point outside it, or ask for a huge array): load files whose origin
you know.
"""
from __future__ import annotations

import functools
import io
import json
import math
import os
import re
import secrets
import stat
import types
import warnings
import zipfile
from collections.abc import Sequence
from typing import Any, BinaryIO, Literal

import numpy as np

from smml.exceptions import InconsistentVersionWarning

__all__ = ["save", "load", "FORMAT_VERSION", "allowed_types", "InconsistentVersionWarning"]

#: smml's model-file format. Bump it when a file written by the new code could be
#: misread by an older smml; ``load`` refuses files with a larger number.
FORMAT_VERSION = 1
_FORMAT = "smml-model"
_BACKENDS = ("skops", "npz")

#: scikit-learn classes a model is commonly wrapped in, trusted by default: composition and
#: preprocessing classes whose state is arrays and parameters only (no function among them -
#: not FunctionTransformer - so a file still cannot name anything to call; a callable set as a
#: parameter, e.g. ``OneHotEncoder(feature_name_combiner=f)``, is a type of its own, refused)
_SKLEARN_PLUMBING = ("sklearn.pipeline.Pipeline", "sklearn.compose.ColumnTransformer",
                     "sklearn.preprocessing.StandardScaler", "sklearn.preprocessing.MinMaxScaler",
                     "sklearn.preprocessing.PolynomialFeatures", "sklearn.preprocessing.OneHotEncoder")


def _saved_form(model):
    """The object ``save`` writes: ``model`` itself, or, for a class naming an in-memory twin
    in ``_saved_as`` (smml.dask's linear models, fitted on a cluster but holding only the
    in-memory model's state), a copy of it as that class: the file loads as the in-memory
    model, without dask."""
    cls = getattr(type(model), "_saved_as", None)
    if cls is None or type(model) is cls:
        return model
    twin = cls.__new__(cls)
    twin.__dict__.update(model.__dict__)
    return twin


def _type_name(t):
    return f"{t.__module__}.{t.__qualname__}"


def allowed_types() -> dict[str, type]:
    """{name: type} of the explicit allowlist beyond smml's classes (names as the files record them).

    builtins containers and scalars; numpy's ndarray, dtype, scalar types,
    RandomState, Generator and bit generators; and the scikit-learn classes a
    model is commonly wrapped in that hold only data (``Pipeline``,
    ``ColumnTransformer``, ``StandardScaler``, ``MinMaxScaler``,
    ``PolynomialFeatures``, ``OneHotEncoder``).
    """
    return dict(_allowed())


@functools.lru_cache(maxsize=None)
def _allowed():
    """allowed_types(), built once (save and load consult it several times per call)."""
    import importlib

    kinds = [dict, list, tuple, set, frozenset, str, int, float, bool, bytes, bytearray, slice, type(None),
             np.ndarray, np.dtype, np.random.RandomState, np.random.Generator]
    kinds += sorted({t for t in np.sctypeDict.values() if t.__module__ == "numpy"}, key=str)
    kinds += [getattr(np.random, n) for n in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
              if hasattr(np.random, n)]
    for path in _SKLEARN_PLUMBING:
        mod, name = path.rsplit(".", 1)
        kinds.append(getattr(importlib.import_module(mod), name))
    out = {}
    for t in kinds:
        out[_type_name(t)] = t
        if t.__module__ == "numpy":      # skops names numpy scalar types numpy.<name>
            out[f"numpy.{t.__name__}"] = t
    return out


@functools.lru_cache(maxsize=None)
def _value_types():
    """Names of the builtin and numpy types of the allowlist: a file holds their values, never a call
    to them with arguments from the file (``bytes(10**10)`` would fill memory), ``slice`` aside."""
    return frozenset(n for n, t in _allowed().items() if not n.startswith("sklearn.") and t is not slice)


def _trusted_map(extra=None):
    """{name: type} that load accepts: smml's classes, the allowlist, the caller's ``trusted``."""
    from smml._discovery import model_types

    trusted = dict(_allowed())
    trusted.update(model_types())
    for t in extra or ():
        if isinstance(t, type):
            trusted[_type_name(t)] = t
        elif isinstance(t, str):
            trusted[t] = None            # resolved by name on use (the caller vouched for it)
        else:
            raise TypeError(f"trusted must hold types or 'module.Class' names, got {t!r}")
    return trusted


def _is_model_type(name):
    """A type a model file may hold at its top: an smml class or an allow-listed scikit-learn one."""
    from smml._discovery import model_types

    return name in model_types() or (name in _allowed() and name.startswith("sklearn."))


def _require_skops():
    try:
        import skops.io as sio
    except ImportError:
        # name="skops.io": load lets this one ImportError through (the fix is to install skops)
        raise ImportError("smml.save/smml.load need skops, a dependency of smml: pip install skops "
                          "(or save with backend='npz')", name="skops.io") from None
    return sio


class _FileError(ValueError):
    """Why load refuses a file (corrupt, foreign, untrusted); load raises it as a ValueError naming
    the file."""


# ---- the state comparison that checks every round trip ----------------------------------

#: object's default __getstate__ (Python >= 3.11); None on 3.10, where object has none and pickle
#: copies ``__dict__`` (plus the slots) itself - the same state 3.11's default returns
_OBJECT_GETSTATE = getattr(object, "__getstate__", None)


def _custom_getstate(cls):
    """True when ``cls`` defines (or inherits) a ``__getstate__`` other than object's default."""
    getstate = getattr(cls, "__getstate__", None)
    return getstate is not None and getstate is not _OBJECT_GETSTATE


def _object_state(obj):
    """What defines a generic object: its getstate / __dict__ / reduce output."""
    cls = type(obj)
    if _custom_getstate(cls):
        return ("getstate", obj.__getstate__())
    if hasattr(obj, "__dict__"):
        return ("dict", dict(obj.__dict__), _slots_state(obj))
    return ("reduce", obj.__reduce_ex__(4))


def _slots_state(obj):
    out = {}
    for klass in type(obj).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                out[name] = getattr(obj, name)
    return out


def _same(a, b):
    """True when ``b`` is a faithful copy of ``a``: same types, arrays equal bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.names is not None:
            # field by field: a structured dtype's padding bytes (e.g. scikit-learn's tree nodes)
            # hold whatever the allocator left there and are not part of the value
            return all(_same(a[f], b[f]) for f in a.dtype.names)
        if a.dtype.hasobject:
            return all(_same(x, z) for x, z in zip(a.ravel(), b.ravel()))
        return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and (a.tobytes() == b.tobytes() if not a.dtype.hasobject else _same(a.item(),
                                                                                                   b.item()))
    if isinstance(a, float):
        return (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or (a != a and b != b)
    if a is None or isinstance(a, (bool, int, str, bytes, bytearray, complex, frozenset, set, slice, np.dtype)):
        return a == b
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, z) for x, z in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.random.RandomState):
        return _same(a.get_state(legacy=False), b.get_state(legacy=False))
    if isinstance(a, np.random.Generator):
        return _same(a.bit_generator.state, b.bit_generator.state)
    if isinstance(a, (type, types.FunctionType, types.BuiltinFunctionType, np.ufunc)):
        return a is b
    if isinstance(a, (types.MethodType, functools.partial)):
        return a == b
    try:
        return _same(_object_state(a), _object_state(b))
    except Exception:       # an object we cannot look into cannot be checked: not the same
        return False


# ---- the npz backend ----------------------------------------------------------------

class _Encoder:
    """The object graph as JSON, arrays aside; objects by their type's name and state."""

    def __init__(self):
        self.arrays = {}
        self.names = set()      # every type the state names (load decides which it trusts)

    def _array(self, a):
        key = f"a{len(self.arrays)}"
        self.arrays[key] = a
        return key

    def _object(self, obj):
        name = _type_name(type(obj))
        self.names.add(name)
        cls = type(obj)
        red = obj.__reduce_ex__(4)
        if isinstance(red, tuple) and len(red) >= 2 and red[0] is cls and all(r is None for r in red[3:]):
            # rebuilt by calling the (trusted) class with the arguments it gave, as skops does
            return {"object": name, "how": "reduce", "args": self(tuple(red[1])),
                    "state": self(red[2] if len(red) > 2 else None)}
        if _custom_getstate(cls):
            return {"object": name, "how": "setstate", "state": self(obj.__getstate__())}
        if hasattr(obj, "__dict__"):
            return {"object": name, "how": "dict", "state": self(dict(obj.__dict__)),
                    "slots": self(_slots_state(obj))}
        if hasattr(obj, "__reduce_cython__") and hasattr(obj, "__setstate_cython__"):
            red = obj.__reduce_cython__()
            state = red[2] if len(red) > 2 else red[1][2]
            return {"object": name, "how": "cython", "state": self(state)}
        if _slots_state(obj) or getattr(cls, "__slots__", None) is not None:
            return {"object": name, "how": "slots", "state": self(_slots_state(obj))}
        raise TypeError(f"cannot store an object of type {name}: it has no __dict__, __getstate__ "
                        f"or Cython pickling state")

    def __call__(self, o):
        if o is None or isinstance(o, (bool, str)):
            return o
        if type(o) is int:
            return o
        if type(o) is float:
            return o if math.isfinite(o) else {"float": repr(o)}
        if isinstance(o, np.ndarray):
            if o.dtype.hasobject:
                return {"objarray": list(o.shape), "items": [self(x) for x in o.ravel()]}
            return {"ndarray": self._array(o)}
        if isinstance(o, np.generic):
            if o.dtype.hasobject:
                raise TypeError("numpy object scalars are not supported")
            return {"npscalar": self._array(np.asarray(o))}
        if isinstance(o, np.dtype):
            if o.hasobject:
                if o != np.dtype(object):
                    raise TypeError(f"cannot store the dtype {o} (structured with objects)")
                return {"dtype": None}
            return {"dtype": self._array(np.empty(0, dtype=o))}
        if type(o) is list:
            return {"list": [self(x) for x in o]}
        if type(o) is tuple:
            return {"tuple": [self(x) for x in o]}
        if type(o) is dict:
            return {"dict": [[self(k), self(v)] for k, v in o.items()]}
        if type(o) in (set, frozenset):
            return {type(o).__name__: [self(x) for x in sorted(o, key=repr)]}
        if type(o) is bytes:
            return {"bytes": self._array(np.frombuffer(o, dtype=np.uint8))}
        if isinstance(o, np.random.RandomState):
            return {"RandomState": self(o.get_state(legacy=False))}
        if isinstance(o, np.random.Generator):
            return {"Generator": self(o.bit_generator.state)}
        if isinstance(o, (type, types.FunctionType, types.BuiltinFunctionType, np.ufunc)):
            name = f"{o.__module__ or 'numpy'}.{getattr(o, '__qualname__', o.__name__)}"
            if "<" in name:
                raise TypeError(f"cannot store {name}: only functions and types importable by name")
            self.names.add(name)
            return {"type": name}
        return self._object(o)


class _Decoder:
    def __init__(self, trusted, arrays, user=()):
        self.trusted = trusted
        self.arrays = arrays
        self.user = user        # the caller's own trusted names

    def _cls(self, name):
        if name not in self.trusted:
            raise _FileError(f"the model file names the type {name}, which smml does not trust "
                             f"(pass trusted=[{name!r}] to smml.load if you do)")
        cls = self.trusted[name]
        if cls is None:       # a name the caller trusted: resolve it now
            import importlib

            mod, _, qual = name.rpartition(".")
            cls = getattr(importlib.import_module(mod), qual)
        return cls

    def __call__(self, o):
        if o is None or isinstance(o, (bool, int, float, str)):
            return o
        if isinstance(o, list):
            raise _FileError("corrupt state.json: a bare list")
        (key, val), *rest = o.items()
        if key == "float":
            return float(val)
        if key == "ndarray":
            return self.arrays[val]
        if key == "npscalar":
            return self.arrays[val][()]
        if key == "objarray":
            arr = np.empty(len(o["items"]), dtype=object)
            arr[:] = [self(x) for x in o["items"]]
            return arr.reshape(val)
        if key == "dtype":
            return np.dtype(object) if val is None else self.arrays[val].dtype
        if key == "list":
            return [self(x) for x in val]
        if key == "tuple":
            return tuple(self(x) for x in val)
        if key == "dict":
            return {self(k): self(v) for k, v in val}
        if key == "set":
            return {self(x) for x in val}
        if key == "frozenset":
            return frozenset(self(x) for x in val)
        if key == "bytes":
            return self.arrays[val].tobytes()
        if key == "RandomState":
            rs = np.random.RandomState()
            rs.set_state(self(val))
            return rs
        if key == "Generator":
            state = self(val)
            bitgen_type = getattr(np.random, str(state.get("bit_generator")), None)
            if not isinstance(bitgen_type, type):
                raise _FileError(f"corrupt state.json: unknown bit generator {state.get('bit_generator')!r}")
            bitgen = self._cls(_type_name(bitgen_type))()
            bitgen.state = state
            return np.random.Generator(bitgen)
        if key == "type":
            return self._cls(val)
        if key == "object":
            cls = self._cls(val)
            if not isinstance(cls, type):
                raise _FileError(f"corrupt state.json: {val} is not a class")
            obj = None if o.get("how") == "reduce" else cls.__new__(cls)
            state = self(o["state"])
            how = o["how"]
            if how == "reduce":
                if val in _value_types() and val not in self.user:
                    raise _FileError(f"corrupt state.json: {val} is called to build an object")
                obj = cls(*self(o["args"]))
                if state is not None:
                    obj.__setstate__(state)
            elif how == "cython":
                obj.__setstate_cython__(state)
            elif how in ("setstate", "dict"):          # what pickle does with a state
                if hasattr(obj, "__setstate__"):
                    obj.__setstate__(state)
                elif isinstance(state, dict):
                    obj.__dict__.update(state)
                else:
                    raise _FileError(f"corrupt state.json: {val} takes no state {type(state).__name__}")
                for k, v in self(o.get("slots", {"dict": []})).items():
                    setattr(obj, k, v)
            elif how == "slots":
                for k, v in state.items():
                    setattr(obj, k, v)
            else:
                raise _FileError(f"corrupt state.json: unknown object layout {how!r}")
            return obj
        raise _FileError(f"corrupt state.json: unknown entry {key!r}")


def _npz_payload(model):
    """({member: bytes}, names of the types the state holds)."""
    enc = _Encoder()
    state = enc(model)
    buf = io.BytesIO()
    np.savez(buf, **enc.arrays)
    return {"state.json": json.dumps(state).encode(), "arrays.npz": buf.getvalue()}, enc.names


def _npz_load(zf, trusted, user=()):
    state = json.loads(zf.read("state.json"))
    with np.load(io.BytesIO(zf.read("arrays.npz")), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    return _Decoder(trusted, arrays, user)(state)


# ---- the skops backend -------------------------------------------------------------

#: skops loaders that call the type they name with arguments from the file
_SKOPS_CALLING_LOADERS = ("ReduceNode", "TreeNode", "LossNode", "ConstructorFromReduceNode")


def _named_types(node, acc, called=None):
    """Every 'module.name' a skops schema asks the loader to resolve (and, in ``called``, those
    it asks the loader to call)."""
    if isinstance(node, dict):
        if "__module__" in node and "__class__" in node:
            name = f"{node['__module__']}.{node['__class__']}"
            acc.add(name)
            if called is not None and node.get("__loader__") in _SKOPS_CALLING_LOADERS:
                called.add(name)
        for v in node.values():
            _named_types(v, acc, called)
    elif isinstance(node, list):
        for v in node:
            _named_types(v, acc, called)
    return acc


def _skops_names(data, called=None):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return _named_types(json.loads(zf.read("schema.json")), set(), called)


def _untrusted_message(refused):
    return (f"the model file names types smml does not trust: {refused}; smml.load trusts smml's own "
            f"classes and a short allowlist (pass trusted=[...] to smml.load for types you trust)")


def _skops_load(data, trusted, user=()):
    sio = _require_skops()
    from skops.io.exceptions import UntrustedTypesFoundException

    called = set()
    names = _skops_names(data, called)
    refused = sorted(n for n in names if n not in trusted)
    if refused:
        raise _FileError(_untrusted_message(refused))
    called = sorted(n for n in called if n in _value_types() and n not in user)
    if called:
        raise _FileError(f"corrupt model.skops: it calls {called} to build objects")
    try:
        # skops checks again, by its own reading of the schema: nothing outside what we trust
        return sio.loads(data, trusted=sorted(names))
    except UntrustedTypesFoundException as exc:
        raise _FileError(f"the model file names types smml does not trust (skops' own check: {exc})") from exc


# ---- save / load --------------------------------------------------------------------

def _payload(model, backend):
    """({member: bytes}, names of the types the state holds)."""
    if backend == "skops":
        data = _require_skops().dumps(model)
        return {"model.skops": data}, _skops_names(data)
    return _npz_payload(model)


def _user_names(trusted):
    """The 'module.Class' names of the caller's ``trusted`` list."""
    return {t if isinstance(t, str) else _type_name(t) for t in trusted or ()}


def _describe(path):
    """How error messages name the file."""
    if hasattr(path, "read") or hasattr(path, "write"):
        name = getattr(path, "name", None)
        return repr(name) if isinstance(name, (str, bytes)) else repr(path)
    return repr(os.fspath(path))


def _version_key(version):
    """An orderable key of a version string, or None when it is not one."""
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:                 # packaging comes with skops; without it, the release numbers
        match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
        return tuple(int(p) for p in match.group(1).split(".")) if match else None
    try:
        return Version(version)
    except InvalidVersion:
        return None


def _archive(meta, members):
    """The model file's bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("smml.json", json.dumps(meta, indent=1))
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _short(value):
    """repr(value), cut short: a damaged file's values can be long."""
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "..."


def _check_meta(meta, user, info):
    """Refuse metadata this smml cannot read; note in ``info`` a file from a newer smml."""
    from smml import __version__

    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        found = _short(meta.get("format")) if isinstance(meta, dict) else f"a JSON {type(meta).__name__}"
        raise _FileError(f"not an smml model file (format {found})")
    version = meta.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise _FileError(f"invalid format_version {_short(version)}")
    written_by = meta.get("smml_version")
    if version > FORMAT_VERSION:
        raise _FileError(f"written by smml {written_by[:40] if isinstance(written_by, str) else '?'} in model-file "
                         f"format version {version}; this smml reads versions up to {FORMAT_VERSION}: "
                         f"upgrade smml to load it")
    key = _version_key(written_by) if isinstance(written_by, str) else None
    if key is None:
        raise _FileError(f"invalid smml_version {_short(written_by)}")
    if key > _version_key(__version__):
        info["newer"] = written_by
    cls_name = meta.get("class")
    if not isinstance(cls_name, str) or not (_is_model_type(cls_name) or cls_name in user):
        raise _FileError(f"holds a {_short(cls_name)}, which is not a type smml trusts")
    if meta.get("backend") not in _BACKENDS:
        raise _FileError(f"unknown backend {_short(meta.get('backend'))}")
    return cls_name, meta["backend"]


def _read_model(f, trusted, user, info):
    """The model in the binary file ``f``: what load does, raising anything on a bad file."""
    try:
        zf = zipfile.ZipFile(f)
    except zipfile.BadZipFile as exc:
        raise _FileError("not an smml model file (not a zip archive, or a truncated one)") from exc
    with zf:
        try:
            meta = zf.read("smml.json")
        except KeyError:
            raise _FileError("not an smml model file (no smml.json)") from None
        cls_name, backend = _check_meta(json.loads(meta), user, info)
        if backend == "skops":
            model = _skops_load(zf.read("model.skops"), trusted, user)
        else:
            model = _npz_load(zf, trusted, user)
    if _type_name(type(model)) != cls_name:
        raise _FileError(f"the metadata says {cls_name} but the state holds {_type_name(type(model))}")
    return model


def _load_checked(f, trusted, user, where):
    """(model, info) from the open file ``f``; every failure a ValueError naming ``where``."""
    info = {}
    try:
        return _read_model(f, trusted, user, info), info
    except _FileError as exc:      # a refusal or a check of ours: its message says what is wrong
        raise ValueError(f"{where}: {exc}{_newer_note(info)}") from exc.__cause__
    except ImportError as exc:
        if exc.name == "skops.io":     # skops missing: installing it is the fix, not a corrupt file
            raise
        cause = exc
    except Exception as exc:           # whatever a damaged file makes the parsers raise
        cause = exc
    kind = type(cause).__qualname__
    if type(cause).__module__ not in ("builtins", None):
        kind = f"{type(cause).__module__}.{kind}"
    text = str(cause)
    text = text if len(text) <= 300 else text[:300] + "..."
    raise ValueError(f"{where} is not a readable smml model file (corrupt, truncated or not written by "
                     f"smml.save): {kind}: {text}{_newer_note(info)}") from cause


def _newer_note(info):
    from smml import __version__

    if "newer" not in info:
        return ""
    return f" (the file was written by smml {info['newer']}, newer than this smml {__version__})"


def save(model: Any, path: str | os.PathLike[str] | BinaryIO, *, backend: Literal["auto", "skops", "npz"] = "auto",
         trusted: Sequence[type | str] | None = None) -> str:
    """Write ``model`` to ``path`` as a model file that loads without running code.

    The file is a zip archive: ``smml.json`` (format version, smml version,
    class, backend) and the model's state, in the skops format when skops
    holds it faithfully, else as arrays in ``.npz`` plus JSON. The round trip
    is checked before the file is written: read back as :func:`load` reads
    it, the state must equal the model's bit for bit, or ``save`` tries the
    other backend and, failing both, raises ``TypeError``.

    Parameters
    ----------
    model : estimator
        An smml estimator (fitted or not), or a scikit-learn ``Pipeline`` or
        ``ColumnTransformer`` of smml estimators and allow-listed steps
        (see :func:`smml._persist.allowed_types`).
    path : str, os.PathLike or binary file object
        Where to write. An existing file is replaced atomically (a temporary
        file next to it, then ``os.replace``) and keeps its permissions; a new
        file gets the mode ``open(path, "wb")`` would give it (0o666 less the
        umask, typically 0o644). The extension is free; ``.smml`` is a good one.
    backend : {"auto", "skops", "npz"}, default="auto"
        "auto" prefers skops and falls back to npz.
    trusted : list of type or str, optional
        Types beyond smml's own and the allowlist that the model holds (e.g.
        scikit-learn trees inside an smml ensemble), as types or as
        "module.Class" names. Without them, ``save`` refuses a model that
        ``load`` would refuse; pass the same list to :func:`load`.

    Returns
    -------
    str
        The backend that holds the state.

    Raises
    ------
    TypeError
        The model is not an smml model, holds a type ``load`` would not
        trust, or neither backend stores it faithfully. Nothing is written.

    See Also
    --------
    load : Read the model back.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import smml
    >>> from smml.neighbors import KNNClassifier
    >>> X, y = np.array([[0.], [1.], [2.], [3.]]), np.array([0, 0, 1, 1])
    >>> model = KNNClassifier(n_neighbors=1).fit(X, y)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "model.smml")
    ...     backend = smml.save(model, path, backend="npz")
    ...     print(backend, smml.load(path).predict([[2.4]]).tolist())
    npz [1]
    """
    from smml import __version__

    if backend not in ("auto",) + _BACKENDS:
        raise ValueError(f"backend must be 'auto', 'skops' or 'npz', got {backend!r}")
    trusted_map = _trusted_map(trusted)
    user = _user_names(trusted)
    model = _saved_form(model)
    cls_name = _type_name(type(model))
    if not (_is_model_type(cls_name) or cls_name in user):
        raise TypeError(f"smml.save writes smml models; {cls_name} is not an smml class (nor one of "
                        f"{list(_SKLEARN_PLUMBING)})")
    where = _describe(path)
    errors, refused = [], set()
    for b in (_BACKENDS if backend == "auto" else (backend,)):
        try:
            members, names = _payload(model, b)
            untrusted = sorted(n for n in names if n not in trusted_map)
            if untrusted:        # load would refuse the file: do not write it
                refused.update(untrusted)
                errors.append(f"{b}: it holds types smml.load does not trust: {untrusted}")
                continue
            meta = {"format": _FORMAT, "format_version": FORMAT_VERSION, "smml_version": __version__,
                    "class": cls_name, "backend": b}
            data = _archive(meta, members)
            # read back by load's own code, with the trust load will be given
            back, _ = _load_checked(io.BytesIO(data), trusted_map, user, where)
            if not _same(model, back):
                raise TypeError("the model read back differs from the model saved")
        except ImportError:
            if backend != "auto":
                raise
            errors.append(f"{b}: skops is not installed")
            continue
        except (TypeError, ValueError, AttributeError) as exc:
            errors.append(f"{b}: {exc}")
            continue
        _write(path, data)
        return b
    if refused:
        raise TypeError(f"smml.save will not write a file smml.load would refuse: this {type(model).__name__} "
                        f"holds types smml does not trust: {sorted(refused)}. If you trust them, pass "
                        f"trusted={sorted(refused)!r} to smml.save and the same list to smml.load "
                        f"({'; '.join(errors)})")
    raise TypeError(f"smml.save cannot store this {type(model).__name__} faithfully: " + "; ".join(errors))


def _write(path, data):
    """Write ``data`` to ``path`` atomically, with the mode ``open(path, "wb")`` would give it."""
    if hasattr(path, "write"):
        path.write(data)
        return
    path = os.fspath(path)
    try:
        st = os.stat(path)
        keep_mode = stat.S_IMODE(st.st_mode) & 0o777 if stat.S_ISREG(st.st_mode) else None
    except FileNotFoundError:
        keep_mode = None
    directory = os.path.dirname(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        # not tempfile.mkstemp: it creates the file 0o600; os.open's 0o666 goes through the umask
        tmp = os.path.join(directory, f".smml-save-{secrets.token_hex(8)}")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"could not create a temporary file in {directory}")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())       # the data is on disk before the name points at it
        if keep_mode is not None:
            os.chmod(tmp, keep_mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def load(path: str | os.PathLike[str] | BinaryIO, *, trusted: Sequence[type | str] | None = None) -> Any:
    """Read a model written by :func:`save`, without executing code from the file.

    Parameters
    ----------
    path : str, os.PathLike or binary file object
        The model file.
    trusted : list of type or str, optional
        Types beyond smml's own and the allowlist that the file may name
        (e.g. a scikit-learn weak learner inside an smml ensemble), as types
        or as "module.Class" names.

    Returns
    -------
    estimator
        The model, with the state it was saved with.

    Raises
    ------
    ValueError
        The file names a type that is not trusted (the message lists them),
        is from a newer format version, or is not a readable smml model file
        (not a zip, truncated, damaged, edited): the message names the file,
        and the parser's own exception, if any, is the ``__cause__``.
    OSError
        ``path`` cannot be opened.
    ImportError
        The file is in the skops format and skops is not installed.

    Warns
    -----
    InconsistentVersionWarning
        The file was written by a newer smml (in a format this one reads).

    See Also
    --------
    save : Write a model file.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> import smml
    >>> from smml.neighbors import KNNClassifier
    >>> X, y = np.array([[0.], [1.], [2.], [3.]]), np.array([0, 0, 1, 1])
    >>> buf = io.BytesIO()                        # a file object works as well as a path
    >>> smml.save(KNNClassifier(n_neighbors=1).fit(X, y), buf, backend="npz")
    'npz'
    >>> _ = buf.seek(0)
    >>> model = smml.load(buf)
    >>> type(model).__name__, model.predict([[0.4]]).tolist()
    ('KNNClassifier', [0])
    """
    trusted_map = _trusted_map(trusted)
    user = _user_names(trusted)
    where = _describe(path)
    if hasattr(path, "read"):
        model, info = _load_checked(path, trusted_map, user, where)
    else:
        with open(os.fspath(path), "rb") as f:
            model, info = _load_checked(f, trusted_map, user, where)
    if "newer" in info:
        from smml import __version__

        warnings.warn(InconsistentVersionWarning(where, info["newer"], __version__), stacklevel=2)
    return model
