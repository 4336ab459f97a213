"""The segmenter protocol and the shared machinery of span-scoring segmenters."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol, runtime_checkable

from qseg.query import normalize
from qseg.segmentation import Segmentation
from qseg.segmenters._kernel import SpanScorer
from qseg.segmenters.decoder import WeightTable, kbest_breaks, score_breaks


@runtime_checkable
class Segmenter(Protocol):
    """Anything that splits a query into segments."""

    spec: str
    """The method spec that recreates this segmenter from the registry, e.g. ``pmi(tau=0.9)``."""

    def segment(self, query: str) -> Segmentation:
        """The segmentation of one query (raw text; it is normalized first)."""
        ...

    def segment_many(self, queries: Iterable[str]) -> Iterator[Segmentation]:
        """Segment queries one after the other."""
        ...


@runtime_checkable
class RankingSegmenter(Segmenter, Protocol):
    """A segmenter that scores whole segmentations and can list the k best."""

    def rank(self, query: str, k: int) -> list[tuple[Segmentation, int]]:
        """The ``k`` best segmentations with their scores, best first."""
        ...

    def score(self, segmentation: Segmentation) -> int:
        """The score of any segmentation of a query (-1 if it has a disallowed segment)."""
        ...


class SpanScoringSegmenter:
    """A scorer that weighs every multiword segment, decoded exactly by :mod:`.decoder`.

    Subclasses set ``scorer``, a compiled scorer from ``_kernel.pyx`` that both lists the
    weights (for ranking and scoring) and decodes the best segmentation without leaving C.
    """

    spec: str
    scorer: SpanScorer

    def span_weights(self, words: tuple[str, ...]) -> WeightTable:
        """Weight of every allowed multiword segment (see :mod:`.decoder`)."""
        return self.scorer.table(words)

    def segment(self, query: str) -> Segmentation:
        words = normalize(query)
        return Segmentation._trusted(words, self.scorer.best(words)[1])

    def segment_many(self, queries: Iterable[str]) -> Iterator[Segmentation]:
        best = self.scorer.best
        make = Segmentation._trusted
        for query in queries:
            words = normalize(query)
            yield make(words, best(words)[1])

    def rank(self, query: str, k: int) -> list[tuple[Segmentation, int]]:
        words = normalize(query)
        ranked = kbest_breaks(self.span_weights(words), len(words), k)
        return [(Segmentation._trusted(words, breaks), score) for score, breaks in ranked]

    def score(self, segmentation: Segmentation) -> int:
        return score_breaks(self.span_weights(segmentation.words), segmentation.breaks)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"
