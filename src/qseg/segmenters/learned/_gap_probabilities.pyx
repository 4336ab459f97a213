# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The gap model of a joint model, compiled: what one query reads (its span tables and the
name statistics', its words' attributes, name counts, vector rows and lexicon entries, its
kind: a :c:type:`Query`) and every gap's break probability from the gap model's trees.

The arithmetic repeats ``gap_features.py``, ``name_features.py``, ``lexicon.py`` and
``break_model.py`` operation by operation, so that the rows are the Python path's to the bit.
What a query reads of each of its words (its counts, name counts, vector and lexicon rows:
seven lookups, most of them cache misses in the stores) is kept in a small direct-mapped cache
for the next query with the word: search queries repeat their words.
"""

from libc.math cimport exp, log1p, NAN
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy

from qseg.resources._store cimport StoreView, fmix64, fnv_feed, fnv_start
from qseg.segmenters._query_words cimport Words
from qseg.segmenters.learned._gap_kernel cimport (
    ATTRS,
    gap_feature_row,
    name_count,
    query_span_table,
    word_attrs,
    word_count,
)
from qseg.segmenters.learned._sizes cimport (
    LEXICON_COLUMNS,
    MAX_GAP_WIDTH,
    MAX_SPAN,
    MAX_WORDS,
    NAME_COUNTS,
    NAME_RATES,
    WINDOW_CELLS,
    WINDOW_WORDS,
)
from qseg.segmenters.learned._trees cimport tree_outputs, trees_from

cdef uint8_t SPACE = 32


cdef class GapProbabilities:
    """Every gap's break probability of a query, as a joint
    :class:`~qseg.segmenters.learned.break_model.BreakModel`'s gap model gives it; made by
    :func:`qseg.segmenters.learned.compiled.compile_model` for the joint kernel."""

    def __init__(self, *, counts, words, titles, names, Py_ssize_t title_words,
                 Py_ssize_t counted, double log_n, double names_log_n,
                 frozenset function_words, dict tag_classes, Py_ssize_t classes,
                 Py_ssize_t gap_width, window, name_counts_at, name_rates_at, bint features,
                 bint name_statistics, bint pair_counts, vocabulary, vectors, domain,
                 double kind, lexicon, lexicon_stats, double prior, trees,
                 Py_ssize_t n_features):
        self.keep = []
        self.cache = <WordEntry*>calloc(WORD_CACHE, sizeof(WordEntry))
        if self.cache == NULL:
            raise MemoryError()
        self.counts, self.words, self.titles, self.names = counts, words, titles, names
        self.title_words = title_words
        self.counted = counted
        self.log_n, self.names_log_n = log_n, names_log_n
        self.function_words, self.tag_classes = function_words, tag_classes
        self.classes, self.gap_width = classes, gap_width
        if gap_width > MAX_GAP_WIDTH:
            raise ValueError(f"{gap_width} gap features: the kernel has room for {MAX_GAP_WIDTH}")
        self.window = window
        self.name_counts_at, self.name_rates_at = name_counts_at, name_rates_at
        self.features, self.name_statistics = features, name_statistics
        self.pair_counts = pair_counts
        self.vocabulary = vocabulary
        self.dimensions = 0
        if vectors is not None:
            self.vectors = vectors
            self.dimensions = vectors.shape[1]
        self.domain = domain
        self.kind = kind
        self.has_lexicon = lexicon is not None
        if self.has_lexicon:
            self.left_words, self.right_words, self.word_pairs = lexicon
            self.left_stats, self.right_stats, self.pair_stats = lexicon_stats
        self.prior = prior
        trees_from(&self.trees, trees, self.keep)
        self.n_features = n_features
        if self.trees.width != n_features:
            raise ValueError("the trees take other features than the kernel gives them")
        if self.row_width() != n_features:
            raise ValueError(f"the compiled inputs give {self.row_width()} features, the "
                             f"model was fitted on {n_features}")

    def __dealloc__(self):
        free(self.cache)

    cdef const WordEntry* word_entry(self, Words* w, Py_ssize_t a, WordEntry* spare) noexcept:
        """What the query reads of word ``a``: from the word cache, or looked up (and kept
        there, or in ``spare`` for a word longer than the cache holds). The stores and
        tables never change, so a kept entry stays right."""
        cdef Py_ssize_t length = w.lens[a]
        cdef WordEntry* e = spare
        if length <= CACHED_BYTES:
            e = &self.cache[fmix64(fnv_feed(fnv_start(0), w.ptrs[a], length))
                            & (WORD_CACHE - 1)]
            if e.length == length + 1 and memcmp(e.word, w.ptrs[a], length) == 0:
                return e
        e.count = word_count(self.words, w, a)
        e.names_count = e.begins = e.ends = 0.0
        if self.name_statistics:
            e.names_count = word_count(self.names, w, a)
            e.begins = name_count(self.names, w, a, a + 1, True, False)
            e.ends = name_count(self.names, w, a, a + 1, False, True)
        e.vector_row = self.vocabulary.find_words(w, a, a + 1) if self.dimensions else -1
        e.left_row = e.right_row = -1
        if self.has_lexicon:
            e.left_row = self.left_words.find_words(w, a, a + 1)
            e.right_row = self.right_words.find_words(w, a, a + 1)
        if e != spare:
            memcpy(e.word, w.ptrs[a], length)
            e.length = <uint8_t>(length + 1)
        return e

    cdef Py_ssize_t row_width(self):
        return (self.gap_width * self.features + (NAME_COUNTS + 6) * self.name_statistics
                + 2 * self.pair_counts + 2 * self.dimensions + (self.domain is not None
                or self.kind >= 0) + LEXICON_COLUMNS * self.has_lexicon)

    # -- one query's tables and word inputs --------------------------------------------

    cdef int open_query(self, tuple words, Words* w, Query* q) except -1:
        """Fill ``q`` for the words ``w``: its span tables (and the name statistics'), its
        words' attributes, name counts, vector rows and lexicon entries, and its kind. Its
        one block of memory is ``q.logs`` from the start, freed by the caller
        (``JointKernel.decide``, or ``breaks_with`` for a query two models share) whether
        this returns or raises."""
        cdef Py_ssize_t n = w.n, cells = n * (n + 1), a
        cdef char* block = <char*>malloc(cells * (3 * sizeof(double) + 1)
                                         + n * (ATTRS + 4) * sizeof(double)
                                         + 3 * n * sizeof(int64_t))
        cdef const WordEntry* e
        cdef WordEntry spare
        if block == NULL:
            raise MemoryError()
        q.n = n
        q.logs = <double*>block
        q.names_logs = q.logs + cells
        q.attrs = q.names_logs + cells
        q.begins = q.attrs + n * ATTRS
        q.ends = q.begins + n
        cdef double* counts = q.ends + n  # per word, in the counts' words, in the names
        cdef double* names_counts = counts + n
        cdef double* title_cells = names_counts + n
        q.vector_rows = <int64_t*>(title_cells + cells)
        q.left_rows = q.vector_rows + n
        q.right_rows = q.left_rows + n
        q.titles = <uint8_t*>(q.right_rows + n)
        for a in range(n):
            e = self.word_entry(w, a, &spare)
            counts[a], names_counts[a] = e.count, e.names_count
            q.begins[a], q.ends[a] = e.begins, e.ends  # how often it begins and ends a name
            self.own_rows(q, a, e)
        for a in range(cells):
            q.logs[a] = NAN
            q.names_logs[a] = NAN  # (read, unused, in a long query's windows without names)
            title_cells[a] = 0.0
        query_span_table(self.counts, self.words, self.titles, w, MAX_SPAN, self.title_words,
                         q.logs, title_cells, counts, self.counted)
        for a in range(cells):
            q.logs[a] = log1p(q.logs[a])
            q.titles[a] = title_cells[a] != 0.0
        word_attrs(words, self.function_words, None, self.tag_classes, self.classes - 1,
                   q.attrs)
        if self.name_statistics:
            query_span_table(self.names, self.names, None, w, MAX_SPAN, 0, q.names_logs,
                             title_cells, names_counts, MAX_SPAN)
            for a in range(cells):
                q.names_logs[a] = log1p(q.names_logs[a])
        return self.own_kind(words, w, q)

    cdef bint shares_query(self, GapProbabilities other) noexcept:
        """Whether a query ``other`` opened holds this model's span tables, word attributes
        and name counts too: the same stores and settings (two models adapted from one base
        read the base's resources), so that :meth:`reopen_query` only redoes what is this
        model's own."""
        return (self.counts is other.counts and self.words is other.words
                and self.titles is other.titles and self.names is other.names
                and self.title_words == other.title_words and self.counted == other.counted
                and self.name_statistics == other.name_statistics
                and self.function_words is other.function_words
                and self.tag_classes is other.tag_classes and self.classes == other.classes)

    cdef int reopen_query(self, tuple words, Words* w, Query* q) except -1:
        """Make ``q``, opened by a model this one :meth:`shares_query` with, this model's:
        its words' vector rows and lexicon entries and its kind."""
        cdef Py_ssize_t a
        cdef WordEntry spare
        for a in range(q.n):
            self.own_rows(q, a, self.word_entry(w, a, &spare))
        return self.own_kind(words, w, q)

    cdef void own_rows(self, Query* q, Py_ssize_t a, const WordEntry* e) noexcept:
        """Word ``a``'s rows in this model's word vectors and lexicon (``e``: its entry)."""
        q.vector_rows[a] = e.vector_row
        q.left_rows[a], q.right_rows[a] = e.left_row, e.right_row

    cdef int own_kind(self, tuple words, Words* w, Query* q) except -1:
        """The query's kind as this model's input takes it."""
        q.kind = self.kind
        if q.kind < 0 and self.domain is not None:
            q.kind = self.domain.probability(words, w)
        return 0

    # -- gap probabilities -------------------------------------------------------------

    cdef int gap_probabilities(self, Query* q, Words* w, float* p) except -1:
        """Every gap's break probability into ``p``. A query of up to :data:`MAX_WORDS`
        words is its own window; in a longer one each gap is judged in the
        :data:`WINDOW_WORDS` words centred on it (``break_model.gap_windows``), as a query of
        that many words: its span tables are the window's cells of the query's."""
        cdef Py_ssize_t n = q.n, g, a, b, start, m, last = -1
        cdef double logs[WINDOW_CELLS]
        cdef uint8_t titles[WINDOW_CELLS]
        cdef double names_logs[WINDOW_CELLS]
        cdef float* rows = <float*>malloc((n - 1) * self.n_features * sizeof(float))
        if rows == NULL:
            raise MemoryError()
        try:
            for a in range((n - 1) * self.n_features):
                rows[a] = NAN
            for g in range(n - 1):
                if n <= MAX_WORDS:
                    self.gap_row(q, w, 0, n, q.logs, q.titles, q.names_logs, g,
                                 rows + g * self.n_features)
                    continue
                m = WINDOW_WORDS
                start = min(max(g + 1 - m // 2, 0), n - m)
                if start != last:
                    for a in range(m):
                        for b in range(m + 1):
                            logs[a * (m + 1) + b] = q.logs[(start + a) * (n + 1) + start + b]
                            titles[a * (m + 1) + b] = q.titles[(start + a) * (n + 1) + start + b]
                            names_logs[a * (m + 1) + b] = q.names_logs[
                                (start + a) * (n + 1) + start + b]
                    last = start
                self.gap_row(q, w, start, m, logs, titles, names_logs, g - start,
                             rows + g * self.n_features)
            tree_outputs(&self.trees, rows, n - 1, self.n_features, p)
        finally:
            free(rows)
        return 0

    cdef void gap_row(self, Query* q, Words* w, Py_ssize_t s, Py_ssize_t m,
                      const double* logs, const uint8_t* titles, const double* names_logs,
                      Py_ssize_t g, float* x) noexcept:
        """The inputs of gap ``g`` of the ``m`` words from word ``s`` of the query, judged
        as a query of its own (``logs``, ``titles``, ``names_logs``: its span tables)."""
        cdef Py_ssize_t col = 0, k, a, nw = self.window.shape[0] // 2
        cdef const double* attrs = q.attrs + s * ATTRS
        cdef double occurrences[NAME_RATES]
        cdef double found[6]
        cdef float inside[MAX_GAP_WIDTH]
        if self.features:
            gap_feature_row(x, g, m, attrs, logs, titles, &self.window[0], nw, self.log_n,
                            self.titles is not None, self.classes)
            col += self.gap_width
        if self.name_statistics:
            for a in range(self.gap_width):
                inside[a] = NAN
            gap_feature_row(inside, g, m, attrs, names_logs, titles, &self.window[0], nw,
                            self.names_log_n, False, self.classes)
            for k in range(NAME_COUNTS):
                x[col + k] = inside[self.name_counts_at[k]]
            col += NAME_COUNTS
            for k in range(NAME_RATES):
                occurrences[k] = exp(<double>inside[self.name_rates_at[k]])
            # L0 ends, R0 begins, L0 begins, R0 ends, L1 L0 ends, R0 R1 begins
            found[0] = q.ends[s + g]
            found[1] = q.begins[s + g + 1]
            found[2] = q.begins[s + g]
            found[3] = q.ends[s + g + 1]
            found[4] = (name_count(self.names, w, s + g - 1, s + g + 1, False, True) if g > 0
                        else NAN)
            found[5] = (name_count(self.names, w, s + g + 1, s + g + 3, True, False)
                        if g + 2 < m else NAN)
            x[col] = <float>((found[0] + 0.5) / occurrences[0])
            x[col + 1] = <float>((found[1] + 0.5) / occurrences[1])
            x[col + 2] = <float>((found[2] + 0.5) / occurrences[0])
            x[col + 3] = <float>((found[3] + 0.5) / occurrences[1])
            x[col + 4] = <float>((found[4] + 0.5) / occurrences[2])
            x[col + 5] = <float>((found[5] + 0.5) / occurrences[3])
            col += 6
        if self.pair_counts:
            if g + 2 < m:
                x[col] = <float>log1p(<double>self.pair_count(w, s + g, s + g + 2))
            if g >= 1:
                x[col + 1] = <float>log1p(<double>self.pair_count(w, s + g - 1, s + g + 1))
            col += 2
        if self.dimensions:
            self.vector(q.vector_rows[s + g], x + col)
            self.vector(q.vector_rows[s + g + 1], x + col + self.dimensions)
            col += 2 * self.dimensions
        if q.kind >= 0:
            x[col] = q.kind
            col += 1
        if self.has_lexicon:
            self.lexicon_columns(q.left_rows[s + g], self.left_stats, x + col)
            self.lexicon_columns(q.right_rows[s + g + 1], self.right_stats, x + col + 2)
            self.lexicon_columns(self.word_pairs.find_words(w, s + g, s + g + 2),
                                 self.pair_stats, x + col + 4)

    cdef void lexicon_columns(self, int64_t e, const double[:, ::1] stats,
                              float* out) noexcept:
        """A lexicon table's smoothed break rate and count of entry ``e`` (-1: unseen)."""
        cdef double total = stats[e, 0] if e >= 0 else 0.0
        cdef double count = stats[e, 1] if e >= 0 else 0.0
        out[0] = <float>((total + 2.0 * self.prior) / (count + 2.0))
        out[1] = <float>count

    cdef uint64_t pair_count(self, Words* w, Py_ssize_t a, Py_ssize_t b) noexcept:
        """The count of the 2-gram of words ``a`` and ``b`` (0 if absent)."""
        cdef const uint8_t* parts[2]
        cdef Py_ssize_t lens[2]
        cdef uint64_t value = 0
        cdef bint ext
        parts[0], parts[1] = w.ptrs[a], w.ptrs[b]
        lens[0], lens[1] = w.lens[a], w.lens[b]
        cdef uint64_t state = fnv_feed(fnv_start(self.counts.seed), parts[0], lens[0])
        state = fnv_feed(fnv_feed(state, &SPACE, 1), parts[1], lens[1])
        if not self.counts.find(fmix64(state), parts, lens, 2, &value, &ext):
            return 0
        return value

    cdef void vector(self, int64_t e, float* out) noexcept:
        """The vector of vocabulary entry ``e`` (-1: the table's last row, zeros)."""
        cdef Py_ssize_t d
        if e < 0:
            e = self.vectors.shape[0] - 1
        for d in range(self.dimensions):
            out[d] = self.vectors[e, d]
