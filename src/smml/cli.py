"""The ``smml`` command (also ``python -m smml``): ``info`` and ``tour`` (``--plot DIR`` for the figures)."""
import argparse
import sys


def info(out=None):
    out = sys.stdout if out is None else out
    import numpy
    import scipy
    import sklearn

    import smml
    from smml._threads import effective_n_threads, openmp_enabled
    from smml._threads import _controller

    print(f"smml {smml.__version__}  ({smml.__file__})", file=out)
    print(f"python {sys.version.split()[0]}, numpy {numpy.__version__}, scipy {scipy.__version__}, "
          f"scikit-learn {sklearn.__version__}", file=out)
    print(f"OpenMP: {'on' if openmp_enabled() else 'off (serial build)'}", file=out)
    print(f"threads: {effective_n_threads(None)} (n_jobs=None)", file=out)
    blas = [m for m in _controller().info() if m.get("user_api") == "blas"]
    for m in blas:
        print(f"BLAS: {m.get('internal_api')} {m.get('version')} ({m.get('threading_layer')}, "
              f"{m.get('num_threads')} threads) {m.get('filepath')}", file=out)
    if not blas:
        print("BLAS: not found by threadpoolctl", file=out)
    omp = [m for m in _controller().info() if m.get("user_api") == "openmp"]
    for m in omp:
        print(f"OpenMP runtime: {m.get('prefix')} ({m.get('num_threads')} threads) {m.get('filepath')}",
              file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="smml", description="smml: the course's learning methods, exact and fast")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="version, OpenMP, threads and BLAS")
    p_tour = sub.add_parser("tour", help="run every estimator on bundled real data and print one table")
    p_tour.add_argument("--quick", action="store_true", help="only the fast entries")
    p_tour.add_argument("--delta", type=float, default=0.05, help="confidence parameter of the intervals")
    p_tour.add_argument("--plot", metavar="DIR", help="also write the notes' figures as PNG files into DIR "
                                                      "(needs matplotlib: pip install 'smml[plot]')")
    p_tour.add_argument("-v", "--verbose", action="store_true",
                        help="progress bars on stderr even when it is not a terminal")
    args = parser.parse_args(argv)
    if args.command == "info":
        info()
    elif args.command == "tour":
        if not 0 < args.delta < 1:
            parser.error("--delta must lie in (0, 1)")
        from smml._tour import run, write_plots

        verbose = 1 if args.verbose else "auto"
        if args.plot:       # fail on a missing matplotlib before the tour's long run, not after it
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                parser.error("--plot needs matplotlib: pip install 'smml[plot]'")
        run(quick=args.quick, delta=args.delta, verbose=verbose)
        if args.plot:
            for path in write_plots(args.plot, quick=args.quick, verbose=verbose):
                print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
