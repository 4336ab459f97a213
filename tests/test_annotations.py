"""Readers of multi-annotator data: Webis votes, bracket files, annotation tables, judgments."""

from __future__ import annotations

import math

import pytest
from conftest import SHARED, webis_file

from qseg.corpora.annotations import (
    Annotation,
    detect_format,
    read_annotation_table,
    read_annotations,
    read_bracket_files,
    read_judgments,
    read_webis_votes,
)
from qseg.errors import InputError, QsegError
from qseg.segmentation import NestedSegmentation, Segmentation

SAHAROY = SHARED / "data" / "saharoy-sigir12"

VOTES = "7\t[(3, 'new york|yankees'), (1, 'new|york|yankees')]\n8\t[(2, 'a b')]\n"


def test_webis_votes_become_one_annotation_per_vote(write):
    annotations = read_webis_votes(write("votes.txt", VOTES))
    assert list(annotations) == ["7", "8"]
    assert [a.annotator for a in annotations["7"]] == ["1", "2", "3", "4"]
    assert [a.segmentation.to_pipe() for a in annotations["7"]] == [
        "new york|yankees",
        "new york|yankees",
        "new york|yankees",
        "new|york|yankees",
    ]
    assert annotations["8"] == [Annotation("1", Segmentation.from_pipe("a b"))] * 1 + [
        Annotation("2", Segmentation.from_pipe("a b"))
    ]


def test_the_real_webis_votes_expand_to_38537_annotations():
    annotations = read_webis_votes(
        webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt")
    )
    sizes = [len(a) for a in annotations.values()]
    # 3,840 queries with 10 votes and 8 with more (README of the corpus reader).
    assert len(annotations) == 3848
    assert sum(sizes) == 38537 and sizes.count(10) == 3840


def test_bracket_files_one_annotator_each(write):
    first = write("alice.txt", "((new york) yankees)\n((a) (b)) (c)\n")
    second = write("bob.txt", "(new (york yankees))\n(a b c)\n")
    annotations = read_bracket_files([first, second])
    assert list(annotations) == ["1", "2"]
    assert [a.annotator for a in annotations["1"]] == ["alice", "bob"]
    assert annotations["1"][1].segmentation.heights == (1, 0)
    # several top-level parts are joined under one root
    assert annotations["2"][0].segmentation.to_brackets() == "((a b) c)"
    assert annotations["2"][1].segmentation.heights == (0, 0)


@pytest.mark.parametrize(
    "files, message",
    [
        ({"a.txt": "(x y)\n", "b.txt": "(x z)\n"}, "b.txt:1: item '1' is 'x y'"),
        ({"a.txt": "(x y)\n(p q)\n", "b.txt": "(x y)\n"}, "differ in length"),
        ({"a.txt": "(x y\n"}, "a.txt:1: unbalanced '(' in '(x y'"),
        ({"a.txt": "x|y\n"}, "a.txt:1: expected bracket text"),
        ({"a.txt": "(x y)\n\n"}, "a.txt:2: empty line"),
        ({"a.txt": ""}, "a.txt: no records"),
    ],
)
def test_bad_bracket_files(write, files, message):
    paths = [write(name, text) for name, text in files.items()]
    with pytest.raises(QsegError, match=message.replace("(", r"\(").replace("|", r"\|")):
        read_bracket_files(paths)


def test_the_mishra_wiki_nested_schemes_load():
    paths = sorted((SAHAROY / "mishra-wiki-nested").glob("scheme_*.txt"))
    if not paths:
        pytest.skip(f"saharoy-sigir12 data not found at {SAHAROY} (../shared is absent)")
    annotations = read_bracket_files(paths)
    assert len(annotations) == 500 and {len(a) for a in annotations.values()} == {17}
    first = annotations["1"]
    assert first[0].annotator == "scheme_000"
    assert first[0].segmentation.to_brackets() == "((larry the lawnmower) (tv show))"
    assert first[1].segmentation.to_brackets() == "((larry (the lawnmower)) (tv show))"
    wide = sum(not a.segmentation.is_binary for annots in annotations.values() for a in annots)
    assert 0 < wide < 500 * 17


def test_annotation_tables_mix_flat_and_nested(write):
    path = write(
        "table.tsv",
        "q1\tann1\tnew york|yankees\nq1\tann2\tnew|york yankees\nq2\tann1\t((a b) c)\n",
    )
    annotations = read_annotation_table(path)
    assert annotations["q1"][1] == Annotation("ann2", Segmentation.from_pipe("new|york yankees"))
    assert annotations["q2"][0].segmentation == NestedSegmentation.from_brackets("((a b) c)")


