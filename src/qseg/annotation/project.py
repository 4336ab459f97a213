"""An annotation project: queries, annotators and every annotation with its time, in SQLite.

One file per project (the standard library's ``sqlite3``, WAL mode, the schema version in
``PRAGMA user_version``). Every change is committed when made, so closing a page, reloading or
killing the server loses nothing. An annotation is never overwritten: saving again adds a row,
and an annotator's latest row for a query and mode is their answer (two annotators saving the
same query at once both keep theirs).

Exports are the ``item<TAB>annotator<TAB>segmentation`` tables that ``qseg agree``, ``qseg
evaluate`` and :func:`qseg.corpora.annotations.read_annotation_table` read: pipe text for
flat segmentations, bracket text for nested ones.

A project is checked whole when opened (SQLite's header, ``PRAGMA quick_check``, the
application mark, the schema version and every table and column of the schema), and two
processes adding to it at once both land whole: each batch reads what the project has and
writes under one write lock (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import os
import re
import sqlite3
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from qseg.corpora.annotations import Annotations
from qseg.errors import DataError, InputError, PathError, QsegError
from qseg.fileio import NEW_FILE_MODE, spreadsheet_cell
from qseg.query import normalize
from qseg.segmentation import NestedSegmentation, Segmentation, SegmentationError
from qseg.streams.lines import query_record

SCHEMA_VERSION = 1
APPLICATION = "qseg annotation project"
MODES = ("flat", "nested")
MAX_WORDS = 64
"""The longest query a project takes: longer ones are refused when added (nobody brackets a
paragraph, and the page shows every gap)."""
SETTINGS = {
    "prefill": "",
    "expert": "0",
    "order": "added",
    "model": "",
    "retrain_every": "0",
    "suggest": "0",
}
"""Project settings and their defaults: ``prefill`` the method spec whose segmentation the flat
page starts from (empty: none, for unbiased gold), ``expert`` ``1`` to allow nested nodes of more
than two parts (as in Ramanath et al. 2013's authors' files), ``order`` how the pages serve the
queries (``added``, or ``uncertain``: the least sure first, by ``model``, adapted again every
``retrain_every`` answered queries; :mod:`qseg.annotation.ordering`), ``suggest`` ``1`` to
show the ordering model's answer as a hint to confirm (answers given so are marked)."""
SUGGESTED = " (suggested)"
"""What an export adds to the annotator of an answer given with the model's suggestion shown
(annotators anchor on suggestions: agreement and training see such answers apart)."""
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


class Missing(QsegError):
    """An annotator or a query the project does not have (the service's 404)."""


@dataclass
class QueryReport:
    """What adding queries did: added, duplicates left out, bad lines refused."""

    added: int = 0
    duplicates: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Record:
    """One answer to import: a query (id and text), who gave the answer, and the answer."""

    qid: str
    text: str
    annotator: str
    mode: str
    value: str


@dataclass
class ImportReport:
    """What an import did: queries added, answers saved, records refused (one line each)."""

    queries: int = 0
    answers: int = 0
    refused: list[str] = field(default_factory=list)


