"""Least squares, ridge and logistic regression on dask arrays: the in-memory estimators of
:mod:`smml.linear`, their sums over the rows computed block by block on the workers (the same
routines as the in-memory fits) and added here in block order.

- Least squares / ridge: one pass over the blocks for n, the column sums, X^T X and X^T y
  of each block (a second one only when the data must be centred explicitly, or for the
  weighted centring), the sums added in block order, and the in-memory solve of the normal
  equations on the client.
- Logistic regression: the row blocks (validated, labels encoded) stay on the workers for the
  whole fit; scipy's L-BFGS-B runs here, and each evaluation of the objective is one round
  trip: every worker computes the loss-and-gradient sums of its blocks with the in-memory
  fit's routine (the compiled ``logistic_loss_sums``, or the multinomial ``_softmax_sums``)
  and the client adds them in block order.

A block's sums depend only on the block: the fit does not depend on which worker computes
which block, nor on the order they finish in. On one block it is the in-memory fit, bit for
bit; on several, the sums are added in another order than the in-memory run adds its rows, so
the fit equals the in-memory one to rounding (least squares) or to the solver's tolerance
(logistic regression).
"""
import contextlib

import inspect
from typing import Any, TypeVar

import numpy as np
import scipy.linalg
import scipy.optimize
import dask
import dask.array as da

from smml import linear as _lin
from smml._core import _linear as _k
from smml._core._sums import col_sums_continued
from smml._threads import blas_single_thread, effective_n_threads, threads_for
from smml._validation import _aligned
from smml._linear_sums import GRAIN as _GRAIN, raise_divergence as _raise_divergence
from smml._linear_sums import softmax_finish as _softmax_finish, softmax_sums as _softmax_sums
from smml.dask._actors import _LostWorker, _call_actors, _lost_as_error
from smml.dask._validation import _check_dask_X, _check_dask_y, _distributed_client, _split_rows


def _after_round(name):
    """Called after every round trip to the blocks (a hook for tests: a no-op)."""


def _c_aligned(a):
    return _aligned(np.ascontiguousarray(a, dtype=np.float64))


def _as_dask_array(a, name):
    """A dask DataFrame / Series as a dask array of known chunk sizes; anything else as is."""
    if hasattr(a, "to_dask_array") and not isinstance(a, da.Array):
        return a.to_dask_array(lengths=True)
    return a


def _worker_threads(n_jobs):
    try:
        from distributed import get_worker
        return max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError):
        return effective_n_threads(n_jobs)


_Self = TypeVar("_Self")

