"""The rounds of second-order gradient boosting (002 section 3.2 "XGBoost"), written once for
two drivers.

:class:`smml.ensemble.GradientBoostingClassifier` / ``Regressor`` run them in process on all
the rows; :mod:`smml.dask`'s boosting estimators on every worker of a cluster at once, each
worker answering the requests for the rows it holds, the answers all-reduced between the
workers (each tree grown a level at a time from histograms summed across them). Any smml module may import this one (a ground-floor module): it holds what both
need, and nothing of either.

The loop (:func:`boosting_rounds`) is a generator of requests: it yields ``(name, args)`` and
is sent the request's result, the same whatever holds the rows. The requests:

- ``"grads", (want_loss,)``: the previous tree's values into the scores F (where a driver
  still holds them back), then each row's gradient and hessian at F for every class.
  Result ``(loss, maxima)``: the training loss at F (summed over the rows, weighted; only
  read when ``want_loss``) and, per class k, ``(max |g_k|, max |h_k|)``.
- ``"quantize", (scales,)``: round every g_k and h_k to a multiple of the class's scales
  ``(s_g, s_h)`` (:func:`smml._exact_sums.fixed_scale` of n and the maxima), so that every sum
  of them is exact in any order and grouping. Result ignored.
- ``"tree", (k, rows, feats, more)``: grow the tree of class k on the (sorted) rows ``rows``
  (None: all of them) and the (sorted) features ``feats`` (None: all of them), and add its
  values to the scores of every row it is meant for (a driver may hold them back until the
  next request that reads F). ``more``: another round follows this tree (the last of its
  round): a driver may compute the next round's gradients along with it. Result
  ``(tree, split_bins)``.
- ``"scores", ()``: after a round's trees, the loss of every reported eval set and of the
  early-stopping set. Result ``(losses, stop_loss)``: a list (summed losses divided by the
  set's weight and the loss's scale) and a float, or None without early stopping.
- ``"finish", ()``: the last tree's values into F; result the training loss at F.

Random draws. The rounds draw from ``rng``, per round, the rows of ``subsample`` and then the
features of ``colsample_bytree`` (:func:`draws`): a warm start replays the draws of the
rounds already fitted with the same function.
"""
import numpy as np

from smml._core import _gbm
from smml._exact_sums import fixed_scale
from smml.exceptions import DivergenceError

__all__ = ["draws", "gradients", "quantize", "boosting_rounds", "drive"]


def draws(rng, n, m, d, mf):
    """One round's random draws from ``rng``: ``(rows, feats)``, m of the n rows and mf of the
    d features drawn without replacement and sorted, or None where all are kept (no draw)."""
    rows = None if m >= n else np.sort(rng.choice(n, m, replace=False)).astype(np.intp)
    feats = None if mf >= d else np.sort(rng.choice(d, mf, replace=False)).astype(np.intp)
    return rows, feats


def gradients(loss_code, y, F, sw, G, H, n_threads, want_loss, h_max=None):
    """A ``"grads"`` request's answer on the rows held: each row's gradient and hessian at the
    scores F, per class, into G and H (K, n); returns ``(loss, maxima)``, the weighted training
    loss at F (0 unless ``want_loss``) and per class ``(max |g_k|, max |h_k|)``.  ``h_max``
    (the square loss, from the second round on): H holds the h = 2 w of the rounds before,
    unchanged, and h_max is their maximum: H is not written again."""
    maxima = np.empty((G.shape[0], 2))
    loss = _gbm.gradients(loss_code, y, F, sw, G, H, n_threads, want_loss, maxima, h_max is None)
    if h_max is not None:
        maxima[0, 1] = h_max
    return loss, [(float(g), float(h)) for g, h in maxima]


def quantize(G, H, scales, n_threads=1, hess=True):
    """A ``"quantize"`` request's answer: G[k] and H[k] rounded in place to multiples of the
    class's scales ``(s_g, s_h)``, on n_threads threads (the same values on any number).
    ``hess`` False: H is left as it is (rounded already to the same scale: rounding again
    would not change it)."""
    for k, (sg, sh) in enumerate(scales):
        _gbm.quantize(G[k], sg, n_threads)
        if hess:
            _gbm.quantize(H[k], sh, n_threads)


