"""AdaBoost (002 "Adaboost"; 003 section 16) and its default weak learner, the decision stump."""
from __future__ import annotations

from typing import Any, Iterator, Literal, TypeVar

from numpy.typing import ArrayLike, NDArray

import math
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import has_fit_parameter

from smml._core import _adaboost
from smml._progress import VERBOSE, progress
from smml._random import seeded_clone
from smml._threads import threads_for
from smml._validation import (N_JOBS, RANDOM_STATE, InstanceOf, Interval, Options, check_is_fitted,
                              check_random_state, drop_zero_weight, encode_classes, validate_sample_weight,
                              validate_X, validate_X_y)
from smml.base import ClassifierMixin, SmmlEstimator, store_params
from smml._binning import sort_columns

_Self = TypeVar("_Self")


#: an error within this distance of 1/2 counts as 1/2 (003 Algorithm 5: "stuck")
HALF_TOL = 1e-10
#: the stump kernel recomputes P_i from the margins when a weight falls below this
RESYNC_BELOW = 1e-200


# ---------------------------------------------------------------------------
# decision stumps
# ---------------------------------------------------------------------------

def _sort_features(X, n_threads=1):
    """Per-feature sort orders (d, n) int32, stable, the sorted values (d, n) float64 and the
    threshold boundaries: ``boundary[j, p]`` is 1 iff the p-th and (p+1)-th smallest values of
    feature j differ, i.e. a threshold may be put between them.  ``smml.tree.sort_columns``
    sorts (on up to n_threads threads, the same result)."""
    n, d = X.shape
    if n >= 2**31 - 1:
        raise ValueError(f"the stump kernel indexes samples with int32: {n} samples is too many")
    xs, order = sort_columns(X, n_threads, stable=True)
    boundary = np.zeros((d, n), dtype=np.uint8)
    np.less(xs[:, :-1], xs[:, 1:], out=boundary[:, :-1], casting="unsafe")
    return order, boundary, xs


#: (sample, feature) pairs worth one thread of the stump search (smml._threads.threads_for):
#: a round on fewer than 2 grains takes well under a millisecond and an OpenMP barrier
#: costs more than it saves (results do not depend on the thread count either way)
GRAIN = 1 << 19


def _thresholds(xs, feature, pos):
    """theta between the pos-th and (pos+1)-th sorted values (-inf for pos = -1).

    The midpoint, computed in float64; if rounding puts it outside [a, b) it is
    set to a, so that x > theta splits exactly as the search assumed.
    """
    thr = np.full(len(feature), -np.inf)
    for t, (f, p) in enumerate(zip(feature, pos)):
        if p >= 0:
            a, b = float(xs[f, p]), float(xs[f, p + 1])
            m = 0.5 * a + 0.5 * b
            thr[t] = m if a <= m < b else a
    return thr


def _first_within(values, tol, largest=False):
    """Index of the first value within tol of the min (or max): rounding does not break ties."""
    values = np.asarray(values)
    if largest:
        return int(np.flatnonzero(values >= values.max() - tol)[0])
    return int(np.flatnonzero(values <= values.min() + tol)[0])


def _multiclass_stump(xs, order, boundary, yk, w, n_classes):
    """Exhaustive weighted multiclass stump (numpy): each side predicts its weighted majority.

    Returns (feature, pos, left_class, right_class, error). Ties as the binary
    kernel, with "equal" meaning within 1e-10 of the total weight: the first
    candidate within that of the minimum error, in the order feature, then
    position (-1, the constant stump, first); a side's majority goes to the
    first class within that of the largest weight.
    """
    d, n = order.shape
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), yk] = w
    total = onehot.sum(axis=0)
    W = total.sum()
    tol = 1e-10 * W
    winners = []
    for j in range(d):
        k0 = _first_within(total, tol, largest=True)
        left = np.cumsum(onehot[order[j]], axis=0)[:-1]           # (n-1, K)
        ok = np.flatnonzero(boundary[j, :-1])
        errs = np.r_[W - total[k0], W - left[ok].max(axis=1) - (total - left[ok]).max(axis=1)]
        i = _first_within(errs, tol)
        if i == 0:
            winners.append((errs[0], j, -1, k0, k0))
        else:
            p = int(ok[i - 1])
            winners.append((errs[i], j, p, _first_within(left[p], tol, True),
                            _first_within(total - left[p], tol, True)))
    err, j, p, lk, rk = winners[_first_within([c[0] for c in winners], tol)]
    return j, p, lk, rk, float(err)


