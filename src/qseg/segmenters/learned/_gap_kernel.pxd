from libc.stdint cimport int64_t, uint8_t

from qseg.resources._store cimport StoreView
from qseg.segmenters._query_words cimport Words

cdef enum:
    ATTRS = 6  # per word: the, free, function, digit, chars, tag class


cdef double word_count(StoreView words, Words* w, Py_ssize_t a) noexcept
cdef void query_span_table(StoreView counts, StoreView words, StoreView titles, Words* w,
                           Py_ssize_t max_span, Py_ssize_t title_words, double* counts_out,
                           double* titles_out, const double* singles,
                           Py_ssize_t counted) noexcept
cdef double name_count(StoreView names, Words* w, Py_ssize_t start, Py_ssize_t end,
                       bint opening, bint closing) noexcept
cdef int word_attrs(tuple words, frozenset function_words, object query_tags,
                    dict tag_classes, Py_ssize_t other, double* attrs) except -1
cdef void gap_feature_row(float* x, Py_ssize_t g, Py_ssize_t n, const double* attrs,
                          const double* logs, const uint8_t* titles,
                          const int64_t* window, Py_ssize_t nw, double log_n,
                          bint has_titles, Py_ssize_t classes) noexcept nogil
