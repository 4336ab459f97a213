"""Quoted versions of a segmented query (paper 000, section 2) and BQV_BF's candidates.

A segmentation with n segments gives 2^n versions, one per choice of segments to quote. Quoting
a one-word segment changes nothing, so the distinct versions are the 2^m choices among the m
multiword segments: version 0 is the unsegmented query, the last quotes every multiword segment.
BQV_BF (section 4.1) searches all 2^(l-1) segmentations of an l-word query with every multiword
segment quoted.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from qseg.segmentation import Segmentation

_WORD = re.compile(r"[^\W_]+")


def ir_words(text: str, stopwords: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The words a search engine sees: lower-case alphanumeric runs (NFKC), minus ``stopwords``."""
    text = unicodedata.normalize("NFKC", text).lower()
    return tuple(w for w in _WORD.findall(text) if w not in stopwords)


@dataclass(frozen=True)
class QuotedQuery:
    """A query for a search engine: phrases that must occur (quoted) and free words."""

    phrases: tuple[tuple[str, ...], ...]
    free: tuple[str, ...]
    text: str

    @classmethod
    def of(cls, segmentation: Segmentation, quote: frozenset[int]) -> QuotedQuery:
        """Quote the segments whose indices are in ``quote`` (one-word segments never)."""
        phrases: list[tuple[str, ...]] = []
        free: list[str] = []
        text: list[str] = []
        for index, segment in enumerate(segmentation.segments):
            if index in quote and len(segment) > 1:
                phrases.append(segment)
                text.append('"' + " ".join(segment) + '"')
            else:
                free.extend(segment)
                text.extend(segment)
        return cls(tuple(phrases), tuple(free), " ".join(text))

    def __str__(self) -> str:
        return self.text


def _multiword(segmentation: Segmentation) -> list[int]:
    return [i for i, segment in enumerate(segmentation.segments) if len(segment) > 1]


def quoted_versions(segmentation: Segmentation) -> list[QuotedQuery]:
    """The distinct quoted versions, unsegmented first and all-quoted last."""
    multiword = _multiword(segmentation)
    return [
        QuotedQuery.of(segmentation, frozenset(chosen))
        for size in range(len(multiword) + 1)
        for chosen in itertools.combinations(multiword, size)
    ]


def all_quoted(segmentation: Segmentation) -> QuotedQuery:
    """Every multiword segment quoted: the segmentation as a user would type it."""
    return QuotedQuery.of(segmentation, frozenset(_multiword(segmentation)))


def bqv_candidates(words: tuple[str, ...]) -> Iterator[tuple[Segmentation, QuotedQuery]]:
    """All 2^(l-1) segmentations of ``words``, each with its multiword segments quoted."""
    for breaks in itertools.product((1, 0), repeat=len(words) - 1):
        segmentation = Segmentation(words, breaks)
        yield segmentation, all_quoted(segmentation)
