"""k-NN predict: smml vs scikit-learn (default and brute), scikit-learn-intelex, scipy cKDTree,
pykdtree, faiss IndexFlatL2 and the plain-Python reference.

Part 1, the index (issue 16): training sets 200,000 x 2 (20,000 queries), 1,000,000 x 3
(10,000), 200,000 x 8 (20,000), 100,000 x 16 and 100,000 x 32 (20,000), standard normal
float64, k = 5 and 50, 2 threads; build (fit) and query (predict = search + vote for the
classifiers; search only for cKDTree, pykdtree and faiss) timed separately, every
implementation interleaved round by round. smml runs with algorithm="auto" (the rule of
``smml.neighbors._search._pick_rule``). Slow peers are timed on a subset of the queries and
extrapolated (labelled so).

``--rule`` prints the measurements behind algorithm="auto" (tree vs brute force by metric,
dimension, training size and number of queries); ``--leaf`` those behind the kd-tree's leaf
size (``smml.neighbors._structures._leaf_size``); ``--index`` / ``--brute`` run one part; ``--index --similar``
runs the index part on other d <= 8 shapes (500,000 x 4, 300,000 x 6, 100,000 x 8, 400,000 x 7).

Part 2, brute force (issue 3, 16): 50,000 x 64 training points, 5,000 queries, k = 5,
float64 and float32, 2 threads; then 200,000 x 128 with 10,000 queries, float32. Also
predict on 1 and 5 rows (per-call cost), and the fraction of the machine's gemm peak that
smml's predict reaches.
That fraction counts only the 2 * n_queries * m * d flops of the distance gemm and divides
them by the WHOLE predict time (candidate selection, exact re-ranking, vote included), so it
is a lower bound for the distance part; the peak is the best of several timings of a
2048^3 gemm and of a gemm of the benchmark's shape, both on the same 2 BLAS threads
(see _gemm_peak), so the figure stays <= 100% up to timing noise.
"""
import numpy as np
from threadpoolctl import threadpool_limits

from _common import best_time, environment_line, interleaved_best, per_call_time, print_table

N_THREADS = 2
K = 5


def _data(m, d, nq, dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d)).astype(dtype)
    y = rng.integers(0, 2, size=m)   # two classes, odd k: no vote ties
    Q = rng.normal(size=(nq, d)).astype(dtype)
    return X, y, Q


_PEAK = {}


def _gemm_peak(dtype, nq, d, repeat=7):
    """The machine's gemm peak (GFLOP/s, N_THREADS BLAS threads) for ``dtype``.

    The best of ``repeat`` timings of a large square 2048 x 2048 x 2048 gemm and of a
    gemm of the benchmark's shape ((nq x d) @ (d x 4096)), after a warm-up; the peak is
    the larger of the two rates. Best-of-several of a large product is what a BLAS can
    sustain; a single small probe under-measures it (it once gave smml 161% of "peak").
    """
    rng = np.random.default_rng(1)
    best = 0.0
    shapes = [(2048, 2048, 2048), (nq, d, 4096)]
    with threadpool_limits(N_THREADS, user_api="blas"):
        for a, b, c in shapes:
            key = (np.dtype(dtype).name, a, b, c)
            if key not in _PEAK:
                A = rng.normal(size=(a, b)).astype(dtype)
                B = rng.normal(size=(b, c)).astype(dtype)
                A @ B                                       # warm-up (threads, pages)
                t, _ = best_time(lambda: A @ B, repeat=repeat)
                _PEAK[key] = 2.0 * a * b * c / t / 1e9
            best = max(best, _PEAK[key])
    return best


def _smml(X, y):
    from smml.neighbors import KNNClassifier
    return KNNClassifier(n_neighbors=K, n_jobs=N_THREADS).fit(X, y)


def _sklearn(X, y):
    from sklearn.neighbors import KNeighborsClassifier
    return KNeighborsClassifier(K, algorithm="brute", n_jobs=N_THREADS).fit(X, y)


def _intelex(X, y, k=K, algorithm="brute"):
    from sklearnex.neighbors import KNeighborsClassifier
    return KNeighborsClassifier(k, algorithm=algorithm, n_jobs=N_THREADS).fit(X, y)


def _faiss_index(X):
    import faiss
    faiss.omp_set_num_threads(N_THREADS)
    index = faiss.IndexFlatL2(X.shape[1])
    index.add(np.ascontiguousarray(X, dtype=np.float32))
    return index


