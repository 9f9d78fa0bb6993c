"""The kernel Perceptron (003 section 11, Algorithm 4)."""
from typing import TypeVar

import numpy as np

from smml._typing import RandomStateLike
from numpy.typing import ArrayLike

from smml._core import _kernel_methods as _k
from smml._random import check_rng
from smml._validation import BOOL, N_JOBS, RANDOM_STATE, Interval, Options

from smml.kernels._base import (CACHE_SIZE, KERNEL_SPEC, KernelClassifierBase, RowCacheArrays, cache_rows,
                                problem_signs, stream_chunk, user_kernel)
from smml.base import store_params


def run_rows(est, kern, Xp, cache, step):
    """Call a resumable compiled loop ``step(pos) -> (pos, need, ...)`` until it
    finishes, computing each row it reports missing (user kernels) into the cache."""
    pos, out = 0, None
    while True:
        out = step(pos)
        pos, need = out[0], out[1]
        if need < 0:
            return out
        cache.put(need, user_kernel(kern, Xp[need:need + 1], Xp, type(est).__name__)[0])


_Self = TypeVar("_Self")

class KernelPerceptron(KernelClassifierBase):
    """The kernel Perceptron, 003 section 11, Algorithm 4, exactly.

    S = {} (a multiset); for each example t in turn: y_hat = sgn(sum_{s in S}
    y_s K(x_s, x_t)) with sgn(0) = -1 (000, "Linear predictors"); if y_hat !=
    y_t, S <- S + {t}. The stream is the training set in epochs, in the given
    order (``shuffle=False``) or in a new random order per epoch drawn from
    ``random_state`` (as :class:`smml.linear.Perceptron`); training stops after
    an epoch without mistakes (``converged_``) or after ``max_iter`` epochs.
    The predictor is sgn(sum_{s in S} y_s K(x_s, x)).

    ``partial_fit(X, y, classes)``: Algorithm 4 on a stream of chunks, each row
    visited once in the given order: a stream of calls is one pass (one epoch,
    ``shuffle=False``) over the concatenation of the chunks. Only S is kept (its
    rows); the scores of a new chunk are summed member by member in the order the
    members joined S, which is the order in which ``fit`` adds their kernel rows,
    so the stream takes the same decisions as ``fit(max_iter=1)`` on the
    concatenation, bit for bit when the kernel values are the same. The kernel is
    fixed by the first chunk: ``gamma="scale"`` / ``"auto"`` are resolved on it,
    and the Gaussian's rows are centred on its mean (``fit`` centres on the whole
    training set's mean: the kernel values then differ by rounding only). No
    ``budget`` on a stream (a budget's removals would have to be replayed too).

    No ``sample_weight``: Algorithm 4 is mistake-driven and the notes define no
    weighted version. A weight as a longer step (S <- S + w_t copies of t) is not
    w_t copies of the row in the stream (after the first copy's update the next
    copy may be no mistake), so neither reading would keep "an integer weight is
    that many rows"; repeat the rows instead.

    Note the mistake test of Algorithm 4, y_hat != y_t: a score of exactly 0 is
    a prediction of -1, hence *not* a mistake on a -1 example (Algorithm 2, the
    linear Perceptron of 000, updates on y_t w.x_t <= 0, which includes it).

    On a training set separated with margin 1 by some g in H_K (y_t g(x_t) >= 1),
    the number of mistakes is at most ||g||_K^2 max_t K(x_t, x_t) (003 section
    11; :func:`smml.bounds.kernel_perceptron_convergence_bound`), and on any
    stream at most the hinge-loss bound of
    :func:`smml.bounds.kernel_perceptron_mistake_bound`.

    Implementation: g_t = sum_{s in S} y_s K(x_s, x_t) is kept for every
    training point and updated with one kernel row per mistake; rows come from a
    least-recently-used cache of at most ``cache_size`` megabytes (never an
    m x m matrix unless it fits that budget).

    Parameters
    ----------
    kernel : "rbf", "poly", "linear", "gaussian", "polynomial" or callable, default="rbf"
        ``"rbf"`` (or the notes' ``"gaussian"``): exp(-gamma ||x - x'||^2);
        ``"poly"`` (or ``"polynomial"``): 003's (1 + x.x')^degree, scikit-learn's ``poly``
        kernel with gamma=1 and coef0=1 (``gamma`` does not apply to it);
        ``"linear"``: x.x'; or ``f(A, B) -> (len(A), len(B))`` Gram block (003 section 11).
    degree : int >= 1, default=3
        The degree of the polynomial kernel.
    gamma : float > 0, "scale" or "auto", default="scale"
        scikit-learn's ``gamma`` of the Gaussian kernel exp(-gamma ||x - x'||^2). 003
        writes K_g(x, x') = exp(-||x - x'||^2 / (2 g)) with a width g: g = 1 / (2 gamma).
        "scale" is 1 / (d Var(X)), "auto" 1 / d (d features), as scikit-learn.
    max_iter : int, default=1000
        The largest number of epochs (passes over the training set).
    shuffle : bool, default=False
        Visit the examples in a fresh random order every epoch.
    random_state : None, int or Generator, default=None
        Seed of the random orders (used with ``shuffle=True``).
    budget : None or int >= 1
        Keep at most ``budget`` members in S (with multiplicity): when S is full,
        its oldest member leaves before the new one joins (a first-in first-out
        budget; the notes define none). ``None``: no limit, Algorithm 4.
    cache_size : float, default=256
        Megabytes of cached kernel rows.
    n_jobs : None or int, default=None
        Threads of ``decision_function`` (training is sequential).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    gamma_ : float
        The gamma used (``gamma`` resolved).
    support_ : ndarray of shape (n_SV,)
        Indices of the training points in S; one-vs-rest: the union over classes.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The training points in S.
    support_counts_ : ndarray of shape (n_SV,) or (n_classes, n_SV)
        The multiplicity of each point in S.
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        y_s times the multiplicity of s.
    intercept_ : ndarray of shape (n_problems,)
        Zeros (Algorithm 4 has no intercept).
    n_mistakes_ : int or ndarray of shape (n_classes,)
        The number of mistakes (one per class for one-vs-rest).
    n_iter_ : int or ndarray of shape (n_classes,)
        The number of epochs run (one per class for one-vs-rest; 1 after ``partial_fit``).
    converged_ : bool or ndarray of shape (n_classes,)
        Whether the last epoch made no mistake (one per class for one-vs-rest).

    See Also
    --------
    smml.linear.Perceptron : The linear Perceptron.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.kernels import KernelPerceptron
    >>> X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = KernelPerceptron(kernel="rbf", gamma=5.0).fit(X, y)
    >>> clf.converged_
    True
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _parameter_spec = {**KERNEL_SPEC, "max_iter": Interval(int, 1, None), "shuffle": BOOL,
                       "random_state": RANDOM_STATE,
                       "budget": (Options(None), Interval(int, 1, None)),
                       "cache_size": CACHE_SIZE, "n_jobs": N_JOBS}

    def __init__(self, kernel: str = "rbf", degree: int = 3, gamma: float | str = "scale",
                 max_iter: int = 1000, shuffle: bool = False, random_state: RandomStateLike = None, budget: int | None = None,
                 cache_size: float = 256.0, n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def _run(self, kern, Xp, norms, y_pm, rng, cache):
        m = Xp.shape[0]
        y8 = y_pm.astype(np.int8)
        g = np.zeros(m)
        counts = np.zeros(m, dtype=np.int64)
        # S never holds more than m * max_epochs members: a larger budget is no budget at all
        ring = np.zeros(0 if self.budget is None else min(self.budget, m * self.max_iter), dtype=np.intp)
        ring_state = np.zeros(2, dtype=np.int64)
        order = np.arange(m, dtype=np.intp)
        mistakes, epochs, converged = 0, 0, False
        for _ in range(self.max_iter):
            if self.shuffle:
                order = rng.permutation(m).astype(np.intp, copy=False)
            made = [0]

            def step(pos, order=order, made=made):
                out = _k.perceptron_run(Xp, norms, kern.code, kern.degree, kern.scale, y8, order, pos,
                                        g, counts, *cache.args(), ring, ring_state)
                made[0] += out[2]
                return out

            run_rows(self, kern, Xp, cache, step)
            epochs += 1
            mistakes += made[0]
            if made[0] == 0:
                converged = True
                break
        return counts, mistakes, epochs, converged

    def fit(self: _Self, X: ArrayLike, y: ArrayLike) -> _Self:
        """Run Algorithm 4 (one kernel Perceptron per class for more than two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.

        Returns
        -------
        self : object
            The fitted KernelPerceptron.
        """
        X, problems, kern, Xp, norms = self._fit_start(X, y)
        cache = self._row_cache(Xp)
        rng = check_rng(self.random_state)
        duals, counts_all, stats = [], [], []
        for y_pm in problems:
            counts, mk, ep, conv = self._run(kern, Xp, norms, y_pm, rng, cache)
            duals.append(counts * y_pm)
            counts_all.append(counts)
            stats.append((mk, ep, conv))
        self._set_model(kern, X, duals, np.zeros(len(problems)))
        counts_all = np.array(counts_all)[:, self.support_]
        mk, ep, conv = (np.array(v) for v in zip(*stats))
        if len(problems) == 1:
            self.support_counts_ = counts_all[0]
            self.n_mistakes_, self.n_iter_, self.converged_ = int(mk[0]), int(ep[0]), bool(conv[0])
        else:
            self.support_counts_ = counts_all
            self.n_mistakes_, self.n_iter_, self.converged_ = mk, ep, conv
        return self

    def _seed_stream(self, st):
        """partial_fit after fit: Algorithm 4 continues from the fitted S."""
        st.seed(self.support_vectors_, self.support_, self._n_fit_rows, self.dual_coef_)
        st.mistakes = np.atleast_1d(np.asarray(self.n_mistakes_, dtype=np.int64)).copy()

    def partial_fit(self: _Self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None) -> _Self:
        """Run Algorithm 4 on one more chunk of the stream (each row once, in order).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The chunk's examples (the first chunk fixes n_features and the kernel).
        y : array-like of shape (n_samples,)
            Their labels, all in ``classes``.
        classes : array-like, default=None
            Every label of the stream; required on the first call, ignored later.

        Returns
        -------
        self : object
            The KernelPerceptron, fitted on the stream so far.
        """
        if getattr(self, "_stream", None) is None and self.budget is not None:
            self._validate_params()
            raise ValueError(f"{type(self).__name__}: partial_fit does not support a budget "
                             f"(budget={self.budget!r}); use budget=None")
        X, Xp, norms, cls_idx = stream_chunk(self, X, y, classes)
        st = self._stream
        if not hasattr(st, "mistakes"):
            st.mistakes = np.zeros(len(st.joins), dtype=np.int64)
        kern = st.kern
        n = X.shape[0]
        joined, mistakes = [], []
        for c in range(len(st.joins)):
            y_pm = problem_signs(cls_idx, st.n_classes, c)
            g = st.scores(c, Xp, norms, type(self).__name__)
            counts = np.zeros(n, dtype=np.int64)
            cache = RowCacheArrays(cache_rows(self.cache_size, n, Xp.dtype.itemsize), n, Xp.dtype)
            order = np.arange(n, dtype=np.intp)
            ring, ring_state = np.zeros(0, dtype=np.intp), np.zeros(2, dtype=np.int64)
            y8 = y_pm.astype(np.int8)

            def step(pos, g=g, counts=counts, cache=cache, order=order, ring=ring, ring_state=ring_state,
                     y8=y8):
                return _k.perceptron_run(Xp, norms, kern.code, kern.degree, kern.scale, y8, order, pos,
                                         g, counts, *cache.args(), ring, ring_state)

            run_rows(self, kern, Xp, cache, step)
            joined.append(np.flatnonzero(counts))             # one visit each: joins in row order
            mistakes.append(len(joined[-1]))
        st.add(X, Xp, norms, cls_idx, joined)
        st.mistakes = st.mistakes + np.array(mistakes, dtype=np.int64)
        duals = np.zeros((len(st.joins), len(st.pos)))
        for c, J in enumerate(st.joins):
            duals[c, J] = st.coef[c]
        self._set_model(kern, st.X, duals, np.zeros(len(st.joins)))
        counts_all = np.abs(duals).astype(np.int64)[:, self.support_]
        self.support_ = st.pos[self.support_]
        one = len(st.joins) == 1
        mk = st.mistakes
        self.support_counts_ = counts_all[0] if one else counts_all
        self.n_mistakes_ = int(mk[0]) if one else mk.copy()
        self.n_iter_ = 1 if one else np.ones(len(st.joins), dtype=np.int64)
        # as fit(max_iter=1): converged when the pass made no mistake
        self.converged_ = bool(mk[0] == 0) if one else mk == 0
        return self
