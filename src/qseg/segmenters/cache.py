"""A cache of segmentation results, for traffic in which the same queries come back.

Search traffic is heavy-tailed: a few queries make up much of it. Wrapping a segmenter in
:class:`CachedSegmenter` keeps the results of the most recently used distinct queries (after
normalization), so repeated queries cost a dictionary lookup. Throughput figures of qseg are
given with and without it (``benchmarks/throughput.py``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator

from qseg.query import normalize
from qseg.segmentation import Segmentation
from qseg.segmenters.base import Segmenter


class CachedSegmenter:
    """Least-recently-used cache of ``segment`` results in front of another segmenter."""

    def __init__(self, inner: Segmenter, size: int = 100_000) -> None:
        if size < 1:
            raise ValueError(f"cache size must be at least 1, got {size}")
        self.inner = inner
        self.size = size
        self.spec = inner.spec
        self.hits = 0
        self.misses = 0
        self._results: OrderedDict[tuple[str, ...], Segmentation] = OrderedDict()

    def segment(self, query: str) -> Segmentation:
        words = normalize(query)
        results = self._results
        found = results.get(words)
        if found is not None:
            results.move_to_end(words)
            self.hits += 1
            return found
        self.misses += 1
        found = self.inner.segment(" ".join(words))
        results[words] = found
        if len(results) > self.size:
            results.popitem(last=False)
        return found

    def segment_many(self, queries: Iterable[str]) -> Iterator[Segmentation]:
        for query in queries:
            yield self.segment(query)

    def __repr__(self) -> str:
        return f"<CachedSegmenter {self.spec} size={self.size} hits={self.hits}>"
