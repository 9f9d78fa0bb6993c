"""Bagging (002 "Random forests" / "Bagging"; 003 section 16)."""
from __future__ import annotations

from typing import Any, Literal, TypeVar

from numpy.typing import ArrayLike, NDArray

import copy
import numbers
import operator
import weakref
from concurrent.futures import ThreadPoolExecutor

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import has_fit_parameter

from smml._class_weight import CLASS_WEIGHT_SUBSAMPLE, class_weights, weighted_by_class
from smml._core import _tree_predict, _tree
from smml._progress import VERBOSE, progress
from smml._outputs import sum_scale
from smml._random import seeded_clone
from smml._threads import joblib_backend_active, run_tasks, threads_for
from smml._validation import (N_JOBS, RANDOM_STATE, InstanceOf, Interval, Options, check_is_fitted,
                              check_random_state, encode_classes, validate_sample_weight, validate_X,
                              validate_X_y)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator
from smml.tree import TreeClassifier, TreeRegressor

_Self = TypeVar("_Self")


def _bootstrap_size(max_samples, m):
    """Size of each bootstrap sample: a float is the notes' alpha (alpha m examples,
    at least 1), an integer is a count (scikit-learn's convention), None is m."""
    if max_samples is None:
        return m
    if isinstance(max_samples, numbers.Integral):
        return int(max_samples)
    return max(1, int(round(max_samples * m)))


#: at most this many bootstrap indices in all (T x alpha m): larger max_samples is an error
MAX_BOOTSTRAP_DRAWS = 1 << 28

#: (rows x members) worth one thread of the members' predictions (smml._threads.threads_for)
PREDICT_GRAIN = 10_000
#: (rows x trees) worth one thread of the compiled forest prediction (_tree_predict.forest_sum):
#: with 100 fully grown trees, threads start from some 80 rows (bench/forest.md)
FOREST_PREDICT_GRAIN = 4096


def _default_tree(classifier, **params):
    return (TreeClassifier if classifier else TreeRegressor)(**params)


class _ConstantClassifier:
    """Bagging's h_i on a single-class bootstrap sample its estimator would not fit."""

    def __init__(self, label, n_features):
        self.label, self.n_features_in_ = label, n_features

    def predict(self, X):
        return np.full(np.asarray(X).shape[0], self.label)


# ---- the members as one compiled forest -----------------------------------------------------
# When every member is an smml tree (the default estimator; classification also allows the
# constant members above), all T trees predict in one call of _tree_predict.forest_sum instead of
# T calls of the members' predict (bench/forest.md: the per-call cost of one row). The trees' node records are concatenated (children_left made global), and each
# leaf's otherwise unused test fields carry what it adds: classification, a vote (1.0) for the
# forest class code the member tree predicts there (TreeClassifier.predict's label, mapped through
# the member's classes_, which may be a subset of the forest's); regression, the leaf's value to
# column 0, summed tree after tree in member order and then divided by T, as the member loop
# does. So predict and predict_proba are those of the member loop, bit for bit. The arrays are
# derived from estimators_ on first use and kept while estimators_ holds the same members with
# the same fitted trees, outside the estimator (predict leaves its __dict__ as it is, as
# scikit-learn's checks want, and nothing derived is saved, pickled or copied with it).

_TREE_OF = operator.attrgetter("tree_")
#: ensemble -> (members, tree members, their tree_, _Forest or None), dropped with the ensemble
_FOREST_CACHE = weakref.WeakKeyDictionary()


