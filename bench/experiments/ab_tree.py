"""A/B of two smml source trees on the tree, forest and AdaBoost work (issue 17: "bit-identical,
no slower"). One side per process; the side is chosen by PYTHONPATH, e.g. with a worktree of the
older commit built in place (`git worktree add /var/tmp/base <commit>`, then in it
`python setup.py build_ext --inplace`):

    for r in 1 2 3; do for p in /var/tmp/base/src src; do
        PYTHONPATH=$p OMP_NUM_THREADS=2 .venv/bin/python bench/experiments/ab_tree.py; done; done

Prints per case the best of 3 fit / predict / 5-row predict times and a hash of the predictions
(equal hashes: identical predictions). Compare the sides round by round.
"""
import hashlib, time
import numpy as np
from smml.tree import TreeClassifier, TreeRegressor
from smml.ensemble import RandomForestClassifier, AdaBoostClassifier

def data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    s = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + X[:, 3] ** 2 - 1.0
    y = (s > 0).astype(np.int64); f = rng.random(n) < 0.1; y[f] = 1 - y[f]
    return X, y, s

X, y, s = data(100_000, 32)
Xs, ys, ss = X[:20_000], y[:20_000], s[:20_000]
cases = {
    "tree exact full 100k": (lambda: TreeClassifier("gini", splitter="exact", random_state=0), X, y),
    "tree hist depth10 100k": (lambda: TreeClassifier("gini", splitter="hist", max_depth=10, random_state=0), X, y),
    "tree exact depth10 100k": (lambda: TreeClassifier("gini", splitter="exact", max_depth=10, random_state=0), X, y),
    "regtree exact depth10 100k": (lambda: TreeRegressor(splitter="exact", max_depth=10, random_state=0), X, s),
    "forest 50 trees 20k": (lambda: RandomForestClassifier(50, random_state=0), Xs, ys),
    "adaboost 200 stumps 100k": (lambda: AdaBoostClassifier(n_estimators=200, random_state=0), X, y),
}
for name, (make, A, b) in cases.items():
    fit, pred, pred5 = [], [], []
    for _ in range(3):
        t = time.perf_counter(); m = make().fit(A, b); fit.append(time.perf_counter() - t)
        t = time.perf_counter(); p = m.predict(A); pred.append(time.perf_counter() - t)
        t = time.perf_counter()
        for i in range(200):
            m.predict(A[i * 5:(i + 1) * 5])
        pred5.append((time.perf_counter() - t) / 200)
    h = hashlib.sha1(np.ascontiguousarray(p).tobytes()).hexdigest()[:10]
    print(f"{name:28s} fit {min(fit):8.4f} s  predict {min(pred):8.4f} s  predict(5 rows) {min(pred5)*1e6:8.1f} us  {h}", flush=True)
