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

from qseg.query import Query, normalize
from qseg.segmentation import Segmentation
from qseg.segmenters.base import Errors, Segmenter, words_of_many
from qseg.segmenters.decoder import check_k


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

    def segment(self, query: Query) -> Segmentation:
        return self._cached(normalize(query))

    def segment_many(
        self, queries: Iterable[Query], *, errors: Errors = "raise"
    ) -> Iterator[Segmentation]:
        cached = self._cached
        for words in words_of_many(queries, errors):
            yield cached(words)

    def rank(self, query: Query, k: int) -> list[tuple[Segmentation, float]]:
        return list(self._ranked(normalize(query), check_k(k)))

    def __repr__(self) -> str:
        return f"<CachedSegmenter {self.spec} size={self.size} hits={self.hits}>"
