"""The kernel Perceptron (003 section 11, Algorithm 4)."""
import numpy as np

from smml._core import _kernel_methods as _k
from smml._random import check_rng
from smml._validation import BOOL, N_JOBS, RANDOM_STATE, Interval, Options

from smml.kernels._base import CACHE_SIZE, KERNEL_SPEC, KernelClassifierBase, user_kernel
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


class KernelPerceptron(KernelClassifierBase):
    """The kernel Perceptron, 003 section 11, Algorithm 4, exactly.

    S = {} (a multiset); for each example t in turn: y_hat = sgn(sum_{s in S}
    y_s K(x_s, x_t)) with sgn(0) = -1 (000, "Linear predictors"); if y_hat !=
    y_t, S <- S + {t}. The stream is the training set in epochs, in the given
    order (``shuffle=False``) or in a new random order per epoch drawn from
    ``random_state`` (as :class:`smml.linear.Perceptron`); training stops after
    an epoch without mistakes (``converged_``) or after ``max_epochs`` epochs.
    The predictor is sgn(sum_{s in S} y_s K(x_s, x)).

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
    kernel : "linear", "polynomial", "gaussian" or callable, default="gaussian"
        x.x', (1 + x.x')^degree, exp(-||x - x'||^2 / (2 gamma)) (003 section 11),
        or ``f(A, B) -> (len(A), len(B))`` Gram block.
    degree : int >= 1, default=3
        The degree of the polynomial kernel.
    gamma : float > 0 or "scale", default="scale"
        003's Gaussian *width* (scikit-learn's ``gamma`` is 1 / (2 gamma));
        "scale" is d Var(X) / 2, scikit-learn's default in these units.
    max_epochs : int, default=1000
        The largest number of epochs.
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
        The Gaussian width used (``gamma`` resolved).
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
    n_epochs_ : int or ndarray of shape (n_classes,)
        The number of epochs run (one per class for one-vs-rest).
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
    >>> clf = KernelPerceptron(kernel="gaussian", gamma=0.1).fit(X, y)
    >>> clf.converged_
    True
    >>> clf.predict(X).tolist()
    [0, 0, 1, 1]
    """

    _parameter_spec = {**KERNEL_SPEC, "max_epochs": Interval(int, 1, None), "shuffle": BOOL,
                       "random_state": RANDOM_STATE,
                       "budget": (Options(None), Interval(int, 1, None)),
                       "cache_size": CACHE_SIZE, "n_jobs": N_JOBS}

    def __init__(self, kernel="gaussian", degree=3, gamma="scale", max_epochs=1000, shuffle=False,
                 random_state=None, budget=None, cache_size=256.0, n_jobs=None):
        store_params(self, locals())

    def _run(self, kern, Xp, norms, y_pm, rng, cache):
        m = Xp.shape[0]
        y8 = y_pm.astype(np.int8)
        g = np.zeros(m)
        counts = np.zeros(m, dtype=np.int64)
        # S never holds more than m * max_epochs members: a larger budget is no budget at all
        ring = np.zeros(0 if self.budget is None else min(self.budget, m * self.max_epochs), dtype=np.intp)
        ring_state = np.zeros(2, dtype=np.int64)
        order = np.arange(m, dtype=np.intp)
        mistakes, epochs, converged = 0, 0, False
        for _ in range(self.max_epochs):
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

    def fit(self, X, y):
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
            self.n_mistakes_, self.n_epochs_, self.converged_ = int(mk[0]), int(ep[0]), bool(conv[0])
        else:
            self.support_counts_ = counts_all
            self.n_mistakes_, self.n_epochs_, self.converged_ = mk, ep, conv
        return self
