"""smml.load on damaged and hostile files: a model or a ValueError/TypeError, never code run.

Two kinds of tests:

- crafted files (always run): a model file edited to name a dangerous callable
  (``os.system`` / ``posix.system``, ``builtins.eval``, ``subprocess.Popen``, ...) in every
  place the two backends resolve or call a type; ``load`` must refuse each with
  a ``ValueError`` while stand-ins for those callables record any call;
- fuzzing (needs ``hypothesis``): valid files of both backends, mutated at the
  byte level (the whole file, or one member inside the zip and re-zipped
  validly, nested zips included, so the damage reaches the JSON and npy
  parsers) and at the JSON level (nodes replaced, deleted, copied, keys added,
  dangerous names and loader names injected). Every load must return a model
  whose object graph holds only trusted types, or raise ``ValueError`` /
  ``TypeError``; any other exception, or a call to a stand-in, fails.

The normal run tries ``FUZZ_EXAMPLES`` (60) examples per fuzz test with a fixed
seed; ``SMML_FUZZ_EXAMPLES=2000`` tries that many per test, each run different
(add ``-s`` to see the outcome counts, ``--hypothesis-show-statistics`` for
hypothesis' own).
"""
import builtins
import collections
import contextlib
import copy
import functools
import io
import json
import os
import importlib
import pickle
import shutil
import subprocess
import sys
import tempfile
import types
import warnings
import zipfile
from unittest import mock

import numpy as np
import pytest

import smml
from smml import _persist
from smml.ensemble import RandomForestClassifier
from smml.neighbors import KNNClassifier
from smml.tree import TreeClassifier

# hypothesis caches what it learns under ./.hypothesis unless told otherwise: not in the checkout
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "smml-hypothesis"))
try:
    from hypothesis import HealthCheck, event, given, settings
    from hypothesis import strategies as st
except ImportError:          # the crafted-file tests still run
    given = None

LONG = int(os.environ.get("SMML_FUZZ_EXAMPLES", "0") or 0)
FUZZ_EXAMPLES = LONG or 60
OUTCOMES = collections.Counter()


# ---- stand-ins for what a hostile file would like to run ---------------------------------

class Called(BaseException):
    """Raised by a stand-in: not an Exception, so no ``except Exception`` in load can hide it."""


CALLS = []
SYSTEM_MODULE = importlib.import_module(os.system.__module__)     # posix, or nt on Windows
SYSTEM = f"{SYSTEM_MODULE.__name__}.system"

#: (module, attribute) of callables a file must never reach; during each load they are stand-ins
DANGEROUS = [(SYSTEM_MODULE, "system"), (os, "system"), (os, "popen"), (os, "execv"), (os, "remove"),
             (subprocess, "Popen"), (subprocess, "run"), (subprocess, "check_output"),
             (builtins, "eval"), (builtins, "exec"), (builtins, "breakpoint"), (pickle, "loads"),
             (shutil, "rmtree")]
DANGEROUS_NAMES = [SYSTEM, "os.system", "builtins.eval", "builtins.exec", "subprocess.Popen",
                   "pickle.loads", "shutil.rmtree", "builtins.__import__", "builtins.getattr"]


_EXEC = builtins.exec


def _stand_in(name):
    def stand_in(*args, **kwargs):
        if name == "builtins.exec" and _imports_a_codec(args):
            return _EXEC(*args, **kwargs)
        CALLS.append((name, args, kwargs))
        raise Called(name)
    return stand_in


def _imports_a_codec(args):
    """True when exec runs for importlib, importing a codec of the standard library: json.loads of
    bytes detects UTF-16/32 and imports ``encodings.utf_16_le`` (say) the first time it meets one."""
    namespace = args[1] if len(args) > 1 else None
    return (sys._getframe(2).f_code.co_name == "_call_with_frames_removed" and isinstance(namespace, dict)
            and str(namespace.get("__name__", "")).startswith("encodings."))


@contextlib.contextmanager
def stand_ins():
    with contextlib.ExitStack() as stack:
        for mod, attr in DANGEROUS:
            stack.enter_context(mock.patch.object(mod, attr, _stand_in(f"{mod.__name__}.{attr}")))
        yield


