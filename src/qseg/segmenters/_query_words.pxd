# cython: language_level=3
"""The UTF-8 bytes of a query's words, for the compiled kernels that hash spans word by word.

Queries of up to ``STACK_WORDS`` words keep their pointers inside the struct (on the C stack);
longer ones on the heap, released by ``words_close``.
"""

from libc.stdint cimport uint8_t
from libc.stdlib cimport free, malloc
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

cdef enum:
    STACK_WORDS = 64


cdef struct Words:
    const uint8_t** ptrs
    Py_ssize_t* lens
    Py_ssize_t n
    const uint8_t* stack_ptrs[STACK_WORDS]
    Py_ssize_t stack_lens[STACK_WORDS]


cdef inline int words_open(Words* w, tuple words) except -1:
    """Point ``w`` at the UTF-8 bytes of ``words`` (kept alive by the tuple)."""
    cdef Py_ssize_t i, length
    w.n = len(words)
    w.ptrs = w.stack_ptrs
    w.lens = w.stack_lens
    if w.n > STACK_WORDS:
        w.ptrs = <const uint8_t**>malloc(w.n * sizeof(uint8_t*))
        w.lens = <Py_ssize_t*>malloc(w.n * sizeof(Py_ssize_t))
        if w.ptrs == NULL or w.lens == NULL:
            words_close(w)
            raise MemoryError()
    for i in range(w.n):
        w.ptrs[i] = <const uint8_t*>PyUnicode_AsUTF8AndSize(<str>words[i], &length)
        w.lens[i] = length
    return 0


cdef inline void words_close(Words* w) noexcept:
    if w.ptrs != w.stack_ptrs:
        free(w.ptrs)
        free(w.lens)
        w.ptrs = w.stack_ptrs
