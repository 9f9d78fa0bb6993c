"""Figures of the course notes: errors and the bounds that hold them.

Every ``plot_*`` function draws on the matplotlib ``Axes`` it is given (a new
figure of 6.4 x 4.8 inches otherwise) and returns that Axes. The numbers come
from ``*_table`` functions, which need no matplotlib and return a dict of
arrays (the tests check them, not pixels):

- k-NN training and test error against k (000, "The Nearest Neighbour
  algorithm": the figure on Breast Cancer Wisconsin):
  :func:`knn_error_table`, :func:`plot_knn_errors`;
- AdaBoost's training error per round against prod sqrt(1 - 4 gamma_i^2) and
  exp(-2 sum gamma_i^2) (002, "Training error of AdaBoost"): :func:`plot_adaboost`;
- Perceptron updates against the convergence theorem's bound (000, "Training
  linear classifiers", Theorem 3): :func:`perceptron_mistakes_table`,
  :func:`plot_perceptron`;
- tree training and test error against the number of leaves, with the
  Occam bound (000, "A more refined bound"): :func:`tree_error_table`,
  :func:`plot_tree_occam`;
- the Pegasos objective against its bound (003, section 12):
  :func:`pegasos_objective_table`, :func:`plot_pegasos`;
- a learning curve with Hoeffding intervals (:func:`plot_learning_curve`) and
  a Wilcoxon comparison (:func:`plot_compare`) from
  :mod:`smml.model_selection`.

matplotlib is the optional ``plot`` extra (``pip install 'smml[plot]'``);
without it the ``plot_*`` functions raise an ``ImportError`` that says so,
and the ``*_table`` functions still work.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from smml._typing import ArrayLike, NDArray, RandomStateLike

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from smml.ensemble import AdaBoostClassifier
    from smml.model_selection import CompareResult, LearningCurveResult
else:
    # at run time matplotlib (optional) and the families are imported only when a function
    # needs them; typing.get_type_hints sees these names as Any
    Axes = AdaBoostClassifier = CompareResult = LearningCurveResult = Any

__all__ = ["knn_error_table", "plot_knn_errors", "plot_adaboost", "perceptron_mistakes_table",
           "plot_perceptron", "tree_error_table", "plot_tree_occam", "pegasos_objective_table",
           "plot_pegasos", "plot_learning_curve", "plot_compare", "FIGSIZE"]

#: size in inches of the figures the ``plot_*`` functions create (640 x 480 pixels at 100 dpi)
FIGSIZE = (6.4, 4.8)

_TRAIN, _TEST, _BOUND, _BOUND2 = "tab:orange", "tab:blue", "tab:red", "tab:purple"   # 000's colours


def _axes(ax):
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("smml.plot draws with matplotlib, which is not installed: "
                          "pip install 'smml[plot]' (or pip install matplotlib)") from None
    if ax is None:
        _, ax = plt.subplots(figsize=FIGSIZE)
    return ax


def _arrays(X_train: ArrayLike, y_train: ArrayLike, X_test: ArrayLike,
            y_test: ArrayLike) -> tuple[NDArray[Any], ...]:
    return np.asarray(X_train), np.asarray(y_train), np.asarray(X_test), np.asarray(y_test)


def _zero_one(y, p):
    return float(np.mean(np.asarray(y) != np.asarray(p)))


def _int_grid(values, name, low, high=None):
    v = np.asarray(list(values))
    if v.ndim != 1 or v.size == 0 or v.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a non-empty sequence of integers, got {values!r}")
    if np.any(v < low) or (high is not None and np.any(v > high)):
        raise ValueError(f"{name} must lie in [{low}, {high if high is not None else 'inf'}], got {v.tolist()}")
    return v.astype(np.intp)


# ---- k-NN: training and test error against k (000) -------------------------------------

def knn_error_table(X_train: ArrayLike, y_train: ArrayLike, X_test: ArrayLike, y_test: ArrayLike,
                    ks: Sequence[int] | None = None, **params: Any) -> dict[str, Any]:
    """Training and test error (zero-one loss) of k-NN for each k.

    000, "The Nearest Neighbour algorithm": the training error grows with k
    (0 for k = 1 without duplicates) and the test error is smallest at a k
    whose training error is above 0.

    Parameters
    ----------
    X_train, y_train, X_test, y_test : array-like
        The training and test sets.
    ks : sequence of int, optional
        The values of k (default: the odd k from 1 to 99, at most the training size).
    **params
        Passed to :class:`smml.neighbors.KNNClassifier` (metric, weights, n_jobs, ...).

    Returns
    -------
    dict
        ``k``, ``train_error`` and ``test_error``, arrays of the same length.

    See Also
    --------
    plot_knn_errors : The figure of this table.
    sklearn.model_selection.validation_curve : Training and CV scores against a parameter.

    Examples
    --------
    >>> from smml.plot import knn_error_table
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> t = knn_error_table(X[:50], y[:50], X[50:], y[50:], ks=[1, 5, 15])
    >>> t["k"].tolist()
    [1, 5, 15]
    >>> print([f"{e:.3f}" for e in t["train_error"]], [f"{e:.3f}" for e in t["test_error"]])
    ['0.000', '0.120', '0.180'] ['0.167', '0.133', '0.067']
    """
    from smml.neighbors import KNNClassifier

    X_train, y_train, X_test, y_test = _arrays(X_train, y_train, X_test, y_test)
    m = len(y_train)
    ks = _int_grid(range(1, min(m, 99) + 1, 2) if ks is None else ks, "ks", 1, m)
    train, test = [], []
    for k in ks:
        clf = KNNClassifier(n_neighbors=int(k), **params).fit(X_train, y_train)
        train.append(_zero_one(y_train, clf.predict(X_train)))
        test.append(_zero_one(y_test, clf.predict(X_test)))
    return {"k": ks, "train_error": np.array(train), "test_error": np.array(test)}


def plot_knn_errors(X_train: ArrayLike, y_train: ArrayLike, X_test: ArrayLike, y_test: ArrayLike,
                    ks: Sequence[int] | None = None, ax: Axes | None = None, **params: Any) -> Axes:
    """Plot k-NN's training and test error against k (000's figure); returns the Axes.

    The numbers are those of :func:`knn_error_table`; a dotted vertical line
    marks the k of smallest test error.

    Parameters
    ----------
    X_train, y_train, X_test, y_test : array-like
        The training and test sets.
    ks : sequence of int, optional
        The values of k (default: the odd k from 1 to 99, at most the training size).
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).
    **params
        Passed to :class:`smml.neighbors.KNNClassifier` (metric, weights, n_jobs, ...).

    Returns
    -------
    matplotlib.axes.Axes
        The Axes, with the training error as its first line and the test error
        as its second.

    See Also
    --------
    knn_error_table : The numbers plotted.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from smml.plot import plot_knn_errors
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> ax = plot_knn_errors(X[:50], y[:50], X[50:], y[50:], ks=[1, 5, 15])
    >>> print(type(ax).__name__, len(ax.lines))
    Axes 3
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    t = knn_error_table(X_train, y_train, X_test, y_test, ks, **params)
    ax = _axes(ax)
    ax.plot(t["k"], t["train_error"], "o-", ms=3, color=_TRAIN, label="training error")
    ax.plot(t["k"], t["test_error"], "o-", ms=3, color=_TEST, label="test error")
    best = int(np.argmin(t["test_error"]))
    ax.axvline(t["k"][best], color="grey", lw=0.8, ls=":")
    ax.set(xlabel="k", ylabel="zero-one loss",
           title=f"k-NN: smallest test error {t['test_error'][best]:.3f} at k = {t['k'][best]}")
    ax.legend()
    return ax


