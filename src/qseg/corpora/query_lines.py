"""Queries to segment as they come: ``query`` or ``id<TAB>query`` lines, or a list of texts.

Bad lines (invalid UTF-8, NUL bytes, an empty or over-long query, a stray tab, an empty id)
raise an :class:`~qseg.errors.InputError` naming the line, or, with ``skip_bad``, are handed to
``on_skip`` and passed over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from qseg.errors import InputError, QsegError
from qseg.fileio import decode_line
from qseg.query import QueryError, normalize

Record = tuple[str | None, str]
"""A query to segment: its id (``None`` if it has none) and its text."""
MAX_QUERY_LINE_BYTES = 1 << 20
"""The longest line of queries read (1 MiB, far more than the word limit allows)."""


def read_query_lines(
    stream: BinaryIO,
    source: str = "<stdin>",
    *,
    skip_bad: bool = False,
    on_skip: Callable[[InputError], None] | None = None,
) -> Iterator[Record]:
    """``(id, query text)`` for every line of a binary stream, one line at a time (so that an
    interactive session gets each answer at once). A line is read at most
    :data:`MAX_QUERY_LINE_BYTES` at a time: a longer one is refused (or skipped) without
    being held in memory."""
    for lineno, raw in enumerate(_bounded_lines(stream), start=1):
        try:
            if raw is None:
                raise InputError(source, lineno, f"line longer than {MAX_QUERY_LINE_BYTES:,} bytes")
            text = decode_line(raw.rstrip(b"\n"), source, lineno)
            ident: str | None = None
            if "\t" in text:
                ident, text = text.split("\t", 1)
                if "\t" in text:
                    raise InputError(source, lineno, "expected `query` or `id<TAB>query`")
                if not ident.strip():
                    raise InputError(source, lineno, "empty query id")
            try:
                normalize(text)
            except QueryError as exc:
                raise InputError(source, lineno, str(exc)) from None
        except InputError as exc:
            if not skip_bad:
                raise
            if on_skip is not None:
                on_skip(exc)
            continue
        yield ident, text


def _bounded_lines(stream: BinaryIO) -> Iterator[bytes | None]:
    """The lines of ``stream``, ``None`` for one over the limit (whose rest is read and
    dropped a block at a time)."""
    while line := stream.readline(MAX_QUERY_LINE_BYTES + 1):
        if len(line) <= MAX_QUERY_LINE_BYTES or line.endswith(b"\n"):
            yield line
            continue
        while (rest := stream.readline(MAX_QUERY_LINE_BYTES)) and not rest.endswith(b"\n"):
            pass
        yield None


def query_arguments(texts: Iterable[str]) -> Iterator[Record]:
    """Queries given as arguments, checked like lines (``QUERY argument N`` in errors)."""
    for position, text in enumerate(texts, start=1):
        try:
            normalize(text)
        except QueryError as exc:
            raise QsegError(f"QUERY argument {position}: {exc}") from None
        yield None, text