# ---- valid files to start from ---------------------------------------------------------

def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    X[:, 3] = rng.integers(0, 3, 60)
    return X, (X[:, 0] + X[:, 1] > 0).astype(int)


def _pipeline():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, StandardScaler

    ct = ColumnTransformer([("num", StandardScaler(), [0, 1, 2]),
                            ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), [3])])
    return make_pipeline(ct, MinMaxScaler(), KNNClassifier(n_neighbors=3))


def _odd_knn():
    est = KNNClassifier(n_neighbors=3)
    est.note_ = {1: (np.float32(2.5), -0.0, float("nan"), b"ab", {3, 4}), "g": np.random.default_rng(1),
                 "rs": np.random.RandomState(2), "sl": slice(1, 5, 2),
                 "dt": np.dtype([("a", "<f8"), ("b", "<i4", (2,))]), "obj": np.array([1, "a", None], dtype=object)}
    return est


SEED_NAMES = [f"{m}-{b}" for m in ("knn", "pipeline", "tree", "forest") for b in ("skops", "npz")] + ["odd-npz"]


@functools.lru_cache(maxsize=None)
def seeds():
    """{name: (file bytes, type names of the loaded model's graph)} of valid model files."""
    X, y = _data()
    models = {"knn": KNNClassifier(n_neighbors=3).fit(X, y), "pipeline": _pipeline().fit(X, y),
              "tree": TreeClassifier(max_depth=3, random_state=0).fit(X, y),
              "forest": RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)}
    out = {}
    for name, model in models.items():
        for backend in ("skops", "npz"):
            buf = io.BytesIO()
            assert smml.save(model, buf, backend=backend) == backend
            out[f"{name}-{backend}"] = buf.getvalue()
    buf = io.BytesIO()
    assert smml.save(_odd_knn().fit(X, y), buf, backend="npz") == "npz"
    out["odd-npz"] = buf.getvalue()
    assert sorted(out) == sorted(SEED_NAMES)
    return {k: (v, graph_types(smml.load(io.BytesIO(v)))) for k, v in out.items()}


def allowed_graph_types():
    """What a loaded model may hold: trusted types, and what trusted code builds from them."""
    allowed = set(_persist._trusted_map())
    for _, names in seeds().values():
        allowed |= names
    return allowed


def graph_types(obj):
    """Names of the types of every object reachable from ``obj`` (containers, __dict__, slots)."""
    names, seen, stack = set(), set(), [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, type):
            names.add("type:" + _persist._type_name(o))
            continue
        if isinstance(o, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, functools.partial)):
            names.add("callable:" + repr(o))
            continue
        names.add(_persist._type_name(type(o)))
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif isinstance(o, np.ndarray):
            if o.dtype.hasobject:
                stack.extend(o.ravel().tolist())
        else:
            stack.extend(getattr(o, "__dict__", {}).values())
            stack.extend(v for k, v in _persist._slots_state(o).items())
    return names


# ---- the check every example passes ----------------------------------------------------

def check_load(data):
    """Load ``data`` with the stand-ins in place; fail on anything but a model or ValueError/TypeError."""
    del CALLS[:]
    with stand_ins(), warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            model = smml.load(io.BytesIO(data))
        except (ValueError, TypeError) as exc:
            outcome = f"{type(exc).__name__}: {_reason(str(exc))}"
        else:
            outcome = "loaded"
            held = {n for n in graph_types(model) if not n.startswith("type:")} | {
                n[5:] for n in graph_types(model) if n.startswith("type:")}
            strange = held - allowed_graph_types()
            assert not strange, f"the loaded model holds untrusted types/callables: {sorted(strange)}"
    assert not CALLS, f"load called {CALLS}"
    if warned:
        outcome += " (warned)"
    OUTCOMES[outcome] += 1
    return outcome


def _reason(msg):
    """A short class of the error message, for the counts."""
    for key in ("does not trust", "not a type smml trusts", "not a zip archive", "no smml.json",
                "invalid format_version", "invalid smml_version", "upgrade smml", "unknown backend",
                "not an smml model file", "corrupt state.json", "corrupt model.skops", "the metadata says"):
        if key in msg:
            return key
    if "not a readable smml model file" in msg:
        return "unreadable (" + msg.split("smml.save): ", 1)[-1].split(":", 1)[0] + ")"
    return msg[:60]


