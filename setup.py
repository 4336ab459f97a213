"""Build the compiled segmentation kernel; all other metadata lives in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import setup

setup(ext_modules=cythonize(["src/qseg/segmenters/_kernel.pyx"], language_level=3))