# ---- AdaBoost: training error and its bounds per round (002) --------------------------

def plot_adaboost(estimator: AdaBoostClassifier, ax: Axes | None = None) -> Axes:
    """Plot a fitted binary AdaBoost's training error per round and its two bounds; returns the Axes.

    002, "Training error of AdaBoost": after i rounds the training error of
    sign(sum_k w_k h_k) is at most prod_{k<=i} sqrt(1 - 4 gamma_k^2) <=
    exp(-2 sum_{k<=i} gamma_k^2) (``train_errors_``,
    ``training_error_bound_``, ``training_error_exp_bound_`` of
    :class:`smml.ensemble.AdaBoostClassifier`).

    Parameters
    ----------
    estimator : AdaBoostClassifier
        Fitted on two classes.
    ax : matplotlib.axes.Axes, optional
        Where to draw.

    Returns
    -------
    matplotlib.axes.Axes
        Lines: training error, the product bound, the exponential bound.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from smml.ensemble import AdaBoostClassifier
    >>> from smml.plot import plot_adaboost
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> ada = AdaBoostClassifier(n_estimators=10, random_state=0).fit(X, y)
    >>> ax = plot_adaboost(ada)
    >>> print(type(ax).__name__, len(ax.lines))
    Axes 3
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "train_errors_")
    if getattr(estimator, "training_error_bound_", None) is None:
        raise ValueError("the training-error bound of 002 is for two classes; this AdaBoost was fitted "
                         "on more (SAMME)")
    t = np.arange(1, len(estimator.train_errors_) + 1)
    ax = _axes(ax)
    ax.step(t, estimator.train_errors_, where="post", color=_TRAIN, label="training error")
    ax.plot(t, estimator.training_error_bound_, color=_BOUND, label=r"$\prod_i \sqrt{1 - 4\gamma_i^2}$")
    ax.plot(t, estimator.training_error_exp_bound_, color=_BOUND2, ls="--",
            label=r"$\exp(-2 \sum_i \gamma_i^2)$")
    ax.set(xlabel="round i", ylabel="training error", title="AdaBoost: training error and its bounds",
           ylim=(0, max(1.0 / 2, float(np.max(estimator.train_errors_)))))
    ax.legend()
    return ax


# ---- Perceptron: updates against the convergence bound (000, Theorem 3) -----------------

def perceptron_mistakes_table(X: ArrayLike, y: ArrayLike, u: ArrayLike | None = None, max_epochs: int = 30,
                              fit_intercept: bool = True) -> dict[str, Any]:
    """Cumulative Perceptron updates after each epoch, and the convergence theorem's bound.

    000, "Training linear classifiers", Theorem 3: on a linearly separable
    set the Perceptron makes at most (min ||u||^2)(max_t ||x_t||^2) updates,
    the min over the u with y_t u.x_t >= 1. The bound is evaluated with a
    separator ``u`` (default: the one :class:`smml.linear.LinearProgramClassifier`
    finds), rescaled to margin 1 (:func:`smml.bounds.perceptron_convergence_bound`),
    which gives a value at least the theorem's. The Perceptron visits the
    examples in order; epoch e's count is that of a run with ``max_epochs=e``.

    Parameters
    ----------
    X : array-like of shape (m, d)
        A linearly separable training set (with the constant feature when
        ``fit_intercept``).
    y : array-like of shape (m,)
        Two classes.
    u : array-like of shape (d + fit_intercept,), optional
        A separator (intercept last).
    max_epochs : int, default=30
        At most this many epochs (fewer once the Perceptron converges).
    fit_intercept : bool, default=True
        As the Perceptron's parameter.

    Returns
    -------
    dict
        ``epoch``, ``updates`` (cumulative, per epoch) and ``bound`` (a float).

    See Also
    --------
    smml.bounds.perceptron_convergence_bound : The bound.
    plot_perceptron : The figure of this table.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.plot import perceptron_mistakes_table
    >>> Xs = np.array([[0., 0.], [1., 0.], [0., 1.], [3., 3.], [4., 3.], [3., 4.]])
    >>> ys = np.array([0, 0, 0, 1, 1, 1])
    >>> t = perceptron_mistakes_table(Xs, ys)
    >>> t["epoch"].tolist(), t["updates"].tolist()
    ([1, 2, 3], [2, 5, 5])
    >>> bool(t["updates"][-1] <= t["bound"])
    True
    """
    from smml._validation import check_positive_int
    from smml.bounds import perceptron_convergence_bound
    from smml.linear import LinearProgramClassifier, Perceptron
    from smml.exceptions import NotSeparableError

    check_positive_int("max_epochs", max_epochs)
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(f"the Perceptron's convergence bound is for two classes, got {len(classes)}")
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    if u is None:
        try:
            lp = LinearProgramClassifier(fit_intercept=fit_intercept).fit(X, y)
        except NotSeparableError:
            raise ValueError("the training set is not linearly separable: the convergence theorem "
                             "does not apply") from None
        u = np.append(lp.coef_.ravel(), lp.intercept_ if fit_intercept else [])
    bound = perceptron_convergence_bound(X, y_pm, np.asarray(u, dtype=np.float64), fit_intercept=fit_intercept)
    epochs, updates = [], []
    for e in range(1, max_epochs + 1):
        p = Perceptron(max_iter=e, fit_intercept=fit_intercept).fit(X, y)
        epochs.append(e)
        updates.append(int(p.n_updates_))
        if p.converged_:
            break
    return {"epoch": np.array(epochs), "updates": np.array(updates), "bound": float(bound)}


def plot_perceptron(X: ArrayLike, y: ArrayLike, u: ArrayLike | None = None, max_epochs: int = 30,
                    fit_intercept: bool = True, ax: Axes | None = None) -> Axes:
    """Plot the Perceptron's cumulative updates per epoch against Theorem 3's bound; returns the Axes.

    The numbers are those of :func:`perceptron_mistakes_table`.

    Parameters
    ----------
    X : array-like of shape (m, d)
        A linearly separable training set.
    y : array-like of shape (m,)
        Two classes.
    u : array-like of shape (d + fit_intercept,), optional
        A separator (intercept last); default: the one
        :class:`smml.linear.LinearProgramClassifier` finds.
    max_epochs : int, default=30
        At most this many epochs (fewer once the Perceptron converges).
    fit_intercept : bool, default=True
        As the Perceptron's parameter.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).

    Returns
    -------
    matplotlib.axes.Axes
        Lines: the cumulative updates, the bound (log scale).

    See Also
    --------
    perceptron_mistakes_table : The numbers plotted.

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from smml.plot import plot_perceptron
    >>> Xs = np.array([[0., 0.], [1., 0.], [0., 1.], [3., 3.], [4., 3.], [3., 4.]])
    >>> ys = np.array([0, 0, 0, 1, 1, 1])
    >>> ax = plot_perceptron(Xs, ys)
    >>> print(type(ax).__name__, len(ax.lines), ax.get_yscale())
    Axes 2 log
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    t = perceptron_mistakes_table(X, y, u, max_epochs, fit_intercept)
    ax = _axes(ax)
    ax.plot(t["epoch"], t["updates"], "o-", ms=3, color=_TEST, label="updates so far")
    ax.plot(t["epoch"], np.full(len(t["epoch"]), t["bound"]), color=_BOUND,
            label=r"bound $\|u\|^2 \max_t \|x_t\|^2$")
    ax.set_yscale("log")
    ax.set(xlabel="epoch", ylabel="updates (mistakes)", title="Perceptron: updates and the convergence bound")
    ax.legend()
    return ax


