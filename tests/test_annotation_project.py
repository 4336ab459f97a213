"""Annotation projects in SQLite: queries added with a report, answers kept with their
history, the latest exported as the table `qseg agree` reads; bad files refused in one line."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from qseg.annotation.project import Project, ProjectError, ProjectExists, Record, parse_answer
from qseg.corpora.annotations import read_annotation_table
from qseg.errors import PathError, QsegError
from qseg.evaluation.agreement import krippendorff_alpha
from qseg.segmentation import NestedSegmentation, Segmentation

LINES = [
    b"q1\tnew york yankees tickets\n",
    b"q2\tstainless steel chest freezers\n",
    b"\n",
    b"q3\tNew York Yankees tickets\n",
    b"q2\tanother text, same id\n",
    b"q4\tbad \xff utf8\n",
    b"q5\tharry potter game\n",
]


@pytest.fixture
def project(tmp_path):
    made = Project.create(tmp_path / "p.db")
    yield made
    made.close()


def test_queries_are_added_once_with_a_report(project):
    report = project.add_queries(LINES, "queries.txt")
    assert report.added == 3
    assert [qid for qid, _ in project.queries()] == ["q1", "q2", "q5"]
    assert len(report.duplicates) == 2 and "queries.txt:4: q3" in report.duplicates[0]
    assert [r.split(":")[1] for r in report.refused] == ["3", "6"]
    again = project.add_queries(LINES[:2], "again.txt")
    assert again.added == 0 and len(again.duplicates) == 2


def test_answers_keep_their_history_and_the_latest_is_exported(project, tmp_path):
    project.add_queries(LINES, "queries.txt")
    for name in ("ann", "bob"):
        project.add_annotator(name)
    project.save("ann", "q1", "flat", "new york|yankees tickets")
    project.save("ann", "q1", "flat", "new york yankees|tickets")  # changed her mind
    project.save("bob", "q1", "flat", "new york yankees|tickets")
    project.save("ann", "q2", "flat", "stainless steel|chest freezers")
    project.save("bob", "q2", "flat", "stainless|steel chest|freezers")
    project.save("ann", "q1", "nested", "(((new york) yankees) tickets)")
    table = project.export_table("flat")
    assert table == (
        "q1\tann\tnew york yankees|tickets\n"
        "q1\tbob\tnew york yankees|tickets\n"
        "q2\tann\tstainless steel|chest freezers\n"
        "q2\tbob\tstainless|steel chest|freezers\n"
    )
    (count,) = sqlite3.connect(tmp_path / "p.db").execute("SELECT COUNT(*) FROM annotations")
    assert count[0] == 6  # nothing overwritten
    path = tmp_path / "flat.tsv"
    path.write_text(table)
    read = read_annotation_table(path)
    assert [a.segmentation for a in read["q2"]] == [
        Segmentation.from_pipe("stainless steel|chest freezers"),
        Segmentation.from_pipe("stainless|steel chest|freezers"),
    ]
    assert -1 <= krippendorff_alpha(read) <= 1
    nested = tmp_path / "nested.tsv"
    nested.write_text(project.export_table("nested"))
    tree = read_annotation_table(nested)["q1"][0].segmentation
    assert tree == NestedSegmentation.from_brackets("(((new york) yankees) tickets)")


def test_a_reopened_project_has_everything(project, tmp_path):
    project.add_queries(LINES[:1], "q.txt")
    project.add_annotator("ann")
    project.save("ann", "q1", "flat", "new york|yankees|tickets")
    project.close()
    again = Project.open(tmp_path / "p.db")
    assert again.export_table("flat") == "q1\tann\tnew york|yankees|tickets\n"
    again.close()


def test_two_annotators_saving_at_once_both_keep_theirs(project, tmp_path):
    """Two connections saving together (a barrier starts them at once), each a different
    answer each time: every acknowledged save is in the history, and each annotator's
    latest is exported."""
    project.add_queries(LINES[:1], "q.txt")
    for name in ("ann", "bob"):
        project.add_annotator(name)
    words = ["new", "york", "yankees", "tickets"]
    answers = [
        "|".join(" ".join(words[a:b]) for a, b in zip((0, *cut), (*cut, 4), strict=True))
        for cut in [(1,), (2,), (3,), (1, 2), (1, 3), (2, 3), (1, 2, 3), ()]
    ]
    start = threading.Barrier(2)
    acknowledged: dict[str, list[str]] = {"ann": [], "bob": []}

    def save(name: str, offset: int) -> None:
        mine = Project.open(tmp_path / "p.db")
        start.wait()
        for i in range(20):
            value = answers[(i + offset) % len(answers)]
            mine.save(name, "q1", "flat", value)
            acknowledged[name].append(value)
        mine.close()

    threads = [threading.Thread(target=save, args=(n, o)) for n, o in (("ann", 0), ("bob", 3))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(values) == 20 for values in acknowledged.values())
    history = project._db.execute("SELECT annotator, value FROM annotations ORDER BY id").fetchall()
    for name, values in acknowledged.items():
        assert [v for a, v in history if a == name] == values
    assert sorted(project.answers("flat")) == [
        ("q1", name, values[-1]) for name, values in sorted(acknowledged.items())
    ]


def test_bad_answers_and_files_are_refused_in_one_line(project, tmp_path):
    project.add_queries(LINES[:1], "q.txt")
    project.add_annotator("ann")
    with pytest.raises(QsegError, match="not those of query q1"):
        project.save("ann", "q1", "flat", "new york|mets")
    with pytest.raises(QsegError, match="nested answer"):
        parse_answer("nested", "((new york) yankees")
    with pytest.raises(QsegError, match="no annotator 'zoe'"):
        project.save("zoe", "q1", "flat", "new york yankees tickets")
    with pytest.raises(PathError, match="exists"):
        Project.create(tmp_path / "p.db")
    (tmp_path / "text.db").write_text("not a database at all, just text\n" * 100)
    with pytest.raises(ProjectError, match="not a qseg annotation project"):
        Project.open(tmp_path / "text.db")
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE t (x)")
    other.close()
    with pytest.raises(ProjectError, match="not a qseg annotation project"):
        Project.open(tmp_path / "other.db")
    newer = sqlite3.connect(tmp_path / "p.db")
    newer.execute("PRAGMA user_version = 99")
    newer.close()
    with pytest.raises(ProjectError, match="newer qseg"):
        Project.open(tmp_path / "p.db")


def _queries(prefix: str, count: int, ids: bool) -> list[bytes]:
    """``count`` distinct queries, none of them another prefix's (ids optional)."""
    return [
        (f"{prefix}{i}\t" if ids else "").encode() + f"{prefix} query number {i}\n".encode()
        for i in range(count)
    ]


