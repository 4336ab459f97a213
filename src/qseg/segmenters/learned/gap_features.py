"""Features of the gap between two adjacent query words (paper 004; Bergsma & Wang 2007).

A gap ``g`` lies between ``L0 = words[g]`` and ``R0 = words[g + 1]``; ``L1``, ``R1`` are the
next words outward. Every gap gets one row of :data:`FEATURE_NAMES`, in these groups:

- indicator features: query length and position, and for ``L1 L0 R0 R1`` whether the word is
  *the*, *free*, a function word (:data:`FUNCTION_WORDS`), holds a digit, its length;
- statistical features: log counts of the four words and of every span of 2-5 words in a
  window of four words either side that touches the gap, the mutual information of ``L0 R0``
  (log C(L0 R0) + log N - log C(L0) - log C(R0)), and the largest count of a 3-, 4- and
  5-word span across the gap;
- Wikipedia features: the longest title across the gap, ending at ``L0``, starting at ``R0``;
- part-of-speech features (where the corpus gives tags): a coarse class of each of the four
  words, one-hot over :data:`POS_CLASSES`.

Missing values (a word outside the query, a span longer than the counts' 5 words, no tags)
are NaN, which the gradient-boosted trees treat as missing; linear models impute them.
The tables and rows are computed by the compiled kernel ``_gap_kernel.pyx`` for a batch of
queries at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qseg.resources.counts import NgramCounts
from qseg.resources.titles import TitleSet
from qseg.segmenters.learned._gap_kernel import gap_rows, span_tables

MAX_SPAN = 5
"""Words in the longest n-gram with a count (Web1T and the Webis files stop at 5)."""

WINDOW = 4
"""Words considered on either side of a gap."""

FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "for",
        "to",
        "and",
        "or",
        "on",
        "with",
        "at",
        "by",
        "from",
        "&",
        "vs",
        "de",
        "la",
        "as",
        "into",
        "about",
        "near",
    ]
)

SLOTS = ("L1", "L0", "R0", "R1")

POS_CLASSES = (
    "noun",
    "proper",
    "adjective",
    "preposition",
    "determiner",
    "number",
    "verb",
    "conjunction",
    "adverb",
    "pronoun",
    "possessive",
    "other",
)
"""Coarse word classes for the Penn Treebank and Brown tags found in the Webis corpus."""

_TAG_CLASS = {
    tag: cls
    for cls, tags in {
        "noun": "NN NNS",
        "proper": "NP NPS NNP NNPS",
        "adjective": "JJ JJR JJS OD",
        "preposition": "IN TO RP",
        "determiner": "DT PDT",
        "number": "CD",
        "verb": "VB VBD VBG VBN VBZ VBP MD BE BEZ BER BED BEDZ BEM BEG BEN DO DOD DOZ DOG "
        "HV HVZ HVG HVD",
        "conjunction": "CC CS",
        "adverb": "RB RBS RBR WRB XNOT",
        "pronoun": "PP PP$ PPX PN WP WP$ WDT EX PRP PRP$",
        "possessive": "POS",
    }.items()
    for tag in tags.split()
}


TAG_INDEX = {tag: POS_CLASSES.index(cls) for tag, cls in _TAG_CLASS.items()}
"""Tag -> index of its class in :data:`POS_CLASSES` (tags not listed are ``other``)."""


def _window_spans() -> tuple[tuple[int, int], ...]:
    """Spans (start, end) relative to L0 = 0 with 2-5 words that cross or touch the gap."""
    spans = []
    for length in range(2, MAX_SPAN + 1):
        for start in range(-WINDOW + 1, WINDOW):
            end = start + length  # exclusive, R0 is at 1
            touches = start <= 1 and end >= 1  # ends at L0 or later, starts at R0 or earlier
            if touches and start > -WINDOW and end <= WINDOW + 1:
                spans.append((start, end))
    return tuple(spans)


WINDOW_SPANS = _window_spans()
_WINDOW_ARRAY = np.array(WINDOW_SPANS, dtype=np.int64).reshape(-1, 2)
"""The same spans as the int64 (start, end) rows the compiled kernel reads."""


def _names() -> tuple[str, ...]:
    names = ["words", "position", "from_end"]
    for slot in SLOTS:
        names += [f"{slot}_is_the", f"{slot}_is_free", f"{slot}_function", f"{slot}_digit"]
        names += [f"{slot}_chars", f"{slot}_log_count"]
    names += [f"log_count[{a},{b})" for a, b in WINDOW_SPANS]
    names += ["mi", "max_log_count_3", "max_log_count_4", "max_log_count_5"]
    names += ["title_across", "title_ending_left", "title_starting_right"]
    names += [f"{slot}_pos_{cls}" for slot in SLOTS for cls in POS_CLASSES]
    return tuple(names)


FEATURE_NAMES = _names()


@dataclass(frozen=True)
class FeatureSource:
    """What the gap features are computed from.

    ``words`` counts single words; it may be the same store as ``counts`` when that holds
    1-grams (Web1T does; the Webis n-gram file does not, so the built-in counts serve).
    """

    counts: NgramCounts
    words: NgramCounts
    titles: TitleSet | None = None
    names: NgramCounts | None = None
    """Name statistics (:mod:`qseg.segmenters.learned.name_features`), for models using them."""

    @property
    def corpus_size(self) -> float:
        """N in the mutual information: the word total of ``words`` (at least 1)."""
        return float(max(self.words.unigram_total, 1))


@dataclass(frozen=True)
class QueryTables:
    """Per query: log(1 + count) of every span [a, b) (NaN past 5 words; single words from
    ``words``), whether each span of 2 or more words is a title, and log N of the counts."""

    log_counts: np.ndarray
    titles: np.ndarray
    log_corpus_size: float


@dataclass(frozen=True)
class SpanTables:
    """The :class:`QueryTables` of a batch of queries, flat: the n x (n + 1) cells of query q
    start at ``offsets[q]``; ``tables[q]`` is a view of them."""

    offsets: np.ndarray
    log_counts: np.ndarray
    titles: np.ndarray
    log_corpus_size: float

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, q: int) -> QueryTables:
        start, end = int(self.offsets[q]), int(self.offsets[q + 1])
        n = int((math.isqrt(4 * (end - start) + 1) - 1) // 2)  # cells = n * (n + 1)
        return QueryTables(
            self.log_counts[start:end].reshape(n, n + 1),
            self.titles[start:end].reshape(n, n + 1),
            self.log_corpus_size,
        )


def query_tables(queries: Sequence[Sequence[str]], source: FeatureSource) -> SpanTables:
    """The span tables of many queries, looked up in one pass of the compiled kernel."""
    titles = source.titles
    offsets, counts, is_title = span_tables(
        [tuple(words) for words in queries],
        source.counts.view,
        source.words.view,
        titles.view if titles is not None else None,
        MAX_SPAN,
        min(titles.max_words, 10) if titles is not None else 0,
    )
    return SpanTables(offsets, np.log1p(counts), is_title, math.log(source.corpus_size))


def gap_features(
    queries: Sequence[Sequence[str]],
    source: FeatureSource,
    tags: Sequence[Sequence[str] | None] | None = None,
    tables: SpanTables | None = None,
) -> np.ndarray:
    """One row of :data:`FEATURE_NAMES` per gap, queries one after the other."""
    queries = [tuple(words) for words in queries]
    if tables is None:
        tables = query_tables(queries, source)
    return gap_rows(
        queries,
        tags,
        tables.log_counts,
        tables.titles.view(np.uint8),
        tables.offsets,
        _WINDOW_ARRAY,
        math.log(source.corpus_size),
        source.titles is not None,
        FUNCTION_WORDS,
        TAG_INDEX,
        len(POS_CLASSES),
        len(FEATURE_NAMES),
    )


PAIR_FEATURES = ("log count L0 R1", "log count L1 R0")


def pair_count_features(words: Sequence[tuple[str, ...]], counts: NgramCounts) -> np.ndarray:
    """Per gap, ``log(1 + count)`` of the 2-grams ``L0 R1`` and ``L1 R0``: the word before
    the gap with the word after next, and the word before last with the word after the gap
    (NaN where the query has no such word)."""
    keys: list[str] = []
    where: list[tuple[int, int]] = []
    gaps = 0
    for w in words:
        for g in range(len(w) - 1):
            if g + 2 < len(w):
                keys.append(f"{w[g]} {w[g + 2]}")
                where.append((gaps, 0))
            if g >= 1:
                keys.append(f"{w[g - 1]} {w[g + 1]}")
                where.append((gaps, 1))
            gaps += 1
    out = np.full((gaps, 2), np.nan, dtype=np.float32)
    if keys:
        values = np.log1p(counts.count_many(keys).astype(np.float64))
        rows, cols = zip(*where, strict=True)
        out[list(rows), list(cols)] = values
    return out