class _Block:
    """One row block of the training data, validated, kept (on a worker) for the whole fit:
    X (C-contiguous float64), y (float64 targets, or the labels as given), the row weights
    (None: all ones; the zero-weight rows dropped, as the in-memory fits drop them)."""

    def __init__(self, what, regression, Xb, yb, swb=None):
        X = _c_aligned(Xb)
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{what}: X contains NaN or infinity")
        y = np.asarray(yb)
        if regression:
            y = np.ascontiguousarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError(f"{what}: y contains NaN or infinity")
        elif y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise ValueError(f"{what}: y contains NaN or infinity")
        sw = None
        if swb is not None:
            sw = np.ascontiguousarray(swb, dtype=np.float64)
            if not np.all(np.isfinite(sw)) or np.any(sw < 0):
                raise ValueError(f"{what}: sample_weight must be finite and non-negative")
            keep = sw != 0
            if not np.all(keep):
                X, y, sw = _c_aligned(X[keep]), y[keep], sw[keep]
        self.X, self.y, self.sw = X, y, sw
        self._codes = self._slabs = self._ypm = None

    # ---- what the client asks of every block -------------------------------------------------
    def labels(self):
        """The block's distinct labels, and whether its weights are all ones."""
        return np.unique(self.y), self.sw is None or bool(np.all(self.sw == 1.0))

    def codes(self, classes):
        if self._codes is None:
            if len(self.y) and not np.all(np.isin(self.y, classes)):
                raise ValueError("y holds labels outside the classes found")      # pragma: no cover
            self._codes = np.searchsorted(classes, self.y).astype(np.intp)
        return self._codes

    def logistic(self, classes, c, w, fi, weighted, n_jobs):
        """The sums of problem c (classes_[c] +1, the others -1) at w, from the in-memory fit's
        compiled routine: the per-chunk sums (the kernel's slabs: gradient, intercept's
        gradient, loss; one row per CHUNK_ROWS rows), the weight sum and the status."""
        yk = self.codes(classes)
        if self._ypm is None or self._ypm[0] != c:
            self._ypm = (c, np.where(yk == c, 1.0, -1.0))
        X = self.X
        n_chunks = _k.n_chunks_for(X.shape[0])
        if X.shape[0] == 0:
            return np.zeros((0, X.shape[1] + 2)), 0.0, 0
        if self._slabs is None:
            self._slabs = np.empty((n_chunks, X.shape[1] + 2))
        g = np.empty(len(w))
        nt = threads_for(_worker_threads(n_jobs), n_chunks * _k.CHUNK_ROWS, _GRAIN)
        _, wsum, bad = _k.logistic_loss_sums(X, self._ypm[1], w, g, self._slabs, fi, nt,
                                             self.sw if weighted else None)
        return self._slabs, wsum, bad

    def softmax(self, classes, theta, K, fi, n, total_w):
        """The multinomial sums at theta (``_softmax_sums``; row weights s / total_w)."""
        yk = self.codes(classes)
        rw = None if total_w is None else self.sw / total_w
        if self.X.shape[0] == 0:
            d = self.X.shape[1]
            return 0.0, np.zeros((K, d)), (np.zeros(K) if fi else None)
        with blas_single_thread():
            return _softmax_sums(self.X, yk, theta, K, fi, n, rw)

    def ones(self):
        """Whether the block's weights are all ones (once the zero weights are dropped)."""
        return self.sw is None or bool(np.all(self.sw == 1.0))

    def weight_count(self):
        return self.X.shape[0]

    def weight_sum(self):
        return float(self.sw.sum()) if self.sw is not None else float(self.X.shape[0])

    def gram(self, fi):
        """Least squares, pass 1: n, column sums of X, sum of y, X^T X, X^T y (unweighted)."""
        X, y = self.X, self.y
        with np.errstate(over="ignore", invalid="ignore"):
            return (X.shape[0], X.sum(axis=0), float(y.sum()) if fi else 0.0, X.T @ X, X.T @ y)

    def weighted_means(self):
        """Weighted least squares, pass 1: sum s, s^T X, s^T y."""
        sw = self.sw if self.sw is not None else np.ones(self.X.shape[0])
        return float(sw.sum()), sw @ self.X, float(sw @ self.y)

    def centred_gram(self, X_mean, y_mean, weighted):
        """Pass 2: Xc^T Xc and Xc^T yc of the rows centred at the means (and scaled by
        sqrt(s) when ``weighted``), as the in-memory fit forms them."""
        with np.errstate(over="ignore", invalid="ignore"):
            if weighted:
                sw = self.sw if self.sw is not None else np.ones(self.X.shape[0])
                r = np.sqrt(sw)
                Xc, yc = (self.X - X_mean) * r[:, None], (self.y - y_mean) * r
            else:
                Xc, yc = self.X - X_mean, self.y - y_mean
            return Xc.T @ Xc, Xc.T @ yc


class _Group:
    """Consecutive row blocks held by one worker (a Dask actor on a distributed cluster: the
    client calls it directly, without a task per call) or by this process."""

    def __init__(self, *blocks):
        self.blocks = blocks

    def call(self, method, args):
        """``method`` of each block, in block order."""
        return [getattr(b, method)(*args) for b in self.blocks]


