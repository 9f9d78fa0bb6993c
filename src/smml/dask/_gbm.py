"""Gradient boosting on a dask array: the rounds of :mod:`smml.ensemble._gradient_boosting`
with the rows kept on the workers (one Dask actor per worker, as :mod:`smml.dask._kmeans`) and
each tree grown level by level by the workers together, from histograms each worker sends
straight to the others (an all-reduce between the workers); the workers run the rounds loop
together, so the driver makes one call a fit.

Exactness. The in-memory fit rounds every round's gradients and hessians to a fixed point
(``smml._exact_sums.fixed_scale``: multiples of 2^-k with n max|g| 2^k < 2^51), so every sum of them, in any
order and grouping, is exact: a node's histogram summed from the workers' partial histograms
is the one the in-memory kernel builds from the node's rows, bit for bit, whatever the chunks.
The split of each node is chosen by the in-memory kernel's own scan and choice
(``_gbm.best_splits``: ``_scan_one`` and ``_pick`` of ``_core/_gbm.pyx``), the leaf values by
the same formula, F_0 from exactly rounded sums: the model is the in-memory one."""
import asyncio
import inspect
import secrets
from typing import Any, NamedTuple, TypeVar

import numpy as np
import dask

from smml._binning import apply_bins, bin_edges, _BIN_SUBSAMPLE
from smml._gbm_rounds import boosting_rounds, gradients, quantize
from smml._core import _gbm
from smml._validation import _aligned
from smml import _exact_sums
from smml.ensemble import GradientBoostingClassifier as _GBC, GradientBoostingRegressor as _GBR
from smml.tree import Tree
from smml._core._tree import NODE_DTYPE
from smml.dask._actors import _Links, _LostWorker, _call_peer, _drive_actors, _drive_local, _gather, _reused
from smml.dask._validation import _check_dask_X, _check_dask_y, _distributed_client, _split_rows, _stacked

__all__ = ["GradientBoostingClassifier", "GradientBoostingRegressor"]


_Self = TypeVar("_Self")

class _Rows:
    """Consecutive row blocks of X, y and the sample weights, for a whole fit: on a distributed
    cluster one per worker (a Dask actor: the driver calls it directly, the data stay on the
    worker), else one of this process. The raw X is kept until the bin edges are known, then
    only its codes; per round the scores F, gradients G and hessians H; per tree the node of
    each row."""

    def __init__(self, classifier, n_threads, n_blocks, has_w, *blocks):
        X = _stacked(blocks[:n_blocks])
        y = _stacked(blocks[n_blocks:2 * n_blocks])
        X = np.ascontiguousarray(X, dtype=np.float64)
        if np.isinf(X).any():
            raise ValueError("X contains infinity (NaN is a missing value, infinity is not allowed)")
        if has_w:
            sw = np.ascontiguousarray(_stacked(blocks[2 * n_blocks:]), dtype=np.float64)
            if not np.all(np.isfinite(sw)):
                raise ValueError("sample_weight contains NaN or infinity")
            if np.any(sw < 0):
                raise ValueError("sample_weight must be non-negative")
            keep = sw > 0
            if not keep.all():                   # the in-memory fit drops the rows of weight 0
                X, y, sw = X[keep], y[keep], sw[keep]
        else:
            sw = np.ones(X.shape[0])
        if not classifier:
            try:
                y = np.ascontiguousarray(y, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"y must be numeric for a regressor: {exc}") from None
            if not np.all(np.isfinite(y)):
                raise ValueError("y contains NaN or infinity")
        if n_threads is None:          # an actor: the worker's threads
            from distributed import get_worker
            n_threads = get_worker().state.nthreads
        self.nt = max(1, int(n_threads))
        self.X, self.y, self.sw = _aligned(X), y, _aligned(sw)
        self.bufs = {}
        self.g = 0                  # this group's index (a _Group's is set by connect)
        self.classifier = classifier

    def stats(self):
        """Rows kept, the columns with NaN, the labels present (classifier)."""
        return (self.X.shape[0], np.isnan(self.X).any(axis=0),
                np.unique(self.y) if self.classifier else None)

    def setup(self, classes, K):
        """The targets as the in-memory fit encodes them; exact sums for F_0."""
        if classes is not None:
            self.y = np.searchsorted(classes, self.y).astype(np.float64)
        self.y = _aligned(np.ascontiguousarray(self.y, dtype=np.float64))
        per_class = [_exact_sums.exact_parts(self.sw[self.y == k]) for k in range(K)] if K > 1 else None
        return _exact_sums.exact_parts(self.sw), _exact_sums.exact_parts(self.sw * self.y), per_class

    def rows(self, idx):
        """The rows ``idx`` (local) of X: the sample of the bin edges."""
        return self.X[idx]

    def bin(self, edges, n_edges, nan_code, F0):
        """The codes of X for the fit's edges (the raw X is dropped); F = F_0."""
        d = self.X.shape[1]
        self.Xb = apply_bins(self.X, edges, n_edges, np.zeros(d, np.uint8), {}, self.nt, nan_code)
        self.nan_code = nan_code
        self.X = None
        n, K = self.Xb.shape[0], len(F0)
        self.F = np.tile(np.asarray(F0, np.float64), (n, 1))
        self.G = np.empty((K, n))
        self.H = np.empty((K, n))
        self.node = np.zeros(n, np.int32)
        self.slot = np.zeros(n, np.int32)
        return n

    def configure(self, grow):
        """The fit's :class:`_Growth` (bins, penalties, depth limit), once, before the trees."""
        self.grow = grow

    def grads(self, loss_code, want_loss):
        """This round's gradients and hessians (and the loss at F); each class's max |g| and
        max |h|."""
        return gradients(loss_code, self.y, self.F, self.sw, self.G, self.H, self.nt, want_loss)

    def root(self, k, scales):
        """Every row to the root of tree k ((first tree of the round) G and H rounded in place
        to the round's fixed point first, as in memory); the root's histogram (its rows are the
        fit's n: none to send)."""
        if scales is not None:
            quantize(self.G, self.H, scales, self.nt)
        self.k = k
        self.node.fill(0)
        self.slot.fill(0)
        return self._hist(1), None

    def scratch(self, key, shape):
        """A float64 array of ``shape`` (not zeroed) in the buffer kept for ``key``: each
        level's histograms reuse the memory of the last (``_actors._reused``)."""
        return _reused(self.bufs, key, shape, np.float64)

    def _out(self, m):
        """The (zeroed) histograms of m nodes this group sends: one buffer, reused each level
        (a level's are summed before the next level's are built)."""
        out = self.scratch("out", (m, self.Xb.shape[1], self.grow.nb, 2))
        out.fill(0.0)
        return out

    def _hist(self, m):
        out = self._out(m)
        counts = np.zeros(m, np.int64)
        if m:
            _gbm.level_histograms(self.Xb, self.slot, self.G[self.k], self.H[self.k], out, counts)
        return out

    def level(self, feature, split_bin, missing_left, first_child, child_slot, m):
        """The rows of the split nodes to their children; the histograms of the m children
        asked for (``child_slot``) and the rows of every node."""
        counts = np.zeros(len(feature), np.int64)
        out = self._out(m)
        # the move and the children's histograms in one pass over the rows
        _gbm.route_level(self.Xb, self.node, feature, split_bin, missing_left, self.nan_code, first_child,
                         child_slot, self.slot, counts, self.G[self.k], self.H[self.k], out)
        return out, counts

    def values(self, k, value):
        """The tree's leaf values (by node id) into F's column k."""
        _gbm.add_leaf_values(self.node, value, self.F, k)

    def fit(self, loop_args, loss_code):
        """The whole boosting loop on this group's rows alone (the only group: dask's local
        schedulers); see :func:`_fit_steps`."""
        steps = _fit_steps(self, loop_args, loss_code)
        try:
            payload = next(steps)
            while True:
                payload = steps.send([payload])
        except StopIteration as stop:
            return stop.value

    def finish(self, loss_code):
        """The training loss at F."""
        return _gbm.loss_sum(loss_code, self.y, self.F, self.sw, self.nt)


