"""Plain-Python reference of smml.losses: one example at a time, floats and lists.

Mirrors the definitions of 000, "Loss functions" (zero-one, cost-sensitive,
absolute, square, logarithmic), 003 sections 10/12/15 (hinge, logistic in base
2, exponential) and 002 (logistic loss, natural log). ``<name>(y, y_hat)`` is the
loss of one example; ``over_lists(loss, ys, y_hats)`` the list of per-example losses.
"""
import math


def zero_one(y, y_hat):
    """0 if y_hat = y, 1 otherwise (000, "Loss functions")."""
    if y_hat == y:
        return 0.0
    return 1.0


def cost_sensitive(y, y_hat, cost, labels):
    """cost[i][j] with labels[i] = y, labels[j] = y_hat (000, the spam example)."""
    i = labels.index(y)
    j = labels.index(y_hat)
    return float(cost[i][j])


def absolute(y, y_hat):
    """|y - y_hat| (000, "Loss functions")."""
    return abs(y - y_hat)


def square(y, y_hat):
    """(y - y_hat)^2 (000, "Loss functions")."""
    return (y - y_hat) ** 2


def logarithmic(y, y_hat):
    """ln(1/y_hat) if y = 1, ln(1/(1 - y_hat)) if y = 0 (000, "Loss functions")."""
    if not 0.0 < y_hat < 1.0:
        raise ValueError("the logarithmic loss needs 0 < y_hat < 1")
    if y == 1:
        return math.log(1.0 / y_hat)
    if y == 0:
        return math.log(1.0 / (1.0 - y_hat))
    raise ValueError("the logarithmic loss needs y in {0, 1}")


def hinge(y, y_hat):
    """max{0, 1 - y y_hat}, y in {-1, +1} (003, section 10)."""
    return max(0.0, 1.0 - y * y_hat)


def logistic(y, y_hat, base=math.e):
    """log_base(1 + e^{-y y_hat}), y in {-1, +1} (002 natural log; 003 section 15 base 2).

    Written with the identity log(1 + e^z) = max(z, 0) + log(1 + e^{-|z|}) so that
    large margins do not overflow math.exp.
    """
    z = -y * y_hat
    natural = max(z, 0.0) + math.log1p(math.exp(-abs(z)))
    return natural / math.log(base)


def exponential(y, y_hat):
    """e^{-y y_hat}, y in {-1, +1} (003 section 15, 002 AdaBoost)."""
    return math.exp(-y * y_hat)


def over_lists(loss, ys, y_hats, **kwargs):
    """[loss(y_1, y_hat_1), ..., loss(y_n, y_hat_n)]."""
    if len(ys) != len(y_hats):
        raise ValueError("ys and y_hats have different lengths")
    out = []
    for t in range(len(ys)):
        out.append(loss(ys[t], y_hats[t], **kwargs))
    return out
