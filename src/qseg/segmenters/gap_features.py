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
Features are computed for many queries at once so that one store lookup serves them all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qseg.resources.counts import NgramCounts
from qseg.resources.titles import TitleSet

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
_SLOT_OFFSETS = (-1, 0, 1, 2)

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


def tag_class(tag: str) -> int:
    """Index of a tag's coarse class in :data:`POS_CLASSES` (``other`` for unknown tags)."""
    return POS_CLASSES.index(_TAG_CLASS.get(tag.upper(), "other"))


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

    @property
    def corpus_size(self) -> float:
        """N in the mutual information: the word total of ``words`` (at least 1)."""
        return float(max(self.words.unigram_total, 1))


def _log_table(n: int, values: np.ndarray, offset: int) -> np.ndarray:
    """log(1 + count) of every span [a, b) of an n-word query, NaN where not counted."""
    table = np.full((n, n + 1), np.nan)
    i = offset
    for a in range(n):
        for b in range(a + 1, min(n, a + MAX_SPAN) + 1):
            table[a, b] = values[i]
            i += 1
    return table


def _span_keys(words: Sequence[str]) -> list[str]:
    n = len(words)
    return [" ".join(words[a:b]) for a in range(n) for b in range(a + 1, min(n, a + MAX_SPAN) + 1)]


def _title_lengths(words: Sequence[str], found: np.ndarray, max_words: int) -> np.ndarray:
    """A boolean table T[a, b]: is words[a:b] a title."""
    n = len(words)
    table = np.zeros((n, n + 1), dtype=bool)
    i = 0
    for a in range(n):
        for b in range(a + 2, min(n, a + max_words) + 1):
            table[a, b] = found[i]
            i += 1
    return table


def _title_keys(words: Sequence[str], max_words: int) -> list[str]:
    n = len(words)
    return [" ".join(words[a:b]) for a in range(n) for b in range(a + 2, min(n, a + max_words) + 1)]


def _word_indicators(word: str | None, log_count: float) -> list[float]:
    if word is None:
        return [math.nan] * 6
    return [
        float(word == "the"),
        float(word == "free"),
        float(word in FUNCTION_WORDS),
        float(any(ch.isdigit() for ch in word)),
        float(len(word)),
        log_count,
    ]


@dataclass(frozen=True)
class QueryTables:
    """Per query: log(1 + count) of every span [a, b) (NaN past 5 words; single words from
    ``words``), and whether each span of 2 or more words is a title."""

    log_counts: np.ndarray
    titles: np.ndarray


def query_tables(queries: Sequence[Sequence[str]], source: FeatureSource) -> list[QueryTables]:
    """The span tables of many queries, with one lookup per store for all of them."""
    keys = [k for words in queries for k in _span_keys(words)]
    logs = np.log1p(source.counts.count_many(keys).astype(np.float64))
    singles = [w for words in queries for w in words]
    word_logs = np.log1p(source.words.count_many(singles).astype(np.float64))
    title_words = min(source.titles.max_words, 10) if source.titles is not None else 0
    title_keys = [k for words in queries for k in _title_keys(words, title_words)]
    found = (
        source.titles.contains_many(title_keys)
        if source.titles is not None and title_keys
        else np.zeros(0, dtype=bool)
    )
    tables = []
    offset = word_offset = title_offset = 0
    for words in queries:
        n = len(words)
        table = _log_table(n, logs, offset)
        offset += sum(min(n, a + MAX_SPAN) - a for a in range(n))
        table[np.arange(n), np.arange(1, n + 1)] = word_logs[word_offset : word_offset + n]
        word_offset += n
        n_titles = sum(max(0, min(n, a + title_words) - a - 1) for a in range(n))
        titles = _title_lengths(words, found[title_offset : title_offset + n_titles], title_words)
        title_offset += n_titles
        tables.append(QueryTables(table, titles))
    return tables


def gap_features(
    queries: Sequence[Sequence[str]],
    source: FeatureSource,
    tags: Sequence[Sequence[str] | None] | None = None,
    tables: Sequence[QueryTables] | None = None,
) -> np.ndarray:
    """One row of :data:`FEATURE_NAMES` per gap, queries one after the other."""
    if tables is None:
        tables = query_tables(queries, source)
    log_n = math.log(source.corpus_size)
    has_titles = source.titles is not None
    rows: list[list[float]] = []
    for q, words in enumerate(queries):
        query_tags = tags[q] if tags is not None else None
        t = tables[q]
        for g in range(len(words) - 1):
            rows.append(_gap_row(words, g, t.log_counts, t.titles, query_tags, log_n, has_titles))
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), len(FEATURE_NAMES))


def _gap_row(
    words: Sequence[str],
    g: int,
    table: np.ndarray,
    titles: np.ndarray,
    tags: Sequence[str] | None,
    log_n: float,
    has_titles: bool,
) -> list[float]:
    n = len(words)
    row = [float(n), float(g), float(n - 2 - g)]
    for k in _SLOT_OFFSETS:
        j = g + k
        inside = 0 <= j < n
        row += _word_indicators(words[j] if inside else None, table[j, j + 1] if inside else 0.0)
    for a, b in WINDOW_SPANS:
        a, b = g + a, g + b
        row.append(table[a, b] if a >= 0 and b <= n else math.nan)
    pair = table[g, g + 2]
    row.append(
        pair + log_n - table[g, g + 1] - table[g + 1, g + 2]
        if pair > 0 and table[g, g + 1] > 0 and table[g + 1, g + 2] > 0
        else math.nan
    )
    for length in (3, 4, 5):
        starts = range(max(0, g + 2 - length), min(g, n - length) + 1)
        values = [table[a, a + length] for a in starts]
        row.append(max(values) if values else math.nan)
    if not has_titles:
        row += [math.nan] * 3
    else:
        across = [b - a for a in range(g + 1) for b in range(g + 2, n + 1) if titles[a, b]]
        left = [g + 1 - a for a in range(g) if titles[a, g + 1]]
        right = [b - g - 1 for b in range(g + 3, n + 1) if titles[g + 1, b]]
        row += [float(max(across, default=0)), float(max(left, default=0))]
        row.append(float(max(right, default=0)))
    width = len(POS_CLASSES)
    for k in _SLOT_OFFSETS:
        j = g + k
        onehot = [math.nan] * width
        if tags is not None and 0 <= j < n:
            onehot = [0.0] * width
            onehot[tag_class(tags[j])] = 1.0
        row += onehot
    return row