class _Group(_Rows):
    """The rows of one worker (a Dask actor), which grows each tree together with the other
    groups: at every level each group sends its histograms straight to every other group and
    sums theirs (an all-reduce between the workers; the driver is not in the middle), and every
    group chooses the same splits from the same exact sums. The histograms travel on direct
    sockets between the workers (:class:`smml.dask._actors._Links`) where the workers' comm
    allows it, else as Dask RPCs (``direct = False``, or a ``tls://`` cluster)."""

    #: send the histograms on direct sockets where the comm allows it
    direct = True
    #: the fit's direct links (set by listen), None: the exchanges go through Dask
    links = None

    def listen(self):
        """A listening socket for the other groups: its (host, port), or None (no direct
        links: the exchanges go through Dask)."""
        self.links = None
        host = _Links.host() if self.direct else None
        if host is None:
            return None
        self.links = _Links()
        return self.links.listen(host)

    async def connect(self, peers, g, addrs, token):
        """The groups of the fit: ``peers`` (worker address, actor key) of each, this one ``g``;
        ``addrs``: each group's listening (host, port), or None (every exchange through Dask)."""
        self.peers, self.g = peers, g
        self.tag = 0
        self.box, self.events = {}, {}
        self.aborted = False
        if addrs is None:
            if self.links is not None:
                self.links.close()
            self.links = None
        else:
            await self.links.connect(addrs, g, token, self.put)

    def _event(self, tag):
        if tag not in self.events:
            self.events[tag] = asyncio.Event()
            if self.aborted:
                self.events[tag].set()
        return self.events[tag]

    def put(self, tag, src, payload):
        """A peer's payload of exchange ``tag`` (called by group ``src``, on this worker's event
        loop)."""
        got = self.box.setdefault(tag, {})
        got[src] = payload
        if len(got) == len(self.peers) - 1:
            self._event(tag).set()

    def abort(self):
        """The fit is over (done, a lost group, an error): a pending exchange raises instead
        of waiting; the direct links are closed."""
        self.aborted = True
        for ev in self.events.values():
            ev.set()
        if self.links is not None:
            self.links.close()

    async def _exchange(self, payload):
        """Every group's payload of this exchange, in group order (this group's own included)."""
        self.tag += 1
        tag = self.tag
        others = [(i, a, key) for i, (a, key) in enumerate(self.peers) if i != self.g]
        if others:
            if self.links is not None:
                sends = [self.links.send(i, tag, self.g, payload) for i, _, _ in others]
            else:
                sends = [_call_peer(a, key, "put", tag, self.g, payload) for _, a, key in others]
            await asyncio.gather(*sends)
            await self._event(tag).wait()
        self.events.pop(tag, None)
        if self.aborted:
            raise RuntimeError("smml.dask: the fit was aborted (a group was lost or failed)")
        got = self.box.pop(tag, {})
        return [payload if i == self.g else got[i] for i in range(len(self.peers))]

    async def fit(self, loop_args, loss_code):
        """The whole boosting loop, run by all the groups together (see :func:`_fit_steps`);
        its result only from the first group (every group has the same)."""
        steps = _fit_steps(self, loop_args, loss_code)
        try:
            payload = next(steps)
            while True:
                payload = steps.send(await self._exchange(payload))
        except StopIteration as stop:
            return stop.value if self.g == 0 else None


