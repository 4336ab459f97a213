# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Sums added in the order the Python path adds them: numpy's pairwise order for a vector
(:func:`pairwise`) and ``math.fsum`` for scores compared exactly (:func:`exact_sum`). The
kernels' features and rankings are equal to the bit to the Python path's because of them."""

from libc.math cimport fabs

from qseg.segmenters.learned._sizes cimport MAX_LONG_WORDS


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
    """A vector's sum as the kernels add: the first value, then the pairwise sum of the rest,
    which is ``np.add.reduceat``'s order (the query-kind model's margin, to the bit)."""
    if x.shape[0] == 0:
        return 0.0
    return x[0] + pairwise(&x[1], x.shape[0] - 1)


cdef double exact_sum(const double* values, Py_ssize_t n) noexcept nogil:
    """``math.fsum`` of n values, n up to :data:`MAX_LONG_WORDS` (Shewchuk's partials, then
    CPython's correction of the last bit), so that scores tie and order exactly as the Python
    path's."""
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