# ---- trees: errors against the number of leaves, Occam bound (000) ----------------------

def tree_error_table(X_train: ArrayLike, y_train: ArrayLike, X_test: ArrayLike, y_test: ArrayLike,
                     leaves: Sequence[int] | None = None, delta: float = 0.05, **params: Any) -> dict[str, Any]:
    """Training error, test error and Occam bound of trees grown to each number of leaves.

    000, "A more refined bound": with probability at least 1 - delta, for
    every tree h with N_h nodes on d attributes, risk(h) <= training error +
    sqrt((|sigma(h)| + ln(2/delta)) / (2m)) (:func:`smml.bounds.occam_tree_bound`).

    Parameters
    ----------
    X_train, y_train, X_test, y_test : array-like
        The training and test sets (numerical features).
    leaves : sequence of int, optional
        Values of ``max_leaf_nodes`` (default 2, 3, ..., 40).
    delta : float, default=0.05
        Confidence parameter of the bound.
    **params
        Passed to :class:`smml.tree.TreeClassifier` (``random_state`` defaults to 0).

    Returns
    -------
    dict
        ``n_leaves`` (of the grown trees), ``n_nodes``, ``train_error``,
        ``test_error`` and ``occam_bound``.

    See Also
    --------
    smml.bounds.occam_tree_bound : The bound.
    plot_tree_occam : The figure of this table.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.plot import tree_error_table
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> t = tree_error_table(X[:50], y[:50], X[50:], y[50:], leaves=[2, 4, 8])
    >>> t["n_leaves"].tolist(), t["n_nodes"].tolist()
    ([2, 4, 8], [3, 7, 15])
    >>> print([f"{e:.3f}" for e in t["train_error"]])
    ['0.260', '0.100', '0.040']
    >>> bool(np.all(t["train_error"] <= t["occam_bound"]))
    True
    """
    from smml.bounds import occam_tree_bound
    from smml.tree import TreeClassifier

    X_train, y_train, X_test, y_test = _arrays(X_train, y_train, X_test, y_test)
    leaves = _int_grid(range(2, 41) if leaves is None else leaves, "leaves", 2)
    params.setdefault("random_state", 0)
    m, d = X_train.shape
    rows = []
    for L in leaves:
        clf = TreeClassifier(max_leaf_nodes=int(L), **params).fit(X_train, y_train)
        tr = _zero_one(y_train, clf.predict(X_train))
        nodes = clf.tree_.node_count
        rows.append((clf.tree_.n_leaves, nodes, tr, _zero_one(y_test, clf.predict(X_test)),
                     occam_tree_bound(tr, nodes, d, m, delta)))
    cols = np.array(rows, dtype=np.float64).T
    return {"n_leaves": cols[0].astype(np.intp), "n_nodes": cols[1].astype(np.intp), "train_error": cols[2],
            "test_error": cols[3], "occam_bound": cols[4]}


