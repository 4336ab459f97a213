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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from qseg.annotation.project_file import (
    EXISTS,
    ProjectError,
    ProjectExists,
    check_folder,
    check_project,
    connect,
    damaged,
    database_error,
    forget_sound,
    make_file,
    publish,
    remember_sound,
)
from qseg.corpora.annotations import Annotations
from qseg.errors import InputError, PathError, QsegError
from qseg.fileio import NEW_FILE_MODE, spreadsheet_cell
from qseg.query import normalize
from qseg.segmentation import NestedSegmentation, Segmentation, SegmentationError
from qseg.streams.lines import query_record

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
            raise ProjectExists(path, EXISTS)
        folder, name = Path(path).parent, Path(path).name
        fd, draft = tempfile.mkstemp(prefix=f".{name}.", suffix=".new", dir=folder)
        try:
            os.fchmod(fd, NEW_FILE_MODE)  # mkstemp makes 0600; a project is an ordinary file
            os.close(fd)
            make_file(draft)
            publish(Path(draft), Path(path))
        except sqlite3.DatabaseError as exc:
            raise database_error(str(path), exc) from None
        finally:
            for leftover in (draft, f"{draft}-wal", f"{draft}-shm"):
                Path(leftover).unlink(missing_ok=True)
        return cls(path, connect(path))._checked()

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
        check_project(path)
        return cls(path, connect(path, probe=write))._checked()

    def _checked(self) -> Project:
        self._sound = True
        return self

    def close(self) -> None:
        """Close the connection. A file found sound is remembered as it is now (what this
        connection wrote, SQLite wrote), so that opening it again in this process need not
        read it whole: the service opens the project on every request."""
        self._db.close()
        if self._sound:
            remember_sound(self.path)

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
            forget_sound(self.path)
            if isinstance(exc, UnicodeDecodeError):
                raise damaged(self.path, f"a text in it is not UTF-8 ({exc.reason})") from None
            raise database_error(self.path, exc) from None

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
                raise damaged(self.path, f"SQLite's integrity_check finds {found!r}")
            orphan = self._db.execute("PRAGMA foreign_key_check").fetchone()
            if orphan is not None:
                raise damaged(self.path, f"a row of the table {orphan[0]} lost its link")
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
                raise damaged(self.path, f"query {qid!r}, annotator {annotator!r}: {exc}") from None
            if structure.words != normalize(texts[qid]) or value != _stored(mode, structure):
                raise damaged(
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


_UNTABLED = re.compile("[\t\n\r\x00]")
_STRAY = re.compile("[\r\x00]")
_CHARACTERS = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return", "\x00": "a NUL"}


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
