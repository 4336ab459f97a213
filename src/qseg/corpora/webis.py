"""Readers for the Webis-QSeC-10 file formats (Hagen et al., WWW 2011 and CIKM 2012).

- query files: ``id<TAB>query``;
- crowd votes: ``id<TAB>[(votes, 'seg|ments'), ...]``, a Python literal list; most queries have
  10 votes in all, a few have more (the released file has 8 such queries);
- algorithm outputs (and ``qseg segment`` output): ``id<TAB>seg|ments``.

:func:`read_training_set` reads the training set's folder as the corpus releases it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from qseg.errors import InputError, QsegError
from qseg.fileio import StrPath, read_lines, split_fields
from qseg.query import QueryError, normalize
from qseg.segmentation import Reference, Segmentation

T = TypeVar("T")


def _read_keyed(path: StrPath, parse: Callable[[str, str, int], T]) -> dict[str, T]:
    """``id<TAB>value`` lines as a dict in file order; ids must be unique and non-empty."""
    source = str(path)
    result: dict[str, T] = {}
    for lineno, line in read_lines(path):
        ident, text = split_fields(line, source, lineno, 2)
        if not ident.strip():
            raise InputError(source, lineno, "empty query id")
        if ident in result:
            raise InputError(source, lineno, f"duplicate query id {ident!r}")
        result[ident] = parse(text, source, lineno)
    if not result:
        raise InputError(source, None, "no records in file (it is empty)")
    return result


def _parse_query(text: str, source: str, lineno: int) -> tuple[str, ...]:
    try:
        return normalize(text)
    except QueryError as exc:
        raise InputError(source, lineno, str(exc)) from None


def parse_segmentation(text: str, source: str, lineno: int) -> Segmentation:
    """Pipe text from a file, with errors naming the line."""
    try:
        return Segmentation.from_pipe(text)
    except QsegError as exc:
        raise InputError(source, lineno, str(exc)) from None


def _parse_votes(text: str, source: str, lineno: int) -> list[Reference]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise InputError(source, lineno, "votes are not a Python literal list") from None
    if not isinstance(value, list) or not value:
        raise InputError(source, lineno, "expected a non-empty list of (votes, segmentation)")
    refs: list[Reference] = []
    for item in value:
        if (
            not isinstance(item, tuple)
            or len(item) != 2
            or not isinstance(item[0], int)
            or isinstance(item[0], bool)
            or item[0] < 1
            or not isinstance(item[1], str)
        ):
            raise InputError(
                source, lineno, f"expected (positive votes, 'segmentation'), got {item!r}"
            )
        refs.append(Reference(parse_segmentation(item[1], source, lineno), item[0]))
    if len({r.segmentation.words for r in refs}) != 1:
        raise InputError(source, lineno, "the voted segmentations are of different queries")
    if len({r.segmentation for r in refs}) != len(refs):
        raise InputError(source, lineno, "the same segmentation is listed twice")
    return refs


def read_queries(path: StrPath) -> dict[str, tuple[str, ...]]:
    """Query id -> normalized words, in file order."""
    return _read_keyed(path, _parse_query)


def read_segmentations(path: StrPath) -> dict[str, Segmentation]:
    """Query id -> segmentation, from ``id<TAB>pipe text`` lines (Webis algorithm output)."""
    return _read_keyed(path, parse_segmentation)


def read_votes(path: StrPath) -> dict[str, list[Reference]]:
    """Query id -> references in file order, from the Webis crowd-vote file."""
    return _read_keyed(path, _parse_votes)


def read_references(path: StrPath) -> dict[str, list[Reference]]:
    """Gold references from either a crowd-vote file or an ``id<TAB>segmentation`` file.

    The format is told by the first record: a second column starting with ``[`` is votes.
    A plain segmentation file gives each query one reference with one vote.
    """
    for _, line in read_lines(path):
        if line.partition("\t")[2].lstrip().startswith("["):
            return read_votes(path)
        break
    return {k: [Reference(s, 1)] for k, s in read_segmentations(path).items()}


def _parse_tags(text: str, source: str, lineno: int) -> tuple[str, ...]:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise InputError(source, lineno, "tags are not a Python literal list") from None
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise InputError(source, lineno, "expected a non-empty list of tag strings")
    return tuple(value)


def read_tags(path: StrPath) -> dict[str, tuple[str, ...]]:
    """Query id -> part-of-speech tags, one per word (the Webis ``queries-pos-tagged`` file)."""
    return _read_keyed(path, _parse_tags)


def aligned_tags(words: tuple[str, ...], tags: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The tags if there is one per word, else ``None``: the Webis tagger split 127 of the 3,848
    queries differently (``u.s.`` into three tokens), and those get no part-of-speech features."""
    return tags if tags is not None and len(tags) == len(words) else None


TRAINING_PREFIX = "webis-qsec-10-training-set-"
"""How every file of the released training set is named."""


@dataclass(frozen=True)
class TrainingSet:
    """The crowd votes, each query's words and aligned part-of-speech tags, and the corpus's
    own n-gram counts and Wikipedia titles files (for ``Resources.load``)."""

    folder: Path
    votes: dict[str, list[Reference]]
    words: dict[str, tuple[str, ...]]
    tags: dict[str, tuple[str, ...] | None]
    ngram_file: Path
    titles_file: Path

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file it is read from (what a report fingerprints)."""
        data = self.folder / "data"
        return (
            self.folder / f"{TRAINING_PREFIX}segmentations-crowdsourced.txt",
            data / f"{TRAINING_PREFIX}queries-pos-tagged.txt",
            self.ngram_file,
            self.titles_file,
        )


def read_training_set(folder: StrPath) -> TrainingSet:
    """The released training set in ``folder`` (``webis-qsec-10-training``); 127 queries, which
    its tagger tokenized differently, get no tags."""
    folder = Path(folder)
    data = folder / "data"
    votes = read_votes(folder / f"{TRAINING_PREFIX}segmentations-crowdsourced.txt")
    words = {k: v[0].segmentation.words for k, v in votes.items()}
    tagged = read_tags(data / f"{TRAINING_PREFIX}queries-pos-tagged.txt")
    tags = {k: aligned_tags(words[k], tagged.get(k)) for k in votes}
    return TrainingSet(
        folder,
        votes,
        words,
        tags,
        data / f"{TRAINING_PREFIX}n-gram-web-frequencies-google.txt",
        data / f"{TRAINING_PREFIX}n-gram-wikipedia-titles.txt",
    )