def _case(m, d, nq, dtype, repeat, ref_queries, sklearn_queries=None):
    X, y, Q = _data(m, d, nq, dtype)
    rows = []
    est = _smml(X, y)
    sk = _sklearn(X, y)
    nq_sk = nq if sklearn_queries is None else min(nq, sklearn_queries)
    fns = [lambda: est.predict(Q)]
    if nq_sk == nq:
        fns.append(lambda: sk.predict(Q))
    xk = _intelex(X, y)
    fns.append(lambda: xk.predict(Q))
    if dtype == np.float32:
        index = _faiss_index(X)
        fns.append(lambda: index.search(Q, K))
    times, outs = interleaved_best(fns, repeat)
    t_smml, pred = times[0], outs[0]
    if nq_sk == nq:
        t_sk, pred_sk = times[1], outs[1]
    else:  # a subset, timed once and extrapolated
        t_sk, pred_sk = best_time(lambda: sk.predict(Q[:nq_sk]), repeat=1)
        t_sk *= nq / nq_sk
    gflops = 2.0 * nq * m * d / t_smml / 1e9
    # smml's gemm runs in the dtype of its candidate filter (float32 for float64 data whose
    # scale allows it): its peak is the one to compare with
    gemm_dtype = est._gemm_dtype
    peak = _gemm_peak(gemm_dtype, nq, d)
    rows.append(dict(impl="smml KNNClassifier.predict", dtype=np.dtype(dtype).name, queries=nq,
                     seconds=t_smml, ratio=1.0,
                     note=f"distance flops 2*nq*m*d / whole predict time = {gflops:.1f} GFLOP/s"
                          f" = {gflops / peak:.0%} of the {np.dtype(gemm_dtype).name} gemm peak "
                          f"{peak:.1f} (its filter's gemm)"))
    agree = np.mean(pred_sk == pred[:nq_sk])
    rows.append(dict(impl="sklearn KNeighborsClassifier(brute).predict", dtype=np.dtype(dtype).name,
                     queries=nq_sk, seconds=t_sk, ratio=t_sk / t_smml,
                     note=(f"extrapolated x{nq / nq_sk:.0f}; " if nq_sk != nq else "")
                     + f"same predictions on {agree:.2%}"))
    i_xk = 2 if nq_sk == nq else 1
    rows.append(dict(impl="intelex KNeighborsClassifier(brute).predict", dtype=np.dtype(dtype).name,
                     queries=nq, seconds=times[i_xk], ratio=times[i_xk] / t_smml,
                     note=f"same predictions on {np.mean(outs[i_xk] == pred):.2%}"))
    if dtype == np.float32:
        t_fa, (D, I) = times[-1], outs[-1]
        I_smml = est.kneighbors(Q[:200], return_distance=False)
        rows.append(dict(impl="faiss IndexFlatL2.search (no vote)", dtype="float32", queries=nq,
                         seconds=t_fa, ratio=t_fa / t_smml,
                         note=f"same neighbour sets on {np.mean(np.sort(I[:200], 1) == np.sort(I_smml, 1)):.2%}"
                              " (first 200 queries)"))
    if ref_queries:
        from smml.reference.neighbors import KNNClassifier as Ref
        r = Ref(k=K).fit(X, y)
        t_ref, pred_ref = best_time(lambda: r.predict(Q[:ref_queries]), repeat=1)
        assert np.array_equal(pred_ref, pred[:ref_queries])
        t_ref *= nq / ref_queries
        rows.append(dict(impl="smml.reference (plain Python)", dtype=np.dtype(dtype).name,
                         queries=ref_queries, seconds=t_ref, ratio=t_ref / t_smml,
                         note=f"EXTRAPOLATED from {ref_queries} queries (x{nq / ref_queries:.0f})"))
    return rows, est, sk, X, Q


COLUMNS = [("impl", "implementation", "{}"), ("dtype", "dtype", "{}"), ("queries", "queries timed", "{}"),
           ("seconds", "seconds (all queries)", "{:.3f}"), ("ratio", "time / smml time", "{:.2f}x"),
           ("note", "note", "{}")]


LOWD_SHAPES = [(200_000, 2, 20_000), (1_000_000, 3, 10_000), (200_000, 8, 20_000),
               (100_000, 16, 20_000), (100_000, 32, 20_000)]
