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

from libc.math cimport NAN
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

from qseg.resources._store cimport StoreView, fmix64, fnv_feed, fnv_start
from qseg.segmenters._query_words cimport STACK_WORDS, Words, words_close, words_open

cdef uint8_t SPACE = 32
cdef uint8_t OPEN_MARK = 40  # NAME_START "("
cdef uint8_t CLOSE_MARK = 41  # NAME_END ")"


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


cdef double word_count(StoreView words, Words* w, Py_ssize_t a) noexcept:
    """The count of word ``a`` in ``words`` (0 if absent)."""
    cdef uint64_t value = 0  # find() leaves it alone when the word is absent
    cdef bint ext
    words.find(fmix64(fnv_feed(fnv_start(words.seed), w.ptrs[a], w.lens[a])), &w.ptrs[a],
               &w.lens[a], 1, &value, &ext)
    return <double>value


cdef void query_span_table(StoreView counts, StoreView words, StoreView titles, Words* w,
                           Py_ssize_t max_span, Py_ssize_t title_words, double* counts_out,
                           double* titles_out, const double* singles,
                           Py_ssize_t counted) noexcept:
    """The raw tables of one query of n words (cells ``a * (n + 1) + b`` for span [a, b)):
    counts (single words from ``words``, or ``singles`` where given: the caller's
    :func:`word_count` of each; 2 to ``max_span`` words from ``counts``, 0 when absent, of
    which those of more than ``counted`` words are not looked up: an exact store of shorter
    n-grams has none of them; the other cells are left as they are) and title membership
    (``titles`` may be None; cells not found are left as they are)."""
    cdef Py_ssize_t a, b, n = w.n
    for a in range(n):
        for b in range(a + 2, min(n, a + max_span) + 1):
            counts_out[a * (n + 1) + b] = 0.0
        counts_out[a * (n + 1) + a + 1] = (singles[a] if singles != NULL
                                           else word_count(words, w, a))
        scan(counts, w, a, n, min(max_span, counted), False, &counts_out[a * (n + 1)])
        if titles is not None:
            scan(titles, w, a, n, title_words, True, &titles_out[a * (n + 1)])


def span_tables(list queries, StoreView counts, StoreView words, StoreView titles,
                Py_ssize_t max_span, Py_ssize_t title_words):
    """Flat tables of all queries: query q owns ``n * (n + 1)`` cells from ``offsets[q]``,
    cell ``a * (n + 1) + b`` describing span [a, b).

    ``table`` holds counts: single words from ``words``, 2 to ``max_span`` words from
    ``counts`` (0 when absent), NaN elsewhere. ``is_title`` marks spans of 2 to
    ``title_words`` words found in ``titles`` (which may be None).
    """
    cdef Py_ssize_t q, n, cells = 0
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
    if cells == 0:
        return offsets, table, is_title.astype(np.bool_)
    cdef double[::1] lg = table
    cdef double[::1] tt = is_title
    cdef Words w
    for q in range(nq):
        words_open(&w, <tuple>queries[q])
        try:
            query_span_table(counts, words, titles, &w, max_span, title_words, &lg[off[q]],
                             &tt[off[q]], NULL, max_span)
        finally:
            words_close(&w)
    return offsets, table, is_title.astype(np.bool_)


cdef double name_count(StoreView names, Words* w, Py_ssize_t start, Py_ssize_t end,
                       bint opening, bint closing) noexcept:
    """The count in the name statistics of the words ``[start, end)`` (two at most) after
    the name's opening mark or before its closing one (0 if absent)."""
    cdef const uint8_t* parts[4]
    cdef Py_ssize_t lens[4]
    cdef Py_ssize_t k = 0, i
    cdef uint64_t state = fnv_start(names.seed), value = 0
    cdef bint ext
    if opening:
        parts[k] = &OPEN_MARK
        lens[k] = 1
        k += 1
    for i in range(start, end):
        parts[k] = w.ptrs[i]
        lens[k] = w.lens[i]
        k += 1
    if closing:
        parts[k] = &CLOSE_MARK
        lens[k] = 1
        k += 1
    for i in range(k):
        if i:
            state = fnv_feed(state, &SPACE, 1)
        state = fnv_feed(state, parts[i], lens[i])
    if not names.find(fmix64(state), parts, lens, k, &value, &ext):
        return 0.0
    return <double>value


