"""Exact decoding of segment weights: the best and the k best segmentations of a query.

A scorer gives segments of two or more words a positive integer weight; a segment without a
weight is not allowed (paper 003: a segment with frequency 0 makes the segmentation score -1).
The weight table has one row per start word ``i`` (``n - 1`` rows for ``n`` words) listing the
allowed segments ``words[i:end]`` as ``(end, weight)`` pairs in increasing ``end``.

The score of a segmentation is the sum of the weights of its multiword segments, or -1 if one of
them is not allowed; single words contribute nothing. Decoding considers the segmentations with
score >= 0 (the all-single-words segmentation always qualifies, with score 0) and orders them by
score, then by break vector, lexicographically smaller first: on equal scores the segmentation
whose first segment is longer wins. Decoding is a dynamic program over suffixes, O(n + spans)
for the best (compiled, in ``_kernel.pyx``) and O((n + spans) * k log k) for the k best.
"""

from __future__ import annotations

from collections.abc import Sequence

from qseg.segmenters._kernel import best_breaks

__all__ = ["WeightTable", "best_breaks", "kbest_breaks", "score_breaks"]

WeightTable = Sequence[Sequence[tuple[int, int]]]


def kbest_breaks(weights: WeightTable, n: int, k: int) -> list[tuple[int, tuple[int, ...]]]:
    """The ``k`` highest-scoring segmentations of ``n`` words, best first."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    # ranked[i]: the k best (score, break bits of the gaps after words i..n-2) for words[i:]
    ranked: list[list[tuple[int, tuple[int, ...]]]] = [[] for _ in range(n + 1)]
    ranked[n] = ranked[n - 1] = [(0, ())]
    for i in range(n - 2, -1, -1):
        candidates = [(s, (1, *tail)) for s, tail in ranked[i + 1]]
        for end, weight in weights[i]:
            head = (0,) * (end - i - 1) + ((1,) if end < n else ())
            candidates.extend((weight + s, head + tail) for s, tail in ranked[end])
        candidates.sort(key=lambda c: (-c[0], c[1]))
        ranked[i] = candidates[:k]
    return ranked[0]


def score_breaks(weights: WeightTable, breaks: Sequence[int]) -> int:
    """The score of one segmentation under ``weights`` (paper 003's -1 rule included)."""
    n = len(breaks) + 1
    total = 0
    start = 0
    for end in range(1, n + 1):
        if end < n and not breaks[end - 1]:
            continue
        if end - start >= 2:
            weight = dict(weights[start]).get(end, 0)
            if weight <= 0:
                return -1
            total += weight
        start = end
    return total
