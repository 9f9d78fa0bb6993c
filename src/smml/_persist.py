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
    by this module; it also holds what skops cannot (objects with
    ``__slots__``, Cython classes pickled through ``__reduce_cython__``).

``save`` tries skops first and checks the round trip at once: the file is
read back and its state compared with the model's, attribute by attribute
and bit for bit; if skops fails or loses anything, the npz backend is used
(and checked the same way); if neither holds the model, ``save`` raises
``TypeError`` instead of writing a file that would load a different model.

``load`` trusts exactly: every class defined in smml
(:func:`smml._discovery.model_types`, found by walking smml's modules, so
models added later need no list), plus :func:`allowed_types`, a short explicit
list of numpy and builtin types and three scikit-learn plumbing classes,
plus whatever the caller passes as ``trusted``. A file naming any other type
is refused before anything is built; a file of a newer ``format_version`` is
refused with a message saying to upgrade smml. What ``load`` cannot check is
that a trusted type's arrays are consistent (a hand-crafted file can hold a
tree whose child indices point outside it): load files whose origin you know.
"""
import functools
import io
import json
import math
import os
import tempfile
import types
import zipfile

import numpy as np

__all__ = ["save", "load", "FORMAT_VERSION", "allowed_types"]

#: smml's model-file format. Bump it when a file written by the new code could be
#: misread by an older smml; ``load`` refuses files with a larger number.
FORMAT_VERSION = 1
_FORMAT = "smml-model"
_BACKENDS = ("skops", "npz")

_SKLEARN_PLUMBING = ("sklearn.pipeline.Pipeline", "sklearn.preprocessing.StandardScaler",
                     "sklearn.preprocessing.PolynomialFeatures")


def _type_name(t):
    return f"{t.__module__}.{t.__qualname__}"


def allowed_types():
    """{name: type} of the explicit allowlist beyond smml's classes (names as the files record them).

    builtins containers and scalars; numpy's ndarray, dtype, scalar types,
    RandomState, Generator and bit generators; and three scikit-learn
    plumbing classes a model is commonly wrapped in (``Pipeline``,
    ``StandardScaler``, ``PolynomialFeatures``).
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
        raise ImportError("smml.save/smml.load need skops, a dependency of smml: pip install skops "
                          "(or save with backend='npz')") from None
    return sio


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
    def __init__(self, trusted, arrays):
        self.trusted = trusted
        self.arrays = arrays

    def _cls(self, name):
        if name not in self.trusted:
            raise ValueError(f"the model file names the type {name}, which smml does not trust "
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
            raise ValueError("corrupt state.json: a bare list")
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
                raise ValueError(f"corrupt state.json: unknown bit generator {state.get('bit_generator')!r}")
            bitgen = self._cls(_type_name(bitgen_type))()
            bitgen.state = state
            return np.random.Generator(bitgen)
        if key == "type":
            return self._cls(val)
        if key == "object":
            cls = self._cls(val)
            if not isinstance(cls, type):
                raise ValueError(f"corrupt state.json: {val} is not a class")
            obj = None if o.get("how") == "reduce" else cls.__new__(cls)
            state = self(o["state"])
            how = o["how"]
            if how == "reduce":
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
                    raise ValueError(f"corrupt state.json: {val} takes no state {type(state).__name__}")
                for k, v in self(o.get("slots", {"dict": []})).items():
                    setattr(obj, k, v)
            elif how == "slots":
                for k, v in state.items():
                    setattr(obj, k, v)
            else:
                raise ValueError(f"corrupt state.json: unknown object layout {how!r}")
            return obj
        raise ValueError(f"corrupt state.json: unknown entry {key!r}")


def _npz_payload(model):
    """({member: bytes}, names of the types the state holds)."""
    enc = _Encoder()
    state = enc(model)
    buf = io.BytesIO()
    np.savez(buf, **enc.arrays)
    return {"state.json": json.dumps(state).encode(), "arrays.npz": buf.getvalue()}, enc.names


def _npz_load(zf, trusted):
    state = json.loads(zf.read("state.json"))
    with np.load(io.BytesIO(zf.read("arrays.npz")), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    return _Decoder(trusted, arrays)(state)


# ---- the skops backend -------------------------------------------------------------

def _named_types(node, acc):
    """Every 'module.name' a skops schema asks the loader to resolve."""
    if isinstance(node, dict):
        if "__module__" in node and "__class__" in node:
            acc.add(f"{node['__module__']}.{node['__class__']}")
        for v in node.values():
            _named_types(v, acc)
    elif isinstance(node, list):
        for v in node:
            _named_types(v, acc)
    return acc


def _skops_names(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return _named_types(json.loads(zf.read("schema.json")), set())


def _skops_load(data, trusted):
    sio = _require_skops()
    names = _skops_names(data)
    refused = sorted(n for n in names if n not in trusted)
    if refused:
        raise ValueError(f"the model file names types smml does not trust: {refused}; smml.load trusts "
                         f"smml's own classes and a short allowlist (pass trusted=[...] to smml.load "
                         f"for types you trust)")
    return sio.loads(data, trusted=sorted(names))


# ---- save / load --------------------------------------------------------------------

def _payload(model, backend):
    """({member: bytes}, names of the types the state holds)."""
    if backend == "skops":
        data = _require_skops().dumps(model)
        return {"model.skops": data}, _skops_names(data)
    return _npz_payload(model)


def _read_back(members, backend, trusted):
    if backend == "skops":
        return _skops_load(members["model.skops"], trusted)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in members.items():
            zf.writestr(k, v)
    with zipfile.ZipFile(buf) as zf:
        return _npz_load(zf, trusted)


def save(model, path, *, backend="auto"):
    """Write ``model`` to ``path`` as a model file that loads without running code.

    The file is a zip archive: ``smml.json`` (format version, smml version,
    class, backend) and the model's state, in the skops format when skops
    holds it faithfully, else as arrays in ``.npz`` plus JSON. The round trip
    is checked before the file is written: read back, the state must equal
    the model's bit for bit, or ``save`` tries the other backend and, failing
    both, raises ``TypeError``.

    Parameters
    ----------
    model : estimator
        An smml estimator (fitted or not), or a scikit-learn ``Pipeline`` of
        smml estimators and allow-listed steps.
    path : str, os.PathLike or binary file object
        Where to write (an existing file is replaced atomically). The
        extension is free; ``.smml`` is a good one.
    backend : {"auto", "skops", "npz"}, default="auto"
        "auto" prefers skops and falls back to npz.

    Returns
    -------
    str
        The backend that holds the state.

    See Also
    --------
    load : Read the model back.
    """
    from smml import __version__

    if backend not in ("auto",) + _BACKENDS:
        raise ValueError(f"backend must be 'auto', 'skops' or 'npz', got {backend!r}")
    trusted = _trusted_map()
    cls_name = _type_name(type(model))
    if not _is_model_type(cls_name):
        raise TypeError(f"smml.save writes smml models; {cls_name} is not an smml class (nor one of "
                        f"{list(_SKLEARN_PLUMBING)})")
    errors = []
    for b in (_BACKENDS if backend == "auto" else (backend,)):
        try:
            members, names = _payload(model, b)
            # read back trusting what this model holds: load, not save, decides what a file may name
            own = dict(trusted, **{n: None for n in names if n not in trusted})
            if not _same(model, _read_back(members, b, own)):
                raise TypeError("the model read back differs from the model saved")
        except ImportError:
            if backend != "auto":
                raise
            errors.append(f"{b}: skops is not installed")
            continue
        except (TypeError, ValueError, AttributeError) as exc:
            errors.append(f"{b}: {exc}")
            continue
        meta = {"format": _FORMAT, "format_version": FORMAT_VERSION, "smml_version": __version__,
                "class": cls_name, "backend": b}
        _write(path, meta, members)
        return b
    raise TypeError(f"smml.save cannot store this {type(model).__name__} faithfully: " + "; ".join(errors))


def _write(path, meta, members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("smml.json", json.dumps(meta, indent=1))
        for name, data in members.items():
            zf.writestr(name, data)
    data = buf.getvalue()
    if hasattr(path, "write"):
        path.write(data)
        return
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".smml-save-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path, *, trusted=None):
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
        The file is not an smml model file, is from a newer format version,
        or names a type that is not trusted.

    See Also
    --------
    save : Write a model file.
    """
    trusted_map = _trusted_map(trusted)
    try:
        zf = zipfile.ZipFile(path if hasattr(path, "read") else os.fspath(path))
    except zipfile.BadZipFile:
        raise ValueError(f"{path!r} is not an smml model file (not a zip archive)") from None
    with zf:
        try:
            meta = json.loads(zf.read("smml.json"))
        except KeyError:
            raise ValueError(f"{path!r} is not an smml model file (no smml.json)") from None
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise ValueError(f"{path!r} is not an smml model file (format {meta.get('format')!r})")
        version = meta.get("format_version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(f"{path!r}: invalid format_version {version!r}")
        if version > FORMAT_VERSION:
            raise ValueError(f"{path!r} was written by smml {meta.get('smml_version', '?')} in model-file format "
                             f"version {version}; this smml reads versions up to {FORMAT_VERSION}: "
                             f"upgrade smml to load it")
        cls_name = meta.get("class")
        user = {t if isinstance(t, str) else _type_name(t) for t in trusted or ()}
        if not isinstance(cls_name, str) or not (_is_model_type(cls_name) or cls_name in user):
            raise ValueError(f"{path!r} holds a {cls_name!r}, which is not a type smml trusts")
        backend = meta.get("backend")
        if backend == "skops":
            model = _skops_load(zf.read("model.skops"), trusted_map)
        elif backend == "npz":
            model = _npz_load(zf, trusted_map)
        else:
            raise ValueError(f"{path!r}: unknown backend {backend!r}")
    if _type_name(type(model)) != cls_name:
        raise ValueError(f"{path!r}: the metadata says {cls_name} but the state holds "
                         f"{_type_name(type(model))}")
    return model
