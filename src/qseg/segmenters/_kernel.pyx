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


cdef struct Words:
    const uint8_t** ptrs
    Py_ssize_t* lens
    Py_ssize_t n


cdef int words_open(Words* w, tuple words, const uint8_t** stack_ptrs,
                    Py_ssize_t* stack_lens) except -1:
    """Point ``w`` at the UTF-8 bytes of ``words`` (kept alive by the tuple)."""
    cdef Py_ssize_t i, length
    w.n = len(words)
    if w.n <= STACK_WORDS:
        w.ptrs = stack_ptrs
        w.lens = stack_lens
    else:
        w.ptrs = <const uint8_t**>malloc(w.n * sizeof(uint8_t*))
        w.lens = <Py_ssize_t*>malloc(w.n * sizeof(Py_ssize_t))
        if w.ptrs == NULL or w.lens == NULL:
            words_close(w, stack_ptrs)
            raise MemoryError()
    for i in range(w.n):
        w.ptrs[i] = <const uint8_t*>PyUnicode_AsUTF8AndSize(<str>words[i], &length)
        w.lens[i] = length
    return 0


cdef void words_close(Words* w, const uint8_t** stack_ptrs) noexcept:
    if w.ptrs != stack_ptrs:
        free(w.ptrs)
        free(w.lens)


cpdef list naive_table(tuple words, StoreView counts, list power):
    """Weight table of naive scoring: |s|^|s| * freq(s) for segments with a count."""
    cdef const uint8_t* stack_ptrs[STACK_WORDS]
    cdef Py_ssize_t stack_lens[STACK_WORDS]
    cdef Words w
    cdef Py_ssize_t n, i, end
    cdef uint64_t state, value
    cdef bint ext
    cdef list table = [], row
    words_open(&w, words, stack_ptrs, stack_lens)
    n = w.n
    try:
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
    finally:
        words_close(&w, stack_ptrs)
    return table


cpdef list wiki_table(
    tuple words, StoreView counts, StoreView titles, bint unseen_titles, uint64_t median
):
    """Weight table of Wikipedia-based normalization: |s| * weight(s)."""
    cdef const uint8_t* stack_ptrs[STACK_WORDS]
    cdef Py_ssize_t stack_lens[STACK_WORDS]
    cdef uint64_t stack_pairs[STACK_WORDS]
    cdef Words w
    cdef Py_ssize_t n, i, end, t, length
    cdef uint64_t cstate, tstate, freq, member, top, pair
    cdef uint64_t* pairs = stack_pairs  # 2-gram counts, filled right to left
    cdef bint cext, text, same_seed = counts.seed == titles.seed
    cdef list table, row
    words_open(&w, words, stack_ptrs, stack_lens)
    n = w.n
    table = [[] for _ in range(n - 1)]
    try:
        if n > STACK_WORDS:
            pairs = <uint64_t*>malloc(n * sizeof(uint64_t))
            if pairs == NULL:
                raise MemoryError()
        for i in range(n - 2, -1, -1):
            row = <list>table[i]
            cstate = fnv_feed(fnv_start(counts.seed), w.ptrs[i], w.lens[i])
            tstate = cstate if same_seed else fnv_feed(fnv_start(titles.seed), w.ptrs[i],
                                                        w.lens[i])
            for end in range(i + 2, n + 1):
                cstate = fnv_feed(fnv_feed(cstate, &SPACE, 1), w.ptrs[end - 1], w.lens[end - 1])
                if same_seed:
                    tstate = cstate
                else:
                    tstate = fnv_feed(fnv_feed(tstate, &SPACE, 1), w.ptrs[end - 1],
                                      w.lens[end - 1])
                length = end - i
                cext = False
                if not counts.find(fmix64(cstate), &w.ptrs[i], &w.lens[i], length, &freq,
                                   &cext):
                    freq = 0
                if length == 2:
                    pairs[i] = freq
                member = 0
                text = False
                if (freq or unseen_titles) and not titles.find(
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
        if pairs != stack_pairs:
            free(pairs)
        words_close(&w, stack_ptrs)
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
