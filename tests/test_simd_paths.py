"""Every vector path of the compiled core, tested on every machine (issue 32, item 2).

The C loops of ``smml/_core/include/smml_*.h`` (distances, SVM, boosting, tree, math, neural) are
compiled portable
and, where ``smml_platform.h``'s rule allows, for AVX2 and AVX-512F; ``smml_isa()`` picks the
widest the CPU runs, lowered by the environment variable ``SMML_SIMD``. Here the same fits
run in one subprocess per path the CPU has (``SMML_SIMD=scalar``, ``avx2``, ``avx512``), and
their results are compared with the portable path's:

- equal bit for bit where the code promises it (the copies without fused multiply-adds:
  distance keys, SMO passes, boosting losses, the tree splitter and its partition of the
  sorted (sample, rank) pairs, the exponentials, the float64 network's momentum step);
- within the stated error bound where a vector path uses fused multiply-adds (the k-means
  distance tile, the float32 network steps): the same labels, close values.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

_SCRIPT = textwrap.dedent(r"""
    import sys
    import numpy as np
    from smml._core._neural import step_isa
    from smml.cluster import KMeans
    import smml.cluster as cl
    from smml._core._tree import partition_pairs
    from smml.ensemble import GradientBoostingClassifier, RandomForestClassifier, RandomForestRegressor
    from smml.kernels import KernelRidge, KernelSVC
    from smml.neighbors import KNNClassifier
    from smml.neural import MLPClassifier
    from smml.tree import TreeClassifier, TreeRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 7))
    X[:, 3] = np.round(X[:, 3])                         # ties in a feature and in distances
    y3 = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    y2 = (y3 > 0).astype(int)
    yr = X[:, 0] * 2 + np.sin(X[:, 1])
    Q = rng.normal(size=(97, 7))
    out = {"isa": np.array([step_isa()])}
    for dt in (np.float64, np.float32):
        Xd, Qd, s = X.astype(dt), Q.astype(dt), np.dtype(dt).char
        for alg in ("brute", "tree"):
            knn = KNNClassifier(7, algorithm=alg).fit(Xd, y3)
            d, i = knn.kneighbors(Qd)
            out[f"knn_{alg}_{s}_d"], out[f"knn_{alg}_{s}_i"] = d, i
            out[f"knn_{alg}_{s}_p"] = knn.predict_proba(Qd)
        out[f"kr_{s}"] = KernelRidge(kernel="gaussian").fit(Xd[:300], yr[:300]).predict(Qd)
        km = KMeans(6, n_init=1, random_state=0).fit(Xd)
        out[f"km_{s}_labels"], out[f"km_{s}_centers"] = km.labels_, km.cluster_centers_
        # the group bounds forced on (their tile rows: smml_row_panels_*, dots: smml_dot_*)
        cl._BOUNDS, cl._GROUPS = True, 3
        km = KMeans(24, n_init=1, random_state=0, max_iter=30, tol=0).fit(Xd)
        cl._BOUNDS, cl._GROUPS = None, None
        out[f"kmg_{s}_labels"], out[f"kmg_{s}_centers"] = km.labels_, km.cluster_centers_
        mlp = MLPClassifier(hidden_layer_sizes=(16,), batch_size=32, random_state=0)
        mlp.set_params(**{k: 5 for k in ("max_iter", "max_epochs") if k in mlp.get_params()})
        out[f"mlp_{s}"] = mlp.fit(Xd, y3).predict_proba(Qd)
    out["svc"] = KernelSVC(kernel="gaussian").fit(X[:300], y2[:300]).decision_function(Q)
    for loss_y, name in ((y2, "gb2"), (y3, "gb3")):
        gb = GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0).fit(X, loss_y)
        out[name] = gb.predict_proba(Q)
    out["tree2"] = TreeClassifier(random_state=0).fit(X, y2).predict_proba(Q)
    out["tree3"] = TreeClassifier(random_state=0).fit(X, y3).predict_proba(Q)
    out["treer"] = TreeRegressor(random_state=0).fit(X, yr).predict(Q)
    out["forest"] = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, yr).predict(Q)
    out["forest2"] = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y2).predict_proba(Q)
    # the exact splitter's partition of (sample, rank) pairs, the widest path SMML_SIMD allows,
    # on every length up to 40 (whole vectors, tails) and two long ones, every share going left
    prng = np.random.default_rng(1)
    parts = []
    for n in list(range(41)) + [257, 1000]:
        for share in (0.0, 0.3, 0.5, 1.0):
            gl = (prng.random(n + 3) < share).astype(np.uint8)
            si = prng.permutation(n + 3)[:n].astype(np.int32)
            rs = prng.integers(0, 2**31 - 1, n).astype(np.int32)
            parts += [np.array([partition_pairs(si, rs, gl, 2)], np.int32), si, rs]
    out["partition"] = np.concatenate(parts)
    np.savez(sys.argv[1], **out)
