"""Build the compiled kernels; all other metadata lives in pyproject.toml."""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# The kernels use unsigned __int128 and __builtin_*_overflow: GCC or Clang on a 64-bit
# platform. Linux and macOS are supported; Windows (MSVC) is not.
if sys.platform == "win32" or sys.maxsize <= 2**32:
    sys.exit(
        "qseg builds on 64-bit Linux and macOS only (its kernels need GCC or Clang: "
        "unsigned __int128, __builtin_mul_overflow); see the README's 'Platforms'"
    )

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
"""The kernels are translated (forked processes: Linux only, where forking is the default)
and compiled (threads) side by side: a build takes about half the time on two cores."""

KERNELS = [
    "src/qseg/_words.pyx",
    "src/qseg/resources/_store.pyx",
    "src/qseg/resources/builders/_ngrams.pyx",
    "src/qseg/segmenters/_kernel.pyx",
    "src/qseg/segmenters/learned/_gap_kernel.pyx",
    "src/qseg/segmenters/learned/_trees.pyx",
    "src/qseg/segmenters/learned/_sums.pyx",
    "src/qseg/segmenters/learned/_key_table.pyx",
    "src/qseg/segmenters/learned/_domain_kernel.pyx",
    "src/qseg/segmenters/learned/_decoding.pyx",
    "src/qseg/segmenters/learned/_gap_probabilities.pyx",
    "src/qseg/segmenters/learned/_joint_kernel.pyx",
]


class BuildKernels(build_ext):
    """Translates the kernels only when they are compiled (an sdist carries the ``.pyx``
    sources and is made without Cython running), then compiles them side by side (here, not
    in ``setup(options=...)``, which an editable install does not read)."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:
            self.parallel = CORES

    def build_extensions(self) -> None:
        from Cython.Build import cythonize

        translated = cythonize(
            self.extensions,
            include_path=["src"],
            language_level=3,
            nthreads=CORES if sys.platform.startswith("linux") else 0,
        )
        sources = {extension.name: extension.sources for extension in translated}
        for extension in self.extensions:
            extension.sources = sources[extension.name]
        super().build_extensions()


setup(
    ext_modules=[
        Extension(path[len("src/") : -len(".pyx")].replace("/", "."), [path]) for path in KERNELS
    ],
    cmdclass={"build_ext": BuildKernels},
)
