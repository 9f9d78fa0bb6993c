"""Build the Cython kernels of smml (src/smml/_core/*.pyx) with OpenMP.

Environment variables:
  SMML_DEBUG_CYTHON=1   turn boundscheck / wraparound / initializedcheck back on
  SMML_SANITIZE=1       (gcc / clang) compile and link with AddressSanitizer and UBSan
                        (-fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g -fno-wrapv
                        instead of -O3) and with SMML_DEBUG_CYTHON's checks, rebuilding every
                        extension; build in a copy, load with libasan preloaded (docs/install.rst;
                        .ci/sanitize builds such a copy and runs the kernels' tests under it)
  SMML_ANNOTATE=1       write Cython's annotated HTML beside each .pyx
  SMML_NO_OPENMP=1      build serially, without OpenMP
  SMML_BUILD_ONLY=a,b   (development) build only the named _core modules
  SMML_LIBOMP_PREFIX    (macOS) where libomp lives; defaults to Homebrew's
  SMML_BUILD_JOBS=n     C compilers run at once (default: one per CPU; build_ext -j n also works)
  SMML_CYTHON_JOBS=n    .pyx files translated at once (default: one per CPU where processes
                        start by fork, else 1)
"""
import glob
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def _truthy(name):
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _directives():
    debug = _truthy("SMML_DEBUG_CYTHON") or _truthy("SMML_SANITIZE")
    return {
        "language_level": 3,
        "boundscheck": debug,
        "wraparound": debug,
        "initializedcheck": debug,
        "nonecheck": debug,
        "cdivision": True,
        "cpow": True,
        "embedsignature": True,
    }


def _openmp_flags(compiler_type):
    """(compile_args, link_args) that turn OpenMP on for this compiler."""
    if compiler_type == "msvc":
        return ["/openmp"], []
    if sys.platform == "darwin":
        prefix = os.environ.get("SMML_LIBOMP_PREFIX") or "/opt/homebrew/opt/libomp"
        if not os.path.isdir(prefix):
            prefix = "/usr/local/opt/libomp"
        return (["-Xpreprocessor", "-fopenmp", f"-I{prefix}/include"],
                ["-lomp", f"-L{prefix}/lib", f"-Wl,-rpath,{prefix}/lib"])
    return ["-fopenmp"], ["-fopenmp"]


_PROBE = r"""
#include <omp.h>
#include <stdio.h>
int main(void) {
    int n = 0;
    #pragma omp parallel reduction(+:n)
    n += 1;
    printf("%d\n", n);
    return n > 0 ? 0 : 1;
}
"""


