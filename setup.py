"""Build the compiled kernels; all other metadata lives in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import setup

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
    )
)