class _Growth(NamedTuple):
    """What every tree of a fit grows with: the histograms' bins per feature, the rows, the bin
    edges, each feature's missing-value code, the penalties (lambda, gamma, min_child_weight;
    the loss's scale applied), the learning rate, the depth limit (-1: none), all features."""
    nb: int
    n: int
    edges: np.ndarray
    nan_code: np.ndarray
    lam: float
    gam: float
    mcw: float
    lr: float
    max_depth: int
    all_feats: np.ndarray


def _sum_hists(rows, level, outs, extra=0):
    """The workers' histograms, (m, d, nb, 2) each (per bin: sum h, sum g, the growth kernel's
    layout, which ``_gbm.best_splits`` scans), summed (exact: fixed-point values) into an
    (m + extra, d, nb, 2) array of ``rows``' scratch for the level's parity (a level's
    histograms and its parent level's, from which the siblings are subtracted, are in two
    buffers); the ``extra`` rows (not zeroed) are for the siblings' subtracted histograms, so
    a level's histograms are one array, none copied."""
    first = outs[0][0]
    h = rows.scratch(("sum", level % 2), (first.shape[0] + extra,) + first.shape[1:])
    v = h[:first.shape[0]]
    np.copyto(v, first)
    for o in outs[1:]:
        v += o[0]
    return h


def _side_totals(hist, f, b, miss_left, nan_code):
    """(H, G) of the first child of the split "code <= b" of feature f (missing values to the
    first child when miss_left) from the node's (d, nb, 2) histogram: exact sums."""
    hf = hist[f]
    nc = nan_code[f]
    sel = np.zeros(hf.shape[0], bool)
    sel[:b + 1] = True
    if nc >= 0:
        sel[nc] = bool(miss_left)
    return float(hf[sel, 0].sum()), float(hf[sel, 1].sum())


def _leaf_values(Htot, Gtot, lam, lr):
    """Each node's value lr * w* = lr * (-G / (H + lambda)) (002 "XGBoost"; 0 when H + lambda
    <= 0), by the driver's node ids: the growth kernel's ``_set_node``."""
    out = np.zeros(len(Htot))
    for u in range(len(Htot)):
        den = Htot[u] + lam
        out[u] = lr * (-Gtot[u] / den) if den > 0.0 else 0.0
    return out


