# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled hot path of the supervised segmenters: span tables and gap feature rows.

The features are documented in ``gap_features.py``; this module is their only implementation.
``span_tables`` looks every span of every query up in the stores by extending the key's hash
one word at a time (no strings are built). Unlike the segmenters' scans it does not stop where
a span's extendable bit says no longer key follows: in a compact store a shadowed prefix would
end the scan before a title it leads to. A title of three words or more counts only where its
prefix one word shorter is found too (every title's prefixes are stored): a compact store
reports an absent key present with a small probability at every lookup, and without the chain
a ten-word query, 45 lookups, would find a false title of any length one time in nine at 12
fingerprint bits. ``gap_rows`` writes one row of features per gap into a preallocated matrix,
so a batch costs no Python object per gap.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

from qseg.resources._store cimport StoreView, fmix64, fnv_feed, fnv_start
from qseg.segmenters._query_words cimport STACK_WORDS, Words, words_close, words_open

cdef uint8_t SPACE = 32


cdef void scan(StoreView store, Words* w, Py_ssize_t i, Py_ssize_t n, Py_ssize_t longest,
               bint titles, double* out) noexcept:
    """Spans [i, i + 2 .. i + longest] of one query: count, or title membership (0 if absent;
    a title's scan ends at the first span not found, whose longer spans are no titles)."""
    cdef uint64_t state = fnv_feed(fnv_start(store.seed), w.ptrs[i], w.lens[i])
    cdef uint64_t value
    cdef bint ext
    cdef Py_ssize_t end
    for end in range(i + 2, min(n, i + longest) + 1):
        state = fnv_feed(fnv_feed(state, &SPACE, 1), w.ptrs[end - 1], w.lens[end - 1])
        value = 0
        if store.find(fmix64(state), &w.ptrs[i], &w.lens[i], end - i, &value, &ext):
            out[end] = (value > 0) if titles else <double>value
        elif titles:
            break


def span_tables(list queries, StoreView counts, StoreView words, StoreView titles,
                Py_ssize_t max_span, Py_ssize_t title_words):
    """Flat tables of all queries: query q owns ``n * (n + 1)`` cells from ``offsets[q]``,
    cell ``a * (n + 1) + b`` describing span [a, b).

    ``table`` holds counts: single words from ``words``, 2 to ``max_span`` words from
    ``counts`` (0 when absent), NaN elsewhere. ``is_title`` marks spans of 2 to
    ``title_words`` words found in ``titles`` (which may be None).
    """
    cdef Py_ssize_t q, a, b, n, cells = 0, start
    cdef Py_ssize_t nq = len(queries)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    for q in range(nq):
        n = len(<tuple>queries[q])
        off[q] = cells
        cells += n * (n + 1)
    off[nq] = cells
    table = np.full(cells, np.nan)
    is_title = np.zeros(cells, dtype=np.float64)
    cdef double[::1] lg = table
    cdef double[::1] tt = is_title
    cdef Words w
    cdef uint64_t value
    cdef bint ext
    cdef uint64_t h
    for q in range(nq):
        words_open(&w, <tuple>queries[q])
        try:
            n = len(<tuple>queries[q])
            start = off[q]
            for a in range(n):
                for b in range(a + 2, min(n, a + max_span) + 1):
                    lg[start + a * (n + 1) + b] = 0.0
                h = fmix64(fnv_feed(fnv_start(words.seed), w.ptrs[a], w.lens[a]))
                value = 0  # find() leaves it alone when the word is absent
                words.find(h, &w.ptrs[a], &w.lens[a], 1, &value, &ext)
                lg[start + a * (n + 1) + a + 1] = <double>value
                scan(counts, &w, a, n, max_span, False, &lg[start + a * (n + 1)])
                if titles is not None:
                    scan(titles, &w, a, n, title_words, True, &tt[start + a * (n + 1)])
        finally:
            words_close(&w)
    return offsets, table, is_title.astype(np.bool_)


cdef inline double cell(const double[::1] t, Py_ssize_t start, Py_ssize_t n, Py_ssize_t a,
                        Py_ssize_t b) noexcept nogil:
    return t[start + a * (n + 1) + b]


def gap_rows(list queries, object tags, const double[::1] logs, const uint8_t[::1] titles,
             const int64_t[::1] offsets, const int64_t[:, ::1] window, double log_n,
             bint has_titles, frozenset function_words, dict tag_classes, Py_ssize_t classes,
             Py_ssize_t width):
    """The feature matrix (one float32 row of ``width`` per gap) in the order of
    ``FEATURE_NAMES``; see ``gap_features.py`` for what each column means."""
    cdef Py_ssize_t q, g, n, k, j, a, b, length, col, start, gaps = 0, nq = len(queries)
    cdef Py_ssize_t other = classes - 1  # tags not in tag_classes: the last class, "other"
    for q in range(nq):
        gaps += max(len(<tuple>queries[q]) - 1, 0)
    matrix = np.full((gaps, width), np.nan, dtype=np.float32)
    cdef float[:, ::1] x = matrix
    cdef Py_ssize_t nw = window.shape[0]
    cdef Py_ssize_t row = 0
    cdef double v, best, pair, left_word, right_word
    cdef bint found
    cdef tuple words
    cdef object query_tags
    cdef str word
    cdef Py_UCS4 ch
    cdef double* attrs = NULL  # per word: the, free, function, digit, chars, tag class
    cdef double stack_attrs[STACK_WORDS * 6]
    for q in range(nq):
        words = <tuple>queries[q]
        n = len(words)
        if n < 2:
            continue
        attrs = stack_attrs
        if n > STACK_WORDS:
            attrs = <double*>malloc(n * 6 * sizeof(double))
            if attrs == NULL:
                raise MemoryError()
        try:
            query_tags = tags[q] if tags is not None else None
            for j in range(n):
                word = <str>words[j]
                attrs[j * 6] = word == "the"
                attrs[j * 6 + 1] = word == "free"
                attrs[j * 6 + 2] = word in function_words
                attrs[j * 6 + 3] = 0.0
                for ch in word:
                    if ch.isdigit():
                        attrs[j * 6 + 3] = 1.0
                        break
                attrs[j * 6 + 4] = len(word)
                attrs[j * 6 + 5] = -1.0
                if query_tags is not None:
                    attrs[j * 6 + 5] = tag_classes.get(str(query_tags[j]).upper(), other)
            start = offsets[q]
            for g in range(n - 1):
                x[row, 0] = n
                x[row, 1] = g
                x[row, 2] = n - 2 - g
                col = 3
                for k in range(-1, 3):  # slots L1 L0 R0 R1
                    j = g + k
                    if 0 <= j < n:
                        x[row, col] = attrs[j * 6]
                        x[row, col + 1] = attrs[j * 6 + 1]
                        x[row, col + 2] = attrs[j * 6 + 2]
                        x[row, col + 3] = attrs[j * 6 + 3]
                        x[row, col + 4] = attrs[j * 6 + 4]
                        x[row, col + 5] = cell(logs, start, n, j, j + 1)
                    col += 6
                for k in range(nw):
                    a = g + window[k, 0]
                    b = g + window[k, 1]
                    if a >= 0 and b <= n:
                        x[row, col] = cell(logs, start, n, a, b)
                    col += 1
                pair = cell(logs, start, n, g, g + 2)
                left_word = cell(logs, start, n, g, g + 1)
                right_word = cell(logs, start, n, g + 1, g + 2)
                if pair > 0 and left_word > 0 and right_word > 0:
                    x[row, col] = pair + log_n - left_word - right_word
                col += 1
                for length in range(3, 6):
                    found = False
                    best = 0.0
                    for a in range(max(0, g + 2 - length), min(g, n - length) + 1):
                        v = cell(logs, start, n, a, a + length)
                        if not found or v > best:
                            best = v
                            found = True
                    if found:
                        x[row, col] = best
                    col += 1
                if has_titles:
                    best = 0.0
                    for a in range(g + 1):
                        for b in range(g + 2, n + 1):
                            if titles[start + a * (n + 1) + b] and b - a > best:
                                best = b - a
                    x[row, col] = best
                    best = 0.0
                    for a in range(g):
                        if titles[start + a * (n + 1) + g + 1] and g + 1 - a > best:
                            best = g + 1 - a
                    x[row, col + 1] = best
                    best = 0.0
                    for b in range(g + 3, n + 1):
                        if titles[start + (g + 1) * (n + 1) + b] and b - g - 1 > best:
                            best = b - g - 1
                    x[row, col + 2] = best
                col += 3
                for k in range(-1, 3):
                    j = g + k
                    if 0 <= j < n and attrs[j * 6 + 5] >= 0:
                        for a in range(classes):
                            x[row, col + a] = 0.0
                        x[row, col + <Py_ssize_t>attrs[j * 6 + 5]] = 1.0
                    col += classes
                row += 1
        finally:
            if attrs != stack_attrs:
                free(attrs)
    return matrix
