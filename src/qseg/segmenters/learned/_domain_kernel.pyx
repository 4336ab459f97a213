# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The query's kind compiled: ``DomainModel.predict`` for one query, to the bit (the joint
kernel's kind input, and the router's choice of model)."""

from libc.math cimport exp, sqrt
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport free, malloc, qsort

from qseg.resources._store cimport fmix64, fnv_feed, fnv_start
from qseg.segmenters._query_words cimport Words, words_close, words_open
from qseg.segmenters.learned._sums cimport pairwise

cdef uint8_t SPACE = 32


cdef class DomainKernel:
    """``DomainModel.predict`` for one query: hashed word, word-pair and character 3-gram
    counts scaled to unit length, a logistic regression over them."""

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