def _tree_steps(rows, k, scales, feats, nxt):
    """One tree on a group's rows, level by level: a generator that yields this group's
    (histograms, rows per node) of a level and is sent every group's, in group order. Every
    group runs it on the same sums, so every group makes the same choices: the in-memory
    kernel's split scan and choice (``_gbm.best_splits``) on the summed histograms (exact:
    fixed-point values), of two siblings only the one of smaller hessian sum built, the other
    its parent's minus it. ``rows``: the group (:class:`_Rows`, its ``grow`` the fit's
    :class:`_Growth`); ``scales``: the round's fixed-point scales (its first tree), else None;
    ``nxt``: the loss code when the next round's gradients are to be computed after this tree,
    else None.

    Returns (the tree's nodes: depth, rows, H, G, split, first child, each in creation order;
    the leaf values by node id; (node ids, this group's rows of each) of the last level,
    whose rows no group sent, or None; the next round's ``grads`` or None). The leaf values
    are in the group's F when it returns."""
    grow = rows.grow
    n, edges, nan_code = grow.n, grow.edges, grow.nan_code
    lam, gam, mcw, lr, max_depth = grow.lam, grow.gam, grow.mcw, grow.lr, grow.max_depth
    is_cat = np.zeros(len(nan_code), np.uint8)
    buf = _sum_hists(rows, 0, (yield rows.root(k, scales)))          # (1, d, nb, 2)
    depth_now = 0
    # the nodes, in creation order: depth, rows, H, G, split, children
    Hs = float(buf[0, 0, :, 0].sum())
    Gs = float(buf[0, 0, :, 1].sum())
    depth, nrows, Htot, Gtot = [0], [n], [Hs], [Gs]
    split = [None]
    first = [-1]
    unsent = None

    def can_split(dep, nn, H):
        if max_depth >= 0 and dep >= max_depth:
            return False
        return nn >= 2 and H >= 2.0 * mcw

    level = [0] if can_split(0, n, Hs) else []
    row = {0: 0}                    # each node's row of buf, the level's histograms
    while level:
        tot = np.array([[Htot[u], Gtot[u]] for u in level])
        nn = np.array([nrows[u] for u in level], np.intp)
        which = np.array([row[u] for u in level], np.intp)
        f, b, thr, ml, imp = _gbm.best_splits(buf, which, tot, nn, edges, is_cat, nan_code, feats, lam, gam, mcw)
        new_level, build = [], []
        for i, u in enumerate(level):
            if f[i] < 0:
                continue
            split[u] = (int(f[i]), int(b[i]), float(thr[i]), int(ml[i]), float(imp[i]))
            hL, gL = _side_totals(buf[row[u]], f[i], b[i], ml[i], nan_code)
            kids = (len(depth), len(depth) + 1)
            first[u] = kids[0]
            for c, (h, g) in zip(kids, ((hL, gL), (Htot[u] - hL, Gtot[u] - gL))):
                depth.append(depth[u] + 1)
                nrows.append(0)
                Htot.append(h)
                Gtot.append(g)
                split.append(None)
                first.append(-1)
            need = [can_split(depth[c], 2, Htot[c]) for c in kids]   # rows checked when known
            if need[0] and need[1]:
                small = kids[0] if Htot[kids[0]] <= Htot[kids[1]] else kids[1]
                build.append(small)
                new_level.append((u, kids, small))
            elif need[0] or need[1]:
                c = kids[0] if need[0] else kids[1]
                build.append(c)
                new_level.append((u, kids, None))
            else:
                new_level.append((u, kids, None))
        if not new_level:
            break
        m = len(depth)
        feature = np.full(m, -1, np.intp)
        sbin = np.full(m, -1, np.int32)
        mleft = np.zeros(m, np.uint8)
        fc = np.full(m, -1, np.int32)
        cslot = np.full(m, -1, np.int32)
        for u, kids, _ in new_level:
            feature[u], sbin[u], _, mleft[u], _ = split[u]
            fc[u] = kids[0]
        cslot_of = {c: s for s, c in enumerate(build)}
        for c, s in cslot_of.items():
            cslot[c] = s
        out = rows.level(feature, sbin, mleft, fc, cslot, len(build))
        if not build:
            # the tree's last level: every child is a leaf whatever its rows, which only the
            # stored tree needs (the driver sums them)
            kids = np.array([c for _, ks, _ in new_level for c in ks], np.intp)
            unsent = (kids, out[1][kids])
            break
        outs = yield out
        counts = np.zeros(m, np.int64)
        for o in outs:
            counts += o[1][:m]
        for u, kids, _ in new_level:
            for c in kids:
                nrows[c] = int(counts[c])
        level, sibs = [], []          # sibs: (node, its parent, its built sibling)
        for u, kids, small in new_level:
            for c in kids:
                if can_split(depth[c], nrows[c], Htot[c]):
                    level.append(c)
                    if c not in cslot_of:
                        sibs.append((c, u, small))
        if level:
            # the built histograms summed, then each sibling's: the parent's minus the built
            # one (exact), in the rows after them
            depth_now += 1
            hb = _sum_hists(rows, depth_now, outs, len(sibs))
            hb_row = dict(cslot_of)
            for j, (c, u, small) in enumerate(sibs):
                hb_row[c] = len(build) + j
                np.subtract(buf[row[u]], hb[cslot_of[small]], out=hb[len(build) + j])
            buf, row = hb, hb_row
    vals = _leaf_values(Htot, Gtot, lam, lr)
    rows.values(k, vals)
    nodes = (depth, nrows, Htot, Gtot, split, first)
    return nodes, vals, unsent, (None if nxt is None else rows.grads(nxt, True))


def _as_tree(depth, nrows, Htot, Gtot, split, first, vals):
    """The tree as the in-memory kernel numbers it (depth-first, first child first, the
    children of a split numbered after the nodes split before it)."""
    m = len(depth)
    new = np.full(m, -1, np.intp)
    new[0] = 0
    count = 1
    stack = [0] if split[0] is not None else []
    while stack:
        u = stack.pop()
        a = first[u]
        new[a], new[a + 1] = count, count + 1
        count += 2
        for c in (a + 1, a):
            if split[c] is not None:
                stack.append(c)
    order = np.flatnonzero(new >= 0)
    nodes = np.zeros(count, NODE_DTYPE)
    value = np.zeros((count, 1))
    sbin = np.full(count, -1, np.int32)
    for u in order:
        i = new[u]
        nd = nodes[i]
        value[i, 0] = vals[u]
        nd["weighted_n_node_samples"] = Htot[u]
        nd["n_node_samples"] = nrows[u]
        nd["depth"] = depth[u]
        if split[u] is not None:
            f, b, thr, ml, imp = split[u]
            nd["feature"], nd["threshold"], nd["missing_left"], nd["improvement"] = f, thr, ml, imp
            nd["children_left"] = new[first[u]]
            sbin[i] = b
        else:
            nd["feature"] = -1
            nd["children_left"] = -1
        nodes[i] = nd
    bits = np.zeros((count, _gbm.NWORDS_), np.uint64)
    return Tree._grown(nodes, value, bits), sbin


