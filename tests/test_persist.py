"""smml.save / smml.load: every public estimator round-trips bit for bit, untrusted files are refused.

The estimators are discovered by walking smml's public modules
(``smml._discovery.all_estimators``), so a family added later is tested here
without editing this file: it is fitted on a small separable binary problem
(classifiers), a linear target (regressors) or X alone (anything that does not
need y), saved with each backend, loaded, and every prediction method must
give the same bits.
"""
import io
import json
import os
import re
import stat
import sys
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.base import is_classifier, is_regressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.tree._tree import Tree as SkTree
from sklearn.utils import get_tags

import smml
from smml import _persist
from smml._discovery import all_estimators, model_types, public_modules
from smml.ensemble import BaggingClassifier, RandomForestClassifier
from smml.neighbors import KNNClassifier

ESTIMATORS = all_estimators()
OUTPUT_METHODS = ("predict", "predict_proba", "decision_function", "transform", "score_samples")


def _data():
    """Binary labels of a hyperplane with a margin (any classifier fits it, the hard-margin ones
    included), a linear regression target, and fresh query points."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    w = np.array([1.0, -2.0, 0.5, 1.5])
    s = X @ w
    keep = np.abs(s) > 0.5
    X, s = X[keep][:80], s[keep][:80]
    y_clf = np.where(s > 0, 1, 0)
    y_reg = s + 0.1 * rng.normal(size=len(s))
    return X, y_clf, y_reg, rng.normal(size=(30, 4))


def _fitted(cls):
    X, y_clf, y_reg, _ = _data()
    est = cls()
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=0)
    if is_classifier(est):
        return est.fit(X, y_clf)
    if is_regressor(est) or get_tags(est).target_tags.required:
        return est.fit(X, y_reg)
    return est.fit(X)


def _outputs(est, Xq):
    out = {}
    for name in OUTPUT_METHODS:
        try:
            method = getattr(est, name)
        except AttributeError:          # available_if: not for this estimator
            continue
        try:
            out[name] = np.asarray(method(Xq))
        except (AttributeError, NotImplementedError):
            continue
    return out


def _assert_bit_identical(a, b):
    oa, ob = _outputs(a, _data()[3]), _outputs(b, _data()[3])
    assert oa.keys() == ob.keys() and "predict" in oa or "transform" in oa
    for k in oa:
        assert oa[k].dtype == ob[k].dtype and oa[k].shape == ob[k].shape, k
        assert oa[k].tobytes() == ob[k].tobytes(), k


def test_discovery_walks_the_public_modules():
    mods = public_modules()
    for family in ("smml.neighbors", "smml.tree", "smml.linear", "smml.ensemble", "smml.model_selection"):
        assert family in mods
    assert not any(m.startswith("smml.reference") or "._" in m for m in mods)
    names = {path.rsplit(".", 1)[1] for path, _ in ESTIMATORS}
    assert {"KNNClassifier", "TreeClassifier", "Perceptron", "RandomForestClassifier"} <= names
    assert "SmmlEstimator" not in names            # a base, no fit
    types = model_types()
    assert "smml.tree.Tree" in types and "smml.ensemble._bagging._ConstantClassifier" in types
    assert not any(n.startswith("smml.reference") for n in types)


@pytest.mark.parametrize("backend", ["auto", "npz"])
@pytest.mark.parametrize("path, cls", ESTIMATORS, ids=[p for p, _ in ESTIMATORS])
def test_round_trip_is_bit_identical(tmp_path, path, cls, backend):
    est = _fitted(cls)
    f = tmp_path / "model.smml"
    used = smml.save(est, f, backend=backend)
    assert used == ("skops" if backend == "auto" else "npz")   # skops holds every current model
    back = smml.load(f)
    assert type(back) is cls
    assert back.get_params() .keys() == est.get_params().keys()
    assert sorted(vars(back)) == sorted(vars(est))
    assert _persist._same(est, back)
    _assert_bit_identical(est, back)


@pytest.mark.parametrize("path, cls", ESTIMATORS, ids=[p for p, _ in ESTIMATORS])
def test_unfitted_estimators_round_trip(path, cls):
    buf = io.BytesIO()
    smml.save(cls(), buf)
    buf.seek(0)
    back = smml.load(buf)
    assert type(back) is cls and back.get_params() == cls().get_params()


def test_metadata_and_layout(tmp_path):
    est = _fitted(KNNClassifier)
    f = tmp_path / "knn.smml"
    smml.save(est, f)
    with zipfile.ZipFile(f) as zf:
        meta = json.loads(zf.read("smml.json"))
        assert set(zf.namelist()) == {"smml.json", "model.skops"}
    assert meta == {"format": "smml-model", "format_version": _persist.FORMAT_VERSION,
                    "smml_version": smml.__version__, "class": "smml.neighbors.KNNClassifier",
                    "backend": "skops"}
    smml.save(est, f, backend="npz")          # replaces the file
    with zipfile.ZipFile(f) as zf:
        assert set(zf.namelist()) == {"smml.json", "state.json", "arrays.npz"}


def _rewrite(src, dst, edit_meta=None, edit_member=None):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == "smml.json" and edit_meta:
                meta = json.loads(data)
                edit_meta(meta)
                data = json.dumps(meta).encode()
            elif edit_member and name in edit_member:
                data = edit_member[name](data)
            zout.writestr(name, data)


def test_newer_format_version_is_refused(tmp_path):
    f, g = tmp_path / "a.smml", tmp_path / "b.smml"
    smml.save(_fitted(KNNClassifier), f)
    _rewrite(f, g, edit_meta=lambda m: m.update(format_version=_persist.FORMAT_VERSION + 1, smml_version="9.0"))
    with pytest.raises(ValueError, match=r"written by smml 9.0 in model-file format version 2; this smml reads "
                                         r"versions up to 1: upgrade smml"):
        smml.load(g)
    for bad in (0, "1", None, True):
        _rewrite(f, g, edit_meta=lambda m: m.update(format_version=bad))
        with pytest.raises(ValueError, match="invalid format_version"):
            smml.load(g)


@pytest.mark.parametrize("cls_name", ["sklearn.tree._classes.DecisionTreeClassifier", "builtins.eval",
                                      "posix.system", "smml.reference.linear.Perceptron", None])
def test_metadata_naming_a_foreign_type_is_refused(tmp_path, cls_name):
    f, g = tmp_path / "a.smml", tmp_path / "b.smml"
    smml.save(_fitted(KNNClassifier), f)
    _rewrite(f, g, edit_meta=lambda m: m.update({"class": cls_name}))
    with pytest.raises(ValueError, match="not a type smml trusts"):
        smml.load(g)


@pytest.mark.parametrize("backend", ["auto", "skops", "npz"])
def test_save_refuses_what_load_would_refuse_unless_trusted(tmp_path, backend):
    # an smml ensemble of scikit-learn trees: load refuses it by default, so save does too
    X, y, _, _ = _data()
    bag = BaggingClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=3, random_state=0).fit(X, y)
    f = tmp_path / "bag.smml"
    with pytest.raises(TypeError, match=r"will not write a file smml.load would refuse.*"
                                        r"\['sklearn.tree._classes.DecisionTreeClassifier', "
                                        r"'sklearn.tree._tree.Tree'\]") as err:
        smml.save(bag, f, backend=backend)
    assert "trusted=['sklearn.tree._classes.DecisionTreeClassifier', 'sklearn.tree._tree.Tree']" in str(err.value)
    assert not os.listdir(tmp_path)
    with pytest.raises(TypeError, match=r"does not trust: \['sklearn.tree._tree.Tree'\]"):
        smml.save(bag, f, backend=backend, trusted=[DecisionTreeClassifier])       # half the list
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("backend", ["skops", "npz"])
def test_state_naming_a_foreign_type_is_refused_unless_trusted(tmp_path, backend):
    # an smml ensemble of scikit-learn trees: saved and loaded only when the caller trusts them
    X, y, _, _ = _data()
    bag = BaggingClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=3, random_state=0).fit(X, y)
    f = tmp_path / "bag.smml"
    assert smml.save(bag, f, backend=backend, trusted=[DecisionTreeClassifier, SkTree]) == backend
    with pytest.raises(ValueError, match=r"DecisionTreeClassifier"):
        smml.load(f)
    with pytest.raises(ValueError, match=r"sklearn.tree._tree.Tree"):   # its Cython tree too
        smml.load(f, trusted=[DecisionTreeClassifier])
    for trusted in ([DecisionTreeClassifier, SkTree], ["sklearn.tree._classes.DecisionTreeClassifier",
                                                       "sklearn.tree._tree.Tree"]):
        back = smml.load(f, trusted=trusted)
        _assert_bit_identical(bag, back)


@pytest.mark.parametrize("backend", ["skops", "npz"])
def test_a_function_smuggled_into_the_state_is_refused(tmp_path, backend, monkeypatch):
    sysmod = sys.modules[os.system.__module__]                 # posix (nt on Windows)
    calls = []

    def system(*args):                  # a stand-in for os.system that records calls
        calls.append(args)
    system.__module__, system.__qualname__ = sysmod.__name__, "system"
    monkeypatch.setattr(sysmod, "system", system)
    est = _fitted(KNNClassifier)
    est.hook_ = sysmod.system
    f = tmp_path / "evil.smml"
    with pytest.raises(TypeError, match=r"does not trust: \[.*system"):
        smml.save(est, f, backend=backend)                     # save will not write it...
    assert not os.listdir(tmp_path)
    name = f"{sysmod.__name__}.system"
    smml.save(est, f, backend=backend, trusted=[name])
    with pytest.raises(ValueError, match=r"does not trust.*system"):
        smml.load(f)                                           # ...and load refuses a file that holds it
    back = smml.load(f, trusted=[name])
    assert back.hook_ is sysmod.system and calls == []         # resolved by name (here the stub), not called


def test_crafted_npz_state_cannot_name_an_untrusted_type(tmp_path):
    f, g = tmp_path / "a.smml", tmp_path / "b.smml"
    smml.save(_fitted(KNNClassifier), f, backend="npz")

    def swap(data):
        return data.replace(b'"smml.neighbors.KNNClassifier"', b'"subprocess.Popen"')
    _rewrite(f, g, edit_member={"state.json": swap})
    with pytest.raises(ValueError, match="subprocess.Popen, which smml does not trust"):
        smml.load(g)


def test_not_a_model_file(tmp_path):
    f = tmp_path / "x.smml"
    f.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a zip archive"):
        smml.load(f)
    with zipfile.ZipFile(f, "w") as zf:
        zf.writestr("schema.json", "{}")
    with pytest.raises(ValueError, match="no smml.json"):
        smml.load(f)
    with zipfile.ZipFile(f, "w") as zf:
        zf.writestr("smml.json", json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="not an smml model file"):
        smml.load(f)


def test_save_refuses_what_is_not_a_model(tmp_path):
    for obj in ({"a": 1}, [1, 2], DecisionTreeClassifier(), np.zeros(3)):
        with pytest.raises(TypeError, match="smml.save writes smml models"):
            smml.save(obj, tmp_path / "x.smml")
    with pytest.raises(ValueError, match="backend must be"):
        smml.save(KNNClassifier(), tmp_path / "x.smml", backend="pickle")
    assert not os.listdir(tmp_path)


def test_pipeline_of_allowlisted_steps(tmp_path):
    X, y, _, _ = _data()
    pipe = make_pipeline(StandardScaler(), KNNClassifier(n_neighbors=3)).fit(X, y)
    f = tmp_path / "pipe.smml"
    smml.save(pipe, f)
    _assert_bit_identical(pipe, smml.load(f))


class Slotted:
    """A state object skops cannot rebuild (no __dict__): the npz fallback holds it."""
    __slots__ = ("w", "name")

    def __init__(self, w, name):
        self.w, self.name = w, name


class Lossy:
    """skops stores it without complaint but rebuilds it empty: the round-trip check catches it."""
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w

    def __getstate__(self):
        return {"w": self.w}

    def __setstate__(self, state):
        pass        # forgets the state


def test_auto_falls_back_to_npz_when_skops_cannot_hold_the_model(tmp_path):
    est = _fitted(KNNClassifier)
    est.extra_ = Slotted(np.arange(3.0), "x")
    f = tmp_path / "m.smml"
    with pytest.raises(TypeError, match="does not trust.*Slotted"):
        smml.save(est, f)
    assert smml.save(est, f, trusted=[Slotted]) == "npz"
    with pytest.raises(ValueError, match="Slotted"):
        smml.load(f)
    back = smml.load(f, trusted=[Slotted])
    assert isinstance(back.extra_, Slotted) and back.extra_.name == "x"
    np.testing.assert_array_equal(back.extra_.w, np.arange(3.0))
    _assert_bit_identical(est, back)


def test_save_raises_rather_than_write_a_different_model(tmp_path):
    est = _fitted(KNNClassifier)
    est.extra_ = Lossy(np.arange(3.0))
    with pytest.raises(TypeError, match="cannot store this KNNClassifier faithfully"):
        smml.save(est, tmp_path / "m.smml", trusted=[Lossy])
    est.extra_ = lambda x: x
    with pytest.raises(TypeError, match="faithfully"):
        smml.save(est, tmp_path / "m.smml", trusted=[f"{__name__}.<lambda>", _persist._type_name(type(est.extra_))])
    assert not os.listdir(tmp_path)


def test_random_state_objects_and_odd_values_round_trip(tmp_path):
    X, y, _, _ = _data()
    est = RandomForestClassifier(n_estimators=3, random_state=np.random.RandomState(3)).fit(X, y)
    est.note_ = {1: (np.float32(2.5), -0.0, float("nan"), b"ab", {3, 4}), "g": np.random.default_rng(1),
                 "dt": np.dtype([("a", "<f8"), ("b", "<i4", (2,))]), "obj": np.array([1, "a", None], dtype=object)}
    for backend in ("skops", "npz"):
        f = tmp_path / f"{backend}.smml"
        try:
            smml.save(est, f, backend=backend)
        except TypeError:
            assert backend == "skops"      # skops may not hold every odd value; npz must
            continue
        back = smml.load(f)
        assert _persist._same(est, back)
        assert back.note_["g"].random() == np.random.default_rng(1).random()


def test_missing_skops_gives_clear_errors(tmp_path, monkeypatch):
    est = _fitted(KNNClassifier)
    f = tmp_path / "m.smml"
    smml.save(est, f)                          # a skops file, written while skops is there
    monkeypatch.setitem(sys.modules, "skops.io", None)
    with pytest.raises(ImportError, match="pip install skops"):
        smml.load(f)
    with pytest.raises(ImportError, match="pip install skops"):
        smml.save(est, f, backend="skops")
    assert smml.save(est, f) == "npz"          # auto: the in-house backend needs only numpy
    _assert_bit_identical(est, smml.load(f))


FAMILY = '''"""A family module written after smml.save: nothing in smml lists it."""
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = ["NearestCentroid"]


class _Centroids:
    """Fitted state skops cannot rebuild (__slots__): the npz backend takes it."""
    __slots__ = ("means", "labels")


class NearestCentroid(ClassifierMixin, BaseEstimator):
    """Predicts the label of the closest class mean."""

    def fit(self, X, y):
        X, y = np.asarray(X, dtype=float), np.asarray(y)
        self.classes_ = np.unique(y)
        self.state_ = _Centroids()
        self.state_.means = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        self.state_.labels = self.classes_
        return self

    def predict(self, X):
        d = ((np.asarray(X, dtype=float)[:, None, :] - self.state_.means[None]) ** 2).sum(-1)
        return self.state_.labels[np.argmin(d, axis=1)]
'''


def test_a_family_added_later_is_found_and_round_trips_without_edits(tmp_path, monkeypatch):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "zzfamily.py").write_text(FAMILY)
    monkeypatch.setattr(smml, "__path__", list(smml.__path__) + [str(extra)])
    caches = (public_modules, model_types)
    for c in caches:
        c.cache_clear()
    try:
        assert "smml.zzfamily" in public_modules()
        found = dict(all_estimators())
        assert "smml.zzfamily.NearestCentroid" in found
        assert "smml.zzfamily._Centroids" in model_types()       # its private state type is trusted
        est = _fitted(found["smml.zzfamily.NearestCentroid"])
        f = tmp_path / "m.smml"
        assert smml.save(est, f) == "npz"
        back = smml.load(f)                                     # no trusted=: it is an smml type
        _assert_bit_identical(est, back)
    finally:
        sys.modules.pop("smml.zzfamily", None)
        monkeypatch.undo()
        for c in caches:
            c.cache_clear()


def test_structured_arrays_compare_by_field_not_by_padding_bytes():
    # scikit-learn's tree nodes have 7 padding bytes per record that hold allocator garbage: two
    # copies of the same nodes may differ there, and save's read-back check must not call that a
    # different model (it made saving a bagging of scikit-learn trees fail at random)
    dt = np.dtype({"names": ["a", "b"], "formats": [np.float64, np.uint8], "offsets": [0, 8], "itemsize": 16})
    raw1, raw2 = np.zeros(32, np.uint8), np.zeros(32, np.uint8)
    raw2[9:16] = 0xAB                                   # padding of record 0 only
    x, y = raw1.view(dt), raw2.view(dt)
    x["a"], y["a"] = [1.5, -2.0], [1.5, -2.0]
    x["b"], y["b"] = [3, 4], [3, 4]
    assert x.tobytes() != y.tobytes()
    assert _persist._same(x, y)
    y["b"][1] = 5
    assert not _persist._same(x, y)


# ---- damaged files: always a ValueError naming the file --------------------------------

def _damaged(data):
    """{name: bytes} of ways a model file gets damaged (disk, transfer, hand edits)."""
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0x10                 # inside the compressed state: CRC or inflate error
    header = bytearray(data)
    header[0] ^= 0x01                               # the first local header's signature
    return {"empty": b"", "text": b"hello, not a model\n", "half": data[:len(data) // 2],
            "one-byte-short": data[:-1], "bit-flip": bytes(flipped), "header-flip": bytes(header),
            "zeroed": bytes(len(data)), "pickle": b"\x80\x04\x95" + data[3:40]}


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in members.items():
            zf.writestr(k, v)
    return buf.getvalue()


@pytest.mark.parametrize("backend", ["skops", "npz"])
def test_damaged_files_raise_a_value_error_naming_the_file(tmp_path, backend):
    good = tmp_path / "good.smml"
    est = _fitted(KNNClassifier)
    smml.save(est, good, backend=backend)
    data = good.read_bytes()
    cases = _damaged(data)
    members = _members(good)
    state = "model.skops" if backend == "skops" else "state.json"
    # valid zips with damaged members: the parsers behind the zip layer see the damage
    cases["meta-not-json"] = _zip(dict(members, **{"smml.json": b"{not json"}))
    cases["meta-a-list"] = _zip(dict(members, **{"smml.json": b"[1, 2]"}))
    no_backend = members["smml.json"].replace(b'"backend"', b'"x"')
    cases["meta-no-backend"] = _zip(dict(members, **{"smml.json": no_backend}))
    cases["state-missing"] = _zip({k: v for k, v in members.items() if k != state})
    cases["state-half"] = _zip(dict(members, **{state: members[state][:len(members[state]) // 2]}))
    cases["state-empty"] = _zip(dict(members, **{state: b""}))
    if backend == "npz":
        cases["state-wrong-shape"] = _zip(dict(members, **{"state.json": b'{"list": 3}'}))
        cases["state-empty-object"] = _zip(dict(members, **{"state.json": b'{"object": "smml.neighbors.KNNClassifier"}'}))
        cases["arrays-missing"] = _zip({k: v for k, v in members.items() if k != "arrays.npz"})
    else:
        inner = _members(io.BytesIO(members["model.skops"]))
        schema = json.loads(inner["schema.json"])
        schema["content"] = {"__class__": "dict", "__module__": "builtins", "__loader__": "NoSuchNode"}
        cases["schema-unknown-node"] = _zip(dict(members, **{"model.skops": _zip(dict(
            inner, **{"schema.json": json.dumps(schema).encode()}))}))
        cases["schema-missing-array"] = _zip(dict(members, **{"model.skops": _zip(
            {k: v for k, v in inner.items() if not k.endswith(".npy")})}))
    for name, bad in cases.items():
        f = tmp_path / f"{name}.smml"
        f.write_bytes(bad)
        with pytest.raises(ValueError) as err:
            smml.load(f)
        assert type(err.value) is ValueError, name              # not a BadZipFile, JSONDecodeError...
        assert repr(str(f)) in str(err.value), (name, str(err.value))
        if "not a readable smml model file" in str(err.value):  # the parser's error, chained
            assert err.value.__cause__ is not None, name
        with open(f, "rb") as fh:                               # a file object: named by its name
            with pytest.raises(ValueError, match=re.escape(repr(str(f)))):
                smml.load(fh)
    assert _persist._same(est, smml.load(good))          # the undamaged file loads


def test_a_file_that_cannot_be_opened_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        smml.load(tmp_path / "missing.smml")
    with pytest.raises((IsADirectoryError, PermissionError)):
        smml.load(tmp_path)


# ---- the written file: its mode, and atomic replacement --------------------------------

@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_saved_files_get_the_mode_open_would_give_them(tmp_path, umask, mode):
    est = KNNClassifier()
    old = os.umask(umask)
    try:
        f = tmp_path / "m.smml"
        smml.save(est, f)
        assert stat.S_IMODE(os.stat(f).st_mode) == mode
        with open(tmp_path / "ref", "wb"):
            pass
        assert stat.S_IMODE(os.stat(tmp_path / "ref").st_mode) == mode      # what open gives
        os.chmod(f, 0o640)
        smml.save(est, f, backend="npz")            # replacing a file keeps its mode, as open does
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o640
    finally:
        os.umask(old)
    assert sorted(os.listdir(tmp_path)) == ["m.smml", "ref"]     # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    f = tmp_path / "m.smml"
    smml.save(KNNClassifier(n_neighbors=3), f)
    before = f.read_bytes()

    def broken_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        smml.save(KNNClassifier(n_neighbors=5), f)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["m.smml"] and f.read_bytes() == before
    assert smml.load(f).n_neighbors == 3


# ---- pipelines of smml estimators and scikit-learn preprocessing ---------------------

def _mixed_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 4))
    X[:, 3] = rng.integers(0, 3, 90)                # a categorical column
    y = (X[:, 0] - X[:, 1] + (X[:, 3] == 1) > 0).astype(int)
    Xq = rng.normal(size=(25, 4))
    Xq[:, 3] = rng.integers(0, 4, 25)               # 3: a category not seen in fit
    return X, y, Xq


def _mixed_pipelines():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, PolynomialFeatures

    from smml.linear import LogisticRegression, RidgeRegression
    from smml.tree import TreeClassifier

    def columns(sparse):
        return ColumnTransformer([("num", StandardScaler(), [0, 1, 2]),
                                  ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=sparse), [3])],
                                 sparse_threshold=0)
    return {"ct-minmax-knn": (make_pipeline(columns(True), MinMaxScaler(), KNNClassifier(n_neighbors=3)), "clf"),
            "minmax-poly-logistic": (make_pipeline(MinMaxScaler(), PolynomialFeatures(2), LogisticRegression()),
                                     "clf"),
            "ct-tree": (make_pipeline(columns(False), TreeClassifier(random_state=0)), "clf"),
            "minmax-poly-ridge": (make_pipeline(MinMaxScaler(), PolynomialFeatures(2), RidgeRegression()), "reg"),
            "ct-alone": (columns(False), "transform")}


@pytest.mark.parametrize("backend", ["auto", "npz"])
@pytest.mark.parametrize("name", list(_mixed_pipelines()))
def test_pipelines_with_sklearn_preprocessing_load_by_default(tmp_path, name, backend):
    X, y, Xq = _mixed_data()
    model, kind = _mixed_pipelines()[name]
    model.fit(X, X[:, 0] if kind == "reg" else y)
    f = tmp_path / "pipe.smml"
    assert smml.save(model, f, backend=backend) == ("skops" if backend == "auto" else "npz")
    back = smml.load(f)                             # no trusted=
    assert type(back) is type(model) and _persist._same(model, back)
    outputs = ("transform",) if kind == "transform" else OUTPUT_METHODS
    for method in outputs:
        if not hasattr(model, method):
            continue
        a, b = np.asarray(getattr(model, method)(Xq)), np.asarray(getattr(back, method)(Xq))
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), method


def test_a_pipeline_step_outside_the_allowlist_is_refused_by_save(tmp_path):
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

    X, y, Xq = _mixed_data()
    # remainder="passthrough" makes scikit-learn hold a FunctionTransformer, which is not trusted
    ct = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), [3])],
                           remainder="passthrough")
    pipe = make_pipeline(ct, KNNClassifier(n_neighbors=3)).fit(X, y)
    f = tmp_path / "p.smml"
    with pytest.raises(TypeError, match=r"does not trust: .*FunctionTransformer"):
        smml.save(pipe, f)
    assert not os.listdir(tmp_path)
    smml.save(pipe, f, trusted=[FunctionTransformer])
    with pytest.raises(ValueError, match="FunctionTransformer"):
        smml.load(f)
    back = smml.load(f, trusted=[FunctionTransformer])
    assert back.predict_proba(Xq).tobytes() == pipe.predict_proba(Xq).tobytes()


def test_the_allowlist_holds_no_callable_but_classes():
    names = [n for n in _persist.allowed_types() if n.startswith("sklearn.")]
    assert sorted(n.rsplit(".", 1)[1] for n in names) == ["ColumnTransformer", "MinMaxScaler", "OneHotEncoder",
                                                         "Pipeline", "PolynomialFeatures", "StandardScaler"]
    assert all(isinstance(t, type) for t in _persist.allowed_types().values())


# ---- versions -----------------------------------------------------------------------

def _bumped(version):
    parts = version.split(".")
    return ".".join([str(int(parts[0]) + 1)] + parts[1:])


@pytest.mark.parametrize("backend", ["skops", "npz"])
def test_a_file_from_a_newer_smml_loads_with_a_warning(tmp_path, backend):
    f, g = tmp_path / "a.smml", tmp_path / "b.smml"
    est = _fitted(KNNClassifier)
    smml.save(est, f, backend=backend)
    newer = _bumped(smml.__version__)
    _rewrite(f, g, edit_meta=lambda m: m.update(smml_version=newer))
    with pytest.warns(_persist.InconsistentVersionWarning, match=rf"written by smml {re.escape(newer)}, newer than "
                                                                 rf"this smml {re.escape(smml.__version__)}") as rec:
        back = smml.load(g)
    assert len(rec) == 1 and issubclass(_persist.InconsistentVersionWarning, UserWarning)
    w = rec[0].message
    assert (w.file_version, w.current_version, w.path) == (newer, smml.__version__, repr(str(g)))
    _assert_bit_identical(est, back)
    for same_or_older in (smml.__version__, "0.0.1", "0.1.0.dev0"):
        _rewrite(f, g, edit_meta=lambda m: m.update(smml_version=same_or_older))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            smml.load(g)
    for bad in (None, 1, "not a version", ""):
        _rewrite(f, g, edit_meta=lambda m: m.update(smml_version=bad))
        with pytest.raises(ValueError, match="invalid smml_version"):
            smml.load(g)


def test_a_newer_smml_file_that_fails_to_load_says_so(tmp_path):
    f, g = tmp_path / "a.smml", tmp_path / "b.smml"
    smml.save(_fitted(KNNClassifier), f, backend="npz")
    newer = _bumped(smml.__version__)
    _rewrite(f, g, edit_meta=lambda m: m.update(smml_version=newer),
             edit_member={"state.json": lambda d: d.replace(b'"dict"', b'"newkind"', 1)})
    with pytest.raises(ValueError, match=rf"written by smml {re.escape(newer)}, newer than this smml"):
        smml.load(g)


def test_a_crafted_tree_cannot_send_prediction_outside_its_arrays(tmp_path):
    # Tree and the tree estimators check loaded records as they check new ones: children
    # after their parent (the walk has no bounds checks) and tested features < n_features_in_
    import pickle
    from smml.tree import TreeClassifier
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = TreeClassifier(max_depth=3).fit(X, y)
    assert (est.tree_.children_left >= 0).any()
    for field, bad in (("children_left", 10 ** 6), ("children_left", 0), ("feature", -3)):
        tstate = dict(est.tree_.__dict__)
        tstate["nodes"] = est.tree_.nodes.copy()
        tstate["nodes"][field][0] = bad
        with pytest.raises(ValueError, match="tree nodes"):
            object.__new__(type(est.tree_)).__setstate__(tstate)
    tstate = dict(est.tree_.__dict__)
    tstate["nodes"] = est.tree_.nodes.copy()
    tstate["nodes"]["feature"][0] = 7                   # a valid record, but X has 3 columns
    tree = object.__new__(type(est.tree_))
    tree.__setstate__(tstate)
    with pytest.raises(ValueError, match="beyond n_features_in_"):
        TreeClassifier.__new__(TreeClassifier).__setstate__(dict(est.__dict__, tree_=tree))
    # the unmodified model round-trips through smml.save / load
    path = tmp_path / "tree.skops"
    smml.save(est, path)
    np.testing.assert_array_equal(smml.load(path).predict(X), est.predict(X))
