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
    """The first interrupting signal raises; later ones are only recorded, so that a second
    Ctrl-C cannot break into the cleanup the first one started."""
    _received.append(signum)
    if len(_received) == 1:
        raise KeyboardInterrupt


def settle() -> None:
    """Ignore SIGINT and SIGTERM from now on: the interruption is cleaned up and being
    reported, and the process ends with status 130. A later signal (a second Ctrl-C, or one
    a library that caught the first passes on) arriving while the interpreter shuts down,
    its handlers back to the default, killed the process instead."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


def install() -> None:
    """Record SIGINT and SIGTERM and raise :class:`KeyboardInterrupt` for the first."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _handle)


def check() -> None:
    """Raise :class:`KeyboardInterrupt` if an interrupting signal has arrived."""
    if _received:
        raise KeyboardInterrupt