class _Forest:
    """The trees of a bagging ensemble packed for ``_tree_predict.forest_sum`` (``_pack_forest``)."""

    def __init__(self, records, bits, roots, k, const, categorical):
        self.records = records          # uint8 view of the concatenated Node records
        self.bits = bits                # (n_nodes, NWORDS) category bits, or (1, NWORDS) zeros if none is used
        self.roots = roots              # (n_trees,) root of each tree
        self.k = k                      # columns of the output: K classes, or 1
        self.const = const              # (K,) votes of the constant members, or None
        self.categorical = categorical  # [(column, sorted union of the members' categories)]

    def __call__(self, X, n_threads):
        """(n, k): the votes of the T members (classification) or the sum of their values."""
        if self.categorical:
            X = self._encode(X)
        out = np.zeros((X.shape[0], self.k))
        if len(self.roots):
            _tree_predict.forest_sum(X, self.records, self.bits, self.roots, out, n_threads)
        if self.const is not None:
            out += self.const
        return out

    def _encode(self, X):
        """Categorical columns as codes into the union of the members' categories (the leaves'
        bits were re-based to it): a value a member did not see gets a code whose bit is unset
        in that member's tests, the second child, as the member's own code -1 does."""
        X = np.array(X, dtype=np.float64)
        for j, cats in self.categorical:
            col = X[:, j]
            pos = np.minimum(np.searchsorted(cats, col), len(cats) - 1)
            X[:, j] = np.where(cats[pos] == col, pos, -1)
        return X


def _packed_for(members, cache):
    """True when the cache ``(members, tree members, their tree_, forest)`` was made from these
    members: the same objects in the same order, each tree member with the same fitted tree (a
    refit or pruned member has a new tree_). A few microseconds for 100 members."""
    packed, tree_members, trees, _ = cache
    # list == list compares item by item, identity first (estimators and trees have no __eq__)
    try:
        return (packed == (members if type(members) is list else list(members))
                and list(map(_TREE_OF, tree_members)) == trees)
    except AttributeError:              # a member lost its tree_: repack (the member loop then)
        return False


def _pack_forest(members, classifier, n_classes, n_features):
    """A ``_Forest`` of the members, or None when one of them is not an smml tree of the
    ensemble's kind (nor, for classification, a constant) or its trees cannot be packed: the
    members' own predict is used then."""
    tree_type = TreeClassifier if classifier else TreeRegressor
    trees, const = [], (np.zeros(n_classes) if classifier else None)
    for e in members:
        if type(e) is _ConstantClassifier and classifier:
            if not (isinstance(e.label, numbers.Integral) and 0 <= e.label < n_classes):
                return None
            const[int(e.label)] += 1.0
        elif type(e) is tree_type and getattr(e, "n_features_in_", None) == n_features and hasattr(e, "tree_"):
            trees.append(e)
        else:
            return None
    if const is not None and not const.any():
        const = None
    k = n_classes if classifier else 1
    sizes = np.array([e.tree_.node_count for e in trees], np.intp)
    roots = np.zeros(len(sizes), np.intp)
    if not len(trees):
        return _Forest(np.zeros(0, np.uint8), np.zeros((1, _tree.CATEGORY_WORDS), np.uint64), roots, k, const, [])
    if sizes.sum() > np.iinfo(np.int32).max:       # the records' children_left are int32
        return None
    roots[1:] = np.cumsum(sizes)[:-1]
    # one copy of the records, as bytes (a copy of the packed structured array is much slower)
    records = np.concatenate([e.tree_._records() for e in trees])
    nodes = records.view(_tree.NODE_DTYPE)
    left = nodes["children_left"]
    leaf = left < 0
    np.add(left, np.repeat(roots, sizes).astype(left.dtype), out=left, where=~leaf)
    if classifier:
        # the member's predict at each node: classes_[_node_label], as an intp class code
        code = np.concatenate([np.asarray(np.asarray(e.classes_)[e._node_label]).astype(np.intp)
                               for e in trees])[leaf]
        if np.any(code < 0) or np.any(code >= n_classes):
            return None
        nodes["feature"][leaf] = code
        nodes["threshold"][leaf] = 1.0
    else:
        nodes["feature"][leaf] = 0
        nodes["threshold"][leaf] = np.concatenate([np.asarray(e.tree_.value[:, 0], dtype=np.float64)
                                                   for e in trees])[leaf]
    categorical = []
    bits = np.zeros((1, _tree.CATEGORY_WORDS), np.uint64)
    if nodes["is_categorical"].any():
        bits = [e.tree_.category_bits for e in trees]
        categorical = _rebase_categories(trees, np.split(nodes, roots[1:]), bits)
        if categorical is None:
            return None
        bits = np.ascontiguousarray(np.concatenate(bits), dtype=np.uint64)
    return _Forest(records, bits, roots, k, const, categorical)


