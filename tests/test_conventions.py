"""The capability table of docs/conventions.rst matches the code (issue 33): each row is
derived here from the estimator classes found by :func:`smml._discovery.all_estimators`, and
the page's table must equal it, so a new estimator or a new capability cannot leave the page
stale."""
import inspect
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import is_classifier, is_regressor

from smml._discovery import all_estimators

PAGE = Path(__file__).resolve().parents[1] / "docs" / "conventions.rst"
COLUMNS = ["sample_weight", "partial_fit", "warm_start", "predict_proba", "decision_function",
           "feature_importances_", "float32", "verbose"]
_CHEAP = {"n_estimators": 3, "max_iter": 20}


def _float32_out(cls):
    """Does float32 input give float32 scores (transform, predict of a regressor, or the
    classifier's decision_function / predict_proba)?"""
    params = inspect.signature(cls.__init__).parameters
    kw = {k: v for k, v in _CHEAP.items() if k in params}
    if "random_state" in params:
        kw["random_state"] = 0
    est = cls(**kw)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if hasattr(est, "transform"):
            return est.fit(X).transform(X).dtype == np.float32
        if is_regressor(est):
            return est.fit(X, X[:, 0].astype(np.float64)).predict(X).dtype == np.float32
        est.fit(X, (X[:, 0] > 0).astype(int))
        outs = [getattr(est, m)(X) for m in ("decision_function", "predict_proba") if hasattr(est, m)]
        return bool(outs) and all(o.dtype == np.float32 for o in outs)


def derived_rows():
    """[(qualified name, {column: bool})] from the code."""
    rows = []
    for name, cls in all_estimators():
        init = inspect.signature(cls.__init__).parameters
        fit = inspect.signature(cls.fit).parameters
        rows.append((name, {
            "sample_weight": "sample_weight" in fit,
            "partial_fit": hasattr(cls, "partial_fit"),
            "warm_start": "warm_start" in init,
            "predict_proba": hasattr(cls, "predict_proba"),
            "decision_function": hasattr(cls, "decision_function"),
            "feature_importances_": hasattr(cls, "feature_importances_"),
            "float32": _float32_out(cls),
            "verbose": "verbose" in init,
        }))
    return rows


def render(rows):
    """The page's list-table body for ``rows``."""
    lines = ["   * - estimator"] + [f"     - ``{c}``" for c in COLUMNS]
    for name, caps in rows:
        lines.append(f"   * - :class:`{name}`")
        lines += [f"     - {'yes' if caps[c] else ''}".rstrip() for c in COLUMNS]
    return "\n".join(lines)


def _page_table():
    text = PAGE.read_text(encoding="utf-8")
    m = re.search(r"\.\. capability-table-start\n(.*?)\n\.\. capability-table-end", text, re.S)
    assert m, "docs/conventions.rst lost its capability-table markers"
    body = m.group(1)
    return "\n".join(l for l in body.splitlines() if l.startswith("   * -") or l.startswith("     -"))


def test_the_capability_table_matches_the_code():
    want = render(derived_rows())
    got = _page_table()
    assert got == want, ("docs/conventions.rst's table differs from the code; regenerate it with "
                         "`python tests/test_conventions.py` and paste the output between the markers")


@pytest.mark.parametrize("name, cls", all_estimators())
def test_float32_column_agrees_with_the_dtype_tag(name, cls):
    # where an estimator says it preserves float32 (scikit-learn's transformer tag), it does
    est = cls()
    tags = est.__sklearn_tags__()
    if tags.transformer_tags is not None and np.float32 in (tags.transformer_tags.preserves_dtype or []):
        assert _float32_out(cls)


if __name__ == "__main__":          # print the table to paste into docs/conventions.rst
    print(render(derived_rows()))
