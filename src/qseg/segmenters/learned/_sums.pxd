"""Sums added in the order the Python path adds them, so that both give the same bits."""

ctypedef fused real:
    float
    double


cdef real pairwise(const real* x, Py_ssize_t n) noexcept nogil
cdef double exact_sum(const double* values, Py_ssize_t n) noexcept nogil
