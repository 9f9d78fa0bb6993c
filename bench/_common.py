"""Shared helpers for the benchmarks: timing, environment line, ratio tables.

Every benchmark prints smml against each peer and against the plain-Python
reference as ratios measured in the same run, with shapes and thread counts.
"""
import os
import platform
import time

import numpy as np


def best_time(fn, repeat=3, min_time=0.0):
    """Best wall-clock time of ``fn()`` over ``repeat`` runs (seconds) and its last result."""
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = min(best, dt)
        if min_time and dt > min_time:
            break
    return best, out


def interleaved_best(fns, repeat, cpu=False, budget=1.0, max_repeat=9):
    """Best time of each of ``fns`` over ``repeat`` rounds, the calls interleaved round by
    round: this machine shifts between speed modes over seconds, and timing one
    implementation's block after another's lets a shift decide the ratio. Cheap calls get
    more rounds, for every fn alike: after ``repeat`` rounds, rounds go on while the rounds so
    far took under ``budget`` seconds in all, up to ``max_repeat`` (a cell of a few
    milliseconds is otherwise decided by one scheduler hiccup). When one expensive call ends
    that (a k-NN peer timed on a 2 s subset), the calls cheap enough for ``max_repeat`` rounds
    in ``budget`` (each at most ``budget / max_repeat``) still get ``max_repeat`` rounds, all of
    them alike, interleaved among themselves. Returns (best wall times, each fn's last result),
    or with ``cpu=True`` (best wall times, best process CPU times (all threads), results).

    The order of the calls changes from round to round (a seeded shuffle, the first round in
    the given order): a call made right after another OpenMP runtime's parallel work shares
    the cores with that runtime's threads, which spin for milliseconds before they sleep
    (measured: smml's k-NN predict on 200,000 x 2 took 23 ms right after pykdtree's query,
    16 ms after a pause). A fixed order would hand that penalty to the same implementation
    in every round."""
    import random
    best = [float("inf")] * len(fns)
    best_cpu = [float("inf")] * len(fns)
    out = [None] * len(fns)
    shuffle = random.Random(0).shuffle
    order = list(range(len(fns)))
    start = time.perf_counter()
    done = 0
    cheap = None                    # after the whole rounds: the calls that go on alone
    while done < repeat or done < max_repeat:
        if done >= repeat and cheap is None and time.perf_counter() - start >= budget:
            # the whole rounds are too dear now: the cheap calls go on among themselves
            cheap = {i for i in order if best[i] * max_repeat <= budget}
            if not cheap or len(cheap) == len(fns):
                break
        done += 1
        for i in order:
            if cheap is not None and i not in cheap:
                continue
            fn = fns[i]
            c0 = time.process_time()
            t, out[i] = best_time(fn, repeat=1)
            best_cpu[i] = min(best_cpu[i], time.process_time() - c0)
            best[i] = min(best[i], t)
        shuffle(order)
    return (best, best_cpu, out) if cpu else (best, out)


def per_call_time(fn, n_calls=200):
    """Mean seconds per call of a cheap ``fn`` (per-call overhead benches)."""
    fn()
    t0 = time.perf_counter()
    for _ in range(n_calls):
        fn()
    return (time.perf_counter() - t0) / n_calls


def environment_line(n_threads):
    import smml
    from smml._threads import openmp_enabled

    return (f"# {platform.machine()} {os.cpu_count()} cpus, smml {smml.__version__} "
            f"OpenMP={'on' if openmp_enabled() else 'off'}, threads={n_threads}, "
            f"numpy {np.__version__}")


def print_table(title, rows, columns):
    """rows: list of dicts; columns: list of (key, header, fmt)."""
    print(f"\n## {title}")
    cells = [[(fmt.format(r[k]) if r.get(k) is not None else "-") for k, _, fmt in columns] for r in rows]
    heads = [h for _, h, _ in columns]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(heads)]
    line = "| " + " | ".join("{:<%d}" % w for w in widths) + " |"
    print(line.format(*heads))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for c in cells:
        print(line.format(*c))