class _Blocks:
    """The blocks of a fit: on a distributed client, futures of :class:`_Block` (consecutive
    blocks per worker, about as many rows each), which keep their lineage, and one
    :class:`_Group` actor per worker over its blocks; on dask's local schedulers, one group of
    this process. ``call`` runs a method on every block (one call per group) and returns the
    results in block order. A worker lost during a call: its blocks are recomputed from their
    lineage, the actors are made again and the call is repeated (each call depends only on
    its arguments and the blocks: the same results); after two such losses, a RuntimeError."""

    RETRIES = 2

    def __init__(self, what, regression, X, y, sw):
        self.what = what
        self.client = _distributed_client()
        self.lost = 0
        self.futures, self.actor_futures, self.groups = [], [], []
        parts = [X.to_delayed().ravel(), y.to_delayed().ravel()]
        if sw is not None:
            parts.append(sw.to_delayed().ravel())
        make = dask.delayed(_Block, pure=True)
        blocks = [make(what, regression, *p) for p in zip(*parts)]
        if self.client is None:
            self.groups = [_Group(*dask.compute(*blocks))]
            return
        from distributed import wait
        workers = sorted(self.client.nthreads())
        bounds = _split_rows([int(c) for c in X.chunks[0]], max(1, len(workers)))
        self.where = []
        for g in range(len(bounds) - 1):
            where = dict(workers=[workers[g]], allow_other_workers=True) if workers else {}
            self.futures.append(self.client.compute(blocks[bounds[g]:bounds[g + 1]], **where))
            self.where.append(where)
        try:
            wait([f for grp in self.futures for f in grp])
            for f in (f for grp in self.futures for f in grp):
                if f.status == "error":
                    f.result()      # the blocks' validation errors (NaN ...), as the in-memory fit raises them
            self._make_actors()
        except Exception:
            self.release()
            raise

    def _make_actors(self):
        while True:
            try:
                with _lost_as_error():
                    for f in self.actor_futures:
                        f.release()
                    self.actor_futures = [self.client.submit(_Group, *grp, actor=True, pure=False, **where)
                                          for grp, where in zip(self.futures, self.where)]
                    self.groups = [f.result() for f in self.actor_futures]
                return
            except _LostWorker as exc:
                self._lost(exc)

    def _lost(self, exc):
        self.lost += 1
        if self.lost > self.RETRIES:
            raise RuntimeError(f"{self.what}: a worker holding part of the data was lost during the "
                               f"fit ({self.lost} times); no model was fitted") from exc

    def call(self, method, *args):
        if self.client is None:
            out = self.groups[0].call(method, args)
        else:
            while True:
                try:
                    with _lost_as_error():
                        got = self.client.sync(_call_actors, self.groups, "call", [(method, args)] * len(self.groups))
                    break
                except _LostWorker as exc:
                    # a worker is gone: its blocks come back from their lineage, the actors
                    # are made again and the same call is repeated
                    self._lost(exc)
                    self._make_actors()
            out = [r for grp in got for r in grp]
        _after_round(method)
        return out

    def gather(self):
        """Every block, here (the d > n least-squares fits only: small data)."""
        if self.client is None:
            return list(self.groups[0].blocks)
        return self.client.gather([f for grp in self.futures for f in grp])

    def release(self):
        self.groups = []
        for f in self.actor_futures:
            f.release()
        for grp in self.futures:
            for f in grp:
                f.release()
        self.actor_futures, self.futures = [], []


@contextlib.contextmanager
def _blocks_of(est, X, y, sample_weight, regression):
    """Validated dask inputs and their blocks on the workers, released at the end."""
    what = f"smml.dask.{type(est).__name__}"
    X = _check_dask_X(_as_dask_array(X, "X"))
    y = _as_dask_array(y, "y")
    y = _check_dask_y(y, X.shape[0], X.chunks[0])
    sw = None
    if sample_weight is not None:
        sample_weight = _as_dask_array(sample_weight, "sample_weight")
        if not isinstance(sample_weight, da.Array):
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.ndim == 0:
                sample_weight = np.full(X.shape[0], float(sample_weight))
        try:
            sw = _check_dask_y(sample_weight, X.shape[0], X.chunks[0])
        except ValueError as exc:
            raise ValueError(str(exc).replace("y ", "sample_weight ", 1).replace("and y", "and sample_weight"))
    est.n_features_in_ = X.shape[1]
    for attr in ("feature_names_in_",):
        if hasattr(est, attr):
            delattr(est, attr)
    blocks = _Blocks(what, regression, X, y, sw)
    if sw is None:
        blocks._n = X.shape[0]
    try:
        yield blocks, X.shape
    finally:
        blocks.release()


def _fold(parts):
    """The sum of ``parts`` (arrays or floats) added left to right, in block order."""
    it = iter(parts)
    acc = next(it)
    acc = acc.copy() if isinstance(acc, np.ndarray) else acc
    for p in it:
        acc = acc + p
    return acc


# ---- least squares and ridge ---------------------------------------------------------------------

