"""Build the compiled kernels; all other metadata lives in pyproject.toml."""

import os
import sys

from Cython.Build import cythonize
from setuptools import setup

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

setup(
    ext_modules=cythonize(
        [
            "src/qseg/_words.pyx",
            "src/qseg/resources/_store.pyx",
            "src/qseg/resources/build/_ngrams.pyx",
            "src/qseg/segmenters/_kernel.pyx",
            "src/qseg/segmenters/_gap_kernel.pyx",
            "src/qseg/segmenters/_trees.pyx",
        ],
        include_path=["src"],
        language_level=3,
        nthreads=CORES if sys.platform.startswith("linux") else 0,
    ),
    options={"build_ext": {"parallel": CORES}},
)
