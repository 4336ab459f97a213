from libc.stdint cimport uint64_t


cdef void every_log_p(Py_ssize_t gaps, const double* one_bit, const double* zero_bit,
                      double* rest, double* out) noexcept nogil
cdef Py_ssize_t kbest_gaps(const double* if_break, const double* if_not, Py_ssize_t n,
                           Py_ssize_t k, uint64_t* out) except -1
cdef uint64_t best_breaks(Py_ssize_t n, const double* weights, Py_ssize_t reach,
                          bint beyond) noexcept
cdef double best_segment_sum(Py_ssize_t n, const double* weights, bint counted) noexcept nogil