def _fit_steps(rows, loop_args, loss_code):
    """The boosting loop (``smml._gbm_rounds.boosting_rounds(*loop_args)``) run on a group, as
    a generator that yields this group's payload of an exchange and is sent every group's, in
    group order (as :func:`_tree_steps`, whose exchanges it passes on). Every group runs the
    same loop on the same all-reduced answers, so every group makes the same requests and
    choices: the driver makes one call a fit, not one a tree. The answers:

    - ``"grads"``: this group's training loss and its per-class maxima of |g| and |h|
      (computed by the round's last tree when it was not the fit's last: ``_tree_steps``'s
      ``nxt``), exchanged; the losses summed in group order, the maxima's maximum: what the
      driver summed before, bit for bit;
    - ``"quantize"``: the round's scales, applied by its first tree's root;
    - ``"tree"``: the tree grown by all the groups (:func:`_tree_steps`), the rows of its last
      level's leaves (which no level sent) exchanged and summed; the first group builds the
      stored tree (:func:`_as_tree`), the others answer None (their result is not used);
    - ``"scores"``: no eval sets on dask arrays; ``"finish"``: the training loss, exchanged
      and summed.

    Returns the loop's result (the fit's trees on the first group). ``loop_args``: the
    positional and keyword arguments of ``boosting_rounds`` (its random generator arrives
    as a copy on each worker: every group draws the same columns)."""
    args, kwargs = loop_args
    loop = boosting_rounds(*args, **kwargs)
    grow = rows.grow
    folded = None               # the next round's gradients, from the round's last tree
    scales = None
    try:
        name, req = next(loop)
        while True:
            if name == "grads":
                loss, maxima = folded if folded is not None else rows.grads(loss_code, req[0])
                folded = None
                mine = np.array([loss] + [v for gh in maxima for v in gh], np.float64)
                outs = yield (mine,)
                total = 0.0
                for o in outs:
                    total = total + float(o[0][0])
                res = (total, [(max(float(o[0][1 + 2 * k]) for o in outs),
                                max(float(o[0][2 + 2 * k]) for o in outs)) for k in range(len(maxima))])
            elif name == "quantize":
                scales = req[0]
                res = None
            elif name == "tree":
                k, _, feats, more = req
                nodes, vals, unsent, grads = yield from _tree_steps(
                    rows, k, scales if k == 0 else None, grow.all_feats if feats is None else feats,
                    loss_code if more else None)
                nrows = nodes[1]
                if unsent is not None:       # the last level's rows, summed in group order
                    kids = unsent[0]
                    outs = yield (np.ascontiguousarray(unsent[1], np.int64),)
                    counts = np.zeros(len(kids), np.int64)
                    for o in outs:
                        counts += o[0]
                    for c, r in zip(kids, counts):
                        nrows[c] = int(r)
                if more:
                    folded = grads
                res = _as_tree(*nodes, vals) if rows.g == 0 else (None, None)
            elif name == "scores":     # no eval sets, no early stopping on dask arrays
                res = ([], None)
            elif name == "finish":
                outs = yield (np.array([rows.finish(loss_code)], np.float64),)
                res = 0.0
                for o in outs:
                    res = res + float(o[0][0])
            else:                      # pragma: no cover - the loop's requests are the above
                raise ValueError(f"unknown boosting request {name!r}")
            name, req = loop.send(res)
    except StopIteration as stop:
        return stop.value


def _connect(peers):
    """The groups' first requests: a listening socket each (direct links between the
    workers), then every group's (worker address, actor key), its own index, the sockets'
    addresses (None if a group has none: the exchanges go through Dask) and the fit's token."""
    addrs = yield "listen", [()] * len(peers)
    if any(a is None for a in addrs):
        addrs = None
    token = secrets.token_bytes(16)
    yield "connect", [(peers, g, addrs, token) for g in range(len(peers))]


async def _abort(groups, timeout=10.0):
    """``abort`` on every group that can still be reached within ``timeout`` seconds (the
    others are gone, and with them their waits)."""
    async def one(g):
        try:
            await asyncio.wait_for(g.abort(separate_thread=False), timeout)
        except Exception:          # noqa: BLE001 - a lost group: nothing left to stop
            pass
    await asyncio.gather(*[one(g) for g in groups])