# ---- crafted files naming dangerous callables (no hypothesis needed) --------------------

def _members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in members.items():
            zf.writestr(k, v)
    return buf.getvalue()


def _with_npz_state(edit):
    members = _members(seeds()["knn-npz"][0])
    state = json.loads(members["state.json"])
    edit(state)
    return _zip(dict(members, **{"state.json": json.dumps(state).encode()}))


def _with_schema(edit):
    members = _members(seeds()["knn-skops"][0])
    inner = _members(members["model.skops"])
    schema = json.loads(inner["schema.json"])
    edit(schema)
    inner["schema.json"] = json.dumps(schema).encode()
    return _zip(dict(members, **{"model.skops": _zip(inner)}))


def _npz_attrs(state):
    """The (key, value) pairs of the model's __dict__ in an npz state."""
    return state["state"]["dict"]


def _npz_placements(name):
    """Files whose npz state names ``name`` as a type, a class to build or call, a bit generator."""
    def add(value):
        return lambda s: _npz_attrs(s).append(["evil_", value])

    def top(s):
        s["object"] = name
    yield "type", add({"type": name})
    yield "reduce", add({"object": name, "how": "reduce", "args": {"tuple": ["exit 0"]}, "state": None})
    yield "setstate", add({"object": name, "how": "setstate", "state": "exit 0"})
    yield "dict", add({"object": name, "how": "dict", "state": {"dict": []}})
    yield "top-level", top
    yield "bit-generator", add({"Generator": {"dict": [["bit_generator", name.rsplit(".", 1)[1]]]}})


def _skops_add(node):
    """An edit of a skops schema that adds ``node`` to the model's attributes as ``evil_``."""
    def edit(schema):
        attrs = schema["content"]           # the DictNode of the model's __dict__
        attrs["content"]["evil_"] = node
        attrs["key_types"]["content"].append({"__class__": "str", "__module__": "builtins",
                                              "__loader__": "TypeNode"})
    return edit


def _skops_placements(name):
    """Files whose skops schema names ``name`` in each kind of node that resolves or calls a type."""
    mod, cls = name.rsplit(".", 1)
    add = _skops_add

    def node(loader, **extra):
        return dict({"__class__": cls, "__module__": mod, "__loader__": loader}, **extra)
    args = {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
            "content": [{"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode",
                         "content": '"exit 0"', "is_json": True}]}
    empty = {"__class__": "dict", "__module__": "builtins", "__loader__": "DictNode", "content": {},
             "key_types": {"__class__": "list", "__module__": "builtins", "__loader__": "ListNode",
                           "content": []}}

    def top(s):
        s["__class__"], s["__module__"] = cls, mod
    yield "TypeNode", add(node("TypeNode"))
    yield "ObjectNode", add(node("ObjectNode", content=empty))
    yield "ConstructorFromReduceNode", add(node("ConstructorFromReduceNode", content=args))
    yield "TreeNode", add(node("TreeNode", content=empty, __reduce__={"args": args}))
    yield "top-level", top
    yield "FunctionNode", add(node("FunctionNode"))
    # a MethodNode names its method in its content ("str".system), not in __module__/__class__
    # (a trusted str): smml's own check passes it, skops' check (by its own reading) refuses it
    yield "MethodNode", add({"__class__": "str", "__module__": "builtins", "__loader__": "MethodNode",
                             "content": {"func": cls, "obj": args["content"][0]}})
    yield "PartialNode", add({"__class__": "partial", "__module__": "functools", "__loader__": "PartialNode",
                              "content": {"func": node("TypeNode"), "args": args, "kwds": empty,
                                          "namespace": empty}})
    yield "OperatorFuncNode", add({"__class__": "methodcaller", "__module__": "operator",
                                   "__loader__": "OperatorFuncNode", "attrs": args})


