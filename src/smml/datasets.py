"""Synthetic learning problems whose Bayes predictor and Bayes risk are known exactly.

000, "Bayes optimal predictor" and "Overfitting and underfitting": the risk of a
predictor h_S = A(S) splits into estimation error, approximation error and Bayes
error, l_D(h_S) = (l_D(h_S) - l_D(h*)) + (l_D(h*) - l_D(f*)) + l_D(f*). On real data
f* and l_D(f*) are unknown; on the distributions built here they are known, so the
three terms can be measured (:func:`smml.model_selection.risk_decomposition`).

- :func:`make_bayes_classification`: data points uniform on [-1, 1]^d (the domain of
  000's 1-NN analysis), a deterministic rule f* (an axis-parallel split, a
  diagonal line, a ball or a XOR) and labels flipped with probability ``noise``;
  returns the data and a :class:`KnownDistribution`, which draws more samples and
  gives eta, f*, the Bayes risk and the risk of any predictor.
"""
from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from smml._typing import ArrayLike, Estimator, NDArray, RandomStateLike
from smml._validation import check_random_state

__all__ = ["make_bayes_classification", "KnownDistribution"]

_BOUNDARIES = ("axis", "diagonal", "ball", "xor")
#: radius of the ``"ball"`` rule: f*(x) = +1 inside the ball ||x|| <= 0.75 (inside the cube)
_BALL_RADIUS = 0.75


@dataclass(frozen=True)
class KnownDistribution:
    """A distribution D on [-1, 1]^d x {-1, +1} with known eta, Bayes predictor and Bayes risk.

    X is uniform on [-1, 1]^d; given X = x, Y = f*(x) with probability 1 - ``noise``
    and Y = -f*(x) otherwise, where f* is the rule named by ``boundary``:

    - ``"axis"``: f*(x) = +1 if x_1 >= 0 (one axis-parallel split: a tree stump);
    - ``"diagonal"``: f*(x) = +1 if x_1 + ... + x_d >= 0 (a hyperplane through the
      origin, oblique to every axis);
    - ``"ball"``: f*(x) = +1 if ||x|| <= 0.75;
    - ``"xor"``: f*(x) = +1 if x_1 x_2 >= 0 (d >= 2).

    So eta(x) = P(Y = +1 | X = x) is 1 - noise where f*(x) = +1 and noise where
    f*(x) = -1; for noise < 1/2 the Bayes optimal predictor of the zero-one loss
    (000, "Bayes optimal predictor": +1 iff eta(x) >= 1/2) is f* itself and the Bayes
    risk is E[min(eta(X), 1 - eta(X))] = noise, exactly.

    Parameters
    ----------
    n_features : int >= 1
        d.
    boundary : {"axis", "diagonal", "ball", "xor"}
        The rule f*.
    noise : float in [0, 1/2)
        The probability that a label is flipped.

    Attributes
    ----------
    bayes_risk : float
        l_D(f*) = ``noise`` (zero-one loss), exact.

    See Also
    --------
    make_bayes_classification : a sample of such a distribution, with the distribution.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.datasets import KnownDistribution
    >>> D = KnownDistribution(n_features=2, boundary="axis", noise=0.1)
    >>> X = np.array([[0.5, -0.2], [-0.3, 0.9]])
    >>> D.bayes_predictor(X).tolist(), D.eta(X).tolist()
    ([1, -1], [0.9, 0.1])
    >>> D.bayes_risk
    0.1
    >>> round(D.risk(lambda X: np.ones(len(X), dtype=int), random_state=0), 1)   # always +1
    0.5
    """
    n_features: int
    boundary: Literal["axis", "diagonal", "ball", "xor"]
    noise: float

    def __post_init__(self) -> None:
        d = self.n_features
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
            raise ValueError(f"n_features must be a positive integer, got {d!r}")
        if self.boundary not in _BOUNDARIES:
            raise ValueError(f"boundary must be one of {_BOUNDARIES}, got {self.boundary!r}")
        if self.boundary == "xor" and d < 2:
            raise ValueError("boundary='xor' needs n_features >= 2")
        nu = self.noise
        if isinstance(nu, bool) or not isinstance(nu, numbers.Real) or not 0 <= nu < 0.5:
            raise ValueError(f"noise must be a number in [0, 1/2), got {nu!r}")

    @property
    def bayes_risk(self) -> float:
        """l_D(f*) = noise: the Bayes risk of the zero-one loss, exact."""
        return float(self.noise)

    def _points(self, X: ArrayLike) -> NDArray[np.float64]:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (n, {self.n_features}), got {X.shape}")
        return X

    def bayes_predictor(self, X: ArrayLike) -> NDArray[np.int_]:
        """f*(x) in {-1, +1} for each row x of X: the Bayes optimal predictor (zero-one loss).

        Parameters
        ----------
        X : array-like of shape (n, d)
            The points.

        Returns
        -------
        ndarray of shape (n,)
            f*(x) for each point, in {-1, +1} (int).
        """
        X = self._points(X)
        if self.boundary == "axis":
            inside = X[:, 0] >= 0
        elif self.boundary == "diagonal":
            inside = X.sum(axis=1) >= 0
        elif self.boundary == "ball":
            inside = np.einsum("ij,ij->i", X, X) <= _BALL_RADIUS ** 2
        else:
            inside = X[:, 0] * X[:, 1] >= 0
        return np.where(inside, 1, -1)

    def eta(self, X: ArrayLike) -> NDArray[np.float64]:
        """eta(x) = P(Y = +1 | X = x) for each row x of X.

        Parameters
        ----------
        X : array-like of shape (n, d)
            The points.

        Returns
        -------
        ndarray of shape (n,)
            eta(x) for each point: 1 - noise where f*(x) = +1, noise where f*(x) = -1.
        """
        f = self.bayes_predictor(X)
        return np.where(f == 1, 1.0 - self.noise, float(self.noise))

    def sample(self, n_samples: int,
               random_state: RandomStateLike = None) -> tuple[NDArray[np.float64], NDArray[np.int_]]:
        """Draw ``n_samples`` examples (X, y) i.i.d. from D: X (n, d) floats, y in {-1, +1} (int).

        Parameters
        ----------
        n_samples : int >= 1
            The number of examples n.
        random_state : int, RandomState instance or None, default=None
            Seeds the draw.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            The data points, uniform on [-1, 1]^d.
        y : ndarray of shape (n_samples,)
            Their labels, in {-1, +1}.
        """
        if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
        rs = check_random_state(random_state)
        X = rs.uniform(-1.0, 1.0, size=(int(n_samples), self.n_features))
        flip = rs.uniform(size=int(n_samples)) < self.noise
        y = np.where(flip, -1, 1) * self.bayes_predictor(X)
        return X, y

    def risk(self, predictor: Estimator | Callable[[NDArray[np.float64]], ArrayLike], X: ArrayLike | None = None,
             n_samples: int = 100_000, random_state: RandomStateLike = None) -> float:
        """The zero-one risk l_D(h) of a predictor, exact in Y and Monte-Carlo in X.

        l_D(h) = E[P(Y != h(X) | X)] = noise + (1 - 2 noise) P(h(X) != f*(X)). The
        conditional probability given X is computed exactly from eta; the
        expectation over X is the mean over the points ``X`` (assumed drawn from
        D_X, uniform on [-1, 1]^d) or over ``n_samples`` fresh points. That mean is an
        unbiased estimate of l_D(h), within (1 - 2 noise) sqrt(ln(2/delta) / (2n))
        of it with probability >= 1 - delta (000, "Bounding the risk", on the
        [0, 1]-valued I{h(X) != f*(X)}).

        Parameters
        ----------
        predictor : fitted estimator or callable
            Its ``predict`` (or the callable itself) maps X to labels in {-1, +1}.
        X : None or array-like of shape (n, d)
            The points to average over; None draws ``n_samples`` of them.
        n_samples : int, default=100000
            Used when X is None.
        random_state : int, RandomState instance or None
            Seeds the points when X is None.

        Returns
        -------
        float
            The estimate of l_D(h).
        """
        if X is None:
            X, _ = self.sample(n_samples, random_state)
        X = self._points(X)
        predict = cast(Callable[..., Any], getattr(predictor, "predict", predictor))
        pred = np.asarray(predict(X)).reshape(-1)
        if pred.shape[0] != X.shape[0]:
            raise ValueError(f"the predictor returned {pred.shape[0]} labels for {X.shape[0]} points")
        disagree = float(np.mean(pred != self.bayes_predictor(X)))
        return float(self.noise + (1.0 - 2.0 * self.noise) * disagree)