class _DaskGradientBoostingMixin:
    """The fit on dask arrays; everything else (predict, save / load, plots, attributes) is the
    in-memory estimator's."""

    def to_local(self) -> Any:
        """The fitted model as an instance of the in-memory class (``smml.save`` / ``smml.load``
        and code that must not import dask).

        Returns
        -------
        model : smml.ensemble.GradientBoostingClassifier or GradientBoostingRegressor
            The same parameters and fitted attributes (shared, not copied).
        """
        base = _GBC if isinstance(self, _GBC) else _GBR
        out = base.__new__(base)
        out.__dict__.update(self.__dict__)
        return out

    def _refuse(self):
        name = f"smml.dask.{type(self).__name__}"
        if self.max_leaf_nodes is not None:
            raise ValueError(f"{name}: max_leaf_nodes is not offered on dask arrays (its best-first "
                             "growth is one node at a time; the trees here grow a level at a time): "
                             "use max_depth, or the in-memory estimator")
        if self.subsample < 1.0:
            raise ValueError(f"{name}: subsample < 1 is not offered on dask arrays")
        if self.early_stopping:
            raise ValueError(f"{name}: early_stopping is not offered on dask arrays")
        if self.warm_start:
            raise ValueError(f"{name}: warm_start is not offered on dask arrays")
        cf = self.categorical_features
        if not (cf is None or (isinstance(cf, str) and cf == "from_dtype")):
            raise ValueError(f"{name}: categorical features are not offered on dask arrays "
                             "(categorical_features must be None or 'from_dtype' with numeric columns)")

    def _fit_dask(self, X, y, sample_weight, classifier):
        self._validate_params()
        self._refuse()
        if hasattr(X, "to_dask_array") and not hasattr(X, "chunks"):    # a dask DataFrame
            if any(str(t) == "category" for t in X.dtypes):
                raise ValueError(f"smml.dask.{type(self).__name__}: categorical columns are not offered "
                                 "on dask data")
            X = X.to_dask_array(lengths=True)
        if hasattr(y, "to_dask_array") and not hasattr(y, "chunks"):
            y = y.to_dask_array(lengths=True)
        X = _check_dask_X(X)
        if X.dtype.kind not in "biuf":
            raise ValueError(f"X must be numeric, got dtype {X.dtype}")
        n, d = X.shape
        y = _check_dask_y(y, n, X.chunks[0])
        w = None if sample_weight is None else _check_dask_y(sample_weight, n, X.chunks[0])
        if w is not None and w.ndim != 1:
            raise ValueError("sample_weight must be 1-d")
        self._encode_categorical(np.zeros((1, d)), fit=True)
        for attempt in range(2):
            groups = keep = None
            try:
                groups, keep = self._groups(X, y, w, classifier)
                return self._run(groups, classifier, d)
            except _LostWorker as exc:
                # the groups hold state (F, the rows' nodes): a lost one cannot be rebuilt from a
                # task graph; the fit starts again once on new groups (the same result)
                if attempt:
                    raise RuntimeError(f"smml.dask.{type(self).__name__}: a worker holding part of X "
                                       "was lost during the fit, twice; nothing was fitted") from exc
            finally:
                groups = keep = None

    def _groups(self, X, y, w, classifier):
        client = _distributed_client()
        xs = X.to_delayed().ravel()
        ys = y.to_delayed().ravel()
        ws = [] if w is None else list(w.to_delayed().ravel())
        has_w = w is not None
        if client is None:
            nt = self._n_threads()
            blocks = dask.compute(*xs, *ys, *ws)
            nx = len(xs)
            return [_Rows(classifier, nt, nx, has_w, *blocks)], None
        workers = sorted(client.nthreads())
        bounds = _split_rows([int(c) for c in X.chunks[0]], max(1, len(workers)))
        keep = []
        for g in range(len(bounds) - 1):
            where = dict(workers=[workers[g]], allow_other_workers=True) if workers else {}
            a, b = bounds[g], bounds[g + 1]
            parts = client.compute(list(xs[a:b]) + list(ys[a:b]) + (list(ws[a:b]) if has_w else []), **where)
            keep.append(client.submit(_Group, classifier, None, b - a, has_w, *parts, actor=True, pure=False,
                                      **where))
        groups = _gather(keep)
        # each group's worker and actor key, for the exchanges between them
        where = client.who_has(keep)
        peers = [(where[f.key][0], f.key) for f in keep]
        try:
            client.sync(_drive_actors, _connect(peers), groups)
        except BaseException:
            client.sync(_abort, groups)          # the listening sockets closed, a pending accept ended
            raise
        return groups, keep

    def _run(self, groups, classifier, d):
        steps = self._steps(len(groups), classifier, d)
        client = _distributed_client()
        if client is None:
            return _drive_local(steps, groups)
        try:
            return client.sync(_drive_actors, steps, groups)
        finally:
            # a group waiting for a lost or failed one's histograms would wait for ever; a
            # finished fit's links are closed
            client.sync(_abort, groups)

    def _steps(self, G, classifier, d):
        """The fit as a generator of group requests (``_drive_local`` / ``_drive_actors``):
        yields (method, [args of each group]) and receives the groups' results."""
        name = f"smml.dask.{type(self).__name__}"
        st = yield "stats", [()] * G
        sizes = [s[0] for s in st]
        n = int(sum(sizes))
        if n == 0:
            raise ValueError(f"{name}: every sample has weight 0")
        nan_cols = np.logical_or.reduce([s[1] for s in st])
        if classifier:
            classes = np.unique(np.concatenate([s[2] for s in st]))
            if len(classes) < 2:
                raise ValueError(f"{name} needs samples of at least 2 classes, got only one class: "
                                 f"{classes[0]!r}")
            self.classes_ = classes
            K = 1 if len(classes) == 2 else len(classes)
            self.loss_ = "log_loss" if K == 1 else "softmax"
        else:
            classes = None
            K = 1
            self.loss_ = self.loss
        half = self.loss_ == "half_squared_error"
        scale = 2.0 if half else 1.0
        parts = yield "setup", [(classes, K)] * G
        wsum = _exact_sums.exact_total([p[0] for p in parts])
        F0 = _exact_sums.baseline_scores(self.loss_, K, [p[1] for p in parts], [p[2] for p in parts] if K > 1 else None,
                                  wsum)
        # the random stream of the in-memory fit (no validation split): the bins' seed, then the
        # columns of each tree
        entropy = np.random.SeedSequence(self._seed_sequence()).entropy
        rng = np.random.default_rng(np.random.SeedSequence(entropy))
        seed = int(rng.integers(2**63))
        # the bin edges from the rows bin_edges samples (all of them up to _BIN_SUBSAMPLE): the
        # in-memory fit's edges
        if n > _BIN_SUBSAMPLE:
            sub = np.random.default_rng(seed).choice(n, _BIN_SUBSAMPLE, replace=False)
            sub.sort()
        else:
            sub = np.arange(n)
        starts = np.concatenate(([0], np.cumsum(sizes)))
        per = [sub[(sub >= starts[g]) & (sub < starts[g + 1])] - starts[g] for g in range(G)]
        got = yield "rows", [(p,) for p in per]
        Xsub = np.concatenate([np.asarray(r).reshape(-1, d) for r in got])
        is_cat = np.zeros(d, np.uint8)
        n_threads = self._n_threads()
        edges_list = bin_edges(Xsub, self.max_bins, seed, n_threads, skip=is_cat, reserve=nan_cols)
        n_edges = np.array([len(e) for e in edges_list], np.intp)
        n_bins = n_edges + 1 + nan_cols.astype(np.intp)
        edges = np.full((d, max(int(n_bins.max()), 1)), np.inf)
        for j in range(d):
            edges[j, :n_edges[j]] = edges_list[j]
        nan_code = np.where(nan_cols, n_edges + 1, -1).astype(np.intp)
        nb = edges.shape[1]
        yield "bin", [(edges, n_edges, nan_code, F0)] * G

        self._baseline = F0
        self.n_trees_per_iteration_ = K
        loss_code = _gbm.LOSSES["squared_error" if half else self.loss_]
        lam, gam, mcw = scale * float(self.reg_lambda), scale * float(self.gamma), scale * float(self.min_child_weight)
        lr = float(self.learning_rate)
        max_depth = -1 if self.max_depth is None else min(self.max_depth, 62)
        mf = d if self.colsample_bytree >= 1.0 else max(1, int(round(self.colsample_bytree * d)))
        all_feats = np.arange(d, dtype=np.intp)
        loop_args = ((range(self.n_estimators), 0, self.n_estimators, K, n, d, n, mf, rng, wsum, scale),
                     dict(name=f"smml.dask.{type(self).__name__}", learning_rate=self.learning_rate))
        grow = _Growth(nb, n, edges, nan_code, lam, gam, mcw, lr, max_depth, all_feats)
        yield "configure", [(grow,)] * G
        # the whole loop on the groups (_fit_steps): one call, the first group's result
        res = (yield "fit", [(loop_args, loss_code)] * G)[0]
        self._store_rounds(res, entropy=entropy, classifier=classifier)
        self.n_features_in_ = d
        return self


