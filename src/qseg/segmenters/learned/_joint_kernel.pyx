# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled inference of the joint models: from a query's normalized words to its segmentation.

One call per query does what ``break_model.py`` and ``joint.py`` do for a batch. The kernel is
in parts, each mirroring Python modules it is tested against:

- ``_gap_probabilities``: the query's span tables and word inputs (gap features, name
  statistics, pair counts, word vectors, the query's kind, the lexicon) and the gap model's
  trees: every gap's break probability;
- ``_decoding``: every candidate's log-probability, the k-best and the dynamic programs;
- ``_trees``: the trees' outputs; ``_key_table``: the phrase, vocabulary and lexicon tables;
  ``_domain_kernel``: the query's kind; ``_sums``: numpy's and ``math.fsum``'s orders;
- here: the ``max_candidates`` most probable candidates the title rule allows, their candidate
  features and the joint scorers' trees.

Nothing allocates a Python object per gap, candidate or tree; a batch is the same call query
after query. The Python modules stay the reference: the arithmetic repeats theirs operation by
operation (float64 where numpy computes in float64, float32 where it does, numpy's pairwise
order where a float32 sum is summed by numpy), so that both give the same features to the bit
and so the same trees' outputs (tests/test_compiled.py checks it on every corpus query).

A query of up to :data:`MAX_WORDS` words has every candidate ranked; a longer one (up to
:data:`MAX_LONG_WORDS`) is decided as the Python path decides it: each gap judged in the
:data:`WINDOW_WORDS` words around it, the candidates from the exact k-best of the gap model
(the same heap, costs and exact sums as ``decoder.kbest_gaps``) and compared with the best of
them and of three dynamic programs. Queries with part-of-speech tags go the Python way
(``BreakModel``).
"""

from libc.math cimport expm1, log, log1p, NAN
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

import numpy as np

from qseg.segmenters._query_words cimport Words, words_close, words_open
from qseg.segmenters.learned._decoding cimport (
    averaged_best,
    best_breaks,
    best_segment_sum,
    every_log_p,
    kbest_gaps,
)
from qseg.segmenters.learned._gap_kernel cimport ATTRS
from qseg.segmenters.learned._gap_probabilities cimport GapProbabilities, Query
from qseg.segmenters.learned._key_table cimport KeyTable
from qseg.segmenters.learned._sizes cimport (
    CANDIDATE_COLUMNS,
    HALF_CANDIDATES,
    MAX_CANDIDATES,
    MAX_GAPS,
    MAX_LONG_WORDS,
    MAX_SPAN,
    MAX_WORDS,
    SEARCHED,
    TAG_COLUMNS,
)
from qseg.segmenters.learned._sums cimport pairwise
from qseg.segmenters.learned._trees cimport Trees, tree_outputs, trees_from

cdef object ZERO = 0
cdef object ONE = 1


cdef struct Ranked:
    float key  # minus the candidate's float32 log-probability
    int32_t index


cdef struct Spans:
    # per span [a, b) of 2+ words (cell a * (n + 1) + b); one block of memory
    double* log_count  # log(1 + count) up to MAX_SPAN words, else 0
    double* counted_log  # the same (what the candidates' sum of log counts adds)
    double* filled  # the phrase rate, 0.5 if not seen
    double* naive
    double* cohesion
    uint8_t* seen
    uint8_t* title


cdef class JointKernel:
    """A joint :class:`~qseg.segmenters.learned.break_model.BreakModel` compiled (see the module's
    docstring); made by :func:`qseg.segmenters.learned.compiled.compile_model`."""

    cdef GapProbabilities gaps
    cdef Trees joint_trees, ranker_trees
    cdef bint has_ranker
    cdef KeyTable phrases
    cdef Py_ssize_t longest_phrase  # the most words of a phrase (longer spans: none)
    cdef const double[::1] rates
    cdef Py_ssize_t max_candidates, title_only_from
    cdef list keep

    def __init__(self, GapProbabilities gaps not None, *, joint_trees, ranker_trees, phrases,
                 rates, Py_ssize_t longest_phrase, Py_ssize_t max_candidates,
                 Py_ssize_t title_only_from):
        self.keep = []
        self.gaps = gaps
        trees_from(&self.joint_trees, joint_trees, self.keep)
        self.has_ranker = ranker_trees is not None
        if self.has_ranker:
            trees_from(&self.ranker_trees, ranker_trees, self.keep)
        self.phrases, self.rates = phrases, rates
        self.longest_phrase = longest_phrase
        if max_candidates < 1:  # (compile_model refuses such a model in one line first)
            raise ValueError(f"max_candidates must be at least 1, got {max_candidates}")
        self.max_candidates, self.title_only_from = max_candidates, title_only_from
        cdef Py_ssize_t candidate_width = CANDIDATE_COLUMNS + (
            gaps.domain is not None or gaps.kind >= 0)
        if self.joint_trees.width != candidate_width or (
                self.has_ranker and self.ranker_trees.width != candidate_width):
            raise ValueError("the trees take other features than the kernel gives them")

    cdef int open_spans(self, Query* q, Words* w, Spans* spans) except -1:
        """What the candidates' features read of each span of 2 words or more."""
        cdef Py_ssize_t n = q.n, cells = n * (n + 1), a, b, c
        cdef int64_t e
        cdef double* word_log
        cdef double* block = <double*>malloc(cells * (5 * sizeof(double) + 2)
                                             + (n + 1) * sizeof(double))
        if block == NULL:
            raise MemoryError()
        spans.log_count = block
        spans.counted_log = block + cells
        spans.filled = block + 2 * cells
        spans.naive = block + 3 * cells
        spans.cohesion = block + 4 * cells
        word_log = block + 5 * cells
        spans.seen = <uint8_t*>(word_log + n + 1)
        spans.title = spans.seen + cells
        word_log[0] = 0.0
        for a in range(n):
            word_log[a + 1] = word_log[a] + q.logs[a * (n + 1) + a + 1]
        for a in range(n):
            for b in range(a + 2, n + 1):
                c = a * (n + 1) + b
                spans.log_count[c] = q.logs[c] if b - a <= MAX_SPAN else 0.0
                spans.counted_log[c] = spans.log_count[c]  # (0 past MAX_SPAN words)
                spans.title[c] = q.titles[c]
                e = self.phrases.find_words(w, a, b) if b - a <= self.longest_phrase else -1
                spans.seen[c] = e >= 0
                spans.filled[c] = self.rates[e] if e >= 0 else 0.5
                if b - a <= MAX_SPAN and spans.log_count[c] > 0:
                    spans.naive[c] = expm1(spans.log_count[c]) * integer_power(b - a)
                    spans.cohesion[c] = (spans.log_count[c] - (word_log[b] - word_log[a])
                                         + (b - a - 1) * self.gaps.log_n)
                else:
                    spans.naive[c] = 0.0
                    spans.cohesion[c] = 0.0
        return 0

    cdef Py_ssize_t decide(self, tuple words, Words* w, Py_ssize_t window, uint8_t* bits,
                           float* scores) except -1:
        """The ``window`` candidates the joint scorers choose among (break bits, one row of
        n - 1 each, most probable first) and their scores; returns how many there are."""
        cdef Query q
        q.logs = NULL
        try:
            self.gaps.open_query(words, w, &q)
            return self.decide_query(&q, w, window, bits, scores)
        finally:
            free(q.logs)

    cdef Py_ssize_t decide_query(self, Query* q, Words* w, Py_ssize_t window, uint8_t* bits,
                                 float* scores) except -1:
        """:meth:`decide` of a query already open (``q``: this model's, or made so by
        ``reopen_query``)."""
        cdef Spans spans
        cdef Py_ssize_t n = w.n, kept = 0
        cdef float* p32 = <float*>malloc((n - 1) * sizeof(float))
        if p32 == NULL:
            raise MemoryError()
        spans.log_count = NULL
        try:
            self.gaps.gap_probabilities(q, w, p32)
            self.open_spans(q, w, &spans)
            if n <= MAX_WORDS:
                kept = self.every_candidate(q, &spans, p32, window, bits, scores)
            else:
                kept = self.likely_candidates(q, &spans, p32, window, bits, scores)
        finally:
            free(p32)
            free(spans.log_count)
        return kept

    cdef Py_ssize_t every_candidate(self, Query* q, Spans* spans, const float* p32,
                                    Py_ssize_t window, uint8_t* bits,
                                    float* scores) except -1:
        """:meth:`decide` for up to :data:`MAX_WORDS` words: every candidate ranked."""
        cdef Py_ssize_t n = q.n, gaps = n - 1, g, c, total = 1 << (n - 1), kept, r
        cdef double one_bit[MAX_GAPS]
        cdef double zero_bit[MAX_GAPS]
        cdef double terms[MAX_GAPS]
        cdef double rest[HALF_CANDIDATES]
        cdef double log_p[MAX_CANDIDATES]
        cdef double pg
        cdef double best[4]
        cdef float key
        cdef Ranked* chosen
        cdef uint64_t* masks
        for g in range(gaps):
            pg = min(max(<double>p32[g], 1e-6), 1 - 1e-6)
            one_bit[g] = log(pg)
            zero_bit[g] = log1p(-pg)
        # the best of all candidates under each measure, without enumerating them: log p
        # takes the better side of every gap; the sums over segments are dynamic programs
        # adding left to right, as the candidates' own sums do (so the best candidate's
        # difference to the best is exactly 0, as in the Python path)
        for g in range(gaps):
            terms[g] = max(one_bit[g], zero_bit[g])
        best[0] = terms[0] + pairwise(&terms[1], gaps - 1)
        best[1] = best_segment_sum(n, spans.counted_log, True)
        best[2] = best_segment_sum(n, spans.filled, False)
        best[3] = best_segment_sum(n, spans.naive, False)
        best[3] = max(0.0, log(best[3])) if best[3] > 0 else 0.0
        chosen = <Ranked*>malloc(window * (sizeof(Ranked) + sizeof(uint64_t)))
        if chosen == NULL:
            raise MemoryError()
        masks = <uint64_t*>(chosen + window)
        try:
            # the window most probable candidates the title rule allows, ordered as a stable
            # sort of all of them by their float32 log-probability (ties: the lower index)
            every_log_p(gaps, one_bit, zero_bit, rest, log_p)
            kept = 0
            for c in range(total):
                key = -<float>log_p[c]
                if kept == window and key >= chosen[kept - 1].key:
                    continue
                if not self.allowed(c, n, q.titles):
                    continue
                r = kept if kept < window else window - 1
                while r > 0 and chosen[r - 1].key > key:
                    chosen[r] = chosen[r - 1]
                    r -= 1
                chosen[r].key = key
                chosen[r].index = <int32_t>c
                kept = min(kept + 1, window)
            for r in range(kept):
                masks[r] = <uint64_t>chosen[r].index
            return self.score(q, spans, masks, kept, one_bit, zero_bit, best, bits, scores)
        finally:
            free(chosen)

    cdef Py_ssize_t score(self, Query* q, Spans* spans, const uint64_t* masks,
                          Py_ssize_t kept, const double* one_bit, const double* zero_bit,
                          const double* best, uint8_t* bits, float* scores) except -1:
        """The candidates' features (``best``: the best log p, sum of log counts, sum of
        phrase rates and naive log score they are compared with) and joint scores."""
        cdef Py_ssize_t n = q.n, gaps = n - 1, g, r
        cdef Py_ssize_t width = CANDIDATE_COLUMNS + (q.kind >= 0)
        cdef double measures[4]
        cdef float* row
        cdef float* rows = <float*>malloc(kept * (width + 1) * sizeof(float) + 1)
        cdef float* extra
        if rows == NULL:
            raise MemoryError()
        extra = rows + kept * width
        try:
            for r in range(kept):
                for g in range(gaps):
                    bits[r * gaps + g] = (masks[r] >> g) & 1
                measures[0] = self.log_p(masks[r], gaps, one_bit, zero_bit)
                self.span_sums(masks[r], n, spans, &measures[1])
                row = rows + r * width
                self.candidate_row(masks[r], n, spans, q.attrs, measures, best, one_bit,
                                   zero_bit, row)
                if width > CANDIDATE_COLUMNS:
                    row[CANDIDATE_COLUMNS] = q.kind
            tree_outputs(&self.joint_trees, rows, kept, width, scores)
            if self.has_ranker:
                tree_outputs(&self.ranker_trees, rows, kept, width, extra)
                for r in range(kept):
                    scores[r] = scores[r] + extra[r]
        finally:
            free(rows)
        return kept

    cdef double log_p(self, uint64_t c, Py_ssize_t gaps, const double* one_bit,
                      const double* zero_bit) noexcept:
        """Candidate ``c``'s log-probability, summed as numpy sums it."""
        cdef double terms[MAX_LONG_WORDS]
        cdef Py_ssize_t g
        for g in range(gaps):
            terms[g] = one_bit[g] if (c >> g) & 1 else zero_bit[g]
        return terms[0] + pairwise(&terms[1], gaps - 1)

    cdef Py_ssize_t likely_candidates(self, Query* q, Spans* spans, const float* p32,
                                      Py_ssize_t window, uint8_t* bits,
                                      float* scores) except -1:
        """:meth:`decide` for a longer query, as ``BreakModel._joint_scores`` decides it:
        the k-best of the gap model (the title rule's ``_SEARCHED`` beyond), then the
        candidates compared with the best of them and of three dynamic programs."""
        cdef Py_ssize_t n = q.n, gaps = n - 1, g, r, kept = 0, found
        cdef Py_ssize_t searched = window + SEARCHED
        cdef uint64_t split = (<uint64_t>1 << gaps) - 1 if gaps < 64 else ~(<uint64_t>0)
        cdef uint64_t* masks = <uint64_t*>malloc((searched + window + 4) * sizeof(uint64_t))
        cdef uint64_t* ranked
        cdef double best[4]
        cdef double measures[4]
        cdef bint has_split = False
        if masks == NULL:
            raise MemoryError()
        ranked = masks + window + 4
        # the gap model's log-probabilities as numpy computes them (the k-best's order is
        # decided on them, to the last bit)
        p = np.empty(gaps, dtype=np.float32)
        cdef float[::1] pv = p
        for g in range(gaps):
            pv[g] = p32[g]
        p = np.clip(p.astype(np.float64), 1e-6, 1 - 1e-6)
        cdef const double[::1] one_bit = np.log(p)
        cdef const double[::1] zero_bit = np.log1p(-p)
        try:
            found = kbest_gaps(&one_bit[0], &zero_bit[0], gaps, searched, ranked)
            for r in range(found):
                if kept == window:
                    break
                if self.allowed(ranked[r], n, q.titles):
                    masks[kept] = ranked[r]
                    has_split = has_split or ranked[r] == split
                    kept += 1
            if self.title_only_from and kept < window and not has_split:
                masks[kept] = split  # splitting every word: always allowed
                kept += 1
            # the best of these and of the dynamic programs, under each measure
            masks[kept] = best_breaks(n, spans.counted_log, MAX_SPAN, False)
            reach = max(self.longest_phrase, 2)
            masks[kept + 1] = best_breaks(n, spans.filled, reach, True)
            masks[kept + 2] = best_breaks(n, spans.naive, MAX_SPAN, False)
            for r in range(kept + 3):
                measures[0] = self.log_p(masks[r], gaps, &one_bit[0], &zero_bit[0])
                self.span_sums(masks[r], n, spans, &measures[1])
                for g in range(4):
                    best[g] = measures[g] if r == 0 else max(best[g], measures[g])
            return self.score(q, spans, masks, kept, &one_bit[0], &zero_bit[0], best, bits,
                              scores)
        finally:
            free(masks)

    cdef bint allowed(self, uint64_t c, Py_ssize_t n, const uint8_t* titles) noexcept:
        """Whether candidate ``c`` keeps the title rule: no segment of ``title_only_from``
        words or more that is not a title."""
        cdef Py_ssize_t limit = self.title_only_from, start = 0, g
        if not limit or n < limit:
            return True
        for g in range(n):
            if g == n - 1 or (c >> g) & 1:
                if g + 1 - start >= limit and not titles[start * (n + 1) + g + 1]:
                    return False
                start = g + 1
        return True

    cdef void span_sums(self, uint64_t c, Py_ssize_t n, Spans* spans,
                        double* out) noexcept:
        """Candidate ``c``'s sum of log counts, of phrase rates and its naive log score."""
        cdef Py_ssize_t start = 0, g, cell
        cdef double sum_log = 0.0, phrase = 0.0, naive = 0.0
        for g in range(n):
            if g == n - 1 or (c >> g) & 1:
                if g + 1 - start >= 2:
                    cell = start * (n + 1) + g + 1
                    if g + 1 - start <= MAX_SPAN:
                        sum_log = sum_log + spans.log_count[cell]
                    phrase = phrase + spans.filled[cell]
                    naive = naive + spans.naive[cell]
                start = g + 1
        out[0] = sum_log
        out[1] = phrase
        out[2] = log(naive) if naive > 0 else 0.0

    cdef void candidate_row(self, uint64_t c, Py_ssize_t n, Spans* spans,
                            const double* attrs, const double* measures, const double* best,
                            const double* one_bit, const double* zero_bit,
                            float* row) noexcept:
        """The :data:`~qseg.segmenters.learned.joint.CANDIDATE_FEATURES` of candidate ``c``."""
        cdef Py_ssize_t start = 0, g, cell, length, segments = 0, multi = 0, longest = 0
        cdef Py_ssize_t counted = 0, uncounted = 0, title_segments = 0, title_words = 0
        cdef Py_ssize_t fn_first = 0, fn_last = 0, seen = 0
        cdef double min_log_p = 0.0, v, min_count = 0.0, max_count = 0.0, min_rate = 0.0
        cdef double cohesion_sum = 0.0, min_cohesion = 0.0
        cdef bint any_multi = False
        for g in range(n - 1):
            v = one_bit[g] if (c >> g) & 1 else zero_bit[g]
            if g == 0 or v < min_log_p:
                min_log_p = v
        for g in range(n):
            if g == n - 1 or (c >> g) & 1:
                length = g + 1 - start
                segments += 1
                longest = max(longest, length)
                if length >= 2:
                    cell = start * (n + 1) + g + 1
                    multi += 1
                    if length <= MAX_SPAN:
                        v = spans.log_count[cell]
                        if counted == 0 or v < min_count:
                            min_count = v
                        if counted == 0 or v > max_count:
                            max_count = v
                        if counted == 0 or spans.cohesion[cell] < min_cohesion:
                            min_cohesion = spans.cohesion[cell]
                        counted += 1
                        uncounted += v == 0
                    if spans.title[cell]:
                        title_segments += 1
                        title_words += length
                    fn_first += attrs[start * ATTRS + 2] != 0
                    fn_last += attrs[g * ATTRS + 2] != 0
                    if not any_multi or spans.filled[cell] < min_rate:
                        min_rate = spans.filled[cell]
                    any_multi = True
                    seen += spans.seen[cell]
                    cohesion_sum = cohesion_sum + spans.cohesion[cell]
                start = g + 1
        row[0] = <float>measures[0]
        row[1] = <float>min_log_p
        row[2] = <float>n
        row[3] = <float>segments
        row[4] = <float>multi
        row[5] = <float>longest
        row[6] = <float>measures[1]
        row[7] = <float>min_count if counted else NAN
        row[8] = <float>max_count if counted else NAN
        row[9] = <float>uncounted
        row[10] = <float>title_segments
        row[11] = <float>title_words
        row[12] = <float>fn_first
        row[13] = <float>fn_last
        row[14] = <float>min_rate if any_multi else NAN
        row[15] = <float>measures[2]
        row[16] = <float>seen
        row[17] = <float>(measures[0] - best[0])
        row[18] = <float>(measures[1] - best[1])
        row[19] = <float>(measures[2] - best[2])
        row[20] = <float>measures[3]
        row[21] = <float>(measures[3] - best[3])
        row[22] = <float>cohesion_sum
        row[23] = <float>min_cohesion if counted else NAN
        for g in range(TAG_COLUMNS):
            row[CANDIDATE_COLUMNS - TAG_COLUMNS + g] = NAN

    # -- entry points ------------------------------------------------------------------

    def breaks(self, tuple words):
        """The chosen break bits of a query of 2 to :data:`MAX_LONG_WORDS` normalized
        words."""
        cdef Words w
        cdef Py_ssize_t n = len(words), kept, best = 0, i
        cdef Py_ssize_t window = self.max_candidates
        cdef float stack_scores[64]
        cdef float* scores = stack_scores
        if not 2 <= n <= MAX_LONG_WORDS:
            raise ValueError(f"the compiled path takes 2 to {MAX_LONG_WORDS} words, not {n}")
        window = window_for(window, n)
        cdef uint8_t* bits = <uint8_t*>malloc(window * (n - 1) + window * sizeof(float))
        if bits == NULL:
            raise MemoryError()
        if window > 64:
            scores = <float*>(bits + window * (n - 1))
        try:
            words_open(&w, words)
            try:
                kept = self.decide(words, &w, window, bits, scores)
            finally:
                words_close(&w)
            for i in range(1, kept):
                if scores[i] > scores[best]:
                    best = i
            return bits_tuple(bits + best * (n - 1), n - 1)
        finally:
            free(bits)

    def breaks_with(self, JointKernel partner not None, tuple words):
        """The break bits this model and ``partner`` choose together (``averaged_best`` of
        each one's ``max_candidates`` candidates), of a query of 2 to
        :data:`MAX_LONG_WORDS` normalized words: what ``BreakModel`` with a partner
        decides on the Python path."""
        cdef Words w
        cdef Py_ssize_t n = len(words), ka, kb, best
        if not 2 <= n <= MAX_LONG_WORDS:
            raise ValueError(f"the compiled path takes 2 to {MAX_LONG_WORDS} words, not {n}")
        cdef Py_ssize_t wa = window_for(self.max_candidates, n)
        cdef Py_ssize_t wb = window_for(partner.max_candidates, n)
        # the probabilities of both, their scores, their bits
        cdef double* p = <double*>malloc((wa + wb) * (sizeof(double) + sizeof(float))
                                         + (wa + wb) * (n - 1))
        if p == NULL:
            raise MemoryError()
        cdef float* scores_a = <float*>(p + wa + wb)
        cdef float* scores_b = scores_a + wa
        cdef uint8_t* bits_a = <uint8_t*>(scores_b + wb)
        cdef uint8_t* bits_b = bits_a + wa * (n - 1)
        cdef uint8_t* chosen
        cdef Query q
        q.logs = NULL
        try:
            words_open(&w, words)
            try:
                # the query's span tables and word inputs are opened once where the two
                # read the same resources (as models adapted from one base do)
                self.gaps.open_query(words, &w, &q)
                ka = self.decide_query(&q, &w, wa, bits_a, scores_a)
                if partner.gaps.shares_query(self.gaps):
                    partner.gaps.reopen_query(words, &w, &q)
                    kb = partner.decide_query(&q, &w, wb, bits_b, scores_b)
                else:
                    kb = partner.decide(words, &w, wb, bits_b, scores_b)
            finally:
                words_close(&w)
                free(q.logs)
            best = averaged_best(n - 1, bits_a, scores_a, ka, bits_b, scores_b, kb, p)
            chosen = bits_a + best * (n - 1) if best < ka else bits_b + (best - ka) * (n - 1)
            return bits_tuple(chosen, n - 1)
        finally:
            free(p)

    def candidates(self, tuple words, Py_ssize_t window):
        """The ``window`` candidates the model ranks (break bits, most probable first) and
        their joint scores, as ``BreakModel._joint_scores`` gives them."""
        cdef Words w
        cdef Py_ssize_t n = len(words), kept
        if not 2 <= n <= MAX_LONG_WORDS:
            raise ValueError(f"the compiled path takes 2 to {MAX_LONG_WORDS} words, not {n}")
        window = window_for(max(1, window), n)
        bits = np.zeros((window, n - 1), dtype=np.int8)
        scores = np.zeros(window, dtype=np.float32)
        cdef int8_t[:, ::1] b = bits
        cdef float[::1] s = scores
        words_open(&w, words)
        try:
            kept = self.decide(words, &w, window, <uint8_t*>&b[0, 0], &s[0])
        finally:
            words_close(&w)
        return bits[:kept], scores[:kept]


