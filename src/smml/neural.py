"""Feed-forward neural networks trained by stochastic gradient descent (003 section 14).

A network of ``hidden_layer_sizes`` fully connected hidden layers (a layered
DAG G = (V, E)) with activation sigma, and a linear output layer that feeds the
loss. Training is 003's update

    w_ij <- w_ij - eta_t d l_{Z_t}(w) / d w_ij,   (i, j) in E,

one random example Z_t per step (``batch_size=1``), the examples of each epoch
in a random order (a permutation drawn from ``random_state``, as the
sequential learners of ``smml.linear`` do). Extensions, all documented in the
classes: minibatches (the mean gradient over ``batch_size`` examples, the last
batch of an epoch may be smaller), the step-size ``schedule``, an L2 penalty
``alpha`` / 2 ||W||^2 on the connection weights (not the biases: 003 section 15's
regulariser, the notes' lambda, with scikit-learn's convention for the biases), classical
momentum, scikit-learn's stopping rules (``tol``, ``n_iter_no_change``,
``early_stopping``), ``sample_weight``, ``warm_start`` and a progress bar (``verbose``).

Activations (``activation``): "relu" max(0, z) (derivative 0 at 0),
"tanh", "sigmoid" = the logistic function 1 / (1 + e^{-z}) in [0, 1],
"sign_sigmoid" = 003 section 14's sigmoid (1 - e^{-z}) / (1 + e^{-z}) in
[-1, 1] (= tanh(z / 2); named so that nobody takes it for the logistic
function), and "identity".

Losses: the classifier uses the logistic loss ln(1 + e^{-y z}) with one output
unit for two classes (``classes_[1]`` is y = +1) and softmax + the log loss
-ln p_y for more; the regressor uses the square loss (z - y)^2 (summed over
the outputs). Natural logarithms: 003 section 15 writes the logistic loss with
log2, which only rescales the loss (and so eta) by 1 / ln 2; smml.linear's
LogisticRegression and scikit-learn use ln too.

Each epoch runs in one compiled, nogil call (``smml._core._neural``); see
``smml.reference.neural`` for the plain-numpy twin the tests compare with.
float32 training and prediction run smml's own vector code (AVX-512 or AVX2,
chosen at run time, in builds for x86-64 Linux): a minibatch step updates each
hidden layer in one pass over its weights and velocities (the first layer's
pass also runs the next batch's forward), the forward passes hold blocks of
weights in registers, and a batch-1 step runs 003's update row by row as
vectors; float64, CPUs with neither, and other builds use BLAS gemm and plain
loops. The two compute the same update with sums in different orders, so
float32 weights can differ in their last bits between CPUs of different
instruction sets.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, log_expit, logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import TransformerTags
from sklearn.utils.multiclass import type_of_target

from smml._core import _neural as _k
from smml._progress import VERBOSE, progress
from smml._outputs import check_finite_output
from smml._threads import blas_single_thread, threads_for
from smml._validation import (BOOL, N_JOBS, RANDOM_STATE, Interval, Options, cast_to_model, check_is_fitted,
                              check_random_state, drop_zero_weight, encode_classes, validate_sample_weight,
                              validate_X, validate_X_y)
from smml.base import ClassifierMixin, RegressorMixin, SmmlEstimator, store_params
from smml.exceptions import DivergenceError

__all__ = ["MLPClassifier", "MLPRegressor"]

#: multiply-adds per SGD step (batch x weights) worth a thread of its own in training.
#: Set from the crossover of 1 vs 2 threads (bench/experiments/sweep_neural_threads.py
#: [--wide]; the figures: bench/neural.md): below it 2 threads are slower than 1, because
#: the step's two barriers cost more than half a step. threads_for starts a
#: second thread from 2 grains, i.e. 2.1 M.
NEURAL_GRAIN = 1 << 20
#: rows worth a thread of their own in prediction
PREDICT_GRAIN = 256

_ACT = {"identity": _k.ACT_IDENTITY, "relu": _k.ACT_RELU, "tanh": _k.ACT_TANH,
        "sigmoid": _k.ACT_SIGMOID, "sign_sigmoid": _k.ACT_SIGN_SIGMOID}
_SCHED = {"constant": _k.SCHED_CONSTANT, "inverse_sqrt": _k.SCHED_INV_SQRT, "inverse_t": _k.SCHED_INV_T}
_GAIN = {"identity": 1.0, "tanh": 1.0, "sign_sigmoid": 2.0, "sigmoid": 4.0}
_CACHE_LINE = 64


def _aligned_copy(a, align=_CACHE_LINE):
    """A writeable copy of ``a`` (C order) starting on an ``align``-byte boundary.

    The kernel splits a layer's units among threads at multiples of 16 entries (64 bytes
    in float32), each thread updating its own columns of every weight row: with a
    weight matrix that starts mid cache line, the lines at those boundaries are written
    by both threads in every row (false sharing). numpy guarantees 16 bytes.
    (The A/B behind it: bench/neural.md.)"""
    buf = np.empty(a.nbytes + align, dtype=np.uint8)
    off = (-buf.ctypes.data) % align
    out = buf[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


class _LayerSizes:
    """hidden_layer_sizes: a positive int, or a tuple / list of positive ints (may be empty)."""

    def is_satisfied_by(self, v):
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            return v >= 1
        if isinstance(v, (tuple, list)):
            return all(isinstance(h, numbers.Integral) and not isinstance(h, bool) and h >= 1 for h in v)
        return False

    def __str__(self):
        return "a positive int or a tuple of positive ints"


def _hidden(sizes):
    return (int(sizes),) if isinstance(sizes, numbers.Integral) else tuple(int(h) for h in sizes)


def _init_params(rng, sizes, activation, dtype):
    """Layer by layer, W_l ~ uniform[-r, r] (drawn in float64 from ``rng``, then cast),
    biases 0. r = sqrt(6 / fan_in) (He) for the weights into relu units;
    r = g sqrt(6 / (fan_in + fan_out)) (Glorot) otherwise, with the gain g = 1 for
    identity and tanh units and for the output layer, 2 for sign_sigmoid (its slope
    at 0 is 1/2) and 4 for sigmoid (slope 1/4; Glorot and Bengio 2010)."""
    coefs, intercepts = [], []
    L = len(sizes) - 1
    for l in range(L):
        fi, fo = sizes[l], sizes[l + 1]
        if l < L - 1 and activation == "relu":
            r = np.sqrt(6.0 / fi)
        else:
            r = (1.0 if l == L - 1 else _GAIN[activation]) * np.sqrt(6.0 / (fi + fo))
        coefs.append(np.ascontiguousarray(rng.uniform(-r, r, size=(fi, fo)), dtype=dtype))
        intercepts.append(np.zeros(fo, dtype=dtype))
    return coefs, intercepts


_COMMON_SPEC = {
    "hidden_layer_sizes": _LayerSizes(),
    "activation": Options(*_ACT),
    "batch_size": Interval(int, 1, None),
    "learning_rate": Interval(float, 0, None, "neither"),
    "schedule": Options(*_SCHED),
    "momentum": Interval(float, 0, 1, "left"),
    "alpha": Interval(float, 0, None),
    "max_iter": Interval(int, 1, None),
    "tol": Interval(float, 0, None),
    "n_iter_no_change": Interval(int, 1, None),
    "early_stopping": BOOL,
    "validation_fraction": Interval(float, 0, 1, "neither"),
    "warm_start": BOOL,
    "verbose": VERBOSE,
    "random_state": RANDOM_STATE,
    "n_jobs": N_JOBS,
}


class _BaseMLP(SmmlEstimator):
    """Training loop, stopping rules and the forward pass shared by both estimators."""

    _out = None          # the kernel's output/loss code, set by _targets

    # ---- training ------------------------------------------------------------------
    def _reset(self, X, n_outputs):
        """Fresh weights, velocities, random stream and curves for a fit from scratch."""
        self._rng = check_random_state(self.random_state)
        sizes = [X.shape[1], *_hidden(self.hidden_layer_sizes), n_outputs]
        self.coefs_, self.intercepts_ = _init_params(self._rng, sizes, self.activation, X.dtype)
        self._velocity = ([np.zeros_like(c) for c in self.coefs_],
                          [np.zeros_like(b) for b in self.intercepts_])
        self.n_layers_ = len(sizes)
        self.n_outputs_ = n_outputs
        self.n_iter_ = 0
        self.n_steps_ = 0
        self.loss_curve_ = []
        self.best_loss_ = np.inf
        self._no_improvement = 0
        self.validation_scores_ = None
        self.best_validation_score_ = None

    def _check_continuable(self, X, what="partial_fit"):
        """A later partial_fit, or a fit with ``warm_start``: the number of features, the
        architecture and the dtype must be those of the network (X is cast to its dtype)."""
        n_in = self.coefs_[0].shape[0]
        if X.shape[1] != n_in:
            self.n_features_in_ = n_in        # a warm fit's validation reset it
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{n_in} features as input (the network's first layer; {what})")
        sizes = [X.shape[1], *_hidden(self.hidden_layer_sizes), self.n_outputs_]
        have = [n_in] + [c.shape[1] for c in self.coefs_]
        if sizes != have:
            raise ValueError(f"{type(self).__name__}: hidden_layer_sizes was changed to "
                             f"{self.hidden_layer_sizes!r} since the network was built "
                             f"(it has layers {have}); {what} cannot change it: call fit with "
                             "warm_start=False (or clone) to restart")
        return cast_to_model(self, X, self.coefs_[0].dtype, order="C")

    def _warm(self):
        """Does this fit continue from the current weights (``warm_start`` and fitted)?"""
        return bool(self.warm_start) and hasattr(self, "coefs_")

    @staticmethod
    def _weights(sample_weight, X, *arrays):
        """(sw, X, *arrays): ``sample_weight`` validated, its rows of weight 0 dropped (with
        those of X and the arrays); sw None for no weights or all ones (the unweighted
        path, bit for bit)."""
        if sample_weight is None:
            return (None, X, *arrays)
        sw = validate_sample_weight(sample_weight, X.shape[0])
        sw, X, *arrays = drop_zero_weight(sw, X, *arrays)
        if np.all(sw == 1.0):
            sw = None
        return (sw, X, *arrays)

    def _train_threads(self, batch):
        n_weights = sum(c.size for c in self.coefs_)
        return threads_for(self._n_threads(), batch * n_weights, NEURAL_GRAIN)

    def _epoch(self, X, Y, n_threads, sw=None):
        """One epoch over (X, Y) in a fresh random order; appends to loss_curve_.

        With weights s (``sw``, zero weights already dropped): row i's gradient is scaled by
        s_i / s_bar, s_bar the mean weight of the epoch's rows, and the epoch's loss is the
        weighted mean sum_i s_i l_i / sum_i s_i."""
        n = X.shape[0]
        order = self._rng.permutation(n).astype(np.intp, copy=False)
        mom = float(self.momentum)
        vc, vb = self._velocity if mom > 0 else ([], [])
        if sw is None:
            denom, sw_scale = float(n), 1.0
        else:
            denom = float(np.sum(sw))
            sw_scale = n / denom
        total, steps, status = _k.train_epoch(
            X, Y, order, self.coefs_, self.intercepts_, vc, vb, _ACT[self.activation], self._out,
            int(self.batch_size), float(self.learning_rate), _SCHED[self.schedule], mom,
            float(self.alpha), int(self.n_steps_), n_threads, sample_weight=sw, sw_scale=sw_scale)
        self.n_steps_ += steps
        self.n_iter_ += 1
        loss = float(total) / denom
        if self.alpha > 0:
            with np.errstate(over="ignore", invalid="ignore"):
                loss += 0.5 * float(self.alpha) * sum(float(np.dot(c.ravel().astype(np.float64), c.ravel()))
                                                      for c in self.coefs_)
        if status or not np.isfinite(loss):
            targets = ("" if type(self).__name__ != "MLPRegressor" else
                       "; large targets: scale them too (sklearn.compose.TransformedTargetRegressor("
                       "regressor=..., transformer=StandardScaler()))")
            raise DivergenceError(
                f"{type(self).__name__}: the loss or the weights became non-finite (overflow or NaN) "
                f"in epoch {self.n_iter_} after {self.n_steps_} SGD steps (003's SGD with a fixed "
                "step size); lower learning_rate (or momentum), or scale the features "
                f"(a Pipeline with sklearn.preprocessing.StandardScaler){targets}")
        self.loss_ = loss
        self.loss_curve_.append(self.loss_)

    def _run(self, X, Y, y_raw, incremental, sw=None):
        """fit (``incremental=False``: up to max_iter epochs with the stopping rules)
        or partial_fit (one epoch)."""
        # weights and velocities are trained in place, so they must be writeable (a model
        # unpickled from a read-only memmap is not) and cache-line aligned (_aligned_copy)
        for group in (self.coefs_, self.intercepts_, *self._velocity):
            group[:] = [a if a.flags.writeable and a.ctypes.data % _CACHE_LINE == 0 else _aligned_copy(a)
                        for a in group]
        batch = min(int(self.batch_size), X.shape[0])
        n_threads = self._train_threads(batch)
        # the kernel calls BLAS from its own threads, at every batch size (batch 1: a gemv per
        # layer in the backward pass, which OpenBLAS would split among threads of its own from
        # a few thousand entries on, however few the flops)
        with blas_single_thread():
            if incremental:
                self._epoch(X, Y, n_threads, sw)
                if self.best_loss_ is None:
                    self.best_loss_ = np.inf
                self.best_loss_ = min(self.best_loss_, self.loss_)
                return self
            return self._fit_epochs(X, Y, y_raw, n_threads, sw)

    def _fit_epochs(self, X, Y, y_raw, n_threads, sw=None):
        """scikit-learn's stopping rule. Without early stopping: an epoch whose training
        loss (``loss_curve_[-1]``) is not below ``best_loss_ - tol`` counts as no
        improvement; with early stopping, a validation score (accuracy / R^2 on a
        held-out ``validation_fraction`` of the data, stratified for classifiers, drawn
        from ``random_state``; weighted by ``sample_weight``) not above
        ``best_validation_score_ + tol``. Training stops when more than
        ``n_iter_no_change`` consecutive epochs brought no improvement; with early
        stopping the weights of the best validation score are restored.

        A warm-start fit continues the counters (``n_iter_``, ``n_steps_``, the count of
        epochs without improvement, ``best_loss_``, the curves), except that a model whose
        previous fit stopped by the rule starts counting afresh."""
        early = bool(self.early_stopping)
        if self._no_improvement > self.n_iter_no_change:
            self._no_improvement = 0
        if early:
            from sklearn.model_selection import train_test_split

            if int(np.ceil(self.validation_fraction * X.shape[0])) < 2 or X.shape[0] < 3:
                raise ValueError("The validation set is too small: increase validation_fraction "
                                 "or the number of samples")
            strat = y_raw if self._is_classifier() else None
            idx_tr, idx_val = train_test_split(np.arange(X.shape[0]), test_size=self.validation_fraction,
                                               random_state=self._rng, stratify=strat)
            X_val, y_val = X[idx_val], y_raw[idx_val]
            sw_val = None if sw is None else sw[idx_val]
            sw = None if sw is None else np.ascontiguousarray(sw[idx_tr])
            X, Y = np.ascontiguousarray(X[idx_tr]), np.ascontiguousarray(Y[idx_tr])
            if self.validation_scores_ is None:
                self.validation_scores_ = []
                self.best_validation_score_ = -np.inf
                best = None
            else:                                # warm start: the restored best weights
                best = ([c.copy() for c in self.coefs_], [b.copy() for b in self.intercepts_])
        elif self.best_loss_ is None:            # the previous fit used early stopping
            self.best_loss_ = np.inf
        converged = False
        bar = progress(range(self.max_iter), total=self.max_iter, desc=type(self).__name__,
                       verbose=self.verbose, unit="epoch")
        try:
            for _ in bar:
                self._epoch(X, Y, n_threads, sw)
                if early:
                    score = self.score(X_val, y_val, sample_weight=sw_val)
                    self.validation_scores_.append(score)
                    self._no_improvement = (self._no_improvement + 1
                                            if score < self.best_validation_score_ + self.tol else 0)
                    if score > self.best_validation_score_:
                        self.best_validation_score_ = score
                        best = ([c.copy() for c in self.coefs_], [b.copy() for b in self.intercepts_])
                else:
                    self._no_improvement = (self._no_improvement + 1
                                            if self.loss_ > self.best_loss_ - self.tol else 0)
                    self.best_loss_ = min(self.best_loss_, self.loss_)
                if bar is not None and hasattr(bar, "set_postfix"):
                    post = {"loss": f"{self.loss_:.5g}"}
                    if early:
                        post["val_score"] = f"{score:.4f}"
                    bar.set_postfix(post, refresh=False)
                if self._no_improvement > self.n_iter_no_change:
                    converged = True
                    break
        finally:
            if hasattr(bar, "close"):
                bar.close()
        if not converged:
            warnings.warn(f"{type(self).__name__}: max_iter={self.max_iter} reached and the "
                          "stopping rule was not met", ConvergenceWarning)
        if early:
            self.best_loss_ = None
            if best is not None:
                self.coefs_, self.intercepts_ = best
        return self

    def _is_classifier(self):
        return isinstance(self, ClassifierMixin)

    # ---- prediction ----------------------------------------------------------------
    def _scores(self, X):
        """The output layer's scores z (n, n_outputs) in the network's dtype."""
        check_is_fitted(self, "coefs_")
        X = validate_X(self, X, reset=False, dtype="floating")
        dtype = self.coefs_[0].dtype
        X = cast_to_model(self, X, dtype, order="C")
        out = np.empty((X.shape[0], self.n_outputs_), dtype=dtype)
        n_threads = threads_for(self._n_threads(), X.shape[0], PREDICT_GRAIN)
        n_weights = sum(c.size for c in self.coefs_)
        with blas_single_thread(work=2 * min(X.shape[0], 128) * n_weights * n_threads):
            _k.forward(X, self.coefs_, self.intercepts_, _ACT[self.activation], out, n_threads)
        return check_finite_output(self, out, "the network's output")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        # float32 input trains and predicts in float32 (predict_proba, predict_log_proba, the
        # regressor's predict); scikit-learn's only dtype tag lives in TransformerTags, which
        # a non-transformer may carry (it yields no transformer checks without ``transform``)
        tags.transformer_tags = TransformerTags(preserves_dtype=["float64", "float32"])
        return tags


class MLPClassifier(ClassifierMixin, _BaseMLP):
    """Feed-forward network classifier trained by SGD (003 section 14).

    Two classes: one output unit z and the logistic loss ln(1 + e^{-y z}) with
    y = +1 for ``classes_[1]``; predict ``classes_[1]`` when z > 0 (sgn(0) = -1,
    000 "Linear predictors"). More classes: one unit per class, softmax and the
    log loss -ln p_y; predict the class of largest score (the first on ties).
    Labels of any type.

    Parameters
    ----------
    hidden_layer_sizes : int or tuple of int, default=(100,)
        Widths of the hidden layers (an empty tuple: no hidden layer).
    activation : {"relu", "tanh", "sigmoid", "sign_sigmoid", "identity"}, default="relu"
        Of the hidden units. "sigmoid" is the logistic function 1 / (1 + e^{-z});
        "sign_sigmoid" is 003 section 14's (1 - e^{-z}) / (1 + e^{-z}) in [-1, 1].
    loss : {"log_loss"}, default="log_loss"
        Logistic loss (two classes) / softmax + log loss (more), natural log.
    batch_size : int, default=1
        1: 003's update, one example per step. b > 1: the step uses the mean
        gradient over b examples (the last batch of an epoch holds the rest);
        clipped to the number of samples.
    learning_rate : float, default=0.01
        eta of the schedule.
    schedule : {"constant", "inverse_sqrt", "inverse_t"}, default="constant"
        eta_t = eta, eta / sqrt(t) or eta / t, where t = 1, 2, ... counts the SGD
        steps since the first fit / partial_fit (``n_steps_``).
    momentum : float in [0, 1), default=0.0
        Classical momentum: v <- momentum v - eta_t g, w <- w + v (scikit-learn's
        ``nesterovs_momentum=False``); 0 is plain SGD.
    alpha : float, default=0.0
        The L2 penalty, 003 section 15's lambda (same value, same meaning): the objective
        of a step on a batch B is (1/|B|) sum_{t in B} l_t(w) + alpha / 2 ||W||^2, the
        squared norm over the connection weights (``coefs_``), the biases not penalised;
        its gradient adds alpha W, so a step is W <- (1 - eta_t alpha) W - eta_t g.
        scikit-learn's MLP divides its penalty by the batch's size (or weight sum):
        its objective is (1/|B|) (sum_t l_t + alpha_sk / 2 ||W||^2), so smml's alpha =
        alpha_sk / batch_size for the same steps (for the regressor, whose scikit-learn
        loss is half of smml's, alpha = 2 alpha_sk / batch_size with half the learning
        rate). The default 0 is the notes' unregularised SGD (scikit-learn: 1e-4).
    max_iter : int, default=200
        The largest number of epochs (passes over the data) of ``fit``; each epoch
        is ceil(n / batch_size) SGD steps.
    tol : float, default=1e-4
        scikit-learn's stopping rule (see ``_fit_epochs``): stop when more than
        ``n_iter_no_change`` consecutive epochs failed to lower the training loss by
        ``tol`` (``early_stopping=False``) or to raise the accuracy on a held-out,
        stratified ``validation_fraction`` by ``tol`` (then the best weights are kept).
    n_iter_no_change : int, default=10
        The number of epochs without improvement that stops training.
    early_stopping : bool, default=False
        Score the epochs on a held-out validation set instead of the training loss.
    validation_fraction : float, default=0.1
        The fraction of the training set held out with ``early_stopping``.
    warm_start : bool, default=False
        A later ``fit`` continues from the current weights (scikit-learn's MLP semantics:
        ``max_iter`` more epochs at most, ``n_iter_``, ``loss_curve_`` and the stopping
        rule's counters continue, the data must have the same features and, for the
        classifier, the same classes). Unlike scikit-learn, which restarts its optimiser,
        smml also keeps the velocities, the step count t of the ``schedule`` and the random
        stream of the epoch orders, so that (int ``random_state``, no ``early_stopping``,
        the stopping rule not met) ``fit`` with ``max_iter=a`` then a warm ``fit`` with
        ``max_iter=b`` gives the weights of one ``fit`` with ``max_iter=a + b``, bit for
        bit. With ``early_stopping`` each warm fit draws a new validation split.
    verbose : bool, int or "auto", default=0
        A progress bar (tqdm, on stderr) over the epochs of ``fit``, with the epoch's
        training loss (and validation score) in its postfix; "auto": only on a terminal.
        The epochs run one kernel call each either way, so the bar costs nothing when off.
    random_state : None, int, RandomState or Generator, default=None
        Draws, in this order: the initial weights (see ``_init_params``: He uniform for
        relu units, Glorot uniform otherwise, biases 0), the validation split, then one
        permutation of the examples per epoch.
    n_jobs : None or int, default=None
        Threads. Training splits each step's units over the threads (results are
        deterministic for a given seed, thread count and CPU instruction set; with
        ``batch_size=1`` they do not depend on the thread count); small networks run
        on one thread.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coefs_ : list of ndarray
        The connection weights, one (n_in, n_out) array per layer.
    intercepts_ : list of ndarray
        The biases, one (n_out,) array per layer.
    n_layers_ : int
        The number of layers (input and output included).
    n_outputs_ : int
        The number of output units.
    loss_curve_ : list of float
        Per epoch: the mean loss of the examples before their step (weighted:
        sum_i s_i l_i / sum_i s_i), plus alpha/2 ||W||^2 at the epoch's end.
    loss_ : float
        The last entry of ``loss_curve_``.
    best_loss_ : float or None
        The lowest training loss (None with ``early_stopping``).
    n_iter_ : int
        The number of epochs run.
    n_steps_ : int
        The number of SGD steps.
    validation_scores_ : list of float or None
        The validation score per epoch (with ``early_stopping``).
    best_validation_score_ : float or None
        The best validation score (with ``early_stopping``).

    Raises
    ------
    smml.linear.DivergenceError
        When the loss or a weight becomes non-finite.

    See Also
    --------
    sklearn.neural_network.MLPClassifier : scikit-learn's network classifier.

    Notes
    -----
    Float32 input trains a float32 network, whose ``predict_proba``,
    ``predict_log_proba`` (and the regressor's ``predict``) return float32; float64
    input, float64.

    ``sample_weight`` (of ``fit`` and ``partial_fit``): a row of weight 0 is dropped
    before anything else (so the fit equals the fit without that row, bit for bit);
    weights of all ones are the unweighted fit, bit for bit. Otherwise the weights
    normalise over the epoch: with s_bar the mean weight of the epoch's rows, a step on
    a batch B takes the gradient (1/|B|) sum_{t in B} (s_t / s_bar) grad l_t, whose mean
    over the epoch's steps is the gradient of the weighted mean loss
    sum_t s_t l_t / sum_t s_t; so at ``batch_size=1`` a row of weight 2 makes a step
    twice as long, as two copies of the row would make two steps in expectation.
    (scikit-learn's MLP normalises by each batch's weight sum instead, which at batch
    size 1 ignores the weights.) An integer weight equals that many copies of the row
    exactly when a batch holds the whole training set (``batch_size >= n``: full-batch
    gradient descent, the same steps up to rounding); with smaller batches the copies
    are shuffled into separate steps, so the two fits differ (equal in expectation).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.neural import MLPClassifier
    >>> X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = MLPClassifier(hidden_layer_sizes=(8,), activation="tanh", learning_rate=0.1,
    ...                     max_iter=500, random_state=0).fit(X, y)
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    >>> [w.shape for w in clf.coefs_]
    [(2, 8), (8, 1)]
    """

    _parameter_spec = {**_COMMON_SPEC, "loss": Options("log_loss")}

    def __init__(self, hidden_layer_sizes: int | tuple[int, ...] = (100,), activation: str = "relu",
                 loss: str = "log_loss", batch_size: int = 1, learning_rate: float = 0.01,
                 schedule: str = "constant", momentum: float = 0.0, alpha: float = 0.0,
                 max_iter: int = 200, tol: float = 1e-4, n_iter_no_change: int = 10,
                 early_stopping: bool = False, validation_fraction: float = 0.1,
                 warm_start: bool = False, verbose: bool | int | str = 0,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def _targets(self, y_enc, dtype):
        k = len(self.classes_)
        if k == 2:
            self._out = _k.OUT_LOGISTIC
            return np.where(y_enc == 1, 1, -1).astype(dtype).reshape(-1, 1)
        self._out = _k.OUT_SOFTMAX
        Y = np.zeros((len(y_enc), k), dtype=dtype)
        Y[np.arange(len(y_enc)), y_enc] = 1
        return Y

    def _set_classes(self, classes):
        if len(classes) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"the data contain only one class: {classes[0]!r}")
        self.classes_ = classes
        return 2 if len(classes) == 2 else len(classes)

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> MLPClassifier:
        """Train from scratch, or from the current weights with ``warm_start`` (see the
        class doc for the stopping rules and the weights).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples (None: all ones); a zero weight drops
            the row (its label then does not count for ``classes_``).

        Returns
        -------
        self : object
            The fitted MLPClassifier.
        """
        self._validate_params()
        warm = self._warm()
        X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
        self._check_target(y)
        sw, X, y = self._weights(sample_weight, X, y)
        classes, y_enc = encode_classes(y)
        if warm:
            if classes.tolist() != self.classes_.tolist():
                self.n_features_in_ = self.coefs_[0].shape[0]
                raise ValueError(f"warm_start can only be used where y has the same classes as in the "
                                 f"previous call to fit: previous classes {self.classes_.tolist()}, "
                                 f"y has {classes.tolist()}")
            X = self._check_continuable(X, "fit with warm_start=True")
        else:
            k = self._set_classes(classes)
            self._reset(X, 1 if k == 2 else k)
        return self._run(X, self._targets(y_enc, X.dtype), y, incremental=False, sw=sw)

    def partial_fit(self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> MLPClassifier:
        """One epoch over (X, y); ``classes`` (all the labels) is needed on the first call.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The chunk's examples.
        y : array-like of shape (n_samples,)
            The chunk's labels.
        classes : array-like, default=None
            Every label of the stream; required on the first call, ignored later.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the chunk's examples (see the class doc; normalised by the chunk's
            mean weight).

        Returns
        -------
        self : object
            The updated MLPClassifier.
        """
        self._validate_params()
        if self.early_stopping:
            raise ValueError("partial_fit does not support early_stopping=True")
        first = not hasattr(self, "coefs_")
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            X, y = validate_X_y(self, X, y, dtype="floating", classifier=True)
            self._check_target(y)
            k = self._set_classes(encode_classes(classes)[0])
            self._reset(X, 1 if k == 2 else k)
        else:
            X = self._check_continuable(validate_X(self, X, reset=False, dtype="floating"))
            y = np.asarray(y)
            if y.ndim != 1 or len(y) != X.shape[0]:
                raise ValueError(f"y must be 1-d with {X.shape[0]} entries, got shape {np.shape(y)}")
        y_enc = np.searchsorted(self.classes_, y)
        bad = (y_enc >= len(self.classes_)) | (self.classes_[np.minimum(y_enc, len(self.classes_) - 1)] != y)
        if np.any(bad):
            raise ValueError(f"y contains labels outside classes_ {self.classes_.tolist()}: "
                             f"{np.unique(np.asarray(y)[bad]).tolist()}")
        sw, X, y, y_enc = self._weights(sample_weight, X, y, y_enc)
        return self._run(X, self._targets(y_enc, X.dtype), y, incremental=True, sw=sw)

    @staticmethod
    def _check_target(y):
        kind = type_of_target(y, input_name="y")
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"MLPClassifier supports binary and multiclass targets, got {kind}")

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict ``classes_[1]`` where z > 0 (two classes), else the class of largest score.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted class labels.
        """
        z = self._scores(X)
        if z.shape[1] == 1:
            return self.classes_[(z[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(z, axis=1)]

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Return the class probabilities: [1 - s(z), s(z)] with the logistic s (two classes); more: softmax(z).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The class probabilities, columns in the order of ``classes_``.
        """
        z = self._scores(X)
        if z.shape[1] == 1:
            p = expit(z[:, 0])
            return np.column_stack([1 - p, p])
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X: ArrayLike) -> np.ndarray:
        """Return the logarithm of ``predict_proba``, computed stably from the scores.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            The log class probabilities, columns in the order of ``classes_``.
        """
        z = self._scores(X)
        if z.shape[1] == 1:
            return np.column_stack([log_expit(-z[:, 0]), log_expit(z[:, 0])])
        return z - logsumexp(z, axis=1, keepdims=True)


class MLPRegressor(RegressorMixin, _BaseMLP):
    """Feed-forward network regressor trained by SGD (003 section 14), square loss.

    Identity output units; the loss of an example is (z - y)^2, summed over the
    outputs for a 2-d y (note: scikit-learn's MLPRegressor uses half of it, so its
    steps are half as long at the same learning rate). ``predict`` returns (n,)
    for a 1-d y (or a y of one column), (n, n_outputs) otherwise. Every other
    parameter, attribute and rule as in :class:`MLPClassifier` (early stopping
    scores with R^2), except the default ``learning_rate=0.001``: the square loss's
    gradient grows with the targets, and 0.01 diverges on unscaled ones.

    Parameters
    ----------
    hidden_layer_sizes : int or tuple of int, default=(100,)
        Widths of the hidden layers (an empty tuple: no hidden layer).
    activation : {"relu", "tanh", "sigmoid", "sign_sigmoid", "identity"}, default="relu"
        Of the hidden units (see :class:`MLPClassifier`).
    loss : {"square"}, default="square"
        The square loss (z - y)^2.
    batch_size : int, default=1
        The examples per SGD step (1: 003's update).
    learning_rate : float, default=0.001
        eta of the schedule.
    schedule : {"constant", "inverse_sqrt", "inverse_t"}, default="constant"
        eta_t = eta, eta / sqrt(t) or eta / t.
    momentum : float in [0, 1), default=0.0
        Classical momentum (0 is plain SGD).
    alpha : float, default=0.0
        L2 penalty alpha / 2 ||W||^2 on the connection weights, 003 section 15's lambda
        (see :class:`MLPClassifier` for how it compares with scikit-learn's ``alpha``).
    max_iter : int, default=200
        The largest number of epochs of ``fit``.
    tol : float, default=1e-4
        The improvement the stopping rule asks for (see :class:`MLPClassifier`).
    n_iter_no_change : int, default=10
        The number of epochs without improvement that stops training.
    early_stopping : bool, default=False
        Score the epochs by R^2 on a held-out validation set instead of the training loss.
    validation_fraction : float, default=0.1
        The fraction of the training set held out with ``early_stopping``.
    warm_start : bool, default=False
        A later ``fit`` continues from the current weights (see :class:`MLPClassifier`);
        the targets must have the same number of outputs.
    verbose : bool, int or "auto", default=0
        A progress bar over the epochs of ``fit`` with the loss in its postfix.
    random_state : None, int, RandomState or Generator, default=None
        Draws the initial weights, the validation split and the orders of the examples.
    n_jobs : None or int, default=None
        Threads of training and prediction.

    Attributes
    ----------
    coefs_ : list of ndarray
        The connection weights, one (n_in, n_out) array per layer.
    intercepts_ : list of ndarray
        The biases, one (n_out,) array per layer.
    n_layers_ : int
        The number of layers (input and output included).
    n_outputs_ : int
        The number of output units.
    loss_curve_ : list of float
        The training loss per epoch.
    loss_ : float
        The last entry of ``loss_curve_``.
    n_iter_ : int
        The number of epochs run.
    n_steps_ : int
        The number of SGD steps.

    See Also
    --------
    sklearn.neural_network.MLPRegressor : scikit-learn's network regressor (half the square loss).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.neural import MLPRegressor
    >>> X = np.linspace(-1, 1, 20).reshape(-1, 1)
    >>> y = 2 * X[:, 0] + 1
    >>> reg = MLPRegressor(hidden_layer_sizes=(8,), learning_rate=0.01, max_iter=300,
    ...                    random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.99)
    True
    >>> reg.predict([[0.5]]).shape
    (1,)
    """

    _parameter_spec = {**_COMMON_SPEC, "loss": Options("square")}

    def __init__(self, hidden_layer_sizes: int | tuple[int, ...] = (100,), activation: str = "relu",
                 loss: str = "square", batch_size: int = 1, learning_rate: float = 0.001,
                 schedule: str = "constant", momentum: float = 0.0, alpha: float = 0.0,
                 max_iter: int = 200, tol: float = 1e-4, n_iter_no_change: int = 10,
                 early_stopping: bool = False, validation_fraction: float = 0.1,
                 warm_start: bool = False, verbose: bool | int | str = 0,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    _out = _k.OUT_SQUARE

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @staticmethod
    def _Y(y, dtype):
        return np.ascontiguousarray(np.asarray(y).reshape(len(y), -1), dtype=dtype)

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> MLPRegressor:
        """Train from scratch, or from the current weights with ``warm_start`` (see
        :class:`MLPClassifier` for the stopping rules and the weights).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            The targets (2-d: several outputs, one output unit each, trained together;
            the loss of an example is summed over them).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples (None: all ones; 0 drops the row).

        Returns
        -------
        self : object
            The fitted MLPRegressor.
        """
        self._validate_params()
        warm = self._warm()
        X, y = validate_X_y(self, X, y, dtype="floating", y_numeric=True, multi_output=True)
        sw, X, y = self._weights(sample_weight, X, y)
        if warm:
            X = self._check_continuable(X, "fit with warm_start=True")
        Y = self._Y(y, X.dtype)
        if warm:
            if Y.shape[1] != self.n_outputs_:
                raise ValueError(f"warm_start can only be used where y has the same number of outputs "
                                 f"as in the previous call to fit: {self.n_outputs_}, y has {Y.shape[1]}")
        else:
            self._reset(X, Y.shape[1])
        return self._run(X, Y, y, incremental=False, sw=sw)

    def partial_fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> MLPRegressor:
        """One epoch over (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The chunk's examples.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            The chunk's targets (the number of outputs of the first call).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the chunk's examples (see :class:`MLPClassifier`).

        Returns
        -------
        self : object
            The updated MLPRegressor.
        """
        self._validate_params()
        if self.early_stopping:
            raise ValueError("partial_fit does not support early_stopping=True")
        if not hasattr(self, "coefs_"):
            X, y = validate_X_y(self, X, y, dtype="floating", y_numeric=True, multi_output=True)
            Y = self._Y(y, X.dtype)
            self._reset(X, Y.shape[1])
        else:
            X = self._check_continuable(validate_X(self, X, reset=False, dtype="floating"))
            y = np.asarray(y, dtype=np.float64)
            Y = self._Y(y, X.dtype) if y.ndim in (1, 2) and len(y) == X.shape[0] else None
            if Y is None or Y.shape[1] != self.n_outputs_ or not np.all(np.isfinite(Y)):
                raise ValueError(f"y must be finite with {X.shape[0]} rows and {self.n_outputs_} "
                                 f"output(s), got shape {np.shape(y)}")
        sw, X, Y, y = self._weights(sample_weight, X, Y, y)
        return self._run(X, Y, y, incremental=True, sw=sw)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Predict the network's outputs z.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The examples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The predicted values.
        """
        z = self._scores(X)
        return z[:, 0] if self.n_outputs_ == 1 else z