def _inherited_sections(base):
    """The Parameters and Attributes sections of the in-memory class's docstring (cleaned:
    Python 3.13 strips docstrings' indentation when it compiles them, earlier versions do
    not)."""
    doc = inspect.cleandoc(base.__doc__)
    return doc[doc.index("Parameters\n----------\n"):doc.index("See Also\n--------\n")]


def _filled(template, base):
    """``template`` (a class docstring with the lines ``{how}`` and ``{params}``) with the
    shared text and the in-memory class's sections, as a cleaned docstring."""
    doc = inspect.cleandoc(template)
    return (doc.replace("{how}", inspect.cleandoc(_HOW_IT_RUNS))
            .replace("{params}", _inherited_sections(base).rstrip("\n")))


#: how the Dask fit runs, and what it gives (both estimators' docstrings)
_HOW_IT_RUNS = """    How it is fitted. Each worker holds consecutive row blocks of X, y and the sample weights
    for the whole fit (a Dask actor; on dask's local schedulers one group of this process holds
    all). The bin edges are the in-memory fit's: :func:`smml.tree.bin_edges` on the same
    sample of rows (the rows the in-memory fit samples, ``random_state``'s draw; all rows below
    200,000), gathered from the workers; each worker then codes its rows. The driver then
    makes ONE call: the workers run the boosting rounds together, each the same loop on the
    same numbers. Each round they compute their rows' gradients and hessians and exchange
    their maxima (the round's fixed-point scales) and training losses; every tree is grown a
    LEVEL at a time: for all the nodes of a level each worker builds the histograms of its rows
    (of two siblings only the one of smaller hessian sum, the other is its parent's minus it;
    two values a bin, (sum h, sum g)) and sends them straight to every other worker (an
    all-reduce between the workers, one message each way a level; on a direct socket between
    two workers where the cluster's comm is ``tcp://`` or ``inproc://``, else a Dask RPC);
    each worker sums them in worker order and chooses every split with the in-memory kernel's
    own compiled scan (``smml._core._gbm.best_splits``: ``_scan_one`` and ``_pick``) on the
    same exact sums, so all choose the same, and routes its rows to the children. At the end
    of a tree each worker adds the leaf values to its rows' scores (after a round's last tree
    it also computes the next round's gradients); the columns of ``colsample_bytree`` come
    from a copy of the fit's random generator on each worker (the same draws). A tree of
    depth D costs D + 1 exchanges between the workers (a round one more, the maxima) and none
    with the driver; the first worker returns all the trees at the end.

    Exactness. The gradients and hessians are rounded to a fixed point each round (multiples
    of 2^-k with n max|g| 2^k < 2^51, in the in-memory fit too): every histogram sum is then
    exact in any order and grouping, so the summed histograms, the splits, the leaf values and
    F_0 (exactly rounded sums) are the in-memory fit's bit for bit, whatever the chunks and the
    number of workers, given the same ``random_state`` (hence the same bin edges). Only
    ``train_score_`` is summed per worker then across workers (equal to rounding).

    Not offered on dask arrays (``ValueError``): ``max_leaf_nodes`` (best-first growth is one
    node at a time; level-wise growth cannot reproduce its order), ``subsample < 1``,
    ``early_stopping``, ``warm_start``, categorical features; ``fit`` takes no ``eval_set``.

    A worker lost during the fit loses its rows' state (F, the rows' nodes): the other workers'
    waits for its histograms are cancelled and the fit starts again once on new groups (the
    same model; dask recomputes the lost blocks from their graph), and a second loss raises
    ``RuntimeError``; never a different model, never a hang.

"""