class DecisionStump(ClassifierMixin, SmmlEstimator):
    """A one-test tree: h(x) = right_class if x[feature_] > threshold_ else left_class.

    The weak learner that minimises the weighted training error (002
    "Adaboost": "h_t minimizes the weighed error"), found by an exhaustive
    search over every feature and every threshold between two consecutive
    distinct values, plus the constant predictor. Two classes: the compiled
    kernel ``smml._core._adaboost`` (one pass per feature over cumulative weights,
    OpenMP over features); more classes: numpy, each side predicting its
    weighted majority class.

    Tie rule: the smallest weighted error; among equal errors the smallest
    feature index, then the smallest threshold (the constant stump first),
    then (two classes) polarity +1 (the right side predicts ``classes_[1]``)
    before -1. Two classes: errors within 1e-10 of the total weight count as
    equal (the same weights summed in different orders differ by rounding;
    see ``smml._core._adaboost``), so the rule, not the rounding, decides;
    more classes: the first candidate within 1e-10 of the total weight of
    the minimum.

    Parameters
    ----------
    n_jobs : int or None
        OpenMP threads of the search (results do not depend on it).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    feature_ : int
        The tested feature.
    threshold_ : float
        The test's threshold (-inf for the constant stump).
    left_class_ : int
        Index in ``classes_`` of the label where ``x[feature_] <= threshold_``.
    right_class_ : int
        Index in ``classes_`` of the label where ``x[feature_] > threshold_``.
    weighted_error_ : float
        The stump's weighted training error, as a fraction of the total weight.

    See Also
    --------
    sklearn.tree.DecisionTreeClassifier : with ``max_depth=1``, scikit-learn's stump.
    AdaBoostClassifier : boosting of these stumps.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.ensemble import DecisionStump
    >>> X = np.array([[0.0, 5.0], [1.0, 3.0], [2.0, 4.0], [3.0, 1.0]])
    >>> stump = DecisionStump().fit(X, [0, 0, 1, 1])
    >>> stump.feature_, stump.threshold_
    (0, 1.5)
    >>> stump.predict([[0.5, 0.0], [2.5, 0.0]]).tolist()
    [0, 1]
    """

    _parameter_spec = {"n_jobs": N_JOBS}

    def __init__(self, n_jobs: int | None = None) -> None:
        self.n_jobs = n_jobs

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Find the stump of smallest weighted training error.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Training labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Example weights of the error; None: all 1 (zero weights drop the example).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        self.classes_, yk = encode_classes(y)
        w = validate_sample_weight(sample_weight, X.shape[0])
        w, X, yk = drop_zero_weight(w, X, yk)
        order, boundary, xs = _sort_features(X, self._n_threads())
        K = len(self.classes_)
        if K <= 2:
            ypm = np.where(yk == 1, 1.0, -1.0)
            f, p, pol, err = _adaboost.best_stump(order, boundary, w, ypm,
                                               threads_for(self._n_threads(), X.size, GRAIN))
            left, right = (0, 1) if pol > 0 else (1, 0)
            if K == 1:
                left = right = 0
        else:
            f, p, left, right, err = _multiclass_stump(xs, order, boundary, yk, w, K)
        self.feature_ = int(f)
        self.threshold_ = float(_thresholds(xs, [f], [p])[0])
        self.left_class_, self.right_class_ = int(left), int(right)
        self.weighted_error_ = float(err) / float(w.sum())
        return self

    def _predict_index(self, X):
        return np.where(X[:, self.feature_] > self.threshold_, self.right_class_, self.left_class_)

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """1 for the tested feature, 0 elsewhere (all zeros for the constant stump, whose two
        sides predict the same class): a stump's whole decrease of the error is its one test."""
        check_is_fitted(self)
        imp = np.zeros(self.n_features_in_)
        if self.left_class_ != self.right_class_ and np.isfinite(self.threshold_):
            imp[self.feature_] = 1.0
        return imp

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The stump's label for each row of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[right_class_]`` where ``x[feature_] > threshold_``, else
            ``classes_[left_class_]``.
        """
        check_is_fitted(self)
        X = validate_X(self, X, dtype="floating")
        return self.classes_[self._predict_index(X)]


# ---------------------------------------------------------------------------
# AdaBoost
# ---------------------------------------------------------------------------

class AdaBoostClassifier(ClassifierMixin, SmmlEstimator):
    """AdaBoost, exactly as 002 "Adaboost" (Algorithm 1) and 003 section 16 (Algorithm 5).

    Two classes (labels of any type; ``classes_[0]`` is -1, ``classes_[1]``
    is +1): P_1 uniform (or proportional to ``sample_weight``, an extension);
    in round i the weak learner is trained on the training set weighted by
    P_i; epsilon_i is its P_i-weighted training error;
    w_i = 1/2 ln((1 - epsilon_i) / epsilon_i);
    P_{i+1}(t) proportional to P_i(t) exp(-w_i y_t h_i(x_t)); the output is
    f = sgn(sum_i w_i h_i) with 000's sgn: sgn(z) = 1 if z > 0 and -1 otherwise (a zero
    margin goes to ``classes_[0]``, as in smml's linear classifiers).

    Special cases of 003's Algorithm 5 (step 3):

    - epsilon_i = 0: h_i alone is perfect on the training set; boosting stops
      and h_i decides alone: its weight is set to 1 + sum_{k<i} |w_k|, so
      sign(sum w h) = h_i at every x (``stop_reason_ = "perfect"``).
    - epsilon_i = 1/2 (within ``HALF_TOL`` = 1e-10): boosting is stuck and stops;
      h_i is not added (``stop_reason_ = "stuck"``). For the default stumps
      epsilon_i <= 1/2 always (the search tries both polarities, and the
      constant stump).
    - epsilon_i = 1 (only for other weak learners): -h_i is perfect; it
      decides alone with weight -(1 + sum_{k<i} |w_k|) and boosting stops.
    - 1/2 < epsilon_i < 1 (other weak learners): as 003 notes, w_i < 0, so
      h_i is used with its predictions flipped; boosting goes on.

    If the first round stops as stuck the ensemble is empty: F = 0 and every
    prediction is ``classes_[0]`` by the sgn(0) = -1 rule.

    The default weak learner (``estimator=None``) is :class:`DecisionStump`
    run inside the compiled loop ``smml._core._adaboost.boost_stumps`` (sort
    orders once, one pass per feature and round, reweighting in the same
    compiled round; the weights are recomputed in rescaled form from the
    margins, P_1 exp(-y F) / sum, whenever one falls below 1e-200, so they
    never underflow). Any classifier whose ``fit`` takes
    ``sample_weight`` can be the weak learner; it is trained on labels -1/+1
    with ``sample_weight = P_i`` (sums to 1) and must predict -1/+1.

    More than two classes: SAMME (Zhu et al. 2009), an extension beyond the
    notes: w_i = ln((1 - eps_i)/eps_i) + ln(K - 1), P_{i+1}(t) proportional to
    P_i(t) exp(w_i 1{h_i(x_t) != y_t}), stop when eps_i >= 1 - 1/K, prediction
    argmax_k sum_i w_i 1{h_i(x) = k} (ties: smallest class). For K = 2 this
    would be the notes' rule with doubled weights; the notes' rule is used.

    Parameters
    ----------
    estimator : classifier or None
        Weak learner (cloned each round); None = the compiled decision stump.
    n_estimators : int
        T, the maximum number of rounds.
    n_jobs : int or None
        OpenMP threads of the stump kernel.
    random_state : int, RandomState, Generator or None
        Seeds the weak learners that have a ``random_state`` (drawn up front).
    verbose : bool, int or "auto", default=0
        A progress bar of the rounds on stderr: 0 silent, 1 always, "auto" when
        stderr is a terminal (``smml._progress``). With the default stumps all
        rounds run in one compiled call, so the bar fills when it returns; with
        another weak learner it moves round by round.

    Attributes
    ----------
    estimators_ : list of classifiers
        The fitted weak learners h_1..h_T.
    estimator_weights_ : ndarray of shape (T,)
        The w_i.
    estimator_errors_ : ndarray of shape (T,)
        The epsilon_i.
    edges_ : ndarray of shape (T,)
        gamma_i = 1/2 - epsilon_i.
    train_errors_ : ndarray of shape (T,)
        Training error (P_1-weighted; the plain training error when P_1 is uniform) of
        sign(F_i) after each round i.
    training_error_bound_ : ndarray of shape (T,) or None
        prod_{k<=i} sqrt(1 - 4 gamma_k^2) (002, "Training error of AdaBoost"); None for
        SAMME.
    training_error_exp_bound_ : ndarray of shape (T,) or None
        exp(-2 sum_{k<=i} gamma_k^2); None for SAMME.
    stop_reason_ : {"n_estimators", "perfect", "stuck"}
        Why boosting stopped.

    See Also
    --------
    sklearn.ensemble.AdaBoostClassifier : scikit-learn's AdaBoost (SAMME, w_i without
        the notes' 1/2).
    DecisionStump : the default weak learner.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.ensemble import AdaBoostClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> y = np.array([0, 0, 1, 1, 0, 0])
    >>> ada = AdaBoostClassifier(n_estimators=5).fit(X, y)
    >>> ada.predict(X).tolist()
    [0, 0, 1, 1, 0, 0]
    >>> len(ada.estimator_weights_), ada.stop_reason_
    (5, 'n_estimators')
    """

    _parameter_spec = {"estimator": (Options(None), InstanceOf(BaseEstimator)),
                       "n_estimators": Interval(int, 1, None),
                       "n_jobs": N_JOBS, "random_state": RANDOM_STATE, "verbose": VERBOSE}

    def __init__(self, estimator: Any = None, n_estimators: int = 50, n_jobs: int | None = None,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 verbose: bool | int | Literal["auto"] = 0) -> None:
        store_params(self, locals())

    # -- fitting -----------------------------------------------------------
    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Run the boosting rounds on the training set.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Training labels.
        sample_weight : array-like of shape (n_samples,), default=None
            P_1 proportional to it (an extension); None: P_1 uniform.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._validate_params()
        if self.estimator is not None and not has_fit_parameter(self.estimator, "sample_weight"):
            raise ValueError(f"{type(self).__name__}: the weak learner {type(self.estimator).__name__} "
                             "does not accept sample_weight in fit, so it cannot be trained on P_i")
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        self.classes_, yk = encode_classes(y)
        K = len(self.classes_)
        if K < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes in the data, "
                             f"got only one class: {self.classes_[0]!r}")
        sw = validate_sample_weight(sample_weight, X.shape[0])
        sw, X, yk = drop_zero_weight(sw, X, yk)
        p1 = sw / sw.sum()
        self._stumps = self.estimator is None
        if K == 2 and self._stumps:
            self._fit_stumps(X, yk, p1)
        elif K == 2:
            self._fit_binary_generic(X, yk, p1)
        else:
            self._fit_samme(X, yk, p1)
        self._finish_diagnostics(K)
        return self

    def _fit_stumps(self, X, yk, p1):
        n, T = X.shape[0], self.n_estimators
        order, boundary, xs = _sort_features(X, self._n_threads())
        y = np.where(yk == 1, 1.0, -1.0)
        with np.errstate(divide="ignore"):
            log_p1 = np.log(p1)
        margin = np.zeros(n)
        w = np.empty(n)
        h = np.empty(n, dtype=np.int8)
        feat, pos, pol = (np.zeros(T, dtype=np.intp) for _ in range(3))
        err, wt, tr = (np.zeros(T) for _ in range(3))
        bar = self._rounds_bar(range(T))
        rounds, status = _adaboost.boost_stumps(order, boundary, y, p1, log_p1, margin, w, h,
                                             feat, pos, pol, err, wt, tr, HALF_TOL,
                                             threads_for(self._n_threads(), n * X.shape[1], GRAIN), RESYNC_BELOW)
        if bar is not None:
            bar.update(rounds)
            bar.close()
        feat, pos, pol = feat[:rounds], pos[:rounds], pol[:rounds]
        self.stump_feature_ = feat
        self.stump_threshold_ = _thresholds(xs, feat, pos)
        self.stump_polarity_ = pol
        self.estimator_weights_ = wt[:rounds].copy()
        self.estimator_errors_ = err[:rounds].copy()
        self.train_errors_ = tr[:rounds].copy()
        self.stop_reason_ = ("n_estimators", "perfect", "stuck")[status]
        self._final_distribution = w
        self.estimators_ = []
        for f, t, s in zip(feat, self.stump_threshold_, pol):
            st = DecisionStump(n_jobs=self.n_jobs)
            st.classes_ = np.array([-1, 1])
            st.n_features_in_ = self.n_features_in_
            st.feature_, st.threshold_ = int(f), float(t)
            st.left_class_, st.right_class_ = (0, 1) if s > 0 else (1, 0)
            self.estimators_.append(st)

    def _seeds(self, T):
        rng = check_random_state(self.random_state)
        return rng.randint(0, 2**31 - 1, size=T)

    def _rounds_bar(self, iterable):
        """A tqdm bar over the rounds when ``verbose`` asks for one, else None."""
        bar = progress(iterable, total=self.n_estimators, desc=f"{type(self).__name__} rounds",
                       verbose=self.verbose, unit="round")
        return None if bar is iterable else bar

    def _rounds(self):
        """The seeds of the rounds, iterated under a progress bar when ``verbose`` asks (closed
        when boosting stops early)."""
        seeds = self._seeds(self.n_estimators)
        bar = self._rounds_bar(None)
        if bar is None:
            yield from seeds
            return
        started = 0
        try:
            for seed in seeds:
                started += 1
                yield seed
                bar.update(1)                  # the loop asked for the next seed: the round is done
        finally:                               # boosting stopped (or failed) in round `started`
            bar.update(started - bar.n)
            bar.close()

    def _new_learner(self, seed):
        return seeded_clone(self.estimator, seed)

    def _fit_binary_generic(self, X, yk, p1):
        y = np.where(yk == 1, 1, -1)
        with np.errstate(divide="ignore"):
            log_p1 = np.log(p1)
        F = np.zeros(X.shape[0])
        P = p1.copy()
        ests, wts, errs, trs = [], [], [], []
        status = 0
        for seed in self._rounds():
            est = self._new_learner(seed).fit(X, y, sample_weight=P)        # 1) h_i on S weighted by P_i
            h = np.asarray(est.predict(X))
            if not np.all((h == 1) | (h == -1)):
                raise ValueError(f"the weak learner must predict -1 / +1, got {np.unique(h)[:5]}")
            eps = float(P[h != y].sum())                                       # 2) epsilon_i
            abs_sum = float(np.abs(wts).sum())
            if eps <= 0.0:                                                     # 3) special cases
                alpha, status = 1.0 + abs_sum, 1
            elif eps >= 1.0:
                alpha, status = -(1.0 + abs_sum), 1
            elif abs(eps - 0.5) <= HALF_TOL:
                status = 2
                break
            else:
                alpha = 0.5 * math.log((1.0 - eps) / eps)                     # 4) w_i
            F += alpha * h
            # 5) P_{i+1} proportional to P_i exp(-w_i y h_i), in the rescaled form P_1 exp(-y F)
            v = log_p1 - y * F
            P = np.exp(v - v.max())
            P /= P.sum()
            ests.append(est)
            wts.append(alpha)
            errs.append(eps)
            trs.append(float(p1[np.where(F > 0, 1, -1) != y].sum()))     # sgn(0) = -1
            if status == 1:
                break
        self.estimators_ = ests
        self.estimator_weights_ = np.array(wts, dtype=float)
        self.estimator_errors_ = np.array(errs, dtype=float)
        self.train_errors_ = np.array(trs, dtype=float)
        self.stop_reason_ = ("n_estimators", "perfect", "stuck")[status]
        self._final_distribution = P

    def _fit_samme(self, X, yk, p1):
        K = len(self.classes_)
        with np.errstate(divide="ignore"):
            log_p1 = np.log(p1)
        L = np.zeros(X.shape[0])                     # sum_i w_i 1{h_i(x_t) != y_t}
        S = np.zeros((X.shape[0], K))                # class scores
        P = p1.copy()
        ests, wts, errs, trs = [], [], [], []
        status = 0
        learner = self.estimator if self.estimator is not None else DecisionStump(n_jobs=self.n_jobs)
        rng = np.arange(X.shape[0])
        for seed in self._rounds():
            est = seeded_clone(learner, seed)
            est.fit(X, yk, sample_weight=P)
            h = np.asarray(est.predict(X)).astype(np.intp)
            wrong = h != yk
            eps = float(P[wrong].sum())
            abs_sum = float(np.abs(wts).sum())
            if eps <= 0.0:
                alpha, status = 1.0 + abs_sum, 1
            elif eps >= 1.0 - 1.0 / K - HALF_TOL:
                status = 2
                break
            else:
                alpha = math.log((1.0 - eps) / eps) + math.log(K - 1.0)
            L += alpha * wrong
            S[rng, h] += alpha
            v = log_p1 + L
            P = np.exp(v - v.max())
            P /= P.sum()
            ests.append(est)
            wts.append(alpha)
            errs.append(eps)
            trs.append(float(p1[np.argmax(S, axis=1) != yk].sum()))
            if status == 1:
                break
        self.estimators_ = ests
        self.estimator_weights_ = np.array(wts, dtype=float)
        self.estimator_errors_ = np.array(errs, dtype=float)
        self.train_errors_ = np.array(trs, dtype=float)
        self.stop_reason_ = ("n_estimators", "perfect", "stuck")[status]
        self._final_distribution = P

    def _finish_diagnostics(self, K):
        self.edges_ = 0.5 - self.estimator_errors_
        if K == 2:
            g2 = np.minimum(self.edges_ ** 2, 0.25)
            self.training_error_bound_ = np.cumprod(np.sqrt(1.0 - 4.0 * g2))
            self.training_error_exp_bound_ = np.exp(-2.0 * np.cumsum(g2))
        else:
            self.training_error_bound_ = None
            self.training_error_exp_bound_ = None

    # -- prediction --------------------------------------------------------
    def _contributions(self, X):
        """Yield (w_i, h_i(X)) round by round (h in {-1,+1} or class indices for SAMME)."""
        for est, wt in zip(self.estimators_, self.estimator_weights_):
            if self._stumps and len(self.classes_) == 2:
                yield wt, np.where(X[:, est.feature_] > est.threshold_, 1, -1) * (1 if est.right_class_ == 1 else -1)
            elif len(self.classes_) == 2:
                yield wt, np.asarray(est.predict(X))
            else:
                yield wt, np.asarray(est.predict(X)).astype(np.intp)

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """F(x) = sum_i w_i h_i(x) (two classes; > 0 favours ``classes_[1]``), or the SAMME scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            F(x) for two classes; the SAMME class scores S_k(x) for more.
        """
        check_is_fitted(self)
        X = validate_X(self, X, dtype="floating")
        if self._stumps and len(self.classes_) == 2:
            out = np.empty(X.shape[0])
            _adaboost.stump_decision(X, np.ascontiguousarray(self.stump_feature_, dtype=np.intp),
                                  self.stump_threshold_,
                                  self.estimator_weights_ * self.stump_polarity_, out,
                                  threads_for(self._n_threads, X.shape[0] * len(self.stump_feature_) * 16,
                                              GRAIN))
            return out
        scores = None
        for scores in self._staged_scores(X):
            pass
        return scores if scores is not None else self._empty_scores(X.shape[0])

    def _empty_scores(self, n):
        return np.zeros(n) if len(self.classes_) == 2 else np.zeros((n, len(self.classes_)))

    def _staged_scores(self, X):
        K = len(self.classes_)
        S = self._empty_scores(X.shape[0])
        rows = np.arange(X.shape[0])
        for wt, h in self._contributions(X):
            if K == 2:
                S = S + wt * h
            else:
                S = S.copy()
                S[rows, h] += wt
            yield S

    def _to_labels(self, S):
        if len(self.classes_) == 2:
            return self.classes_[(S > 0).astype(np.intp)]       # sgn(0) = -1 (000): classes_[0]
        return self.classes_[np.argmax(S, axis=1)]

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """f(x) = sgn(sum_i w_i h_i(x)), sgn(0) = -1 (``classes_[0]``, 000); SAMME: argmax of the scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted labels.
        """
        return self._to_labels(self.decision_function(X))

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities in scikit-learn's SAMME convention (``AdaBoostClassifier``):
        with A = sum_i w_i, two classes P(classes_[1] | x) = sigmoid(2 F(x) / A), F the
        ``decision_function``; K classes the softmax of (K S_k(x) - A) / ((K - 1)^2 A), S_k the
        weight of the rounds voting for class k. The notes define AdaBoost's classifier
        sgn(F) only (002 'Adaboost'): these are scores squashed into [0, 1], not calibrated
        probabilities; ``predict`` is their argmax (up to exact ties, where ``predict``
        follows sgn(0) = -1). Scaling every w_i (the notes' 1/2 ln((1 - e)/e) against
        scikit-learn's ln((1 - e)/e)) leaves them unchanged.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Scores in [0, 1] summing to 1, columns as ``classes_``.
        """
        S = self.decision_function(X)
        K = len(self.classes_)
        n = S.shape[0]
        A = float(np.sum(self.estimator_weights_))
        if K == 1:
            return np.ones((n, 1))
        if not A > 0.0:
            return np.full((n, K), 1.0 / K)
        if K == 2:
            z = np.column_stack([-S, S]) / A            # softmax of (-F, F) / A = sigmoid(2 F / A)
        else:
            z = (K * S - A) / ((K - 1.0) ** 2 * A)
        z = z - z.max(axis=1, keepdims=True)
        P = np.exp(z)
        P /= P.sum(axis=1, keepdims=True)
        return P

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """The log of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log of the class scores, columns as ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @property
    def feature_importances_(self) -> NDArray[np.float64]:
        """The rounds' weak learners' ``feature_importances_`` averaged with the weights w_i
        (scikit-learn's AdaBoost convention); for stumps, each feature's share of the total
        weight of the rounds that test it."""
        check_is_fitted(self)
        A = float(np.sum(self.estimator_weights_))
        imp = np.zeros(self.n_features_in_)
        if not self.estimators_ or not A > 0.0:
            return imp
        for est, w in zip(self.estimators_, self.estimator_weights_):
            try:
                fi = est.feature_importances_
            except AttributeError:
                raise AttributeError(f"feature_importances_: the weak learner {type(est).__name__} "
                                     "has no feature_importances_") from None
            imp += w * np.asarray(fi, dtype=np.float64)
        return imp / A

    def staged_decision_function(self, X: ArrayLike) -> Iterator[NDArray[np.float64]]:
        """The :meth:`decision_function` of the combined classifier after each round 1..T.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Yields
        ------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The scores after rounds 1..i.
        """
        check_is_fitted(self)
        X = validate_X(self, X, dtype="floating")
        yield from self._staged_scores(X)

    def staged_predict(self, X: ArrayLike) -> Iterator[NDArray[Any]]:
        """Predictions of the combined classifier after each round 1..T.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
            The predicted labels after rounds 1..i.
        """
        for S in self.staged_decision_function(X):
            yield self._to_labels(S)

    def staged_score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
                    ) -> Iterator[float]:
        """Accuracy of the combined classifier after each round 1..T.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.
        y : array-like of shape (n_samples,)
            Their true labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the accuracy; None: all 1.

        Yields
        ------
        accuracy : float
            The (weighted) accuracy after rounds 1..i.
        """
        y = np.asarray(y).reshape(-1)
        check_is_fitted(self)
        n = validate_X(self, X, dtype="floating").shape[0]
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
        sw = None if sample_weight is None else validate_sample_weight(sample_weight, len(y))
        for pred in self.staged_predict(X):
            yield float(np.average(pred == y, weights=sw))
