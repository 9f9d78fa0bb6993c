"""Kernel Pegasos (003 section 12, in the kernel form of Shalev-Shwartz et al. 2011)."""
import numpy as np

from smml._core import _kernel_methods as _k
from smml._random import check_rng, step_indices
from smml._validation import BOOL, N_JOBS, RANDOM_STATE, Interval

from smml.kernels._base import CACHE_SIZE, KERNEL_SPEC, KernelClassifierBase
from smml.kernels._perceptron import run_rows
from smml.base import store_params


class KernelPegasos(KernelClassifierBase):
    """Pegasos for the SVM objective F(g) = lam/2 ||g||_K^2 + (1/m) sum_t [1 - y_t g(x_t)]_+.

    003 section 12 in a reproducing kernel Hilbert space: g_1 = 0; at step
    t = 1..n_iter draw one training example (x_i, y_i) uniformly at random and set
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

    Parameters
    ----------
    lam : float > 0, default=1e-3
        The regularisation strength.
    n_iter : int >= 1, default=10000
        The number of steps T of each problem.
    average : bool, default=False
        Return the averaged iterate instead of the last one.
    kernel : "linear", "polynomial", "gaussian" or callable, default="gaussian"
        The kernel (see :class:`KernelPerceptron`).
    degree : int >= 1, default=3
        The degree of the polynomial kernel.
    gamma : float > 0 or "scale", default="scale"
        003's Gaussian width (scikit-learn's ``gamma`` is 1 / (2 gamma)).
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
        The Gaussian width used (``gamma`` resolved).
    support_ : ndarray of shape (n_SV,)
        Indices of the training points with a non-zero coefficient.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The training points with a non-zero coefficient.
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        The coefficients of g on the support vectors.
    intercept_ : ndarray of shape (n_problems,)
        Zeros (no intercept).
    n_iter_ : int
        The steps of each problem.

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
    >>> clf = KernelPegasos(lam=0.1, n_iter=500, gamma=0.1, random_state=0).fit(X, y)
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _parameter_spec = {"lam": Interval(float, 0, None, "neither"), "n_iter": Interval(int, 1, None),
                       "average": BOOL, **KERNEL_SPEC, "random_state": RANDOM_STATE,
                       "cache_size": CACHE_SIZE, "n_jobs": N_JOBS}

    def __init__(self, lam=1e-3, n_iter=10000, average=False, kernel="gaussian", degree=3,
                 gamma="scale", random_state=None, cache_size=256.0, n_jobs=None):
        store_params(self, locals())

    def _run(self, kern, Xp, norms, y_pm, rng, cache):
        m = Xp.shape[0]
        y8 = y_pm.astype(np.int8)
        lam = float(self.lam)
        g = np.zeros(m)
        counts = np.zeros(m, dtype=np.int64)
        hsum = np.zeros(m)
        tstate = np.zeros(2)
        for idx in step_indices(rng, m, self.n_iter):
            def step(pos, idx=idx):
                return _k.pegasos_run(Xp, norms, kern.code, kern.degree, kern.scale, y8, idx, pos, lam,
                                      g, counts, hsum, tstate, *cache.args())
            run_rows(self, kern, Xp, cache, step)
        T = int(tstate[0])
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            coef = self._coef(counts, hsum, tstate, lam)
        if not np.all(np.isfinite(coef)):
            raise ValueError(f"{type(self).__name__}: lam={self.lam!r} is too small: the coefficients "
                             "1 / (lam t) overflow float64")
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

    def fit(self, X, y):
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
        duals = []
        for y_pm in problems:
            coef, T = self._run(kern, Xp, norms, y_pm, rng, cache)
            duals.append(coef)
        self._set_model(kern, X, duals, np.zeros(len(problems)))
        self.n_iter_ = T
        return self
