# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled hot path of the n-gram segmenters: scanning candidate segments and exact decoding.

The scoring rules are documented in ``naive.py`` and ``wiki.py``, the decoding contract in
``decoder.py``; this module is their only implementation. A scorer scans a query into a list
of allowed segments with their weights; one decoder finds the best segmentation from it.

A scan starts a candidate segment at every word and extends it one word at a time, extending
the key's hash in place (no strings are built); it stops as soon as the store says that no
longer n-gram starts with the segment, so a query costs about one lookup per word.

Weights and scores are exact unsigned 128-bit integers (the original Java code overflowed
32-bit ints); a score that would not fit raises :class:`OverflowError` rather than wrap. Web1T
counts times |s|^|s| stay below 2^50.
"""

from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

from qseg.resources._store cimport StoreView, fmix64, fnv_feed, fnv_start
from qseg.segmenters._query_words cimport STACK_WORDS, Words, words_close, words_open

cdef extern from *:
    ctypedef unsigned long long u128 "unsigned __int128"
    bint mul_overflow "__builtin_mul_overflow"(u128 a, u128 b, u128* result) nogil
    bint add_overflow "__builtin_add_overflow"(u128 a, u128 b, u128* result) nogil

cdef uint8_t SPACE = 32
cdef object ZERO = 0
cdef object ONE = 1

cdef object to_int(u128 value):
    """An exact Python int from an unsigned 128-bit integer."""
    cdef uint64_t high = <uint64_t>(value >> 64)
    cdef uint64_t low = <uint64_t>value
    if high == 0:
        return low
    return (<object>high << 64) | <object>low


cdef u128 from_int(object value) except? 0:
    if value < 0 or value >> 128:
        raise OverflowError(f"weight {value} is outside 0 .. 2^128 - 1")
    return (<u128><uint64_t>(value >> 64) << 64) | <u128><uint64_t>(value & 0xFFFFFFFFFFFFFFFF)


cdef enum:
    STACK_SPANS = 256


cdef struct Spans:
    # allowed segments of one query: for start i, count[i] spans from first[i], ends ascending;
    # small queries use the arrays inside the struct (on the C stack), larger ones the heap
    Py_ssize_t n
    Py_ssize_t size
    Py_ssize_t capacity
    Py_ssize_t* first
    Py_ssize_t* count
    Py_ssize_t* ends
    u128* weights
    Py_ssize_t stack_first[STACK_WORDS + 1]
    Py_ssize_t stack_count[STACK_WORDS + 1]
    Py_ssize_t stack_ends[STACK_SPANS]
    u128 stack_weights[STACK_SPANS]


cdef int spans_open(Spans* s, Py_ssize_t n) except -1:
    cdef Py_ssize_t i
    s.n = n
    s.size = 0
    s.capacity = STACK_SPANS
    s.ends = s.stack_ends
    s.weights = s.stack_weights
    s.first = s.stack_first
    s.count = s.stack_count
    if n > STACK_WORDS:
        s.first = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        s.count = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if s.first == NULL or s.count == NULL:
            spans_close(s)
            raise MemoryError()
    for i in range(n + 1):
        s.first[i] = 0
        s.count[i] = 0
    return 0


cdef void spans_close(Spans* s) noexcept:
    if s.first != s.stack_first:
        free(s.first)
        free(s.count)
    if s.ends != s.stack_ends:
        free(s.ends)
        free(s.weights)
    s.first = s.stack_first
    s.count = s.stack_count
    s.ends = s.stack_ends
    s.weights = s.stack_weights


cdef int spans_add(Spans* s, Py_ssize_t start, Py_ssize_t end, u128 weight) except -1:
    """Append a span; the spans of one start must be added together, in increasing end."""
    cdef Py_ssize_t* ends
    cdef u128* weights
    if s.size == s.capacity:
        ends = <Py_ssize_t*>malloc(2 * s.capacity * sizeof(Py_ssize_t))
        weights = <u128*>malloc(2 * s.capacity * sizeof(u128))
        if ends == NULL or weights == NULL:
            free(ends)
            free(weights)
            raise MemoryError()
        memcpy(ends, s.ends, s.size * sizeof(Py_ssize_t))
        memcpy(weights, s.weights, s.size * sizeof(u128))
        if s.ends != s.stack_ends:
            free(s.ends)
            free(s.weights)
        s.ends = ends
        s.weights = weights
        s.capacity *= 2
    if s.count[start] == 0:
        s.first[start] = s.size
    s.ends[s.size] = end
    s.weights[s.size] = weight
    s.size += 1
    s.count[start] += 1
    return 0


cdef tuple decode(Spans* s):
    """``(score, breaks)`` of the best segmentation (see ``decoder.py`` for the contract)."""
    cdef Py_ssize_t n = s.n, i, j, k, end
    cdef u128 top, score
    cdef u128 stack_best[STACK_WORDS + 1]
    cdef Py_ssize_t stack_nxt[STACK_WORDS + 1]
    cdef u128* best = stack_best
    cdef Py_ssize_t* nxt = stack_nxt
    cdef tuple breaks
    cdef object bit
    if n > STACK_WORDS:
        best = <u128*>malloc((n + 1) * sizeof(u128))
        nxt = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        if best == NULL or nxt == NULL:
            free(best)
            free(nxt)
            raise MemoryError()
    try:
        best[n] = 0
        for i in range(n + 1):
            nxt[i] = i + 1
        if n:
            best[n - 1] = 0
        for i in range(n - 2, -1, -1):
            top = best[i + 1]
            for k in range(s.first[i], s.first[i] + s.count[i]):
                end = s.ends[k]
                if add_overflow(s.weights[k], best[end], &score):
                    raise OverflowError("a segmentation score exceeds 2^128 - 1")
                if score >= top:  # ascending ends: a tie goes to the longer segment
                    top = score
                    nxt[i] = end
            best[i] = top
        breaks = PyTuple_New(n - 1 if n > 1 else 0)
        i = 0
        j = nxt[0]
        while i < n - 1:  # the gap after word i breaks iff a segment ends there
            if i + 1 == j:
                bit = ONE
                j = nxt[j]
            else:
                bit = ZERO
            Py_INCREF(bit)
            PyTuple_SET_ITEM(breaks, i, bit)
            i += 1
        return to_int(best[0]), breaks
    finally:
        if best != stack_best:
            free(best)
            free(nxt)


cdef list to_table(Spans* s):
    cdef list table = [], row
    cdef Py_ssize_t i, k
    for i in range(s.n - 1):
        row = []
        for k in range(s.first[i], s.first[i] + s.count[i]):
            row.append((s.ends[k], to_int(s.weights[k])))
        table.append(row)
    return table


def best_breaks(list weights, Py_ssize_t n):
    """The highest-scoring segmentation of ``n`` words from a weight table:
    ``(score, break bits)``. A table that is no table of n words (more rows than n - 1, a
    segment ending before its second word or after the last) is a ``ValueError``: decoding
    indexes its arrays by the ends."""
    cdef Spans s
    cdef Py_ssize_t i
    if n < 0 or len(weights) > max(n - 1, 0):
        raise ValueError(f"a weight table of {n} words has up to {max(n - 1, 0)} rows, "
                         f"not {len(weights)}")
    spans_open(&s, n)
    try:
        for i in range(len(weights)):
            for end, weight in weights[i]:
                if not i + 2 <= end <= n:
                    raise ValueError(f"row {i} of a weight table of {n} words: a segment "
                                     f"ends at {end}, not at {i + 2} to {n}")
                spans_add(&s, i, end, from_int(weight))
        return decode(&s)
    finally:
        spans_close(&s)


cdef class SpanScorer:
    """Base of the compiled scorers: ``table`` for ranking and scoring, ``best`` for decoding."""

    cdef int scan(self, Words* w, Spans* s) except -1:
        raise NotImplementedError

    cdef object _scanned(self, tuple words, bint decoded):
        """Scan ``words``; then decode (``(score, breaks)``) or list the weight table."""
        cdef Words w
        cdef Spans s
        words_open(&w, words)
        try:
            spans_open(&s, w.n)
            try:
                self.scan(&w, &s)
                return decode(&s) if decoded else to_table(&s)
            finally:
                spans_close(&s)
        finally:
            words_close(&w)

    def table(self, tuple words):
        """The weight table of ``words`` (see ``decoder.py``)."""
        return self._scanned(words, False)

    def best(self, tuple words):
        """``(score, breaks)`` of the best segmentation of ``words``."""
        return self._scanned(words, True)


cdef class NaiveScorer(SpanScorer):
    """|s|^|s| * freq(s) for segments with a count."""

    cdef StoreView counts
    cdef list powers
    cdef u128 power[27]
    cdef Py_ssize_t longest
    cdef int max_order

    def __init__(self, StoreView counts, int max_order):
        cdef Py_ssize_t length
        self.counts = counts
        self.max_order = max_order
        self.longest = min(max_order, 26)  # 27^27 > 2^128
        for length in range(self.longest + 1):
            self.power[length] = from_int((<object>length) ** (<object>length))

    def __reduce__(self):
        return NaiveScorer, (self.counts, self.max_order)

    cdef int scan(self, Words* w, Spans* s) except -1:
        cdef StoreView counts = self.counts
        cdef Py_ssize_t n = w.n, i, end, length
        cdef uint64_t state, value
        cdef u128 weight
        cdef bint ext
        for i in range(n - 1):
            state = fnv_feed(fnv_start(counts.seed), w.ptrs[i], w.lens[i])
            for end in range(i + 2, n + 1):
                state = fnv_feed(fnv_feed(state, &SPACE, 1), w.ptrs[end - 1], w.lens[end - 1])
                if not counts.find(fmix64(state), &w.ptrs[i], &w.lens[i], end - i, &value,
                                   &ext):
                    break
                length = end - i
                if value:
                    if length > self.longest or mul_overflow(value, self.power[length],
                                                             &weight):
                        raise OverflowError(f"{value} x {length}^{length} exceeds 2^128 - 1")
                    spans_add(s, i, end, weight)
                if not ext:
                    break
        return 0


cdef class WikiScorer(SpanScorer):
    """|s| * weight(s), weight(s) = |s| + max sub-2-gram count for titles, freq(s) otherwise."""

    cdef StoreView counts
    cdef StoreView titles
    cdef bint unseen_titles
    cdef uint64_t median

    def __init__(self, StoreView counts, StoreView titles, bint unseen_titles, uint64_t median):
        self.counts = counts
        self.titles = titles
        self.unseen_titles = unseen_titles
        self.median = median

    def __reduce__(self):
        return WikiScorer, (self.counts, self.titles, self.unseen_titles, self.median)

    cdef int scan(self, Words* w, Spans* s) except -1:
        cdef StoreView counts = self.counts, titles = self.titles
        cdef Py_ssize_t n = w.n, i, end, t, length
        cdef uint64_t cstate, tstate, freq, member, top, pair
        cdef uint64_t stack_pairs[STACK_WORDS]
        cdef uint64_t* pairs = stack_pairs  # 2-gram counts, filled right to left
        cdef bint cext, text, same_seed = counts.seed == titles.seed
        cdef bint unseen = self.unseen_titles
        if n > STACK_WORDS:
            pairs = <uint64_t*>malloc(n * sizeof(uint64_t))
            if pairs == NULL:
                raise MemoryError()
        try:
            for i in range(n - 2, -1, -1):
                cstate = fnv_feed(fnv_start(counts.seed), w.ptrs[i], w.lens[i])
                tstate = cstate if same_seed else fnv_feed(fnv_start(titles.seed), w.ptrs[i],
                                                            w.lens[i])
                for end in range(i + 2, n + 1):
                    cstate = fnv_feed(fnv_feed(cstate, &SPACE, 1), w.ptrs[end - 1],
                                      w.lens[end - 1])
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
                    if (freq or unseen) and not titles.find(
                        fmix64(tstate), &w.ptrs[i], &w.lens[i], length, &member, &text
                    ):
                        member = 0
                        text = False
                    if member:
                        top = 0
                        for t in range(i, end - 1):
                            pair = pairs[t] if pairs[t] else self.median
                            if pair > top:
                                top = pair
                        spans_add(s, i, end, <u128>length * (<u128>length + top))
                    elif freq:
                        spans_add(s, i, end, <u128>length * freq)
                    if not (cext or (unseen and text)):
                        break
        finally:
            if pairs != stack_pairs:
                free(pairs)
        return 0