@pytest.mark.parametrize("name", DANGEROUS_NAMES)
def test_crafted_npz_files_naming_a_dangerous_callable_are_refused(name):
    for where, edit in _npz_placements(name):
        data = _with_npz_state(edit)
        with stand_ins(), pytest.raises(ValueError, match="trust|corrupt state.json") as err:
            smml.load(io.BytesIO(data))
        assert not CALLS, (where, CALLS)
        assert type(err.value) is ValueError, where
        if where in ("type", "reduce", "setstate", "dict"):
            assert f"{name}, which smml does not trust" in str(err.value), where


@pytest.mark.parametrize("name", DANGEROUS_NAMES)
def test_crafted_skops_files_naming_a_dangerous_callable_are_refused(name):
    for where, edit in _skops_placements(name):
        data = _with_schema(edit)
        with stand_ins(), pytest.raises(ValueError, match="does not trust") as err:
            smml.load(io.BytesIO(data))
        assert not CALLS, (where, CALLS)
        assert type(err.value) is ValueError, where
        named = "operator.methodcaller" if where == "OperatorFuncNode" else name.rsplit(".", 1)[1]
        assert named in str(err.value), (where, str(err.value))


def test_the_stand_ins_would_see_a_call():
    # the control: trusting the name lets skops call it, and the stand-in catches the call -
    # so in the tests above, no call means the refusal stopped it, not a broken harness
    data = _with_schema(next(e for w, e in _skops_placements(SYSTEM) if w == "ConstructorFromReduceNode"))
    del CALLS[:]
    with stand_ins(), pytest.raises(Called):
        smml.load(io.BytesIO(data), trusted=[SYSTEM])
    assert CALLS == [(SYSTEM, ("exit 0",), {})]
    # the npz decoder builds classes only: a trusted function is still not called
    data = _with_npz_state(next(e for w, e in _npz_placements(SYSTEM) if w == "reduce"))
    del CALLS[:]
    with stand_ins(), pytest.raises(ValueError, match=f"{SYSTEM} is not a class"):
        smml.load(io.BytesIO(data), trusted=[SYSTEM])
    assert not CALLS


@pytest.mark.parametrize("backend", ["skops", "npz"])
@pytest.mark.parametrize("value_type", ["builtins.bytes", "builtins.bytearray", "builtins.str", "numpy.void"])
def test_a_file_cannot_call_a_value_type_to_fill_memory(backend, value_type):
    # bytes(10**12) would allocate a terabyte: the value types are decoded from their own
    # entries, never called with arguments from the file
    big = 10 ** 12
    if backend == "npz":
        data = _with_npz_state(lambda s: _npz_attrs(s).append(
            ["evil_", {"object": value_type, "how": "reduce", "args": {"tuple": [big]}, "state": None}]))
    else:
        mod, cls = value_type.rsplit(".", 1)
        args = {"__class__": "tuple", "__module__": "builtins", "__loader__": "TupleNode",
                "content": [{"__class__": "int", "__module__": "builtins", "__loader__": "JsonNode",
                             "content": str(big), "is_json": True}]}
        data = _with_schema(_skops_add({"__class__": cls, "__module__": mod,
                                        "__loader__": "ConstructorFromReduceNode", "content": args}))
    with pytest.raises(ValueError, match=rf"{value_type}.* to build|calls \['{value_type}'\]"):
        smml.load(io.BytesIO(data))


def test_every_seed_loads_and_passes_the_check():
    for name, (data, _) in seeds().items():
        assert check_load(data) == "loaded", name


# ---- fuzzing ---------------------------------------------------------------------------

needs_hypothesis = pytest.mark.skipif(given is None, reason="the fuzz tests need hypothesis")

