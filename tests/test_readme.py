"""Every fenced Python block of the README runs on its own, as pasted: a fresh namespace, the
working directory a temporary folder, and any warning an error (issue 34)."""
import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    text = README.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        line = text.count("\n", 0, m.start()) + 2
        out.append(pytest.param(m.group(1), id=f"README.md:{line}"))
    return out


BLOCKS = _blocks()


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("code", BLOCKS)
def test_readme_block_runs_as_pasted(code, tmp_path, monkeypatch):
    if "import dask" in code or "from distributed" in code:
        pytest.importorskip("distributed")
    if "smml.plot" in code:
        pytest.importorskip("matplotlib")
        import matplotlib
        matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a LocalCluster whose default dashboard port another process holds (a second cluster
        # on the machine) warns and takes another port: the machine's state, not the block's
        warnings.filterwarnings("ignore", message=r"(?s)Port \d+ is already in use",
                                category=UserWarning)
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    try:
        import matplotlib.pyplot as plt
        plt.close("all")
    except ImportError:
        pass