def _rebase_categories(trees, nodes, bits):
    """Re-base the categorical tests of the members (codes into each member's own categories_)
    to codes into the union of their categories, in place (``bits``: copies); returns
    [(column, union)], or None when the members disagree on the categorical columns or a union
    has more categories than a test's bits hold."""
    cols = list(getattr(trees[0], "_cat_idx", []))
    if any(list(getattr(e, "_cat_idx", [])) != cols for e in trees) or not cols:
        return None
    try:
        cats = [{j: np.asarray(e.categories_[j], dtype=np.float64) for j in cols} for e in trees]
    except (TypeError, ValueError, KeyError):
        return None
    union = {j: np.unique(np.concatenate([c[j] for c in cats])) for j in cols}
    if any(len(u) > 64 * _tree.CATEGORY_WORDS for u in union.values()):
        return None
    for i, (nd, c) in enumerate(zip(nodes, cats)):
        is_cat = nd["is_categorical"] != 0
        if not is_cat.any():
            continue
        if not np.isin(nd["feature"][is_cat], cols).all():
            return None
        b = np.array(bits[i], dtype="<u8")
        for j in cols:
            rows = np.flatnonzero(is_cat & (nd["feature"] == j))
            if len(rows) == 0:
                continue
            own = np.unpackbits(b[rows].view(np.uint8), axis=1, bitorder="little")[:, :len(c[j])]
            new = np.zeros((len(rows), 64 * _tree.CATEGORY_WORDS), np.uint8)
            new[:, np.searchsorted(union[j], c[j])] = own
            b[rows] = np.packbits(new, axis=1, bitorder="little").view("<u8")
        bits[i] = b
    return [(j, union[j]) for j in cols]


def _fit_member_task(ensemble, est, X, y, idx, sw):
    """One member's fit as a joblib task (a module-level function: picklable)."""
    return ensemble._fit_member(est, X, y, idx, ensemble._member_weights(y, idx, sw))