class Project:
    """An annotation project in the SQLite file ``path`` (made with :meth:`create`)."""

    def __init__(self, path: str | Path, connection: sqlite3.Connection) -> None:
        self.path = str(path)
        self._db = connection
        self._sound = False  # checked whole (or made) by this process: see close()

    @classmethod
    def create(cls, path: str | Path) -> Project:
        """A new, empty project; refused if ``path`` exists (:class:`ProjectExists`). The
        file is made beside ``path`` and linked in whole: a process opening it never sees it
        half made, and of two processes making it at once, one does and the other is told."""
        check_folder(path, write=True)
        if Path(path).exists():
            raise ProjectExists(path, _EXISTS)
        folder, name = Path(path).parent, Path(path).name
        fd, draft = tempfile.mkstemp(prefix=f".{name}.", suffix=".new", dir=folder)
        try:
            os.fchmod(fd, NEW_FILE_MODE)  # mkstemp makes 0600; a project is an ordinary file
            os.close(fd)
            _make(draft)
            _publish(Path(draft), Path(path))
        except sqlite3.DatabaseError as exc:
            raise _database_error(str(path), exc) from None
        finally:
            for leftover in (draft, f"{draft}-wal", f"{draft}-shm"):
                Path(leftover).unlink(missing_ok=True)
        return cls(path, _connect(path))._checked()

    @classmethod
    def open(cls, path: str | Path, *, write: bool = False) -> Project:
        """An existing project, checked before use: a file of another kind, of a newer
        schema, damaged or locked by another process is refused in one line saying which.
        ``write``: it is to be changed, so its file and folder must be writable and no other
        process may hold its write lock (said now, not at the first change)."""
        check_folder(path, write=write)
        if not Path(path).is_file():
            raise PathError(path, "no such project file")
        if write and not os.access(path, os.W_OK):
            raise PathError(path, "the file is not writable")
        _check_project(path)
        return cls(path, _connect(path, probe=write))._checked()

    def _checked(self) -> Project:
        self._sound = True
        return self

    def close(self) -> None:
        """Close the connection. A file found sound is remembered as it is now (what this
        connection wrote, SQLite wrote), so that opening it again in this process need not
        read it whole: the service opens the project on every request."""
        self._db.close()
        if self._sound:
            _remember_sound(self.path)

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _reported(self) -> Iterator[None]:
        """SQLite's errors as one line naming the file (damaged or locked since it was
        opened), not a traceback; the file is then checked whole at its next open."""
        try:
            yield
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            self._sound = False
            _SOUND.pop(str(Path(self.path).resolve()), None)
            if isinstance(exc, UnicodeDecodeError):
                raise _damaged(self.path, f"a text in it is not UTF-8 ({exc.reason})") from None
            raise _database_error(self.path, exc) from None

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """One transaction holding SQLite's write lock from its first statement (``BEGIN
        IMMEDIATE``): what it reads no other writer changes before it commits, so two
        processes adding at once both land whole, one after the other."""
        with self._reported(), self._db:
            self._db.execute("BEGIN IMMEDIATE")
            yield

    def settings(self) -> dict[str, str]:
        """Every setting, the default where none was set."""
        with self._reported():
            rows = self._db.execute("SELECT key, value FROM meta WHERE key LIKE 'setting.%'")
            return SETTINGS | {key.removeprefix("setting."): value for key, value in rows}

    def set_setting(self, key: str, value: str) -> None:
        if key not in SETTINGS:
            raise QsegError(f"no project setting {key!r}; settings: {', '.join(SETTINGS)}")
        with self._writing():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"setting.{key}", value))

    def add_queries(self, lines: Iterable[bytes], source: str) -> QueryReport:
        """Add ``[id<TAB>]query`` lines (a line without an id gets its position in the
        project as its id): a bad line is refused and a query already there (same id or same
        words) left out, each reported. The lines are read first; the project's ids, words
        and positions are then read and the new queries written under one write lock."""
        report = QueryReport()
        parsed = _read_queries(lines, source, report)
        with self._writing():
            ids, known, position = self._taken()
            for lineno, ident, text, key in parsed:
                if (ident is not None and ident in ids) or key in known:
                    named = f"{ident} " if ident is not None else ""
                    report.duplicates.append(f"{source}:{lineno}: {named}{text!r}")
                    continue
                position += 1
                qid = ident if ident is not None else _free_id(position, ids)
                self._db.execute("INSERT INTO queries VALUES (?, ?, ?)", (qid, text, position))
                ids.add(qid)
                known.add(key)
                report.added += 1
        return report

    def _taken(self) -> tuple[set[str], set[str], int]:
        """The ids, the normalized words and the last position of the project's queries:
        read inside the write transaction, so that nobody adds between this read and the
        inserts that rely on it."""
        ids: set[str] = set()
        known: set[str] = set()
        last = 0
        for qid, text, position in self._db.execute("SELECT qid, text, position FROM queries"):
            ids.add(qid)
            known.add(" ".join(normalize(text)))
            last = max(last, position)
        return ids, known, last

    def queries(self) -> list[tuple[str, str]]:
        """``(id, text)`` of every query, in the order they were added."""
        with self._reported():
            return list(self._db.execute("SELECT qid, text FROM queries ORDER BY position"))

    def query_count(self) -> int:
        with self._reported():
            return int(self._db.execute("SELECT COUNT(*) FROM queries").fetchone()[0])

    def query_at(self, index: int) -> tuple[str, str] | None:
        """``(id, text)`` of the query at ``index`` (0-based, in the order added)."""
        with self._reported():
            return self._db.execute(
                "SELECT qid, text FROM queries ORDER BY position LIMIT 1 OFFSET ?", (index,)
            ).fetchone()

    def annotators(self) -> list[str]:
        with self._reported():
            rows = self._db.execute("SELECT name FROM annotators ORDER BY added").fetchall()
        return [name for (name,) in rows]

    def answer(self, annotator: str, qid: str, mode: str) -> str | None:
        """An annotator's latest answer to a query, if any."""
        with self._reported():
            row = self._db.execute(
                "SELECT value FROM annotations WHERE qid = ? AND annotator = ? AND mode = ? "
                "ORDER BY id DESC LIMIT 1",
                (qid, annotator, mode),
            ).fetchone()
        return None if row is None else row[0]

    def answered(self, annotator: str, mode: str) -> list[bool]:
        """Per query, in order, whether the annotator has answered it."""
        with self._reported():
            rows = self._db.execute(
                "SELECT EXISTS (SELECT 1 FROM annotations a WHERE a.qid = q.qid AND "
                "a.annotator = ? AND a.mode = ?) FROM queries q ORDER BY q.position",
                (annotator, mode),
            ).fetchall()
        return [bool(done) for (done,) in rows]

    def last_change(self) -> int:
        """An id that grows with every saved answer: what a page polls to see news."""
        with self._reported():
            row = self._db.execute("SELECT COALESCE(MAX(id), 0) FROM annotations").fetchone()
        return int(row[0])

    def add_annotator(self, name: str) -> None:
        with self._reported(), self._db:
            self._insert_annotator(name)

    def _insert_annotator(self, name: str) -> str:
        if not name.strip() or _UNTABLED.search(name):
            raise QsegError(f"annotator id {name!r}: one line of text, no tab")
        self._db.execute(
            "INSERT OR IGNORE INTO annotators VALUES (?, ?)", (name.strip(), time.time())
        )
        return name.strip()

    def save(
        self, annotator: str, qid: str, mode: str, value: str, *, suggested: bool = False
    ) -> None:
        """Save an answer (pipe text for ``flat``, bracket text for ``nested``) after checking
        that it segments the query's words; ``suggested``: given with the model's suggestion
        shown (marked in exports)."""
        name = annotator.strip()
        self.check_annotator(name)
        expert = self.settings()["expert"] == "1"
        with self._reported(), self._db:
            self._insert_answer(name, qid, mode, value, expert)
            if suggested:
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS suggested "
                    "(id INTEGER PRIMARY KEY REFERENCES annotations(id))"
                )
                self._db.execute("INSERT INTO suggested VALUES (last_insert_rowid())")

    def check_annotator(self, name: str) -> None:
        """:class:`Missing` unless the project has an annotator ``name``."""
        with self._reported():
            row = self._db.execute("SELECT 1 FROM annotators WHERE name = ?", (name,)).fetchone()
        if not row:
            raise Missing(f"no annotator {name!r} in {Path(self.path).name}")

    def _insert_answer(
        self,
        name: str,
        qid: str,
        mode: str,
        value: str,
        expert: bool,
        words: tuple[str, ...] | None = None,
    ) -> None:
        """Check an answer against its query's ``words`` (read from the project where not
        given) and add it."""
        if mode not in MODES:
            raise QsegError(f"mode must be flat or nested, not {mode!r}")
        if words is None:
            row = self._db.execute("SELECT text FROM queries WHERE qid = ?", (qid,)).fetchone()
            if row is None:
                raise Missing(f"no query {qid!r} in {Path(self.path).name}")
            words = normalize(row[0])
        structure = parse_answer(mode, value)
        if structure.words != words:
            raise QsegError(f"the answer's words are not those of query {qid}: {value!r}")
        if isinstance(structure, NestedSegmentation) and not structure.is_binary and not expert:
            raise QsegError(
                f"{value!r} has a node of more than two parts; this project asks for binary "
                "trees (the expert setting allows others)"
            )
        text = _stored(mode, structure)
        self._db.execute(
            "INSERT INTO annotations (qid, annotator, mode, value, saved) VALUES (?, ?, ?, ?, ?)",
            (qid, name, mode, text, time.time()),
        )

    def import_records(self, records: Iterable[Record], source: str) -> ImportReport:
        """Add imported answers in one transaction: a query not in the project is added, one
        whose id is known must have the same words; annotators are added as they come. A
        record that does not fit is refused and reported and leaves nothing behind, the
        others are saved. Imported trees may have nodes of more than two parts (the authors'
        nested files do)."""
        report = ImportReport()
        with self._writing():  # one transaction; a savepoint per record within it
            rows = self._db.execute("SELECT qid, text FROM queries")
            known = {qid: normalize(text) for qid, text in rows}
            (position,) = self._db.execute(
                "SELECT COALESCE(MAX(position), 0) FROM queries"
            ).fetchone()
            for record in records:
                self._db.execute("SAVEPOINT record")
                try:
                    added, words = self._import_query(record, known, position + 1)
                    name = self._insert_annotator(record.annotator)
                    self._insert_answer(name, record.qid, record.mode, record.value, True, words)
                except QsegError as exc:
                    self._db.execute("ROLLBACK TO record")
                    self._db.execute("RELEASE record")
                    report.refused.append(f"{source}: {record.qid} by {record.annotator}: {exc}")
                    continue
                self._db.execute("RELEASE record")
                if added:  # known only once kept: a record rolled back adds no query
                    known[record.qid] = words
                    position += 1
                    report.queries += 1
                report.answers += 1
        return report

    def _import_query(
        self, record: Record, known: dict[str, tuple[str, ...]], position: int
    ) -> tuple[bool, tuple[str, ...]]:
        """Add the query of an imported record if the project does not have it (``True``);
        check it against the project's if it does. With the query's words."""
        qid = record.qid
        if not qid.strip() or qid != qid.strip() or any(c in qid for c in "\t\r\n"):
            raise QsegError(f"query id {qid!r}: one line of text, no tab, no spaces around it")
        words = normalize(record.text)
        if qid in known:
            if known[qid] != words:
                raise QsegError(
                    f"the project's query {qid} is {' '.join(known[qid])!r}, not "
                    f"{' '.join(words)!r}"
                )
            return False, words
        if len(words) > MAX_WORDS:
            raise QsegError(_too_long(words))
        self._db.execute("INSERT INTO queries VALUES (?, ?, ?)", (qid, record.text, position))
        return True, words

    def answers(self, mode: str) -> Iterator[tuple[str, str, str]]:
        """``(query id, annotator, answer)``: each annotator's latest answer, in query order.
        Read whole at the first step, so that a reader stopping early (a refused export)
        leaves no cursor open on a connection about to close."""
        with self._reported():
            marked = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'suggested'"
            ).fetchone()
            annotator = "a.annotator"
            if marked:  # (a project no answer was suggested in may lack the table)
                annotator = (
                    "a.annotator || CASE WHEN EXISTS (SELECT 1 FROM suggested s WHERE s.id = "
                    f"a.id) THEN '{SUGGESTED}' ELSE '' END"
                )
            rows = self._db.execute(
                f"SELECT a.qid, {annotator}, a.value FROM annotations a JOIN queries q "
                "USING (qid) WHERE a.mode = ? AND a.id = (SELECT MAX(id) FROM annotations b "
                "WHERE b.qid = a.qid AND b.annotator = a.annotator AND b.mode = a.mode) "
                "ORDER BY q.position, a.annotator",
                (mode,),
            ).fetchall()
        yield from rows

    def records(
        self, mode: str, rows: list[tuple[str, str, str]] | None = None
    ) -> Iterator[Record]:
        """The latest answers with their queries' text, for exports that carry the text,
        each checked as :meth:`exported` checks them (``rows``: what it gave already)."""
        texts = dict(self.queries())
        for qid, annotator, value in self.exported(mode) if rows is None else rows:
            yield Record(qid, texts[qid], annotator, mode, value)

    def export_table(
        self, mode: str, *, raw: bool = False, rows: list[tuple[str, str, str]] | None = None
    ) -> str:
        """The latest answers as ``item<TAB>annotator<TAB>segmentation`` lines, each cell
        that a spreadsheet would run as a formula escaped (:func:`qseg.fileio.spreadsheet_cell`,
        which qseg's readers undo) unless ``raw`` (``rows``: what :meth:`exported` gave
        already, so that the project is checked once)."""
        if rows is None:
            rows = self.exported(mode)
        if not raw:
            rows = [
                (spreadsheet_cell(q), spreadsheet_cell(a), spreadsheet_cell(v)) for q, a, v in rows
            ]
        return "".join(f"{qid}\t{annotator}\t{value}\n" for qid, annotator, value in rows)

    def exported(self, mode: str) -> list[tuple[str, str, str]]:
        """The latest answers, from a project checked whole first (``PRAGMA integrity_check``
        and ``foreign_key_check``: a damaged index or a lost link would drop rows silently),
        each answer a segmentation of its query's words and each field one a table can
        hold; else one line naming what is damaged, and nothing exported."""
        with self._reported():
            problems = self._db.execute("PRAGMA integrity_check(1)").fetchall()
            if problems != [("ok",)]:
                found = " ".join(problems[0][0].replace("*** in database main ***", "").split())
                raise _damaged(self.path, f"SQLite's integrity_check finds {found!r}")
            orphan = self._db.execute("PRAGMA foreign_key_check").fetchone()
            if orphan is not None:
                raise _damaged(self.path, f"a row of the table {orphan[0]} lost its link")
        rows = list(self.answers(mode))
        table = "".join(f"{qid}\t{annotator}\t{value}\n" for qid, annotator, value in rows)
        if not _plain(rows, table):
            for row in rows:
                _checked(self.path, *row)  # refuses the first field at fault, naming it
        texts = dict(self.queries())
        for qid, annotator, value in rows:
            try:
                structure = parse_answer(mode, value)
            except QsegError as exc:
                raise _damaged(
                    self.path, f"query {qid!r}, annotator {annotator!r}: {exc}"
                ) from None
            if structure.words != normalize(texts[qid]) or value != _stored(mode, structure):
                raise _damaged(
                    self.path,
                    f"query {qid!r}, annotator {annotator!r}: the answer {value!r} is not one "
                    f"qseg stores for the query {texts[qid]!r}",
                )
        return rows


