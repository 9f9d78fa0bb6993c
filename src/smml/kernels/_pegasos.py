"""Kernel Pegasos (003 section 12, in the kernel form of Shalev-Shwartz et al. 2011)."""
from typing import TypeVar

import numpy as np

from smml._typing import RandomStateLike
from numpy.typing import ArrayLike

from smml._core import _kernel_methods as _k
from smml._random import check_rng, step_indices
from smml._validation import BOOL, N_JOBS, RANDOM_STATE, Interval

from smml.kernels._base import (CACHE_SIZE, KERNEL_SPEC, KernelClassifierBase, RowCacheArrays, cache_rows,
                                problem_signs, stream_chunk)
from smml.kernels._perceptron import run_rows
from smml.base import store_params


_Self = TypeVar("_Self")

class KernelPegasos(KernelClassifierBase):
    """Pegasos for the SVM objective F(g) = lam/2 ||g||_K^2 + (1/m) sum_t [1 - y_t g(x_t)]_+.

    003's lambda is the parameter ``alpha`` (lam = ``alpha`` below), its T the
    parameter ``max_iter`` (the number of steps).

    003 section 12 in a reproducing kernel Hilbert space: g_1 = 0; at step
    t = 1..T (T = ``max_iter``) draw one training example (x_i, y_i) uniformly at random and set
    g_{t+1} = (1 - 1/t) g_t + (1/(lam t)) y_i K(x_i, .) I{1 - y_i g_t(x_i) > 0}
    (eta_t = 1/(lam t)). Unrolled (Shalev-Shwartz, Singer, Srebro & Cotter 2011,
    "Pegasos", section 4): g_{t+1} = (1/(lam t)) sum_j a_j y_j K(x_j, .), where
    a_j counts the steps so far that drew j with a positive hinge loss.

    The draws are those of :class:`smml.linear.Pegasos` for the same
    ``random_state`` (the same generator calls), so on the linear kernel the
    two learners take the same steps and ``KernelPegasos(kernel="linear")``
    equals ``Pegasos(fit_intercept=False)`` step for step (there is no
    intercept here; the polynomial kernel already contains the constant
    feature). ``average=True`` returns the averaged iterate
    (1/T) sum_{t=1}^T g_t of the bound E[F(g_bar)] <= F(g*) + G^2/(2 lam T)
    (ln T + 1) (:func:`smml.bounds.pegasos_bound`, with X^2 = max_t K(x_t, x_t));
    otherwise the last iterate g_{T+1}.

    More than two classes: one-vs-rest, the problems drawing their steps one
    after the other from the same generator. Kernel rows come from a
    least-recently-used cache of at most ``cache_size`` megabytes.

    ``partial_fit(X, y, classes)``: the online form of the same steps, one step per
    row of the stream, in the given order (no random draws, ``max_iter`` unused):
    a stream of chunks takes the steps of one pass over their concatenation, t
    running on across the calls. As for :class:`KernelPerceptron`, only the rows
    with a positive count are kept, and a new chunk's scores are summed over them
    in the order of their steps, the order in which ``fit`` adds the kernel rows;
    the kernel is fixed by the first chunk (``gamma`` resolved on it, the
    Gaussian's rows centred on its mean).

    No ``sample_weight``: the notes' Pegasos draws the examples uniformly; a
    weighted objective would draw example i with probability w_i / sum(w) (or
    scale its step by m w_i / sum(w)), which is not "an integer weight is that
    many copies" draw by draw (the draws differ), and the notes define neither.

    Parameters
    ----------
    alpha : float > 0, default=1e-3
        The regularisation strength, 003's lambda.
    max_iter : int >= 1, default=10000
        The number of steps T of each problem (003's T).
    average : bool, default=False
        Return the averaged iterate instead of the last one.
    kernel : "rbf", "poly", "linear", "gaussian", "polynomial" or callable, default="rbf"
        The kernel (see :class:`KernelPerceptron`).
    degree : int >= 1, default=3
        The degree of the polynomial kernel.
    gamma : float > 0, "scale" or "auto", default="scale"
        scikit-learn's ``gamma`` of the Gaussian kernel exp(-gamma ||x - x'||^2) (003's width
        is 1 / (2 gamma)).
    random_state : None, int or Generator, default=None
        Seed of the uniform draws of the examples.
    cache_size : float, default=256
        Megabytes of cached kernel rows.
    n_jobs : None or int, default=None
        Threads of ``decision_function``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    gamma_ : float
        The gamma used (``gamma`` resolved).
    support_ : ndarray of shape (n_SV,)
        Indices of the training points with a non-zero coefficient.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The training points with a non-zero coefficient.
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        The coefficients of g on the support vectors.
    intercept_ : ndarray of shape (n_problems,)
        Zeros (no intercept).
    n_iter_ : int
        The steps of each problem (after ``partial_fit``: the rows seen so far).

    See Also
    --------
    smml.linear.Pegasos : Pegasos for linear predictors.
    sklearn.svm.SVC : scikit-learn's kernel SVM (solved exactly).

    Examples
    --------
    >>> import numpy as np
    >>> from smml.kernels import KernelPegasos
    >>> X = np.array([[0., 0.], [1., 1.], [0., 1.], [1., 0.]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = KernelPegasos(alpha=0.1, max_iter=500, gamma=5.0, random_state=0).fit(X, y)
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _parameter_spec = {"alpha": Interval(float, 0, None, "neither"), "max_iter": Interval(int, 1, None),
                       "average": BOOL, **KERNEL_SPEC, "random_state": RANDOM_STATE,
                       "cache_size": CACHE_SIZE, "n_jobs": N_JOBS}

    def __init__(self, alpha: float = 1e-3, max_iter: int = 10000, average: bool = False, kernel: str = "rbf",
                 degree: int = 3, gamma: float | str = "scale", random_state: RandomStateLike = None, cache_size: float = 256.0,
                 n_jobs: int | None = None) -> None:
        store_params(self, locals())

    def _run(self, kern, Xp, norms, y_pm, rng, cache):
        m = Xp.shape[0]
        y8 = y_pm.astype(np.int8)
        lam = float(self.alpha)
        g = np.zeros(m)
        counts = np.zeros(m, dtype=np.int64)
        hsum = np.zeros(m)
        tstate = np.zeros(2)
        for idx in step_indices(rng, m, self.max_iter):
            def step(pos, idx=idx):
                return _k.pegasos_run(Xp, norms, kern.code, kern.degree, kern.scale, y8, idx, pos, lam,
                                      g, counts, hsum, tstate, *cache.args())
            run_rows(self, kern, Xp, cache, step)
        T = int(tstate[0])
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            coef = self._coef(counts, hsum, tstate, lam)
        if not np.all(np.isfinite(coef)):
            raise ValueError(f"{type(self).__name__}: alpha={self.alpha!r} is too small: the coefficients "
                             "1 / (lam t) overflow float64")
        self._fit_state.append((counts * y_pm, hsum, tstate))      # partial_fit continues from here
        return coef * y_pm, T

    def _coef(self, counts, hsum, tstate, lam):
        """The coefficients of g_{T+1} (or of the average) on the a_j counts."""
        T = int(tstate[0])
        if self.average:
            # (1/T) sum_{t=2}^T g_t: the step k at j adds y_j K(x_j, .) / (lam (t-1)) to every g_t,
            # t > k, i.e. (H_{T-1} - H_{k-1}) / lam in total
            H_prev = tstate[1] - 1.0 / T          # H_{T-1}
            coef = (counts * H_prev - hsum) / (lam * T)
        else:
            coef = counts / (lam * T)
        return coef

    def fit(self: _Self, X: ArrayLike, y: ArrayLike) -> _Self:
        """Run kernel Pegasos (one per class for more than two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The training examples.
        y : array-like of shape (n_samples,)
            The labels.

        Returns
        -------
        self : object
            The fitted KernelPegasos.
        """
        X, problems, kern, Xp, norms = self._fit_start(X, y)
        cache = self._row_cache(Xp)
        rng = check_rng(self.random_state)
        self._fit_state = []
        duals = []
        for y_pm in problems:
            coef, T = self._run(kern, Xp, norms, y_pm, rng, cache)
            duals.append(coef)
        self._set_model(kern, X, duals, np.zeros(len(problems)))
        # the rows with a step (a_j > 0) in some problem: the average's coefficient of a row
        # stepped at the last step is 0, so support_ may miss some
        members = np.flatnonzero(np.any([w != 0 for w, _, _ in self._fit_state], axis=0))
        self._fit_state = (members, X[members], [(w[members], h[members], ts) for w, h, ts in self._fit_state])
        self.n_iter_ = T
        return self

    def _seed_stream(self, st):
        """partial_fit after fit: the steps continue from the fitted state (t, the counts a_j)."""
        members, Xm, state = self._fit_state
        st.seed(Xm, members, self._n_fit_rows, [w for w, _, _ in state])
        st.tstate = [ts.copy() for _, _, ts in state]
        st.hsum = [h.copy() for _, h, _ in state]

    def partial_fit(self: _Self, X: ArrayLike, y: ArrayLike, classes: ArrayLike | None = None) -> _Self:
        """Take one Pegasos step per row of the chunk, in order (t continues across calls).

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
            The KernelPegasos, fitted on the stream so far.
        """
        X, Xp, norms, cls_idx = stream_chunk(self, X, y, classes)
        st = self._stream
        kern = st.kern
        n = X.shape[0]
        lam = float(self.alpha)
        if not hasattr(st, "tstate"):
            st.tstate = [np.zeros(2) for _ in st.joins]
            st.hsum = [np.empty(0) for _ in st.joins]
        self._fit_state = None
        joined, hs = [], []
        for c in range(len(st.joins)):
            y_pm = problem_signs(cls_idx, st.n_classes, c)
            g = st.scores(c, Xp, norms, type(self).__name__)
            counts = np.zeros(n, dtype=np.int64)
            hsum = np.zeros(n)
            cache = RowCacheArrays(cache_rows(self.cache_size, n, Xp.dtype.itemsize), n, Xp.dtype)
            idx = np.arange(n, dtype=np.intp)
            y8 = y_pm.astype(np.int8)
            tstate = st.tstate[c]

            def step(pos, g=g, counts=counts, hsum=hsum, cache=cache, idx=idx, y8=y8, tstate=tstate):
                return _k.pegasos_run(Xp, norms, kern.code, kern.degree, kern.scale, y8, idx, pos, lam,
                                      g, counts, hsum, tstate, *cache.args())

            run_rows(self, kern, Xp, cache, step)
            J = np.flatnonzero(counts)                       # one step each: joins in row order
            joined.append(J)
            hs.append(hsum[J])
        n_before = len(st.pos)
        st.add(X, Xp, norms, cls_idx, joined)
        duals = []
        for c, J in enumerate(st.joins):
            h = np.zeros(len(st.pos))
            h[:n_before] = np.pad(st.hsum[c], (0, n_before - len(st.hsum[c])))
            h[J[len(J) - len(joined[c]):]] = hs[c]
            st.hsum[c] = h
            cnt = np.zeros(len(st.pos), dtype=np.int64)
            cnt[J] = np.abs(st.coef[c]).astype(np.int64)
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
                coef = self._coef(cnt, h, st.tstate[c], lam)
            if not np.all(np.isfinite(coef)):
                raise ValueError(f"{type(self).__name__}: alpha={self.alpha!r} is too small: the "
                                 "coefficients 1 / (alpha t) overflow float64")
            sign = np.ones(len(st.pos))
            sign[J] = np.sign(st.coef[c])
            duals.append(coef * sign)
        self._set_model(kern, st.X, duals, np.zeros(len(st.joins)))
        self.support_ = st.pos[self.support_]
        self.n_iter_ = int(st.tstate[0][0])
        return self