class _BaseBagging(SmmlEstimator):
    """Bootstrap aggregation (002 "Bagging"; 003 section 16).

    Every bootstrap sample (alpha m indices drawn uniformly with replacement,
    alpha = ``max_samples``) and every base-estimator seed is drawn up front
    from ``random_state`` in Python, so the fitted ensemble is the same
    whatever the number of threads. The fits run in a thread pool of
    ``n_jobs`` threads (the compiled tree kernels release the GIL); inside a
    ``joblib.parallel_config`` context naming a backend (``"dask"`` for a Dask
    cluster, ``"ray"``, ``"loky"``...) they run through ``joblib.Parallel`` on
    that backend instead, each fit a task given its own seed and bootstrap
    indices, so the fitted members are the same, bit for bit.
    """

    _classifier = False

    def _make_estimator(self, seed):
        """A clone of ``estimator`` (default: smml's fully grown tree, one thread: the
        parallelism is over the T fits), seeded with ``seed`` when it takes one."""
        return seeded_clone(self.estimator if self.estimator is not None
                             else _default_tree(self._classifier, n_jobs=1), seed)

    def _n_draw(self, m):
        return _bootstrap_size(self.max_samples, m)

    def fit(self: _Self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _Self:
        """Draw the T bootstrap samples and fit one predictor on each.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Training labels (targets for a regressor).
        sample_weight : array-like of shape (n_samples,), default=None
            Example weights passed to each predictor's fit (on its bootstrap rows); None:
            no weights.

        Returns
        -------
        self : object
            The fitted ensemble.
        """
        self._validate_params()
        try:
            _FOREST_CACHE.pop(self, None)             # the previous members' packed trees
        except TypeError:
            pass
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=self._classifier,
                            y_numeric=not self._classifier)
        if self._classifier:
            self.classes_, yt = encode_classes(y)
        else:
            yt = y
        m = X.shape[0]
        sw = None if sample_weight is None else validate_sample_weight(sample_weight, m)
        cw = getattr(self, "class_weight", None) if self._classifier else None
        if cw is not None and not (isinstance(cw, str) and cw == "balanced_subsample"):
            sw = weighted_by_class(sw, cw, self.classes_, yt)
        rng = check_random_state(self.random_state)
        T, k = self.n_estimators, self._n_draw(m)
        if T * k > MAX_BOOTSTRAP_DRAWS:
            raise ValueError(f"{type(self).__name__}: n_estimators={T} bootstrap samples of max_samples * m = "
                             f"{k} examples each ({T * k:,} indices) is more than {MAX_BOOTSTRAP_DRAWS:,}; "
                             f"a float max_samples is the fraction alpha of the m={m} training examples, an int a count")
        # tree t's bootstrap sample S_t and seed, drawn in turn: the first T0 draws of a fit with
        # T trees are those of a fit with T0 trees (warm_start adds trees, the same as a fresh fit)
        T0 = 0
        if getattr(self, "warm_start", False) and hasattr(self, "estimators_"):
            T0 = len(self.estimators_)
            if T < T0:
                raise ValueError(f"{type(self).__name__}: n_estimators={T} is below the {T0} members "
                                 "already fitted; warm_start only adds members (set warm_start=False "
                                 "to refit)")
            before = self.__dict__.get("_warm_classes", self.classes_) if self._classifier else None
            if self._classifier and not np.array_equal(before, self.classes_):
                raise ValueError(f"{type(self).__name__}: warm_start needs the classes of the first fit "
                                 f"{before.tolist()}, got {self.classes_.tolist()}")
            if T == T0:
                warnings.warn(f"{type(self).__name__}: warm_start with n_estimators={T} fits no new "
                              "member", UserWarning, stacklevel=2)
                return self
        # an int random_state replays the first T0 draws, so the new members get the draws a
        # fresh fit with T members gives them; a generator (or None) continues its stream
        replay = T0 > 0 and isinstance(self.random_state, (int, np.integer))
        samples, seeds = [], []
        for t in range(T if replay or T0 == 0 else T - T0):
            S_t = rng.randint(0, m, size=k)
            if m <= np.iinfo(np.int32).max:
                S_t = S_t.astype(np.int32)     # the same draws, kept in half the memory
            seed = int(rng.randint(0, 2**31 - 1))
            if not replay or t >= T0:
                samples.append(S_t)
                seeds.append(seed)
        old_members = list(self.estimators_) if T0 else []
        old_samples = list(self.estimators_samples_) if T0 else []
        self.estimators_samples_ = samples        # the new members' (all of them after the fits)
        proto = [self._make_estimator(s) for s in seeds]
        T = len(proto)
        if (sw is not None or cw is not None) and not has_fit_parameter(proto[0], "sample_weight"):
            raise ValueError(f"{type(proto[0]).__name__} does not accept sample_weight"
                             + (" (class_weight needs it)" if cw is not None else ""))

        desc = f"{type(self).__name__} fits"
        n_threads = min(self._n_threads(), T)
        if joblib_backend_active():
            # the engine of the context (a Dask or Ray cluster...) runs the fits (a worker lost:
            # one clear error, no partial ensemble); X, y and the weights are positional so that
            # the dask backend scatters them once
            from joblib import delayed

            lite = copy.copy(self)         # what _fit_member reads, without the T bootstrap samples
            lite.__dict__.pop("estimators_samples_", None)
            self.estimators_ = run_tasks(
                (delayed(_fit_member_task)(lite, proto[t], X, yt, self.estimators_samples_[t], sw)
                 for t in range(T)), self.n_jobs, self.verbose, desc, unit="it")
        else:
            shared = self._shared(X, proto[0])

            def fit_one(t):
                idx = self.estimators_samples_[t]
                return self._fit_member(proto[t], X, yt, idx, self._member_weights(yt, idx, sw), shared)

            if n_threads > 1:
                with ThreadPoolExecutor(max_workers=n_threads) as pool:
                    self.estimators_ = list(progress(pool.map(fit_one, range(T)), total=T, desc=desc,
                                                     verbose=self.verbose))
            else:
                self.estimators_ = [fit_one(t) for t in progress(range(T), desc=desc, verbose=self.verbose)]
        if T0:
            self.estimators_ = old_members + list(self.estimators_)
            self.estimators_samples_ = old_samples + self.estimators_samples_
        if self._classifier:
            self._warm_classes = self.classes_
        if self.oob_score:
            self._set_oob(X, yt, m)
        return self

    def _member_weights(self, yt, idx, sw):
        """A member's sample weights: ``sw`` (None: no weights), times, for
        ``class_weight="balanced_subsample"``, the "balanced" weights of the classes computed on
        the member's bootstrap sample ``idx`` (repeats counted; a class absent from it weighs 0),
        as scikit-learn's forests."""
        cw = getattr(self, "class_weight", None) if self._classifier else None
        if not (isinstance(cw, str) and cw == "balanced_subsample"):
            return sw
        w = class_weights(cw, self.classes_, yt[idx])[yt]
        return w if sw is None else w * sw

    def _shared(self, X, est):
        """What the members' fits in this process share, computed once for all of them (None:
        nothing); passed to ``_fit_member``. ``est``: a member before its fit."""
        return None

    def _fit_member(self, est, X, y, idx, sw, shared=None):
        """h_i = A(S_i): fit on the rows of the bootstrap sample, repeats included.

        A small bootstrap sample may hold a single class, which many classifiers refuse to fit
        (e.g. logistic regression); such an h_i is then the constant predictor of that class.
        """
        try:
            if sw is None:
                return est.fit(X[idx], y[idx])
            return est.fit(X[idx], y[idx], sample_weight=sw[idx])
        except Exception:
            if self._classifier and np.all(y[idx] == y[idx[0]]):
                return _ConstantClassifier(y[idx[0]], X.shape[1])
            raise

    def _forest(self):
        """The members packed for one compiled call (``_Forest``), or None (the member loop):
        derived on first use, rebuilt when estimators_ no longer holds the packed members."""
        members = self.estimators_
        try:
            cache = _FOREST_CACHE.get(self)
        except TypeError:               # an unhashable subclass: packed on every call
            cache = None
        if cache is None or not _packed_for(members, cache):
            forest = _pack_forest(members, self._classifier,
                                  len(self.classes_) if self._classifier else 0, self.n_features_in_)
            tree_members = [e for e in members if hasattr(e, "tree_")] if forest is not None else []
            cache = (list(members), tree_members, [e.tree_ for e in tree_members], forest)
            try:
                _FOREST_CACHE[self] = cache
            except TypeError:
                pass
        return cache[3]

    def _forest_outputs(self, forest, X):
        """(n, k) votes / sum of the members' predictions on X, one compiled call."""
        X = validate_X(self, X, dtype="floating")     # float32 stays: the kernel reads it as float64
        n_threads = threads_for(self._n_threads, X.shape[0] * len(forest.roots), FOREST_PREDICT_GRAIN)
        return forest(X, n_threads)

    # one predictor's output on X: class indices (classification) or values
    def _member_predict(self, est, X):
        p = np.asarray(est.predict(X))
        return p.astype(np.intp) if self._classifier else p.astype(np.float64)

    def _member_outputs(self, X):
        T = len(self.estimators_)
        n_threads = threads_for(lambda: min(self._n_threads(), T), X.shape[0] * T, PREDICT_GRAIN)
        if n_threads > 1:
            with ThreadPoolExecutor(max_workers=n_threads) as pool:
                return list(pool.map(lambda e: self._member_predict(e, X), self.estimators_))
        return [self._member_predict(e, X) for e in self.estimators_]

    def _set_oob(self, X, yt, m):
        inbag = np.zeros((len(self.estimators_), m), dtype=bool)
        for t, idx in enumerate(self.estimators_samples_):
            inbag[t, idx] = True
        if self._classifier:
            acc = np.zeros((m, len(self.classes_)))
        else:
            acc = np.zeros(m)
        cnt = np.zeros(m)
        for t, est in enumerate(self.estimators_):
            oob = np.flatnonzero(~inbag[t])
            if len(oob) == 0:
                continue
            p = self._member_predict(est, X[oob])
            if self._classifier:
                acc[oob, p] += 1.0
            else:
                acc[oob] += p
            cnt[oob] += 1
        has = cnt > 0
        if not np.any(has):
            raise ValueError("no sample is out of bag in any bootstrap sample: the out-of-bag score "
                             "is undefined (use more estimators or a smaller max_samples)")
        self.oob_coverage_ = float(has.mean())
        if self._classifier:
            pred = np.argmax(acc, axis=1)                 # tied vote -> smallest class index
            self.oob_decision_function_ = np.where(has[:, None], acc / np.maximum(cnt, 1)[:, None], np.nan)
            self.oob_error_ = float(np.mean(pred[has] != yt[has]))
            self.oob_score_ = 1.0 - self.oob_error_
        else:
            pred = acc / np.maximum(cnt, 1)
            self.oob_prediction_ = np.where(has, pred, np.nan)
            r = yt[has] - pred[has]
            self.oob_error_ = float(np.mean(r * r))
            var = float(np.var(yt[has]))
            self.oob_score_ = 1.0 - self.oob_error_ / var if var > 0 else (1.0 if self.oob_error_ == 0 else 0.0)


