"""An annotation project: queries, annotators and every annotation with its time, in SQLite.

One file per project (the standard library's ``sqlite3``, WAL mode, the schema version in
``PRAGMA user_version``). Every change is committed when made, so closing a page, reloading or
killing the server loses nothing. An annotation is never overwritten: saving again adds a row,
and an annotator's latest row for a query and mode is their answer (two annotators saving the
same query at once both keep theirs).

Exports are the ``item<TAB>annotator<TAB>segmentation`` tables that ``qseg agree``, ``qseg
evaluate`` and :func:`qseg.corpora.annotations.read_annotation_table` read: pipe text for
flat segmentations, bracket text for nested ones.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from qseg.corpora.annotations import Annotations
from qseg.corpora.query_lines import query_record
from qseg.errors import DataError, InputError, PathError, QsegError
from qseg.query import normalize
from qseg.segmentation import NestedSegmentation, Segmentation, SegmentationError

SCHEMA_VERSION = 1
APPLICATION = "qseg annotation project"
MODES = ("flat", "nested")
MAX_WORDS = 64
"""The longest query a project takes: longer ones are refused when added (nobody brackets a
paragraph, and the page shows every gap)."""
SETTINGS = {"prefill": "", "expert": "0"}
"""Project settings and their defaults: ``prefill`` the method spec whose segmentation the flat
page starts from (empty: none, for unbiased gold), ``expert`` ``1`` to allow nested nodes of more
than two parts (as in paper 001's authors' files)."""

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
"""


