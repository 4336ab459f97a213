# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled inference of the joint models: from a query's normalized words to its segmentation.

One call per query does what ``break_model.py`` and ``joint.py`` do for a batch: the span
tables and every gap's inputs (gap features, name statistics, pair counts, word vectors, the
query's kind, the lexicon), the gap model's trees, every candidate's log-probability, the
``max_candidates`` most probable ones the title rule allows, their candidate features and the
joint scorers' trees. Nothing allocates a Python object per gap, candidate or tree; a batch is
the same call query after query. The Python modules stay the reference: the arithmetic here
repeats theirs operation by operation (float64 where numpy computes in float64, float32 where
it does, numpy's pairwise order where a float32 sum is summed by numpy), so that both give the
same features to the bit and so the same trees' outputs (tests/test_compiled.py checks it on
every corpus query).

Only what the compiled path needs is here; queries longer than :data:`MAX_WORDS` words and
queries with part-of-speech tags go the Python way (``BreakModel``).
"""

from libc.math cimport exp, expm1, expf, isnan, log, log1p, sqrt, INFINITY, NAN
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memcmp
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

import numpy as np

from qseg.resources._store cimport StoreView, fmix64, fnv_feed, fnv_start
from qseg.segmenters._gap_kernel cimport ATTRS, gap_feature_row, query_span_table, word_attrs
from qseg.segmenters._query_words cimport Words, words_close, words_open

cdef enum:
    MAX_WORDS = 12  # joint.MAX_JOINT_WORDS: every candidate enumerated
    MAX_GAPS = MAX_WORDS - 1
    MAX_CELLS = MAX_WORDS * (MAX_WORDS + 1)
    MAX_CANDIDATES = 1 << MAX_GAPS
    HALF_CANDIDATES = 1 << (MAX_GAPS - 1)
    CANDIDATE_COLUMNS = 29  # len(joint.CANDIDATE_FEATURES)
    TAG_COLUMNS = 5  # the last five: part-of-speech features, NaN without tags
    MAX_SPAN = 5
    NAME_COUNTS = 7
    NAME_RATES = 4
    LEXICON_COLUMNS = 6

cdef uint8_t SPACE = 32
cdef uint8_t OPEN_MARK = 40  # NAME_START "("
cdef uint8_t CLOSE_MARK = 41  # NAME_END ")"
cdef object ZERO = 0
cdef object ONE = 1


# -- numpy's summation orders ---------------------------------------------------------------

cdef float pairwise_f32(const float* x, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise sum of float32 values (blocks of 8 up to 128, halves beyond)."""
    cdef float r[8]
    cdef float res
    cdef Py_ssize_t i, j, half
    if n < 8:
        res = -0.0
        for i in range(n):
            res = res + x[i]
        return res
    if n <= 128:
        for j in range(8):
            r[j] = x[j]
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] = r[j] + x[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res = res + x[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return pairwise_f32(x, half) + pairwise_f32(x + half, n - half)


cdef double pairwise_f64(const double* x, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise sum of float64 values (as :func:`pairwise_f32`)."""
    cdef double r[8]
    cdef double res
    cdef Py_ssize_t i, j, half
    if n < 8:
        res = -0.0
        for i in range(n):
            res = res + x[i]
        return res
    if n <= 128:
        for j in range(8):
            r[j] = x[j]
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] = r[j] + x[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res = res + x[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return pairwise_f64(x, half) + pairwise_f64(x + half, n - half)


def numpy_sum_f32(const float[::1] x):
    """``np.add.reduce`` of a float32 vector as numpy orders it (the first value, then the
    pairwise sum of the rest), for the tests."""
    if x.shape[0] == 0:
        return 0.0
    return x[0] + pairwise_f32(&x[1], x.shape[0] - 1)


# -- keys -> entries ------------------------------------------------------------------------

cdef class KeyTable:
    """An open-addressing table from keys (words joined by single spaces) to their position
    in the list it was made from (a key listed twice: its last position, as a dict keeps).
    Lookups hash the words' UTF-8 bytes as the stores do, without building the string."""

    cdef int64_t[::1] slots
    cdef uint64_t[::1] hashes
    cdef int64_t[::1] offsets
    cdef bytes data
    cdef const uint8_t* bytes_ptr
    cdef uint64_t mask
    cdef readonly Py_ssize_t size

    def __init__(self, keys):
        from qseg.resources._store import hash_keys

        encoded = [key.encode("utf-8") for key in keys]
        self.size = len(encoded)
        self.data = b"".join(encoded)
        self.bytes_ptr = <const uint8_t*>self.data
        offsets = np.zeros(self.size + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(e) for e in encoded], dtype=np.int64)
        self.offsets = offsets
        self.hashes = hash_keys(list(keys), 0)
        capacity = 16
        while capacity < 2 * self.size:
            capacity *= 2
        self.slots = np.full(capacity, -1, dtype=np.int64)
        self.mask = capacity - 1
        cdef Py_ssize_t i
        cdef uint64_t j
        cdef int64_t other
        for i in range(self.size):
            j = self.hashes[i] & self.mask
            while True:
                other = self.slots[j]
                if other < 0:
                    self.slots[j] = i
                    break
                if self.hashes[other] == self.hashes[i] and encoded[other] == encoded[i]:
                    self.slots[j] = i
                    break
                j = (j + 1) & self.mask

    cdef int64_t find(self, uint64_t h, const uint8_t** parts, const Py_ssize_t* lengths,
                      Py_ssize_t nparts) noexcept nogil:
        """The position of the key made of ``parts`` whose hash is ``h``, or -1."""
        cdef uint64_t j = h & self.mask
        cdef int64_t e
        while True:
            e = self.slots[j]
            if e < 0:
                return -1
            if self.hashes[e] == h and self._same(e, parts, lengths, nparts):
                return e
            j = (j + 1) & self.mask

    cdef bint _same(self, int64_t e, const uint8_t** parts, const Py_ssize_t* lengths,
                    Py_ssize_t nparts) noexcept nogil:
        cdef const uint8_t* key = self.bytes_ptr + self.offsets[e]
        cdef int64_t remaining = self.offsets[e + 1] - self.offsets[e]
        cdef Py_ssize_t p
        for p in range(nparts):
            if p:
                if remaining < 1 or key[0] != SPACE:
                    return False
                key += 1
                remaining -= 1
            if lengths[p] > remaining or memcmp(key, parts[p], lengths[p]) != 0:
                return False
            key += lengths[p]
            remaining -= lengths[p]
        return remaining == 0

    cdef int64_t find_words(self, Words* w, Py_ssize_t start, Py_ssize_t end) noexcept nogil:
        """The position of the words ``[start, end)`` of a query, or -1."""
        return self.find(span_hash(w, start, end, 0), &w.ptrs[start], &w.lens[start],
                         end - start)

    def get(self, str key):
        """The position of ``key`` (one string), or -1."""
        cdef Py_ssize_t length
        cdef const uint8_t* data = <const uint8_t*>PyUnicode_AsUTF8AndSize(key, &length)
        return self.find(fmix64(fnv_feed(fnv_start(0), data, length)), &data, &length, 1)


cdef inline uint64_t span_hash(Words* w, Py_ssize_t start, Py_ssize_t end,
                               uint64_t seed) noexcept nogil:
    cdef uint64_t state = fnv_feed(fnv_start(seed), w.ptrs[start], w.lens[start])
    cdef Py_ssize_t i
    for i in range(start + 1, end):
        state = fnv_feed(fnv_feed(state, &SPACE, 1), w.ptrs[i], w.lens[i])
    return fmix64(state)


# -- trees ----------------------------------------------------------------------------------

cdef struct Trees:
    # every tree padded to a complete binary tree of ``depth`` levels (a leaf above the
    # last level repeats itself below a dummy split): node i has children 2i + 1 and 2i + 2,
    # so a walk is ``depth`` steps without a branch to mispredict
    const float* thresholds  # per tree, 2^depth - 1 inner nodes
    const uint32_t* features  # the split's feature, plus the row's width where a missing
    # value goes right (it reads the second half of the doubled row: _tree_walk.h)
    const float* leaves  # per tree, 2^depth
    Py_ssize_t count
    Py_ssize_t depth
    Py_ssize_t width  # the features a row has
    float base
    bint logistic


cdef extern from "_tree_walk.h":
    float qseg_trees_sum(const float* thresholds, const uint32_t* features,
                         const float* leaves, Py_ssize_t count, int depth, float total,
                         const float* row) noexcept nogil


cdef int tree_outputs(const Trees* t, const float* rows, Py_ssize_t nrows, Py_ssize_t width,
                      float* out) except -1 nogil:
    """What ``_trees.margins`` gives each row of ``width`` features (the trees' own): the base
    plus each tree's leaf, in float32, tree after tree (``_tree_walk.h``), then the logistic
    if the trees give probabilities."""
    cdef Py_ssize_t r, k
    cdef float total, v, one = 1.0
    cdef float* doubled = <float*>malloc(2 * width * sizeof(float))
    if doubled == NULL:
        with gil:
            raise MemoryError()
    for r in range(nrows):
        for k in range(width):
            v = rows[r * width + k]
            doubled[k] = -INFINITY if isnan(v) else v
            doubled[width + k] = INFINITY if isnan(v) else v
        total = qseg_trees_sum(t.thresholds, t.features, t.leaves, t.count, t.depth, t.base,
                               doubled)
        if t.logistic:
            total = one / (one + expf(-total))
        out[r] = total
    free(doubled)
    return 0


cdef int trees_from(Trees* t, object complete, list keep) except -1:
    """Point ``t`` at the arrays of a complete ensemble (``compiled.complete_trees``), kept
    alive by ``keep``."""
    cdef const float[:, ::1] thresholds = complete.thresholds
    cdef const uint32_t[:, ::1] features = complete.features
    cdef const float[:, ::1] leaves = complete.leaves
    keep.extend([thresholds, features, leaves])
    t.count = leaves.shape[0]
    t.depth = complete.depth
    if thresholds.shape[0] != t.count or features.shape[0] != t.count or (
        thresholds.shape[1] != (1 << t.depth) - 1 or features.shape[1] != thresholds.shape[1]
        or leaves.shape[1] != 1 << t.depth
    ):
        raise ValueError("complete trees: arrays of the wrong shapes")
    t.thresholds = &thresholds[0, 0] if t.count and t.depth else NULL
    t.features = &features[0, 0] if t.count and t.depth else NULL
    t.leaves = &leaves[0, 0] if t.count else NULL
    t.base = complete.base
    t.logistic = complete.logistic
    t.width = complete.width
    return 0


# -- the query's kind -----------------------------------------------------------------------

cdef class DomainKernel:
    """``DomainModel.predict`` for one query: hashed word, word-pair and character 3-gram
    counts scaled to unit length, a logistic regression over them."""

    cdef const float[::1] weights
    cdef float bias
    cdef uint64_t mask
    cdef uint64_t seed

    def __init__(self, const float[::1] weights, double bias, uint64_t seed, int bits):
        self.weights = weights
        self.bias = <float>bias
        self.mask = (1ULL << bits) - 1
        self.seed = seed
        if weights.shape[0] != <Py_ssize_t>(1ULL << bits):
            raise ValueError("the domain model's weights do not match its hashed features")

    cdef float probability(self, tuple words, Words* w) except? -1:
        cdef Py_ssize_t n = w.n, total = 0, i, j, k, chars, count, unique
        cdef uint64_t state
        cdef uint64_t prefix_w = fnv_feed(fnv_start(self.seed), <const uint8_t*>"w ", 2)
        cdef uint64_t prefix_b = fnv_feed(fnv_start(self.seed), <const uint8_t*>"b ", 2)
        cdef uint64_t prefix_c = fnv_feed(fnv_start(self.seed), <const uint8_t*>"c ", 2)
        cdef const uint8_t* p
        cdef Py_ssize_t* starts
        cdef uint64_t* keys
        cdef float* products
        cdef double squares = 0.0, norm, margin
        cdef float m
        cdef uint8_t lt = 60, gt = 62
        cdef Py_ssize_t longest = 0
        for i in range(n):
            total += 2 + len(<str>words[i])  # its word, its pair, its 3-grams
            longest = max(longest, w.lens[i])
        keys = <uint64_t*>malloc((total + 1) * sizeof(uint64_t))
        products = <float*>malloc((total + 1) * sizeof(float))
        starts = <Py_ssize_t*>malloc((longest + 1) * sizeof(Py_ssize_t))
        if keys == NULL or products == NULL or starts == NULL:
            free(keys)
            free(products)
            free(starts)
            raise MemoryError()
        try:
            k = 0
            for i in range(n):
                keys[k] = fmix64(fnv_feed(prefix_w, w.ptrs[i], w.lens[i])) & self.mask
                k += 1
            for i in range(n - 1):
                state = fnv_feed(fnv_feed(fnv_feed(prefix_b, w.ptrs[i], w.lens[i]), &SPACE, 1),
                                 w.ptrs[i + 1], w.lens[i + 1])
                keys[k] = fmix64(state) & self.mask
                k += 1
            for i in range(n):
                # the code points of "<word>": their starts in the word's UTF-8 bytes
                p = w.ptrs[i]
                chars = 0
                for j in range(w.lens[i]):
                    if (p[j] & 0xC0) != 0x80:
                        starts[chars] = j
                        chars += 1
                starts[chars] = w.lens[i]
                for j in range(chars):  # 3-grams: "<" a b, then a b c, ..., then y z ">"
                    state = prefix_c
                    if j == 0:
                        state = fnv_feed(state, &lt, 1)
                        state = fnv_feed(state, p, starts[min(2, chars)])
                        if chars < 2:
                            state = fnv_feed(state, &gt, 1)
                    elif j == chars - 1:
                        state = fnv_feed(state, p + starts[j - 1], w.lens[i] - starts[j - 1])
                        state = fnv_feed(state, &gt, 1)
                    else:
                        state = fnv_feed(state, p + starts[j - 1], starts[j + 2] - starts[j - 1])
                    keys[k] = fmix64(state) & self.mask
                    k += 1
            sort_keys(keys, k)
            # unique columns with their counts, ascending; scaled to unit length
            unique = 0
            j = 0
            while j < k:
                count = 1
                while j + count < k and keys[j + count] == keys[j]:
                    count += 1
                squares = squares + <double>(count * count)
                keys[unique] = keys[j]
                products[unique] = <float>count  # the count for now
                unique += 1
                j += count
            norm = sqrt(squares)
            for j in range(unique):
                products[j] = self.weights[keys[j]] * <float>(<double>products[j] / norm)
            m = products[0] + pairwise_f32(&products[1], unique - 1) if unique else 0
            m = m + self.bias
            margin = m
            return <float>(1.0 / (1.0 + exp(-margin)))
        finally:
            free(keys)
            free(products)
            free(starts)

    def predict(self, tuple words):
        """The probability of the second kind for one query's words."""
        cdef Words w
        words_open(&w, words)
        try:
            return self.probability(words, &w)
        finally:
            words_close(&w)


cdef int compare_keys(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0], y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef inline void sort_keys(uint64_t* keys, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j
    cdef uint64_t v
    if n > 32:
        qsort(keys, n, sizeof(uint64_t), compare_keys)
        return
    for i in range(1, n):
        v = keys[i]
        j = i - 1
        while j >= 0 and keys[j] > v:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = v


# -- candidates -----------------------------------------------------------------------------

cdef struct Ranked:
    float key  # minus the candidate's float32 log-probability
    int32_t index


cdef inline double pick(const double* one_bit, const double* zero_bit, bint broken,
                        Py_ssize_t g) noexcept nogil:
    return one_bit[g] if broken else zero_bit[g]


cdef void every_log_p(Py_ssize_t gaps, const double* one_bit, const double* zero_bit,
                      double* rest, double* out) noexcept nogil:
    """Every candidate's log-probability (candidate c breaks gap g iff bit g of c is set), each
    summed as numpy sums a candidate's row: its first gap plus the pairwise sum of the others
    (sequential below 8 of them; from 8, eight accumulators combined as a tree, then the
    remainder in turn). Sums shared between candidates are computed once: about two
    additions a candidate instead of one a gap. ``rest`` holds 2^(gaps - 1) values."""
    cdef Py_ssize_t r = gaps - 1, k, m, half, c
    cdef double pairs[4][4]
    cdef double quads[2][16]
    cdef Py_ssize_t j, a, b
    if r < 8:
        rest[0] = -0.0
        for k in range(r):
            half = 1 << k
            for m in range(half):
                rest[m + half] = rest[m] + one_bit[k + 1]
                rest[m] = rest[m] + zero_bit[k + 1]
    else:
        for j in range(4):  # (y0 + y1), (y2 + y3), (y4 + y5), (y6 + y7)
            for m in range(4):
                pairs[j][m] = (pick(one_bit, zero_bit, m & 1, 2 * j + 1)
                               + pick(one_bit, zero_bit, m & 2, 2 * j + 2))
        for j in range(2):
            for m in range(16):
                quads[j][m] = pairs[2 * j][m & 3] + pairs[2 * j + 1][m >> 2]
        for m in range(256):
            rest[m] = quads[0][m & 15] + quads[1][m >> 4]
        for k in range(8, r):
            half = 1 << k
            for m in range(half):
                rest[m + half] = rest[m] + one_bit[k + 1]
                rest[m] = rest[m] + zero_bit[k + 1]
    for c in range(1 << gaps):
        out[c] = (one_bit[0] if c & 1 else zero_bit[0]) + rest[c >> 1]


cdef double best_segment_sum(Py_ssize_t n, const double* weights, bint counted) noexcept nogil:
    """The highest sum over the multiword segments of a segmentation of n words of their
    ``weights`` (cells ``a * (n + 1) + b``; ``counted``: segments of up to MAX_SPAN words
    only), each segmentation's sum added left to right."""
    cdef double best[MAX_WORDS + 1]
    cdef double v
    cdef Py_ssize_t start, end
    best[0] = 0.0
    for end in range(1, n + 1):
        best[end] = best[end - 1] + 0.0  # the last word alone
        for start in range(end - 1):
            if counted and end - start > MAX_SPAN:
                continue
            v = best[start] + weights[start * (n + 1) + end]
            if v > best[end]:
                best[end] = v
    return best[n]


cdef struct Spans:
    # per span [a, b) of 2+ words (cell a * (n + 1) + b)
    double log_count[MAX_CELLS]  # log(1 + count) up to MAX_SPAN words, else 0
    double counted_log[MAX_CELLS]  # the same (what the candidates' sum of log counts adds)
    double filled[MAX_CELLS]  # the phrase rate, 0.5 if not seen
    double naive[MAX_CELLS]
    double cohesion[MAX_CELLS]
    uint8_t seen[MAX_CELLS]
    uint8_t title[MAX_CELLS]


cdef class JointKernel:
    """A joint :class:`~qseg.segmenters.break_model.BreakModel` compiled (see the module's
    docstring); made by :func:`qseg.segmenters.compiled.compile_model`."""

    cdef StoreView counts, words, titles, names
    cdef Py_ssize_t title_words
    cdef double log_n, names_log_n
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
    cdef Trees gap_trees, joint_trees, ranker_trees
    cdef bint has_ranker
    cdef KeyTable phrases
    cdef const double[::1] rates
    cdef Py_ssize_t max_candidates, title_only_from, n_features
    cdef list keep

    def __init__(self, *, counts, words, titles, names, Py_ssize_t title_words, double log_n,
                 double names_log_n, frozenset function_words, dict tag_classes,
                 Py_ssize_t classes, Py_ssize_t gap_width, window, name_counts_at,
                 name_rates_at, bint features, bint name_statistics, bint pair_counts,
                 vocabulary, vectors, domain, double kind, lexicon, lexicon_stats,
                 double prior, gap_trees, joint_trees, ranker_trees, phrases, rates,
                 Py_ssize_t max_candidates, Py_ssize_t title_only_from,
                 Py_ssize_t n_features):
        self.keep = []
        self.counts, self.words, self.titles, self.names = counts, words, titles, names
        self.title_words = title_words
        self.log_n, self.names_log_n = log_n, names_log_n
        self.function_words, self.tag_classes = function_words, tag_classes
        self.classes, self.gap_width = classes, gap_width
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
        trees_from(&self.gap_trees, gap_trees, self.keep)
        trees_from(&self.joint_trees, joint_trees, self.keep)
        self.has_ranker = ranker_trees is not None
        if self.has_ranker:
            trees_from(&self.ranker_trees, ranker_trees, self.keep)
        self.phrases, self.rates = phrases, rates
        self.max_candidates, self.title_only_from = max_candidates, title_only_from
        self.n_features = n_features
        cdef Py_ssize_t candidate_width = CANDIDATE_COLUMNS + (domain is not None or kind >= 0)
        if (self.gap_trees.width != n_features or self.joint_trees.width != candidate_width
                or (self.has_ranker and self.ranker_trees.width != candidate_width)):
            raise ValueError("the trees take other features than the kernel gives them")
        if self.row_width() != n_features:
            raise ValueError(f"the compiled inputs give {self.row_width()} features, the "
                             f"model was fitted on {n_features}")

    cdef Py_ssize_t row_width(self):
        return (self.gap_width * self.features + (NAME_COUNTS + 6) * self.name_statistics
                + 2 * self.pair_counts + 2 * self.dimensions + (self.domain is not None
                or self.kind >= 0) + LEXICON_COLUMNS * self.has_lexicon)

    # -- gap probabilities -------------------------------------------------------------

    cdef int gap_probabilities(self, tuple words, Words* w, float kind, double* logs,
                               uint8_t* titles, double* attrs, float* p) except -1:
        """Every gap's break probability into ``p``; the query's span tables into ``logs``
        and ``titles`` and its words' attributes into ``attrs`` (the candidates use them)."""
        cdef Py_ssize_t n = w.n, g, a, j, col, cells = n * (n + 1), k
        cdef double title_cells[MAX_CELLS]
        cdef double names_logs[MAX_CELLS]
        cdef double occurrences[NAME_RATES]
        cdef float inside[256]
        cdef float* rows
        cdef float* x
        cdef int64_t e
        cdef uint64_t value
        cdef bint ext
        cdef const uint8_t* parts[3]
        cdef Py_ssize_t lens[3]
        cdef Py_ssize_t nw = self.window.shape[0] // 2
        cdef double found[6]
        for a in range(cells):
            logs[a] = NAN
            title_cells[a] = 0.0
        query_span_table(self.counts, self.words, self.titles, w, MAX_SPAN, self.title_words,
                         logs, title_cells)
        for a in range(cells):
            logs[a] = log1p(logs[a])
            titles[a] = title_cells[a] != 0.0
        word_attrs(words, self.function_words, None, self.tag_classes, self.classes - 1,
                   attrs)
        if self.name_statistics:
            for a in range(cells):
                names_logs[a] = NAN
            query_span_table(self.names, self.names, None, w, MAX_SPAN, 0, names_logs,
                             title_cells)
            for a in range(cells):
                names_logs[a] = log1p(names_logs[a])
        rows = <float*>malloc((n - 1) * self.n_features * sizeof(float))
        if rows == NULL:
            raise MemoryError()
        try:
            for a in range((n - 1) * self.n_features):
                rows[a] = NAN
            for g in range(n - 1):
                x = rows + g * self.n_features
                col = 0
                if self.features:
                    gap_feature_row(x, g, n, attrs, logs, titles, &self.window[0], nw,
                                    self.log_n, self.titles is not None, self.classes)
                    col += self.gap_width
                if self.name_statistics:
                    for a in range(self.gap_width):
                        inside[a] = NAN
                    gap_feature_row(inside, g, n, attrs, names_logs, titles, &self.window[0],
                                    nw, self.names_log_n, False, self.classes)
                    for k in range(NAME_COUNTS):
                        x[col + k] = inside[self.name_counts_at[k]]
                    col += NAME_COUNTS
                    for k in range(NAME_RATES):
                        occurrences[k] = exp(<double>inside[self.name_rates_at[k]])
                    # L0 ends, R0 begins, L0 begins, R0 ends, L1 L0 ends, R0 R1 begins
                    found[0] = self.name_count(w, g, g + 1, False, True)
                    found[1] = self.name_count(w, g + 1, g + 2, True, False)
                    found[2] = self.name_count(w, g, g + 1, True, False)
                    found[3] = self.name_count(w, g + 1, g + 2, False, True)
                    found[4] = self.name_count(w, g - 1, g + 1, False, True) if g > 0 else NAN
                    found[5] = (self.name_count(w, g + 1, g + 3, True, False) if g + 2 < n
                                else NAN)
                    x[col] = <float>((found[0] + 0.5) / occurrences[0])
                    x[col + 1] = <float>((found[1] + 0.5) / occurrences[1])
                    x[col + 2] = <float>((found[2] + 0.5) / occurrences[0])
                    x[col + 3] = <float>((found[3] + 0.5) / occurrences[1])
                    x[col + 4] = <float>((found[4] + 0.5) / occurrences[2])
                    x[col + 5] = <float>((found[5] + 0.5) / occurrences[3])
                    col += 6
                if self.pair_counts:
                    if g + 2 < n:
                        x[col] = <float>log1p(<double>self.pair_count(w, g, g + 2))
                    if g >= 1:
                        x[col + 1] = <float>log1p(<double>self.pair_count(w, g - 1, g + 1))
                    col += 2
                if self.dimensions:
                    self.vector(w, g, x + col)
                    self.vector(w, g + 1, x + col + self.dimensions)
                    col += 2 * self.dimensions
                if kind >= 0:
                    x[col] = kind
                    col += 1
                if self.has_lexicon:
                    self.lexicon_columns(self.left_words.find_words(w, g, g + 1),
                                         self.left_stats, x + col)
                    self.lexicon_columns(self.right_words.find_words(w, g + 1, g + 2),
                                         self.right_stats, x + col + 2)
                    self.lexicon_columns(self.word_pairs.find_words(w, g, g + 2),
                                         self.pair_stats, x + col + 4)
                    col += LEXICON_COLUMNS
            tree_outputs(&self.gap_trees, rows, n - 1, self.n_features, p)
        finally:
            free(rows)
        return 0

    cdef void lexicon_columns(self, int64_t e, const double[:, ::1] stats,
                              float* out) noexcept:
        """A lexicon table's smoothed break rate and count of entry ``e`` (-1: unseen)."""
        cdef double total = stats[e, 0] if e >= 0 else 0.0
        cdef double count = stats[e, 1] if e >= 0 else 0.0
        out[0] = <float>((total + 2.0 * self.prior) / (count + 2.0))
        out[1] = <float>count

    cdef double name_count(self, Words* w, Py_ssize_t start, Py_ssize_t end, bint opening,
                           bint closing) noexcept:
        """The count in the name statistics of the words ``[start, end)`` after the name's
        opening mark or before its closing one (0 if absent)."""
        cdef const uint8_t* parts[4]
        cdef Py_ssize_t lens[4]
        cdef Py_ssize_t k = 0, i
        cdef uint64_t state = fnv_start(self.names.seed), value = 0
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
        if not self.names.find(fmix64(state), parts, lens, k, &value, &ext):
            return 0.0
        return <double>value

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

    cdef void vector(self, Words* w, Py_ssize_t i, float* out) noexcept:
        """Word ``i``'s vector (the table's last row, zeros, if it has none)."""
        cdef int64_t e = self.vocabulary.find_words(w, i, i + 1)
        cdef Py_ssize_t d
        if e < 0:
            e = self.vectors.shape[0] - 1
        for d in range(self.dimensions):
            out[d] = self.vectors[e, d]

    # -- candidates --------------------------------------------------------------------

    cdef Py_ssize_t decide(self, tuple words, Words* w, Py_ssize_t window, uint8_t* bits,
                           float* scores) except -1:
        """The ``window`` candidates the joint scorers choose among (break bits, one row of
        n - 1 each, most probable first) and their scores; returns how many there are."""
        cdef Py_ssize_t n = w.n, gaps = n - 1, g, a, b, c, total = 1 << (n - 1), kept, r
        cdef double logs[MAX_CELLS]
        cdef uint8_t titles[MAX_CELLS]
        cdef double attrs[MAX_WORDS * ATTRS]
        cdef float p32[MAX_GAPS]
        cdef double one_bit[MAX_GAPS]
        cdef double zero_bit[MAX_GAPS]
        cdef double terms[MAX_GAPS]
        cdef double word_log[MAX_WORDS + 1]
        cdef Py_ssize_t width = CANDIDATE_COLUMNS + (self.domain is not None or self.kind >= 0)
        cdef float* rows
        cdef float* row
        cdef float* extra
        cdef Spans spans
        cdef double pg, best_log_p, best_sum_log, best_phrase, best_naive, v
        cdef Ranked* chosen
        cdef double rest[HALF_CANDIDATES]
        cdef double log_p[MAX_CANDIDATES]
        cdef double candidate[4]
        cdef float key
        cdef float kind = self.kind
        cdef int64_t e
        if kind < 0 and self.domain is not None:
            kind = self.domain.probability(words, w)
        self.gap_probabilities(words, w, kind, logs, titles, attrs, p32)
        for g in range(gaps):
            pg = min(max(<double>p32[g], 1e-6), 1 - 1e-6)
            one_bit[g] = log(pg)
            zero_bit[g] = log1p(-pg)
        # per span of 2+ words: what the candidates' features sum
        word_log[0] = 0.0
        for a in range(n):
            word_log[a + 1] = word_log[a] + logs[a * (n + 1) + a + 1]
        for a in range(n):
            for b in range(a + 2, n + 1):
                c = a * (n + 1) + b
                spans.log_count[c] = logs[c] if b - a <= MAX_SPAN else 0.0
                spans.counted_log[c] = spans.log_count[c]  # (0 past MAX_SPAN words)
                spans.title[c] = titles[c]
                e = self.phrases.find_words(w, a, b)
                spans.seen[c] = e >= 0
                spans.filled[c] = self.rates[e] if e >= 0 else 0.5
                if b - a <= MAX_SPAN and spans.log_count[c] > 0:
                    spans.naive[c] = expm1(spans.log_count[c]) * integer_power(b - a)
                    spans.cohesion[c] = (spans.log_count[c] - (word_log[b] - word_log[a])
                                         + (b - a - 1) * self.log_n)
                else:
                    spans.naive[c] = 0.0
                    spans.cohesion[c] = 0.0
        # the best of all candidates under each measure, without enumerating them: log p
        # takes the better side of every gap; the sums over segments are dynamic programs
        # adding left to right, as the candidates' own sums do (so the best candidate's
        # difference to the best is exactly 0, as in the Python path)
        for g in range(gaps):
            terms[g] = max(one_bit[g], zero_bit[g])
        best_log_p = terms[0] + pairwise_f64(&terms[1], gaps - 1)
        best_sum_log = best_segment_sum(n, spans.counted_log, True)
        best_phrase = best_segment_sum(n, spans.filled, False)
        best_naive = best_segment_sum(n, spans.naive, False)
        best_naive = max(0.0, log(best_naive)) if best_naive > 0 else 0.0
        chosen = <Ranked*>malloc(window * sizeof(Ranked))
        rows = <float*>malloc(window * width * sizeof(float))
        extra = <float*>malloc(window * sizeof(float))
        if chosen == NULL or rows == NULL or extra == NULL:
            free(chosen)
            free(rows)
            free(extra)
            raise MemoryError()
        try:
            # the window most probable candidates the title rule allows, ordered as a stable
            # sort of all of them by their float32 log-probability (ties: the lower index)
            every_log_p(gaps, one_bit, zero_bit, rest, log_p)
            kept = 0
            for c in range(total):
                key = -<float>log_p[c]
                if kept == window and key >= chosen[kept - 1].key:
                    continue
                if not self.allowed(c, n, titles):
                    continue
                r = kept if kept < window else window - 1
                while r > 0 and chosen[r - 1].key > key:
                    chosen[r] = chosen[r - 1]
                    r -= 1
                chosen[r].key = key
                chosen[r].index = <int32_t>c
                kept = min(kept + 1, window)
            for r in range(kept):
                c = chosen[r].index
                for g in range(gaps):
                    bits[r * gaps + g] = (c >> g) & 1
                candidate[0] = log_p[c]
                self.span_sums(c, n, &spans, &candidate[1])
                row = rows + r * width
                self.candidate_row(c, n, &spans, attrs, candidate, best_log_p, best_sum_log,
                                   best_phrase, best_naive, one_bit, zero_bit, row)
                if width > CANDIDATE_COLUMNS:
                    row[CANDIDATE_COLUMNS] = kind
            tree_outputs(&self.joint_trees, rows, kept, width, scores)
            if self.has_ranker:
                tree_outputs(&self.ranker_trees, rows, kept, width, extra)
                for r in range(kept):
                    scores[r] = scores[r] + extra[r]
            return kept
        finally:
            free(chosen)
            free(rows)
            free(extra)

    cdef bint allowed(self, Py_ssize_t c, Py_ssize_t n, const uint8_t* titles) noexcept:
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

    cdef void span_sums(self, Py_ssize_t c, Py_ssize_t n, Spans* spans,
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

    cdef void candidate_row(self, Py_ssize_t c, Py_ssize_t n, Spans* spans,
                            const double* attrs, const double* measures, double best_log_p,
                            double best_sum_log, double best_phrase, double best_naive,
                            const double* one_bit, const double* zero_bit,
                            float* row) noexcept:
        """The :data:`~qseg.segmenters.joint.CANDIDATE_FEATURES` of candidate ``c``."""
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
        row[17] = <float>(measures[0] - best_log_p)
        row[18] = <float>(measures[1] - best_sum_log)
        row[19] = <float>(measures[2] - best_phrase)
        row[20] = <float>measures[3]
        row[21] = <float>(measures[3] - best_naive)
        row[22] = <float>cohesion_sum
        row[23] = <float>min_cohesion if counted else NAN
        for g in range(TAG_COLUMNS):
            row[CANDIDATE_COLUMNS - TAG_COLUMNS + g] = NAN

    # -- entry points ------------------------------------------------------------------

    def breaks(self, tuple words):
        """The chosen break bits of a query of 2 to :data:`MAX_WORDS` normalized words."""
        cdef Words w
        cdef uint8_t bits[MAX_CANDIDATES * MAX_GAPS]
        cdef float scores[MAX_CANDIDATES]
        cdef Py_ssize_t n = len(words), kept, best = 0, i
        cdef object bit
        if not 2 <= n <= MAX_WORDS:
            raise ValueError(f"the compiled path takes 2 to {MAX_WORDS} words, not {n}")
        words_open(&w, words)
        try:
            kept = self.decide(words, &w, self.max_candidates, bits, scores)
        finally:
            words_close(&w)
        for i in range(1, kept):
            if scores[i] > scores[best]:
                best = i
        out = PyTuple_New(n - 1)
        for i in range(n - 1):
            bit = ONE if bits[best * (n - 1) + i] else ZERO
            Py_INCREF(bit)
            PyTuple_SET_ITEM(out, i, bit)
        return out

    def candidates(self, tuple words, Py_ssize_t window):
        """The ``window`` candidates the model ranks (break bits, most probable first) and
        their joint scores, as ``BreakModel._joint_scores`` gives them."""
        cdef Words w
        cdef Py_ssize_t n = len(words), kept
        if not 2 <= n <= MAX_WORDS:
            raise ValueError(f"the compiled path takes 2 to {MAX_WORDS} words, not {n}")
        window = max(1, min(window, 1 << (n - 1)))
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


cdef inline double integer_power(Py_ssize_t length) noexcept nogil:
    """length ** length as a float (lengths of 2 to 5: exact)."""
    cdef double out = 1.0
    cdef Py_ssize_t i
    for i in range(length):
        out *= length
    return out
