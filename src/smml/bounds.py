"""Risk bounds of the course notes, as plain functions.

Each function cites the section of the notes that states the bound. Sections
are appended per family (trees, linear learners, ensembles) below.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from smml._typing import ArrayLike, Estimator, LossLike, NDArray, RandomStateLike
from smml._validation import check_delta as _check_delta, check_positive_int as _check_positive_int

__all__ = ["hoeffding_epsilon", "hoeffding_interval", "hoeffding_one_sided_epsilon", "hoeffding_upper_bound",
           "hoeffding_test_size", "erm_finite_class_bound"]


def hoeffding_epsilon(n: int, delta: float = 0.05) -> float:
    """epsilon = sqrt(ln(2/delta) / (2n)): half-width of the Chernoff-Hoeffding interval.

    000, "Bounding the risk": with probability at least 1 - delta over the draw of
    a test set of size n, |risk - test error| <= sqrt(ln(2/delta) / (2n)) for a
    loss with values in [0, 1].

    Parameters
    ----------
    n : int >= 1
        The size of the test set.
    delta : float in (0, 1), default=0.05
        The confidence parameter: the interval holds with probability >= 1 - delta.

    Returns
    -------
    float
        sqrt(ln(2/delta) / (2n)).

    See Also
    --------
    hoeffding_interval : the test error -/+ this half-width.
    hoeffding_test_size : the n that makes this half-width at most epsilon.

    Examples
    --------
    >>> from smml.bounds import hoeffding_epsilon
    >>> round(hoeffding_epsilon(1000, delta=0.05), 4)
    0.0429
    >>> hoeffding_epsilon(4000) < hoeffding_epsilon(1000)   # 4 times the data: half the width
    True
    """
    _check_positive_int("n", n)
    _check_delta(delta)
    return math.sqrt(math.log(2.0 / delta) / (2.0 * n))


def hoeffding_interval(test_error: float, n: int, delta: float = 0.05) -> tuple[float, float]:
    """(low, high): the Chernoff-Hoeffding confidence interval for the risk.

    000, "Bounding the risk": test_error -/+ sqrt(ln(2/delta) / (2n)), clipped to
    [0, 1] (the loss takes values in [0, 1]). Holds with probability >= 1 - delta.

    Parameters
    ----------
    test_error : float in [0, 1]
        The average loss of the predictor on the test set.
    n : int >= 1
        The size of the test set.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    low : float
        max(0, test_error - sqrt(ln(2/delta) / (2n))).
    high : float
        min(1, test_error + sqrt(ln(2/delta) / (2n))).

    See Also
    --------
    hoeffding_epsilon : the half-width of the interval.

    Examples
    --------
    >>> from smml.bounds import hoeffding_interval
    >>> low, high = hoeffding_interval(0.12, 1000, delta=0.05)
    >>> round(low, 4), round(high, 4)
    (0.0771, 0.1629)
    >>> hoeffding_interval(0.0, 1000)[0]                 # clipped to [0, 1]
    0.0
    """
    if isinstance(test_error, bool) or not isinstance(test_error, numbers.Real) \
            or not 0.0 <= test_error <= 1.0 or math.isnan(test_error):
        raise ValueError(f"test_error must be a number in [0, 1] (a [0, 1]-valued loss), got {test_error!r}")
    eps = hoeffding_epsilon(n, delta)
    test_error = float(test_error)
    return max(0.0, test_error - eps), min(1.0, test_error + eps)


def hoeffding_one_sided_epsilon(n: int, delta: float = 0.05) -> float:
    """epsilon = sqrt(ln(1/delta) / (2n)): the one-sided Chernoff-Hoeffding deviation.

    001, Appendix 2, "Wilcoxon Test" (the bound for a validation set that follows
    the VC bound): L_D(h) <= L_V(h) + sqrt(ln(1/delta) / (2 m_v)), with L_V(h) the
    error of h on a validation (dev) set of m_v = n examples that were not used to
    choose h. It is the Hoeffding inequality of 001, Appendix 1, taken on one side
    only, P(l_D(h) - l_V(h) > epsilon) <= e^{-2 n epsilon^2} (a loss with values in
    [0, 1]), set equal to delta. An upper bound alone spends all of delta on one
    tail, so ln(1/delta) replaces the ln(2/delta) of the two-sided
    :func:`hoeffding_epsilon`.

    Parameters
    ----------
    n : int >= 1
        The size m_v of the validation (or test) set.
    delta : float in (0, 1), default=0.05
        The confidence parameter: the bound holds with probability >= 1 - delta.

    Returns
    -------
    float
        sqrt(ln(1/delta) / (2n)).

    See Also
    --------
    hoeffding_upper_bound : the validation error plus this epsilon.
    hoeffding_epsilon : the two-sided half-width, sqrt(ln(2/delta) / (2n)).

    Examples
    --------
    >>> from smml.bounds import hoeffding_one_sided_epsilon, hoeffding_epsilon
    >>> round(hoeffding_one_sided_epsilon(1000, 0.05), 4)
    0.0387
    >>> round(hoeffding_epsilon(1000, 0.05), 4)
    0.0429
    """
    _check_positive_int("n", n)
    _check_delta(delta)
    return math.sqrt(math.log(1.0 / delta) / (2.0 * n))


def hoeffding_upper_bound(validation_error: float, n: int, delta: float = 0.05, n_candidates: int = 1) -> float:
    """L_V(h) + sqrt(ln(N/delta) / (2n)): an upper confidence bound on the risk from a dev set.

    001, Appendix 2, "Wilcoxon Test": for a predictor h fixed before the validation
    (dev) set is drawn, with probability >= 1 - delta over a validation set of
    n = m_v examples, l_D(h) <= L_V(h) + sqrt(ln(1/delta) / (2 m_v)) (the notes'
    formula; :func:`hoeffding_one_sided_epsilon` is its second term). The loss must
    take values in [0, 1]. The value is clipped to 1, as :func:`hoeffding_interval`
    clips its high end.

    ``n_candidates`` = N > 1 is for a dev set that was also used to *choose* h among
    N predictors (000, "Tuning hyperparameters on a given training set": the best
    theta of a grid Theta_0 with |Theta_0| = N): the bound for one fixed h then
    does not apply to the chosen one, and the union bound over the N candidates (the
    step of 000's "Risk analysis" for a finite class) gives
    sqrt(ln(N/delta) / (2 m_v)) instead, valid for all N at once. N = 1 (default) is
    001's formula.

    Parameters
    ----------
    validation_error : float in [0, 1]
        L_V(h), the average loss of h on the validation set.
    n : int >= 1
        The size m_v of the validation set.
    delta : float in (0, 1), default=0.05
        The confidence parameter.
    n_candidates : int >= 1, default=1
        How many predictors the validation set was used to choose among.

    Returns
    -------
    float
        min(1, validation_error + sqrt(ln(n_candidates / delta) / (2n))).

    Examples
    --------
    >>> from smml.bounds import hoeffding_upper_bound
    >>> round(hoeffding_upper_bound(0.12, 1000, delta=0.05), 4)
    0.1587
    >>> round(hoeffding_upper_bound(0.12, 1000, delta=0.05, n_candidates=10), 4)
    0.1715
    """
    if isinstance(validation_error, bool) or not isinstance(validation_error, numbers.Real) \
            or math.isnan(validation_error) or not 0.0 <= validation_error <= 1.0:
        raise ValueError("validation_error must be a number in [0, 1] (a [0, 1]-valued loss), "
                         f"got {validation_error!r}")
    _check_positive_int("n", n)
    _check_delta(delta)
    _check_positive_int("n_candidates", n_candidates)
    eps = math.sqrt(math.log(n_candidates / delta) / (2.0 * n))
    return min(1.0, float(validation_error) + eps)


def hoeffding_test_size(epsilon: float, delta: float = 0.05) -> int:
    """Smallest test-set size n with sqrt(ln(2/delta) / (2n)) <= epsilon.

    000, "Bounding the risk", solved for n: n = ceil(ln(2/delta) / (2 epsilon^2)).

    Parameters
    ----------
    epsilon : float > 0
        The half-width of the interval to reach.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    int
        The smallest n >= 1 with :func:`hoeffding_epsilon` (n, delta) <= epsilon.

    Examples
    --------
    >>> from smml.bounds import hoeffding_test_size, hoeffding_epsilon
    >>> n = hoeffding_test_size(0.05, delta=0.05)
    >>> n
    738
    >>> hoeffding_epsilon(n) <= 0.05 < hoeffding_epsilon(n - 1)
    True
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


def erm_finite_class_bound(m: int, n_hypotheses: int, delta: float = 0.05) -> float:
    """sqrt((2/m) ln(2|H|/delta)): estimation-error bound of ERM on a finite class H.

    003, section 4 ("Write the upper bound on the estimation error of ERM run on a
    finite class"): with probability >= 1 - delta over a training set of size m,
    risk(h_S) <= risk(h*) + sqrt((2/m) ln(2|H|/delta)).

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    n_hypotheses : int >= 1
        |H|, the number of predictors in the class.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    float
        sqrt((2/m) ln(2|H|/delta)), the bound on risk(h_S) - risk(h*).

    See Also
    --------
    finite_class_uniform_bound : the deviation |l_S(h) - l_D(h)| for every h at once.
    smml.erm.ERMClassifier : ERM on a finite class, reporting this bound.

    Examples
    --------
    >>> from smml.bounds import erm_finite_class_bound
    >>> round(erm_finite_class_bound(1000, 100, delta=0.05), 4)
    0.1288
    >>> erm_finite_class_bound(1000, 10_000) > erm_finite_class_bound(1000, 100)   # larger class
    True
    """
    _check_positive_int("m", m)
    _check_positive_int("n_hypotheses", n_hypotheses)
    _check_delta(delta)
    return math.sqrt(2.0 / m * math.log(2.0 * n_hypotheses / delta))


# ---- VC dimension (001 Appendix 2 "Wilcoxon Test"; 002 "VC dimension of halfspaces") ------------

__all__ += ["halfspace_vc_dimension", "vc_bound", "vc_sample_complexity"]


def _check_nonneg_int(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {v!r}")


def halfspace_vc_dimension(d: int, fit_intercept: bool = True) -> int:
    """The VC dimension of the halfspaces (linear classifiers) of R^d: d + 1, or d without a bias.

    002, "VC dimension of halfspaces" (Proposition): "the VC dimension of
    halfspaces in dimension d is exactly d + 1"; 001's Perceptron in the plane has
    VC dimension 3 (001, Appendix 2, "Wilcoxon Test"). d + 1 is the value for the
    classifiers sgn(w.x - c) with a bias c (000, "Linear predictors"; smml's
    ``fit_intercept=True``). 002 states it for the class {x -> sign(w.x)} it has just
    defined without a bias term; that homogeneous class has VC dimension d (it is the
    class with bias on the points (x, 1) of R^(d + 1), minus the freedom of the
    bias: Shalev-Shwartz & Ben-David, *Understanding Machine Learning*, 2014,
    Theorems 9.2 and 9.3). ``fit_intercept=False`` returns that d.

    Parameters
    ----------
    d : int >= 1
        The number of features.
    fit_intercept : bool, default=True
        Whether the classifiers have a bias (the constant feature of 000).

    Returns
    -------
    int
        d + 1 with a bias, d without.

    Examples
    --------
    >>> from smml.bounds import halfspace_vc_dimension
    >>> halfspace_vc_dimension(2)                      # 001's Perceptron in the plane
    3
    >>> halfspace_vc_dimension(2, fit_intercept=False)
    2
    """
    _check_positive_int("d", d)
    return int(d) + (1 if fit_intercept else 0)


def vc_bound(train_error: float, m: int, vc_dim: int, delta: float = 0.05, C: float | None = None) -> float:
    """Training error + a VC-dimension term: the risk bound of 001 for every h of a class at once.

    001, Appendix 2, "Wilcoxon Test": with probability >= 1 - delta over a training
    set S of size m, every predictor h of a class H of VC dimension d satisfies

        L_D(h) <= L_S(h) + sqrt(C (d + ln(1/delta)) / m)

    (zero-one loss; ln for the notes' log). **The notes leave the constant C open.**
    Such a universal C exists (the uniform-convergence half of the fundamental
    theorem of learning, e.g. Shalev-Shwartz & Ben-David, *Understanding Machine
    Learning*, 2014, Theorem 6.8), but that theorem does not give its value either
    (removing the ln m factor below takes a chaining argument).

    - ``C=None`` (default): an explicit bound instead, Mohri, Rostamizadeh &
      Talwalkar, *Foundations of Machine Learning*, 2nd ed., 2018, Corollary 3.19:

        L_D(h) <= L_S(h) + sqrt(2 ln Pi_H(m) / m) + sqrt(ln(1/delta) / (2m)),

      the Rademacher bound (their Theorem 3.5) with Massart's lemma; the growth
      function Pi_H(m) is bounded by Sauer's lemma, ln Pi_H(m) <= d ln(e m / d) for
      m >= d, and by the trivial 2^m (the smaller of the two is used; for m < d only
      the latter holds). Every constant is explicit; the price is a factor
      ln(e m / d): as sqrt(a) + sqrt(b) <= sqrt(2 (a + b)), this is at most the
      notes' form with C = max(4 ln(e m / d), 1), a "constant" that grows
      slowly with m.
    - ``C`` a positive number: the notes' formula with that C, literally.

    Parameters
    ----------
    train_error : float in [0, 1]
        L_S(h), the training error (zero-one loss) of h, e.g. of the ERM predictor.
    m : int >= 1
        The training-set size.
    vc_dim : int >= 0
        The VC dimension d of H (see :func:`halfspace_vc_dimension`).
    delta : float in (0, 1), default=0.05
        The confidence parameter.
    C : None or float > 0, default=None
        The constant of 001's formula; None for the explicit bound above.

    Returns
    -------
    float
        The bound on L_D(h) (not clipped: a value above 1 says nothing).

    Examples
    --------
    >>> from smml.bounds import vc_bound, halfspace_vc_dimension
    >>> d = halfspace_vc_dimension(2)                     # 3, 001's example
    >>> round(vc_bound(0.1, 10_000, d, delta=0.05), 4)    # explicit constants
    0.1862
    >>> round(vc_bound(0.1, 10_000, d, delta=0.05, C=1.0), 4)
    0.1245
    """
    if isinstance(train_error, bool) or not isinstance(train_error, numbers.Real) \
            or math.isnan(train_error) or not 0.0 <= train_error <= 1.0:
        raise ValueError(f"train_error must be a number in [0, 1], got {train_error!r}")
    _check_positive_int("m", m)
    _check_nonneg_int("vc_dim", vc_dim)
    _check_delta(delta)
    m, d = int(m), int(vc_dim)
    if C is not None:
        _check_pos("C", C)
        return float(train_error) + math.sqrt(C * (d + math.log(1.0 / delta)) / m)
    log_growth = m * math.log(2.0)                  # Pi_H(m) <= 2^m
    if d == 0:
        log_growth = 0.0                            # one behaviour on every sample: Pi_H(m) = 1
    elif m >= d:
        log_growth = min(log_growth, d * math.log(math.e * m / d))   # Sauer's lemma
    return float(train_error) + math.sqrt(2.0 * log_growth / m) + math.sqrt(math.log(1.0 / delta) / (2.0 * m))


def vc_sample_complexity(epsilon: float, vc_dim: int, delta: float = 0.05) -> int:
    """A training-set size m that suffices to PAC-learn a class of VC dimension d (realizable case).

    002, "VC dimension of halfspaces" ("Consequence"): the class is PAC learnable,
    with sample complexity of the order of (d + ln(1/delta)) / epsilon; the notes
    write Omega(.) and give no constant. That order is a *lower* bound, for any
    algorithm (Ehrenfeucht, Haussler, Kearns & Valiant, *Information and
    Computation* 82, 1989; the d term with its constant, (d - 1) / (32 epsilon), is
    Mohri et al., *Foundations of Machine Learning*, 2nd ed., Theorem 3.20); what
    suffices has one more factor, ln(1/epsilon).

    This function returns the sufficient size with explicit constants of Blumer,
    Ehrenfeucht, Haussler & Warmuth (*Journal of the ACM* 36, 1989, Theorem
    2.1(ii)(b)): when some h of H has risk 0, every algorithm that outputs a
    predictor of H consistent with S (training error 0, e.g. ERM) has risk at most
    epsilon with probability >= 1 - delta as soon as

        m >= max((4 / epsilon) log2(2 / delta), (8 d / epsilon) log2(13 / epsilon)).

    Parameters
    ----------
    epsilon : float in (0, 1)
        The accuracy: the risk to reach.
    vc_dim : int >= 1
        The VC dimension d of the class.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    int
        The smallest integer m satisfying the inequality above.

    Examples
    --------
    >>> from smml.bounds import vc_sample_complexity
    >>> vc_sample_complexity(0.1, 3, delta=0.05)
    1686
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be a number in (0, 1), got {epsilon!r}")
    _check_positive_int("vc_dim", vc_dim)
    _check_delta(delta)
    m = max(4.0 / epsilon * math.log2(2.0 / delta), 8.0 * vc_dim / epsilon * math.log2(13.0 / epsilon))
    return int(math.ceil(m))


# ---- Linear learners (smml.linear) ----------------------------------------------------
# 000 "Training linear classifiers" (Perceptron convergence theorem); 003 sections 10
# (projected online gradient descent, Perceptron mistake bound on any stream) and 12 (Pegasos).

__all__ += ["perceptron_convergence_bound", "perceptron_mistake_bound", "pegasos_bound",
            "ogd_regret_bound", "ogd_strongly_convex_regret_bound"]


def _linear_data(X: ArrayLike, y: ArrayLike,
                 u: Any) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
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


def perceptron_convergence_bound(X: ArrayLike, y: ArrayLike, u: ArrayLike | Estimator | None = None,
                                 fit_intercept: bool = False) -> float:
    """(min_{u: gamma(u) >= 1} ||u||^2)(max_t ||x_t||^2): the Perceptron's update bound.

    000, "Training linear classifiers", Theorem 3 (003 section 9): on a linearly
    separable set the Perceptron makes at most that many updates. Any separator u
    (gamma(u) = min_t y_t u.x_t > 0) rescaled to u / gamma(u) has margin 1, so the
    value returned, (||u|| / gamma(u))^2 max_t ||x_t||^2, is >= the theorem's bound,
    with equality for the max-margin separator (003 section 12).

    Parameters
    ----------
    X : array-like of shape (m, d)
        The training points: the features the Perceptron sees, without the
        constant feature.
    y : array-like of shape (m,)
        Their labels, in {-1, +1}.
    u : None, array-like or fitted :class:`smml.linear.HardMarginSVM`, default=None
        None (default): the max-margin separator of (X, y), computed by
        ``HardMarginSVM(fit_intercept=fit_intercept)``: the theorem's value (to that
        solver's certified relative tolerance, on the safe side: the u used is a
        feasible separator). An array: a given separator, (d,) or (d + 1,) with
        ``fit_intercept`` (its last entry is the weight of the constant feature).
        A fitted HardMarginSVM (binary): its separator, and its ``fit_intercept``.
    fit_intercept : bool, default=False
        The Perceptron adds the constant feature 1 (000 "Hyperplanes"): x_t becomes
        (x_t, 1) in gamma(u) and in max_t ||x_t||^2.

    Returns
    -------
    float
        The bound on the number of updates.

    See Also
    --------
    perceptron_mistake_bound : the bound on any stream, separable or not.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import perceptron_convergence_bound
    >>> X = np.array([[2., 1.], [1., 2.], [-1., -2.], [-2., -1.]])
    >>> y = np.array([1, 1, -1, -1])
    >>> round(perceptron_convergence_bound(X, y, u=np.array([1., 1.])), 4)   # (||u|| / gamma)^2 * 5
    1.1111
    """
    if u is not None and hasattr(u, "coef_") and hasattr(u, "margin_"):
        svm: Any = u
        if np.ndim(svm.margin_) != 0:
            raise ValueError("u must be a binary HardMarginSVM (one separator), not one-vs-rest")
        fit_intercept = bool(svm.fit_intercept)
        u = np.append(svm.coef_[0], svm.intercept_ if fit_intercept else [])
    Xa = np.asarray(X, dtype=float)
    if Xa.ndim == 2 and fit_intercept:
        Xa = np.hstack([Xa, np.ones((Xa.shape[0], 1))])
    if u is None:
        from smml.linear import HardMarginSVM

        _, y_chk, _ = _linear_data(Xa, y, np.zeros(Xa.shape[1] if Xa.ndim == 2 else 0))
        svm = HardMarginSVM(fit_intercept=False).fit(Xa, y_chk)
        if list(svm.classes_) != [-1.0, 1.0]:
            raise ValueError("y must hold both labels -1 and +1")
        u = svm.coef_[0]
    X, y, u = _linear_data(Xa, y, u)
    gamma = float(np.min(y * (X @ u)))
    if not gamma > 0:
        raise ValueError(f"u does not separate the data: its margin min_t y_t u.x_t is {gamma:g} <= 0")
    return float(u @ u) / gamma ** 2 * float(np.max(np.einsum("ij,ij->i", X, X)))


def perceptron_mistake_bound(X: ArrayLike, y: ArrayLike, u: ArrayLike) -> float:
    """Mistakes of the Perceptron on the stream (x_t, y_t), any u in R^d (003, section 10).

    M <= sum_t h_t(u) + (||u|| X)^2 + ||u|| X sqrt(sum_t h_t(u)), with the hinge
    loss h_t(u) = [1 - y_t u.x_t]_+ and X = max_t ||x_t||. Holds on any
    sequence, separable or not; with a margin-1 separator it is (||u|| X)^2.

    Parameters
    ----------
    X : array-like of shape (m, d)
        The points x_t of the stream.
    y : array-like of shape (m,)
        Their labels, in {-1, +1}.
    u : array-like of shape (d,)
        Any linear predictor to compare with.

    Returns
    -------
    float
        The bound on the number M of mistakes.

    See Also
    --------
    perceptron_convergence_bound : the bound on a linearly separable set.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import perceptron_mistake_bound
    >>> X = np.array([[2., 1.], [1., 2.], [-1., -2.], [-2., -1.]])
    >>> y = np.array([1, 1, -1, -1])
    >>> round(perceptron_mistake_bound(X, y, u=np.array([1/3, 1/3])), 4)   # margin 1: (||u|| X)^2
    1.1111
    >>> round(perceptron_mistake_bound(X, y, u=np.array([0.5, 0.5])), 4)
    2.5
    """
    X, y, u = _linear_data(X, y, u)
    H = float(np.sum(np.maximum(0.0, 1.0 - y * (X @ u))))
    R = float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X))))
    nu = float(np.sqrt(u @ u))
    return H + (nu * R) ** 2 + nu * R * math.sqrt(H)


def _check_pos(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")


def pegasos_bound(lam: float, n_iter: int, X_norm: float | None = None, G: float | None = None) -> float:
    """E[F(w_bar)] - F(w*) <= G^2 / (2 lam T) (ln T + 1) for Pegasos (003, section 12).

    F(w) = lam/2 ||w||^2 + (1/m) sum_t [1 - y_t w.x_t]_+, w_bar the average of
    the T = n_iter iterates. Pass G (a bound on the norms of the loss
    gradients) or X_norm = max_t ||x_t||, in which case 003's G <= 2X gives
    2 X^2 / (lam T) (ln T + 1).

    Parameters
    ----------
    lam : float > 0
        The regularisation coefficient lambda.
    n_iter : int >= 1
        T, the number of iterations.
    X_norm : float > 0, optional
        max_t ||x_t||; pass it or ``G``, not both.
    G : float > 0, optional
        A bound on the norms of the loss gradients; pass it or ``X_norm``, not both.

    Returns
    -------
    float
        G^2 / (2 lam T) (ln T + 1).

    Examples
    --------
    >>> from smml.bounds import pegasos_bound
    >>> round(pegasos_bound(0.1, 1000, X_norm=1.0), 4)
    0.1582
    >>> pegasos_bound(0.1, 1000, X_norm=1.0) == pegasos_bound(0.1, 1000, G=2.0)   # G <= 2X
    True
    """
    _check_pos("lam", lam)
    _check_positive_int("n_iter", n_iter)
    if (G is None) == (X_norm is None):
        raise ValueError("pass exactly one of G or X_norm")
    if G is None:
        _check_pos("X_norm", X_norm)
        G = 2.0 * cast(float, X_norm)
    else:
        _check_pos("G", G)
    return G * G / (2.0 * lam * n_iter) * (math.log(n_iter) + 1.0)


def ogd_regret_bound(U: float, G: float, T: int) -> float:
    """U G sqrt(8 / T): average regret of projected OGD with eta_t = eta/sqrt(t) (003, section 10).

    (1/T) sum_t l_t(w_t) <= min_{||u|| <= U} (1/T) sum_t l_t(u) + U G sqrt(8/T),
    for convex losses with ||grad l_t(w_t)|| <= G, on the ball of radius U.

    Parameters
    ----------
    U : float > 0
        The radius of the ball of comparison vectors u.
    G : float > 0
        A bound on the gradient norms ||grad l_t(w_t)||.
    T : int >= 1
        The number of rounds.

    Returns
    -------
    float
        U G sqrt(8 / T).

    Examples
    --------
    >>> from smml.bounds import ogd_regret_bound
    >>> round(ogd_regret_bound(1.0, 1.0, 800), 4)
    0.1
    """
    _check_pos("U", U)
    _check_pos("G", G)
    _check_positive_int("T", T)
    return U * G * math.sqrt(8.0 / T)


def ogd_strongly_convex_regret_bound(G: float, sigma: float, T: int) -> float:
    """G^2 / (2 sigma) ln(T + 1) / T: average regret of OGD with eta_t = 1/(sigma t) (003, section 10).

    For sigma-strongly convex losses with ||grad l_t(w_t)|| <= G.

    Parameters
    ----------
    G : float > 0
        A bound on the gradient norms ||grad l_t(w_t)||.
    sigma : float > 0
        The strong-convexity constant of the losses.
    T : int >= 1
        The number of rounds.

    Returns
    -------
    float
        G^2 / (2 sigma) ln(T + 1) / T.

    See Also
    --------
    ogd_regret_bound : the bound for convex losses, of order 1 / sqrt(T).

    Examples
    --------
    >>> from smml.bounds import ogd_strongly_convex_regret_bound
    >>> round(ogd_strongly_convex_regret_bound(1.0, 1.0, 1000), 4)
    0.0035
    """
    _check_pos("G", G)
    _check_pos("sigma", sigma)
    _check_positive_int("T", T)
    return G * G / (2.0 * sigma) * math.log(T + 1.0) / T


# ---- Kernel learners (smml.kernels) ---------------------------------------------
# 003 section 11: the Perceptron's bounds with a kernel K. A predictor g in H_K is
# given by its expansion g = sum_s coef_s K(x_s, .) on the points of the stream and
# the Gram matrix K_st = K(x_s, x_t) of those points: g(x_t) = (K coef)_t and
# ||g||_K^2 = coef^T K coef; ||x_t||^2 becomes K(x_t, x_t).

__all__ += ["kernel_perceptron_convergence_bound", "kernel_perceptron_mistake_bound"]


def _kernel_data(K: ArrayLike, y: ArrayLike, coef: ArrayLike
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float]:
    K = np.asarray(K, dtype=float)
    y = np.asarray(y, dtype=float)
    coef = np.asarray(coef, dtype=float)
    m = y.shape[0] if y.ndim == 1 else -1
    if K.shape != (m, m) or coef.shape != (m,) or m == 0:
        raise ValueError(f"need the Gram matrix K (m, m), y (m,) and coef (m,); got shapes {K.shape}, "
                         f"{y.shape}, {coef.shape}")
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(coef))):
        raise ValueError("K and coef must be finite")
    if not np.all((y == 1) | (y == -1)):
        raise ValueError("y must hold labels in {-1, +1}")
    norm2 = float(coef @ K @ coef)
    if norm2 < 0:
        raise ValueError(f"coef^T K coef = {norm2:g} < 0: K is not positive semidefinite")
    return K, y, coef, norm2


def kernel_perceptron_convergence_bound(K: ArrayLike, y: ArrayLike, coef: ArrayLike) -> float:
    """||g||_K^2 max_t K(x_t, x_t) for the margin-1 rescaling of a separating g (003 section 11).

    003, "mistake bound of the Perceptron convergence theorem when run with a
    kernel K": the kernel Perceptron makes at most ||g||_K^2 max_t K(x_t, x_t)
    mistakes on a training set for any g in H_K with y_t g(x_t) >= 1 for all t.
    A g that separates (gamma = min_t y_t g(x_t) > 0) rescaled to g / gamma has
    margin 1, so the value returned is (||g||_K^2 / gamma^2) max_t K(x_t, x_t).
    ``K`` is the Gram matrix of the training points, g = sum_s coef_s K(x_s, .).

    Parameters
    ----------
    K : array-like of shape (m, m)
        The Gram matrix K_st = K(x_s, x_t) of the points.
    y : array-like of shape (m,)
        Their labels, in {-1, +1}.
    coef : array-like of shape (m,)
        The expansion g = sum_s coef_s K(x_s, .) of the predictor g.

    Returns
    -------
    float
        (||g||_K^2 / gamma^2) max_t K(x_t, x_t).

    See Also
    --------
    perceptron_convergence_bound : the same bound without a kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import kernel_perceptron_convergence_bound
    >>> X = np.array([[2., 1.], [1., 2.], [-1., -2.], [-2., -1.]])
    >>> y = np.array([1, 1, -1, -1])
    >>> K = X @ X.T                                  # the linear kernel
    >>> coef = np.array([1/6, 1/6, 0., 0.])          # g(x) = (x_1 + x_2) / 2, margin 1.5
    >>> round(kernel_perceptron_convergence_bound(K, y, coef), 4)
    1.1111
    """
    K, y, coef, norm2 = _kernel_data(K, y, coef)
    gamma = float(np.min(y * (K @ coef)))
    if not gamma > 0:
        raise ValueError(f"g does not separate the data: its margin min_t y_t g(x_t) is {gamma:g} <= 0")
    return norm2 / gamma ** 2 * float(np.max(np.diag(K)))


def kernel_perceptron_mistake_bound(K: ArrayLike, y: ArrayLike, coef: ArrayLike) -> float:
    """Mistakes of the kernel Perceptron on the stream (x_t, y_t), any g in H_K (003 section 11).

    M <= sum_t h_t(g) + (||g||_K X)^2 + ||g||_K X sqrt(sum_t h_t(g)), with the hinge
    loss h_t(g) = [1 - y_t g(x_t)]_+ and X = max_t sqrt(K(x_t, x_t)) (the largest
    norm ||phi_K(x_t)||_K). ``K`` is the Gram matrix of the stream's points.

    Parameters
    ----------
    K : array-like of shape (m, m)
        The Gram matrix K_st = K(x_s, x_t) of the points.
    y : array-like of shape (m,)
        Their labels, in {-1, +1}.
    coef : array-like of shape (m,)
        The expansion g = sum_s coef_s K(x_s, .) of the predictor g.

    Returns
    -------
    float
        The bound on the number M of mistakes.

    See Also
    --------
    perceptron_mistake_bound : the same bound without a kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import kernel_perceptron_mistake_bound
    >>> X = np.array([[2., 1.], [1., 2.], [-1., -2.], [-2., -1.]])
    >>> y = np.array([1, 1, -1, -1])
    >>> K = X @ X.T                                  # the linear kernel
    >>> round(kernel_perceptron_mistake_bound(K, y, np.array([1/9, 1/9, 0., 0.])), 4)   # margin 1
    1.1111
    >>> round(kernel_perceptron_mistake_bound(K, y, np.array([1/6, 1/6, 0., 0.])), 4)
    2.5
    """
    K, y, coef, norm2 = _kernel_data(K, y, coef)
    H = float(np.sum(np.maximum(0.0, 1.0 - y * (K @ coef))))
    R = math.sqrt(max(0.0, float(np.max(np.diag(K)))))
    nu = math.sqrt(norm2)
    return H + (nu * R) ** 2 + nu * R * math.sqrt(H)


# ---- Ensembles (AdaBoost) ----------------------------------------------------

__all__ += ["adaboost_training_error_bound", "adaboost_rounds_for_zero_error", "majority_vote_bound"]


def _edges(edges):
    g = np.asarray(edges, dtype=float).reshape(-1)
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(np.abs(g) > 0.5):
        raise ValueError("edges gamma_i = 1/2 - epsilon_i must be a non-empty sequence of numbers in [-1/2, 1/2]")
    return g


def adaboost_training_error_bound(edges: ArrayLike) -> tuple[float, float]:
    """(prod_i sqrt(1 - 4 gamma_i^2), exp(-2 sum_i gamma_i^2)): AdaBoost's training-error bounds.

    002, "Training error of AdaBoost" (Proposition): with gamma_i = 1/2 - epsilon_i
    the edge of the i-th weak learner, the training error (weighted by P_1) of
    sign(sum_i w_i h_i) is at most prod_i sqrt(1 - 4 gamma_i^2), which is at most
    exp(-2 sum_i gamma_i^2) (003 section 16: l_S(f) <= e^{-2 T gamma^2} when every
    gamma_i >= gamma). Returns both, the first <= the second.

    Parameters
    ----------
    edges : array-like of float in [-1/2, 1/2]
        The edges gamma_i = 1/2 - epsilon_i of the weak learners, one per round.

    Returns
    -------
    product : float
        prod_i sqrt(1 - 4 gamma_i^2).
    exponential : float
        exp(-2 sum_i gamma_i^2).

    Examples
    --------
    >>> from smml.bounds import adaboost_training_error_bound
    >>> prod, expo = adaboost_training_error_bound([0.1, 0.2, 0.3])
    >>> round(prod, 4), round(expo, 4)
    (0.7184, 0.7558)
    """
    g = _edges(edges)
    g2 = np.minimum(g * g, 0.25)
    return float(np.prod(np.sqrt(1.0 - 4.0 * g2))), float(np.exp(-2.0 * g2.sum()))


def adaboost_rounds_for_zero_error(m: int, gamma: float) -> float:
    """ln(m) / (2 gamma^2): rounds after which AdaBoost's training error is 0.

    003 section 16 ("How many rounds of AdaBoost are sufficient to achieve zero
    training error"): if |gamma_i| >= gamma for every round, the training error
    is below e^{-2 T gamma^2}, and a training error below 1/m on m examples is
    0; so T > ln(m) / (2 gamma^2) rounds suffice. Returns the real number
    ln(m) / (2 gamma^2); the smallest sufficient integer T is floor of it plus 1.

    Parameters
    ----------
    m : int >= 1
        The number of training examples.
    gamma : float in (0, 1/2]
        A lower bound on the edges |gamma_i| of every round.

    Returns
    -------
    float
        ln(m) / (2 gamma^2).

    Examples
    --------
    >>> import math
    >>> from smml.bounds import adaboost_rounds_for_zero_error
    >>> T = adaboost_rounds_for_zero_error(1000, 0.1)
    >>> round(T, 2), math.floor(T) + 1              # the smallest sufficient number of rounds
    (345.39, 346)
    """
    _check_positive_int("m", m)
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 < gamma <= 0.5:
        raise ValueError(f"gamma must be a number in (0, 1/2], got {gamma!r}")
    return math.log(m) / (2.0 * gamma * gamma)


# ---- Tree predictors (000 "Risk analysis for tree predictors"; 003 section 5) ----------

__all__ += ["tree_code_length", "occam_tree_bound", "erm_tree_bound"]


def tree_code_length(n_nodes: int, d: int) -> int:
    """|sigma(h)| = (N_h + 1) ceil(log2(d + 3)) + 2 floor(log2 N_h) + 1.

    000, "A more refined bound": the length of an instantaneous (prefix-free) binary
    code for a tree predictor with N_h nodes on d attributes.

    Parameters
    ----------
    n_nodes : int >= 1
        N_h, the number of nodes of the tree.
    d : int >= 1
        The number of attributes.

    Returns
    -------
    int
        |sigma(h)|, in bits.

    Examples
    --------
    >>> from smml.bounds import tree_code_length
    >>> tree_code_length(7, 10)                      # 8 * 4 + 2 * 2 + 1
    37
    """
    _check_positive_int("n_nodes", n_nodes)
    _check_positive_int("d", d)
    # exact integer logs: ceil(log2(d+3)) = bit_length(d+2), floor(log2 N) = bit_length(N)-1
    n_nodes, d = int(n_nodes), int(d)
    return (n_nodes + 1) * (d + 2).bit_length() + 2 * (n_nodes.bit_length() - 1) + 1


def occam_tree_bound(train_error: float, n_nodes: int, d: int, m: int, delta: float = 0.05) -> float:
    """Training error + sqrt((|sigma(h)| + ln(2/delta)) / (2m)).

    000, "A more refined bound": with probability >= 1 - delta over a training set of
    size m, simultaneously for every tree predictor h with N_h nodes on d attributes,
    risk(h) <= training error(h) + sqrt((|sigma(h)| + ln(2/delta)) / (2m)), with
    |sigma(h)| from :func:`tree_code_length` (the notes write |sigma(h)| for
    ln(1/w(h)) = |sigma(h)| ln 2, which only loosens the bound).

    Parameters
    ----------
    train_error : float in [0, 1]
        The training error of h.
    n_nodes : int >= 1
        N_h, the number of nodes of h.
    d : int >= 1
        The number of attributes.
    m : int >= 1
        The training-set size.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    float
        The bound on risk(h) (not clipped).

    See Also
    --------
    tree_code_length : |sigma(h)|.
    erm_tree_bound : the bound for ERM on trees with N nodes.

    Examples
    --------
    >>> from smml.bounds import occam_tree_bound
    >>> round(occam_tree_bound(0.1, n_nodes=7, d=10, m=10_000), 4)
    0.1451
    """
    if isinstance(train_error, bool) or not isinstance(train_error, numbers.Real) \
            or not 0.0 <= train_error <= 1.0:
        raise ValueError(f"train_error must be a number in [0, 1], got {train_error!r}")
    _check_positive_int("m", m)
    _check_delta(delta)
    sigma = tree_code_length(n_nodes, d)
    return train_error + math.sqrt((sigma + math.log(2.0 / delta)) / (2.0 * m))


def erm_tree_bound(m: int, n_nodes: int, d: int, delta: float = 0.05) -> float:
    """sqrt((2/m) (N (1 + ln(2d)) + ln(2/delta))): estimation error of ERM on trees with N nodes.

    000, "Limiting the number of nodes" and 003 section 5: |H_N| <= (2ed)^N, so with
    probability >= 1 - delta, risk(h_S) <= min_{h in H_N} risk(h) + this quantity.

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    n_nodes : int >= 1
        N, the number of nodes of the trees of H_N.
    d : int >= 1
        The number of attributes.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    float
        The bound on risk(h_S) - min_{h in H_N} risk(h).

    Examples
    --------
    >>> from smml.bounds import erm_tree_bound
    >>> round(erm_tree_bound(10_000, n_nodes=7, d=10), 4)
    0.0796
    """
    _check_positive_int("m", m)
    _check_positive_int("n_nodes", n_nodes)
    _check_positive_int("d", d)
    _check_delta(delta)
    return math.sqrt(2.0 / m * (n_nodes * (1.0 + math.log(2.0 * d)) + math.log(2.0 / delta)))


def majority_vote_bound(T: int, gamma: float) -> float:
    """exp(-2 T gamma^2): training error of a majority vote of T independent classifiers.

    003 section 16 ("Write the upper bound on the training error achieved by
    Bagging when the errors of the classifiers are independent"): if the
    training errors of h_1..h_T are independent and each is at most
    1/2 - gamma, the majority vote f = sgn(sum_i h_i) has l_S(f) <= e^{-2 T gamma^2}.

    Parameters
    ----------
    T : int >= 1
        The number of classifiers voting.
    gamma : float in [0, 1/2]
        Each classifier's training error is at most 1/2 - gamma.

    Returns
    -------
    float
        exp(-2 T gamma^2).

    Examples
    --------
    >>> from smml.bounds import majority_vote_bound
    >>> round(majority_vote_bound(100, 0.1), 4)
    0.1353
    """
    _check_positive_int("T", T)
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 <= gamma <= 0.5:
        raise ValueError(f"gamma must be a number in [0, 1/2], got {gamma!r}")
    return math.exp(-2.0 * T * gamma * gamma)


# ---- Nearest neighbours (000 "Risk Analysys for Nearest-Neighbor"; 002 "Generalization error of 1-NN") --

__all__ += ["one_nn_risk_bound"]


def one_nn_risk_bound(bayes_risk: float, c: float, d: int, m: int, epsilon: float | None = None) -> float:
    """Bound on the expected risk of 1-NN, E[l_D(h_S)] over training sets S of size m.

    000, "Risk Analysys for Nearest-Neighbor" (and 003 section 8): for data points in
    X = [-1, 1]^d (000: "max |X| <= 1 with probability one", i.e. every coordinate in
    [-1, 1]), binary labels and a c-Lipschitz conditional probability eta, for every
    0 < epsilon < 1

        E[l_D(h_S)] <= 2 l_D(f*) + c sqrt(d) (epsilon + (2 / (e m)) (2 / epsilon)^d),

    and with epsilon = 2 m^(-1/(d+1)) this gives the notes' final form (the default,
    ``epsilon=None``)

        E[l_D(h_S)] <= 2 l_D(f*) + 4 c sqrt(d) m^(-1/(d+1)).

    The constants come from that domain, of side 2: a point with no training point in
    its cube of side epsilon is at most the diagonal 2 sqrt(d) of [-1, 1]^d from its
    nearest neighbour, and there are r = (2 / epsilon)^d such cubes. 002 ("Generalization
    error of 1-NN") states the theorem on [0, 1]^d with the same final constant 4 c
    sqrt(d); as [0, 1]^d is inside [-1, 1]^d the bound computed here holds there too
    (on [0, 1]^d the same argument gives the smaller sqrt(d) (epsilon + (1 / (e m))
    (1 / epsilon)^d)). Rescale the features into [-1, 1]^d (and eta's Lipschitz
    constant c with them) before using it. (002 prints the exponent as -1/(n+1);
    000's derivation gives -1/(d+1).)

    Parameters
    ----------
    bayes_risk : float in [0, 1/2]
        l_D(f*), the Bayes risk.
    c : float >= 0
        The Lipschitz constant of eta.
    d : int >= 1
        The number of features.
    m : int >= 1
        The training-set size.
    epsilon : None or float in (0, 1), default=None
        The side of the cubes; None for 2 m^(-1/(d+1)), the notes' final form.

    Returns
    -------
    float
        The bound on E[l_D(h_S)].

    Examples
    --------
    >>> from smml.bounds import one_nn_risk_bound
    >>> round(one_nn_risk_bound(0.1, c=1.0, d=2, m=10_000), 4)      # 0.2 + 4 sqrt(2) / 10000^(1/3)
    0.4626
    >>> round(one_nn_risk_bound(0.1, c=1.0, d=2, m=10_000, epsilon=0.1), 4)
    0.383
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


# ---- Statistical learning: Bayes optimal predictors and risks (000 "Bayes optimal predictor"; 003 sections 4, 15)

__all__ += ["bayes_optimal_predictor", "bayes_risk", "surrogate_consistency_condition", "svm_stability_bound",
            "svm_consistent_lambda", "empirical_stability", "StabilityEstimate",
            "knn_asymptotic_risk_bound", "knn_consistent_k", "finite_class_uniform_bound"]

_BAYES_LOSSES = ("zero_one", "square", "logistic")


def _check_loss_name(loss):
    if loss not in _BAYES_LOSSES:
        raise ValueError(f"loss must be one of {_BAYES_LOSSES}, got {loss!r}")


def _check_base(base):
    if isinstance(base, bool) or not isinstance(base, numbers.Real) or not math.isfinite(base) \
            or base <= 0 or base == 1:
        raise ValueError(f"base must be a positive real number other than 1 (2 or math.e), got {base!r}")


def _conditional(eta, X, y_values, p_y):
    """(labels (k,), P(Y = labels_j | X = x_i) as (n, k)) from eta or (y_values, p_y)."""
    if (eta is None) == (p_y is None):
        raise ValueError("pass exactly one of eta (P(Y = +1 | X = x), binary labels -1/+1) or "
                         "p_y (P(Y = y_values[j] | X = x_i)) with y_values")
    if eta is not None:
        if y_values is not None:
            raise ValueError("y_values goes with p_y; with eta the labels are -1 and +1")
        if callable(eta):
            if X is None:
                raise ValueError("eta is a function: pass the points X where to evaluate it")
            eta = eta(X)
        elif X is not None:
            raise ValueError("X is only used when eta is a function")
        e = np.asarray(eta, dtype=float).reshape(-1)
        if e.size == 0 or not np.all(np.isfinite(e)) or np.any(e < 0) or np.any(e > 1):
            raise ValueError("eta must be a non-empty sequence of probabilities in [0, 1]")
        return np.array([-1.0, 1.0]), np.column_stack([1.0 - e, e])
    if y_values is None:
        raise ValueError("p_y needs y_values, the labels its columns refer to")
    yv = np.asarray(y_values, dtype=float).reshape(-1)
    P = np.asarray(p_y, dtype=float)
    if P.ndim == 1:
        P = P[None, :]
    if P.ndim != 2 or P.shape[1] != yv.size or P.shape[0] == 0 or yv.size == 0:
        raise ValueError(f"p_y must be (n_points, {yv.size}) for {yv.size} y_values, got shape {np.shape(p_y)}")
    if not (np.all(np.isfinite(yv)) and np.all(np.isfinite(P))) or np.any(P < 0) \
            or not np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("every row of p_y must be a probability vector (non-negative, summing to 1) "
                         "and y_values finite")
    if len(np.unique(yv)) != yv.size:
        raise ValueError("y_values must be distinct")
    order = np.argsort(yv)
    return yv[order], P[:, order]


def _point_weights(p_x, n):
    if p_x is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(p_x, dtype=float).reshape(-1)
    if w.size != n or not np.all(np.isfinite(w)) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"p_x must hold {n} non-negative probabilities summing to 1")
    return w


def _binary_eta(labels, P, loss):
    if labels.size != 2 or labels[0] != -1.0 or labels[1] != 1.0:
        raise ValueError(f"the {loss} loss needs binary labels -1 and +1 (pass eta)")
    return P[:, 1]


def bayes_optimal_predictor(loss: Literal["zero_one", "square", "logistic"] = "zero_one",
                            eta: ArrayLike | Callable[..., Any] | None = None, *, X: ArrayLike | None = None,
                            y_values: ArrayLike | None = None, p_y: ArrayLike | None = None) -> NDArray[Any]:
    """f*(x) = argmin_{y_hat} E[l(Y, y_hat) | X = x] on given points x (000; 003 sections 4, 15).

    The distribution of Y given X = x is passed for a finite set of points x_1..x_n (or
    for sample points, see :func:`bayes_risk`), either as

    - ``eta``: eta(x_i) = P(Y = +1 | X = x_i) for labels in {-1, +1} (a sequence, or a
      function applied to the points ``X``), or
    - ``y_values`` (k distinct reals) and ``p_y`` (n, k): p_y[i, j] = P(Y = y_values[j] | X = x_i).

    Losses (000 "Bayes optimal predictor"; 003 sections 4 and 15):

    - ``"zero_one"``: f*(x) = -1 if eta(x) < 1/2, +1 if eta(x) >= 1/2 (the notes' rule: a
      tie eta = 1/2 goes to +1). With ``p_y``: the most probable label, a tie going to the
      largest label (+1 for labels -1, +1, as the binary rule).
    - ``"square"``: f*(x) = E[Y | X = x] (2 eta(x) - 1 for labels -1, +1).
    - ``"logistic"`` (binary): the log-odds g*(x) = ln(eta(x) / (1 - eta(x))), with -inf / +inf
      where eta is 0 / 1; sgn(g*) is the zero-one f* (003 section 15).

    Returns an array with f*(x_i) for each point.

    Parameters
    ----------
    loss : {"zero_one", "square", "logistic"}, default="zero_one"
        The loss whose Bayes optimal predictor is computed.
    eta : array-like of shape (n,) or callable, optional
        eta(x_i) = P(Y = +1 | X = x_i), or a function returning it for the points ``X``.
        Pass it or ``p_y``, not both.
    X : array-like, optional
        The points where the function ``eta`` is evaluated (only with a callable ``eta``).
    y_values : array-like of shape (k,), optional
        The labels the columns of ``p_y`` refer to.
    p_y : array-like of shape (n, k), optional
        p_y[i, j] = P(Y = y_values[j] | X = x_i).

    Returns
    -------
    ndarray of shape (n,)
        f*(x_i) for each point.

    See Also
    --------
    bayes_risk : the risk of this predictor.

    Examples
    --------
    >>> from smml.bounds import bayes_optimal_predictor
    >>> bayes_optimal_predictor("zero_one", eta=[0.2, 0.5, 0.9]).tolist()   # a tie goes to +1
    [-1.0, 1.0, 1.0]
    >>> [round(v, 3) for v in bayes_optimal_predictor("square", eta=[0.2, 0.5, 0.9]).tolist()]
    [-0.6, 0.0, 0.8]
    """
    _check_loss_name(loss)
    labels, P = _conditional(eta, X, y_values, p_y)
    if loss == "zero_one":
        if labels.size == 2:        # binary: the notes' threshold, computed from eta itself
            return np.where(P[:, 1] >= 0.5, labels[1], labels[0])
        k = labels.size - 1 - np.argmax(P[:, ::-1], axis=1)     # the largest label among the tied
        return labels[k]
    if loss == "square":
        return P @ labels
    e = _binary_eta(labels, P, loss)
    with np.errstate(divide="ignore"):
        return np.log(e) - np.log1p(-e)


def bayes_risk(loss: Literal["zero_one", "square", "logistic"] = "zero_one",
               eta: ArrayLike | Callable[..., Any] | None = None, *, X: ArrayLike | None = None,
               p_x: ArrayLike | None = None, y_values: ArrayLike | None = None, p_y: ArrayLike | None = None,
               base: float = 2) -> float:
    """The Bayes risk l_D(f*) = E[min_{y_hat} E[l(Y, y_hat) | X]] (000; 003 sections 4, 15).

    The conditional distribution of Y is given as in :func:`bayes_optimal_predictor`;
    ``p_x`` gives the probabilities of the points x_1..x_n (a finite X). With ``p_x=None``
    every point has weight 1/n: pass points X_1..X_n drawn from D_X and the result is the
    sample mean, an unbiased estimate of the Bayes risk (e.g. ``eta`` a function and ``X``
    the sample).

    - ``"zero_one"``: E[min(eta(X), 1 - eta(X))] (000, 003 section 4); with ``p_y``,
      E[1 - max_j p_y(X)].
    - ``"square"``: E[Var(Y | X)] (000: the expected conditional variance;
      4 eta (1 - eta) for labels -1, +1).
    - ``"logistic"`` (binary): H(Y | X) = E[-eta log eta - (1 - eta) log(1 - eta)], the
      conditional entropy, for the loss log_base(1 + e^{-y y_hat}); ``base=2`` is 003 section
      15's log2 (bits), ``base=math.e`` the natural-log loss of 002 and ``smml.losses.logistic``.

    Parameters
    ----------
    loss : {"zero_one", "square", "logistic"}, default="zero_one"
        The loss.
    eta : array-like of shape (n,) or callable, optional
        eta(x_i) = P(Y = +1 | X = x_i), or a function returning it for the points ``X``.
        Pass it or ``p_y``, not both.
    X : array-like, optional
        The points where the function ``eta`` is evaluated (only with a callable ``eta``).
    p_x : array-like of shape (n,), optional
        The probabilities of the points; None for weight 1/n each.
    y_values : array-like of shape (k,), optional
        The labels the columns of ``p_y`` refer to.
    p_y : array-like of shape (n, k), optional
        p_y[i, j] = P(Y = y_values[j] | X = x_i).
    base : float > 0, not 1, default=2
        The base of the logarithm of the logistic loss.

    Returns
    -------
    float
        The Bayes risk (or its sample-mean estimate).

    See Also
    --------
    bayes_optimal_predictor : f* itself.

    Examples
    --------
    >>> from smml.bounds import bayes_risk
    >>> round(bayes_risk("zero_one", eta=[0.2, 0.5, 0.9]), 4)     # mean of 0.2, 0.5, 0.1
    0.2667
    >>> bayes_risk("logistic", eta=[0.5])                          # one bit of entropy
    1.0
    """
    _check_loss_name(loss)
    labels, P = _conditional(eta, X, y_values, p_y)
    w = _point_weights(p_x, P.shape[0])
    if loss == "zero_one":
        if labels.size == 2:
            cond = np.minimum(P[:, 0], P[:, 1])
        else:
            cond = 1.0 - P.max(axis=1)
    elif loss == "square":
        mean = P @ labels
        cond = np.einsum("ij,ij->i", P, (labels[None, :] - mean[:, None]) ** 2)
    else:
        _check_base(base)
        e = _binary_eta(labels, P, loss)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -(np.where(e > 0, e * np.log(e), 0.0) + np.where(e < 1, (1 - e) * np.log1p(-e), 0.0))
        cond = h / math.log(base)
    return float(w @ cond)


_MARGIN_SLOPES = {"hinge": -1.0, "exponential": -1.0, "square": -2.0}


def surrogate_consistency_condition(loss: LossLike, base: float = math.e,
                                    h: float = 1e-6) -> tuple[bool, dict[int, float | None]]:
    """003 section 15's sufficient condition for a consistent surrogate loss: l'(y, 0) < 0.

    "If a surrogate loss l: {-1, 1} x R -> R is such that for all y in {-1, 1} the derivative
    l'(y, 0) exists and satisfies l'(y, 0) < 0, then l is consistent" (for the convex
    surrogates of that section). l'(y, 0) is the derivative in the margin: of
    z -> l(y, y z) at z = 0, i.e. y d/dy_hat l(y, y_hat) at y_hat = 0 (with the derivative
    in y_hat itself the hinge loss would fail the condition at y = -1, yet it is consistent).

    ``loss``: a name - "hinge" (slope -1), "logistic" (-1/(2 ln base); ``base`` as in
    :func:`smml.losses.logistic`), "exponential" (-1), "square" ((y - y_hat)^2 on labels
    -1, +1: -2), "zero_one" (I{y_hat != y}, a step: the derivative is 0, the condition
    fails) - or a callable ``loss(y, y_pred)`` (vectorised, as ``smml.losses``), whose
    derivative is estimated by one-sided difference quotients with step ``h``: it "exists"
    when the two sides agree to 1e-4 relative (a numerical check, not a proof).

    Returns ``(holds, slopes)``: whether the condition holds, and {-1: l'(-1, 0), +1: l'(+1, 0)}
    (``None`` where no derivative exists). ``holds=False`` only says that this sufficient
    condition fails, not that the loss is inconsistent.

    Parameters
    ----------
    loss : str or callable
        A loss name ("hinge", "logistic", "exponential", "square", "zero_one") or a
        callable ``loss(y, y_pred)``.
    base : float > 0, not 1, default=math.e
        The base of the logarithm of the logistic loss.
    h : float > 0, default=1e-6
        The step of the difference quotients for a callable loss.

    Returns
    -------
    holds : bool
        Whether l'(y, 0) < 0 for both labels.
    slopes : dict
        {-1: l'(-1, 0), +1: l'(+1, 0)}, None where no derivative exists.

    Examples
    --------
    >>> from smml.bounds import surrogate_consistency_condition
    >>> surrogate_consistency_condition("hinge")
    (True, {-1: -1.0, 1: -1.0})
    >>> surrogate_consistency_condition("zero_one")[0]
    False
    """
    slopes: dict[int, float | None]
    if isinstance(loss, str):
        if loss in _MARGIN_SLOPES:
            s = _MARGIN_SLOPES[loss]
            slopes = {-1: s, 1: s}
        elif loss == "logistic":
            _check_base(base)
            s = -0.5 / math.log(base)
            slopes = {-1: s, 1: s}
        elif loss == "zero_one":
            slopes = {-1: 0.0, 1: 0.0}
        else:
            raise ValueError("loss must be 'hinge', 'logistic', 'exponential', 'square', 'zero_one' or a "
                             f"callable loss(y, y_pred), got {loss!r}")
    elif callable(loss):
        _check_pos("h", h)
        slopes = {}
        for y in (-1, 1):
            z = np.array([-h, 0.0, h])
            v = np.asarray(loss(np.full(3, float(y)), y * z), dtype=float).reshape(-1)
            if v.shape != (3,) or not np.all(np.isfinite(v)):
                raise ValueError("the loss must return 3 finite values for 3 examples")
            left, right = (v[1] - v[0]) / h, (v[2] - v[1]) / h
            ok = abs(left - right) <= 1e-4 * max(1.0, abs(left), abs(right))
            slopes[y] = 0.5 * (left + right) if ok else None
    else:
        raise ValueError(f"loss must be a name or a callable loss(y, y_pred), got {loss!r}")
    holds = all(s is not None and s < 0 for s in slopes.values())
    return holds, slopes


def svm_stability_bound(lam: float, m: int, L: float | None = None, X_norm: float | None = None) -> float:
    """epsilon = (2L)^2 / (lam m): the stability of regularised ERM, e.g. the SVM (003 section 13).

    003 section 13: if l(., z) is convex and L-Lipschitz, A(S) = argmin_w l_S(w) + lam/2 ||w||^2
    is (2L)^2 / (lam m)-stable for every lam > 0: E[l(h_{S^(t)}, Z_t) - l(h_S, Z_t)] <= epsilon
    for every t. For the SVM (hinge loss) L = X, the radius of the ball holding the data
    points, so epsilon = 4 X^2 / (lam m). Pass ``L`` or ``X_norm`` (= max_t ||x_t||).

    Parameters
    ----------
    lam : float > 0
        The regularisation coefficient lambda.
    m : int >= 1
        The training-set size.
    L : float > 0, optional
        The Lipschitz constant of the loss; pass it or ``X_norm``, not both.
    X_norm : float > 0, optional
        max_t ||x_t|| (the SVM: L = X); pass it or ``L``, not both.

    Returns
    -------
    float
        (2L)^2 / (lam m).

    See Also
    --------
    empirical_stability : a Monte-Carlo estimate to compare with.

    Examples
    --------
    >>> from smml.bounds import svm_stability_bound
    >>> round(svm_stability_bound(0.1, 1000, X_norm=1.0), 4)     # 4 X^2 / (lam m)
    0.04
    """
    _check_pos("lam", lam)
    _check_positive_int("m", m)
    if (L is None) == (X_norm is None):
        raise ValueError("pass exactly one of L (the Lipschitz constant) or X_norm (for the SVM, L = X)")
    L = X_norm if L is None else L
    _check_pos("L" if X_norm is None else "X_norm", L)
    return (2.0 * cast(float, L)) ** 2 / (lam * m)


def svm_consistent_lambda(m: int, exponent: float = 0.25, scale: float = 1.0) -> float:
    """lam_m = scale * m^(-exponent): a regularisation schedule that makes the Gaussian-kernel SVM consistent.

    003 section 13 ("the mathematical conditions on the regularization coefficient
    lambda ensuring consistency for the SVM algorithm with Gaussian kernel"): with
    lambda chosen as a function lam_m of the training-set size m, the SVM with a
    Gaussian kernel is consistent if, as m -> infinity,

        lam_m = o(1)   and   lam_m = omega(m^(-1/2)),

    i.e. lam_m -> 0 and lam_m sqrt(m) -> infinity. The notes give the conditions, not
    a schedule; lam_m = scale m^(-exponent) meets both exactly when
    0 < exponent < 1/2 (lam_m sqrt(m) = scale m^(1/2 - exponent)), which is checked.
    The default exponent 1/4 is the middle of that range: lam_m tends to 0 and
    lam_m sqrt(m) to infinity at the same rate m^(1/4). With it the stability of
    :func:`svm_stability_bound` is epsilon = 4 X^2 / (lam_m m) = (4 X^2 / scale)
    m^(exponent - 1) -> 0 (X = 1 for the Gaussian kernel, K(x, x) = 1). The notes
    keep the kernel's width gamma fixed: so does this schedule. Use it as
    ``KernelSVC(kernel="gaussian", gamma=..., lam=svm_consistent_lambda(m),
    fit_intercept=False)``: 003's lam and 003's SVM, without a bias (C = 1 / (lam m)
    in libsvm's form).

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    exponent : float in (0, 1/2), default=0.25
        The rate at which lam_m decreases.
    scale : float > 0, default=1.0
        lam_1; the conditions hold for any positive scale, which the notes leave
        free: it sets lam at a given m (tune it, e.g. by CV, on the problem at hand).

    Returns
    -------
    float
        lam_m = scale * m^(-exponent).

    Examples
    --------
    >>> from smml.bounds import svm_consistent_lambda
    >>> svm_consistent_lambda(10_000)             # 10000^(-1/4)
    0.1
    >>> svm_consistent_lambda(10_000, exponent=0.4, scale=2.0) < svm_consistent_lambda(10_000)
    True
    """
    _check_positive_int("m", m)
    if isinstance(exponent, bool) or not isinstance(exponent, numbers.Real) or not 0 < exponent < 0.5:
        raise ValueError("exponent must be in (0, 1/2): lam_m = m^(-exponent) is o(1) only for exponent > 0 "
                         f"and omega(m^(-1/2)) only for exponent < 1/2; got {exponent!r}")
    _check_pos("scale", scale)
    return float(scale) * float(m) ** (-float(exponent))


@dataclass
class StabilityEstimate:
    """Outcome of :func:`empirical_stability`.

    A dataclass: each parameter is also the attribute of the same name.

    Parameters
    ----------
    epsilon : float
        The estimate of E[l(h_{S^(t)}, Z_t) - l(h_S, Z_t)]: the mean of ``differences``.
    std_error : float
        The standard error of that mean, std(differences) / sqrt(n_draws) (0 for one draw).
    differences : ndarray of shape (n_draws,)
        l(h_{S^(t)}, Z_t) - l(h_S, Z_t) for each draw.
    m : int
        The training-set size.
    train_indices : ndarray of shape (n_draws, m)
        The rows of (X, y) forming S in each draw.
    t : ndarray of shape (n_draws,)
        The position in S of the replaced example Z_t (its row is ``train_indices[i, t[i]]``).
    replacement : ndarray of shape (n_draws,)
        The row of (X, y) of the new example Z'_t.

    See Also
    --------
    empirical_stability : the function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import StabilityEstimate
    >>> d = np.array([0.02, 0.04])
    >>> est = StabilityEstimate(epsilon=float(d.mean()), std_error=0.01, differences=d, m=3,
    ...                         train_indices=np.array([[0, 1, 2], [1, 2, 3]]), t=np.array([0, 2]),
    ...                         replacement=np.array([4, 0]))
    >>> round(est.epsilon, 3), est.train_indices.shape
    (0.03, (2, 3))
    """
    epsilon: float
    std_error: float
    differences: np.ndarray
    m: int
    train_indices: np.ndarray
    t: np.ndarray
    replacement: np.ndarray


_MARGIN_LOSS_NAMES = ("hinge", "logistic", "exponential")


def _is_margin_loss(loss):
    from smml import losses as _losses

    if isinstance(loss, str):
        return loss in _MARGIN_LOSS_NAMES
    fn = getattr(loss, "func", loss)                 # functools.partial(logistic, base=2)
    return any(fn is getattr(_losses, name) for name in _MARGIN_LOSS_NAMES)


def empirical_stability(estimator: Estimator, X: ArrayLike, y: ArrayLike, loss: LossLike = "hinge", n_draws: int = 20,
                        m: int | None = None,
                        method: Literal["auto", "predict", "decision_function", "predict_proba"] = "auto",
                        random_state: RandomStateLike = None) -> StabilityEstimate:
    """Monte-Carlo estimate of the epsilon of epsilon-stability: refit with one example replaced.

    003 section 13 ("the definition of epsilon-stability"): A is epsilon-stable for
    training sets of size m if E[l(h_{S^(t)}, Z_t) - l(h_S, Z_t)] <= epsilon for every
    t, where h_S = A(S), S = (Z_1, ..., Z_m) is drawn i.i.d. from D and S^(t) is S with
    Z_t replaced by an independent Z'_t from D. The expectation is over S and Z'_t.
    Compare the estimate with :func:`svm_stability_bound`, which 003 proves for
    A(S) = argmin_w l_S(w) + lam/2 ||w||^2 with l(., z) convex and L-Lipschitz
    (e.g. the SVM, L = X, the radius of the data).

    (X, y) is used as a pool of examples drawn i.i.d. from D. Each draw takes m + 1
    distinct rows at random (the first m are S, the last is Z'_t; rows picked without
    replacement from an i.i.d. pool are again i.i.d. from D), a position t uniformly in
    1..m, fits clones (``sklearn.base.clone``) of ``estimator`` on S and on S^(t), and
    records l(h_{S^(t)}, Z_t) - l(h_S, Z_t); the estimate is the mean over the
    ``n_draws`` draws, an unbiased estimate of the expectation above (the draws share
    rows of the pool, so ``std_error`` is only indicative). The definition's
    expectation is the same for every t, so drawing t is no restriction.

    What is compared is the algorithm as run: a learner that only approximates the
    argmin (Pegasos, a loose ``tol``) or derives hyper-parameters from its training
    set (``gamma="scale"``, an unpenalised intercept) is not exactly the algorithm of
    003's theorem.

    Parameters
    ----------
    estimator : estimator
        The learner A (unfitted; cloned for each fit).
    X : array-like of shape (n, d)
        The pool of examples, n >= m + 1.
    y : array-like of shape (n,)
        Their labels. With a margin loss and ``method="decision_function"`` the labels
        are mapped to -1 / +1 as the classifiers do (the larger of the two labels is +1).
    loss : str or callable, default="hinge"
        A name of :data:`smml.losses.LOSSES` or ``loss(y, y_pred)`` returning per-example
        losses; the loss of the theorem (the hinge loss of the SVM on g(x), not the
        zero-one loss of its sign).
    n_draws : int >= 1, default=20
        The number of (S, t, Z'_t) draws; each costs two fits.
    m : None or int >= 1, default=None
        The training-set size; None for n - 1 (all the pool but the replacement).
    method : {"auto", "predict", "decision_function", "predict_proba"}, default="auto"
        What the loss is applied to. "auto": ``decision_function`` for a margin loss
        (hinge, logistic, exponential) when the estimator has it, else ``predict``.
    random_state : int, RandomState instance or None
        Seeds the draws.

    Returns
    -------
    StabilityEstimate
        The estimate, its standard error, the per-draw differences and the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.bounds import empirical_stability, svm_stability_bound
    >>> from smml.kernels import KernelSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2))
    >>> y = np.where(X[:, 0] + 0.3 * rng.standard_normal(200) > 0, 1, -1)
    >>> svm = KernelSVC(C=1 / (0.5 * 40), kernel="rbf", gamma=0.5, fit_intercept=False, tol=1e-6)
    >>> est = empirical_stability(svm, X, y, loss="hinge", n_draws=10, m=40, random_state=0)
    >>> bool(est.epsilon <= svm_stability_bound(0.5, 40, X_norm=1.0))   # K(x, x) = 1: X = 1
    True
    """
    from sklearn.base import clone

    from smml.losses import get_loss

    loss_fn = get_loss(loss)
    _check_positive_int("n_draws", n_draws)
    if method not in ("auto", "predict", "decision_function", "predict_proba"):
        raise ValueError(f"method must be 'auto', 'predict', 'decision_function' or 'predict_proba', got {method!r}")
    y_arr = np.asarray(y)
    if y_arr.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y_arr.shape}")
    n = y_arr.shape[0]
    if hasattr(X, "iloc"):
        X = cast(Any, X).to_numpy()
    X_arr = np.asarray(X)
    if X_arr.shape[0] != n:
        raise ValueError(f"X and y have different numbers of rows: {X_arr.shape[0]} != {n}")
    if m is None:
        m = n - 1
    _check_positive_int("m", m)
    if m + 1 > n:
        raise ValueError(f"a draw needs m + 1 = {m + 1} distinct examples, the pool has {n}")
    if method == "auto":
        method = "decision_function" if _is_margin_loss(loss) and hasattr(estimator, "decision_function") \
            else "predict"
    y_loss = y_arr
    if method == "decision_function" and _is_margin_loss(loss):
        labels = np.unique(y_arr)
        if labels.size == 2:
            y_loss = np.where(y_arr == labels[1], 1.0, -1.0)

    def _output(est, x):
        out = getattr(est, method)(x)
        if method == "predict_proba":
            out = np.asarray(out)
            if out.ndim != 2 or out.shape[1] != 2:
                raise ValueError("method='predict_proba' is supported for binary problems only")
            out = out[:, 1]
        return np.asarray(out).reshape(-1)

    def _loss(target, pred):
        v = np.asarray(loss_fn(np.asarray([target]), pred), dtype=np.float64).reshape(-1)
        if v.shape != (1,):
            raise ValueError(f"the loss must return one value per example, got shape {v.shape}")
        return float(v[0])

    from smml._validation import check_random_state

    rs = check_random_state(random_state)
    diffs = np.empty(n_draws)
    train = np.empty((n_draws, m), dtype=np.intp)
    ts = np.empty(n_draws, dtype=np.intp)
    repl = np.empty(n_draws, dtype=np.intp)
    for i in range(n_draws):
        rows = rs.choice(n, size=m + 1, replace=False)
        S, z_new = rows[:m], rows[m]
        t = int(rs.randint(m))
        S_t = S.copy()
        S_t[t] = z_new
        z = S[t]
        x_t = X_arr[z:z + 1]
        h_S = clone(estimator).fit(X_arr[S], y_arr[S])
        h_St = clone(estimator).fit(X_arr[S_t], y_arr[S_t])
        diffs[i] = _loss(y_loss[z], _output(h_St, x_t)) - _loss(y_loss[z], _output(h_S, x_t))
        train[i], ts[i], repl[i] = S, t, z_new
    se = float(np.std(diffs, ddof=1) / math.sqrt(n_draws)) if n_draws > 1 else 0.0
    return StabilityEstimate(epsilon=float(np.mean(diffs)), std_error=se, differences=diffs, m=int(m),
                             train_indices=train, t=ts, replacement=repl)


def knn_asymptotic_risk_bound(bayes_risk: float, k: int) -> float:
    """l* + 2 sqrt(l* / k): the limit of the expected risk of k-NN (000 "Consistency").

    000, "Consistency and nonparametric algorithms", (1): for any data distribution,
    lim_{m -> infinity} E[l_D(k-NN(S_m))] <= l_D(f*) + 2 sqrt(l_D(f*) / k) (binary
    classification, zero-one loss; l* = l_D(f*) the Bayes risk, at most 1/2). For a fixed k
    k-NN is not known to be consistent; it is when k = k_m grows with k_m -> infinity and
    k_m = o(m) (see :func:`knn_consistent_k`).

    Parameters
    ----------
    bayes_risk : float in [0, 1/2]
        l* = l_D(f*), the Bayes risk.
    k : int >= 1
        The number of neighbours.

    Returns
    -------
    float
        l* + 2 sqrt(l* / k).

    Examples
    --------
    >>> from smml.bounds import knn_asymptotic_risk_bound
    >>> round(knn_asymptotic_risk_bound(0.04, 16), 4)           # 0.04 + 2 sqrt(0.0025)
    0.14
    """
    if isinstance(bayes_risk, bool) or not isinstance(bayes_risk, numbers.Real) or not 0 <= bayes_risk <= 0.5:
        raise ValueError(f"bayes_risk must be a number in [0, 1/2], got {bayes_risk!r}")
    _check_positive_int("k", k)
    return float(bayes_risk) + 2.0 * math.sqrt(bayes_risk / k)


def knn_consistent_k(m: int, schedule: Literal["sqrt", "log"] = "sqrt") -> int:
    """k_m for a training set of size m, with k_m -> infinity and k_m = o(m) (000; 003 section 7).

    000 / 003 section 7: k-NN is consistent when k is chosen as a function k_m of the
    training-set size with k_m -> infinity and k_m = o(m); the notes' two examples are
    k_m = sqrt(m) (``schedule="sqrt"``) and k_m = log m (``"log"``, natural log). The value
    returned is the integer ceil of that (at least 1, at most m): ceil keeps both conditions.

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    schedule : {"sqrt", "log"}, default="sqrt"
        k_m = ceil(sqrt(m)) or ceil(ln m).

    Returns
    -------
    int
        k_m, between 1 and m.

    Examples
    --------
    >>> from smml.bounds import knn_consistent_k
    >>> knn_consistent_k(1000), knn_consistent_k(1000, schedule="log")
    (32, 7)
    """
    _check_positive_int("m", m)
    if schedule == "sqrt":
        k = math.isqrt(m - 1) + 1 if m > 1 else 1        # ceil(sqrt(m)), exactly in integers
    elif schedule == "log":
        k = math.ceil(math.log(m))
    else:
        raise ValueError(f"schedule must be 'sqrt' or 'log', got {schedule!r}")
    return int(min(max(k, 1), m))


def finite_class_uniform_bound(m: int, n_hypotheses: int, delta: float = 0.05) -> float:
    """sqrt(ln(2|H|/delta) / (2m)): |l_S(h) - l_D(h)| for every h of a finite class at once.

    000 "Risk analysis" (ERM on a finite class, the step (2) of the proof): with
    probability >= 1 - delta over a training set of size m, every h in H has
    |l_S(h) - l_D(h)| <= sqrt(ln(2|H|/delta) / (2m)) (a loss with values in [0, 1]); hence
    l_D(h_S) <= l_S(h_S) + this for the ERM predictor h_S (see :class:`smml.erm.ERMClassifier`).

    Parameters
    ----------
    m : int >= 1
        The training-set size.
    n_hypotheses : int >= 1
        |H|, the number of predictors in the class.
    delta : float in (0, 1), default=0.05
        The confidence parameter.

    Returns
    -------
    float
        sqrt(ln(2|H|/delta) / (2m)).

    See Also
    --------
    erm_finite_class_bound : the estimation-error bound of ERM.

    Examples
    --------
    >>> from smml.bounds import finite_class_uniform_bound
    >>> round(finite_class_uniform_bound(1000, 100, delta=0.05), 4)
    0.0644
    """
    _check_positive_int("m", m)
    _check_positive_int("n_hypotheses", n_hypotheses)
    _check_delta(delta)
    return math.sqrt(math.log(2.0 * n_hypotheses / delta) / (2.0 * m))
