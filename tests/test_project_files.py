"""Damaged, locked, read-only and misplaced project files, each refused in its own line
(never a traceback, never after a 30 s wait), exports that check every field, and two
commands adding to one project at once (issue 48, items 5 and 6)."""

from __future__ import annotations

import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import Server, assert_one_line_error, out, qseg

import qseg.annotation.project_file as project_file
from qseg.annotation.project import Project, ProjectError, Record
from qseg.errors import PathError, QsegError

PAGE = 4096  # SQLite's default page size, which projects keep
NOBODY = 65534


def _made(path: Path, queries: int = 200) -> Path:
    """A project with ``queries`` queries and an answer to each, closed (WAL checkpointed)."""
    with Project.create(path) as made:
        made.import_records(
            [
                Record(f"q{i}", f"query number {i}", "ann", "flat", f"query|number {i}")
                for i in range(queries)
            ],
            "made",
        )
    return path


def _sql(path: Path, *statements: str) -> None:
    """Change a project as another tool would (foreign keys off, as sqlite3's default)."""
    db = sqlite3.connect(path, isolation_level=None)
    for statement in statements:
        db.execute(statement)
    db.close()


def _root_page(path: Path, table: str) -> int:
    db = sqlite3.connect(path)
    (page,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    db.close()
    return page


def _zero_page(path: Path, page: int) -> None:
    """Overwrite one page with zeros, in place, as a disk or another program might."""
    with open(path, "r+b") as handle:
        handle.seek((page - 1) * PAGE)
        handle.write(bytes(PAGE))


def _set_byte(path: Path, offset: int, value: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(bytes([value]))


@contextmanager
def _held(path: Path, *, exclusive_mode: bool = False) -> Iterator[None]:
    """Another process holding the project's write lock (``BEGIN EXCLUSIVE``) until the
    block ends; ``exclusive_mode``: every lock, so that nobody else reads it either."""
    mode = "db.execute('PRAGMA locking_mode = EXCLUSIVE')\n" if exclusive_mode else ""
    script = (
        f"import sqlite3, sys\ndb = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
        f"{mode}db.execute('BEGIN EXCLUSIVE')\n"
        "db.execute('SELECT COUNT(*) FROM queries').fetchone()\n"
        "print('held', flush=True)\nsys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.stdin.close()
        holder.wait(30)


def _timed(*args) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    result = qseg(*args)
    return result, time.monotonic() - start


def test_a_project_in_a_missing_folder_names_the_folder(tmp_path, write):
    folder = tmp_path / "no" / "such"
    path = folder / "p.db"
    queries = write("q.txt", "new york\n")
    expected = f"{path}: the folder {folder} does not exist"
    assert_one_line_error(qseg("annotate", path, "--queries", queries, "--no-serve"), expected)
    assert_one_line_error(qseg("annotate", path, "--export", "-"), expected)
    assert_one_line_error(qseg("annotate", queries / "p.db", "--export", "-"), "is not a folder")
    for made in (Project.create, Project.open):
        with pytest.raises(PathError, match="does not exist"):
            made(path)
    assert not (tmp_path / "no").exists()


def test_a_zeroed_page_is_refused_at_open_by_every_command(tmp_path, write):
    """quick_check reads every page: the export, an addition and the pages are refused at
    once (before: a traceback, or 500 to every save)."""
    path = _made(tmp_path / "p.db")
    _zero_page(path, _root_page(path, "annotations"))
    fragments = ("p.db: damaged: SQLite's quick_check finds", "Page")
    more = write("more.txt", "berlin wall\n")
    for args in (["--export", "-"], ["--queries", more, "--no-serve"], ["--port", "0"]):
        assert_one_line_error(qseg("annotate", path, *args), *fragments, status=1)


@pytest.mark.parametrize(
    ("damage", "fragment"),
    [
        (lambda p: _sql(p, "DROP TABLE annotators"), "damaged: the table annotators is missing"),
        (
            lambda p: _sql(p, "DROP TABLE meta"),
            "damaged: the application mark (in the table meta) is missing",
        ),
        (
            lambda p: _sql(p, "ALTER TABLE annotations DROP COLUMN saved"),
            "damaged: the table annotations has the columns",
        ),
        (
            lambda p: _sql(p, "PRAGMA user_version = 0"),
            "damaged: its schema version (PRAGMA user_version) is 0, not 1",
        ),
        (
            lambda p: _set_byte(p, 18, 9),
            "damaged: its SQLite header gives file format write version 9 (byte 18)",
        ),
        (
            lambda p: _set_byte(p, 19, 9),
            "damaged: its SQLite header gives file format read version 9 (byte 19)",
        ),
    ],
    ids=["dropped-table", "dropped-meta", "dropped-column", "user-version", "byte-18", "byte-19"],
)
def test_damaged_schemas_and_headers_are_refused_in_their_own_words(tmp_path, damage, fragment):
    path = _made(tmp_path / "p.db", queries=5)
    damage(path)
    assert_one_line_error(qseg("annotate", path, "--export", "-"), "p.db", fragment, status=1)
    with pytest.raises(ProjectError, match="damaged"):
        Project.open(path, write=True)


def test_files_that_are_no_project_are_not_called_damaged(tmp_path, write):
    text = write("text.db", "not a database at all, just text\n" * 100)
    other = tmp_path / "other.db"
    _sql(other, "CREATE TABLE t (x)")
    for path in (text, other):
        result = qseg("annotate", path, "--export", "-")
        assert_one_line_error(result, "not a qseg annotation project", status=1)
        assert "damaged" not in result.stderr.decode()


def test_damage_found_after_open_is_one_line_naming_the_file(tmp_path):
    """A file this process found sound and that has not changed since is not read whole
    again (the service opens the project on every request); damage found later by a query
    is still one line, and the file is then checked whole at its next open."""
    path = _made(tmp_path / "p.db")
    Project.open(path).close()  # found sound, remembered with its size and time
    before = path.stat()
    _zero_page(path, _root_page(path, "annotations"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as if unchanged
    opened = Project.open(path)
    with pytest.raises(ProjectError, match=r"p\.db: damaged: SQLite's integrity_check finds"):
        opened.export_table("flat")
    with pytest.raises(ProjectError, match=r"p\.db: damaged: SQLite says .*malformed"):
        opened.last_change()
    opened.close()
    with pytest.raises(ProjectError, match="quick_check"):
        Project.open(path)


def test_a_project_locked_by_another_process_is_said_to_be_in_use_at_once(
    tmp_path, write, monkeypatch
):
    """At open, a project another process holds is in use after OPEN_BUSY_SECONDS (2 s;
    shortened here, the commands run in this process), not the BUSY_SECONDS (30 s) a change
    waits."""
    monkeypatch.setattr(project_file, "OPEN_BUSY_SECONDS", 0.3)
    path = _made(tmp_path / "p.db", queries=5)
    more = write("more.txt", "berlin wall\n")
    in_use = "p.db: in use by another process, which holds a lock on it"
    with _held(path):
        result, seconds = _timed("annotate", path, "--queries", more, "--no-serve")
        assert_one_line_error(result, in_use, status=1)
        assert seconds < 15  # the open check's wait, not the 30 s of a change
        assert out(qseg("annotate", path, "--export", "-")).count("\n") == 5  # reading is free
        with pytest.raises(ProjectError, match="in use by another process"):
            Project.open(path, write=True)
    with _held(path, exclusive_mode=True):  # nobody else may even read
        result, seconds = _timed("annotate", path, "--export", "-")
        assert_one_line_error(result, in_use, status=1)
        assert seconds < 15
    out(qseg("annotate", path, "--queries", more, "--no-serve"))  # free again


@pytest.mark.parametrize("change", ["add", "import", "setting"])
def test_a_lock_taken_after_open_is_one_line(tmp_path, monkeypatch, change):
    """Every change waits BUSY_SECONDS for another writer, then says the project is in use
    (shortened here)."""
    monkeypatch.setattr(project_file, "BUSY_SECONDS", 0.3)
    path = _made(tmp_path / "p.db", queries=5)
    refused = pytest.raises(ProjectError, match=r"p\.db: in use by another process")
    with Project.open(path) as opened, _held(path), refused:
        if change == "add":
            opened.add_queries([b"berlin wall\n"], "more.txt")
        elif change == "import":
            record = Record("w", "berlin wall", "ann", "flat", "berlin wall")
            opened.import_records([record], "more.tsv")
        else:
            opened.set_setting("expert", "1")
    with Project.open(path) as opened:
        assert opened.query_count() == 5  # nothing half done


def _as_other_user(*args) -> subprocess.CompletedProcess:
    """``qseg ARGS`` as a user whom permissions bind: this one, or nobody when this is root
    (root writes into read-only folders and files, so they would prove nothing); skipped
    when this is root and qseg cannot run as nobody."""
    if os.geteuid() != 0:
        return qseg(*args)
    nobody = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
    try:
        works = subprocess.run([sys.executable, "-c", "import qseg.cli"], timeout=120, **nobody)
    except OSError as exc:
        works = exc
    if not isinstance(works, subprocess.CompletedProcess) or works.returncode != 0:
        pytest.skip(
            "running as root, where read-only folders and files do not stop writes, and qseg "
            f"cannot run as nobody (uid {NOBODY}) instead: {works}"
        )
    command = [sys.executable, "-m", "qseg", *map(str, args)]
    return subprocess.run(command, capture_output=True, timeout=120, **nobody)


def test_a_read_only_folder_or_file_is_named_when_writing_is_needed():
    """SQLite writes its -wal and -shm files beside the project (even to read it): a read-only
    folder and a read-only file are each named, not taken for a file of another kind."""
    top = Path(tempfile.mkdtemp(prefix="qseg-ro-"))  # outside pytest's root-only folders
    folder = top / "folder"
    try:
        top.chmod(0o755)
        folder.mkdir()
        path = _made(folder / "p.db", queries=5)
        more = top / "more.txt"
        more.write_text("berlin wall\n")
        more.chmod(0o644)
        path.chmod(0o666)
        folder.chmod(0o555)
        for args in (["--queries", more, "--no-serve"], ["--export", "-"]):
            assert_one_line_error(
                _as_other_user("annotate", path, *args),
                f"p.db: the folder {folder} is not writable (SQLite writes the -wal and -shm",
            )
        folder.chmod(0o777)
        path.chmod(0o444)
        assert_one_line_error(
            _as_other_user("annotate", path, "--queries", more, "--no-serve"),
            "p.db: the file is not writable",
        )
        assert out(_as_other_user("annotate", path, "--export", "-")).count("\n") == 5
    finally:
        if folder.exists():
            folder.chmod(0o755)  # for rmtree, as a user permissions bind
        shutil.rmtree(top)


def test_a_read_only_folder_is_named_by_the_project_itself(tmp_path, monkeypatch):
    """The same refusal as the library gives it, wherever the tests run (even as root, where
    only the permission check can refuse: ``os.access`` answers as for a user it binds)."""
    path = _made(tmp_path / "p.db", queries=5)
    real = os.access
    folder_denied = lambda p, mode: False if Path(p) == tmp_path else real(p, mode)  # noqa: E731
    file_denied = lambda p, mode: False if Path(p) == path else real(p, mode)  # noqa: E731
    monkeypatch.setattr(os, "access", folder_denied)
    with pytest.raises(PathError, match=f"the folder {tmp_path} is not writable"):
        Project.open(path, write=True)
    with pytest.raises(PathError, match="is not writable"):
        Project.create(tmp_path / "new.db")
    Project.open(path).close()  # reading asks nothing of the folder's permissions here
    monkeypatch.setattr(os, "access", file_denied)
    with pytest.raises(PathError, match=r"p\.db: the file is not writable"):
        Project.open(path, write=True)


TAB = ["UPDATE annotations SET annotator = 'ann\tbob'", "UPDATE annotators SET name = 'ann\tbob'"]
LINE_BREAK = "UPDATE annotations SET value = 'query|number 0\nq9\tzoe\tquery number 0'"
RETURN = ["UPDATE annotations SET qid = 'q\r0'", "UPDATE queries SET qid = 'q\r0'"]
EMPTY = "UPDATE annotations SET value = ' ' WHERE qid = 'q1'"
BLOB = "UPDATE annotations SET value = X'00ff' WHERE qid = 'q1'"


@pytest.mark.parametrize(
    ("statements", "fragments"),
    [
        (TAB, ["query 'q0', annotator 'ann\\tbob': the annotator holds a tab"]),
        ([f"{LINE_BREAK} WHERE qid = 'q0'"], ["query 'q0', annotator 'ann': the answer holds a"]),
        ([f"{s} WHERE qid = 'q0'" for s in RETURN], ["query 'q\\r0'", "id holds a carriage"]),
        ([EMPTY], ["query 'q1', annotator 'ann': the answer is empty"]),
        ([BLOB], ["query 'q1'", "the answer is bytes data, not text"]),
    ],
    ids=["tab", "line-break", "carriage-return", "empty", "blob"],
)
def test_fields_a_table_cannot_hold_are_refused_at_export(tmp_path, statements, fragments):
    """Another tool's tab or line break would make a table `qseg agree` refuses, or one that
    reads other records than the project holds: the export refuses it, naming the query."""
    path = _made(tmp_path / "p.db", queries=3)
    _sql(path, *statements)
    result = qseg("annotate", path, "--export", "-")
    assert_one_line_error(result, "p.db: ", *fragments, "another tool", status=1)
    assert result.stdout == b""
    as_json = qseg("annotate", path, "--export", tmp_path / "out.json")
    assert_one_line_error(as_json, "p.db: ", *fragments, "another tool", status=1)


def test_two_commands_adding_to_one_new_project_at_once_both_land_whole(tmp_path):
    """Two ``qseg annotate --queries`` at once, 30,000 queries each, on a project neither
    has made yet: one makes it, both add all their queries, every position once (before:
    UNIQUE constraint failed: queries.position, and the second batch lost)."""
    count = 30_000
    files = []
    for name, ids in (("a", True), ("b", False)):
        lines = (f"{name}{i}\t" * ids + f"{name} query number {i}\n" for i in range(count))
        files.append(tmp_path / f"{name}.txt")
        files[-1].write_text("".join(lines))
    path = tmp_path / "p.db"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "qseg", "annotate", path, "--queries", f, "--no-serve"],
            stderr=subprocess.PIPE,
            env=env,
        )
        for f in files
    ]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err.decode()
        assert f"{count:,} queries added, 0 duplicates and 0 bad lines left out" in err.decode()
    db = sqlite3.connect(path)
    rows = db.execute("SELECT qid, text, position FROM queries ORDER BY position").fetchall()
    db.close()
    assert [position for _, _, position in rows] == list(range(1, 2 * count + 1))
    assert len({qid for qid, _, _ in rows}) == 2 * count
    expected = {f"{name} query number {i}" for name in "ab" for i in range(count)}
    assert {text for _, text, _ in rows} == expected
    assert not list(tmp_path.glob(".p.db.*"))  # no draft left behind


def _flipped_variants(path: Path, count: int, seed: int) -> Iterator[bytes]:
    """``count`` copies of the project with one byte flipped each: two in three inside the
    text of its tables (answers and queries), the others anywhere."""
    data = path.read_bytes()
    texts = [m.start() for m in re.finditer(rb"query[| ]number", data)]
    rng = random.Random(seed)
    for n in range(count):
        damaged = bytearray(data)
        at = rng.choice(texts) + rng.randrange(14) if n % 3 else rng.randrange(len(data))
        damaged[at] ^= rng.randint(1, 255)
        yield bytes(damaged)


def test_byte_flips_inside_table_text_never_export_silently(tmp_path):
    """Issue 66, item 5: every damaged variant exports the original rows or is refused in
    one line naming the file; before, bytes that were no UTF-8 gave a traceback and a flip
    in an index exported 2,997 of 3,000 rows with status 0."""
    path = _made(tmp_path / "p.db", queries=3000)
    with Project.open(path) as sound:
        reference = sound.export_table("flat")
    variant = tmp_path / "v.db"
    outcomes: Counter[str] = Counter()
    for damaged in _flipped_variants(path, 150, seed=66):
        variant.write_bytes(damaged)
        try:
            with Project.open(variant) as opened:
                table = opened.export_table("flat")
        except QsegError as exc:
            message = str(exc)
            assert message.startswith(f"{variant}: ") and "\n" not in message, message
            outcomes[message.split(": ")[1].split(" ")[0]] += 1
        else:
            assert table == reference
            outcomes["same"] += 1
    assert outcomes["damaged"] > 50 and outcomes["same"] > 0, outcomes


def _index_damaged(path: Path, into: Path) -> Path:
    """A variant of the project that SQLite's quick_check finds sound and its
    integrity_check does not (a flipped byte of an index)."""
    for damaged in _flipped_variants(path, 400, seed=7):
        into.write_bytes(damaged)
        try:
            with Project.open(into) as opened:
                opened.export_table("flat")
        except ProjectError as exc:
            if "integrity_check" in str(exc):
                return into
        except QsegError:
            pass
    raise AssertionError("no seeded flip damaged only an index")


def test_nothing_is_exported_from_a_project_whose_check_fails(tmp_path):
    path = _made(tmp_path / "p.db", queries=3000)
    variant = _index_damaged(path, tmp_path / "v.db")
    for target in ("-", str(tmp_path / "out.tsv"), str(tmp_path / "out.json")):
        result = qseg("annotate", variant, "--export", target)
        assert_one_line_error(result, "v.db: damaged: SQLite's integrity_check finds", status=1)
        assert result.stdout == b""
    assert not list(tmp_path.glob("out*")) and not list(tmp_path.glob(".out*"))


def test_every_export_says_how_many_answers_it_wrote(tmp_path):
    path = _made(tmp_path / "p.db", queries=7)
    for target in ("-", str(tmp_path / "out.tsv")):
        result = qseg("annotate", path, "--export", target)
        assert result.returncode == 0
        where = "stdout" if target == "-" else target
        assert result.stderr.decode() == f"qseg: wrote 7 flat answers to {where}\n"


def test_a_damaged_project_served_answers_503_without_a_traceback(tmp_path):
    pytest.importorskip("httpx", reason="the annotation pages need the serve extra")
    path = _made(tmp_path / "p.db", queries=3000)
    variant = _index_damaged(path, tmp_path / "v.db")
    server = Server(str(variant), command="annotate")
    try:
        answer = server.http.get("/api/export", params={"mode": "flat"})
        assert answer.status_code == 503
        assert "integrity_check" in answer.json()["error"]
        assert server.http.get("/readyz").status_code == 200
    finally:
        log = server.stop()
    assert "Traceback" not in log