def plot_tree_occam(X_train: ArrayLike, y_train: ArrayLike, X_test: ArrayLike, y_test: ArrayLike,
                    leaves: Sequence[int] | None = None, delta: float = 0.05, ax: Axes | None = None,
                    **params: Any) -> Axes:
    """Plot tree training and test error against the number of leaves, with the Occam bound.

    The numbers are those of :func:`tree_error_table`.

    Parameters
    ----------
    X_train, y_train, X_test, y_test : array-like
        The training and test sets (numerical features).
    leaves : sequence of int, optional
        Values of ``max_leaf_nodes`` (default 2, 3, ..., 40).
    delta : float, default=0.05
        Confidence parameter of the bound.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).
    **params
        Passed to :class:`smml.tree.TreeClassifier` (``random_state`` defaults to 0).

    Returns
    -------
    matplotlib.axes.Axes
        Lines: training error, test error, Occam bound.

    See Also
    --------
    tree_error_table : The numbers plotted.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from smml.plot import plot_tree_occam
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> ax = plot_tree_occam(X[:50], y[:50], X[50:], y[50:], leaves=[2, 4, 8])
    >>> print(type(ax).__name__, len(ax.lines))
    Axes 3
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    t = tree_error_table(X_train, y_train, X_test, y_test, leaves, delta, **params)
    ax = _axes(ax)
    ax.plot(t["n_leaves"], t["train_error"], "o-", ms=3, color=_TRAIN, label="training error")
    ax.plot(t["n_leaves"], t["test_error"], "o-", ms=3, color=_TEST, label="test error")
    ax.plot(t["n_leaves"], t["occam_bound"], color=_BOUND, label=f"Occam bound (delta = {delta:g})")
    ax.set(xlabel="leaves", ylabel="zero-one loss", title="Tree predictors: errors and the Occam bound")
    ax.legend()
    return ax


# ---- Pegasos: objective against the bound (003 section 12) -----------------------------

def _svm_optimum(X, y_pm, lam):
    """(lower, upper) on F* = min_w lam/2 ||w||^2 + mean hinge: the dual value and the primal value
    at the dual's w (the dual max_{0 <= a <= 1} mean(a) - ||sum a_t y_t x_t||^2 / (2 lam m^2),
    solved by L-BFGS-B)."""
    from scipy.optimize import minimize

    from smml._threads import blas_single_thread

    m = len(y_pm)
    Z = y_pm[:, None] * X

    def neg_dual(a):
        v = Z.T @ a
        return -(a.sum() / m) + (v @ v) / (2 * lam * m * m), -1.0 / m + (Z @ v) / (lam * m * m)

    # hundreds of small mat-vecs: a multi-threaded BLAS only spins (far slower on a busy machine;
    # the figure: bench/linear.md)
    with blas_single_thread():
        res = minimize(neg_dual, np.full(m, 0.5), jac=True, method="L-BFGS-B", bounds=[(0.0, 1.0)] * m,
                       options={"maxiter": 20000, "ftol": 1e-12, "gtol": 1e-10})
    a = res.x
    w = Z.T @ a / (lam * m)
    primal = 0.5 * lam * (w @ w) + np.mean(np.maximum(0.0, 1.0 - y_pm * (X @ w)))
    return -float(res.fun), float(primal)


def pegasos_objective_table(X: ArrayLike, y: ArrayLike, lam: float = 1e-2, n_iters: Sequence[int] | None = None,
                            random_state: RandomStateLike = 0, fit_intercept: bool = True) -> dict[str, Any]:
    """Suboptimality of Pegasos' averaged iterate and the bound of 003, section 12, for each T.

    For each T: F(w_bar_T) of ``Pegasos(alpha=lam, max_iter=T, average=True)`` minus the
    optimum F* (from above: the dual optimum, so the difference shown is at least
    the true one), and the bound G^2 / (2 lam T) (ln T + 1) with G = 2 max_t ||x_t||
    (:func:`smml.bounds.pegasos_bound`), which holds in expectation.

    Parameters
    ----------
    X : array-like of shape (m, d)
        The training set.
    y : array-like of shape (m,)
        Two classes.
    lam : float, default=1e-2
        The regularisation parameter.
    n_iters : sequence of int, optional
        The values of T (default: 20 values from 10 to 10^5, log-spaced).
    random_state : int or None, default=0
        Seeds Pegasos (the same seed for every T).
    fit_intercept : bool, default=True
        As Pegasos' parameter (the constant feature is part of x and penalised).

    Returns
    -------
    dict
        ``n_iter``, ``objective`` (F(w_bar_T)), ``optimum`` (the dual lower
        bound on F*), ``gap`` (primal minus dual at the dual solution),
        ``suboptimality`` (objective - optimum) and ``bound``.

    See Also
    --------
    smml.bounds.pegasos_bound : The bound.
    plot_pegasos : The figure of this table.

    Examples
    --------
    >>> import numpy as np
    >>> from smml.plot import pegasos_objective_table
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> t = pegasos_objective_table(X, y, lam=0.1, n_iters=[10, 100, 1000])
    >>> t["n_iter"].tolist()
    [10, 100, 1000]
    >>> print([f"{b:.3f}" for b in t["bound"]])
    ['17.091', '2.901', '0.409']
    >>> bool(np.all(t["suboptimality"] <= t["bound"]))
    True
    """
    from smml.bounds import pegasos_bound
    from smml.linear import Pegasos

    X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
    classes = np.unique(y)
    if len(classes) != 2:
        raise ValueError(f"Pegasos is for two classes, got {len(classes)}")
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    Ts = _int_grid(np.unique(np.logspace(1, 5, 20).astype(np.intp)) if n_iters is None else n_iters,
                   "n_iters", 1)
    Xa = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
    low, high = _svm_optimum(Xa, y_pm, lam)
    R = float(np.sqrt(np.max(np.einsum("ij,ij->i", Xa, Xa))))
    obj = np.array([Pegasos(alpha=lam, max_iter=int(T), average=True, fit_intercept=fit_intercept,
                            random_state=random_state).fit(X, y).objective(X, y) for T in Ts])
    bound = np.array([pegasos_bound(lam, int(T), X_norm=R) for T in Ts])
    return {"n_iter": Ts, "objective": obj, "optimum": low, "gap": high - low, "suboptimality": obj - low,
            "bound": bound}


def plot_pegasos(X: ArrayLike, y: ArrayLike, lam: float = 1e-2, n_iters: Sequence[int] | None = None,
                 random_state: RandomStateLike = 0, fit_intercept: bool = True, ax: Axes | None = None) -> Axes:
    """Plot F(w_bar_T) - F* against T with the bound of 003, section 12 (log-log); returns the Axes.

    The numbers are those of :func:`pegasos_objective_table`.

    Parameters
    ----------
    X : array-like of shape (m, d)
        The training set.
    y : array-like of shape (m,)
        Two classes.
    lam : float, default=1e-2
        The regularisation parameter.
    n_iters : sequence of int, optional
        The values of T (default: 20 values from 10 to 10^5, log-spaced).
    random_state : int or None, default=0
        Seeds Pegasos (the same seed for every T).
    fit_intercept : bool, default=True
        As Pegasos' parameter.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).

    Returns
    -------
    matplotlib.axes.Axes
        Lines: the suboptimality, the bound.

    See Also
    --------
    pegasos_objective_table : The numbers plotted.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from smml.plot import plot_pegasos
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> ax = plot_pegasos(X, y, lam=0.1, n_iters=[10, 100, 1000])
    >>> print(type(ax).__name__, len(ax.lines), ax.get_xscale(), ax.get_yscale())
    Axes 2 log log
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    t = pegasos_objective_table(X, y, lam, n_iters, random_state, fit_intercept)
    ax = _axes(ax)
    ax.loglog(t["n_iter"], np.maximum(t["suboptimality"], 1e-12), "o-", ms=3, color=_TEST,
              label=r"$F(\bar w_T) - F(w^*)$")
    ax.loglog(t["n_iter"], t["bound"], color=_BOUND, label=r"$\frac{G^2}{2\lambda T}(\ln T + 1)$")
    ax.set(xlabel="T (steps)", ylabel="objective above the optimum", title=f"Pegasos (lambda = {lam:g})")
    ax.legend()
    return ax