class GradientBoostingClassifier(_DaskGradientBoostingMixin, _GBC):
    """Second-order gradient boosting for classification on a dask array (002 section 3.2
    "XGBoost"): :class:`smml.ensemble.GradientBoostingClassifier` fitted on a Dask cluster.

    The parameters, attributes and methods are those of the in-memory estimator, whose subclass
    this is: the fitted model IS an in-memory model (``predict``, ``predict_proba``,
    ``staged_predict``, save / load, plots work on numpy inputs; :func:`smml.dask.predict` runs
    it block by block on a dask array).

    {how}

    {params}

    See Also
    --------
    smml.ensemble.GradientBoostingClassifier : the in-memory estimator (the same model).
    xgboost.dask.DaskXGBClassifier : xgboost's Dask classifier.
    lightgbm.DaskLGBMClassifier : LightGBM's Dask classifier.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from smml.dask import GradientBoostingClassifier
    >>> from smml.ensemble import GradientBoostingClassifier as InMemory
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> Xd, yd = da.from_array(X, chunks=(150, 3)), da.from_array(y, chunks=150)
    >>> gb = GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0).fit(Xd, yd)
    >>> mem = InMemory(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    >>> bool(np.array_equal(gb.predict_proba(X), mem.predict_proba(X)))
    True
    """

    __doc__ = _filled(__doc__, _GBC)

    def fit(self: _Self, X: Any, y: Any, sample_weight: Any = None) -> _Self:
        """Fit the boosting rounds on dask arrays.

        Parameters
        ----------
        X : dask array or dask DataFrame of shape (n_samples, n_features)
            Training samples (NaN: missing), numeric columns.
        y : dask array, dask Series or array-like of shape (n_samples,)
            Training labels.
        sample_weight : dask array or array-like of shape (n_samples,), default=None
            Example weights; None: all 1.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit_dask(X, y, sample_weight, classifier=True)


class GradientBoostingRegressor(_DaskGradientBoostingMixin, _GBR):
    """Second-order gradient boosting for regression on a dask array (002 section 3.2
    "XGBoost"): :class:`smml.ensemble.GradientBoostingRegressor` fitted on a Dask cluster.

    The parameters, attributes and methods are those of the in-memory estimator, whose subclass
    this is: the fitted model IS an in-memory model (``predict``, ``predict_proba``,
    ``staged_predict``, save / load, plots work on numpy inputs; :func:`smml.dask.predict` runs
    it block by block on a dask array).

    {how}

    {params}

    See Also
    --------
    smml.ensemble.GradientBoostingRegressor : the in-memory estimator (the same model).
    xgboost.dask.DaskXGBRegressor : xgboost's Dask regressor.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from smml.dask import GradientBoostingRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2))
    >>> y = X[:, 0] ** 2 + X[:, 1]
    >>> gb = GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=0)
    >>> gb = gb.fit(da.from_array(X, chunks=(100, 2)), da.from_array(y, chunks=100))
    >>> bool(gb.train_score_[-1] < gb.train_score_[0])
    True
    >>> gb.predict(X[:2]).shape
    (2,)
    """

    __doc__ = _filled(__doc__, _GBR)

    def fit(self: _Self, X: Any, y: Any, sample_weight: Any = None) -> _Self:
        """Fit the boosting rounds on dask arrays.

        Parameters
        ----------
        X : dask array or dask DataFrame of shape (n_samples, n_features)
            Training samples (NaN: missing), numeric columns.
        y : dask array, dask Series or array-like of shape (n_samples,)
            Training targets.
        sample_weight : dask array or array-like of shape (n_samples,), default=None
            Example weights; None: all 1.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit_dask(X, y, sample_weight, classifier=False)
