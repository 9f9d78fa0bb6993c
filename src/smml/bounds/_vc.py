"""VC dimension and VC bounds (001 Appendix 2 "Wilcoxon Test"; 002 "VC dimension of halfspaces")."""
from __future__ import annotations

import math
import numbers

from smml._validation import check_delta as _check_delta, check_positive_int as _check_positive_int

from smml.bounds._checks import _check_pos


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
