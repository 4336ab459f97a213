"""The segmenter protocol and the shared machinery of span-scoring segmenters.

Every method, rule-based or trained, is a :class:`Segmenter`: it segments one query or many,
and ranks the k best segmentations of a query with its own scores (the "did you mean" of
paper 003), the first of which is always what :meth:`Segmenter.segment` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Literal, Protocol, TypeVar, cast, runtime_checkable

from qseg.errors import DataError, QsegError
from qseg.query import Query, QueryError, normalize
from qseg.segmentation import Segmentation
from qseg.segmenters._kernel import SpanScorer
from qseg.segmenters.decoder import IntWeightTable, check_k, kbest_breaks, score_breaks

Errors = Literal["raise", "skip"]
"""What ``segment_many`` does with an item that is no query (empty, too long, not text):
raise a :class:`~qseg.query.QueryError` naming the item, or leave it out."""

T = TypeVar("T")


@runtime_checkable
class Segmenter(Protocol):
    """Anything that splits a query into segments."""

    @property
    def spec(self) -> str:
        """What recreates this segmenter: a method spec such as ``pmi(tau=0.9)``, or the path
        of a saved model."""
        ...

    def segment(self, query: Query) -> Segmentation:
        """The segmentation of one query (raw text or a list of words; normalized first)."""
        ...

    def segment_many(
        self, queries: Iterable[Query], *, errors: Errors = "raise"
    ) -> Iterator[Segmentation]:
        """Segment queries one after the other (the same as :meth:`segment` on each); an item
        that is no query raises an error naming its index and text, or with ``errors="skip"``
        is left out."""
        ...

    def rank(self, query: Query, k: int) -> list[tuple[Segmentation, float]]:
        """The ``k`` best segmentations with their scores, best first (fewer if the query has
        fewer, or if the method lists only some: ``naive`` and ``wiki`` leave out those scoring
        -1, a model with the title rule those it forbids, and on a long query it may find fewer:
        :meth:`.break_model.BreakModel.rank`); the first is :meth:`segment`'s."""
        ...


class OneByOne:
    """``segment_many`` for a segmenter that gains nothing from batches: :meth:`segment` on
    each query in turn (``errors`` as :meth:`Segmenter.segment_many` says)."""

    segment: Callable[[Query], Segmentation]

    def segment_many(
        self, queries: Iterable[Query], *, errors: Errors = "raise"
    ) -> Iterator[Segmentation]:
        for words in words_of_many(queries, errors):
            yield self.segment(words)


BATCH = 4096
"""Queries segmented at once where a segmenter gains from batches (a trained model)."""


class InBatches:
    """``segment_many`` for a segmenter that decides many queries at once (a trained model:
    its features and trees take a batch as one array): :meth:`_predict_words` on batches of
    :data:`BATCH` normalized queries, with their part-of-speech tags where given (a query's
    may be None; ``errors`` as :meth:`Segmenter.segment_many` says)."""

    def _predict_words(
        self, words: Sequence[tuple[str, ...]], tags: Sequence[Sequence[str] | None] | None
    ) -> list[Segmentation]:
        raise NotImplementedError

    def segment_many(
        self,
        queries: Iterable[Query],
        tags: Iterable[Sequence[str] | None] | None = None,
        *,
        errors: Errors = "raise",
    ) -> Iterator[Segmentation]:
        good = checked(_with_tags(queries, tags), errors, lambda pair: pair[0])
        while batch := list(islice(good, BATCH)):
            words = [w for _, w in batch]
            yield from self._predict_words(
                words, None if tags is None else [t for (_, t), _ in batch]
            )


def _with_tags(
    queries: Iterable[Query], tags: Iterable[Sequence[str] | None] | None
) -> Iterator[tuple[Query, Sequence[str] | None]]:
    """Each query with its tags (``None`` without tags)."""
    if tags is None:
        yield from ((query, None) for query in queries)
        return
    tag_items = iter(tags)
    for query in queries:
        try:
            yield query, next(tag_items)
        except StopIteration:
            raise QsegError("fewer tag lists than queries") from None


def checked(
    items: Iterable[T], errors: Errors, query: Callable[[T], Query] | None = None
) -> Iterator[tuple[T, tuple[str, ...]]]:
    """Each item with the words of its query (``query(item)``; without ``query``, the item),
    in order, for ``segment_many``: an item that is no query raises a
    :class:`~qseg.query.QueryError` naming its index and text, or with ``errors="skip"`` is
    left out."""
    if errors not in ("raise", "skip"):
        raise QsegError(f"errors must be 'raise' or 'skip', not {errors!r}")
    for index, item in enumerate(items):
        text = query(item) if query is not None else cast(Query, item)
        try:
            words = normalize(text)
        except QueryError as exc:
            if errors == "skip":
                continue
            raise QueryError(f"query {index} ({_shown(text)}): {exc}") from None
        yield item, words


def _shown(query: object) -> str:
    """A query as an error message shows it: its text, cut after 60 characters."""
    text = query if isinstance(query, str) else repr(query)
    return repr(text[:60] + "...") if len(text) > 60 else repr(text)


def words_of_many(queries: Iterable[Query], errors: Errors) -> Iterator[tuple[str, ...]]:
    """The words of each query, as :func:`checked` lets them through."""
    return (words for _, words in checked(queries, errors))


class SpanScoringSegmenter:
    """A scorer that weighs every multiword segment, decoded exactly by :mod:`.decoder`.

    Subclasses set ``scorer``, a compiled scorer from ``_kernel.pyx`` that both lists the
    weights (for ranking and scoring) and decodes the best segmentation without leaving C.
    """

    spec: str
    scorer: SpanScorer
    source: str = "the counts"
    """What the scores come from, for messages (the counts store's file)."""

    def span_weights(self, words: tuple[str, ...]) -> IntWeightTable:
        """Weight of every allowed multiword segment (see :mod:`.decoder`)."""
        try:
            return self.scorer.table(words)
        except OverflowError as exc:
            raise self._too_large(exc) from None

    def _too_large(self, exc: OverflowError) -> DataError:
        """Scores are exact integers up to 2^128: counts this large, or n-grams over 26 words
        with a count, are data the method cannot score."""
        return DataError(f"{self.source}: {exc}; these counts are too large to score exactly")

    def segment(self, query: Query) -> Segmentation:
        words = normalize(query)
        try:
            return Segmentation._trusted(words, self.scorer.best(words)[1])
        except OverflowError as exc:
            raise self._too_large(exc) from None

    def segment_many(
        self, queries: Iterable[Query], *, errors: Errors = "raise"
    ) -> Iterator[Segmentation]:
        best = self.scorer.best
        make = Segmentation._trusted
        try:
            for words in words_of_many(queries, errors):
                yield make(words, best(words)[1])
        except OverflowError as exc:
            raise self._too_large(exc) from None

    def rank(self, query: Query, k: int) -> list[tuple[Segmentation, float]]:
        check_k(k)
        words = normalize(query)
        ranked = kbest_breaks(self.span_weights(words), len(words), k)
        return [(Segmentation._trusted(words, breaks), score) for score, breaks in ranked]

    def score(self, segmentation: Segmentation) -> int:
        """The score of any segmentation of a query (-1 if it has a disallowed segment)."""
        return score_breaks(self.span_weights(segmentation.words), segmentation.breaks)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"
