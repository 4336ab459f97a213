"""An annotation project's SQLite file: its schema, making and publishing it, the checks that
open it (SQLite's header, the application mark, the schema version and every table and column,
``PRAGMA quick_check`` once per unchanged file), the connections every change goes through
and what an SQLite error means for the user, in one line each.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from functools import cache
from pathlib import Path

from qseg.errors import DataError, PathError, QsegError

SCHEMA_VERSION = 1


APPLICATION = "qseg annotation project"


BUSY_SECONDS = 30.0
"""How long a change waits for another connection's write lock (another annotator's save,
another process's batch) before saying the project is in use."""


OPEN_BUSY_SECONDS = 2.0
"""How long opening waits for a lock: a project another process holds is reported at once,
not after :data:`BUSY_SECONDS`."""


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE queries (
    qid TEXT PRIMARY KEY, text TEXT NOT NULL, position INTEGER NOT NULL UNIQUE
);
CREATE TABLE annotators (name TEXT PRIMARY KEY, added REAL NOT NULL);
CREATE TABLE annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    qid TEXT NOT NULL REFERENCES queries(qid),
    annotator TEXT NOT NULL REFERENCES annotators(name),
    mode TEXT NOT NULL CHECK (mode IN ('flat', 'nested')),
    value TEXT NOT NULL,
    saved REAL NOT NULL
);
CREATE INDEX annotations_by_query ON annotations (qid, annotator, mode, id);
CREATE TABLE IF NOT EXISTS suggested (id INTEGER PRIMARY KEY REFERENCES annotations(id));
"""


_LATER_TABLES = {"suggested"}
"""Tables a project made by an earlier qseg of the same schema version may lack: made at its
first use."""


class ProjectError(DataError):
    """A project file qseg cannot use: not a project, of a newer qseg, damaged, or held by
    another process."""


class ProjectExists(PathError):
    """A project made where one already is (perhaps made by another process a moment ago)."""


EXISTS = "exists: open it as a project, or choose a new file"


_HEADER = b"SQLite format 3\x00"


_SOUND: dict[str, tuple[int, int, int, int]] = {}
"""Project files this process found sound (``PRAGMA quick_check``), by their path and their
state then (device, inode, size, modification time): one unchanged since is not read whole
again."""


def check_folder(path: str | Path, *, write: bool = False) -> None:
    """The folder of a project must exist, and to write the project be writable: SQLite
    writes the project's -wal and -shm files beside it."""
    folder = Path(path).parent
    if not folder.is_dir():
        if folder.exists():
            raise PathError(path, f"{folder} is not a folder")
        raise PathError(path, f"the folder {folder} does not exist")
    if write and not os.access(folder, os.W_OK):
        raise PathError(path, _read_only_folder(folder))


def _read_only_folder(folder: Path) -> str:
    return f"the folder {folder} is not writable (SQLite writes the -wal and -shm files there)"


def make_file(path: str) -> None:
    """Write the schema, the application mark and the schema version into the empty SQLite
    file ``path``, in WAL mode (kept in the file)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.executescript(f"BEGIN; {_SCHEMA}")
        db.execute("INSERT INTO meta VALUES ('application', ?)", (APPLICATION,))
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")


def publish(draft: Path, path: Path) -> None:
    """Put the made ``draft`` at ``path`` unless something is there: a hard link is atomic;
    where the file system has none, a rename after a last look."""
    try:
        os.link(draft, path)
    except FileExistsError:
        raise ProjectExists(path, EXISTS) from None
    except OSError:
        if path.exists():
            raise ProjectExists(path, EXISTS) from None
        os.rename(draft, path)


def check_project(path: str | Path) -> None:
    """Refuse a file that is not a qseg project, of a newer schema, damaged or locked by
    another process (each in its own line), having only read it: a refused file is left as
    it was (opening it for writing would switch it to WAL)."""
    _check_header(path)
    try:
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=OPEN_BUSY_SECONDS)) as db:
            _check_mark(path, db)
            _check_schema(path, db)
            _check_integrity(path, db)
    except sqlite3.DatabaseError as exc:
        raise database_error(str(path), exc) from None


def _check_header(path: str | Path) -> None:
    """SQLite's first 100 bytes: its mark, and file format versions (bytes 18 and 19) that
    SQLite writes and reads. Others make it open the file read-only (every save would fail)
    or not at all."""
    with open(path, "rb") as handle:
        head = handle.read(100)
    if len(head) < 100 or not head.startswith(_HEADER):
        raise ProjectError(f"{path}: not a qseg annotation project (not an SQLite database)")
    versions = ((18, "write", "would refuse every change"), (19, "read", "cannot read it"))
    for byte, kind, fails in versions:
        if head[byte] not in (1, 2):
            raise damaged(
                path,
                f"its SQLite header gives file format {kind} version {head[byte]} (byte {byte}), "
                f"not 1 or 2: SQLite {fails}",
            )


def _check_mark(path: str | Path, db: sqlite3.Connection) -> None:
    """The application mark; a file without it is no project, unless it has the project's
    other tables (then its mark was lost)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such" not in str(exc):
            raise
        row = None
    if row is not None and row[0] == APPLICATION:
        return
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if row is None and set(_schema_columns()) - {"meta"} <= tables:
        raise damaged(path, "the application mark (in the table meta) is missing")
    raise ProjectError(f"{path}: not a qseg annotation project")


