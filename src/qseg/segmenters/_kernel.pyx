# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled hot path of the n-gram segmenters: scanning candidate segments and exact decoding.

The scoring rules are documented in ``naive.py`` and ``wiki.py``, the decoding contract in
``decoder.py``; this module is their only implementation. Weights are Python integers, so
scores are exact however large the counts (the original Java code overflowed 32-bit ints).

A scan starts a candidate segment at every word and extends it one word at a time, extending
the key's hash in place (no strings are built); it stops as soon as the store says that no
longer n-gram starts with the segment, so a query costs about one lookup per word.
"""

from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

from qseg.resources._store cimport StoreView, fmix64, fnv_feed, fnv_start

cdef uint8_t SPACE = 32

cdef enum:
    STACK_WORDS = 256


cdef class _Words:
    """UTF-8 pointers and lengths of a query's words (kept alive by the tuple)."""

    cdef const uint8_t** ptrs
    cdef Py_ssize_t* lens
    cdef Py_ssize_t n
    cdef const uint8_t* stack_ptrs[STACK_WORDS]
    cdef Py_ssize_t stack_lens[STACK_WORDS]
    cdef tuple words

    def __cinit__(self, tuple words):
        cdef Py_ssize_t i, length
        self.words = words
        self.n = len(words)
        if self.n <= STACK_WORDS:
            self.ptrs = self.stack_ptrs
            self.lens = self.stack_lens
        else:
            self.ptrs = <const uint8_t**>malloc(self.n * sizeof(uint8_t*))
            self.lens = <Py_ssize_t*>malloc(self.n * sizeof(Py_ssize_t))
            if self.ptrs == NULL or self.lens == NULL:
                raise MemoryError()
        for i in range(self.n):
            self.ptrs[i] = <const uint8_t*>PyUnicode_AsUTF8AndSize(<str>words[i], &length)
            self.lens[i] = length

    def __dealloc__(self):
        if self.ptrs != self.stack_ptrs:
            free(self.ptrs)
            free(self.lens)


cpdef list naive_table(tuple words, StoreView counts, list power):
    """Weight table of naive scoring: |s|^|s| * freq(s) for segments with a count."""
    cdef _Words w = _Words(words)
    cdef Py_ssize_t n = w.n, i, end
    cdef uint64_t state, value
    cdef bint ext
    cdef list table = [], row
    for i in range(n - 1):
        row = []
        state = fnv_feed(fnv_start(counts.seed), w.ptrs[i], w.lens[i])
        for end in range(i + 2, n + 1):
            state = fnv_feed(fnv_feed(state, &SPACE, 1), w.ptrs[end - 1], w.lens[end - 1])
            if not counts.find(fmix64(state), &w.ptrs[i], &w.lens[i], end - i, &value, &ext):
                break
            if value:
                row.append((end, value * power[end - i]))
            if not ext:
                break
        table.append(row)
    return table


cpdef list wiki_table(
    tuple words, StoreView counts, StoreView titles, bint unseen_titles, uint64_t median
):
    """Weight table of Wikipedia-based normalization: |s| * weight(s)."""
    cdef _Words w = _Words(words)
    cdef Py_ssize_t n = w.n, i, end, t, length
    cdef uint64_t cstate, tstate, freq, member, top, pair
    cdef bint cfound, cext, text
    cdef list table = [[] for _ in range(n - 1)]
    cdef list row
    cdef uint64_t* pairs = <uint64_t*>malloc((n if n > 0 else 1) * sizeof(uint64_t))
    if pairs == NULL:
        raise MemoryError()
    try:
        for i in range(n - 2, -1, -1):  # right to left: the 2-gram counts after i are known
            row = <list>table[i]
            cstate = fnv_feed(fnv_start(counts.seed), w.ptrs[i], w.lens[i])
            tstate = fnv_feed(fnv_start(titles.seed), w.ptrs[i], w.lens[i])
            for end in range(i + 2, n + 1):
                cstate = fnv_feed(fnv_feed(cstate, &SPACE, 1), w.ptrs[end - 1], w.lens[end - 1])
                tstate = fnv_feed(fnv_feed(tstate, &SPACE, 1), w.ptrs[end - 1], w.lens[end - 1])
                length = end - i
                freq = 0
                cext = False
                cfound = counts.find(
                    fmix64(cstate), &w.ptrs[i], &w.lens[i], length, &freq, &cext
                )
                if not cfound:
                    freq = 0
                if length == 2:
                    pairs[i] = freq
                member = 0
                text = False
                if freq > 0 or unseen_titles:
                    if not titles.find(
                        fmix64(tstate), &w.ptrs[i], &w.lens[i], length, &member, &text
                    ):
                        member = 0
                        text = False
                if member:
                    top = 0
                    for t in range(i, end - 1):
                        pair = pairs[t] if pairs[t] else median
                        if pair > top:
                            top = pair
                    row.append((end, length * (length + <object>top)))
                elif freq:
                    row.append((end, length * <object>freq))
                if not (cext or (unseen_titles and text)):
                    break
    finally:
        free(pairs)
    return table


cpdef tuple best_breaks(list weights, Py_ssize_t n):
    """The highest-scoring segmentation of ``n`` words: ``(score, break bits)``."""
    cdef list best = [0] * (n + 1)
    cdef list nxt = list(range(1, n + 2))
    cdef list row, breaks
    cdef tuple pair
    cdef Py_ssize_t i, end, j
    cdef object top, score
    for i in range(n - 2, -1, -1):
        top = best[i + 1]
        row = <list>weights[i]
        for pair in row:
            end = pair[0]
            score = pair[1] + best[end]
            if score >= top:  # ascending ends: a tie goes to the longer segment
                top = score
                nxt[i] = end
        best[i] = top
    breaks = [0] * (n - 1)
    j = nxt[0]
    while j < n:
        breaks[j - 1] = 1
        j = nxt[j]
    return best[0], tuple(breaks)
