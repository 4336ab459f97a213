from libc.stdint cimport uint64_t

from qseg.segmenters._query_words cimport Words


cdef class DomainKernel:
    cdef const float[::1] weights
    cdef float bias
    cdef uint64_t mask
    cdef uint64_t seed

    cdef float probability(self, tuple words, Words* w) except? -1
