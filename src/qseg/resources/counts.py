"""N-gram counts: ``ngram -> count`` for n-grams of normalized, space-joined words.

Counts are always served from a store (:mod:`qseg.resources.store`): a store file built by
``qseg build ngrams`` and memory-mapped, or an exact store built in memory from a plain
``ngram<TAB>count`` file or a Python mapping.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from qseg.errors import InputError
from qseg.fileio import StrPath, read_lines, split_fields
from qseg.query import QueryError, ngram_key, normalize_key
from qseg.resources.store import Store, StoreBacked, build_from_entries

MAX_COUNT = (1 << 63) - 1
"""The largest count, alone or summed over the lines of one n-gram (a store keeps 63 bits)."""


def parse_count(text: str, source: str, lineno: int) -> int:
    """A count column: a non-negative integer written in ASCII decimal digits, at most
    :data:`MAX_COUNT`."""
    if not text.isdigit() or not text.isascii():
        raise InputError(source, lineno, f"count {text!r} is not a non-negative integer")
    if len(text) > 19 or int(text) > MAX_COUNT:
        raise InputError(source, lineno, f"count {text} is larger than {MAX_COUNT} (2^63 - 1)")
    return int(text)


def parse_count_line(line: str, source: str, lineno: int) -> tuple[str | None, int]:
    """One ``ngram<TAB>count`` line: the n-gram's key (``None`` for an n-gram that is not a
    query n-gram, see :func:`qseg.query.ngram_key`) and its count. The one definition of a
    count line: the plain-file reader uses it, and the DuckDB builder checks the same rules in
    SQL and, where a line breaks them, names it with this function."""
    ngram, tab, count = line.partition("\t")
    if not tab or "\t" in count:
        split_fields(line, source, lineno, 2)  # raises, naming the field count
    value = parse_count(count, source, lineno)
    try:
        return ngram_key(ngram), value
    except QueryError as exc:
        raise InputError(source, lineno, f"bad n-gram {ngram!r}: {exc}") from None


def first_bad_count_line(paths: Sequence[StrPath]) -> None:
    """Raise the error of the first line of ``paths`` that is not a count line (blank lines
    are skipped); return if there is none."""
    for path in paths:
        for lineno, line in read_lines(path):
            if line:
                parse_count_line(line, str(path), lineno)


def parse_ngram(text: str, source: str, lineno: int) -> str:
    """An n-gram column, normalized like a query, as a space-joined key."""
    try:
        return normalize_key(text)
    except QueryError as exc:
        raise InputError(source, lineno, f"bad n-gram {text!r}: {exc}") from None


def read_count_file(path: StrPath) -> tuple[dict[str, int], int]:
    """``ngram<TAB>count`` lines (:func:`parse_count_line`): counts by normalized key, and how
    many n-grams were skipped.

    N-grams equal after normalization have their counts added; n-grams with a reserved
    character are skipped (see :func:`qseg.query.ngram_key`).
    """
    counts: dict[str, int] = {}
    skipped = 0
    source = str(path)
    for lineno, line in read_lines(path):
        if not line:
            continue  # blank lines are skipped, by the builder too
        key, value = parse_count_line(line, source, lineno)
        if key is None:
            skipped += 1
            continue
        counts[key] = total = counts.get(key, 0) + value
        if total > MAX_COUNT:
            raise InputError(
                source, lineno, f"the counts of {key!r} add up to more than {MAX_COUNT}"
            )
    if not counts:
        raise InputError(source, None, "no n-gram counts in file (it is empty)")
    return counts, skipped


class NgramCounts(StoreBacked):
    """N-gram counts served from a store; ``NgramCounts({"new york": 10})`` builds one in memory.

    Counts of n-grams that normalize to the same key (``New York`` and ``new york`` in
    case-sensitive Web1T files) are added.
    """

    kind = "counts"

    def __init__(self, counts: Mapping[str, int] | None = None, *, store: Store | None = None):
        if store is None:
            entries: dict[str, int] = {}
            for ngram, count in (counts or {}).items():
                key = normalize_key(ngram)
                entries[key] = entries.get(key, 0) + count
            store = build_from_entries(entries, kind="counts")
        self._attach(store)

    @classmethod
    def read_plain(cls, path: StrPath) -> tuple[dict[str, int], dict[str, Any]]:
        """``ngram<TAB>count`` lines (see :func:`read_count_file`)."""
        entries, skipped = read_count_file(path)
        return entries, {"file": str(path), "skipped_ngrams": skipped}

    @property
    def max_order(self) -> int:
        """Words in the longest n-gram with a count."""
        return self.info.max_words

    @property
    def unigram_total(self) -> int:
        """Sum of the 1-gram counts (the corpus size for relative frequencies)."""
        return self.info.unigram_total

    def count(self, ngram: str) -> int:
        """The count of an n-gram, 0 if absent: the key as given if stored (internal stores
        keep marks such as ``(``), else the n-gram normalized like a query."""
        return self._value(ngram)

    def __getitem__(self, ngram: str) -> int:
        """The count of an n-gram; ``KeyError`` if it has none, as a mapping does."""
        value = self.count(ngram)
        if not value:
            raise KeyError(ngram)
        return value

    def __iter__(self) -> Iterator[str]:
        """Every n-gram with a count (exact stores only), in hash order."""
        return (key for key, _ in self.items())

    def keys(self) -> Iterator[str]:
        return iter(self)

    def values(self) -> Iterator[int]:
        return (value for _, value in self.items())

    def count_many(self, ngrams: Sequence[str]) -> np.ndarray:
        """Counts of many n-grams at once (0 where absent), as a numpy ``uint64`` array."""
        return self.view.lookup_many(ngrams)[0]

    def get(self, ngram: str, default: int = 0) -> int:
        value = self.count(ngram)
        return value if value else default

    def __contains__(self, ngram: object) -> bool:
        return isinstance(ngram, str) and self.count(ngram) > 0

    def __len__(self) -> int:
        """N-grams with a count (prefix-only entries excluded)."""
        return self.info.entries

    def items(self) -> Iterator[tuple[str, int]]:
        """Every n-gram with its count (exact stores only), in hash order."""
        for r, key in enumerate(self.store.keys()):
            value = int(self.view.entry_at(r)[0])
            if value:
                yield key, value

    def __repr__(self) -> str:
        where = self.store.path or "memory"
        return f"<NgramCounts {self.info.entries} n-grams, {self.info.mode}, {where}>"
