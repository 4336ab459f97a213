"""Annotation projects in SQLite: queries added with a report, answers kept with their
history, the latest exported as the table `qseg agree` reads; bad files refused in one line."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from qseg.annotation.project import Project, ProjectError, parse_answer
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
    project.add_queries(LINES[:1], "q.txt")
    for name in ("ann", "bob"):
        project.add_annotator(name)

    def save(name: str) -> None:
        mine = Project.open(tmp_path / "p.db")
        for _ in range(20):
            mine.save(name, "q1", "flat", "new york yankees|tickets")
        mine.close()

    threads = [threading.Thread(target=save, args=(n,)) for n in ("ann", "bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a for _, a, _ in project.answers("flat")] == ["ann", "bob"]


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
