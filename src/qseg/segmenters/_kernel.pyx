# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled hot path of the n-gram segmenters: scanning candidate segments and exact decoding.

The scoring rules are documented in ``naive.py`` and ``wiki.py``, the decoding contract in
``decoder.py``; this module is their only implementation. Weights stay Python integers, so
scores are exact however large the counts (the original Java code overflowed 32-bit ints).

A scan starts a candidate segment at every word and extends it one word at a time; it stops as
soon as the segment is not a proper prefix of any longer n-gram (``extendable``), so a query
costs about one lookup per word instead of one per span.
"""

cpdef list naive_table(tuple words, dict counts, frozenset extendable, list power):
    """Weight table of naive scoring: |s|^|s| * freq(s) for segments with a count."""
    cdef Py_ssize_t n = len(words), i, end
    cdef list table = [], row
    cdef str key
    cdef object count
    for i in range(n - 1):
        row = []
        key = <str>words[i]
        for end in range(i + 2, n + 1):
            key = key + " " + <str>words[end - 1]
            count = counts.get(key)
            if count is not None and count > 0:
                row.append((end, count * power[end - i]))
            if key not in extendable:
                break
        table.append(row)
    return table


cpdef list wiki_table(
    tuple words,
    dict counts,
    frozenset extendable,
    object titles,
    bint unseen_titles,
    object median,
):
    """Weight table of Wikipedia-based normalization: |s| * weight(s)."""
    cdef Py_ssize_t n = len(words), i, end, t, length
    cdef list table = [[] for _ in range(n - 1)]
    cdef list pairs = [0] * (n - 1)  # 2-gram counts, filled right to left
    cdef list row
    cdef str key
    cdef object freq, top, pair
    for i in range(n - 2, -1, -1):
        row = <list>table[i]
        key = <str>words[i]
        for end in range(i + 2, n + 1):
            key = key + " " + <str>words[end - 1]
            freq = counts.get(key)
            if freq is None:
                freq = 0
            length = end - i
            if length == 2:
                pairs[i] = freq
            if (freq > 0 or unseen_titles) and key in titles:
                top = 0
                for t in range(i, end - 1):
                    pair = pairs[t]
                    if not pair > 0:
                        pair = median
                    if pair > top:
                        top = pair
                row.append((end, length * (length + top)))
            elif freq > 0:
                row.append((end, length * freq))
            if key not in extendable:
                break
    return table


cpdef tuple best_breaks(list weights, Py_ssize_t n):
    """The highest-scoring segmentation of ``n`` words: ``(score, break bits)``."""
    cdef list best = [0] * (n + 1)
    cdef list nxt = list(range(1, n + 2))
    cdef list row, breaks
    cdef tuple pair
    cdef Py_ssize_t i, end, j
    cdef object top, score
    for i in range(n - 2, -1, -1):
        top = best[i + 1]
        row = <list>weights[i]
        for pair in row:
            end = pair[0]
            score = pair[1] + best[end]
            if score >= top:  # ascending ends: a tie goes to the longer segment
                top = score
                nxt[i] = end
        best[i] = top
    breaks = [0] * (n - 1)
    j = nxt[0]
    while j < n:
        breaks[j - 1] = 1
        j = nxt[j]
    return best[0], tuple(breaks)
