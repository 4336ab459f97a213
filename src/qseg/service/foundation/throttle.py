"""The throttle on wrong credentials: at most ``attempts`` wrong tokens a minute from one
client address, whichever route they were tried on (``/login``, an ``Authorization`` header,
a login cookie), counted once for all the workers of a service.

The address is the one the application trusts: the connection's peer, or what a proxy of
``--forwarded-allow-ips`` says. The workers share their counts in one SQLite file in the
folder they already share for their metrics (``PROMETHEUS_MULTIPROC_DIR``); each worker
reads it again only when its modification time has changed, so a request with the right
token costs one ``stat``, not a query. Without that folder (one process, a test), the counts
are the process's own.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import deque
from pathlib import Path

WINDOW = 60.0
"""Seconds a wrong token counts against its address."""
REMEMBERED = 10_000
"""The most addresses remembered (the oldest failures forgotten past it)."""
FILE_NAME = "qseg-throttle.sqlite"


class Throttle:
    """Wrong tokens by client address, in ``folder`` shared by the workers (or in memory)."""

    def __init__(self, attempts: int, folder: str | os.PathLike[str] | None = None) -> None:
        self.attempts = attempts
        self.path = Path(folder, FILE_NAME) if folder else None
        self._failures: dict[str, deque[float]] = {}
        self._seen: int | None = None  # the shared file's mtime when last read
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = 0

    def wait(self, client: str) -> float:
        """Seconds before ``client`` may try a token again (0: now)."""
        now = time.time()
        with self._lock:
            self._refresh()
            failures = self._failures.get(client)
            while failures and failures[0] <= now - WINDOW:
                failures.popleft()
            if not failures or len(failures) < self.attempts:
                return 0.0
            return failures[0] + WINDOW - now

    def failed(self, client: str) -> None:
        """A wrong token from ``client``."""
        now = time.time()
        with self._lock:
            db = self._connection()
            if db is None:
                self._failures.setdefault(client, deque()).append(now)
                if len(self._failures) > REMEMBERED:
                    oldest = min(self._failures, key=lambda a: self._failures[a][-1])
                    del self._failures[oldest]
                return
            with db:
                db.execute("INSERT INTO failures VALUES (?, ?)", (client, now))
                db.execute("DELETE FROM failures WHERE at <= ?", (now - WINDOW,))
                db.execute(
                    "DELETE FROM failures WHERE rowid <= (SELECT MAX(rowid) FROM failures) - ?",
                    (REMEMBERED * self.attempts,),
                )
            self._seen = None  # read again, with the other workers' failures

    def _connection(self) -> sqlite3.Connection | None:
        """This process's connection to the shared file (made after the fork: a connection
        is never carried into a child), or ``None`` without one."""
        if self.path is None:
            return None
        if self._db is None or self._pid != os.getpid():
            db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
            db.execute("PRAGMA synchronous = OFF")  # counts, not records: lost on a crash at worst
            db.execute("CREATE TABLE IF NOT EXISTS failures (address TEXT, at REAL)")
            db.isolation_level = ""
            self._db, self._pid = db, os.getpid()
        return self._db

    def _refresh(self) -> None:
        """The shared counts, read again if another worker has written since."""
        if self.path is None:
            return
        try:
            changed = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            return
        if changed == self._seen:
            return
        db = self._connection()
        assert db is not None
        rows = db.execute(
            "SELECT address, at FROM failures WHERE at > ? ORDER BY at", (time.time() - WINDOW,)
        ).fetchall()
        self._failures = {}
        for address, at in rows:
            self._failures.setdefault(address, deque()).append(at)
        self._seen = changed
