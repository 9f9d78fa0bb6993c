"""``smml bench`` (issue 34): every family runs with ``--quick``, the JSON has the documented
fields, bad input exits with status 2. Timings are never asserted.

The runs use SMML_BENCH_SCALE (documented as for tests): every size scaled down so that the whole
``--quick`` set takes seconds."""
import json
import math
import sys

import pytest

from smml import _bench
from smml.cli import main

TINY = "0.02"


def _check_report(rep, families, peers_option, peer_errors_ok=False):
    assert rep["format"] == _bench.FORMAT
    assert rep["quick"] is True and rep["peers_option"] is peers_option
    assert rep["scale"] == float(TINY)
    m = rep["machine"]
    for key in _bench.MACHINE_FIELDS:
        assert key in m, key
    for key in ("cpu", "simd", "blas"):          # the header: CPU, SIMD level, threads, BLAS
        assert isinstance(m[key], str) and m[key]
    assert isinstance(m["threads"], int) and m["threads"] >= 1
    assert m["versions"]["smml"] == rep["smml"]
    assert rep["families"] == list(families)
    assert {r["family"] for r in rep["rows"]} == set(families)
    for fam in families:                         # every family has a row against the reference
        if fam != "forest":                      # smml.reference has no forest (its note says so)
            assert any(r["family"] == fam and r["reference_s"] is not None for r in rep["rows"]), fam
    for r in rep["rows"]:
        for key in _bench.ROW_FIELDS:
            assert key in r, (r["case"], key)
        errors = {n: e for n, e in r["errors"].items()
                  if not (peer_errors_ok and n not in ("smml", "reference") and not n.startswith("scikit-learn"))}
        assert not errors, (r["family"], r["case"], errors)     # an optional peer may fail
        assert r["smml_s"] > 0 and math.isfinite(r["smml_s"])
        assert isinstance(r["shape"], str) and r["shape"]
        if r["reference_s"] is None:
            assert r["ratio"] is None
        else:
            assert r["ratio"] == pytest.approx(r["reference_s"] / r["smml_s"])
        assert set(r["peer_ratios"]) == set(r["peers"])
        for name, t in r["peers"].items():
            if t is None and name in r["errors"]:
                continue
            assert t > 0 and r["peer_ratios"][name] == pytest.approx(t / r["smml_s"])
    sk = [n for r in rep["rows"] for n in r["peers"] if n.startswith("scikit-learn")]
    assert sk                                    # scikit-learn is always a peer


def test_every_family_runs_quick_and_writes_the_documented_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(_bench.SCALE_ENV, TINY)
    path = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--json", str(path)]) == 0
    rep = json.loads(path.read_text())
    _check_report(rep, _bench.FAMILIES, False)
    out = capsys.readouterr().out
    for fam in _bench.FAMILIES:
        assert f"\n{fam} " in out
    for head in ("CPU:", "SIMD used by smml:", "threads:", "BLAS:", "smml s", "reference s"):
        assert head in out
    assert f"wrote {path}" in out
    # without --peers only scikit-learn is a peer
    assert all(n.startswith("scikit-learn") for r in rep["rows"] for n in r["peers"])


def test_peers_option_adds_the_installed_peers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(_bench.SCALE_ENV, TINY)
    path = tmp_path / "bench.json"
    fams = ["neighbors", "gradient_boosting", "cluster"]
    assert main(["bench", "--quick", "--peers", "--json", str(path), *fams]) == 0
    rep = json.loads(path.read_text())
    _check_report(rep, fams, True, peer_errors_ok=True)
    names = {n for r in rep["rows"] for n in r["peers"]}
    expected = {"lightgbm": "lightgbm", "xgboost": "xgboost", "pykdtree": "pykdtree*",
                "faiss": "faiss IndexFlatL2*", "sklearnex": "sklearnex"}
    for module, peer in expected.items():
        if _bench._have(module):
            assert peer in names, peer
    assert "scipy cKDTree*" in names


def test_aliases_and_order():
    assert _bench.resolve_families(["kmeans", "knn"]) == ["neighbors", "cluster"]
    assert _bench.resolve_families(["boosting", "gradient_boosting"]) == ["gradient_boosting"]
    assert _bench.resolve_families([]) == list(_bench.FAMILIES)


def test_unknown_family_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--quick", "svm_lightning"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown family 'svm_lightning'" in err and "neighbors" in err


@pytest.mark.parametrize("value", ["abc", "0", "-1"])
def test_bad_scale_exits_2(monkeypatch, capsys, value):
    monkeypatch.setenv(_bench.SCALE_ENV, value)
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--quick", "tree"])
    assert exc.value.code == 2
    assert _bench.SCALE_ENV in capsys.readouterr().err


def test_plot_without_matplotlib_fails_before_the_run(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)       # import matplotlib -> ImportError
    monkeypatch.setattr(_bench, "run", lambda *a, **k: pytest.fail("ran the bench"))
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--quick", "--plot", str(tmp_path / "figs"), "tree"])
    assert exc.value.code == 2
    assert "pip install 'smml[plot]'" in capsys.readouterr().err


def test_unwritable_json_fails_before_the_run(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(_bench, "run", lambda *a, **k: pytest.fail("ran the bench"))
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--quick", "--json", str(tmp_path / "no" / "such" / "dir.json"), "tree"])
    assert exc.value.code == 2


def test_plot_writes_one_png_per_family(monkeypatch, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv(_bench.SCALE_ENV, TINY)
    figs = tmp_path / "figs"
    assert main(["bench", "--quick", "--plot", str(figs), "tree", "cluster"]) == 0
    assert sorted(p.name for p in figs.iterdir()) == ["bench_cluster.png", "bench_tree.png"]


def test_a_failing_peer_is_reported_not_fatal():
    def boom():
        raise RuntimeError("peer broke")
    times, errors = _bench.interleaved_best({"smml": lambda: None, "peer": boom}, repeat=2)
    assert times["smml"] >= 0 and times["peer"] is None
    assert errors == {"peer": "RuntimeError: peer broke"}
    row = _bench.run_case(_bench._case("tree", "c", "1x1", "fit", lambda: None, None, {"peer": boom}), 1)
    assert row["peers"] == {"peer": None} and row["peer_ratios"] == {"peer": None}
    assert "FAILED tree / c / peer: RuntimeError: peer broke" in _bench.table([row])


def test_header_names_the_machine_and_warns_when_busy():
    m = _bench.machine_info()
    m.update(load_avg=10.0 * (m["cpu_count"] or 1), omp_wait_policy=None)
    text = _bench.header(m, quick=True, peers=False, scale=1.0)
    assert m["simd"] in text and m["cpu"] in text and "BLAS: " in text
    assert "machine is busy" in text and "GOMP_SPINCOUNT=30000" in text
    m.update(load_avg=0.0)
    assert "busy" not in _bench.header(m, quick=True, peers=False, scale=1.0)


def test_full_sizes_run_too(monkeypatch, tmp_path):
    monkeypatch.setenv(_bench.SCALE_ENV, TINY)
    path = tmp_path / "full.json"
    assert main(["bench", "--json", str(path), "tree", "kernels"]) == 0
    rep = json.loads(path.read_text())
    assert rep["quick"] is False and rep["families"] == ["tree", "kernels"]
