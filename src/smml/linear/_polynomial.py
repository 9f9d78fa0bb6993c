"""Polynomial regression (002 "Polynomial regression"): least squares on a polynomial feature map."""
from __future__ import annotations

import math
from itertools import combinations_with_replacement

import numpy as np
from numpy.typing import ArrayLike

from smml._validation import N_JOBS, Interval, check_is_fitted, validate_X, validate_X_y

from smml.linear._base import _BOOL, _LinearRegressorBase
from smml.linear._least_squares import LinearRegression, RidgeRegression
from smml.base import store_params

#: refuse feature maps with more monomials than this (C(d + p, p) - 1 grows fast)
MAX_TERMS = 100_000
#: up to this many rows phi(X) is built with one numpy call per degree, above it one per monomial
FEW_ROWS = 512


def _monomials(d, degree):
    """Exponent tuples of the monomials of degree 1..degree in d variables, degree by degree
    (then in lexicographic order of the variables), as an (n_terms, d) int array."""
    n_terms = math.comb(d + degree, degree) - 1
    if n_terms > MAX_TERMS:
        raise ValueError(f"PolynomialRegression: degree={degree} on {d} features makes {n_terms:,} monomials "
                         f"(> {MAX_TERMS:,}); lower the degree or reduce the features first")
    rows = []
    for k in range(1, degree + 1):
        for comb in combinations_with_replacement(range(d), k):
            e = np.zeros(d, dtype=np.intp)
            for j in comb:
                e[j] += 1
            rows.append(e)
    return np.array(rows, dtype=np.intp).reshape(-1, d)


def _plan(powers):
    """How phi(x) is built, one step per degree k >= 2: (start, stop, prefix, last).

    The monomials of degree k are columns start..stop-1 of phi(x); column start + i is column
    prefix[i] (a monomial of degree k - 1) times variable last[i], where a monomial's variables
    are taken in increasing order and last is the largest one (x_0 x_1 x_1 = (x_0 x_1) * x_1).
    """
    d = powers.shape[1]
    where = {(j,): j for j in range(d)}            # degree 1: column j is x_j
    plan, c = [], d
    for k in range(2, int(powers.sum(axis=1).max(initial=1)) + 1):
        start = c
        pre, last = [], []
        while c < len(powers) and powers[c].sum() == k:
            comb = tuple(np.repeat(np.arange(d), powers[c]).tolist())
            pre.append(where[comb[:-1]])
            last.append(comb[-1])
            where[comb] = c
            c += 1
        plan.append((start, c, np.array(pre, dtype=np.intp), np.array(last, dtype=np.intp)))
    return plan


def _expand(X, plan, n_terms):
    """phi(x) without the constant: one column per monomial, (n, n_terms) C-contiguous.

    Built on the transposed layout (each monomial a contiguous row): the monomials of degree
    k >= 2 are their degree-(k-1) prefix times one more variable, so a monomial is the product
    of its variables in increasing order whichever branch runs. Few rows (predict on a handful
    of rows): one vectorised product per degree; many rows: one product per monomial, which
    avoids the gathered copy of the prefix rows.
    """
    XT = np.ascontiguousarray(X.T)
    rows = np.empty((n_terms, X.shape[0]))
    rows[:X.shape[1]] = XT
    few = X.shape[0] <= FEW_ROWS
    for start, stop, pre, last in plan:
        if few:
            np.multiply(rows[pre], XT[last], out=rows[start:stop])
        else:
            for c, (p, j) in enumerate(zip(pre.tolist(), last.tolist()), start):
                np.multiply(rows[p], XT[j], out=rows[c])
    return np.ascontiguousarray(rows.T)


