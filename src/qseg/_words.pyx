# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled fast path of query normalization (see ``query.py``).

Most queries are already in normal form: lower-case printable ASCII words without the reserved
characters ``|"()``, joined by single spaces. This checks that in one pass over the bytes and
splits the text into words; anything else is left to the general path in Python.
"""

from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_Substring


cdef extern from "Python.h":
    bint PyUnicode_IS_COMPACT_ASCII(object text)


cdef bint WORD_BYTE[256]
cdef int _c
for _c in range(256):
    WORD_BYTE[_c] = 33 <= _c <= 126 and not (65 <= _c <= 90) and _c not in (34, 40, 41, 124)


def normal_words(str text):
    """The words of ``text`` if it is already normalized, else ``None``."""
    cdef Py_ssize_t length, i, start = 0, count = 1
    cdef const unsigned char* data
    cdef tuple words
    cdef object word
    if not PyUnicode_IS_COMPACT_ASCII(text):
        return None
    data = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &length)
    if length == 0 or data[0] == 32 or data[length - 1] == 32:
        return None
    for i in range(length):
        if data[i] == 32:
            if data[i - 1] == 32:
                return None
            count += 1
        elif not WORD_BYTE[data[i]]:
            return None
    words = PyTuple_New(count)
    count = 0
    for i in range(length + 1):
        if i == length or data[i] == 32:
            word = PyUnicode_Substring(text, start, i)
            Py_INCREF(word)
            PyTuple_SET_ITEM(words, count, word)
            count += 1
            start = i + 1
    return words