""")

# results a vector path computes with fused multiply-adds (another rounding, the same
# error bound): compared to a tolerance, everything else bit for bit
_FMA = {"km_d_centers": 1e-12, "km_f_centers": 1e-5, "kmg_d_centers": 1e-12, "kmg_f_centers": 1e-5,
        "mlp_f": 1e-4}
_LEVELS = {"scalar": 0, "avx2": 1, "avx512": 2}


def _run(tmp_path, level):
    env = dict(os.environ)
    env.pop("SMML_SIMD", None)
    if level is not None:
        env["SMML_SIMD"] = level
    env.setdefault("OMP_NUM_THREADS", "2")
    path = tmp_path / f"{level or 'default'}.npz"
    subprocess.run([sys.executable, "-c", _SCRIPT, str(path)], env=env, check=True, timeout=900)
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("simd")
    default = _run(tmp, None)
    top = int(default["isa"][0])
    out = {"default": default}
    for name, level in _LEVELS.items():
        if level <= top:
            out[name] = default if level == top else _run(tmp, name)
    return out


def test_the_switch_selects_each_path(runs):
    """SMML_SIMD lowers the path (smml info's level follows it); the default is the widest."""
    top = int(runs["default"]["isa"][0])
    for name, level in _LEVELS.items():
        if name in runs:
            assert int(runs[name]["isa"][0]) == level
    assert "scalar" in runs and top in _LEVELS.values()


@pytest.mark.parametrize("level", ["avx2", "avx512"])
def test_vector_paths_equal_the_portable_loops(runs, level):
    if level not in runs:
        pytest.skip(f"this CPU does not run {level}")
    base, vec = runs["scalar"], runs[level]
    for key in base:
        if key == "isa":
            continue
        a, b = base[key], vec[key]
        assert a.dtype == b.dtype and a.shape == b.shape, key
        if key in _FMA:
            np.testing.assert_allclose(b, a, rtol=_FMA[key], atol=_FMA[key], err_msg=key)
        else:
            assert np.array_equal(a, b), f"{key}: the {level} path differs from the portable loops"


def test_an_unknown_value_warns_and_keeps_the_cpu_choice():
    env = dict(os.environ, SMML_SIMD="sse9")
    code = ("import warnings, json; warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    import smml\n"
            "from smml._core._neural import step_isa\n"
            "print(json.dumps([str(x.message) for x in w] + [step_isa()]))")
    res = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                         text=True, timeout=300)
    *msgs, isa = json.loads(res.stdout.strip().splitlines()[-1])
    assert any("SMML_SIMD" in m and "sse9" in m for m in msgs)
    env.pop("SMML_SIMD")
    plain = subprocess.run([sys.executable, "-c", "from smml._core._neural import step_isa; "
                            "print(step_isa())"], env=env, check=True, capture_output=True,
                           text=True, timeout=300)
    assert isa == int(plain.stdout.strip())
