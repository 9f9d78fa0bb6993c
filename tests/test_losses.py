"""smml.losses against the notes' formulas, hand-computed values and smml.reference."""
import math

import numpy as np
import pytest

from smml import losses
from smml.reference import losses as ref


# ---- hand-computed values ---------------------------------------------------------

def test_zero_one_values_and_label_types():
    assert losses.zero_one([1, 2, 3], [1, 0, 3]).tolist() == [0.0, 1.0, 0.0]
    out = losses.zero_one(["spam", "nonspam", "spam"], ["spam", "spam", "nonspam"])
    assert out.dtype == np.float64 and out.tolist() == [0.0, 1.0, 1.0]
    # mixed label types compare as Python objects: 1 != "1"
    assert losses.zero_one([1, 2], np.array(["1", 2], dtype=object)).tolist() == [1.0, 0.0]
    assert losses.zero_one([1, 2], ["1", "2"]).tolist() == [1.0, 1.0]
    assert losses.zero_one([True, False], [1, 1]).tolist() == [0.0, 1.0]
    assert losses.zero_one(np.array([0.5, -1.0]), [0.5, 1.0]).tolist() == [0.0, 1.0]


def test_cost_sensitive_spam_example():
    # 000, "Loss functions": l = 2 if y = nonspam, y_hat = spam; 1 if y = spam, y_hat = nonspam; 0 otherwise
    y = ["spam", "spam", "nonspam", "nonspam"]
    p = ["spam", "nonspam", "spam", "nonspam"]
    cost = [[0, 1], [2, 0]]
    out = losses.cost_sensitive(y, p, cost, labels=["spam", "nonspam"])
    assert out.tolist() == [0.0, 1.0, 2.0, 0.0]
    as_dict = {"nonspam": {"spam": 2}, "spam": {"nonspam": 1}}
    assert losses.cost_sensitive(y, p, as_dict).tolist() == [0.0, 1.0, 2.0, 0.0]
    # integer labels 0..L-1 by default
    C = np.array([[0, 1, 4], [2, 0, 5], [3, 6, 0]])
    assert losses.cost_sensitive([0, 1, 2, 2, 0], [2, 0, 1, 2, 1], C).tolist() == [4, 2, 6, 0, 1]


def test_cost_sensitive_bad_costs():
    with pytest.raises(ValueError, match="zero diagonal"):
        losses.cost_sensitive([0], [0], [[1, 1], [1, 0]])
    with pytest.raises(ValueError, match="non-negative"):
        losses.cost_sensitive([0], [0], [[0, -1], [1, 0]])
    with pytest.raises(ValueError, match="square"):
        losses.cost_sensitive([0], [0], [[0, 1, 2], [1, 0, 2]])
    with pytest.raises(ValueError, match="NaN"):
        losses.cost_sensitive([0], [0], [[0, np.nan], [1, 0]])
    with pytest.raises(ValueError, match="2 x 2 but 3 labels"):
        losses.cost_sensitive([0], [0], [[0, 1], [1, 0]], labels=["a", "b", "c"])
    with pytest.raises(ValueError, match="distinct"):
        losses.cost_sensitive(["a"], ["a"], [[0, 1], [1, 0]], labels=["a", "a"])
    with pytest.raises(ValueError, match="not among the cost's labels"):
        losses.cost_sensitive(["spam", "ham"], ["spam", "spam"], [[0, 1], [2, 0]], labels=["spam", "nonspam"])
    with pytest.raises(ValueError, match="y_pred contains the label 7"):
        losses.cost_sensitive([0, 1], [0, 7], [[0, 1], [2, 0]])
    with pytest.raises(ValueError, match="no entry for true label 'spam'"):
        losses.cost_sensitive(["spam"], ["spam"], {"nonspam": {"spam": 2}, "spam": {}})


def test_regression_losses_values():
    y, p = [1.0, -2.0, 3.5], [0.5, 1.0, 3.5]
    assert losses.absolute(y, p).tolist() == [0.5, 3.0, 0.0]
    assert losses.square(y, p).tolist() == [0.25, 9.0, 0.0]
    assert losses.square([2], [5]).dtype == np.float64


def test_logarithmic_values_and_domain():
    out = losses.logarithmic([1, 0, 1, 0], [0.5, 0.5, 0.25, 0.75])
    np.testing.assert_allclose(out, [math.log(2), math.log(2), math.log(4), math.log(4)], rtol=1e-15)
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"strictly in \(0, 1\)"):
            losses.logarithmic([1], [bad])
    with pytest.raises(ValueError, match=r"labels y in \{0, 1\}"):
        losses.logarithmic([2], [0.5])
    with pytest.raises(ValueError, match=r"labels y in \{0, 1\}"):
        losses.logarithmic([-1], [0.5])


def test_margin_losses_values():
    y = np.array([1, -1, 1, -1, 1])
    p = np.array([2.0, 2.0, 0.0, -0.5, 0.5])
    # margins y * p = 2, -2, 0, 0.5, 0.5
    assert losses.hinge(y, p).tolist() == [0.0, 3.0, 1.0, 0.5, 0.5]
    np.testing.assert_allclose(losses.logistic(y, p), np.log(1 + np.exp([-2, 2, 0, -0.5, -0.5])), rtol=1e-14)
    np.testing.assert_allclose(losses.logistic(y, p, base=2), np.log2(1 + np.exp([-2, 2, 0, -0.5, -0.5])),
                               rtol=1e-14)
    assert losses.logistic([1], [0.0], base=2).tolist() == [1.0]  # log2(2): 003 sec. 15 upper-bounds 0-1
    np.testing.assert_allclose(losses.exponential(y, p), np.exp([-2, 2, 0, -0.5, -0.5]), rtol=1e-15)
    # surrogates upper-bound the zero-one loss of sign(p) (003 sec. 15); log2 logistic included
    z = losses.zero_one(y, np.where(p > 0, 1, -1))
    for f in (losses.hinge, losses.exponential, lambda a, b: losses.logistic(a, b, base=2)):
        assert np.all(f(y, p) >= z)