if given is not None:
    SETTINGS = settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None, derandomize=not LONG,
                        suppress_health_check=list(HealthCheck), print_blob=True)
    SEED = st.sampled_from(SEED_NAMES)
    POS = st.integers(0, 2 ** 32)
    BYTE_OP = st.one_of(
        st.tuples(st.just("flip"), POS, st.integers(0, 7)),
        st.tuples(st.just("truncate"), POS),
        st.tuples(st.just("delete"), POS, st.integers(1, 64)),
        st.tuples(st.just("insert"), POS, st.binary(min_size=1, max_size=32)),
        st.tuples(st.just("overwrite"), POS, st.binary(min_size=1, max_size=16)),
        st.tuples(st.just("duplicate"), POS, st.integers(1, 64), POS))
    LOADERS = ["TypeNode", "ObjectNode", "FunctionNode", "MethodNode", "PartialNode", "OperatorFuncNode",
               "ConstructorFromReduceNode", "TreeNode", "LossNode", "ReduceNode", "JsonNode", "NdArrayNode",
               "DTypeNode", "RandomStateNode", "RandomGeneratorNode", "CachedNode", "DictNode", "ListNode",
               "TupleNode", "SetNode", "SliceNode", "BytesNode", "BytearrayNode", "DefaultDictNode"]
    KEYS = ["__class__", "__module__", "__loader__", "__id__", "__reduce__", "content", "args", "attrs",
            "func", "obj", "module_path", "function", "file", "type", "object", "how", "state", "slots",
            "ndarray", "npscalar", "objarray", "items", "dtype", "list", "tuple", "dict", "set", "frozenset",
            "bytes", "float", "RandomState", "Generator", "format", "format_version", "smml_version",
            "class", "backend", "protocol", "_skops_version", "is_json", "key_types", "bit_generator"]
    INTERESTING = (DANGEROUS_NAMES + LOADERS + KEYS
                   + ["posix", "system", "builtins", "eval", "exec", "subprocess", "Popen", "os", "operator",
                      "methodcaller", "attrgetter", "functools", "partial", "reduce", "cython", "setstate",
                      "builtins.bytes", "builtins.bytearray", "builtins.slice", "builtins.type", "numpy.void",
                      "numpy.ndarray", "numpy.random.PCG64", "smml.tree.Tree", "skops", "npz", "a0", "a1",
                      "0.0.0", "99.0", "nan", "inf", "", "\x00", "\u00e9", "../../etc/passwd"]
                   + [0, 1, -1, 2, 2 ** 31, 2 ** 63, -2 ** 63, 10 ** 12, 10 ** 30, 1e308, -0.0, True, False, None,
                      [], {}, [[]], {"dict": []}, {"list": []}, {"tuple": [10 ** 9]}])
    JSON_VALUE = st.recursive(
        st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats(allow_nan=False)
        | st.text(max_size=12),
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6),
                                                                 kids, max_size=4),
        max_leaves=8)


def apply_byte_ops(data, ops):
    b = bytearray(data)
    for op in ops:
        n = len(b)
        kind, pos = op[0], op[1] % (n + 1)
        if kind == "flip" and n:
            b[pos % n] ^= 1 << op[2]
        elif kind == "truncate":
            del b[pos:]
        elif kind == "delete":
            del b[pos:pos + op[2]]
        elif kind == "insert":
            b[pos:pos] = op[2]
        elif kind == "overwrite":
            b[pos:pos + len(op[2])] = op[2]
        elif kind == "duplicate":
            chunk = bytes(b[pos:pos + op[2]])
            at = op[3] % (n + 1)
            b[at:at] = chunk
    return bytes(b)


def unpack(data):
    """A model file as a tree: {member: bytes or (the same tree of a nested zip)}."""
    out = {}
    for name, value in _members(data).items():
        if name.endswith((".skops", ".npz")):
            value = unpack(value)
        out[name] = value
    return out


def pack(tree):
    return _zip({k: (pack(v) if isinstance(v, dict) else v) for k, v in tree.items()})


def leaves(tree, prefix=()):
    for k, v in tree.items():
        if isinstance(v, dict):
            yield from leaves(v, prefix + (k,))
        else:
            yield prefix + (k,)


def replace_leaf(tree, path, value):
    tree = dict(tree)
    tree[path[0]] = value if len(path) == 1 else replace_leaf(tree[path[0]], path[1:], value)
    return tree


def get_leaf(tree, path):
    for k in path:
        tree = tree[k]
    return tree


def json_paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from json_paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from json_paths(v, prefix + (i,))