class _BaggingClassifierMixin:
    _classifier = True

    def _votes(self, X):
        if "estimators_" not in self.__dict__:
            check_is_fitted(self)
        forest = self._forest()
        if forest is None:
            return self._member_votes(X)
        return self._forest_outputs(forest, X)

    def _member_votes(self, X):
        """The votes from each member's predict (members other than smml trees)."""
        check_is_fitted(self)
        X = validate_X(self, X, dtype="float64")
        votes = np.zeros((X.shape[0], len(self.classes_)))
        rows = np.arange(X.shape[0])
        for p in self._member_outputs(X):
            votes[rows, p] += 1.0
        return votes

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Fraction of the T predictors voting for each class (the vote shares).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Vote shares, columns as ``classes_``.
        """
        return self._votes(X) / len(self.estimators_)

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Majority vote of the T predictors; a tied vote goes to the smallest class in ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted labels.
        """
        votes = self._votes(X)
        return self.classes_[np.argmax(votes, axis=1)]


class _BaggingRegressorMixin:
    _classifier = False

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """Mean of the T predictors' outputs (002 "Random forests": regression returns the mean).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predictions.
        """
        if "estimators_" not in self.__dict__:
            check_is_fitted(self)
        forest = self._forest()
        if forest is None:
            return self._member_mean(X)
        out = self._forest_outputs(forest, X)[:, 0] / len(self.estimators_)
        if not np.isfinite(out).all():      # finite members whose sum overflowed
            return self._member_mean(X, scaled=True)
        return out

    def _member_mean(self, X, scaled=False):
        """The mean of each member's predict (members other than smml trees). Where the plain
        sum overflows (or with ``scaled``), the members' outputs are summed scaled by
        :func:`smml._outputs.sum_scale`: the bits of an overflow-free sum."""
        check_is_fitted(self)
        X = validate_X(self, X, dtype="float64")
        T = len(self.estimators_)
        for scaled in (True,) if scaled else (False, True):     # scaled: the plain sum overflowed
            s = sum_scale(T) if scaled else 1.0
            out = np.zeros(X.shape[0])
            with np.errstate(over="ignore", invalid="ignore"):
                for p in self._member_outputs(X):
                    np.add(out, np.asarray(p, dtype=np.float64) * s if scaled else p, out=out)
            mean = out / T / s
            if scaled or np.isfinite(mean).all():
                return mean