class _LeastSquaresFit:
    """fit of :class:`LinearRegression` and :class:`RidgeRegression` on dask arrays."""

    def fit(self: _Self, X: Any, y: Any, sample_weight: Any = None) -> _Self:
        """Fit on dask arrays (or DataFrames); the sums over the rows are computed block by
        block on the workers and added in block order, the normal equations solved here.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)
            The training examples, numeric, finite; one block of columns (rechunked otherwise).
        y : dask array or array-like of shape (n_samples,)
            The targets (rechunked as the row blocks of X).
        sample_weight : dask array or array-like of shape (n_samples,), default=None
            Weights of the examples (None: all ones), as in the in-memory fit.

        Returns
        -------
        self : object
            The fitted estimator (an in-memory model: predict, save and load as the
            in-memory one).
        """
        self._validate_params()
        alpha = float(self.get_params().get("alpha", 0.0))
        fi = bool(self.fit_intercept)
        with _blocks_of(self, X, y, sample_weight, regression=True) as (blocks, (n, d)):
            weighted = sample_weight is not None and not all(blocks.call("ones"))
            if d > _rows(blocks):
                # d > m: the in-memory fit works on the rows themselves (lstsq or the m x m
                # kernel form): such data fit in memory, they are gathered
                return self._fit_gathered(blocks, sample_weight is not None)
            if weighted:
                w, X_mean, y_mean = self._weighted(blocks, alpha)
            else:
                w, X_mean, y_mean = self._unweighted(blocks, fi, alpha)
        self._set(w, X_mean, y_mean)
        return self

    def _fit_gathered(self, blocks, has_weights):
        Xs = blocks.gather()
        X = np.concatenate([b.X for b in Xs])
        y = np.concatenate([b.y for b in Xs])
        sw = (np.concatenate([b.sw if b.sw is not None else np.ones(len(b.y)) for b in Xs])
              if has_weights else None)
        return type(self)._saved_as.fit(self, X, y, sample_weight=sw)

    def _solve_gram(self, A, b, alpha, n, d):
        """The in-memory fits' solve of the (centred) normal equations."""
        if alpha > 0:                      # RidgeRegression (the in-memory class's solve)
            self.solver_ = "closed_form"
            return self._ridge_solve(A, b, alpha)
        import warnings
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
                w = scipy.linalg.solve(A, b, assume_a="pos", check_finite=False)
            self.solver_ = "normal_equations"
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning, ValueError):
            # the pseudo-inverse of 002 as (S^T S)^+ S^T y from the eigenvalues of S^T S (the
            # in-memory fit takes the SVD of S itself, which is not at hand here): the same
            # minimum-norm vector, to rounding; eigenvalues below max(n, d) eps lambda_max are
            # taken as zero
            lam, V = scipy.linalg.eigh(A, check_finite=False)
            keep = lam > max(n, d) * np.finfo(np.float64).eps * max(lam.max(), 0.0)
            w = V[:, keep] @ ((V[:, keep].T @ b) / lam[keep])
            self.solver_ = "pseudo_inverse"
        return w

    def _unweighted(self, blocks, fi, alpha):
        parts = blocks.call("gram", fi)
        n = int(sum(p[0] for p in parts))
        with np.errstate(over="ignore", invalid="ignore"):
            A = _fold([p[3] for p in parts])
            Xty = _fold([p[4] for p in parts])
            d = A.shape[0]
            if not fi:
                X_mean, y_mean, b = np.zeros(d), 0.0, Xty
            else:
                # _centered_gram's rule: A = X^T X - n mu mu^T when no column loses more than
                # one bit to it, else the rows centred explicitly (a second pass)
                mu = _fold([p[1] for p in parts]) / n
                y_mean = _fold([p[2] for p in parts]) / n
                X_mean = mu
                dA = np.diag(A).copy()
                A -= n * np.outer(mu, mu)
                if np.all(np.diag(A) >= 0.5 * dA):
                    b = Xty - n * y_mean * mu
                else:
                    parts = blocks.call("centred_gram", mu, y_mean, False)
                    A, b = _fold([p[0] for p in parts]), _fold([p[1] for p in parts])
        return self._solve_gram(A, b, alpha, n, d), X_mean, y_mean

    def _weighted(self, blocks, alpha):
        parts = blocks.call("weighted_means")
        total = _fold([p[0] for p in parts])
        if self.fit_intercept:
            X_mean = _fold([p[1] for p in parts]) / total
            y_mean = _fold([p[2] for p in parts]) / total
        else:
            X_mean, y_mean = np.zeros(len(parts[0][1])), 0.0
        parts = blocks.call("centred_gram", X_mean, y_mean, True)
        with np.errstate(over="ignore", invalid="ignore"):
            A, b = _fold([p[0] for p in parts]), _fold([p[1] for p in parts])
        n = _rows(blocks)
        return self._solve_gram(A, b, alpha, n, A.shape[0]), X_mean, y_mean

    def _check_gram(self, A, b):
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
            raise ValueError(f"{type(self).__name__}: S^T S overflows float64 (features or targets "
                             "of magnitude ~1e154 or more); rescale the features")