def json_get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def apply_json_op(doc, op, draw):
    """One structural edit of ``doc`` (a JSON document), by ``op`` with values drawn by ``draw``."""
    paths = list(json_paths(doc))
    path = paths[draw(st.integers(0, len(paths) - 1))]
    node = json_get(doc, path)
    if op == "replace" or not path:
        source = draw(st.sampled_from(["value", "interesting", "copy"]))
        if source == "value":
            value = draw(JSON_VALUE)
        elif source == "interesting":
            value = copy.deepcopy(draw(st.sampled_from(INTERESTING)))
        else:
            value = copy.deepcopy(json_get(doc, paths[draw(st.integers(0, len(paths) - 1))]))
        if not path:
            return value
        json_get(doc, path[:-1])[path[-1]] = value
    elif op == "delete":
        del json_get(doc, path[:-1])[path[-1]]
    elif op == "add-key" and isinstance(node, dict):
        key = draw(st.sampled_from(KEYS))
        node[key] = copy.deepcopy(draw(st.sampled_from(INTERESTING) | JSON_VALUE))
    elif op == "reorder" and isinstance(node, dict):
        items = list(node.items())[::-1]
        node.clear()
        node.update(items)
    elif op == "reorder" and isinstance(node, list):
        node.reverse()
    return doc


if given is not None:
    @SETTINGS
    @given(seed=SEED, ops=st.lists(BYTE_OP, min_size=1, max_size=4))
    def test_fuzz_whole_file_bytes(seed, ops):
        event(check_load(apply_byte_ops(seeds()[seed][0], ops)))

    @SETTINGS
    @given(seed=SEED, data=st.data())
    def test_fuzz_member_bytes_rezipped(seed, data):
        tree = unpack(seeds()[seed][0])
        paths = sorted(leaves(tree))
        for _ in range(data.draw(st.integers(1, 2))):
            path = data.draw(st.sampled_from(paths))
            ops = data.draw(st.lists(BYTE_OP, min_size=1, max_size=3))
            tree = replace_leaf(tree, path, apply_byte_ops(get_leaf(tree, path), ops))
        event(f"member {'/'.join(path)}")
        event(check_load(pack(tree)))

    @SETTINGS
    @given(seed=SEED, data=st.data())
    def test_fuzz_json_members_structurally(seed, data):
        tree = unpack(seeds()[seed][0])
        json_leaves = sorted(p for p in leaves(tree) if p[-1].endswith(".json"))
        state = [p for p in json_leaves if p != ("smml.json",)]
        path = data.draw(st.sampled_from(json_leaves + 2 * state))      # the state 3 times in 4
        doc = json.loads(get_leaf(tree, path))
        for _ in range(data.draw(st.integers(1, 3))):
            op = data.draw(st.sampled_from(["replace", "replace", "delete", "add-key", "reorder"]))
            doc = apply_json_op(doc, op, data.draw)
        event(f"json {'/'.join(path)}")
        event(check_load(pack(replace_leaf(tree, path, json.dumps(doc).encode()))))

    @SETTINGS
    @given(seed=SEED, data=st.data())
    def test_fuzz_json_and_arrays_together(seed, data):
        # both kinds of damage in one file: the state names arrays that are themselves damaged
        # (the .npy members of arrays.npz, or of the skops archive)
        tree = unpack(seeds()[seed][0])
        paths = sorted(leaves(tree))
        json_leaves = [p for p in paths if p[-1].endswith(".json")]
        path = data.draw(st.sampled_from(json_leaves))
        doc = apply_json_op(json.loads(get_leaf(tree, path)), "replace", data.draw)
        tree = replace_leaf(tree, path, json.dumps(doc).encode())
        arrays = [p for p in paths if p[-1].endswith((".npy", ".bin"))]
        if arrays:
            apath = data.draw(st.sampled_from(arrays))
            tree = replace_leaf(tree, apath, apply_byte_ops(get_leaf(tree, apath),
                                                            data.draw(st.lists(BYTE_OP, min_size=1, max_size=2))))
        event(check_load(pack(tree)))
else:
    @needs_hypothesis
    def test_fuzz():
        pass


@pytest.fixture(scope="module", autouse=True)
def report_outcomes():
    yield
    if OUTCOMES:
        total = sum(OUTCOMES.values())
        print(f"\nsmml.load fuzz: {total} files")
        for outcome, n in OUTCOMES.most_common():
            print(f"  {n:6d}  {outcome}")