def name_edge_counts(list queries, StoreView names):
    """Per gap of the queries (of two words or more, one after the other), how many names
    each of these ends or begins: L0 ends, R0 begins, L0 begins, R0 ends, L1 L0 ends and
    R0 R1 begins (NaN past the query): ``name_features``'s counts, with no key built."""
    cdef Py_ssize_t q, g, n, gaps = 0
    for q in range(len(queries)):
        gaps += max(len(<tuple>queries[q]) - 1, 0)
    out = np.empty((gaps, 6), dtype=np.float64)
    cdef double[:, ::1] found = out
    cdef Words w
    cdef Py_ssize_t row = 0
    cdef double begins = 0.0, ends = 0.0, next_begins, next_ends
    for q in range(len(queries)):
        words_open(&w, <tuple>queries[q])
        try:
            n = w.n
            if n > 1:
                begins = name_count(names, &w, 0, 1, True, False)
                ends = name_count(names, &w, 0, 1, False, True)
            for g in range(n - 1):
                next_begins = name_count(names, &w, g + 1, g + 2, True, False)
                next_ends = name_count(names, &w, g + 1, g + 2, False, True)
                found[row, 0] = ends
                found[row, 1] = next_begins
                found[row, 2] = begins
                found[row, 3] = next_ends
                found[row, 4] = (name_count(names, &w, g - 1, g + 1, False, True) if g > 0
                                 else NAN)
                found[row, 5] = (name_count(names, &w, g + 1, g + 3, True, False) if g + 2 < n
                                 else NAN)
                begins, ends = next_begins, next_ends
                row += 1
        finally:
            words_close(&w)
    return out


cdef int word_attrs(tuple words, frozenset function_words, object query_tags,
                    dict tag_classes, Py_ssize_t other, double* attrs) except -1:
    """Per word, :data:`ATTRS` values: is *the*, is *free*, a function word, holds a digit,
    its length in characters, and its tag's class (-1 without tags; ``other`` for a tag not
    in ``tag_classes``)."""
    cdef Py_ssize_t j
    cdef str word
    cdef Py_UCS4 ch
    for j in range(len(words)):
        word = <str>words[j]
        attrs[j * ATTRS] = word == "the"
        attrs[j * ATTRS + 1] = word == "free"
        attrs[j * ATTRS + 2] = word in function_words
        attrs[j * ATTRS + 3] = 0.0
        for ch in word:
            if ch.isdigit():
                attrs[j * ATTRS + 3] = 1.0
                break
        attrs[j * ATTRS + 4] = len(word)
        attrs[j * ATTRS + 5] = -1.0
        if query_tags is not None:
            attrs[j * ATTRS + 5] = tag_classes.get(str(query_tags[j]).upper(), other)
    return 0