def make_bayes_classification(n_samples: int = 200, n_features: int = 2,
                              boundary: Literal["axis", "diagonal", "ball", "xor"] = "diagonal",
                              noise: float = 0.1, random_state: RandomStateLike = None
                              ) -> tuple[NDArray[np.float64], NDArray[np.int_], KnownDistribution]:
    """A binary classification sample from a distribution whose Bayes predictor and risk are known.

    The distribution is a :class:`KnownDistribution`: X uniform on [-1, 1]^d (the
    domain of 000's 1-NN analysis, "Risk Analysys for Nearest-Neighbor"), labels
    Y = f*(X) flipped with probability ``noise``. Its Bayes optimal predictor for the
    zero-one loss (000, "Bayes optimal predictor") is the rule f* and its Bayes risk
    l_D(f*) is exactly ``noise``. The distribution is returned with the data so that
    more samples can be drawn and risks computed, e.g. by
    :func:`smml.model_selection.risk_decomposition` (000, "Overfitting and
    underfitting": estimation, approximation and Bayes error).

    Parameters
    ----------
    n_samples : int, default=200
        The number of examples.
    n_features : int, default=2
        d.
    boundary : {"axis", "diagonal", "ball", "xor"}, default="diagonal"
        The rule f* (see :class:`KnownDistribution`). "axis" is a tree stump,
        "diagonal" is linear but oblique (hard for axis-parallel trees), "ball" and
        "xor" are not linear.
    noise : float in [0, 1/2), default=0.1
        The probability that a label is flipped: the Bayes risk.
    random_state : int, RandomState instance or None
        Seeds the sample.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The data points.
    y : ndarray of shape (n_samples,)
        Their labels, in {-1, +1}.
    distribution : KnownDistribution
        D, with ``bayes_predictor(X)``, ``bayes_risk``, ``eta(X)``, ``sample(n)`` and
        ``risk(h)``.

    Examples
    --------
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, D = make_bayes_classification(500, boundary="ball", noise=0.2, random_state=0)
    >>> X.shape, D.bayes_risk
    ((500, 2), 0.2)
    >>> f_star = D.bayes_predictor(X)              # f*(x) for every point
    >>> bool(abs((f_star != y).mean() - 0.2) < 0.05)   # its training error: about the Bayes risk
    True
    >>> D.risk(D.bayes_predictor)                  # l_D(f*): exactly the noise
    0.2
    """
    D = KnownDistribution(n_features=n_features, boundary=boundary, noise=noise)
    X, y = D.sample(n_samples, random_state)
    return X, y, D