def test_logistic_is_stable_for_large_margins():
    out = losses.logistic([1, -1, 1], [1000.0, 1000.0, -1000.0])
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [0.0, 1000.0, 1000.0], atol=1e-300)
    with pytest.raises(ValueError, match="base"):
        losses.logistic([1], [0.0], base=1)
    with pytest.raises(ValueError, match="base"):
        losses.logistic([1], [0.0], base=-2)


@pytest.mark.parametrize("f", [losses.hinge, losses.logistic, losses.exponential])
def test_margin_losses_need_pm1_labels(f):
    with pytest.raises(ValueError, match=r"\{-1, \+1\}; y contains \[0.0\]"):
        f([1, 0, -1], [0.1, 0.2, 0.3])


# ---- bad inputs, every loss -------------------------------------------------------

ALL = [losses.zero_one, losses.absolute, losses.square, losses.hinge, losses.logistic, losses.exponential]


@pytest.mark.parametrize("f", ALL + [losses.logarithmic])
def test_bad_shapes(f):
    with pytest.raises(ValueError, match="different lengths: 2 != 3"):
        f([1, 1], [0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="1-d"):
        f([[1], [1]], [0.5, 0.5])
    with pytest.raises(ValueError, match="y_pred must be 1-d"):
        f([1], 0.5)
    with pytest.raises(ValueError, match="empty"):
        f([], [])


@pytest.mark.parametrize("f", ALL + [losses.logarithmic])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_rejected(f, bad):
    with pytest.raises(ValueError, match="NaN or infinity"):
        f([1, 1], [0.5, bad])
    with pytest.raises(ValueError, match="NaN or infinity"):
        f([1, bad], [0.5, 0.5])


@pytest.mark.parametrize("f", [losses.absolute, losses.square, losses.hinge])
def test_non_numeric_rejected(f):
    with pytest.raises(ValueError, match="numeric"):
        f(["a", "b"], [1.0, 1.0])


def test_get_loss():
    assert losses.get_loss("square") is losses.square
    f = lambda y, p: np.zeros(len(y))  # noqa: E731
    assert losses.get_loss(f) is f
    with pytest.raises(ValueError, match="functools.partial"):
        losses.get_loss("cost_sensitive")
    with pytest.raises(ValueError, match="must be one of"):
        losses.get_loss("squared")
    with pytest.raises(ValueError, match="must be one of"):
        losses.get_loss(3)


# ---- against smml.reference on random data -------------------------------------------

def test_losses_match_reference(rng):
    n = 200
    y_pm = rng.choice([-1.0, 1.0], size=n)
    y01 = rng.integers(0, 2, size=n).astype(float)
    scores = rng.normal(scale=3.0, size=n)
    probs = rng.uniform(1e-6, 1 - 1e-6, size=n)
    yr, pr = rng.normal(size=n), rng.normal(size=n)
    cases = [
        (losses.zero_one, ref.zero_one, rng.integers(0, 3, n), rng.integers(0, 3, n), {}),
        (losses.absolute, ref.absolute, yr, pr, {}),
        (losses.square, ref.square, yr, pr, {}),
        (losses.logarithmic, ref.logarithmic, y01, probs, {}),
        (losses.hinge, ref.hinge, y_pm, scores, {}),
        (losses.logistic, ref.logistic, y_pm, scores, {}),
        (losses.logistic, ref.logistic, y_pm, scores, {"base": 2}),
        (losses.exponential, ref.exponential, y_pm, scores, {}),
    ]
    for fast, slow, a, b, kw in cases:
        expect = ref.over_lists(slow, a.tolist(), b.tolist(), **kw)
        np.testing.assert_allclose(fast(a, b, **kw), expect, rtol=1e-13, atol=1e-15, err_msg=fast.__name__)


def test_cost_sensitive_matches_reference(rng):
    labels = ["a", "b", "c", "d"]
    C = rng.uniform(0, 5, size=(4, 4))
    np.fill_diagonal(C, 0)
    y = rng.choice(labels, size=100)
    p = rng.choice(labels, size=100)
    expect = ref.over_lists(ref.cost_sensitive, y.tolist(), p.tolist(), cost=C.tolist(), labels=labels)
    np.testing.assert_array_equal(losses.cost_sensitive(y, p, C, labels=labels), expect)
    D = {a: {b: C[i, j] for j, b in enumerate(labels) if i != j} for i, a in enumerate(labels)}
    np.testing.assert_array_equal(losses.cost_sensitive(y, p, D, labels=labels), expect)


def test_float32_and_lists_give_float64(rng):
    y = rng.normal(size=10).astype(np.float32)
    p = rng.normal(size=10).astype(np.float32)
    out = losses.square(y, p)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, (y.astype(float) - p.astype(float)) ** 2)
    assert losses.absolute(list(y), list(p)).dtype == np.float64