def _rows(blocks):
    """The training rows (after dropping zero weights)."""
    if not hasattr(blocks, "_n"):
        blocks._n = int(sum(blocks.call("weight_count")))
    return blocks._n


class LinearRegression(_LeastSquaresFit, _lin.LinearRegression):
    """Least squares on dask arrays: :class:`smml.linear.LinearRegression` fitted on a cluster.

    The parameters, ``predict``, ``score`` and the fitted attributes are the in-memory
    estimator's (this class only overrides ``fit``); ``smml.save`` writes the fitted model as
    an in-memory :class:`smml.linear.LinearRegression`, which loads without dask.

    Each row block of X (on the worker that holds it) gives its row count, column sums, sum
    of y, X^T X and X^T y; these are added in block order (whichever worker finishes first)
    and the centred normal equations are solved here exactly as the in-memory fit solves them
    (000 "Linear regression"; 001, normal equations; ``_centered_gram``'s centring rule, the
    explicit centring in a second pass over the blocks when it applies). With one block the
    model is the in-memory one bit for bit; with several, to rounding (the sums are grouped
    differently). Two departures, both where the in-memory fit works on the rows themselves:
    a singular S^T S gives the pseudo-inverse of 002 from the eigenvalues of S^T S (the
    in-memory fit takes the SVD of S: the same minimum-norm vector, to rounding), and more
    features than rows gathers the (then small) data here and runs the in-memory fit.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the constant feature 1; its weight is the intercept.
    n_jobs : None or int, default=None
        Threads of ``predict`` (and of the kernels on dask's local schedulers).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    solver_ : str
        ``"normal_equations"`` or ``"pseudo_inverse"``.

    See Also
    --------
    smml.linear.LinearRegression : the in-memory estimator.
    dask_ml.linear_model.LinearRegression : dask-ml's (iterative) least squares.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> import smml.dask
    >>> X = np.arange(8.0).reshape(-1, 1)
    >>> y = 2 * X[:, 0] + 1
    >>> reg = smml.dask.LinearRegression().fit(da.from_array(X, chunks=3), da.from_array(y, chunks=3))
    >>> print(f"{reg.coef_[0]:.3f} {reg.intercept_:.3f}")
    2.000 1.000
    >>> reg.predict(np.array([[10.0]])).round(6).tolist()
    [21.0]
    """

    _saved_as = _lin.LinearRegression


class RidgeRegression(_LeastSquaresFit, _lin.RidgeRegression):
    """Ridge regression on dask arrays: :class:`smml.linear.RidgeRegression` fitted on a cluster.

    The closed form w = (alpha I + S^T S)^{-1} S^T y of 000, "Ridge Regression", with S^T S
    and S^T y summed over the row blocks in block order (see :class:`LinearRegression`: the
    same sums, the same centring) and the in-memory Cholesky solve here. Parameters, predict,
    attributes and ``smml.save`` are those of :class:`smml.linear.RidgeRegression`;
    ``alpha=0`` is least squares. More features than rows: the data are gathered here and the
    in-memory fit runs.

    Parameters
    ----------
    alpha : float, default=1.0
        The penalty alpha >= 0 on ||w||^2 (scikit-learn's ``Ridge(alpha)``; 002's lambda is
        alpha / n).
    fit_intercept : bool, default=True
        Add the constant feature 1 (its weight is not penalised).
    n_jobs : None or int, default=None
        Threads of ``predict``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    intercept_ : float
        The intercept (0.0 without ``fit_intercept``).
    solver_ : str
        ``"closed_form"`` (or LinearRegression's solver when ``alpha=0``).

    See Also
    --------
    smml.linear.RidgeRegression : the in-memory estimator.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> import smml.dask
    >>> X = np.array([[0.], [1.], [2.], [3.]])
    >>> y = np.array([1., 3., 5., 7.])
    >>> reg = smml.dask.RidgeRegression(alpha=1.0).fit(da.from_array(X, chunks=2), y)
    >>> print(f"{reg.coef_[0]:.3f} {reg.intercept_:.3f}")
    1.667 1.500
    """

    _saved_as = _lin.RidgeRegression


