# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled evaluation of gradient-boosted tree ensembles, in two layouts: the flat arrays
``trees.py`` reads from a file (:func:`margins`, a batch of rows) and the same trees padded to
complete trees (:func:`tree_outputs`, the joint kernel's rows: ``compiled.complete_trees``).

The arithmetic is XGBoost's, so the results are the same to the bit: every feature is compared
as a float32 (``value < threshold`` goes left; NaN takes the node's default direction), and the
margin starts from the base margin and adds each tree's leaf in float32, tree after tree.
``trees.py`` describes the arrays and checks them when they are read from a file.
"""

from libc.math cimport expf, isnan, logf, INFINITY
from libc.stdint cimport int32_t, uint8_t, uint32_t
from libc.stdlib cimport free, malloc

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


cdef extern from "_tree_walk.h":
    float qseg_trees_sum(const float* thresholds, const uint32_t* features,
                         const float* leaves, Py_ssize_t count, int depth, float total,
                         const float* row) noexcept nogil


cdef int tree_outputs(const Trees* t, const float* rows, Py_ssize_t nrows, Py_ssize_t width,
                      float* out) except -1 nogil:
    """What :func:`margins` gives each row of ``width`` features (the trees' own): the base
    plus each tree's leaf, in float32, tree after tree (``_tree_walk.h``), then the logistic
    if the trees give probabilities."""
    cdef Py_ssize_t r, k
    cdef float total, v, one = 1.0
    cdef float* doubled = <float*>malloc(2 * width * sizeof(float))
    if doubled == NULL:
        with gil:
            raise MemoryError()
    for r in range(nrows):
        for k in range(width):
            v = rows[r * width + k]
            doubled[k] = -INFINITY if isnan(v) else v
            doubled[width + k] = INFINITY if isnan(v) else v
        total = qseg_trees_sum(t.thresholds, t.features, t.leaves, t.count, t.depth, t.base,
                               doubled)
        if t.logistic:
            total = one / (one + expf(-total))
        out[r] = total
    free(doubled)
    return 0


cdef int trees_from(Trees* t, object complete, list keep) except -1:
    """Point ``t`` at the arrays of a complete ensemble (``compiled.complete_trees``), kept
    alive by ``keep``."""
    cdef const float[:, ::1] thresholds = complete.thresholds
    cdef const uint32_t[:, ::1] features = complete.features
    cdef const float[:, ::1] leaves = complete.leaves
    keep.extend([thresholds, features, leaves])
    t.count = leaves.shape[0]
    t.depth = complete.depth
    if thresholds.shape[0] != t.count or features.shape[0] != t.count or (
        thresholds.shape[1] != (1 << t.depth) - 1 or features.shape[1] != thresholds.shape[1]
        or leaves.shape[1] != 1 << t.depth
    ):
        raise ValueError("complete trees: arrays of the wrong shapes")
    t.thresholds = &thresholds[0, 0] if t.count and t.depth else NULL
    t.features = &features[0, 0] if t.count and t.depth else NULL
    t.leaves = &leaves[0, 0] if t.count else NULL
    t.base = complete.base
    t.logistic = complete.logistic
    t.width = complete.width
    return 0
