"""Interruption that long work can rely on.

Ctrl-C and SIGTERM raise :class:`KeyboardInterrupt` in Python code, but an interruption that
arrives while DuckDB runs a query can be absorbed by the query engine. The command line
therefore records every interrupting signal (:func:`install`), and builds call :func:`check`
between their steps, so an interrupted build always stops and cleans up.
"""

from __future__ import annotations

import signal

_received: list[int] = []


def _handle(signum: int, frame: object) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def install() -> None:
    """Record SIGINT and SIGTERM and raise :class:`KeyboardInterrupt` for both."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _handle)


def check() -> None:
    """Raise :class:`KeyboardInterrupt` if an interrupting signal has arrived."""
    if _received:
        raise KeyboardInterrupt