def _stored(mode: str, structure: Segmentation | NestedSegmentation) -> str:
    """An answer's text as qseg stores it: pipe text of a flat answer, bracket text of a
    nested one (a one-word tree bracketed, so that readers tell it nested)."""
    text = str(structure)
    return f"({text})" if mode == "nested" and "(" not in text else text


def _too_long(words: tuple[str, ...]) -> str:
    return f"{len(words)} words; a project takes queries of at most {MAX_WORDS}"


def _free_id(position: int, taken: set[str]) -> str:
    """The id of a query given without one: its position, made unique if a given id has it."""
    qid, n = str(position), 1
    while qid in taken:
        n += 1
        qid = f"{position}.{n}"
    return qid


def records_of(annotations: Annotations) -> Iterator[Record]:
    """Annotations read by :func:`qseg.corpora.annotations.read_annotations` as records to
    import (a query's text is its words)."""
    for item, annots in annotations.items():
        for annotation in annots:
            s = annotation.segmentation
            mode = "nested" if isinstance(s, NestedSegmentation) else "flat"
            value = s.to_brackets() if isinstance(s, NestedSegmentation) else s.to_pipe()
            yield Record(item, " ".join(s.words), annotation.annotator, mode, value)


def parse_answer(mode: str, value: str) -> Segmentation | NestedSegmentation:
    """An answer as the structure it names, or one line saying why it is none."""
    try:
        if mode == "flat":
            return Segmentation.from_pipe(value)
        return NestedSegmentation.from_brackets(value)
    except (SegmentationError, QsegError) as exc:
        raise QsegError(f"{mode} answer {value!r}: {exc}") from None


