# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The candidate segmentations of a query, compiled: every candidate's log-probability at once
(:func:`every_log_p`, up to ``MAX_WORDS`` words), the k most probable of a longer query
(:func:`kbest_gaps`, ``decoder.kbest_gaps``'s heap and order) and the dynamic programs that
find the best segmentation under a sum over its segments (:func:`best_breaks`,
:func:`best_segment_sum`, ``joint._best_sum``), and the choice of a model decoded with a
partner (:func:`averaged_best`). A candidate is a mask: bit g set breaks gap g."""

from libc.math cimport INFINITY, exp, fabs
from libc.stdint cimport int8_t, int32_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

from qseg.segmenters.learned._sizes cimport MAX_LONG_WORDS, MAX_SPAN, MAX_WORDS
from qseg.segmenters.learned._sums cimport exact_sum


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
    cdef double terms[MAX_LONG_WORDS]  # one candidate's terms, summed by exact_sum
    cdef int32_t order[MAX_LONG_WORDS]
    cdef int32_t tmp
    cdef Changed entry, top
    cdef Changed* heap
    cdef int32_t* pool
    cdef double* scores
    cdef double score
    terms[0] = 0.0  # (no gaps: exact_sum reads none, which the C compiler cannot see)
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


cdef void softmax(const float* scores, Py_ssize_t k, double* out) noexcept nogil:
    """The candidates' scores made probabilities (``exp`` of each less the highest, over
    their sum, added in order)."""
    cdef Py_ssize_t i
    cdef double top = -INFINITY, total = 0.0
    for i in range(k):
        if scores[i] > top:  # (a NaN score is never the highest)
            top = scores[i]
    for i in range(k):
        out[i] = exp(<double>scores[i] - top)
        total += out[i]
    for i in range(k):
        out[i] /= total


cdef Py_ssize_t averaged_best(Py_ssize_t gaps, const uint8_t* bits_a, const float* scores_a,
                              Py_ssize_t ka, const uint8_t* bits_b, const float* scores_b,
                              Py_ssize_t kb, double* p) noexcept nogil:
    """The candidate two models decoded together choose: each model's candidates (rows of
    ``gaps`` break bits, with their joint scores) made probabilities within the model
    (:func:`softmax`) and a candidate's added over the models; the highest sum, the first in
    ``a``'s order then ``b``'s on a tie. Returns its place in ``a`` then ``b`` (``ka`` + j for
    b's j-th); ``p`` holds ``ka + kb`` values."""
    cdef Py_ssize_t i, j, best = 0
    cdef double top = -1.0, total
    softmax(scores_a, ka, p)
    softmax(scores_b, kb, p + ka)
    for i in range(ka):
        total = p[i]
        for j in range(kb):
            if rows_equal(bits_a + i * gaps, bits_b + j * gaps, gaps):
                total += p[ka + j]
                break
        if total > top:
            top, best = total, i
    for j in range(kb):
        for i in range(ka):
            if rows_equal(bits_a + i * gaps, bits_b + j * gaps, gaps):
                break
        else:  # one of b's alone
            if p[ka + j] > top:
                top, best = p[ka + j], ka + j
    return best


cdef inline bint rows_equal(const uint8_t* a, const uint8_t* b, Py_ssize_t gaps) noexcept nogil:
    cdef Py_ssize_t g
    for g in range(gaps):
        if a[g] != b[g]:
            return False
    return True


def averaged_choice(const int8_t[:, ::1] bits_a, const float[::1] scores_a,
                    const int8_t[:, ::1] bits_b, const float[::1] scores_b):
    """:func:`averaged_best` of two models' candidates as arrays (the Python path's): the
    chosen break bits as a tuple."""
    cdef Py_ssize_t ka = bits_a.shape[0], kb = bits_b.shape[0], gaps = bits_a.shape[1], best
    if ka == 0 or kb == 0 or bits_b.shape[1] != gaps or scores_a.shape[0] != ka \
            or scores_b.shape[0] != kb:
        raise ValueError("two models' candidates: at least one each, of as many gaps")
    cdef double* p = <double*>malloc((ka + kb) * sizeof(double))
    if p == NULL:
        raise MemoryError()
    cdef const uint8_t* a = <const uint8_t*>&bits_a[0, 0]
    cdef const uint8_t* b = <const uint8_t*>&bits_b[0, 0]
    cdef const uint8_t* row
    cdef Py_ssize_t g
    try:
        best = averaged_best(gaps, a, &scores_a[0], ka, b, &scores_b[0], kb, p)
    finally:
        free(p)
    row = a + best * gaps if best < ka else b + (best - ka) * gaps
    return tuple([1 if row[g] else 0 for g in range(gaps)])
