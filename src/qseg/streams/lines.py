"""Queries to segment as they come: ``query`` or ``id<TAB>query`` lines, or a list of texts.

Bad lines (invalid UTF-8, NUL bytes, an empty or over-long query, a stray tab, an empty id)
raise an :class:`~qseg.errors.InputError` naming the line, or, with ``skip_bad``, come out as
a :class:`~qseg.streams.records.Skipped` record in their place.

Lines are read as they arrive (a read takes what is there and never waits for more), so that
a co-process that writes a query and waits for its answer is never kept waiting;
:meth:`QueryLines.ready` tells a reader of many at once (a batch) whether the next line is in.
"""

from __future__ import annotations

import os
import select
import stat
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from qseg.errors import InputError, QsegError
from qseg.fileio import decode_line
from qseg.query import QueryError, normalize
from qseg.streams.records import Record, Skipped

__all__ = ["MAX_QUERY_LINE_BYTES", "QueryLines", "Record", "query_arguments", "query_record"]

MAX_QUERY_LINE_BYTES = 1 << 20
"""The longest line of queries read (1 MiB, far more than the word limit allows)."""
_READ = 1 << 16
"""Bytes asked for at a time: one read returns what is there, up to this."""


class QueryLines:
    """``(id, query text)`` for every line of a binary stream (with ``skip_bad``, a
    :class:`Skipped` for each bad one), in order. ``on_wait`` is called before a read that
    would wait for the writer: the place to flush the answers given so far."""

    def __init__(
        self,
        stream: BinaryIO,
        source: str = "<stdin>",
        *,
        skip_bad: bool = False,
        on_wait: Callable[[], None] | None = None,
    ) -> None:
        self.source = source
        self._lines = _Lines(stream, MAX_QUERY_LINE_BYTES, on_wait)
        self._skip_bad = skip_bad

    def ready(self) -> bool:
        """Whether the next line (or the end) can be read without waiting for the writer:
        always for a regular file; for a pipe, FIFO, socket or terminal, if it is there."""
        return self._lines.ready()

    def __iter__(self) -> Iterator[Record | Skipped]:
        for lineno, raw in enumerate(self._lines, start=1):
            record: Record | Skipped
            try:
                record = self._record(raw, lineno)
            except InputError as exc:
                if not self._skip_bad:
                    raise
                record = Skipped(lineno, exc)
            yield record

    def _record(self, raw: bytes | None, lineno: int) -> Record:
        return query_record(raw, lineno, self.source)


def query_record(raw: bytes | None, lineno: int, source: str) -> Record:
    """The ``(id, query text)`` of one line of ``source`` (``None``: a line over
    :data:`MAX_QUERY_LINE_BYTES`), or an :class:`InputError` naming the line: the rules of
    every reader of query lines, local or on Spark."""
    if raw is None:
        raise InputError(source, lineno, f"line longer than {MAX_QUERY_LINE_BYTES:,} bytes")
    text = decode_line(raw, source, lineno)
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
    return ident, text


class _Lines:
    """The lines of a binary stream without their ``\\n``, each given as soon as it is all in
    (one ``read1`` at a time: never waiting for more than the next line), ``None`` for a line
    over ``limit`` bytes, whose rest is read and dropped as it comes (so it is never held).
    A read's whole lines are split at once, at C speed, and wait in a queue."""

    def __init__(self, stream: BinaryIO, limit: int, on_wait: Callable[[], None] | None) -> None:
        self._stream = stream
        self._limit = limit
        self._on_wait = on_wait
        self._whole: deque[bytes] = deque()
        self._part = b""  # the start of the next line, read without its end
        self._ended = False
        self._fd = _waitable_fd(stream)

    def ready(self) -> bool:
        return self._fd is None or bool(self._whole) or self._ended or not self._would_wait()

    def _would_wait(self) -> bool:
        """Whether a read now would wait: the stream can keep a reader waiting and has
        nothing to read (a select with no timeout)."""
        return self._fd is not None and not select.select([self._fd], [], [], 0)[0]

    def __iter__(self) -> Iterator[bytes | None]:
        while True:
            while self._whole:
                line = self._whole.popleft()
                yield line if len(line) <= self._limit else None
            if len(self._part) > self._limit:
                self._drop_line()
                yield None
            elif not self._read():
                if self._part:  # the last line, with no newline
                    yield self._part
                return

    def _read(self) -> bool:
        """Read once more, queueing the whole lines; ``False`` at the end of the stream."""
        if self._ended:
            return False
        if self._on_wait is not None and self._would_wait():
            self._on_wait()
        block = self._stream.read1(_READ)  # type: ignore[attr-defined]
        if not block:
            self._ended = True
            return False
        data = self._part + block
        last = data.rfind(b"\n")
        if last < 0:
            self._part = data
        else:
            self._whole.extend(data[:last].split(b"\n"))
            self._part = data[last + 1 :]
        return True

    def _drop_line(self) -> None:
        """Pass over the rest of an over-long line, up to and with its newline."""
        while True:
            self._part = b""
            if not self._read():
                return
            if self._whole:
                self._whole.popleft()
                return


def _waitable_fd(stream: BinaryIO) -> int | None:
    """The descriptor to poll before a read, if a read may wait on it: not for a regular
    file (or a here-string, or a ``< file`` redirection), nor a stream in memory."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return None if stat.S_ISREG(os.fstat(fd).st_mode) else fd


def query_arguments(texts: Iterable[str]) -> Iterator[Record]:
    """Queries given as arguments, checked like lines (``QUERY argument N`` in errors)."""
    for position, text in enumerate(texts, start=1):
        try:
            normalize(text)
        except QueryError as exc:
            raise QsegError(f"QUERY argument {position}: {exc}") from None
        yield None, text
