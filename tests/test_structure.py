"""The package's layering (issue 31): no module uses a private name of another family.

A family is the first component after ``smml.``: ``smml.tree._classes`` belongs to ``tree``,
``smml.neighbors`` to ``neighbors``, ``smml.reference.kernels`` to ``reference``. What is
shared lives at the ground floor, which every family may use, privates included: the
top-level private modules (``smml._validation``, ``smml._random``, ``smml._binning``, ...,
and the compiled ``smml._core.*``), ``smml.base`` and ``smml.exceptions``. A module may use
anything of its own family. Anything else it takes from another family must be public: no
private module (``smml.linear._base``), no private name (``from smml.neighbors import
_centre``), no private attribute of another family's module (``_cluster._Operands``).

The walk reads the sources with ``ast`` (nothing is imported), so it also sees the imports
made inside functions.
"""
import ast
from pathlib import Path

import smml

SRC = Path(smml.__file__).resolve().parent

#: Cross-family uses of privates that are known and temporary: (module, target module, name).
#: Empty: a new entry needs a reason (the test fails on an entry that no longer matches anything,
#: so a stale entry cannot hide).
ALLOWED = set()


def _module_name(path, root):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _family(modname):
    parts = modname.split(".")
    return parts[1] if len(parts) > 1 else ""


def _ground_floor(modname):
    fam = _family(modname)
    return fam.startswith("_") or fam in ("base", "exceptions")


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(modname, is_package, node):
    """The absolute module name of an ``ImportFrom`` (relative imports resolved)."""
    if not node.level:
        return node.module
    base = modname.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _foreign(modname, target):
    """True when ``target`` (an smml module) belongs to another family, not the ground floor."""
    if target != "smml" and not target.startswith("smml."):
        return False
    if target == "smml" or _ground_floor(target):
        return False
    return _family(target) != _family(modname)


def _is_module(root, dotted):
    """True when the smml module ``dotted`` is a Python source file or package under ``root``."""
    parts = dotted.split(".")[1:]
    if not parts:
        return False
    rel = root.joinpath(*parts)
    return (rel / "__init__.py").is_file() or rel.with_suffix(".py").is_file()


def cross_family_privates(root=SRC):
    """{(module, target module, private name or "" for a private module)} over the sources."""
    found = set()
    for path in sorted(root.rglob("*.py")):
        modname = _module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        aliases = {}        # local name -> another family's module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if not _foreign(modname, a.name):
                        continue
                    if any(_private(p) for p in a.name.split(".")[1:]):
                        found.add((modname, a.name, ""))
                    if a.asname:
                        aliases[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(modname, path.name == "__init__.py", node)
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    if _is_module(root, sub):             # "from smml import cluster": a module
                        if _foreign(modname, sub):
                            if any(_private(p) for p in sub.split(".")[1:]):
                                found.add((modname, sub, ""))
                            aliases[a.asname or a.name] = sub
                        continue
                    if not _foreign(modname, target):
                        continue
                    if any(_private(p) for p in target.split(".")[1:]):
                        found.add((modname, target, ""))
                    elif _private(a.name):
                        found.add((modname, target, a.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and _private(node.attr):
                found.add((modname, aliases[node.value.id], node.attr))
    return found


def test_the_walk_sees_the_families():
    names = {_module_name(p, SRC) for p in SRC.rglob("*.py")}
    assert {"smml.tree", "smml.tree._classes", "smml.neighbors", "smml.linear._base",
            "smml.reference.kernels", "smml._binning"} <= names
    assert _family("smml.tree._classes") == "tree" and _ground_floor("smml._core._tree")
    assert _foreign("smml.cluster", "smml.neighbors") and not _foreign("smml.cluster", "smml._gemm_bounds")
    assert not _foreign("smml.linear._pegasos", "smml.linear._base")


def test_no_module_uses_a_private_name_of_another_family():
    found = cross_family_privates()
    unexpected = sorted(found - ALLOWED)
    assert not unexpected, ("private names used across families (move what is shared to the "
                            "ground floor, smml._*.py / smml.base / smml.exceptions): "
                            + "; ".join(f"{m} uses {t}{'.' + n if n else ''}" for m, t, n in unexpected))
    stale = sorted(ALLOWED - found)
    assert not stale, f"allow-list entries that match nothing any more (remove them): {stale}"


def test_the_reference_package_lists_every_module_and_the_notes_it_mirrors():
    """issue 31 part 4: smml.reference's docstring names each of its modules, with the notes' files."""
    import re

    import smml.reference

    ref = SRC / "reference"
    modules = {p.stem for p in ref.glob("*.py") if not p.stem.startswith("_")}
    assert {"neighbors", "tree", "cluster", "neural", "adaboost", "gradient_boosting"} <= modules
    entries = {}
    for item in smml.reference.__doc__.split("\n- ")[1:]:          # the bullet list, one entry per module
        name = re.match(r"``(?:smml\.reference)?\.(\w+)``", item)
        assert name, item
        entries[name.group(1)] = item.split("\n\n")[0]
    assert set(entries) == modules
    for name, item in entries.items():
        assert re.search(r"\b00[0-4]\b", item), f"{name}: no notes file cited"
