"""Sphinx configuration of smml's documentation (build: see the project README, "Documentation").

The API reference is generated at build time from smml itself: every public
module (found by walking the package, ``smml._discovery.public_modules``) gets a
page listing the names of its ``__all__``, each with its own page from its
docstring. A new module or a new name appears without editing anything here.

The user guide has one page per family. A family module without a hand-written
page in ``user_guide/`` gets a generated one (its module docstring and its API),
so a new family is in the guide from its first build; write
``user_guide/<family>.rst`` to replace it.

Warnings are errors in CI (``-W``). numpydoc's validation is strict only on
what the reference cannot do without (see NUMPYDOC_RULE below).
"""
import os
import re
from pathlib import Path

import smml
from smml._discovery import public_modules

HERE = Path(__file__).parent

project = "smml"
author = "smml developers"
copyright = "smml developers"
release = version = smml.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_intersphinx", "README.md", "examples/README.rst"]
html_theme = "pydata_sphinx_theme"         # scikit-learn's theme: a wide body, code is not clipped
html_title = f"smml {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc", "sg_download_links", "sg_launcher_links"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_sidebars = {"index": [], "install": [], "quickstart": [], "conventions": []}
html_static_path = []

# Links to scikit-learn, numpy, scipy, matplotlib, dask, distributed and Python (intersphinx): roles such as
# :class:`~sklearn.svm.SVC` in the guide, and the names in the gallery's code. Sphinx reports an
# inventory it cannot download as a warning, which would fail a -W build on a machine without
# network (CI's machines may have none), so the inventories are fetched here first, in parallel,
# with a short timeout, into docs/_intersphinx/ (a cache, not in git): a project whose inventory
# is neither fetched nor cached is left out (its links are then plain text), and the build says
# so. SMML_DOCS_OFFLINE=1 skips the download and uses the cache alone.
_INTERSPHINX = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "sklearn": "https://scikit-learn.org/stable/",
    "matplotlib": "https://matplotlib.org/stable/",
    "dask": "https://docs.dask.org/en/stable/",
    "distributed": "https://distributed.dask.org/en/stable/",
}


def _intersphinx_mapping():
    import concurrent.futures
    import urllib.request

    cache = HERE / "_intersphinx"

    def fetch(name, url):
        path = cache / f"{name}.inv"
        if not os.environ.get("SMML_DOCS_OFFLINE"):
            try:
                with urllib.request.urlopen(url + "objects.inv", timeout=8) as r:
                    data = r.read()
                if data.startswith(b"# Sphinx inventory"):
                    cache.mkdir(exist_ok=True)
                    path.write_bytes(data)
            except Exception:          # no network, a proxy, a timeout: use the cache if any
                pass
        return name, (path if path.exists() else None)

    with concurrent.futures.ThreadPoolExecutor(len(_INTERSPHINX)) as pool:
        found = dict(pool.map(lambda item: fetch(*item), _INTERSPHINX.items()))
    missing = sorted(n for n, p in found.items() if p is None)
    if missing:
        print(f"intersphinx: no inventory for {', '.join(missing)} (offline?): those links are plain text")
    return {n: (_INTERSPHINX[n], str(p)) for n, p in found.items() if p is not None}


intersphinx_mapping = _intersphinx_mapping()

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
# The signatures shown without their type hints: the numpydoc Parameters / Returns sections give
# each type in words, and evaluated hints expand numpy's ArrayLike into a union of its internals
# (the hints are for type checkers: the package ships py.typed, docs/architecture.rst)
autodoc_typehints = "none"
numpydoc_show_class_members = False        # the class template lists the methods once
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# NUMPYDOC_RULE - what the API reference requires of a docstring (the same codes as
# tests/test_docstrings.py, which also runs every Examples section):
#   GL08  every public name has a docstring (a page without one says nothing);
#   SS01  it starts with a summary line (the API tables show it);
#   PR01 / PR02  every parameter documented, none that does not exist;
#   RT01  a Returns section where something is returned;
#   EX01  an Examples section (classes and functions; numpydoc asks it of methods too, which
#         the class's examples cover: EX01 is checked by the test, not here).
# Style codes (punctuation, capitals, section order) are not checked. A docstring that is not
# valid reStructuredText fails the build anyway, through Sphinx's own warnings.
numpydoc_validation_checks = {"GL08", "SS01", "PR01", "PR02", "RT01"}
# objects whose docstring is inherited from scikit-learn or Python, not smml's to fix
numpydoc_validation_exclude = {r"\.__init__$", r"\.set_params$", r"\.get_params$", r"\.score$",
                               r"\.fit_predict$", r"\.set_.*_request$", r"\.get_metadata_routing$",
                               r"\.fit_transform$", r"\.__sklearn_tags__$", r"\.with_traceback$",
                               r"\.add_note$", r"\.args$"}

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "plot_gallery": "True",
    "capture_repr": (),                   # only what an example prints: no stray "<Axes ...>"
    # "Examples using this estimator" on every API page (the class and function templates
    # hold the minigallery), and the gallery's code linked to the API pages
    "doc_module": ("smml",),
    "backreferences_dir": "gen_modules/backreferences",
    "reference_url": {"smml": None},
    "inspect_global_variables": True,
}
os.environ.setdefault("OMP_NUM_THREADS", "2")


# ---- generated pages --------------------------------------------------------------------

