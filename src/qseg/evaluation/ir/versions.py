"""Quoted versions of a segmented query (paper 000, section 2) and BQV_BF's candidates.

A segmentation with n segments gives 2^n versions, one per choice of segments to quote. Quoting
a one-word segment changes nothing, so the distinct versions are the 2^m choices among the m
multiword segments: version 0 is the unsegmented query, the last quotes every multiword segment.
BQV_BF (section 4.1) searches all 2^(l-1) segmentations of an l-word query with every multiword
segment quoted.

A nested segmentation (paper 001's tree) gives one version per set of its multiword
constituents that do not overlap (an antichain of the tree: quoting ``(new york)`` and
``((new york) yankees)`` at once would quote the same words twice): a constituent is quoted
whole, or the choice is left to its children. The version as typed quotes the root's multiword
children, the tree's coarsest reading below the whole query.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from qseg.errors import QsegError
from qseg.segmentation import NestedSegmentation, Segmentation

MAX_NESTED_VERSIONS = 4096
"""The most quoted versions one tree may give (a balanced tree of 12 words gives 101, of 24
words 10,202)."""

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
        spans = segmentation.spans
        return cls.of_spans(segmentation.words, [spans[i] for i in sorted(quote)])

    @classmethod
    def of_spans(cls, words: Sequence[str], spans: Sequence[tuple[int, int]]) -> QuotedQuery:
        """Quote the word ranges ``spans`` (disjoint; one-word ranges are not quoted)."""
        starts = {start: end for start, end in spans if end - start > 1}
        phrases: list[tuple[str, ...]] = []
        free: list[str] = []
        text: list[str] = []
        i = 0
        while i < len(words):
            end = starts.get(i)
            if end is None:
                free.append(words[i])
                text.append(words[i])
                i += 1
                continue
            phrase = tuple(words[i:end])
            phrases.append(phrase)
            text.append('"' + " ".join(phrase) + '"')
            i = end
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


Span = tuple[int, int]


def _antichains(node: Any, start: int) -> tuple[Span, list[list[Span]]]:
    """The word range of a subtree and every set of its constituents that do not overlap."""
    if isinstance(node, str):
        return (start, start + 1), [[]]
    combined: list[list[Span]] = [[]]
    end = start
    for child in node:
        (_, end), choices = _antichains(child, end)
        combined = [left + right for left in combined for right in choices]
    span = (start, end)
    return span, [[span], *combined]


def _width(node: Any) -> int:
    return 1 if isinstance(node, str) else sum(map(_width, node))


def _count(node: Any) -> int:
    if isinstance(node, str):
        return 1
    product = 1
    for child in node:
        product *= _count(child)
    return product + 1


def version_count(tree: NestedSegmentation) -> int:
    """How many quoted versions :func:`nested_versions` gives, without listing them."""
    return _count(tree.tree)


def nested_versions(tree: NestedSegmentation) -> list[QuotedQuery]:
    """The distinct quoted versions of a tree, fewest quotes first, except the version as typed
    (the root's multiword children quoted), which comes last."""
    node = tree.tree
    if isinstance(node, str):
        return [QuotedQuery.of_spans(tree.words, [])]
    if (count := _count(node)) > MAX_NESTED_VERSIONS:
        raise QsegError(
            f"the tree {tree.to_brackets()} has {count} quoted versions; at most "
            f"{MAX_NESTED_VERSIONS} are searched"
        )
    versions: dict[str, QuotedQuery] = {}
    for spans in sorted(_antichains(node, 0)[1], key=len):
        version = QuotedQuery.of_spans(tree.words, spans)
        versions.setdefault(version.text, version)
    typed = _top_level(tree)
    del versions[typed.text]
    return [*versions.values(), typed]


def _top_level(tree: NestedSegmentation) -> QuotedQuery:
    """The root's multiword children quoted: the tree read as its coarsest segmentation."""
    spans, start = [], 0
    for child in tree.tree:
        spans.append((start, start + _width(child)))
        start += _width(child)
    return QuotedQuery.of_spans(tree.words, spans)


def versions_of(structure: Segmentation | NestedSegmentation) -> list[QuotedQuery]:
    """The quoted versions of a flat or nested segmentation, the version as typed last."""
    if isinstance(structure, Segmentation):
        return quoted_versions(structure)
    return nested_versions(structure)


def bqv_candidates(words: tuple[str, ...]) -> Iterator[tuple[Segmentation, QuotedQuery]]:
    """All 2^(l-1) segmentations of ``words``, each with its multiword segments quoted."""
    for breaks in itertools.product((1, 0), repeat=len(words) - 1):
        segmentation = Segmentation(words, breaks)
        yield segmentation, all_quoted(segmentation)
