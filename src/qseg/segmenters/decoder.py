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

import heapq
import math
import numbers
from collections.abc import Sequence
from typing import Any, overload

from qseg.errors import QsegError
from qseg.segmenters._kernel import best_breaks

__all__ = [
    "WeightTable",
    "best_breaks",
    "check_k",
    "kbest_breaks",
    "kbest_gaps",
    "score_breaks",
]

WeightTable = Sequence[Sequence[tuple[int, float]]]
IntWeightTable = Sequence[Sequence[tuple[int, int]]]
"""The weights of the counting methods (naive, wiki): whole numbers, and so their scores."""


def check_k(k: object) -> int:
    """The ``k`` of :meth:`~qseg.segmenters.base.Segmenter.rank`, checked the one way every
    segmenter checks it: a whole number of at least 1 (not a bool)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise QsegError(f"k must be a whole number of at least 1, got {k!r}")
    return int(k)


@overload
def kbest_breaks(weights: IntWeightTable, n: int, k: int) -> list[tuple[int, tuple[int, ...]]]: ...
@overload
def kbest_breaks(weights: WeightTable, n: int, k: int) -> list[tuple[Any, tuple[int, ...]]]: ...
def kbest_breaks(weights: WeightTable, n: int, k: int) -> list[tuple[Any, tuple[int, ...]]]:
    """The ``k`` highest-scoring segmentations of ``n`` words, best first."""
    k = check_k(k)
    # ranked[i]: the k best (score, break bits of the gaps after words i..n-2) for words[i:]
    ranked: list[list[tuple[float, tuple[int, ...]]]] = [[] for _ in range(n + 1)]
    ranked[n] = ranked[n - 1] = [(0, ())]
    for i in range(n - 2, -1, -1):
        candidates = [(s, (1, *tail)) for s, tail in ranked[i + 1]]
        for end, weight in weights[i]:
            head = (0,) * (end - i - 1) + ((1,) if end < n else ())
            candidates.extend((weight + s, head + tail) for s, tail in ranked[end])
        candidates.sort(key=lambda c: (-c[0], c[1]))
        ranked[i] = candidates[:k]
    return ranked[0]


@overload
def score_breaks(weights: IntWeightTable, breaks: Sequence[int]) -> int: ...
@overload
def score_breaks(weights: WeightTable, breaks: Sequence[int]) -> float: ...
def score_breaks(weights: WeightTable, breaks: Sequence[int]) -> float:
    """The score of one segmentation under ``weights`` (paper 003's -1 rule included; an int
    for a table of ints)."""
    n = len(breaks) + 1
    total: float = 0
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


def kbest_gaps(
    if_break: Sequence[float], if_not: Sequence[float], k: int
) -> list[tuple[float, tuple[int, ...]]]:
    """The ``k`` best break vectors when every gap scores on its own: a vector scores the sum
    of ``if_break[g]`` over its breaks and ``if_not[g]`` over the other gaps, best first.

    The best vector takes the better choice at every gap (no break on a tie); the next ones
    give up the least, found by enumerating sets of changed gaps in order of their total loss
    with a heap (each set is reached once: from its cheapest proper prefix in loss order, by
    appending the next gap or by moving its last gap one step on), O(n log n + k log k) sets.
    """
    k = check_k(k)
    n = len(if_break)
    best = [1 if if_break[g] > if_not[g] else 0 for g in range(n)]
    loss = [abs(if_break[g] - if_not[g]) for g in range(n)]
    order = sorted(range(n), key=lambda g: (loss[g], g))

    def result(changed: tuple[int, ...]) -> tuple[float, tuple[int, ...]]:
        bits = list(best)
        for position in changed:
            bits[order[position]] ^= 1
        score = math.fsum(if_break[g] if bit else if_not[g] for g, bit in enumerate(bits))
        return score, tuple(bits)

    def cost(changed: tuple[int, ...]) -> float:
        return sum(loss[order[position]] for position in changed)  # inf stays inf

    ranked = [result(())]
    heap: list[tuple[float, tuple[int, ...]]] = [(cost((0,)), (0,))] if n else []
    while heap and len(ranked) < k:
        _, changed = heapq.heappop(heap)
        ranked.append(result(changed))
        last = changed[-1]
        if last + 1 < n:
            for following in ((*changed, last + 1), (*changed[:-1], last + 1)):
                heapq.heappush(heap, (cost(following), following))
    # losses that tie in floating point may sum to scores an ulp apart: order by the score
    return sorted(ranked, key=lambda item: -item[0])
