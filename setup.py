"""Build the Cython kernels of smml (src/smml/_core/*.pyx) with OpenMP.

Environment variables:
  SMML_DEBUG_CYTHON=1   turn boundscheck / wraparound / initializedcheck back on
  SMML_ANNOTATE=1       write Cython's annotated HTML beside each .pyx
  SMML_NO_OPENMP=1      build serially, without OpenMP
  SMML_BUILD_ONLY=a,b   (development) build only the named _core modules
  SMML_LIBOMP_PREFIX    (macOS) where libomp lives; defaults to Homebrew's
"""
import glob
import os
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
    debug = _truthy("SMML_DEBUG_CYTHON")
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


class BuildExt(build_ext):
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
        for ext in self.extensions:
            ext.extra_compile_args = opt + (cflags if use_omp else [])
            ext.extra_link_args = list(lflags if use_omp else [])
        super().build_extensions()


def _extensions():
    from Cython.Build import cythonize

    try:
        import numpy
        include_dirs = [numpy.get_include()]
    except ImportError:  # the kernels use typed memoryviews only
        include_dirs = []
    only = {m.strip() for m in os.environ.get("SMML_BUILD_ONLY", "").split(",") if m.strip()}
    exts = []
    # C headers: cythonize follows `cdef extern from` headers, not the ones they #include
    # (_neural.h includes _neural_step.h), so every extension lists them all
    headers = sorted(glob.glob(os.path.join("src", "smml", "_core", "*.h")))
    for pyx in sorted(glob.glob(os.path.join("src", "smml", "_core", "*.pyx"))):
        name = os.path.splitext(os.path.basename(pyx))[0]
        if only and name not in only:
            continue
        exts.append(Extension(
            f"smml._core.{name}", [pyx],
            include_dirs=include_dirs,
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            depends=headers,
        ))
    return cythonize(
        exts,
        compiler_directives=_directives(),
        include_path=["src"],
        annotate=_truthy("SMML_ANNOTATE"),
        nthreads=int(os.environ.get("SMML_CYTHON_JOBS", "0") or 0),
    )


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