LOWD_QUICK = [(20_000, 2, 2_000), (20_000, 8, 2_000)]
# --index --similar: other tree-sized shapes like the target's (d <= 8)
LOWD_SIMILAR = [(500_000, 4, 20_000), (300_000, 6, 20_000), (100_000, 8, 20_000), (400_000, 7, 20_000)]
LOWD_KS = (5, 50)
PROBE = 400          # queries of the first (probe) call that decides a peer's subset
BUDGET = 1.5         # seconds one timed call of a peer may take; slower peers run on a subset


def _lowd_impls(X, y, k):
    """(name, build, query(model, Q), returns predictions?) for every implementation."""
    from scipy.spatial import cKDTree
    from sklearn.neighbors import KNeighborsClassifier
    from smml.neighbors import KNNClassifier
    impls = [
        ("smml KNNClassifier(auto)", lambda: KNNClassifier(n_neighbors=k, n_jobs=N_THREADS).fit(X, y),
         lambda mdl, Q: mdl.predict(Q), True),
        ("sklearn KNeighborsClassifier(default)",
         lambda: KNeighborsClassifier(k, n_jobs=N_THREADS).fit(X, y), lambda mdl, Q: mdl.predict(Q), True),
        ("sklearn KNeighborsClassifier(brute)",
         lambda: KNeighborsClassifier(k, algorithm="brute", n_jobs=N_THREADS).fit(X, y),
         lambda mdl, Q: mdl.predict(Q), True),
        ("intelex KNeighborsClassifier(default)", lambda: _intelex(X, y, k, "auto"),
         lambda mdl, Q: mdl.predict(Q), True),
        ("scipy cKDTree(workers=2).query", lambda: cKDTree(X),
         lambda mdl, Q: mdl.query(Q, k, workers=N_THREADS)[1], False),
    ]
    try:
        from pykdtree.kdtree import KDTree
        impls.append(("pykdtree KDTree.query", lambda: KDTree(X, leafsize=16),
                      lambda mdl, Q: mdl.query(Q, k)[1].astype(np.intp), False))
    except ImportError:
        pass
    try:
        _faiss_index(X[:1])
        impls.append(("faiss IndexFlatL2.search (float32)", lambda: _faiss_index(X),
                      lambda mdl, Q: mdl.search(np.ascontiguousarray(Q, dtype=np.float32), k)[1], False))
    except ImportError:
        pass
    return impls


def _lowd_case(m, d, nq, k, repeat, ref_queries):
    X, y, Q = _data(m, d, nq, np.float64)
    impls = _lowd_impls(X, y, k)
    # build: interleaved, best of 2
    builds, models = interleaved_best([b for _, b, _, _ in impls], 2)
    # a probe call decides each implementation's query subset (slow peers: extrapolated)
    sizes = []
    for (name, _, query, _), mdl in zip(impls, models):
        t, _ = best_time(lambda: query(mdl, Q[:PROBE]), repeat=1)
        est = t * nq / PROBE
        sizes.append(nq if est <= BUDGET or not sizes else max(PROBE, int(nq * BUDGET / est)))
    fns = [lambda q=query, mdl=mdl, n=n: q(mdl, Q[:n]) for (_, _, query, _), mdl, n in zip(impls, models, sizes)]
    times, outs = interleaved_best(fns, repeat)
    smml_model = models[0]
    t_smml = times[0]
    pred = outs[0]
    I_smml = smml_model.kneighbors(Q[:200], return_distance=False)
    rows = []
    for (name, _, _, is_pred), tb, t, out, n in zip(impls, builds, times, outs, sizes):
        t_all = t * nq / n
        if is_pred:
            note = f"same predictions on {np.mean(out == pred[:n]):.2%}"
            if k % 2 == 0:
                note += " (even k: vote ties go to smml's default label)"
        else:
            note = f"same neighbour sets on {np.mean(np.sort(out[:200], 1) == np.sort(I_smml, 1)):.2%} (200 queries)"
        if n != nq:
            note = f"EXTRAPOLATED from {n} queries; " + note
        rows.append(dict(impl=name, build=tb, query=t_all, ratio=t_all / t_smml, note=note))
    if ref_queries:
        from smml.reference.neighbors import KNNClassifier as Ref
        r = Ref(k=k).fit(X, y)
        t_ref, pred_ref = best_time(lambda: r.predict(Q[:ref_queries]), repeat=1)
        assert np.array_equal(pred_ref, pred[:ref_queries])
        t_ref *= nq / ref_queries
        rows.append(dict(impl="smml.reference (plain Python)", build=None, query=t_ref, ratio=t_ref / t_smml,
                         note=f"EXTRAPOLATED from {ref_queries} queries (x{nq // ref_queries})"))
    by = {r["impl"]: r["query"] for r in rows}
    sk = by["sklearn KNeighborsClassifier(default)"]
    fastest = min(v for key, v in by.items() if key.startswith(("intelex", "scipy", "pykdtree")))
    verdict = (f"auto is {sk / t_smml:.2f}x faster than scikit-learn's default (target >= 2x); "
               f"fastest of intelex / cKDTree / pykdtree / smml = {fastest / t_smml:.2f}x"
               + (" (target >= 1.00x, d <= 8)" if d <= 8 else ""))
    return rows, smml_model.algorithm_, verdict


