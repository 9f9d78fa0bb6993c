"""Whether the Dask boosting bench's log-loss differences come from the learner or from the bins
(bench/dask.md, "one call a fit"). The bench's 2,000,000 x 28 training rows and 200,000 test rows
(``bench_dask_gbm._chunk``, the same seeds), in memory on 2 threads, depth 6, 100 rounds, lr 0.3:
smml as the bench fits it; xgboost (``hist``, 256 bins) on the raw data; then both on the same bin
codes (``smml._binning.bin_edges`` of another 200,000-row sample, each column replaced by its
code). Prints each test log-loss. ``seeds``: smml alone with ``random_state`` 0-3 (other
200,000-row samples for the edges) and with edges from all rows. Run from the repository root:

    OMP_NUM_THREADS=2 .venv/bin/python bench/experiments/dask_gbm_bins.py [seeds]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_dask_gbm import _chunk, _logloss  # noqa: E402
import xgboost as xgb  # noqa: E402
from smml._binning import bin_edges  # noqa: E402
from smml.ensemble import GradientBoostingClassifier  # noqa: E402

Z = np.vstack([_chunk(1000 + i, 250_000) for i in range(8)]); X, y = Z[:, :28].copy(), Z[:, 28].copy(); del Z
T = np.vstack([_chunk(9_000_000 + i, 50_000) for i in range(4)]); Xt, yt = T[:, :28].copy(), T[:, 28].copy()
if sys.argv[1:] == ["seeds"]:
    import smml._binning as B
    kw = dict(n_estimators=100, max_depth=6, learning_rate=0.3, max_bins=256, n_jobs=2)
    for sub, seeds in [(200_000, [0, 1, 2, 3]), (10**9, [0])]:
        B._BIN_SUBSAMPLE = sub                  # the edges' sample size, read at each fit
        for s in seeds:
            m = GradientBoostingClassifier(random_state=s, **kw).fit(X, y)
            print(f"smml, edges from {min(sub, len(X))} rows, random_state {s}:",
                  round(_logloss(m.predict_proba(Xt)[:, 1], yt), 5), flush=True)
    sys.exit()
m = GradientBoostingClassifier(n_estimators=100, max_depth=6, learning_rate=0.3, max_bins=256, random_state=0, n_jobs=2).fit(X, y)
print("smml", round(_logloss(m.predict_proba(Xt)[:, 1], yt), 5), flush=True)
kw = dict(n_estimators=100, max_depth=6, learning_rate=0.3, tree_method="hist", reg_lambda=1.0, min_child_weight=1.0, n_jobs=2)
for name, Xa, Xb in [("xgb raw", X, Xt)]:
    c = xgb.XGBClassifier(max_bin=256, **kw).fit(Xa, y)
    print(name, round(_logloss(c.predict_proba(Xb)[:, 1], yt), 5), flush=True)
E = bin_edges(X[np.random.default_rng(1).choice(len(X), 200_000, replace=False)], 256, 0)
codes = lambda A: np.stack([np.searchsorted(E[j], A[:, j], side="left") for j in range(A.shape[1])], 1).astype(np.float64)
c = xgb.XGBClassifier(max_bin=256, **kw).fit(codes(X), y)
print("xgb on 200k-sample smml-style codes", round(_logloss(c.predict_proba(codes(Xt))[:, 1], yt), 5), flush=True)
m2 = GradientBoostingClassifier(n_estimators=100, max_depth=6, learning_rate=0.3, max_bins=256, random_state=0, n_jobs=2).fit(codes(X), y)
print("smml on the same codes", round(_logloss(m2.predict_proba(codes(Xt))[:, 1], yt), 5), flush=True)
