# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled n-gram expansion of normalized lines (words joined by single spaces).

An n-gram of such a line is a substring that starts at a word and ends at a word, so all
1..N-grams are cut out of the line's UTF-8 bytes without building Python strings.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

import numpy as np


cdef class _Bounds:
    """Word start/end byte offsets of one line, in a buffer that grows as needed."""

    cdef Py_ssize_t* starts
    cdef Py_ssize_t* ends
    cdef Py_ssize_t capacity

    def __dealloc__(self):
        free(self.starts)
        free(self.ends)

    cdef Py_ssize_t scan(self, const char* text, Py_ssize_t length) except -1:
        cdef Py_ssize_t j, nwords = 1, start = 0
        if length == 0:
            return 0
        for j in range(length):
            if text[j] == 32:
                nwords += 1
        if nwords > self.capacity:
            self.starts = <Py_ssize_t*>realloc(self.starts, nwords * sizeof(Py_ssize_t))
            self.ends = <Py_ssize_t*>realloc(self.ends, nwords * sizeof(Py_ssize_t))
            if self.starts == NULL or self.ends == NULL:
                raise MemoryError()
            self.capacity = nwords
        nwords = 0
        for j in range(length + 1):
            if j == length or text[j] == 32:
                self.starts[nwords] = start
                self.ends[nwords] = j
                nwords += 1
                start = j + 1
        return nwords


def expand_lines(list lines, const uint64_t[::1] counts, int max_order):
    """All 1..``max_order``-grams of ``lines`` with the count of their line.

    Returns ``(offsets, data, counts)``: int64 offsets and UTF-8 bytes of an Arrow
    ``large_string`` column, and a uint64 count per n-gram.
    """
    cdef Py_ssize_t n = len(lines), i, length, k, w, nwords
    cdef const char* text
    cdef int64_t total_grams = 0, total_bytes = 0, gram = 0, pos = 0
    cdef int order
    cdef _Bounds b = _Bounds()
    for i in range(n):  # first pass: sizes
        text = PyUnicode_AsUTF8AndSize(<str>lines[i], &length)
        nwords = b.scan(text, length)
        for w in range(nwords):
            for order in range(1, max_order + 1):
                if w + order > nwords:
                    break
                total_grams += 1
                total_bytes += b.ends[w + order - 1] - b.starts[w]
    offsets = np.empty(total_grams + 1, dtype=np.int64)
    data = np.empty(max(total_bytes, 1), dtype=np.uint8)
    out_counts = np.empty(total_grams, dtype=np.uint64)
    cdef int64_t[::1] o = offsets
    cdef uint8_t[::1] d = data
    cdef uint64_t[::1] c = out_counts
    o[0] = 0
    for i in range(n):
        text = PyUnicode_AsUTF8AndSize(<str>lines[i], &length)
        nwords = b.scan(text, length)
        for w in range(nwords):
            for order in range(1, max_order + 1):
                if w + order > nwords:
                    break
                k = b.ends[w + order - 1] - b.starts[w]
                memcpy(&d[pos], text + b.starts[w], k)
                pos += k
                c[gram] = counts[i]
                gram += 1
                o[gram] = pos
    return offsets, data[:total_bytes], out_counts
