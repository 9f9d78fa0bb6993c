"""The ``smml`` command (also ``python -m smml``): ``info``, ``tour`` (``--plot DIR`` for the figures)
and ``bench`` (smml against its plain-Python reference and the installed peers: ``smml._bench``)."""
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
    from smml._bench import simd_level
    print(f"SIMD: {simd_level()} (the widest the kernels dispatch to on this CPU)", file=out)
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


def _families():
    from smml._bench import FAMILIES
    return FAMILIES


def _bench(parser, args):
    from smml import _bench

    try:
        families = _bench.resolve_families(args.families)
        scale = _bench.scale_from_env()
    except ValueError as exc:
        parser.error(str(exc))          # exit status 2
    if args.plot:                       # fail before the run, not after it
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error("--plot needs matplotlib: pip install 'smml[plot]'")
    if args.json:                       # an unwritable path fails now too
        import os
        folder = os.path.dirname(os.path.abspath(args.json))
        if os.path.isdir(args.json) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            parser.error(f"--json {args.json}: not a writable file path")
    report = _bench.run(families, quick=args.quick, peers=args.peers, scale=scale)
    if args.json:
        _bench.write_json(report, args.json)
        print(f"wrote {args.json}")
    if args.plot:
        for path in _bench.write_plots(report, args.plot):
            print(f"wrote {path}")
    return 0


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
    p_bench = sub.add_parser(
        "bench", help="time smml against smml.reference and the installed peers; one table, optional JSON",
        description="For each family, smml's compiled estimator against its plain-Python reference (on a "
                    "few hundred rows) and against scikit-learn (and, with --peers, the other installed "
                    "peers), in this one process. Prints the machine (CPU, SIMD, threads, BLAS) and one "
                    "table of times and ratios (time / smml time). Families: " + ", ".join(_families()) +
                    ". SMML_BENCH_SCALE=0.05 (for tests) shrinks every size; its timings mean nothing.")
    p_bench.add_argument("families", nargs="*", metavar="FAMILY",
                         help="families to run (default: all): " + ", ".join(_families()))
    p_bench.add_argument("--quick", action="store_true",
                         help="small sizes: seconds up to about a minute per family on 2 cores")
    p_bench.add_argument("--peers", action="store_true",
                         help="also the optional peers installed (LightGBM, xgboost, pykdtree, scipy cKDTree, "
                              "faiss, scikit-learn-intelex), not only scikit-learn")
    p_bench.add_argument("--json", metavar="FILE", help="write the machine and every row as JSON to FILE "
                                                        "(attach it to a bug report)")
    p_bench.add_argument("--plot", metavar="DIR", help="also write one PNG bar chart per family into DIR "
                                                       "(needs matplotlib: pip install 'smml[plot]')")
    args = parser.parse_args(argv)
    if args.command == "info":
        info()
    elif args.command == "bench":
        return _bench(p_bench, args)
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
