"""A cache of segmentation results, for traffic in which the same queries come back.

Search traffic is heavy-tailed: a few queries make up much of it. Wrapping a segmenter in
:class:`CachedSegmenter` keeps the results of the most recently used distinct queries (after
normalization; ``functools.lru_cache``), so a repeated query costs its normalization and a
dictionary lookup. Throughput figures of qseg are given with and without it
(``benchmarks/throughput.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache

from qseg.query import normalize
from qseg.segmentation import Segmentation
from qseg.segmenters.base import Segmenter


class CachedSegmenter:
    """Least-recently-used cache of ``segment`` (and ``rank``) results in front of another
    segmenter; the two share the size, each keeping its most recent queries."""

    def __init__(self, inner: Segmenter, size: int = 100_000) -> None:
        if size < 1:
            raise ValueError(f"cache size must be at least 1, got {size}")
        self.inner = inner
        self.size = size
        self._cached = lru_cache(maxsize=size)(self._segment_words)
        self._ranked = lru_cache(maxsize=size)(self._rank_words)

    @property
    def spec(self) -> str:
        return self.inner.spec

    def _segment_words(self, words: tuple[str, ...]) -> Segmentation:
        return self.inner.segment(" ".join(words))

    def _rank_words(self, words: tuple[str, ...], k: int) -> list[tuple[Segmentation, float]]:
        return self.inner.rank(" ".join(words), k)

    @property
    def hits(self) -> int:
        return self._cached.cache_info().hits

    @property
    def misses(self) -> int:
        return self._cached.cache_info().misses

    def segment(self, query: str) -> Segmentation:
        return self._cached(normalize(query))

    def segment_many(self, queries: Iterable[str]) -> Iterator[Segmentation]:
        cached = self._cached
        for query in queries:
            yield cached(normalize(query))

    def rank(self, query: str, k: int) -> list[tuple[Segmentation, float]]:
        return list(self._ranked(normalize(query), k))

    def __repr__(self) -> str:
        return f"<CachedSegmenter {self.spec} size={self.size} hits={self.hits}>"