def boosting_rounds(rounds, first, last, K, n, d, m, mf, rng, wsum, scale, stop=None, name="gradient boosting",
                    learning_rate=None):
    """Rounds ``first`` .. ``last - 1`` of the boosting loop (``rounds`` iterates over them: a
    progress bar or a range), as a generator of requests (the module docstring).

    Parameters
    ----------
    rounds : iterable of int
        The round numbers ``first .. last - 1``.
    first, last : int
        The first round to fit (0, or the rounds a warm start already has) and the end.
    K : int
        Trees per round (1, or the number of classes of a softmax fit).
    n, d : int
        The training rows and features.
    m, mf : int
        Rows (``subsample``) and features (``colsample_bytree``) each tree sees.
    rng : numpy.random.Generator
        The fit's stream of draws (after the bins' seed).
    wsum : float
        The total sample weight (the training loss is reported per unit of weight).
    scale : float
        The loss's scale (2 for ``half_squared_error``, run as the square loss).
    stop : (float, int) or None
        Early stopping's ``(tol, n_iter_no_change)``, read when ``"scores"`` gives a stopping loss.
    name, learning_rate : str, float or None
        For the error message: a training loss or gradient that overflows raises
        :class:`smml.exceptions.DivergenceError` naming the estimator and its learning rate.

    Returns
    -------
    result : dict
        ``trees`` and ``split_bins`` (the new trees, K per round, kept up to the best round
        under early stopping), ``train_score`` (the training loss after each new round but the
        first, then after the last), ``val_score``, ``history`` (per eval set, its loss after
        each round) and ``best_round`` (the round of the best stopping loss; -1 without one).
    """
    trees, split_bins, train_score, val_score, history = [], [], [], [], None
    best, best_round, since = np.inf, -1, 0
    for t in rounds:
        # the previous round's training loss comes with this round's gradients (the same F)
        loss, maxima = yield "grads", (t > 0,)
        if (t > 0 and not np.isfinite(loss)) or not all(np.isfinite(g) and np.isfinite(h) for g, h in maxima):
            # the scores overflow (a learning rate far above 1 overshoots more each round): a
            # clear error, not a model that predicts inf / NaN
            lr = "" if learning_rate is None else f" (now {learning_rate!r})"
            raise DivergenceError(f"{name}: the training loss or its gradients became non-finite (overflow) "
                                  f"after round {t}; lower learning_rate{lr}")
        # fixed point, per class: every histogram sum exact (smml._exact_sums.fixed_scale)
        yield "quantize", ([(fixed_scale(n, g), fixed_scale(n, h)) for g, h in maxima],)
        if t > first:       # (warm start: the loss after round `first` is stored already)
            train_score.append(loss / wsum / scale)
        rows, feats = draws(rng, n, m, d, mf)
        for k in range(K):
            tree, sbin = yield "tree", (k, rows, feats, k == K - 1 and t + 1 < last)
            trees.append(tree)
            split_bins.append(sbin)
        losses, v = yield "scores", ()
        if history is None:
            history = [[] for _ in losses]
        for h, x in zip(history, losses):
            h.append(x)
        if v is not None:
            val_score.append(v)
            if v < best - stop[0]:
                best, best_round, since = v, t, 0
            else:
                since += 1
                if since >= stop[1]:
                    break
    if trees:                   # the last round's training loss
        train_score.append((yield "finish", ()) / wsum / scale)
    if val_score:               # early stopping: the rounds up to the best one
        keep = (best_round + 1) * K
        trees, split_bins = trees[:keep], split_bins[:keep]
        train_score, val_score = train_score[:best_round + 1], val_score[:best_round + 1]
    return dict(trees=trees, split_bins=split_bins, train_score=train_score, val_score=val_score,
                history=history or [], best_round=best_round)


def drive(loop, driver):
    """Run a request generator (:func:`boosting_rounds`) in process: each request ``(name,
    args)`` answered by ``getattr(driver, name)(*args)``. Returns the loop's result."""
    try:
        name, args = next(loop)
        while True:
            name, args = loop.send(getattr(driver, name)(*args))
    except StopIteration as stop:
        return stop.value
