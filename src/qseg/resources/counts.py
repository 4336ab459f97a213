"""N-gram counts: ``ngram -> count`` for n-grams of normalized, space-joined words."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property

from qseg.errors import InputError
from qseg.fileio import StrPath, read_lines, split_fields
from qseg.query import QueryError, normalize_key


def parse_count(text: str, source: str, lineno: int) -> int:
    """A count column: a non-negative integer written in decimal digits."""
    if not text.isdigit() or not text.isascii():
        raise InputError(source, lineno, f"count {text!r} is not a non-negative integer")
    return int(text)


def parse_ngram(text: str, source: str, lineno: int) -> str:
    """An n-gram column, normalized like a query, as a space-joined key."""
    try:
        return normalize_key(text)
    except QueryError as exc:
        raise InputError(source, lineno, f"bad n-gram {text!r}: {exc}") from None


class NgramCounts(Mapping[str, int]):
    """In-memory n-gram counts.

    Keys are normalized n-grams joined by single spaces. N-grams that normalize to the same key
    (``New York`` and ``new york`` in case-sensitive Web1T files) have their counts added.
    ``data`` is the plain dict that the compiled segmenter kernel reads.
    """

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.data: dict[str, int] = dict(counts)
        self.max_order = max((k.count(" ") + 1 for k in self.data), default=0)

    @classmethod
    def from_file(cls, path: StrPath) -> NgramCounts:
        """Read ``ngram<TAB>count`` lines (``.gz`` files are decompressed)."""
        counts: dict[str, int] = {}
        source = str(path)
        for lineno, line in read_lines(path):
            ngram, tab, count = line.partition("\t")
            if not tab or "\t" in count:
                split_fields(line, source, lineno, 2)  # raises, naming the field count
            key = parse_ngram(ngram, source, lineno)
            counts[key] = counts.get(key, 0) + parse_count(count, source, lineno)
        if not counts:
            raise InputError(source, None, "no n-gram counts in file (it is empty)")
        return cls(counts)

    def __getitem__(self, ngram: str) -> int:
        return self.data[ngram]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    @cached_property
    def extendable(self) -> frozenset[str]:
        """Multiword n-grams that are proper prefixes of a longer n-gram with a count.

        Segmenters extend a candidate segment word by word and stop as soon as no longer
        n-gram can follow, which makes lookups per query nearly linear in its length.
        """
        prefixes = set()
        for key, count in self.data.items():
            if count > 0 and key.count(" ") >= 2:
                words = key.split(" ")
                prefixes.update(" ".join(words[:end]) for end in range(2, len(words)))
        return frozenset(prefixes)

    def count(self, ngram: str) -> int:
        """The count of an n-gram, 0 if absent."""
        return self.data.get(ngram, 0)