class ProjectError(DataError):
    """A file that is not a qseg project, or one of a newer qseg."""


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

    @classmethod
    def create(cls, path: str | Path) -> Project:
        """A new, empty project; refused if ``path`` exists."""
        if Path(path).exists():
            raise PathError(path, "exists: open it as a project, or choose a new file")
        db = _connect(path)
        with db:
            db.executescript(_SCHEMA)
            db.execute("INSERT INTO meta VALUES ('application', ?)", (APPLICATION,))
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return cls(path, db)

    @classmethod
    def open(cls, path: str | Path) -> Project:
        """An existing project; a file of another kind or of a newer schema is refused."""
        if not Path(path).is_file():
            raise PathError(path, "no such project file")
        _check_project(path)
        return cls(path, _connect(path))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def settings(self) -> dict[str, str]:
        """Every setting, the default where none was set."""
        rows = self._db.execute("SELECT key, value FROM meta WHERE key LIKE 'setting.%'")
        return SETTINGS | {key.removeprefix("setting."): value for key, value in rows}

    def set_setting(self, key: str, value: str) -> None:
        if key not in SETTINGS:
            raise QsegError(f"no project setting {key!r}; settings: {', '.join(SETTINGS)}")
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"setting.{key}", value))

    def add_queries(self, lines: Iterable[bytes], source: str) -> QueryReport:
        """Add ``[id<TAB>]query`` lines (a line without an id gets its position in the
        project as its id): a bad line is refused and a query already there (same id or same
        words) left out, each reported."""
        report = QueryReport()
        known = {" ".join(normalize(t)) for (t,) in self._db.execute("SELECT text FROM queries")}
        ids = {q for (q,) in self._db.execute("SELECT qid FROM queries")}
        (position,) = self._db.execute("SELECT COALESCE(MAX(position), 0) FROM queries").fetchone()
        with self._db:
            for lineno, raw in enumerate(lines, start=1):
                try:
                    ident, text = query_record(raw.rstrip(b"\n"), lineno, source)
                except InputError as exc:
                    report.refused.append(str(exc))
                    continue
                words = normalize(text)
                if len(words) > MAX_WORDS:
                    report.refused.append(f"{source}:{lineno}: {_too_long(words)}")
                    continue
                key = " ".join(words)
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

    def queries(self) -> list[tuple[str, str]]:
        """``(id, text)`` of every query, in the order they were added."""
        return list(self._db.execute("SELECT qid, text FROM queries ORDER BY position"))

    def query_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM queries").fetchone()[0])

    def query_at(self, index: int) -> tuple[str, str] | None:
        """``(id, text)`` of the query at ``index`` (0-based, in the order added)."""
        return self._db.execute(
            "SELECT qid, text FROM queries ORDER BY position LIMIT 1 OFFSET ?", (index,)
        ).fetchone()

    def annotators(self) -> list[str]:
        return [name for (name,) in self._db.execute("SELECT name FROM annotators ORDER BY added")]

    def answer(self, annotator: str, qid: str, mode: str) -> str | None:
        """An annotator's latest answer to a query, if any."""
        row = self._db.execute(
            "SELECT value FROM annotations WHERE qid = ? AND annotator = ? AND mode = ? "
            "ORDER BY id DESC LIMIT 1",
            (qid, annotator, mode),
        ).fetchone()
        return None if row is None else row[0]

    def answered(self, annotator: str, mode: str) -> list[bool]:
        """Per query, in order, whether the annotator has answered it."""
        rows = self._db.execute(
            "SELECT EXISTS (SELECT 1 FROM annotations a WHERE a.qid = q.qid AND "
            "a.annotator = ? AND a.mode = ?) FROM queries q ORDER BY q.position",
            (annotator, mode),
        )
        return [bool(done) for (done,) in rows]

    def last_change(self) -> int:
        """An id that grows with every saved answer: what a page polls to see news."""
        return int(self._db.execute("SELECT COALESCE(MAX(id), 0) FROM annotations").fetchone()[0])

    def add_annotator(self, name: str) -> None:
        with self._db:
            self._insert_annotator(name)

    def _insert_annotator(self, name: str) -> str:
        if not name.strip() or "\t" in name or "\n" in name:
            raise QsegError(f"annotator id {name!r}: one line of text, no tab")
        self._db.execute(
            "INSERT OR IGNORE INTO annotators VALUES (?, ?)", (name.strip(), time.time())
        )
        return name.strip()

    def save(self, annotator: str, qid: str, mode: str, value: str) -> None:
        """Save an answer (pipe text for ``flat``, bracket text for ``nested``) after checking
        that it segments the query's words."""
        name = annotator.strip()
        self.check_annotator(name)
        expert = self.settings()["expert"] == "1"
        with self._db:
            self._insert_answer(name, qid, mode, value, expert)

    def check_annotator(self, name: str) -> None:
        """:class:`Missing` unless the project has an annotator ``name``."""
        if not self._db.execute("SELECT 1 FROM annotators WHERE name = ?", (name,)).fetchone():
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
        text = str(structure)  # pipe text of a flat, bracket text of a nested answer
        if mode == "nested" and "(" not in text:
            text = f"({text})"  # a one-word tree: bracketed, so that readers tell it nested
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
        known = {qid: normalize(text) for qid, text in self.queries()}
        (position,) = self._db.execute("SELECT COALESCE(MAX(position), 0) FROM queries").fetchone()
        with self._db:
            self._db.execute("BEGIN")  # one transaction; a savepoint per record within it
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
        """``(query id, annotator, answer)``: each annotator's latest answer, in query order."""
        yield from self._db.execute(
            "SELECT a.qid, a.annotator, a.value FROM annotations a JOIN queries q USING (qid) "
            "WHERE a.mode = ? AND a.id = (SELECT MAX(id) FROM annotations b WHERE "
            "b.qid = a.qid AND b.annotator = a.annotator AND b.mode = a.mode) "
            "ORDER BY q.position, a.annotator",
            (mode,),
        )

    def records(self, mode: str) -> Iterator[Record]:
        """The latest answers with their queries' text, for exports that carry the text."""
        texts = dict(self.queries())
        for qid, annotator, value in self.answers(mode):
            yield Record(qid, texts[qid], annotator, mode, value)

    def export_table(self, mode: str) -> str:
        """The latest answers as ``item<TAB>annotator<TAB>segmentation`` lines."""
        return "".join(f"{q}\t{a}\t{v}\n" for q, a, v in self.answers(mode))


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


def _check_project(path: str | Path) -> None:
    """Refuse a file that is not a qseg project, or of a newer schema, having only read it:
    a refused file is left as it was (opening it for writing would switch it to WAL)."""
    try:
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=30)) as db:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            row = db.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
    except sqlite3.OperationalError as exc:
        if "unable to open" in str(exc):
            raise PathError(path, f"cannot be opened ({exc})") from None
        raise ProjectError(f"{path}: not a qseg annotation project") from None
    except sqlite3.DatabaseError:
        raise ProjectError(f"{path}: not a qseg annotation project") from None
    if row is None or row[0] != APPLICATION:
        raise ProjectError(f"{path}: not a qseg annotation project")
    if version > SCHEMA_VERSION:
        raise ProjectError(
            f"{path}: made by a newer qseg (schema version {version}, this qseg reads up to "
            f"{SCHEMA_VERSION}); upgrade qseg"
        )


def _connect(path: str | Path) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA foreign_keys = ON")
    except sqlite3.DatabaseError as exc:
        raise ProjectError(f"{path}: not a qseg annotation project ({exc})") from None
    db.isolation_level = ""  # transactions by `with db:`
    return db