_BAGGING_SPEC = {"estimator": (Options(None), InstanceOf(BaseEstimator)),
                 "n_estimators": Interval(int, 1, None),
                 "max_samples": (Interval(int, 1, None), Interval(float, 0.0, None, "neither")),
                 "oob_score": Options(True, False), "warm_start": Options(True, False),
                 "n_jobs": N_JOBS, "random_state": RANDOM_STATE, "verbose": VERBOSE}


class BaggingClassifier(_BaggingClassifierMixin, ClassifierMixin, _BaseBagging):
    """Bagging for classification (002 "Bagging"; 003 section 16).

    T = ``n_estimators`` bootstrap samples S_1..S_T of size alpha m
    (alpha = ``max_samples`` as a float; 003 uses alpha = 1; an integer
    ``max_samples`` is a count, as in scikit-learn) drawn uniformly with
    replacement; h_i = A(S_i) with A = ``estimator`` (any smml or scikit-learn
    classifier, cloned; default smml's fully grown ``TreeClassifier(n_jobs=1)``,
    the parallelism being over the T fits); the
    prediction is the majority vote, a tied vote going to the smallest class
    of ``classes_``. ``oob_score=True`` estimates the risk out of bag: each
    training example is classified by the majority vote of the predictors
    whose bootstrap sample missed it (``oob_error_``: zero-one loss;
    ``oob_score_`` = 1 - ``oob_error_``, over the examples that were out of
    bag at least once, a fraction ``oob_coverage_``). ``verbose=1`` shows a
    progress bar of the T fits on stderr. ``warm_start=True``: a later ``fit`` (on the
    same data) keeps the fitted members and adds ``n_estimators - len(estimators_)``
    new ones; with an int ``random_state`` they are the members a fresh fit with
    ``n_estimators`` members would have (the bootstrap sample and seed of member t are
    drawn t-th), as in scikit-learn.

    Parameters
    ----------
    estimator : classifier or None, default=None
        A, the learning algorithm (cloned for each bootstrap sample); None: smml's fully
        grown ``TreeClassifier(n_jobs=1)``.
    n_estimators : int, default=10
        T, the number of bootstrap samples and predictors.
    max_samples : float or int, default=1.0
        A float is alpha: each bootstrap sample has alpha m examples; an int is the number
        of examples (scikit-learn's convention).
    oob_score : bool, default=False
        Compute the out-of-bag estimate of the risk: the zero-one loss ``oob_error_`` and ``oob_score_`` = 1 - ``oob_error_``.
    warm_start : bool, default=False
        A later ``fit`` (on the same data) keeps the fitted members and adds new ones.
    n_jobs : int or None, default=None
        Threads of the pool running the T fits (results do not depend on it).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the bootstrap samples and the members' seeds (all drawn up front).
    verbose : bool, int or "auto", default=0
        A progress bar of the T fits on stderr (1), none (0), or one only when stderr is a
        terminal ("auto").
    class_weight : dict, "balanced", "balanced_subsample" or None, default=None
        Weights of the classes, multiplying the sample weights (scikit-learn's semantics;
        the members must accept ``sample_weight``): a dict ``{label: weight}`` (missing labels
        weigh 1), or "balanced": class c weighs ``n_samples / (n_classes * n_c)``, n_c its
        number of training examples; "balanced_subsample": the same computed on each
        bootstrap sample (repeats counted) for its member. None: every class weighs 1.

    Attributes
    ----------
    estimators_ : list of classifiers
        The T fitted predictors h_1..h_T.
    estimators_samples_ : list of ndarray
        The bootstrap indices S_t of each predictor (int32 below 2**31 rows: half the memory
        of int64 indices).
    classes_ : ndarray of shape (n_classes,)
        The sorted labels.
    oob_score_ : float
        1 - ``oob_error_`` (``oob_score=True`` only).
    oob_error_ : float
        Out-of-bag zero-one loss (``oob_score=True`` only).
    oob_coverage_ : float
        Fraction of the examples out of bag at least once (``oob_score=True`` only).

    See Also
    --------
    sklearn.ensemble.BaggingClassifier : scikit-learn's bagging classifier.
    RandomForestClassifier : bagging of trees with random feature subsets.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.ensemble import BaggingClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> bag = BaggingClassifier(n_estimators=5, random_state=0).fit(X, y)
    >>> len(bag.estimators_)
    5
    >>> bag.predict([[-2.0, 0.0], [2.0, 0.0]]).tolist()
    [0, 1]
    """

    _parameter_spec = dict(_BAGGING_SPEC, class_weight=CLASS_WEIGHT_SUBSAMPLE)

    def __init__(self, estimator: Any = None, n_estimators: int = 10, max_samples: int | float = 1.0,
                 oob_score: bool = False, warm_start: bool = False, n_jobs: int | None = None,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 verbose: bool | int | Literal["auto"] = 0,
                 class_weight: dict[Any, float] | Literal["balanced", "balanced_subsample"] | None = None
                ) -> None:
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.class_weight = class_weight


