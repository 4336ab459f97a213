# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled inference of the joint models: from a query's normalized words to its segmentation.

One call per query does what ``break_model.py`` and ``joint.py`` do for a batch: the span
tables and every gap's inputs (gap features, name statistics, pair counts, word vectors, the
query's kind, the lexicon), the gap model's trees, every candidate's log-probability, the
``max_candidates`` most probable ones the title rule allows, their candidate features and the
joint scorers' trees. Nothing allocates a Python object per gap, candidate or tree; a batch is
the same call query after query. What a query reads of each of its words (its counts, name
counts, vector and lexicon rows: seven lookups, most of them cache misses in the stores) is kept
in a small direct-mapped cache of the kernel for the next query with the word: search queries
repeat their words. The Python modules stay the reference: the arithmetic here
repeats theirs operation by operation (float64 where numpy computes in float64, float32 where
it does, numpy's pairwise order where a float32 sum is summed by numpy), so that both give the
same features to the bit and so the same trees' outputs (tests/test_compiled.py checks it on
every corpus query).

A query of up to :data:`MAX_WORDS` words has every candidate ranked; a longer one (up to
:data:`MAX_LONG_WORDS`) is decided as the Python path decides it: each gap judged in the
:data:`WINDOW_WORDS` words around it, the candidates from the exact k-best of the gap model
(the same heap, costs and exact sums as ``decoder.kbest_gaps``) and compared with the best of
them and of three dynamic programs. Queries with part-of-speech tags go the Python way
(``BreakModel``).
"""

from libc.math cimport exp, expm1, expf, fabs, isnan, log, log1p, sqrt, INFINITY, NAN
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort
from libc.string cimport memcmp, memcpy
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

import numpy as np

from qseg.resources._store cimport StoreView, fmix64, fnv_feed, fnv_start
from qseg.segmenters.learned._gap_kernel cimport (
    ATTRS,
    gap_feature_row,
    name_count,
    query_span_table,
    word_attrs,
    word_count,
)
from qseg.segmenters._query_words cimport Words, words_close, words_open

cdef enum:
    MAX_WORDS = 12  # joint.MAX_JOINT_WORDS: every candidate enumerated
    MAX_GAPS = MAX_WORDS - 1
    MAX_CANDIDATES = 1 << MAX_GAPS
    HALF_CANDIDATES = 1 << (MAX_GAPS - 1)
    CANDIDATE_COLUMNS = 29  # len(joint.CANDIDATE_FEATURES)
    TAG_COLUMNS = 5  # the last five: part-of-speech features, NaN without tags
    MAX_SPAN = 5
    NAME_COUNTS = 7
    NAME_RATES = 4
    LEXICON_COLUMNS = 6
    MAX_GAP_WIDTH = 256  # room for len(gap_features.FEATURE_NAMES)
    MAX_LONG_WORDS = 64  # the longest query decided here (candidates as 64-bit masks)
    WINDOW_WORDS = 8  # break_model.WINDOW_WORDS: the words a long query's gap is judged in
    WINDOW_CELLS = WINDOW_WORDS * (WINDOW_WORDS + 1)
    SEARCHED = 64  # break_model._SEARCHED: candidates searched beyond the window
    WORD_CACHE = 4096  # entries of a kernel's word cache (direct-mapped)
    CACHED_BYTES = 22  # the longest word (UTF-8 bytes) the cache holds

cdef uint8_t SPACE = 32
cdef object ZERO = 0
cdef object ONE = 1


# -- numpy's summation orders ---------------------------------------------------------------

ctypedef fused real:
    float
    double


cdef real pairwise(const real* x, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise sum (blocks of 8 up to 128 values, halves beyond), in the values'
    own precision."""
    cdef real r[8]
    cdef real res
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
    return pairwise(x, half) + pairwise(x + half, n - half)


def numpy_sum(const real[::1] x):
    """A vector's sum as the kernel adds: the first value, then the pairwise sum of the rest,
    which is ``np.add.reduceat``'s order (the query-kind model's margin, to the bit)."""
    if x.shape[0] == 0:
        return 0.0
    return x[0] + pairwise(&x[1], x.shape[0] - 1)


# -- keys -> entries ------------------------------------------------------------------------

