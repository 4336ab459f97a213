# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Keys (words joined by single spaces) to their positions, looked up by a query's words
without building a string: the vocabulary of the word vectors, the lexicon's tables and the
phrase rates of a compiled joint model."""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.string cimport memcmp
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

import numpy as np

from qseg.resources._store cimport fmix64, fnv_feed, fnv_start
from qseg.segmenters._query_words cimport Words

cdef uint64_t EMPTY = 0xFFFFFFFFFFFFFFFF  # a free slot (no position has 32 bits set)
cdef uint64_t LOW32 = 0xFFFFFFFF
cdef uint8_t SPACE = 32


cdef class KeyTable:
    """An open-addressing table from keys (words joined by single spaces) to their position
    in the list it was made from (a key listed twice: its last position, as a dict keeps).
    Lookups hash the words' UTF-8 bytes as the stores do, without building the string. A slot
    holds the key's position and the top 32 bits of its hash, so that a key that is not there
    (most spans a query asks about) costs one read of the slots."""

    def __init__(self, keys):
        # the keys' UTF-8 bytes one after the other, each followed by a line break (a key of
        # words joined by spaces holds none); hashed and placed here, without a Python object
        # per key
        self.size = len(keys)
        self.data = ("\n".join(keys) + "\n").encode("utf-8") if self.size else b""
        self.bytes_ptr = <const uint8_t*>self.data
        cdef Py_ssize_t i, k = 0, length = len(self.data)
        offsets = np.zeros(self.size + 1, dtype=np.int64)
        cdef int64_t[::1] starts = offsets
        for i in range(length):
            if self.bytes_ptr[i] == 10:
                k += 1
                if k > self.size:
                    break
                starts[k] = i + 1
        if k != self.size:
            raise ValueError("a key holds a line break")
        if <uint64_t>self.size >= LOW32:
            raise ValueError("too many keys for a table")
        self.offsets = offsets
        self.hashes = np.empty(self.size, dtype=np.uint64)
        for i in range(self.size):
            self.hashes[i] = fmix64(fnv_feed(fnv_start(0), self.bytes_ptr + starts[i],
                                             starts[i + 1] - 1 - starts[i]))
        capacity = 16
        while capacity < 2 * self.size:
            capacity *= 2
        self.slots = np.full(capacity, EMPTY, dtype=np.uint64)
        self.mask = capacity - 1
        cdef uint64_t j, slot
        cdef int64_t other
        cdef const uint8_t* key
        cdef Py_ssize_t key_length
        for i in range(self.size):
            j = self.hashes[i] & self.mask
            key = self.bytes_ptr + starts[i]
            key_length = starts[i + 1] - 1 - starts[i]
            while True:
                slot = self.slots[j]
                other = <int64_t>(slot & LOW32)
                if slot == EMPTY or (self.hashes[other] == self.hashes[i]
                                     and self._same(other, &key, &key_length, 1)):
                    self.slots[j] = (self.hashes[i] >> 32 << 32) | <uint64_t>i  # a key
                    break  # listed again: its last position
                j = (j + 1) & self.mask

    cdef int64_t find(self, uint64_t h, const uint8_t** parts, const Py_ssize_t* lengths,
                      Py_ssize_t nparts) noexcept nogil:
        """The position of the key made of ``parts`` whose hash is ``h``, or -1."""
        cdef uint64_t j = h & self.mask, slot, tag = h >> 32
        cdef int64_t e
        while True:
            slot = self.slots[j]
            if slot == EMPTY:
                return -1
            if slot >> 32 == tag:
                e = <int64_t>(slot & LOW32)
                if self.hashes[e] == h and self._same(e, parts, lengths, nparts):
                    return e
            j = (j + 1) & self.mask

    cdef bint _same(self, int64_t e, const uint8_t** parts, const Py_ssize_t* lengths,
                    Py_ssize_t nparts) noexcept nogil:
        cdef const uint8_t* key = self.bytes_ptr + self.offsets[e]
        cdef int64_t remaining = self.offsets[e + 1] - 1 - self.offsets[e]
        cdef Py_ssize_t p
        for p in range(nparts):
            if p:
                if remaining < 1 or key[0] != SPACE:
                    return False
                key += 1
                remaining -= 1
            if lengths[p] > remaining or memcmp(key, parts[p], lengths[p]) != 0:
                return False
            key += lengths[p]
            remaining -= lengths[p]
        return remaining == 0

    cdef int64_t find_words(self, Words* w, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
        """The position of the words ``[start, end)`` of a query, or -1."""
        return self.find(span_hash(w, start, end, 0), &w.ptrs[start], &w.lens[start],
                         end - start)

    def get(self, str key):
        """The position of ``key`` (one string), or -1."""
        cdef Py_ssize_t length
        cdef const uint8_t* data = <const uint8_t*>PyUnicode_AsUTF8AndSize(key, &length)
        return self.find(fmix64(fnv_feed(fnv_start(0), data, length)), &data, &length, 1)