class BaggingRegressor(_BaggingRegressorMixin, RegressorMixin, _BaseBagging):
    """Bagging for regression (002 "Random forests": regression returns the mean).

    As :class:`BaggingClassifier`, averaging the T predictions;
    ``oob_error_`` is the out-of-bag square loss and ``oob_score_`` its R^2.

    Parameters
    ----------
    estimator : regressor or None, default=None
        A, the learning algorithm (cloned for each bootstrap sample); None: smml's fully
        grown ``TreeRegressor(n_jobs=1)``.
    n_estimators : int, default=10
        T, the number of bootstrap samples and predictors.
    max_samples : float or int, default=1.0
        A float is alpha: each bootstrap sample has alpha m examples; an int is the number
        of examples (scikit-learn's convention).
    oob_score : bool, default=False
        Compute the out-of-bag estimate of the risk: the square loss ``oob_error_`` and its R^2 ``oob_score_``.
    warm_start : bool, default=False
        A later ``fit`` (on the same data) keeps the fitted members and adds new ones.
    n_jobs : int or None, default=None
        Threads of the pool running the T fits (results do not depend on it).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the bootstrap samples and the members' seeds (all drawn up front).
    verbose : bool, int or "auto", default=0
        A progress bar of the T fits on stderr (1), none (0), or one only when stderr is a
        terminal ("auto").

    Attributes
    ----------
    estimators_ : list of regressors
        The T fitted predictors h_1..h_T.
    estimators_samples_ : list of ndarray
        The bootstrap indices S_t of each predictor (int32 below 2**31 rows: half the memory
        of int64 indices).
    oob_score_ : float
        Out-of-bag R^2 (``oob_score=True`` only).
    oob_error_ : float
        Out-of-bag square loss (``oob_score=True`` only).
    oob_prediction_ : ndarray of shape (n_samples,)
        Out-of-bag prediction of each training example (NaN if never out of bag).

    See Also
    --------
    sklearn.ensemble.BaggingRegressor : scikit-learn's bagging regressor.
    RandomForestRegressor : bagging of trees with random feature subsets.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.ensemble import BaggingRegressor
    >>> X = np.arange(20.0).reshape(-1, 1)
    >>> y = np.where(X[:, 0] < 10, 0.0, 1.0)
    >>> bag = BaggingRegressor(n_estimators=5, random_state=0).fit(X, y)
    >>> bag.predict([[2.0], [17.0]]).round(3).tolist()
    [0.0, 1.0]
    """

    _parameter_spec = _BAGGING_SPEC

    def __init__(self, estimator: Any = None, n_estimators: int = 10, max_samples: int | float = 1.0,
                 oob_score: bool = False, warm_start: bool = False, n_jobs: int | None = None,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 verbose: bool | int | Literal["auto"] = 0) -> None:
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
