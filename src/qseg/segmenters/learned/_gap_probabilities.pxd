from libc.stdint cimport int64_t, uint8_t, uint64_t

from qseg.resources._store cimport StoreView
from qseg.segmenters._query_words cimport Words
from qseg.segmenters.learned._domain_kernel cimport DomainKernel
from qseg.segmenters.learned._key_table cimport KeyTable
from qseg.segmenters.learned._trees cimport Trees

cdef enum:
    WORD_CACHE = 4096  # entries of a kernel's word cache (direct-mapped)
    CACHED_BYTES = 22  # the longest word (UTF-8 bytes) the cache holds


cdef struct Query:
    # what every gap and candidate of one query of n words reads (one block of memory;
    # tables: cell a * (n + 1) + b for the span [a, b))
    Py_ssize_t n
    double* logs  # log(1 + count) of every span (NaN where the counts have none)
    uint8_t* titles
    double* names_logs  # the same from the name statistics
    double* attrs  # ATTRS per word
    double* begins  # per word: how often it begins a name, ends one
    double* ends
    int64_t* vector_rows  # per word: its row of the word vectors (-1: none)
    int64_t* left_rows  # per word: its entry in the lexicon's left-word table (-1: none)
    int64_t* right_rows  # and in its right-word table
    float kind  # the query's kind (-1: the model has no kind input)


cdef struct WordEntry:
    # what a query reads of one word in the stores and tables, kept for the next query that
    # has the word: the same lookups' results, so the same features to the bit
    uint8_t length  # the word's bytes plus one (0: an empty entry)
    uint8_t word[CACHED_BYTES]
    double count  # in the counts' words
    double names_count  # in the name statistics
    double begins  # names it begins, names it ends
    double ends
    int64_t vector_row
    int64_t left_row
    int64_t right_row


cdef class GapProbabilities:
    cdef StoreView counts, words, titles, names
    cdef Py_ssize_t title_words
    cdef Py_ssize_t counted  # the longest span looked up in ``counts`` (longer: none there)
    cdef double log_n
    cdef double names_log_n
    cdef frozenset function_words
    cdef dict tag_classes
    cdef Py_ssize_t classes, gap_width
    cdef const int64_t[::1] window
    cdef const int64_t[::1] name_counts_at, name_rates_at
    cdef bint features, name_statistics, pair_counts
    cdef KeyTable vocabulary
    cdef const float[:, ::1] vectors
    cdef Py_ssize_t dimensions
    cdef DomainKernel domain
    cdef float kind  # the kind's value for a fixed style; -1: the domain model's
    cdef KeyTable left_words, right_words, word_pairs  # the lexicon's three tables
    cdef const double[:, ::1] left_stats, right_stats, pair_stats  # break sums, counts
    cdef double prior
    cdef bint has_lexicon
    cdef Trees trees
    cdef Py_ssize_t n_features
    cdef list keep
    cdef WordEntry* cache  # WORD_CACHE entries (the kernel runs holding the GIL: one writer)

    cdef const WordEntry* word_entry(self, Words* w, Py_ssize_t a, WordEntry* spare) noexcept
    cdef Py_ssize_t row_width(self)
    cdef int open_query(self, tuple words, Words* w, Query* q) except -1
    cdef bint shares_query(self, GapProbabilities other) noexcept
    cdef int reopen_query(self, tuple words, Words* w, Query* q) except -1
    cdef void own_rows(self, Query* q, Py_ssize_t a, const WordEntry* e) noexcept
    cdef int own_kind(self, tuple words, Words* w, Query* q) except -1
    cdef int gap_probabilities(self, Query* q, Words* w, float* p) except -1
    cdef void gap_row(self, Query* q, Words* w, Py_ssize_t s, Py_ssize_t m,
                      const double* logs, const uint8_t* titles, const double* names_logs,
                      Py_ssize_t g, float* x) noexcept
    cdef void lexicon_columns(self, int64_t e, const double[:, ::1] stats,
                              float* out) noexcept
    cdef uint64_t pair_count(self, Words* w, Py_ssize_t a, Py_ssize_t b) noexcept
    cdef void vector(self, int64_t e, float* out) noexcept