_EXISTS = "exists: open it as a project, or choose a new file"
_HEADER = b"SQLite format 3\x00"
_UNTABLED = re.compile("[\t\n\r\x00]")
_STRAY = re.compile("[\r\x00]")
_CHARACTERS = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return", "\x00": "a NUL"}
_SOUND: dict[str, tuple[int, int, int, int]] = {}
"""Project files this process found sound (``PRAGMA quick_check``), by their path and their
state then (device, inode, size, modification time): one unchanged since is not read whole
again."""


def _read_queries(
    lines: Iterable[bytes], source: str, report: QueryReport
) -> list[tuple[int, str | None, str, str]]:
    """``(line number, id or None, text, normalized words)`` of the good lines, the bad ones
    refused into ``report``: done before the write lock is taken, so it is held only to
    compare and insert."""
    parsed = []
    for lineno, raw in enumerate(lines, start=1):
        try:
            ident, text = query_record(raw.rstrip(b"\n"), lineno, source)
        except InputError as exc:
            report.refused.append(str(exc))
            continue
        problem = None if ident is None else _field_problem(ident)  # a lone \r, say
        if problem is not None:
            report.refused.append(f"{source}:{lineno}: query id {ident!r} {problem}")
            continue
        words = normalize(text)
        if len(words) > MAX_WORDS:
            report.refused.append(f"{source}:{lineno}: {_too_long(words)}")
            continue
        parsed.append((lineno, ident, text, " ".join(words)))
    return parsed