class PolynomialRegression(_LinearRegressorBase):
    """Polynomial regression: linear regression on the feature map phi (002 "Polynomial regression").

    002: for inputs x in R, phi(x) = (1, x, x^2, ..., x^p) and
    <w, phi(x)> = w_0 + w_1 x + ... + w_p x^p, the best coefficients found by
    linear regression (the ERM of the square loss, 000 "Linear regression").
    For d > 1 inputs phi(x) holds every monomial x_1^{a_1} ... x_d^{a_d} of total
    degree 1..p (the usual extension; ``powers_`` lists the exponents, degree
    by degree), and the constant 1 is the intercept (``fit_intercept``).

    ``alpha = 0`` (default): least squares by :class:`LinearRegression` on
    phi(X) (normal equations, the pseudo-inverse when phi(X)^T phi(X) is
    singular: degree >= number of distinct points interpolates, 002's
    "n+1 => interpolation"). ``alpha > 0``: :class:`RidgeRegression` on phi(X)
    (the intercept unpenalised). The coefficients are the closed form of 000
    / 002 on the design matrix phi(X); for d = 1 they equal
    ``numpy.polyfit(x, y, degree)`` (reversed).

    High powers of large inputs are ill-conditioned: scale x to about [-1, 1]
    first (e.g. in a pipeline).

    Parameters
    ----------
    degree : int, default=2
        The largest total degree p of the monomials.
    alpha : float, default=0.0
        The ridge penalty (0: least squares).
    fit_intercept : bool, default=True
        Add the constant feature 1 (the weight w_0).
    n_jobs : None or int, default=None
        Threads of ``predict``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_terms,)
        The weights of the monomials, in ``powers_`` order.
    intercept_ : float
        The intercept w_0.
    powers_ : ndarray of shape (n_terms, n_features)
        The exponents of the monomials, degree by degree.
    solver_ : str
        The solver used by the underlying linear or ridge regression.

    See Also
    --------
    sklearn.preprocessing.PolynomialFeatures : scikit-learn's polynomial feature map (with a linear model in a pipeline).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.linear import PolynomialRegression
    >>> X = np.array([[-1.], [0.], [1.], [2.]])
    >>> y = np.array([2., 1., 2., 5.])
    >>> reg = PolynomialRegression(degree=2).fit(X, y)
    >>> reg.powers_.tolist()
    [[1], [2]]
    >>> print(f"{reg.predict([[3.]])[0]:.3f}")
    10.000
    """

    _parameter_spec = {"degree": Interval(int, 1, None), "alpha": Interval(float, 0, None),
                       "fit_intercept": _BOOL, "n_jobs": N_JOBS}

    def __init__(self, degree: int = 2, alpha: float = 0.0, fit_intercept: bool = True,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def fit(self, X: ArrayLike, y: ArrayLike) -> PolynomialRegression:
        """Least squares (or ridge) on the feature map phi(X).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The targets.

        Returns
        -------
        self : object
            The fitted PolynomialRegression.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", y_numeric=True)
        self.powers_ = _monomials(X.shape[1], self.degree)
        self._phi_plan = _plan(self.powers_)
        with np.errstate(over="ignore", invalid="ignore"):
            Phi = _expand(X, self._phi_plan, len(self.powers_))
        if not np.all(np.isfinite(Phi)):
            raise ValueError(f"PolynomialRegression: x^{self.degree} overflows float64; scale the features")
        solver = (LinearRegression(fit_intercept=self.fit_intercept, n_jobs=self.n_jobs) if self.alpha == 0 else
                  RidgeRegression(alpha=self.alpha, fit_intercept=self.fit_intercept, n_jobs=self.n_jobs))
        try:
            solver.fit(Phi, y)
        except ValueError as exc:      # the solver's message names the solver: name the estimator used
            raise ValueError(f"PolynomialRegression: {str(exc).split(': ', 1)[-1]}") from None
        self.coef_, self.intercept_, self.solver_ = solver.coef_, solver.intercept_, solver.solver_
        return self

    def feature_map(self, X: ArrayLike) -> np.ndarray:
        """Return phi(X) without the constant feature: one column per monomial of ``powers_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        Phi : ndarray of shape (n_samples, n_terms)
            The monomials of each row.
        """
        check_is_fitted(self)
        X = validate_X(self, X, reset=False, dtype="float64")
        with np.errstate(over="ignore", invalid="ignore"):
            return _expand(X, self._phi_plan, len(self.powers_))

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict <w, phi(x)> = intercept_ + sum_k coef_[k] x^powers_[k] for each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted values.
        """
        Phi = self.feature_map(X)
        if not np.all(np.isfinite(Phi)):
            raise ValueError(f"PolynomialRegression: x^{self.degree} overflows float64 on these inputs")
        return self._linear_predict(Phi)