def _openmp_works(compiler, cflags, lflags):
    """Compile and link a tiny OpenMP program, as POT and old scikit-learn do."""
    tmp = tempfile.mkdtemp(prefix="smml-omp-")
    try:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write(_PROBE)
        objs = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
        compiler.link_executable(objs, "probe", output_dir=tmp, extra_postargs=lflags)
        return True
    except Exception as exc:  # noqa: BLE001 - any failure means "no OpenMP"
        warnings.warn(f"OpenMP probe failed: {exc}")
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _jobs(name, default):
    """A job count from the environment variable ``name`` (a positive integer), else ``default``."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return max(int(value), 1)
    except ValueError:
        raise SystemExit(f"{name} must be a positive integer, got {value!r}") from None


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        # setuptools' build_ext compiles the extensions in a thread pool when ``parallel`` is set;
        # without -j / --parallel (pip install ., pip install -e ., python -m build give none)
        # use one compiler per CPU: each extension is one independent gcc run
        if self.parallel is None:
            self.parallel = _jobs("SMML_BUILD_JOBS", os.cpu_count() or 1)
        if _truthy("SMML_SANITIZE"):
            # the flags are not in build_ext's up-to-date test: recompile every extension
            self.force = True

    def build_extensions(self):
        ctype = self.compiler.compiler_type
        cflags, lflags = _openmp_flags(ctype)
        use_omp = not _truthy("SMML_NO_OPENMP") and _openmp_works(self.compiler, cflags, lflags)
        if not use_omp:
            warnings.warn(
                "smml is being built WITHOUT OpenMP: every kernel will run on one thread. "
                "Install an OpenMP-capable compiler (gcc, or libomp on macOS) for parallel kernels."
            )
            print("*** smml: building without OpenMP (serial kernels) ***", file=sys.stderr)
        # -ffp-contract=off: no fused multiply-add, so exact recomputations (the k-NN
        # tie detection, the references' bit-exact comparisons) round the same way on
        # every target, including arm64 where gcc fuses by default.
        opt = ["/O2"] if ctype == "msvc" else ["-O3", "-ffp-contract=off"]
        san = []
        if _truthy("SMML_SANITIZE"):
            if ctype == "msvc":
                raise SystemExit("SMML_SANITIZE=1 needs gcc or clang")
            san = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
            # after Python's own CFLAGS, whose -O3 and -fwrapv they override (the last one
            # wins); -fwrapv (signed overflow wraps) would turn UBSan's overflow check off
            opt = ["-O1", "-g", "-ffp-contract=off", "-fno-wrapv"] + san
            print("*** smml: building with AddressSanitizer + UBSan (SMML_SANITIZE=1) ***", file=sys.stderr)
        for ext in self.extensions:
            ext.extra_compile_args = opt + (cflags if use_omp else [])
            ext.extra_link_args = list(lflags if use_omp else []) + san
        # the longest compilations first, so that no core idles behind one started last
        self.extensions.sort(key=_source_size, reverse=True)
        super().build_extensions()


def _source_size(ext):
    try:
        return sum(os.path.getsize(src) for src in ext.sources)
    except OSError:
        return 0


_CORE = os.path.join("src", "smml", "_core")
_INCLUDE = os.path.join(_CORE, "include")       # the C headers, one per concern
# a C header named by `cdef extern from "x.h"`, by verbatim C in `cdef extern from *`, or by a header
_HEADER = re.compile(r'(?:\bcdef\s+extern\s+from\s+|#\s*include\s+)"([^"]+)"')
# a .pxd of smml._core, cimported (its headers are compiled into the cimporting extension)
_CIMPORT = re.compile(r'^\s*(?:from\s+smml\._core\.(\w+)\s+cimport\b|cimport\s+smml\._core\.(\w+))', re.M)


def _headers(pyx):
    """The _core headers that the C of ``pyx`` includes: named by the .pyx, by the .pxd files
    it cimports (and its own .pxd), and by those headers themselves (smml_neural.h includes
    smml_neural_step.h), transitively. cythonize re-translates a .pyx when a .pxd changes; these
    make build_ext recompile the extensions a changed header is part of, and only those."""
    own_pxd = os.path.splitext(pyx)[0] + ".pxd"
    todo = [pyx] + ([own_pxd] if os.path.isfile(own_pxd) else [])
    seen, headers = set(todo), set()
    while todo:
        with open(todo.pop(), encoding="utf-8") as f:
            text = f.read()
        found = [os.path.join(_INCLUDE, h) for h in _HEADER.findall(text)]
        headers.update(h for h in found if os.path.isfile(h))
        found += [os.path.join(_CORE, (a or b) + ".pxd") for a, b in _CIMPORT.findall(text)]
        for dep in found:
            if dep not in seen and os.path.isfile(dep):
                seen.add(dep)
                todo.append(dep)
    return sorted(headers)


def _extensions():
    from Cython.Build import cythonize

    try:
        import numpy
        include_dirs = [_INCLUDE, numpy.get_include()]
    except ImportError:  # the kernels use typed memoryviews only
        include_dirs = [_INCLUDE]
    only = {m.strip() for m in os.environ.get("SMML_BUILD_ONLY", "").split(",") if m.strip()}
    exts = []
    for pyx in sorted(glob.glob(os.path.join(_CORE, "*.pyx"))):
        name = os.path.splitext(os.path.basename(pyx))[0]
        if only and name not in only:
            continue
        exts.append(Extension(
            f"smml._core.{name}", [pyx],
            include_dirs=include_dirs,
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            # C headers: cythonize follows `cdef extern from` headers, not the ones they
            # #include, so each extension lists its own (see _headers)
            depends=_headers(pyx),
        ))
    return cythonize(
        exts,
        compiler_directives=_directives(),
        include_path=["src"],
        annotate=_truthy("SMML_ANNOTATE"),
        nthreads=_cython_jobs(),
        # the directives are not in cythonize's up-to-date test (timestamps): re-translate
        force=_truthy("SMML_SANITIZE"),
    )


def _cython_jobs():
    """cythonize's worker processes. Cython runs them in a multiprocessing pool: only where
    processes start by fork by default, since a spawned (or forkserver) worker re-imports the
    main module, which is this file when it runs as ``python setup.py ...``."""
    method = multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
    n = _jobs("SMML_CYTHON_JOBS", (os.cpu_count() or 1) if method == "fork" else 1)
    return n if n > 1 else 0


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
