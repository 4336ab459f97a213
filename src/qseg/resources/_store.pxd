from libc.stdint cimport uint8_t, uint64_t


cdef inline uint64_t fnv_start(uint64_t seed) noexcept nogil:
    return 0xcbf29ce484222325ULL ^ seed


cdef inline uint64_t fnv_feed(uint64_t state, const uint8_t* data, Py_ssize_t length) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(length):
        state = (state ^ data[k]) * 0x100000001b3ULL
    return state


cdef inline uint64_t fmix64(uint64_t k) noexcept nogil:
    k ^= k >> 33
    k *= 0xff51afd7ed558ccdULL
    k ^= k >> 33
    k *= 0xc4ceb9fe1a85ec53ULL
    k ^= k >> 33
    return k


cdef class StoreView:
    cdef readonly object buffer
    cdef readonly dict layout
    cdef public object origin
    cdef readonly bint exact
    cdef readonly uint64_t seed
    cdef readonly uint64_t n_keys
    cdef int bucket_shift
    cdef int fp_shift
    cdef uint64_t fp_mask
    cdef int record_bits
    cdef int value_bits
    cdef uint64_t value_mask
    cdef const uint8_t* sizes
    cdef const uint64_t* bases
    cdef const uint8_t* records
    cdef const uint64_t* hashes
    cdef const uint64_t* values
    cdef const uint64_t* key_offsets
    cdef const uint8_t* key_bytes
    cdef uint64_t key_limit
    cdef uint64_t[::1] decode

    cdef bint find(self, uint64_t h, const uint8_t** parts, const Py_ssize_t* lengths,
                   Py_ssize_t nparts, uint64_t* value, bint* ext) noexcept nogil
    cdef bint _same_key(self, uint64_t r, const uint8_t** parts, const Py_ssize_t* lengths,
                        Py_ssize_t nparts) noexcept nogil