def _checked(path: str, qid: str, annotator: str, value: str) -> tuple[str, str, str]:
    """An answer as stored, or one line refusing a field that qseg never stores and that an
    exported table cannot carry: another tool's tab, line break, empty text or bytes."""
    for name, text in (("query id", qid), ("annotator", annotator), ("answer", value)):
        problem = _field_problem(text)
        if problem is not None:
            raise ProjectError(
                f"{path}: query {qid!r}, annotator {annotator!r}: the {name} {problem}, which "
                "qseg never stores (was the project changed by another tool?)"
            )
    return qid, annotator, value


def _plain(rows: list[tuple[str, str, str]], table: str) -> bool:
    """Whether every field is text, not blank, without tab, line break or NUL: the table's
    tabs and line breaks counted at C speed (a third of the cost of searching each field)."""
    for row in rows:
        for text in row:
            if type(text) is not str or not text or text.isspace():
                return False
    tabs, breaks = table.count("\t"), table.count("\n")
    return tabs == 2 * len(rows) and breaks == len(rows) and not _STRAY.search(table)


def _field_problem(text: object) -> str | None:
    """What keeps ``text`` out of a tab-separated line, if anything."""
    if not isinstance(text, str):
        return f"is {type(text).__name__} data, not text"
    found = _UNTABLED.search(text)
    if found is not None:
        return f"holds {_CHARACTERS[found.group()]}"
    if not text.strip():
        return "is empty"
    return None


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