def _at_once(*work) -> list:
    """Run each callable in its own thread, all released together; their results in order."""
    barrier = threading.Barrier(len(work))
    results: list = [None] * len(work)

    def run(index: int) -> None:
        barrier.wait()
        results[index] = work[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _stored(path) -> list[tuple[str, str, int]]:
    db = sqlite3.connect(path)
    rows = db.execute("SELECT qid, text, position FROM queries ORDER BY position").fetchall()
    db.close()
    return rows


def test_two_batches_added_at_once_both_land_whole(project, tmp_path):
    """Each batch reads the project's ids, words and positions under the write lock: two
    connections adding at once (one with ids, one without) lose nothing and share no
    position."""
    path = tmp_path / "p.db"
    mine, theirs = _queries("alpha", 4000, ids=True), _queries("beta", 4000, ids=False)

    def add(lines: list[bytes]):
        with Project.open(path, write=True) as opened:
            return opened.add_queries(lines, "batch")

    reports = _at_once(lambda: add(mine), lambda: add(theirs))
    assert [r.added for r in reports] == [4000, 4000]
    assert not any(r.duplicates or r.refused for r in reports)
    rows = _stored(path)
    assert [position for _, _, position in rows] == list(range(1, 8001))
    texts = {text for _, text, _ in rows}
    assert texts == {line.decode().split("\t")[-1].strip() for line in mine + theirs}
    assert len({qid for qid, _, _ in rows}) == 8000


def test_queries_added_while_answers_are_imported_both_land_whole(project, tmp_path):
    path = tmp_path / "p.db"
    lines = _queries("gamma", 3000, ids=False)
    records = [
        Record(f"r{i}", f"delta query number {i}", "ann", "flat", f"delta query|number {i}")
        for i in range(3000)
    ]

    def add():
        with Project.open(path, write=True) as opened:
            return opened.add_queries(lines, "lines")

    def imported():
        with Project.open(path, write=True) as opened:
            return opened.import_records(records, "records")

    added, report = _at_once(add, imported)
    assert added.added == 3000 and (report.queries, report.answers) == (3000, 3000)
    assert report.refused == []
    rows = _stored(path)
    assert [position for _, _, position in rows] == list(range(1, 6001))
    assert len({qid for qid, _, _ in rows}) == 6000
    assert sum(1 for _ in project.answers("flat")) == 3000


def test_of_two_makers_of_one_project_one_makes_it(tmp_path):
    """The file is linked in whole: the other maker is told it exists (the command line
    then opens it), and nobody sees it half made."""
    path = tmp_path / "p.db"

    def make():
        try:
            Project.create(path).close()
        except ProjectExists:
            return "exists"
        return "made"

    assert sorted(_at_once(make, make)) == ["exists", "made"]
    with Project.open(path, write=True) as opened:
        assert opened.query_count() == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.db"]  # no draft left


def test_ids_an_exported_table_cannot_hold_are_never_stored(project):
    """A lone carriage return in an id or an annotator would be refused at export: it is
    refused when it comes in."""
    report = project.add_queries([b"q\r1\tnew york\n", b"q2\tparis\n"], "q.txt")
    assert report.added == 1 and report.refused == [
        "q.txt:1: query id 'q\\r1' holds a carriage return"
    ]
    with pytest.raises(QsegError, match="one line of text"):
        project.add_annotator("ann\rbob")
