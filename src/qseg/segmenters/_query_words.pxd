# cython: language_level=3
"""The UTF-8 bytes of a query's words, for the compiled kernels that hash spans word by word.

Queries of up to ``STACK_WORDS`` words keep their pointers inside the struct (on the C stack);
longer ones on the heap, released by ``words_close``. The heap arrays come from
``PyMem_RawMalloc`` (``malloc`` as fast, usable without the GIL, and seen by ``tracemalloc``,
which is how the tests check that no path leaks them).
"""

from libc.stdint cimport uint8_t
from cpython.mem cimport PyMem_RawFree, PyMem_RawMalloc
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
    """Point ``w`` at the UTF-8 bytes of ``words`` (kept alive by the tuple). A word that has
    none (a lone surrogate, or not a ``str``) raises before anything is allocated, so that a
    caller's ``try``/``finally`` around what follows is all the cleanup there is: on an error
    ``w`` holds nothing to close."""
    cdef Py_ssize_t i, length, n = len(words)
    w.n = 0
    w.ptrs = w.stack_ptrs
    w.lens = w.stack_lens
    if n > STACK_WORDS:
        # every word's UTF-8 first (each str keeps what it made), then the arrays
        for i in range(n):
            PyUnicode_AsUTF8AndSize(<str>words[i], &length)
        w.ptrs = <const uint8_t**>PyMem_RawMalloc(n * sizeof(uint8_t*))
        w.lens = <Py_ssize_t*>PyMem_RawMalloc(n * sizeof(Py_ssize_t))
        if w.ptrs == NULL or w.lens == NULL:
            words_close(w)
            raise MemoryError()
    for i in range(n):  # (on the heap: the second pass, which cannot fail)
        w.ptrs[i] = <const uint8_t*>PyUnicode_AsUTF8AndSize(<str>words[i], &length)
        w.lens[i] = length
    w.n = n
    return 0


cdef inline void words_close(Words* w) noexcept:
    if w.ptrs != w.stack_ptrs:
        PyMem_RawFree(w.ptrs)
        PyMem_RawFree(w.lens)
    w.ptrs = w.stack_ptrs
    w.lens = w.stack_lens
