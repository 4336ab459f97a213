"""Wikipedia title sets, served from a store like n-gram counts (membership instead of counts)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from qseg.errors import InputError
from qseg.fileio import StrPath, read_lines
from qseg.query import normalize_key
from qseg.resources.counts import parse_ngram
from qseg.resources.store import Store, StoreBacked, build_from_entries


def read_title_file(path: StrPath) -> set[str]:
    """One title a line, normalized like a query."""
    source = str(path)
    titles = set()
    for lineno, line in read_lines(path):
        if "\t" in line:
            raise InputError(source, lineno, "expected one title a line, found a tab")
        titles.add(parse_ngram(line, source, lineno))
    if not titles:
        raise InputError(source, None, "no titles in file (it is empty)")
    return titles


def read_title_lines(data: bytes) -> list[str]:
    """Titles from UTF-8 bytes, one a line, as :func:`read_title_file` reads a file
    (``ValueError`` naming the line otherwise)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"titles: invalid UTF-8 at byte {exc.start}") from None
    titles = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line:
            try:
                titles.append(parse_ngram(line, "titles", lineno))
            except InputError as exc:
                raise ValueError(str(exc)) from None
    if not titles:
        raise ValueError("titles: none")
    return titles


class TitleSet(StoreBacked):
    """A set of normalized titles; ``TitleSet({"new york"})`` builds one in memory."""

    kind = "titles"

    def __init__(self, titles: Iterable[str] = (), *, store: Store | None = None) -> None:
        if store is None:
            store = build_from_entries(dict.fromkeys(map(normalize_key, titles), 1), kind="titles")
        self._attach(store)

    @classmethod
    def read_plain(cls, path: StrPath) -> tuple[dict[str, int], dict[str, Any]]:
        """One title a line (see :func:`read_title_file`)."""
        return dict.fromkeys(read_title_file(path), 1), {"file": str(path)}

    @property
    def max_words(self) -> int:
        """Words in the longest title."""
        return self.info.max_words

    def contains_many(self, titles: Sequence[str]) -> np.ndarray:
        """Membership of many titles at once, as a numpy ``bool`` array."""
        values, found, _ = self.view.lookup_many(titles)
        return found & (values > 0)

    def __contains__(self, title: object) -> bool:
        """Membership of a title, normalized like a query first."""
        return isinstance(title, str) and self._value(title) > 0

    def __len__(self) -> int:
        return self.info.entries

    def __iter__(self) -> Iterator[str]:
        """Every title (exact stores only), in hash order."""
        for r, key in enumerate(self.store.keys()):
            if self.view.entry_at(r)[0]:
                yield key

    def __repr__(self) -> str:
        where = self.store.path or "memory"
        return f"<TitleSet {self.info.entries} titles, {self.info.mode}, {where}>"
