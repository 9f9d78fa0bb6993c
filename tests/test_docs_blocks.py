"""Every ``.. code-block:: python`` of the documentation's pages runs as a reader would run it
(issue 34): the blocks of one page in order, in one namespace of their own (a later block may use
what an earlier one defined, never what another page did), the working directory a temporary
folder, and any warning an error, as tests/test_readme.py does for the README.

Only ``.. code-block:: python`` blocks are run: ``bash`` blocks, ``::`` literal blocks and
``pycon`` sessions are not. The pages are docs/*.rst and docs/user_guide/*.rst as written by hand
(the pages Sphinx generates at build time hold no code blocks).

A block that cannot run here is listed in ``NOT_RUN`` below, keyed by its page and a snippet of
its text, with the reason. A block listed with an exception is still run and must raise it (an
expected failure); once it runs, the test fails until its entry is removed, and so does an entry
whose snippet no longer occurs on its page: the list cannot go stale.
"""
import re
import textwrap
import warnings
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(DOCS.glob("*.rst")) + sorted(p for p in (DOCS / "user_guide").glob("*.rst")
                                            if p.name != "families.rst")   # families.rst: generated

_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. code-block::[ \t]*python[ \t]*$")
_OPTION = re.compile(r"^[ \t]+:[\w-]+:")

# (page relative to docs/, a snippet of the block) -> (what to do, why).
#   "skip":   the block is not run.
#   NameError (or another exception type): the block is run and must raise it, as it does today
#             (the test is reported as an expected failure); once the block is fixed, remove its entry.
NOT_RUN = {}


def _blocks(page):
    """[(line, code)]: the ``.. code-block:: python`` blocks of ``page``, dedented."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        i += 1
        if not m:
            continue
        indent = len(m.group("indent").expandtabs())
        while i < len(lines) and _OPTION.match(lines[i]):
            i += 1
        body, start = [], None
        while i < len(lines):
            line = lines[i]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break                                      # back at the directive's indentation
            if start is None and line.strip():
                start = i + 1
            body.append(line)
            i += 1
        code = textwrap.dedent("\n".join(body)).strip("\n")
        if code:
            out.append((start, code + "\n"))
    return out


def _rel(page):
    return page.relative_to(DOCS).as_posix()


BLOCKS = [(page, index, line, code) for page in PAGES for index, (line, code) in enumerate(_blocks(page))]


def _not_run(page, code):
    hits = [v for (p, snippet), v in NOT_RUN.items() if p == _rel(page) and snippet in code]
    assert len(hits) <= 1, f"two NOT_RUN entries match one block of {_rel(page)}"
    return hits[0] if hits else None


def test_the_pages_have_python_blocks():
    pages = {_rel(p) for p, *_ in BLOCKS}
    assert {"quickstart.rst", "user_guide/neighbors.rst", "user_guide/model_selection.rst"} <= pages
    assert len(BLOCKS) >= 10


def test_every_not_run_entry_names_a_block():
    for page, snippet in NOT_RUN:
        codes = [code for p, _, _, code in BLOCKS if _rel(p) == page]
        assert any(snippet in code for code in codes), f"NOT_RUN: no block of {page} contains {snippet!r}"


@pytest.fixture(scope="module")
def namespaces():
    """Per page: its namespace, its working directory and how many of its blocks have been run."""
    return {}


def _exec(code, page, namespace):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a LocalCluster whose default dashboard port another process holds (a second cluster
        # on the machine) warns and takes another port: the machine's state, not the block's
        warnings.filterwarnings("ignore", message=r"(?s)Port \d+ is already in use",
                                category=UserWarning)
        exec(compile(code, str(page), "exec"), namespace)


def _run(page, code, namespace, monkeypatch, folder):
    if "matplotlib" in code or "smml.plot" in code:
        pytest.importorskip("matplotlib")
        import matplotlib
        matplotlib.use("Agg")
    if "dask" in code or "distributed" in code:
        pytest.importorskip("distributed")
    monkeypatch.chdir(folder)
    try:
        _exec(code, page, namespace)
    finally:
        try:
            import matplotlib.pyplot as plt
            plt.close("all")
        except ImportError:
            pass


@pytest.mark.parametrize("page, index, code",
                         [pytest.param(p, i, c, id=f"{_rel(p)}:{line}") for p, i, line, c in BLOCKS])
def test_docs_block_runs(page, index, code, namespaces, tmp_path_factory, monkeypatch):
    rel = _rel(page)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    if rel not in namespaces:
        folder = tmp_path_factory.mktemp(rel.replace("/", "_").replace(".rst", ""))
        namespaces[rel] = {"ns": {"__name__": "__docs__"}, "done": 0, "folder": folder}
    state = namespaces[rel]
    # the page's earlier blocks first, as a reader runs them (already done when the tests run in order)
    for _, i, _, earlier in [b for b in BLOCKS if b[0] == page and state["done"] <= b[1] < index]:
        if _not_run(page, earlier) is None:
            _run(page, earlier, state["ns"], monkeypatch, state["folder"])
        state["done"] = i + 1
    state["done"] = max(state["done"], index + 1)
    entry = _not_run(page, code)
    if entry is not None:
        what, why = entry
        if what == "skip":
            pytest.skip(f"{rel}: {why}")
        try:
            _run(page, code, state["ns"], monkeypatch, state["folder"])
        except what:
            pytest.xfail(f"{rel}: {why} ({what.__name__})")
        pytest.fail(f"{rel}: the block listed in NOT_RUN ({why}) now runs: remove its entry")
    _run(page, code, state["ns"], monkeypatch, state["folder"])
