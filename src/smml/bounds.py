"""Risk bounds of the course notes, as plain functions.

Each function cites the section of the notes that states the bound. Sections
are appended per family (trees, linear learners, ensembles) below.
"""
import math
import numbers

import numpy as np

__all__ = ["hoeffding_epsilon", "hoeffding_interval", "hoeffding_test_size", "erm_finite_class_bound"]


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise ValueError(f"delta must be a real number in (0, 1), got {delta!r}")


def _check_positive_int(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")


def hoeffding_epsilon(n, delta=0.05):
    """epsilon = sqrt(ln(2/delta) / (2n)): half-width of the Chernoff-Hoeffding interval.

    000, "Bounding the risk": with probability at least 1 - delta over the draw of
    a test set of size n, |risk - test error| <= sqrt(ln(2/delta) / (2n)) for a
    loss with values in [0, 1].
    """
    _check_positive_int("n", n)
    _check_delta(delta)
    return math.sqrt(math.log(2.0 / delta) / (2.0 * n))


def hoeffding_interval(test_error, n, delta=0.05):
    """(low, high): the Chernoff-Hoeffding confidence interval for the risk.

    000, "Bounding the risk": test_error -/+ sqrt(ln(2/delta) / (2n)), clipped to
    [0, 1] (the loss takes values in [0, 1]). Holds with probability >= 1 - delta.
    """
    if isinstance(test_error, bool) or not isinstance(test_error, numbers.Real) \
            or not 0.0 <= test_error <= 1.0 or math.isnan(test_error):
        raise ValueError(f"test_error must be a number in [0, 1] (a [0, 1]-valued loss), got {test_error!r}")
    eps = hoeffding_epsilon(n, delta)
    test_error = float(test_error)
    return max(0.0, test_error - eps), min(1.0, test_error + eps)


def hoeffding_test_size(epsilon, delta=0.05):
    """Smallest test-set size n with sqrt(ln(2/delta) / (2n)) <= epsilon.

    000, "Bounding the risk", solved for n: n = ceil(ln(2/delta) / (2 epsilon^2)).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not epsilon > 0:
        raise ValueError(f"epsilon must be a positive number, got {epsilon!r}")
    _check_delta(delta)
    n = max(1, math.ceil(math.log(2.0 / delta) / (2.0 * epsilon * epsilon)))  # huge epsilon: n = 1, not 0
    # guard the ceil against rounding: the returned n must satisfy the inequality
    while n > 1 and math.sqrt(math.log(2.0 / delta) / (2.0 * (n - 1))) <= epsilon:
        n -= 1
    while math.sqrt(math.log(2.0 / delta) / (2.0 * n)) > epsilon:
        n += 1
    return max(1, n)


def erm_finite_class_bound(m, n_hypotheses, delta=0.05):
    """sqrt((2/m) ln(2|H|/delta)): estimation-error bound of ERM on a finite class H.

    003, section 4 ("Write the upper bound on the estimation error of ERM run on a
    finite class"): with probability >= 1 - delta over a training set of size m,
    risk(h_S) <= risk(h*) + sqrt((2/m) ln(2|H|/delta)).
    """
    _check_positive_int("m", m)
    _check_positive_int("n_hypotheses", n_hypotheses)
    _check_delta(delta)
    return math.sqrt(2.0 / m * math.log(2.0 * n_hypotheses / delta))


# ---- Linear learners (smml.linear) ----------------------------------------------------
# 000 "Training linear classifiers" (Perceptron convergence theorem); 003 sections 10
# (projected online gradient descent, Perceptron mistake bound on any stream) and 12 (Pegasos).

__all__ += ["perceptron_convergence_bound", "perceptron_mistake_bound", "pegasos_bound",
            "ogd_regret_bound", "ogd_strongly_convex_regret_bound"]


def _linear_data(X, y, u):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    u = np.asarray(u, dtype=float)
    if X.ndim != 2 or y.ndim != 1 or u.ndim != 1 or X.shape[0] != y.shape[0] or X.shape[1] != u.shape[0]:
        raise ValueError(f"need X (m, d), y (m,) and u (d,); got shapes {X.shape}, {y.shape}, {u.shape}")
    if X.shape[0] == 0 or not (np.all(np.isfinite(X)) and np.all(np.isfinite(u))):
        raise ValueError("X and u must be non-empty and finite")
    if not np.all((y == 1) | (y == -1)):
        raise ValueError("y must hold labels in {-1, +1}")
    return X, y, u


def perceptron_convergence_bound(X, y, u):
    """(min_{u: gamma(u) >= 1} ||u||^2)(max_t ||x_t||^2), bounded with a given separator u.

    000, "Training linear classifiers", Theorem 3: on a linearly separable set the
    Perceptron makes at most that many updates. Any separator u (gamma(u) =
    min_t y_t u.x_t > 0) rescaled to u / gamma(u) has margin 1, so the
    minimum is at most ||u||^2 / gamma(u)^2; the value returned is
    (||u|| / gamma(u))^2 max_t ||x_t||^2 >= the theorem's bound. Use the
    max-margin u (hard SVM) to get the theorem's value exactly. X must hold
    the features the Perceptron sees (with the constant 1 if it fits an intercept).
    """
    X, y, u = _linear_data(X, y, u)
    gamma = float(np.min(y * (X @ u)))
    if not gamma > 0:
        raise ValueError(f"u does not separate the data: its margin min_t y_t u.x_t is {gamma:g} <= 0")
    return float(u @ u) / gamma ** 2 * float(np.max(np.einsum("ij,ij->i", X, X)))


def perceptron_mistake_bound(X, y, u):
    """Mistakes of the Perceptron on the stream (x_t, y_t), any u in R^d (003, section 10).

    M <= sum_t h_t(u) + (||u|| X)^2 + ||u|| X sqrt(sum_t h_t(u)), with the hinge
    loss h_t(u) = [1 - y_t u.x_t]_+ and X = max_t ||x_t||. Holds on any
    sequence, separable or not; with a margin-1 separator it is (||u|| X)^2.
    """
    X, y, u = _linear_data(X, y, u)
    H = float(np.sum(np.maximum(0.0, 1.0 - y * (X @ u))))
    R = float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X))))
    nu = float(np.sqrt(u @ u))
    return H + (nu * R) ** 2 + nu * R * math.sqrt(H)


def _check_pos(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")


def pegasos_bound(lam, n_iter, X_norm=None, G=None):
    """E[F(w_bar)] - F(w*) <= G^2 / (2 lam T) (ln T + 1) for Pegasos (003, section 12).

    F(w) = lam/2 ||w||^2 + (1/m) sum_t [1 - y_t w.x_t]_+, w_bar the average of
    the T = n_iter iterates. Pass G (a bound on the norms of the loss
    gradients) or X_norm = max_t ||x_t||, in which case 003's G <= 2X gives
    2 X^2 / (lam T) (ln T + 1).
    """
    _check_pos("lam", lam)
    _check_positive_int("n_iter", n_iter)
    if (G is None) == (X_norm is None):
        raise ValueError("pass exactly one of G or X_norm")
    if G is None:
        _check_pos("X_norm", X_norm)
        G = 2.0 * X_norm
    else:
        _check_pos("G", G)
    return G * G / (2.0 * lam * n_iter) * (math.log(n_iter) + 1.0)


def ogd_regret_bound(U, G, T):
    """U G sqrt(8 / T): average regret of projected OGD with eta_t = eta/sqrt(t) (003, section 10).

    (1/T) sum_t l_t(w_t) <= min_{||u|| <= U} (1/T) sum_t l_t(u) + U G sqrt(8/T),
    for convex losses with ||grad l_t(w_t)|| <= G, on the ball of radius U.
    """
    _check_pos("U", U)
    _check_pos("G", G)
    _check_positive_int("T", T)
    return U * G * math.sqrt(8.0 / T)


def ogd_strongly_convex_regret_bound(G, sigma, T):
    """G^2 / (2 sigma) ln(T + 1) / T: average regret of OGD with eta_t = 1/(sigma t) (003, section 10).

    For sigma-strongly convex losses with ||grad l_t(w_t)|| <= G.
    """
    _check_pos("G", G)
    _check_pos("sigma", sigma)
    _check_positive_int("T", T)
    return G * G / (2.0 * sigma) * math.log(T + 1.0) / T


# ---- Ensembles (AdaBoost) ----------------------------------------------------

__all__ += ["adaboost_training_error_bound", "adaboost_rounds_for_zero_error", "majority_vote_bound"]


def _edges(edges):
    g = np.asarray(edges, dtype=float).reshape(-1)
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(np.abs(g) > 0.5):
        raise ValueError("edges gamma_i = 1/2 - epsilon_i must be a non-empty sequence of numbers in [-1/2, 1/2]")
    return g


def adaboost_training_error_bound(edges):
    """(prod_i sqrt(1 - 4 gamma_i^2), exp(-2 sum_i gamma_i^2)): AdaBoost's training-error bounds.

    002, "Training error of AdaBoost" (Proposition): with gamma_i = 1/2 - epsilon_i
    the edge of the i-th weak learner, the training error (weighted by P_1) of
    sign(sum_i w_i h_i) is at most prod_i sqrt(1 - 4 gamma_i^2), which is at most
    exp(-2 sum_i gamma_i^2) (003 section 16: l_S(f) <= e^{-2 T gamma^2} when every
    gamma_i >= gamma). Returns both, the first <= the second.
    """
    g = _edges(edges)
    g2 = np.minimum(g * g, 0.25)
    return float(np.prod(np.sqrt(1.0 - 4.0 * g2))), float(np.exp(-2.0 * g2.sum()))


def adaboost_rounds_for_zero_error(m, gamma):
    """ln(m) / (2 gamma^2): rounds after which AdaBoost's training error is 0.

    003 section 16 ("How many rounds of AdaBoost are sufficient to achieve zero
    training error"): if |gamma_i| >= gamma for every round, the training error
    is below e^{-2 T gamma^2}, and a training error below 1/m on m examples is
    0; so T > ln(m) / (2 gamma^2) rounds suffice. Returns the real number
    ln(m) / (2 gamma^2); the smallest sufficient integer T is floor of it plus 1.
    """
    _check_positive_int("m", m)
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 < gamma <= 0.5:
        raise ValueError(f"gamma must be a number in (0, 1/2], got {gamma!r}")
    return math.log(m) / (2.0 * gamma * gamma)


# ---- Tree predictors (000 "Risk analysis for tree predictors"; 003 section 5) ----------

__all__ += ["tree_code_length", "occam_tree_bound", "erm_tree_bound"]


def tree_code_length(n_nodes, d):
    """|sigma(h)| = (N_h + 1) ceil(log2(d + 3)) + 2 floor(log2 N_h) + 1.

    000, "A more refined bound": the length of an instantaneous (prefix-free) binary
    code for a tree predictor with N_h nodes on d attributes.
    """
    _check_positive_int("n_nodes", n_nodes)
    _check_positive_int("d", d)
    # exact integer logs: ceil(log2(d+3)) = bit_length(d+2), floor(log2 N) = bit_length(N)-1
    n_nodes, d = int(n_nodes), int(d)
    return (n_nodes + 1) * (d + 2).bit_length() + 2 * (n_nodes.bit_length() - 1) + 1


def occam_tree_bound(train_error, n_nodes, d, m, delta=0.05):
    """Training error + sqrt((|sigma(h)| + ln(2/delta)) / (2m)).

    000, "A more refined bound": with probability >= 1 - delta over a training set of
    size m, simultaneously for every tree predictor h with N_h nodes on d attributes,
    risk(h) <= training error(h) + sqrt((|sigma(h)| + ln(2/delta)) / (2m)), with
    |sigma(h)| from :func:`tree_code_length` (the notes write |sigma(h)| for
    ln(1/w(h)) = |sigma(h)| ln 2, which only loosens the bound).
    """
    if isinstance(train_error, bool) or not isinstance(train_error, numbers.Real) \
            or not 0.0 <= train_error <= 1.0:
        raise ValueError(f"train_error must be a number in [0, 1], got {train_error!r}")
    _check_positive_int("m", m)
    _check_delta(delta)
    sigma = tree_code_length(n_nodes, d)
    return train_error + math.sqrt((sigma + math.log(2.0 / delta)) / (2.0 * m))


def erm_tree_bound(m, n_nodes, d, delta=0.05):
    """sqrt((2/m) (N (1 + ln(2d)) + ln(2/delta))): estimation error of ERM on trees with N nodes.

    000, "Limiting the number of nodes" and 003 section 5: |H_N| <= (2ed)^N, so with
    probability >= 1 - delta, risk(h_S) <= min_{h in H_N} risk(h) + this quantity.
    """
    _check_positive_int("m", m)
    _check_positive_int("n_nodes", n_nodes)
    _check_positive_int("d", d)
    _check_delta(delta)
    return math.sqrt(2.0 / m * (n_nodes * (1.0 + math.log(2.0 * d)) + math.log(2.0 / delta)))


def majority_vote_bound(T, gamma):
    """exp(-2 T gamma^2): training error of a majority vote of T independent classifiers.

    003 section 16 ("Write the upper bound on the training error achieved by
    Bagging when the errors of the classifiers are independent"): if the
    training errors of h_1..h_T are independent and each is at most
    1/2 - gamma, the majority vote f = sgn(sum_i h_i) has l_S(f) <= e^{-2 T gamma^2}.
    """
    _check_positive_int("T", T)
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 <= gamma <= 0.5:
        raise ValueError(f"gamma must be a number in [0, 1/2], got {gamma!r}")
    return math.exp(-2.0 * T * gamma * gamma)


# ---- Nearest neighbours (000 "Risk Analysys for Nearest-Neighbor"; 002 "Generalization error of 1-NN") --

__all__ += ["one_nn_risk_bound"]


def one_nn_risk_bound(bayes_risk, c, d, m, epsilon=None):
    """Bound on the expected risk of 1-NN, E[l_D(h_S)] over training sets S of size m.

    000, "Risk Analysys for Nearest-Neighbor": for X = [0, 1]^d, binary labels and a
    c-Lipschitz conditional probability eta, for every 0 < epsilon < 1

        E[l_D(h_S)] <= 2 l_D(f*) + c sqrt(d) (epsilon + (2 / (e m)) (2 / epsilon)^d),

    and with epsilon = 2 m^(-1/(d+1)) this gives the notes' final form (the default,
    ``epsilon=None``)

        E[l_D(h_S)] <= 2 l_D(f*) + 4 c sqrt(d) m^(-1/(d+1)).

    (002 prints the exponent as -1/(n+1); 000's derivation gives -1/(d+1).)
    """
    if isinstance(bayes_risk, bool) or not isinstance(bayes_risk, numbers.Real) or not 0 <= bayes_risk <= 0.5:
        raise ValueError(f"bayes_risk must be a number in [0, 1/2], got {bayes_risk!r}")
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not (math.isfinite(c) and c >= 0):
        raise ValueError(f"c (the Lipschitz constant of eta) must be a finite number >= 0, got {c!r}")
    _check_positive_int("d", d)
    _check_positive_int("m", m)
    if epsilon is None:
        return 2.0 * bayes_risk + 4.0 * c * math.sqrt(d) * float(m) ** (-1.0 / (d + 1))
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be in (0, 1), got {epsilon!r}")
    # (2/epsilon)^d can overflow for large d: compute it in logs
    log_tail = math.log(2.0 / (math.e * m)) + d * math.log(2.0 / epsilon)
    tail = math.exp(log_tail) if log_tail < 700 else math.inf
    return 2.0 * bayes_risk + c * math.sqrt(d) * (epsilon + tail)
