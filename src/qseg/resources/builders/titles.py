"""Title lists for Wikipedia-based normalization, from an English Wikipedia titles dump.

``enwiki-*-all-titles-in-ns0(.gz)`` holds one article title a line (a first line
``page_title`` is a header), words joined by underscores: ``New_York_Yankees``,
``Mercury_(planet)``. Each title becomes its normalized words (underscores are spaces; case is
folded). A title that ends in a parenthesized disambiguation, ``Mercury_(planet)``, yields both
``mercury planet`` and the bare ``mercury`` (paper 003: "all Wikipedia titles and their
respective disambiguations"). Titles of one word are dropped unless asked for: a one-word
segment never changes a segmentation's score. Titles on an optional stop list (normalized the
same way) are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from qseg._words import normal_words
from qseg.fileio import read_lines
from qseg.query import words_of

_DISAMBIGUATION = re.compile(r"^(.+?)[ _]+\([^()]*\)$")


def title_keys(title: str) -> list[str]:
    """The normalized keys one raw title yields (the full title, and the bare one if any)."""
    return _keys((title,), fewest_words=1)


def phrase_keys(titles: Iterable[str]) -> list[str]:
    """The keys of more than one word of every title, in order: :func:`title_keys` of each
    with the one-word keys left out."""
    return _keys(titles, fewest_words=2)


def _keys(titles: Iterable[str], fewest_words: int) -> list[str]:
    """The keys of at least ``fewest_words`` words of every title, in order, in one loop
    (a call per title costs more than its work over DBpedia's 9 million names). Most titles are
    already keys (DBpedia's names are): they are taken as they are, and the disambiguation
    pattern is tried only on titles that end as it does."""
    keys: list[str] = []
    add, bare = keys.append, _DISAMBIGUATION.match
    for title in titles:
        title = title.replace("_", " ")  # the disambiguation pattern takes either
        ends = title.endswith((")", ")\n"))  # where its `\)$` can match
        for text in (title, found.group(1)) if ends and (found := bare(title)) else (title,):
            words = normal_words(text)  # the words of a key, else None
            if words is not None:
                if len(words) >= fewest_words:
                    add(text)
            elif len(words := words_of(text)) >= fewest_words:
                add(" ".join(words))
    return keys


def dump_titles(files: Iterable[Path], stop: set[str], single_words: bool) -> Iterator[list[str]]:
    """Batches of title keys from dump files (duplicates are removed later, by the builder)."""
    batch: list[str] = []
    for path in files:
        for lineno, line in read_lines(path):
            if lineno == 1 and line == "page_title":
                continue
            for key in title_keys(line):
                if key in stop or (not single_words and " " not in key):
                    continue
                batch.append(key)
            if len(batch) >= 200_000:
                yield batch
                batch = []
    if batch:
        yield batch


def read_stop_titles(path: Path) -> set[str]:
    """A stop list: one title a line, normalized like the titles."""
    stop: set[str] = set()
    for _, line in read_lines(path):
        stop.update(title_keys(line))
    return stop