LOWD_COLUMNS = [("impl", "implementation", "{}"), ("build", "build / fit s", "{:.3f}"),
                ("query", "query s (all queries)", "{:.4f}"), ("ratio", "query time / smml", "{:.2f}x"),
                ("note", "note", "{}")]


def main_index(quick=False, similar=False):
    print(environment_line(N_THREADS))
    import os
    print(f"# load average at start: {os.getloadavg()[0]:.2f}")
    for m, d, nq in (LOWD_QUICK if quick else LOWD_SIMILAR if similar else LOWD_SHAPES):
        for k in LOWD_KS:
            rows, alg, verdict = _lowd_case(m, d, nq, k, repeat=2 if quick else 5,
                                            ref_queries=1 if m * d <= 1_000_000 else None)
            print_table(f"k-NN index, train {m} x {d} float64, {nq} queries, k={k}, {N_THREADS} threads "
                        f"(smml auto -> {alg})", rows, LOWD_COLUMNS)
            print(f"\n{verdict}; load {os.getloadavg()[0]:.2f}")


RULE_DIMS = {"euclidean": (2, 4, 6, 8, 10, 12, 16), "manhattan": (2, 4, 6, 8, 12, 16, 24, 32, 48)}
RULE_SIZES = ((100_000, 10_000), (100_000, 5), (10_000, 2_000))   # (m, queries)


def main_rule(quick=False):
    """The measurements behind algorithm="auto" (smml.neighbors._search._pick_rule): predict time
    of the tree and of brute force, interleaved, by metric, d, m and number of queries."""
    import os
    from smml.neighbors import KNNClassifier
    from smml.neighbors._search import _pick_rule
    print(environment_line(N_THREADS))
    rows = []
    rng = np.random.default_rng(0)
    for metric in ("euclidean", "manhattan"):
        for d in (RULE_DIMS[metric][:3] if quick else RULE_DIMS[metric]):
            for m, nq in ((10_000, 500), (10_000, 5)) if quick else RULE_SIZES:
                if metric == "manhattan" and nq > 1000 and d >= 6:
                    nq = 1000           # brute-force Manhattan is a direct (non-gemm) scan
                X, Q, y = rng.normal(size=(m, d)), rng.normal(size=(nq, d)), rng.integers(0, 2, m)
                t = KNNClassifier(n_neighbors=K, metric=metric, algorithm="tree", n_jobs=N_THREADS).fit(X, y)
                b = KNNClassifier(n_neighbors=K, metric=metric, algorithm="brute", n_jobs=N_THREADS).fit(X, y)
                (tt, tb), _ = interleaved_best([lambda t=t, Q=Q: t.predict(Q), lambda b=b, Q=Q: b.predict(Q)], 3)
                pick = _pick_rule(metric, d, m)
                if pick == "both":
                    pick = "tree" if nq <= 64 else "brute"
                rows.append(dict(metric=metric, d=d, m=m, nq=nq, tree=tt, brute=tb, ratio=tb / tt,
                                 pick=pick, load=os.getloadavg()[0]))
    print_table(f"tree vs brute predict, k={K}, {N_THREADS} threads (auto's pick for that call)", rows,
                [("metric", "metric", "{}"), ("d", "d", "{}"), ("m", "m", "{}"), ("nq", "queries", "{}"),
                 ("tree", "tree s", "{:.4f}"), ("brute", "brute s", "{:.4f}"),
                 ("ratio", "brute / tree", "{:.2f}"), ("pick", "auto picks", "{}"),
                 ("load", "load", "{:.1f}")])


