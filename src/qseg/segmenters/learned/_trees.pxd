from libc.stdint cimport uint32_t


cdef struct Trees:
    # every tree padded to a complete binary tree of ``depth`` levels (a leaf above the
    # last level repeats itself below a dummy split): node i has children 2i + 1 and 2i + 2,
    # so a walk is ``depth`` steps without a branch to mispredict
    const float* thresholds  # per tree, 2^depth - 1 inner nodes
    const uint32_t* features  # the split's feature, plus the row's width where a missing
    # value goes right (it reads the second half of the doubled row: _tree_walk.h)
    const float* leaves  # per tree, 2^depth
    Py_ssize_t count
    Py_ssize_t depth
    Py_ssize_t width  # the features a row has
    float base
    bint logistic


cdef int tree_outputs(const Trees* t, const float* rows, Py_ssize_t nrows, Py_ssize_t width,
                      float* out) except -1 nogil
cdef int trees_from(Trees* t, object complete, list keep) except -1
