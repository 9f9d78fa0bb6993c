"""1 vs 2 threads for one SGD epoch of smml.neural at several (hidden, batch) shapes: the
measurements behind ``smml.neural.NEURAL_GRAIN`` (2 threads start from 2 grains of work per
step, work = batch x connection weights).  784 inputs, 10 classes, float32, 12,000 random rows
(batch 1: a quarter), best of 3 interleaved rounds.

Run: ``python bench/experiments/sweep_neural_threads.py [rows] [--wide]`` (``--wide``: the second set of shapes,
around the crossover).
"""
import sys
import time
import warnings

import numpy as np

import smml.neural
from smml.neural import MLPClassifier

SHAPES = [((64,), 32), ((128,), 32), ((256,), 32), ((256, 256), 32), ((128,), 8), ((128,), 128),
          ((512,), 32), ((128,), 1), ((256, 256), 1)]
AROUND = [((96,), 16), ((128,), 16), ((96,), 32), ((128,), 24), ((128,), 32), ((200,), 16), ((64,), 64),
          ((32,), 128)]


def main(n=12000, shapes=SHAPES):
    # n_jobs=2 must really run 2 threads, also below the grain being measured
    smml.neural.NEURAL_GRAIN = 1
    rng = np.random.default_rng(0)
    X = rng.random((n, 784), dtype=np.float32)
    y = rng.integers(0, 10, n)
    for hid, b in shapes:
        nn = n if b > 1 else n // 4
        res = {1: np.inf, 2: np.inf}
        for _ in range(3):
            for nj in (1, 2):
                m = MLPClassifier(hidden_layer_sizes=hid, batch_size=b, learning_rate=0.01,
                                  momentum=0.9 if b > 1 else 0.0, max_iter=1, tol=0, n_iter_no_change=100,
                                  random_state=0, n_jobs=nj)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    m.fit(X[:nn], y[:nn])
                    res[nj] = min(res[nj], time.perf_counter() - t)
        W = sum(c.size for c in m.coefs_)
        print(f"hidden={hid!s:12} batch={b:4} work=batch*W={b * W:>10}  1 thread {res[1] * 1e3:7.1f} ms  "
              f"2 threads {res[2] * 1e3:7.1f} ms  speed-up {res[1] / res[2]:.2f}", flush=True)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(args[0]) if args else 12000, AROUND if "--wide" in sys.argv else SHAPES)