LEAF_SHAPES = [(200_000, 2, 20_000), (1_000_000, 3, 10_000), (200_000, 4, 20_000),
               (200_000, 6, 20_000), (200_000, 8, 20_000)]
LEAF_SIZES = (32, 64, 128, 256)


def main_leaf(quick=False):
    """kd-tree predict time by leaf size (the measurements behind smml.neighbors._structures._leaf_size),
    the leaf sizes interleaved round by round, best of 3."""
    import os
    from smml.neighbors import KNNClassifier, _search, _structures   # _search reads _LEAF_SIZE at fit
    print(environment_line(N_THREADS))
    rows = []
    shapes = [(20_000, 2, 2_000), (20_000, 8, 2_000)] if quick else LEAF_SHAPES
    saved = _search._LEAF_SIZE
    try:
        for m, d, nq in shapes:
            X, y, Q = _data(m, d, nq, np.float64)
            for k in LOWD_KS:
                models = []
                for leaf in LEAF_SIZES:
                    _search._LEAF_SIZE = leaf
                    models.append(KNNClassifier(n_neighbors=k, algorithm="tree", n_jobs=N_THREADS).fit(X, y))
                times, _ = interleaved_best([lambda mdl=mdl: mdl.predict(Q) for mdl in models], 3)
                best = min(times)
                row = dict(shape=f"{m} x {d}", k=k, rule=_structures._leaf_size(d), load=os.getloadavg()[0])
                row.update({f"l{leaf}": t / best for leaf, t in zip(LEAF_SIZES, times)})
                rows.append(row)
    finally:
        _search._LEAF_SIZE = saved
    print_table(f"kd-tree predict time / best, by leaf size, {N_THREADS} threads", rows,
                [("shape", "train", "{}"), ("k", "k", "{}")]
                + [(f"l{leaf}", f"leaf {leaf}", "{:.2f}") for leaf in LEAF_SIZES]
                + [("rule", "_leaf_size(d)", "{}"), ("load", "load", "{:.1f}")])


def main(quick=False):
    main_index(quick)
    main_brute(quick)


def main_brute(quick=False):
    print(environment_line(N_THREADS))
    m, d, nq = (10_000, 32, 1_000) if quick else (50_000, 64, 5_000)
    repeat = 2 if quick else 5
    for dtype in (np.float64, np.float32):
        rows, est, sk, X, Q = _case(m, d, nq, dtype, repeat, ref_queries=1 if quick else 2)
        print_table(f"k-NN predict, train {m} x {d}, {nq} queries, k={K}, {np.dtype(dtype).name}, "
                    f"{N_THREADS} threads", rows, COLUMNS)
        if dtype == np.float64:
            oh = []
            for n_rows in (1, 5):
                few = Q[:n_rows]
                t_s = min(per_call_time(lambda: est.predict(few), 30) for _ in range(3))
                t_k = min(per_call_time(lambda: sk.predict(few), 30) for _ in range(3))
                oh += [dict(impl=f"smml predict({n_rows} rows)", us=1e6 * t_s, ratio=1.0),
                       dict(impl=f"sklearn predict({n_rows} rows)", us=1e6 * t_k, ratio=t_k / t_s)]
            print_table(f"few-row predict (model {m} x {d}, float64, best of 3 x 30 calls)", oh,
                        [("impl", "implementation", "{}"), ("us", "microseconds per call", "{:.0f}"),
                         ("ratio", "time / smml time", "{:.2f}x")])
    if not quick:
        m, d, nq = 200_000, 128, 10_000
        # no plain-Python reference here: its list-of-lists copy of the training set alone
        # would take ~0.8 GB (it is measured on the 50,000 x 64 shapes above)
        rows, *_ = _case(m, d, nq, np.float32, 1, ref_queries=None, sklearn_queries=2_000)
        print_table(f"k-NN predict, train {m} x {d}, {nq} queries, k={K}, float32, {N_THREADS} threads",
                    rows, COLUMNS)


if __name__ == "__main__":
    import sys
    quick = "--quick" in sys.argv
    if "--index" in sys.argv:
        main_index(quick, similar="--similar" in sys.argv)
    elif "--rule" in sys.argv:
        main_rule(quick)
    elif "--leaf" in sys.argv:
        main_leaf(quick)
    elif "--brute" in sys.argv:
        main_brute(quick)
    else:
        main(quick)