# ---- logistic regression -------------------------------------------------------------------------

def _strength(est):
    """The regularisation strength of LogisticRegression (``alpha``, the notes' lambda)."""
    return float(est.alpha)


class LogisticRegression(_lin.LogisticRegression):
    """Logistic regression on dask arrays: :class:`smml.linear.LogisticRegression`'s L-BFGS
    fit, the rows kept on the workers.

    The objective, parameters, ``predict`` / ``predict_proba`` and fitted attributes are the
    in-memory estimator's (binary, one-vs-rest and ``multi_class="softmax"``); ``smml.save``
    writes the fitted model as an in-memory :class:`smml.linear.LogisticRegression`, which
    loads without dask.

    The row blocks (validated, zero-weight rows dropped, labels encoded on first use) stay on
    the workers for the whole fit, consecutive blocks per worker. scipy's L-BFGS-B runs on
    the client with the in-memory options; each evaluation of the objective is one round trip
    in which every worker computes, for each of its blocks, the loss and gradient sums with
    the in-memory fit's routine (the compiled ``logistic_loss_sums``: the kernel of the
    in-memory loss without its final scaling; for softmax ``_softmax_sums``), and the client
    adds the blocks' sums in block order, then scales and adds the penalty as the in-memory
    fit does. One block: the in-memory fit bit for bit. Several blocks: the same objective,
    its sums grouped by block, so the fit equals the in-memory one to the solver's tolerance.
    One-vs-rest problems are solved one after the other, as in memory.

    A worker lost during the fit: its blocks are recomputed from their lineage on the other
    workers and the fit goes on (the same sums, so the same model), or, when the scheduler
    gives up on them, the fit raises a RuntimeError; never a different model. ``solver="sgd"``
    (like Pegasos and the Perceptron) is a single stream over the rows and is not distributed:
    it raises here; use the in-memory estimator.

    Parameters
    ----------
    (those of smml.linear.LogisticRegression, copied here from its docstring at import)

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (1, d) or (n_classes, d)
        The weights.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts.
    n_iter_ : int or ndarray of shape (n_classes,)
        L-BFGS iterations; one per class for one-vs-rest.

    See Also
    --------
    smml.linear.LogisticRegression : the in-memory estimator.
    dask_ml.linear_model.LogisticRegression : dask-ml's (dask-glm) logistic regression.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> import smml.dask
    >>> X = np.array([[-2., -1.], [-1., -2.], [1., 2.], [2., 1.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = smml.dask.LogisticRegression().fit(da.from_array(X, chunks=2), da.from_array(y, chunks=2))
    >>> clf.predict(np.array([[3., 3.], [-3., -3.]])).tolist()
    [1, 0]
    """

    _saved_as = _lin.LogisticRegression

    def fit(self: _Self, X: Any, y: Any, sample_weight: Any = None) -> _Self:
        """Minimise the in-memory objective by L-BFGS, the sums over the rows computed on the
        workers (see the class docstring).

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)
            The training examples, numeric, finite; one block of columns (rechunked otherwise).
        y : dask array or array-like of shape (n_samples,)
            The labels (rechunked as the row blocks of X).
        sample_weight : dask array or array-like of shape (n_samples,), default=None
            Weights of the examples (None: all ones), as in the in-memory fit.

        Returns
        -------
        self : object
            The fitted LogisticRegression.
        """
        self._validate_params()
        if self.solver != "lbfgs":
            raise ValueError(f"smml.dask.LogisticRegression fits by L-BFGS only (solver='lbfgs'); "
                             f"solver={self.solver!r} is a single stream over the rows: use "
                             "smml.linear.LogisticRegression")
        lam = _strength(self)
        fi = bool(self.fit_intercept)
        with _blocks_of(self, X, y, sample_weight, regression=False) as (blocks, (n, d)):
            stats = blocks.call("labels")
            labels = [s[0] for s in stats if len(s[0])]
            classes = np.unique(np.concatenate(labels)) if labels else np.array([])
            weighted = not all(s[1] for s in stats)
            self._check_classes(classes)
            self.classes_ = classes
            K = len(classes)
            self._softmax = K > 2 and self.multi_class == "softmax"
            if self._softmax:
                self._fit_softmax_blocks(blocks, classes, K, d, fi, lam, weighted)
                return self
            problems = [1] if K == 2 else list(range(K))
            fits = [self._lbfgs_blocks(blocks, classes, c, d, fi, lam, weighted) for c in problems]
        W = np.array([w for w, _ in fits])
        n_iter = np.array([it for _, it in fits])
        self.n_iter_ = int(n_iter[0]) if K == 2 else n_iter
        self._set_problems(W, d)
        return self

    def _check_classes(self, classes):
        from sklearn.utils.multiclass import type_of_target
        if len(classes) < 2:
            shown = f": {classes[0]!r}" if len(classes) else ""
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"the data contain only one class{shown}")
        y_type = type_of_target(classes, input_name="y")
        if y_type not in ("binary", "multiclass"):
            raise ValueError(f"{type(self).__name__}: unsupported target type {y_type!r}: expected "
                             "binary or multiclass labels")

    def _lbfgs_blocks(self, blocks, classes, c, d, fi, lam, weighted):
        p = d + fi
        n_jobs = self.n_jobs

        def fun(w):
            w = np.ascontiguousarray(w, dtype=np.float64)
            parts = blocks.call("logistic", classes, c, w, fi, weighted, n_jobs)
            if any(q[2] for q in parts):
                _raise_divergence(self, "while evaluating the loss", "rescale the features")
            # the chunks' sums added in row order, as the in-memory kernel adds them (from 0.0)
            acc = np.zeros(d + 2)
            col_sums_continued(np.concatenate([q[0] for q in parts]), acc)
            g = np.ascontiguousarray(acc[:p])
            val = _k.logistic_finish(acc[d + 1], _fold([q[1] for q in parts]), w, g, lam, d)
            return val, g

        with blas_single_thread():
            res = scipy.optimize.minimize(fun, np.zeros(p), jac=True, method="L-BFGS-B",
                                          options=self._options())
        return res.x, int(res.nit)

    def _fit_softmax_blocks(self, blocks, classes, K, d, fi, lam, weighted):
        total_w = _fold(blocks.call("weight_sum")) if weighted else None
        n = _rows(blocks)

        def fun(theta):
            parts = blocks.call("softmax", classes, theta, K, fi, n, total_w)
            loss = _fold([q[0] for q in parts])
            GX = _fold([q[1] for q in parts])
            Gb = _fold([q[2] for q in parts]) if fi else None
            return _softmax_finish(self, loss, GX, Gb, theta, K, d, n, total_w is None, lam)

        with blas_single_thread():
            res = scipy.optimize.minimize(fun, np.zeros(K * (d + fi)), jac=True, method="L-BFGS-B",
                                          options=self._options())
        self.coef_ = res.x[:K * d].reshape(K, d).copy()
        b = res.x[K * d:] if fi else np.zeros(K)
        self.intercept_ = b - b.mean()
        self.n_iter_ = int(res.nit)


def _parameters_of(cls):
    """Put the Parameters section of the in-memory estimator's docstring into ``cls``'s (the
    parameters are the in-memory estimator's, whatever their names). Both docstrings are taken
    through ``inspect.cleandoc`` (Python 3.13 strips their indentation when it compiles them,
    earlier versions do not), so the result is the same on every version."""
    def section(doc):
        start = doc.index("Parameters\n----------\n")
        return start, doc.index("Attributes\n----------\n", start)

    base = inspect.cleandoc(cls._saved_as.__doc__)
    own = inspect.cleandoc(cls.__doc__)
    a, b = section(base)
    c, e = section(own)
    cls.__doc__ = own[:c] + base[a:b] + own[e:]
    return cls


_parameters_of(LogisticRegression)