@pytest.mark.parametrize(
    "text, message",
    [
        ("q1\tann1\ta|b\nq1\tann1\ta b\n", "t.tsv:2: annotator 'ann1' annotated 'q1' twice"),
        ("q1\tann1\ta|b\nq1\tann2\ta c\n", "t.tsv:2: item 'q1' is 'a b'"),
        ("q1\tann1\ta||b\n", "t.tsv:1: empty segment"),
        ("q1\ta|b\n", "t.tsv:1: expected 3 tab-separated fields"),
        ("\tann1\ta|b\n", "t.tsv:1: empty item"),
        ("q1\tann1\t(a b\n", "t.tsv:1: unbalanced '(' in '(a b'"),
        (b"q1\tann1\t\xff\n", "t.tsv:1: invalid UTF-8"),
    ],
)
def test_bad_annotation_tables(write, text, message):
    with pytest.raises(InputError) as info:
        read_annotation_table(write("t.tsv", text))
    assert message in str(info.value)


def test_formats_are_detected_from_the_first_line(write):
    assert detect_format(write("v.txt", VOTES)) == "votes"
    assert detect_format(write("t.tsv", "q\ta\tx|y\n")) == "table"
    assert detect_format(write("b.txt", "((x y) z)\n")) == "brackets"
    assert detect_format(write("j.tsv", "query\tdoc\tjudge1\tjudge2\n")) == "judgments"
    with pytest.raises(InputError, match="cannot tell the format"):
        detect_format(write("x.txt", "hello world\n"))
    with pytest.raises(InputError, match="empty"):
        detect_format(write("e.txt", ""))


def test_read_annotations_merges_files_and_refuses_an_item_twice(write):
    a = write("a.tsv", "q1\tx\ta|b\nq1\ty\ta b\n")
    b = write("b.tsv", "q2\tx\tc|d\nq2\ty\tc|d\n")
    assert list(read_annotations([a, b])) == ["q1", "q2"]
    with pytest.raises(QsegError, match="'q1' is also in an earlier file"):
        read_annotations([a, a])


JUDGMENTS = "query\turl\tjudge1\tjudge2\tfinal\n1\tu1\t2\t1\t1\n1\tu2\t0\t\t0\n2\tu1\t1\t-\t1\n"


def test_judgment_tables(write):
    judgments = read_judgments(write("j.tsv", JUDGMENTS))
    assert judgments.judges == ("judge1", "judge2")
    assert judgments.items == (("1", "u1"), ("1", "u2"), ("2", "u1"))
    assert judgments.grades[0].tolist() == [2.0, 1.0]
    assert judgments.grades[1, 0] == 0 and math.isnan(judgments.grades[1, 1])
    chosen = read_judgments(write("j.tsv", JUDGMENTS), judges=["judge2", "final"])
    assert chosen.judges == ("judge2", "final") and chosen.grades[0].tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "text, judges, message",
    [
        ("", None, "no header"),
        ("query\tjudge1\n", None, "no judgments after the header"),
        ("query\tjudge1\n1\tx\n", None, "j.tsv:2: grade 'x' of judge1 is not an integer"),
        ("query\tjudge1\n1\t1\n1\t2\n", None, "j.tsv:3: item ('1',) judged twice"),
        ("query\tjudge1\n1\t1\t2\n", None, "j.tsv:2: expected 2 tab-separated fields"),
        ("query\tgrade\n1\t1\n", None, "judge columns"),
        ("query\tjudge1\n1\t1\n", ["judge9"], "['judge9'] not in the header"),
        ("judge1\tjudge2\n1\t1\n", None, "no item columns"),
    ],
)
def test_bad_judgment_tables(write, text, judges, message):
    with pytest.raises(InputError) as info:
        read_judgments(write("j.tsv", text), judges)
    assert message in str(info.value)


def test_the_saharoy_judgments_load():
    path = SAHAROY / "judgments.tsv"
    if not path.exists():
        pytest.skip(f"saharoy-sigir12 data not found at {SAHAROY} (../shared is absent)")
    judgments = read_judgments(path)
    assert judgments.judges == ("judge1", "judge2", "judge3")
    assert judgments.grades.shape == (15000, 3)
    assert len({q for q, _ in judgments.items}) == 500
    assert set(judgments.grades.ravel().tolist()) == {0.0, 1.0, 2.0}