# ---- learning curves and comparisons (smml.model_selection) ---------------------------

def plot_learning_curve(result: LearningCurveResult, ax: Axes | None = None) -> Axes:
    """Plot a :func:`smml.model_selection.learning_curve` result with its Hoeffding intervals.

    Parameters
    ----------
    result : LearningCurveResult
        What :func:`smml.model_selection.learning_curve` returned.
    ax : matplotlib.axes.Axes, optional
        Where to draw.

    Returns
    -------
    matplotlib.axes.Axes
        Lines: training error, test error; the band is the interval.

    See Also
    --------
    smml.model_selection.learning_curve : The result plotted.
    sklearn.model_selection.LearningCurveDisplay : The CV learning-curve plot of scikit-learn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from smml.model_selection import learning_curve
    >>> from smml.neighbors import KNNClassifier
    >>> from smml.plot import plot_learning_curve
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> res = learning_curve(KNNClassifier(n_neighbors=3), X, y, train_sizes=[10, 20, 40], random_state=0)
    >>> ax = plot_learning_curve(res)
    >>> print(type(ax).__name__, len(ax.lines), len(ax.collections))
    Axes 2 1
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    ax = _axes(ax)
    m = result.train_sizes
    ax.plot(m, result.train_errors, "o-", ms=3, color=_TRAIN, label="training error")
    ax.plot(m, result.test_errors, "o-", ms=3, color=_TEST, label="test error")
    if result.intervals is not None:
        ax.fill_between(m, result.intervals[:, 0], result.intervals[:, 1], color=_TEST, alpha=0.2,
                        label=f"{1 - result.delta:.0%} Hoeffding interval (n = {result.n_test})")
    ax.set(xlabel="training examples m", ylabel="loss", title="Learning curve")
    ax.legend()
    return ax


def plot_compare(result: CompareResult, names: tuple[str, str] = ("A", "B"), ax: Axes | None = None) -> Axes:
    """Plot the paired differences of a :func:`smml.model_selection.compare` result, fold by fold.

    Parameters
    ----------
    result : CompareResult
        What :func:`smml.model_selection.compare` returned.
    names : (str, str), default=("A", "B")
        What to call the two learners.
    ax : matplotlib.axes.Axes, optional
        Where to draw.

    Returns
    -------
    matplotlib.axes.Axes
        One bar per fold: error of the first learner minus error of the second.

    See Also
    --------
    smml.model_selection.compare : The result plotted.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from smml.model_selection import compare
    >>> from smml.neighbors import KNNClassifier
    >>> from smml.plot import plot_compare
    >>> from smml.datasets import make_bayes_classification
    >>> X, y, _ = make_bayes_classification(n_samples=80, random_state=0)
    >>> res = compare(KNNClassifier(n_neighbors=1), KNNClassifier(n_neighbors=5), X, y, K=5, random_state=0)
    >>> ax = plot_compare(res, names=("1-NN", "5-NN"))
    >>> print(type(ax).__name__, len(ax.patches), ax.get_ylabel())
    Axes 5 error(1-NN) - error(5-NN)
    >>> import matplotlib.pyplot as plt
    >>> plt.close("all")
    """
    ax = _axes(ax)
    d = result.differences
    colors = np.where(d < 0, _TEST, np.where(d > 0, _TRAIN, "grey"))
    ax.bar(np.arange(1, len(d) + 1), d, color=colors)
    ax.axhline(0.0, color="black", lw=0.8)
    verdict = ("no significant difference" if not result.significant
               else f"{names[0] if result.better == 'A' else names[1]} is better")
    ax.set(xlabel="fold", ylabel=f"error({names[0]}) - error({names[1]})",
           title=f"Wilcoxon signed-rank test: p = {result.pvalue:.3g}\n"
                 f"at alpha = {result.alpha:g}: {verdict}")
    return ax
