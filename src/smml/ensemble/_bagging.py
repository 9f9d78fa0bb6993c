"""Bagging (002 "Random forests" / "Bagging"; 003 section 16)."""
import copy
import numbers
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import has_fit_parameter

from smml._progress import VERBOSE, progress
from smml._threads import joblib_backend_active, run_tasks, threads_for
from smml._validation import (N_JOBS, RANDOM_STATE, InstanceOf, Interval, Options, check_is_fitted,
                              check_random_state, encode_classes, validate_sample_weight, validate_X,
                              validate_X_y)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator
from smml.ensemble._base import _seeded_clone
from smml.tree import TreeClassifier, TreeRegressor


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


def _default_tree(classifier, **params):
    return (TreeClassifier if classifier else TreeRegressor)(**params)


class _ConstantClassifier:
    """Bagging's h_i on a single-class bootstrap sample its estimator would not fit."""

    def __init__(self, label, n_features):
        self.label, self.n_features_in_ = label, n_features

    def predict(self, X):
        return np.full(np.asarray(X).shape[0], self.label)


def _fit_member_task(ensemble, est, X, y, idx, sw):
    """One member's fit as a joblib task (a module-level function: picklable)."""
    return ensemble._fit_member(est, X, y, idx, sw)


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
        return _seeded_clone(self.estimator if self.estimator is not None
                             else _default_tree(self._classifier, n_jobs=1), seed)

    def _n_draw(self, m):
        return _bootstrap_size(self.max_samples, m)

    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y = validate_X_y(self, X, y, dtype="float64", classifier=self._classifier,
                            y_numeric=not self._classifier)
        if self._classifier:
            self.classes_, yt = encode_classes(y)
        else:
            yt = y
        m = X.shape[0]
        sw = None if sample_weight is None else validate_sample_weight(sample_weight, m)
        rng = check_random_state(self.random_state)
        T, k = self.n_estimators, self._n_draw(m)
        if T * k > MAX_BOOTSTRAP_DRAWS:
            raise ValueError(f"{type(self).__name__}: n_estimators={T} bootstrap samples of max_samples * m = "
                             f"{k} examples each ({T * k:,} indices) is more than {MAX_BOOTSTRAP_DRAWS:,}; "
                             f"a float max_samples is the fraction alpha of the m={m} training examples, an int a count")
        self.estimators_samples_ = [rng.randint(0, m, size=k) for _ in range(T)]   # bootstrap S_1..S_T
        seeds = rng.randint(0, 2**31 - 1, size=T)
        proto = [self._make_estimator(int(s)) for s in seeds]
        if sw is not None and not has_fit_parameter(proto[0], "sample_weight"):
            raise ValueError(f"{type(proto[0]).__name__} does not accept sample_weight")

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
                return self._fit_member(proto[t], X, yt, self.estimators_samples_[t], sw, shared)

            if n_threads > 1:
                with ThreadPoolExecutor(max_workers=n_threads) as pool:
                    self.estimators_ = list(progress(pool.map(fit_one, range(T)), total=T, desc=desc,
                                                     verbose=self.verbose))
            else:
                self.estimators_ = [fit_one(t) for t in progress(range(T), desc=desc, verbose=self.verbose)]
        if self.oob_score:
            self._set_oob(X, yt, m)
        return self

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
        check_is_fitted(self)
        X = validate_X(self, X, dtype="float64")
        votes = np.zeros((X.shape[0], len(self.classes_)))
        rows = np.arange(X.shape[0])
        for p in self._member_outputs(X):
            votes[rows, p] += 1.0
        return votes

    def predict_proba(self, X):
        """Fraction of the T predictors voting for each class (the vote shares)."""
        return self._votes(X) / len(self.estimators_)

    def predict(self, X):
        """Majority vote of the T predictors; a tied vote goes to the smallest class in ``classes_``."""
        votes = self._votes(X)
        return self.classes_[np.argmax(votes, axis=1)]


class _BaggingRegressorMixin:
    _classifier = False

    def predict(self, X):
        """Mean of the T predictors' outputs (002 "Random forests": regression returns the mean)."""
        check_is_fitted(self)
        X = validate_X(self, X, dtype="float64")
        out = np.zeros(X.shape[0])
        for p in self._member_outputs(X):
            out += p
        return out / len(self.estimators_)


_BAGGING_SPEC = {"estimator": (Options(None), InstanceOf(BaseEstimator)),
                 "n_estimators": Interval(int, 1, None),
                 "max_samples": (Interval(int, 1, None), Interval(float, 0.0, None, "neither")),
                 "oob_score": Options(True, False),
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
    progress bar of the T fits on stderr.
    """

    _parameter_spec = _BAGGING_SPEC

    def __init__(self, estimator=None, n_estimators=10, max_samples=1.0, oob_score=False,
                 n_jobs=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose


class BaggingRegressor(_BaggingRegressorMixin, RegressorMixin, _BaseBagging):
    """Bagging for regression (002 "Random forests": regression returns the mean).

    As :class:`BaggingClassifier`, averaging the T predictions;
    ``oob_error_`` is the out-of-bag square loss and ``oob_score_`` its R^2.
    """

    _parameter_spec = _BAGGING_SPEC

    def __init__(self, estimator=None, n_estimators=10, max_samples=1.0, oob_score=False,
                 n_jobs=None, random_state=None, verbose=0):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