def _check_schema(path: str | Path, db: sqlite3.Connection) -> None:
    """The schema version, then every table and column the schema makes."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise ProjectError(
            f"{path}: made by a newer qseg (schema version {version}, this qseg reads up to "
            f"{SCHEMA_VERSION}); upgrade qseg"
        )
    if version < SCHEMA_VERSION:
        raise damaged(
            path, f"its schema version (PRAGMA user_version) is {version}, not {SCHEMA_VERSION}"
        )
    for table, columns in _schema_columns().items():
        found = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
        if not found and table in _LATER_TABLES:
            continue
        if not found:
            raise damaged(path, f"the table {table} is missing")
        if found != columns:
            raise damaged(path, f"the table {table} has the columns {found}, not {columns}")


@cache
def _schema_columns() -> dict[str, tuple[str, ...]]:
    """The tables and columns :data:`_SCHEMA` makes, read off a database made with it."""
    with closing(sqlite3.connect(":memory:")) as db:
        db.executescript(_SCHEMA)
        tables = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        return {
            name: tuple(row[1] for row in db.execute(f"PRAGMA table_info({name})"))
            for (name,) in tables
        }


def _check_integrity(path: str | Path, db: sqlite3.Connection) -> None:
    """``PRAGMA quick_check``: every page of the file read (a damaged page found now, not
    as a failed save), unless this process found the file sound and it has not changed."""
    key, state = str(Path(path).resolve()), _state(path)
    if state is not None and _SOUND.get(key) == state:
        return
    problems = db.execute("PRAGMA quick_check(1)").fetchall()
    if problems != [("ok",)]:
        found = problems[0][0].replace("*** in database main ***", "").split()
        raise damaged(path, f"SQLite's quick_check finds {' '.join(found)!r}")
    if state is not None:
        _SOUND[key] = state


def _state(path: str | Path) -> tuple[int, int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def remember_sound(path: str) -> None:
    """Mark ``path`` as found sound in its present state (not read whole at its next open)."""
    state = _state(path)
    if state is not None:
        _SOUND[str(Path(path).resolve())] = state


def forget_sound(path: str) -> None:
    """Have ``path`` checked whole at its next open (an error was met on it)."""
    _SOUND.pop(str(Path(path).resolve()), None)


def damaged(path: str | Path, reason: str) -> ProjectError:
    return ProjectError(f"{path}: damaged: {reason}")


def database_error(path: str, exc: sqlite3.DatabaseError) -> QsegError:
    """One line for an error SQLite gave on a project, saying what it means for the user."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return ProjectError(
            f"{path}: in use by another process, which holds a lock on it; try again when "
            "that process is done"
        )
    if "readonly" in text or "unable to open" in text:
        return _unwritable(path, text)
    if "decode" in text:
        return damaged(path, f"a text in it is not UTF-8 (SQLite says {text!r})")
    if any(sign in text for sign in ("malformed", "not a database", "corrupt", "no such")):
        return damaged(path, f"SQLite says {text!r}")
    return ProjectError(f"{path}: SQLite failed: {text}")


def _unwritable(path: str, text: str) -> PathError:
    """What keeps SQLite from writing, or opening, a project: its folder (SQLite writes the
    -wal and -shm files there, even to read a project), the file, or else what SQLite says."""
    folder = Path(path).parent
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return PathError(path, _read_only_folder(folder))
    if Path(path).is_file() and not os.access(path, os.W_OK):
        return PathError(path, "the file is not writable")
    return PathError(path, f"cannot be opened or written ({text})")


def connect(path: str | Path, *, probe: bool = False) -> sqlite3.Connection:
    """A connection in WAL mode with foreign keys on, that waits :data:`BUSY_SECONDS` for
    another writer. ``probe``: first take the write lock and give it back, waiting only
    :data:`OPEN_BUSY_SECONDS`: a project another process holds is said to be in use now.
    A connection may pass between threads (one at a time: the service opens a project for a
    request in one thread and answers it in another)."""
    try:
        db = sqlite3.connect(
            str(path), timeout=OPEN_BUSY_SECONDS, isolation_level=None, check_same_thread=False
        )
    except sqlite3.DatabaseError as exc:
        raise database_error(str(path), exc) from None
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA foreign_keys = ON")
        if probe:
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
        db.execute(f"PRAGMA busy_timeout = {round(BUSY_SECONDS * 1000)}")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise database_error(str(path), exc) from None
    db.isolation_level = ""  # transactions by `with db:`
    return db