cdef uint64_t EMPTY = 0xFFFFFFFFFFFFFFFF  # a free slot (no position has 32 bits set)
cdef uint64_t LOW32 = 0xFFFFFFFF


cdef class KeyTable:
    """An open-addressing table from keys (words joined by single spaces) to their position
    in the list it was made from (a key listed twice: its last position, as a dict keeps).
    Lookups hash the words' UTF-8 bytes as the stores do, without building the string. A slot
    holds the key's position and the top 32 bits of its hash, so that a key that is not there
    (most spans a query asks about) costs one read of the slots."""

    cdef uint64_t[::1] slots
    cdef uint64_t[::1] hashes
    cdef int64_t[::1] offsets
    cdef bytes data
    cdef const uint8_t* bytes_ptr
    cdef uint64_t mask
    cdef readonly Py_ssize_t size

    def __init__(self, keys):
        # the keys' UTF-8 bytes one after the other, each followed by a line break (a key of
        # words joined by spaces holds none); hashed and placed here, without a Python object
        # per key
        self.size = len(keys)
        self.data = ("\n".join(keys) + "\n").encode("utf-8") if self.size else b""
        self.bytes_ptr = <const uint8_t*>self.data
        cdef Py_ssize_t i, k = 0, length = len(self.data)
        offsets = np.zeros(self.size + 1, dtype=np.int64)
        cdef int64_t[::1] starts = offsets
        for i in range(length):
            if self.bytes_ptr[i] == 10:
                k += 1
                if k > self.size:
                    break
                starts[k] = i + 1
        if k != self.size:
            raise ValueError("a key holds a line break")
        if <uint64_t>self.size >= LOW32:
            raise ValueError("too many keys for a table")
        self.offsets = offsets
        self.hashes = np.empty(self.size, dtype=np.uint64)
        for i in range(self.size):
            self.hashes[i] = fmix64(fnv_feed(fnv_start(0), self.bytes_ptr + starts[i],
                                             starts[i + 1] - 1 - starts[i]))
        capacity = 16
        while capacity < 2 * self.size:
            capacity *= 2
        self.slots = np.full(capacity, EMPTY, dtype=np.uint64)
        self.mask = capacity - 1
        cdef uint64_t j, slot
        cdef int64_t other
        cdef const uint8_t* key
        cdef Py_ssize_t key_length
        for i in range(self.size):
            j = self.hashes[i] & self.mask
            key = self.bytes_ptr + starts[i]
            key_length = starts[i + 1] - 1 - starts[i]
            while True:
                slot = self.slots[j]
                other = <int64_t>(slot & LOW32)
                if slot == EMPTY or (self.hashes[other] == self.hashes[i]
                                     and self._same(other, &key, &key_length, 1)):
                    self.slots[j] = (self.hashes[i] >> 32 << 32) | <uint64_t>i  # a key
                    break  # listed again: its last position
                j = (j + 1) & self.mask

    cdef int64_t find(self, uint64_t h, const uint8_t** parts, const Py_ssize_t* lengths,
                      Py_ssize_t nparts) noexcept nogil:
        """The position of the key made of ``parts`` whose hash is ``h``, or -1."""
        cdef uint64_t j = h & self.mask, slot, tag = h >> 32
        cdef int64_t e
        while True:
            slot = self.slots[j]
            if slot == EMPTY:
                return -1
            if slot >> 32 == tag:
                e = <int64_t>(slot & LOW32)
                if self.hashes[e] == h and self._same(e, parts, lengths, nparts):
                    return e
            j = (j + 1) & self.mask

    cdef bint _same(self, int64_t e, const uint8_t** parts, const Py_ssize_t* lengths,
                    Py_ssize_t nparts) noexcept nogil:
        cdef const uint8_t* key = self.bytes_ptr + self.offsets[e]
        cdef int64_t remaining = self.offsets[e + 1] - 1 - self.offsets[e]
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
            m = products[0] + pairwise(&products[1], unique - 1) if unique else 0
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
    summed as :func:`pairwise` sums (its first gap plus the pairwise sum of the others:
    sequential below 8 of them; from 8, eight accumulators combined as a tree, then the
    remainder in turn). numpy's sum over the rows of the Python path's array may differ in the
    last bits of a float64; the features and the ranking take the float32 of it, where the two
    agree (the tests compare the paths query by query). Sums shared between candidates are
    computed once: about two additions a candidate instead of one a gap. ``rest`` holds
    2^(gaps - 1) values."""
    cdef Py_ssize_t r = gaps - 1, k, m, half, c
    cdef double pairs[4][4]
    cdef double quads[2][16]
    cdef Py_ssize_t j
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


cdef double exact_sum(const double* values, Py_ssize_t n) noexcept nogil:
    """``math.fsum`` of n values (Shewchuk's partials, then CPython's correction of the
    last bit), so that scores tie and order exactly as the Python path's."""
    cdef double partials[MAX_LONG_WORDS + 2]
    cdef double x, y, t, hi, lo = 0.0, yr
    cdef Py_ssize_t i, j, k, count = 0
    for k in range(n):
        x = values[k]
        i = 0
        for j in range(count):
            y = partials[j]
            if fabs(x) < fabs(y):
                t = x
                x = y
                y = t
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                partials[i] = lo
                i += 1
            x = hi
        count = i
        if x != 0.0:
            partials[count] = x
            count += 1
    hi = 0.0
    if count > 0:
        count -= 1
        hi = partials[count]
        while count > 0:
            x = hi
            count -= 1
            y = partials[count]
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                break
        if count > 0 and ((lo < 0.0 and partials[count - 1] < 0.0)
                          or (lo > 0.0 and partials[count - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            yr = x - hi
            if y == yr:
                hi = x
    return hi


cdef struct Changed:
    # a set of gaps changed from the best vector: positions in the order of their losses
    double cost
    Py_ssize_t start  # where its positions are in the pool
    Py_ssize_t length


cdef inline bint earlier(const Changed* a, const Changed* b, const int32_t* pool) noexcept nogil:
    """Python's order of ``(cost, positions)`` tuples."""
    cdef Py_ssize_t i
    if a.cost != b.cost:
        return a.cost < b.cost
    for i in range(min(a.length, b.length)):
        if pool[a.start + i] != pool[b.start + i]:
            return pool[a.start + i] < pool[b.start + i]
    return a.length < b.length


cdef Py_ssize_t kbest_gaps(const double* if_break, const double* if_not, Py_ssize_t n,
                           Py_ssize_t k, uint64_t* out) except -1:
    """``decoder.kbest_gaps`` for n gaps (up to 63): the ``k`` best break vectors (as masks)
    in its order; returns how many. The same heap of changed gap sets, the same costs
    (summed in the same order) and scores (exact sums), the same final stable sort."""
    cdef Py_ssize_t g, i, j, found = 0, size = 0, slots = 2 * k + 2, used = 0, last, length
    cdef uint64_t best = 0, mask
    cdef double loss[MAX_LONG_WORDS]
    cdef double terms[MAX_LONG_WORDS]
    cdef int32_t order[MAX_LONG_WORDS]
    cdef int32_t tmp
    cdef Changed entry, top
    cdef Changed* heap
    cdef int32_t* pool
    cdef double* scores
    cdef double score
    for g in range(n):
        if if_break[g] > if_not[g]:
            best |= <uint64_t>1 << g
        loss[g] = fabs(if_break[g] - if_not[g])
        order[g] = <int32_t>g
    for i in range(1, n):  # sorted by (loss, gap)
        tmp = order[i]
        j = i - 1
        while j >= 0 and loss[order[j]] > loss[tmp]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = tmp
    heap = <Changed*>malloc(slots * sizeof(Changed))
    pool = <int32_t*>malloc(slots * (n + 1) * sizeof(int32_t))
    scores = <double*>malloc(k * sizeof(double))
    if heap == NULL or pool == NULL or scores == NULL:
        free(heap)
        free(pool)
        free(scores)
        raise MemoryError()
    try:
        out[0] = best
        for g in range(n):
            terms[g] = if_break[g] if (best >> g) & 1 else if_not[g]
        scores[0] = exact_sum(terms, n)
        found = 1
        if n:
            pool[0] = 0
            entry.cost = 0.0 + loss[order[0]]
            entry.start, entry.length = 0, 1
            used = 1
            heap_push(heap, &size, entry, pool)
        while size and found < k:
            top = heap_pop(heap, &size, pool)
            mask = best
            for i in range(top.length):
                mask ^= <uint64_t>1 << order[pool[top.start + i]]
            for g in range(n):
                terms[g] = if_break[g] if (mask >> g) & 1 else if_not[g]
            out[found] = mask
            scores[found] = exact_sum(terms, n)
            found += 1
            last = pool[top.start + top.length - 1]
            if last + 1 < n:
                for length in (top.length + 1, top.length):  # append the next; move the last
                    entry.start, entry.length = used, length
                    for i in range(top.length - 1):
                        pool[used + i] = pool[top.start + i]
                    if length > top.length:
                        pool[used + top.length - 1] = <int32_t>last
                    pool[used + length - 1] = <int32_t>(last + 1)
                    entry.cost = 0.0
                    for i in range(length):
                        entry.cost = entry.cost + loss[order[pool[used + i]]]
                    used += length
                    heap_push(heap, &size, entry, pool)
        for i in range(1, found):  # a stable sort by score, best first
            score, mask = scores[i], out[i]
            j = i - 1
            while j >= 0 and scores[j] < score:
                scores[j + 1], out[j + 1] = scores[j], out[j]
                j -= 1
            scores[j + 1], out[j + 1] = score, mask
        return found
    finally:
        free(heap)
        free(pool)
        free(scores)


cdef void heap_push(Changed* heap, Py_ssize_t* size, Changed entry,
                    const int32_t* pool) noexcept nogil:
    cdef Py_ssize_t i = size[0], parent
    size[0] += 1
    while i > 0:
        parent = (i - 1) // 2
        if not earlier(&entry, &heap[parent], pool):
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = entry


cdef Changed heap_pop(Changed* heap, Py_ssize_t* size, const int32_t* pool) noexcept nogil:
    cdef Changed top = heap[0], moved
    cdef Py_ssize_t i = 0, child
    size[0] -= 1
    moved = heap[size[0]]
    while True:
        child = 2 * i + 1
        if child >= size[0]:
            break
        if child + 1 < size[0] and earlier(&heap[child + 1], &heap[child], pool):
            child += 1
        if not earlier(&heap[child], &moved, pool):
            break
        heap[i] = heap[child]
        i = child
    if size[0] > 0:
        heap[i] = moved
    return top


cdef uint64_t best_breaks(Py_ssize_t n, const double* weights, Py_ssize_t reach,
                          bint beyond) noexcept:
    """``joint._best_sum``: the break mask of the segmentation of n words with the highest
    sum of its multiword segments' ``weights`` (cells ``a * (n + 1) + b``) of up to
    ``reach`` words; with ``beyond``, a segment of ``reach + 1`` words weighs 0.5."""
    cdef double best[MAX_LONG_WORDS + 1]
    cdef Py_ssize_t start[MAX_LONG_WORDS + 1]
    cdef Py_ssize_t end, first
    cdef double value
    cdef uint64_t mask = 0
    best[0] = 0.0
    start[0] = 0
    for end in range(1, n + 1):
        best[end] = best[end - 1]
        start[end] = end - 1
        for first in range(max(0, end - reach), end - 1):
            value = best[first] + weights[first * (n + 1) + end]
            if value > best[end]:
                best[end] = value
                start[end] = first
        if beyond and end - reach - 1 >= 0:
            value = best[end - reach - 1] + 0.5
            if value > best[end]:
                best[end] = value
                start[end] = end - reach - 1
    end = n
    while end > 0:
        if start[end] > 0:
            mask |= <uint64_t>1 << (start[end] - 1)
        end = start[end]
    return mask


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

    cdef StoreView counts, words, titles, names
    cdef Py_ssize_t title_words
    cdef Py_ssize_t counted  # the longest span looked up in ``counts`` (longer: none there)
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
    cdef Py_ssize_t longest_phrase  # the most words of a phrase (longer spans: none)
    cdef const double[::1] rates
    cdef Py_ssize_t max_candidates, title_only_from, n_features
    cdef list keep
    cdef WordEntry* cache  # WORD_CACHE entries (the kernel runs holding the GIL: one writer)

    def __init__(self, *, counts, words, titles, names, Py_ssize_t title_words,
                 Py_ssize_t counted, double log_n,
                 double names_log_n, frozenset function_words, dict tag_classes,
                 Py_ssize_t classes, Py_ssize_t gap_width, window, name_counts_at,
                 name_rates_at, bint features, bint name_statistics, bint pair_counts,
                 vocabulary, vectors, domain, double kind, lexicon, lexicon_stats,
                 double prior, gap_trees, joint_trees, ranker_trees, phrases, rates,
                 Py_ssize_t longest_phrase,
                 Py_ssize_t max_candidates, Py_ssize_t title_only_from,
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
        trees_from(&self.gap_trees, gap_trees, self.keep)
        trees_from(&self.joint_trees, joint_trees, self.keep)
        self.has_ranker = ranker_trees is not None
        if self.has_ranker:
            trees_from(&self.ranker_trees, ranker_trees, self.keep)
        self.phrases, self.rates = phrases, rates
        self.longest_phrase = longest_phrase
        if max_candidates < 1:  # (compile_model refuses such a model in one line first)
            raise ValueError(f"max_candidates must be at least 1, got {max_candidates}")
        self.max_candidates, self.title_only_from = max_candidates, title_only_from
        self.n_features = n_features
        cdef Py_ssize_t candidate_width = CANDIDATE_COLUMNS + (domain is not None or kind >= 0)
        if (self.gap_trees.width != n_features or self.joint_trees.width != candidate_width
                or (self.has_ranker and self.ranker_trees.width != candidate_width)):
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
        one block of memory is ``q.logs`` from the start, freed by the caller (:meth:`decide`)
        whether this returns or raises."""
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
            q.vector_rows[a] = e.vector_row
            q.left_rows[a], q.right_rows[a] = e.left_row, e.right_row
        for a in range(cells):
            q.logs[a] = NAN
            title_cells[a] = 0.0
        query_span_table(self.counts, self.words, self.titles, w, MAX_SPAN, self.title_words,
                         q.logs, title_cells, counts, self.counted)
        for a in range(cells):
            q.logs[a] = log1p(q.logs[a])
            q.titles[a] = title_cells[a] != 0.0
        word_attrs(words, self.function_words, None, self.tag_classes, self.classes - 1,
                   q.attrs)
        if self.name_statistics:
            for a in range(cells):
                q.names_logs[a] = NAN
            query_span_table(self.names, self.names, None, w, MAX_SPAN, 0, q.names_logs,
                             title_cells, names_counts, MAX_SPAN)
            for a in range(cells):
                q.names_logs[a] = log1p(q.names_logs[a])
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
            tree_outputs(&self.gap_trees, rows, n - 1, self.n_features, p)
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

    # -- candidates --------------------------------------------------------------------

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
                                         + (b - a - 1) * self.log_n)
                else:
                    spans.naive[c] = 0.0
                    spans.cohesion[c] = 0.0
        return 0

    cdef Py_ssize_t decide(self, tuple words, Words* w, Py_ssize_t window, uint8_t* bits,
                           float* scores) except -1:
        """The ``window`` candidates the joint scorers choose among (break bits, one row of
        n - 1 each, most probable first) and their scores; returns how many there are."""
        cdef Query q
        cdef Spans spans
        cdef Py_ssize_t n = w.n, kept = 0
        cdef float* p32 = <float*>malloc((n - 1) * sizeof(float))
        if p32 == NULL:
            raise MemoryError()
        spans.log_count = NULL
        q.logs = NULL
        try:
            self.open_query(words, w, &q)
            self.gap_probabilities(&q, w, p32)
            self.open_spans(&q, w, &spans)
            if n <= MAX_WORDS:
                kept = self.every_candidate(&q, &spans, p32, window, bits, scores)
            else:
                kept = self.likely_candidates(&q, &spans, p32, window, bits, scores)
        finally:
            free(p32)
            free(q.logs)
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
        cdef double pg, best[4]
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
        cdef object bit
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
            out = PyTuple_New(n - 1)
            for i in range(n - 1):
                bit = ONE if bits[best * (n - 1) + i] else ZERO
                Py_INCREF(bit)
                PyTuple_SET_ITEM(out, i, bit)
            return out
        finally:
            free(bits)

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