cdef tuple bits_tuple(const uint8_t* bits, Py_ssize_t gaps):
    """Break bits as the tuple of ints a ``Segmentation`` holds (the two shared ints, no
    object made per gap)."""
    cdef object bit
    cdef Py_ssize_t i
    out = PyTuple_New(gaps)
    for i in range(gaps):
        bit = ONE if bits[i] else ZERO
        Py_INCREF(bit)
        PyTuple_SET_ITEM(out, i, bit)
    return out


cdef Py_ssize_t window_for(Py_ssize_t window, Py_ssize_t n) except -1:
    """The candidates a query of n words is decided among: no more than it has (2^(n - 1):
    the Python path finds no more either), and at most 2^51, so that the sizes of the buffers
    they take (a few hundred bytes each) cannot overflow; more is a ``MemoryError``, as the
    Python path runs out of memory on them."""
    if n - 1 < 62:
        window = min(window, (<Py_ssize_t>1) << (n - 1))
    if window > (<Py_ssize_t>1) << 51:
        raise MemoryError()
    return window


cdef inline double integer_power(Py_ssize_t length) noexcept nogil:
    """length ** length as a float (lengths of 2 to 5: exact)."""
    cdef double out = 1.0
    cdef Py_ssize_t i
    for i in range(length):
        out *= length
    return out