def _make(path: str) -> None:
    """Write the schema, the application mark and the schema version into the empty SQLite
    file ``path``, in WAL mode (kept in the file)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.executescript(f"BEGIN; {_SCHEMA}")
        db.execute("INSERT INTO meta VALUES ('application', ?)", (APPLICATION,))
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")


def _publish(draft: Path, path: Path) -> None:
    """Put the made ``draft`` at ``path`` unless something is there: a hard link is atomic;
    where the file system has none, a rename after a last look."""
    try:
        os.link(draft, path)
    except FileExistsError:
        raise ProjectExists(path, _EXISTS) from None
    except OSError:
        if path.exists():
            raise ProjectExists(path, _EXISTS) from None
        os.rename(draft, path)


def _check_project(path: str | Path) -> None:
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
        raise _database_error(str(path), exc) from None


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
            raise _damaged(
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
        raise _damaged(path, "the application mark (in the table meta) is missing")
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
        raise _damaged(
            path, f"its schema version (PRAGMA user_version) is {version}, not {SCHEMA_VERSION}"
        )
    for table, columns in _schema_columns().items():
        found = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
        if not found and table in _LATER_TABLES:
            continue
        if not found:
            raise _damaged(path, f"the table {table} is missing")
        if found != columns:
            raise _damaged(path, f"the table {table} has the columns {found}, not {columns}")


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
        raise _damaged(path, f"SQLite's quick_check finds {' '.join(found)!r}")
    if state is not None:
        _SOUND[key] = state


def _state(path: str | Path) -> tuple[int, int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _remember_sound(path: str) -> None:
    state = _state(path)
    if state is not None:
        _SOUND[str(Path(path).resolve())] = state


def _damaged(path: str | Path, reason: str) -> ProjectError:
    return ProjectError(f"{path}: damaged: {reason}")


def _database_error(path: str, exc: sqlite3.DatabaseError) -> QsegError:
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
        return _damaged(path, f"a text in it is not UTF-8 (SQLite says {text!r})")
    if any(sign in text for sign in ("malformed", "not a database", "corrupt", "no such")):
        return _damaged(path, f"SQLite says {text!r}")
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


def _connect(path: str | Path, *, probe: bool = False) -> sqlite3.Connection:
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
        raise _database_error(str(path), exc) from None
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA foreign_keys = ON")
        if probe:
            db.execute("BEGIN IMMEDIATE")
            db.execute("ROLLBACK")
        db.execute(f"PRAGMA busy_timeout = {round(BUSY_SECONDS * 1000)}")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise _database_error(str(path), exc) from None
    db.isolation_level = ""  # transactions by `with db:`
    return db
