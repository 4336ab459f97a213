"""Errors that qseg reports to users as one line, without a traceback."""

from __future__ import annotations

from os import PathLike


class QsegError(Exception):
    """Base class of every error qseg raises on purpose (bad input, missing resources)."""


class InputError(QsegError):
    """Bad content in a file or stream; the message names the source and, where known, the line."""

    def __init__(self, source: str | PathLike[str], line: int | None, message: str) -> None:
        self.source = str(source)
        self.line = line
        self.reason = message
        where = self.source if line is None else f"{self.source}:{line}"
        super().__init__(f"{where}: {message}")
