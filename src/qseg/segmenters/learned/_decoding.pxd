from libc.stdint cimport uint8_t, uint64_t


cdef void every_log_p(Py_ssize_t gaps, const double* one_bit, const double* zero_bit,
                      double* rest, double* out) noexcept nogil
cdef Py_ssize_t kbest_gaps(const double* if_break, const double* if_not, Py_ssize_t n,
                           Py_ssize_t k, uint64_t* out) except -1
cdef uint64_t best_breaks(Py_ssize_t n, const double* weights, Py_ssize_t reach,
                          bint beyond) noexcept
cdef double best_segment_sum(Py_ssize_t n, const double* weights, bint counted) noexcept nogil
cdef Py_ssize_t averaged_best(Py_ssize_t gaps, const uint8_t* bits_a, const float* scores_a,
                              Py_ssize_t ka, const uint8_t* bits_b, const float* scores_b,
                              Py_ssize_t kb, double* p) noexcept nogil
