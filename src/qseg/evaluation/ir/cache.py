"""An on-disk cache of search results, so that no quoted query is ever run twice.

Many systems share versions (every system's version 0 is the unsegmented query; BQV_BF's
candidates include everyone's all-quoted versions), and evaluations are rerun. Results are kept
in SQLite, keyed by engine, index fingerprint, query text and depth; a changed collection or
engine configuration has another fingerprint, so stale results are never read.

The database is in WAL mode with a busy timeout, so that several evaluations share one cache
(readers never wait; writers take turns), and every result is committed as it comes (in WAL
mode with ``synchronous=NORMAL`` a commit costs microseconds next to a search), so that a run
that is killed keeps what it searched and holds no lock between searches.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from qseg.evaluation.ir.engines.base import Engine, Ranking
from qseg.evaluation.ir.versions import QuotedQuery

BUSY_TIMEOUT = 600.0
"""Seconds a writer waits for another process's commit before giving up."""


class CachedSearch:
    """``search`` through an on-disk cache (``path=None``: no cache)."""

    def __init__(self, engine: Engine, fingerprint: str, path: str | Path | None) -> None:
        self.engine = engine
        self.key = f"{engine.name}:{fingerprint}"
        self.hits = 0
        self.misses = 0
        self._db: sqlite3.Connection | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            # autocommit: each statement its own transaction
            self._db = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS results (index_key TEXT, query TEXT, depth INTEGER,"
                " ranking TEXT, PRIMARY KEY (index_key, query, depth))"
            )

    def search(self, query: QuotedQuery, depth: int) -> Ranking:
        if self._db is not None:
            row = self._db.execute(
                "SELECT ranking FROM results WHERE index_key = ? AND query = ? AND depth = ?",
                (self.key, query.text, depth),
            ).fetchone()
            if row is not None:
                self.hits += 1
                return [(doc, score) for doc, score in json.loads(row[0])]
        self.misses += 1
        ranking = self.engine.search(query, depth)
        if self._db is not None:
            self._db.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?)",
                (self.key, query.text, depth, json.dumps(ranking)),
            )
        return ranking

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