cdef void gap_feature_row(float* x, Py_ssize_t g, Py_ssize_t n, const double* attrs,
                          const double* logs, const uint8_t* titles,
                          const int64_t* window, Py_ssize_t nw, double log_n,
                          bint has_titles, Py_ssize_t classes) noexcept nogil:
    """The features of gap ``g`` of an n-word query into ``x`` (filled with NaN before), from
    its words' attributes (:func:`word_attrs`) and its span tables (log counts, titles)."""
    cdef Py_ssize_t k, j, a, b, length, col
    cdef double v, best, pair, left_word, right_word
    cdef bint found
    x[0] = n
    x[1] = g
    x[2] = n - 2 - g
    col = 3
    for k in range(-1, 3):  # slots L1 L0 R0 R1
        j = g + k
        if 0 <= j < n:
            x[col] = attrs[j * ATTRS]
            x[col + 1] = attrs[j * ATTRS + 1]
            x[col + 2] = attrs[j * ATTRS + 2]
            x[col + 3] = attrs[j * ATTRS + 3]
            x[col + 4] = attrs[j * ATTRS + 4]
            x[col + 5] = logs[j * (n + 1) + j + 1]
        col += 6
    for k in range(nw):
        a = g + window[2 * k]
        b = g + window[2 * k + 1]
        if a >= 0 and b <= n:
            x[col] = logs[a * (n + 1) + b]
        col += 1
    pair = logs[g * (n + 1) + g + 2]
    left_word = logs[g * (n + 1) + g + 1]
    right_word = logs[(g + 1) * (n + 1) + g + 2]
    if pair > 0 and left_word > 0 and right_word > 0:
        x[col] = pair + log_n - left_word - right_word
    col += 1
    for length in range(3, 6):
        found = False
        best = 0.0
        for a in range(max(0, g + 2 - length), min(g, n - length) + 1):
            v = logs[a * (n + 1) + a + length]
            if not found or v > best:
                best = v
                found = True
        if found:
            x[col] = best
        col += 1
    if has_titles:
        best = 0.0
        for a in range(g + 1):
            for b in range(g + 2, n + 1):
                if titles[a * (n + 1) + b] and b - a > best:
                    best = b - a
        x[col] = best
        best = 0.0
        for a in range(g):
            if titles[a * (n + 1) + g + 1] and g + 1 - a > best:
                best = g + 1 - a
        x[col + 1] = best
        best = 0.0
        for b in range(g + 3, n + 1):
            if titles[(g + 1) * (n + 1) + b] and b - g - 1 > best:
                best = b - g - 1
        x[col + 2] = best
    col += 3
    for k in range(-1, 3):
        j = g + k
        if 0 <= j < n and attrs[j * ATTRS + 5] >= 0:
            for a in range(classes):
                x[col + a] = 0.0
            x[col + <Py_ssize_t>attrs[j * ATTRS + 5]] = 1.0
        col += classes


def gap_rows(list queries, object tags, const double[::1] logs, const uint8_t[::1] titles,
             const int64_t[::1] offsets, const int64_t[:, ::1] window, double log_n,
             bint has_titles, frozenset function_words, dict tag_classes, Py_ssize_t classes,
             Py_ssize_t width):
    """The feature matrix (one float32 row of ``width`` per gap) in the order of
    ``FEATURE_NAMES``; see ``gap_features.py`` for what each column means."""
    cdef Py_ssize_t q, g, n, gaps = 0, nq = len(queries)
    cdef Py_ssize_t other = classes - 1  # tags not in tag_classes: the last class, "other"
    for q in range(nq):
        gaps += max(len(<tuple>queries[q]) - 1, 0)
    matrix = np.full((gaps, width), np.nan, dtype=np.float32)
    if gaps == 0:
        return matrix
    cdef float[:, ::1] x = matrix
    cdef Py_ssize_t row = 0
    cdef tuple words
    cdef double* attrs = NULL
    cdef double stack_attrs[STACK_WORDS * ATTRS]
    for q in range(nq):
        words = <tuple>queries[q]
        n = len(words)
        if n < 2:
            continue
        attrs = stack_attrs
        if n > STACK_WORDS:
            attrs = <double*>malloc(n * ATTRS * sizeof(double))
            if attrs == NULL:
                raise MemoryError()
        try:
            word_attrs(words, function_words, tags[q] if tags is not None else None,
                       tag_classes, other, attrs)
            for g in range(n - 1):
                gap_feature_row(&x[row, 0], g, n, attrs, &logs[offsets[q]],
                                &titles[offsets[q]], &window[0, 0], window.shape[0], log_n,
                                has_titles, classes)
                row += 1
        finally:
            if attrs != stack_attrs:
                free(attrs)
    return matrix
