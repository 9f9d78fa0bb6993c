"""Run every benchmark: ``python bench/run.py [--quick] [names...]``.

Each ``bench/bench_<name>.py`` has ``main(quick: bool)`` that prints its tables
(smml vs peers vs the plain-Python reference, as ratios from one run).
"""
import argparse
import importlib
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="smaller shapes, for a smoke run")
    p.add_argument("names", nargs="*", help="which benchmarks (default: all), e.g. knn tree")
    args = p.parse_args(argv)
    sys.path.insert(0, str(HERE))
    names = args.names or sorted(f.stem[len("bench_"):] for f in HERE.glob("bench_*.py"))
    for name in names:
        mod = importlib.import_module(f"bench_{name}")
        print(f"\n# ===== bench_{name} =====", flush=True)
        mod.main(quick=args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
