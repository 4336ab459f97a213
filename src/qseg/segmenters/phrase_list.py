"""Any segmenter with a team's phrase list kept whole, at run time, without retraining.

The rule: every occurrence in a query of a listed phrase (two words or more) is one segment or
inside one: the segmenter's answer is taken, and each break inside an occurrence is removed.
Occurrences that overlap or touch a common word (``new york`` and ``york yankees`` in ``new
york yankees``) are therefore joined into one segment. Everything else is the segmenter's own
answer: a listed phrase costs a query only the lookups of its n-grams (a word's n-grams are
looked up while the list holds a phrase that begins with them).

Ranked answers are the segmenter's, each with the rule applied, those that become equal to a
better one left out (so there may be fewer than ``k``). A nested answer keeps each occurrence
a node of the tree where the segmenter gives break probabilities (a trained model: the gaps
inside occurrences are given probability 0, joined first); otherwise the tree is held to the
flat answer, whose segments hold each occurrence whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from qseg.query import Query, normalize
from qseg.segmentation import Segmentation
from qseg.segmenters.base import Errors, Segmenter

MAX_COMPILED_WORDS = 64
"""The longest query whose listed phrases are found by the compiled lookup."""

if TYPE_CHECKING:
    from qseg.resources.titles import TitleSet


class KeepingPhrases:
    """``segmenter`` with the phrases of ``phrases`` kept whole (the module's rule)."""

    def __init__(self, segmenter: Segmenter, phrases: TitleSet) -> None:
        self.segmenter = segmenter
        self.phrases = phrases
        self._lookup = phrases.view.lookup
        self._gaps = phrases.view.phrase_gaps
        self._longest = max(phrases.max_words, 2)

    @property
    def spec(self) -> str:
        return self.segmenter.spec

    @property
    def uses_tags(self) -> bool:
        return bool(getattr(self.segmenter, "uses_tags", False))

    def joined_gaps(self, words: Sequence[str]) -> tuple[int, ...]:
        """The gaps of ``words`` inside an occurrence of a listed phrase, in order (compiled:
        :meth:`~qseg.resources._store.StoreView.phrase_gaps`, for queries of up to 64 words)."""
        if len(words) <= MAX_COMPILED_WORDS:
            return self._gaps(tuple(words), self._longest)
        lookup, longest, n = self._lookup, self._longest, len(words)
        inside: set[int] = set()
        for start in range(n - 1):
            key = words[start]
            for end in range(start + 1, min(n, start + longest)):
                key = f"{key} {words[end]}"
                found, value, extendable = lookup(key)
                if not found:
                    break
                if value > 0:
                    inside.update(range(start, end))
                if not extendable:
                    break
        return tuple(sorted(inside))

    def keep(self, segmentation: Segmentation) -> Segmentation:
        """``segmentation`` with no break inside a listed phrase's occurrence."""
        return _joined(segmentation, self.joined_gaps(segmentation.words))

    def segment(self, query: Query, **options: Any) -> Segmentation:
        answer = self.segmenter.segment(query, **options)
        words = answer.words  # (normalized: a tuple; the compiled lookup called at once)
        if len(words) <= MAX_COMPILED_WORDS:
            return _joined(answer, self._gaps(words, self._longest))
        return self.keep(answer)

    def segment_many(
        self, queries: Iterable[Query], *, errors: Errors = "raise", **options: Any
    ) -> Iterator[Segmentation]:
        for answer in self.segmenter.segment_many(queries, errors=errors, **options):
            yield self.keep(answer)

    def rank(self, query: Query, k: int, **options: Any) -> list[tuple[Segmentation, float]]:
        ranked: list[tuple[Segmentation, float]] = []
        seen: set[tuple[int, ...]] = set()
        for answer, score in self.segmenter.rank(query, k, **options):
            kept = self.keep(answer)
            if kept.breaks not in seen:
                seen.add(kept.breaks)
                ranked.append((kept, score))
        return ranked

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its segmenter and list (Spark ships it so): the lookup is made again."""
        return type(self), (self.segmenter, self.phrases)

    def __repr__(self) -> str:
        return f"<{self.spec} keeping {len(self.phrases):,} listed phrases whole>"


class KeepingPhrasesWithProbabilities(KeepingPhrases):
    """:class:`KeepingPhrases` of a segmenter that gives break probabilities: those of the
    gaps inside an occurrence are 0 (what nested answers are built from)."""

    def break_probabilities(
        self, queries: Sequence[str | Sequence[str]], *rest: Any, **options: Any
    ) -> list[np.ndarray]:
        given = self.segmenter.break_probabilities(queries, *rest, **options)  # type: ignore[attr-defined]
        kept = []
        for query, probabilities in zip(queries, given, strict=True):
            gaps = self.joined_gaps(normalize(query))
            if gaps:
                probabilities = np.array(probabilities, dtype=np.float64)
                probabilities[list(gaps)] = 0.0
            kept.append(probabilities)
        return kept


def _joined(segmentation: Segmentation, gaps: tuple[int, ...]) -> Segmentation:
    """``segmentation`` with no break at ``gaps`` (itself if it has none there)."""
    if not gaps or not any(segmentation.breaks[g] for g in gaps):
        return segmentation
    breaks = list(segmentation.breaks)
    for gap in gaps:
        breaks[gap] = 0
    return Segmentation._trusted(segmentation.words, tuple(breaks))


def keeping_phrases(segmenter: Segmenter, phrases: TitleSet) -> KeepingPhrases:
    """``segmenter`` with ``phrases`` kept whole (the module's rule)."""
    if hasattr(segmenter, "break_probabilities"):
        return KeepingPhrasesWithProbabilities(segmenter, phrases)
    return KeepingPhrases(segmenter, phrases)
