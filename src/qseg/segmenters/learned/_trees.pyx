# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled evaluation of gradient-boosted tree ensembles stored as flat arrays.

The arithmetic is XGBoost's, so the results are the same to the bit: every feature is compared
as a float32 (``value < threshold`` goes left; NaN takes the node's default direction), and the
margin starts from the base margin and adds each tree's leaf in float32, tree after tree.
``trees.py`` describes the arrays and checks them when they are read from a file.
"""

from libc.math cimport expf, isnan, logf
from libc.stdint cimport int32_t, uint8_t

import numpy as np


def logit(float p):
    """The margin of a probability as XGBoost computes a logistic base score: in float32."""
    cdef float one = 1.0
    return -logf(one / p - one)


def margins(const float[:, ::1] x, const int32_t[::1] roots, const int32_t[::1] left,
            const int32_t[::1] right, const int32_t[::1] feature, const float[::1] value,
            const uint8_t[::1] default_left, float base, bint logistic):
    """Per row of ``x``: the base plus the leaf of every tree (or its logistic, a probability)."""
    cdef Py_ssize_t rows = x.shape[0], trees = roots.shape[0], r, t, start, end
    # rows a block at a time, about 256 kB of them, every tree over each block: the block and
    # the trees stay in the core's cache (tree after tree over all rows streamed the whole
    # matrix once a tree: 150 times 8 MB for a batch of the Webis queries)
    cdef Py_ssize_t block = max(16, 65536 // max(x.shape[1], 1))
    cdef int32_t node
    cdef float total, v, one = 1.0  # float arithmetic throughout, as XGBoost's sigmoid
    out = np.full(rows, base, dtype=np.float32)
    cdef float[::1] o = out
    with nogil:
        start = 0
        while start < rows:
            end = min(start + block, rows)
            for t in range(trees):  # each row still adds its leaves in tree order
                for r in range(start, end):
                    node = roots[t]
                    while left[node] >= 0:
                        v = x[r, feature[node]]
                        if isnan(v):
                            node = left[node] if default_left[node] else right[node]
                        elif v < value[node]:
                            node = left[node]
                        else:
                            node = right[node]
                    o[r] = o[r] + value[node]
            start = end
        if logistic:
            for r in range(rows):
                total = o[r]
                o[r] = one / (one + expf(-total))
    return out
