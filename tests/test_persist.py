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
import sys
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


@pytest.mark.parametrize("backend", ["skops", "npz"])
def test_state_naming_a_foreign_type_is_refused_unless_trusted(tmp_path, backend):
    # an smml ensemble of scikit-learn trees: saved, but loaded only when the caller trusts them
    X, y, _, _ = _data()
    bag = BaggingClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=3, random_state=0).fit(X, y)
    f = tmp_path / "bag.smml"
    assert smml.save(bag, f, backend=backend) == backend
    with pytest.raises(ValueError, match=r"DecisionTreeClassifier"):
        smml.load(f)
    with pytest.raises(ValueError, match=r"sklearn.tree._tree.Tree"):   # its Cython tree too
        smml.load(f, trusted=[DecisionTreeClassifier])
    for trusted in ([DecisionTreeClassifier, SkTree], ["sklearn.tree._classes.DecisionTreeClassifier",
                                                       "sklearn.tree._tree.Tree"]):
        back = smml.load(f, trusted=trusted)
        _assert_bit_identical(bag, back)


@pytest.mark.parametrize("backend", ["skops", "npz"])
def test_a_function_smuggled_into_the_state_is_refused(tmp_path, backend):
    est = _fitted(KNNClassifier)
    est.hook_ = os.system
    f = tmp_path / "evil.smml"
    smml.save(est, f, backend=backend)
    with pytest.raises(ValueError, match=r"system"):
        smml.load(f)


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
    pipe = make_pipeline(StandardScaler(), KNNClassifier(k=3)).fit(X, y)
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
    assert smml.save(est, f) == "npz"
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
        smml.save(est, tmp_path / "m.smml")
    est.extra_ = lambda x: x
    with pytest.raises(TypeError, match="faithfully"):
        smml.save(est, tmp_path / "m.smml")
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
