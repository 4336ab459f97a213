from libc.stdint cimport int64_t, uint8_t, uint64_t

from qseg.resources._store cimport fmix64, fnv_feed, fnv_start
from qseg.segmenters._query_words cimport Words


cdef class KeyTable:
    cdef uint64_t[::1] slots
    cdef uint64_t[::1] hashes
    cdef int64_t[::1] offsets
    cdef bytes data
    cdef const uint8_t* bytes_ptr
    cdef uint64_t mask
    cdef readonly Py_ssize_t size

    cdef int64_t find(self, uint64_t h, const uint8_t** parts, const Py_ssize_t* lengths,
                      Py_ssize_t nparts) noexcept nogil
    cdef bint _same(self, int64_t e, const uint8_t** parts, const Py_ssize_t* lengths,
                    Py_ssize_t nparts) noexcept nogil
    cdef int64_t find_words(self, Words* w, Py_ssize_t start, Py_ssize_t end) noexcept nogil


cdef inline uint64_t span_hash(Words* w, Py_ssize_t start, Py_ssize_t end,
                               uint64_t seed) noexcept nogil:
    """The stores' hash of the words ``[start, end)`` joined by single spaces, without
    joining them."""
    cdef uint8_t space = 32
    cdef uint64_t state = fnv_feed(fnv_start(seed), w.ptrs[start], w.lens[start])
    cdef Py_ssize_t i
    for i in range(start + 1, end):
        state = fnv_feed(fnv_feed(state, &space, 1), w.ptrs[i], w.lens[i])
    return fmix64(state)