def _public_names(modname):
    import importlib

    mod = importlib.import_module(modname)
    return [n for n in getattr(mod, "__all__", []) if not n.startswith("_")]


def _title(text, char="="):
    return f"{text}\n{char * len(text)}\n"


def _own(modname, name):
    import importlib

    obj = getattr(importlib.import_module(modname), name)
    mod = getattr(obj, "__module__", None)
    return not (isinstance(mod, str) and not mod.startswith("smml") and (callable(obj) or isinstance(obj, type)))


def _api_page(modname):
    names = [n for n in _public_names(modname) if _own(modname, n)]      # re-exports of scikit-learn: not ours
    lines = [_title(f"``{modname}``"), f".. automodule:: {modname}", "   :no-members:", ""]
    if names:
        lines += [f".. currentmodule:: {modname}", "", ".. autosummary::", "   :toctree: generated/",
                  "   :nosignatures:", ""]
        lines += [f"   {n}" for n in names]
    return "\n".join(lines) + "\n"


def _first_line(modname):
    """The first sentence of a module's docstring, for the API index."""
    import importlib

    doc = (importlib.import_module(modname).__doc__ or "").strip()
    first = doc.split("\n\n")[0].replace("\n", " ")
    return first if first else f"The names of ``{modname}``."


def _write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _generate_pages():
    modules = [m for m in public_modules() if m not in ("smml.cli",)]   # the command is documented in the guide
    api = HERE / "api"
    for m in modules:
        _write_if_changed(api / f"{m}.rst", _api_page(m))
    index = [_title("API reference"),
             "Every public name of every public module, one line each with its summary, generated "
             "from the modules' ``__all__``. The user guide (:doc:`/user_guide/index`) explains the "
             "methods; each class page lists the gallery examples that use it.", "",
             ".. toctree::", "   :hidden:", "   :maxdepth: 1", ""] + [f"   {m}" for m in modules]
    for m in modules:
        names = [n for n in _public_names(m) if _own(m, n)]
        index += ["", _title(f":mod:`{m}`", "-"), _first_line(m), ""]
        if names:
            index += [f".. currentmodule:: {m}", "", ".. autosummary::", "   :nosignatures:", ""]
            index += [f"   {n}" for n in names]
    _write_if_changed(api / "index.rst", "\n".join(index) + "\n")
    for stale in api.glob("smml*.rst"):
        if stale.stem not in modules:
            stale.unlink()
    # user guide: a generated page for each family without a hand-written one
    guide = HERE / "user_guide"
    families = [m for m in modules if m.count(".") == 1 and m.split(".")[1] not in _NOT_FAMILIES]
    for m in families:
        short = m.split(".")[1]
        hand = guide / f"{short}.rst"
        gen = guide / "generated" / f"{short}.rst"
        if hand.exists():
            if gen.exists():
                gen.unlink()
            continue
        _write_if_changed(gen, "\n".join([
            _title(f"``{m}``"), f".. automodule:: {m}", "   :no-members:", "   :no-index:", "",
            f"The names of ``{m}`` are listed in the :doc:`API reference </api/{m}>`.", ""]))
    pages = [f"{m.split('.')[1]}" if (guide / f"{m.split('.')[1]}.rst").exists()
             else f"generated/{m.split('.')[1]}" for m in families]
    _write_if_changed(guide / "families.rst", "\n".join(
        [".. toctree::", "   :maxdepth: 1", ""] + [f"   {p}" for p in pages]) + "\n")


#: modules that are tools, not families (their guide pages are written by hand)
_NOT_FAMILIES = {"base", "bounds", "datasets", "exceptions", "losses", "model_selection", "plot", "dask"}

_generate_pages()


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Class pages document what smml implements: members inherited from scikit-learn
    (get_params, set_*_request, score, ...) or Python are skipped (scikit-learn documents them)."""
    if what != "class" or skip:
        return None
    target = getattr(obj, "fget", obj)
    mod = getattr(target, "__module__", None)
    if mod is None or not mod.startswith("smml"):
        return True
    return None


# Docstrings write formulas in plain text, as the notes do: |sigma(h)|, w_i, and attribute
# names with a trailing underscore (train_errors_). reStructuredText reads |...| as a
# substitution and word_ as a link, so outside ``literals`` and `roles` both are escaped
# after numpydoc has made its reST: that style never breaks the build.
_LITERAL = re.compile(r"(``.+?``|:[\w:.-]+:`[^`]*`|`[^`]*`_{0,2})")
_TRAILING_UNDERSCORE = re.compile(r"(?<=[\w\]\)])_(?![\w])")


def _escape_plain(text):
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):              # even parts are outside literals and roles
        parts[i] = _TRAILING_UNDERSCORE.sub(r"\_", parts[i].replace("|", r"\|"))
    return "".join(parts)


def _plain_text_math(app, what, name, obj, options, lines):
    in_directive_block = False
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(".. ") or stripped.startswith(":"):
            in_directive_block = stripped.startswith(".. ") and "::" in stripped
            if stripped.startswith(".. "):
                continue
        if in_directive_block and (line.startswith("   ") or not stripped):
            continue                               # code blocks, math blocks: leave as written
        in_directive_block = False
        lines[i] = _escape_plain(line)


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("autodoc-process-docstring", _plain_text_math, priority=600)   # after numpydoc (500)
