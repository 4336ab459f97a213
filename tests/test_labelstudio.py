"""Label Studio interop: answers survive a round trip through its JSON task format, its own
exports import to pipe and bracket text, spans that fit no words are listed (with the UTF-16
hint after an emoji) while the rest imports, and bad files fail in one line naming the file."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from qseg.annotation.labelstudio import (
    FLAT_LABEL,
    FROM_NAME,
    LABEL_CONFIG,
    NESTED_LABEL,
    TO_NAME,
    read_tasks,
    to_tasks,
    write_tasks,
)
from qseg.annotation.project import Record
from qseg.errors import InputError, PathError, QsegError

NYY = "New York Yankees tickets"
FREEZERS = "stainless steel  chest freezers"
FOOTBALL = "🏈 NY Giants tickets"
WIDE = "new\uff08york"  # a full-width "(": one token, which NFKC makes two words


def span(rid: str, start: int, end: int, label: str = FLAT_LABEL, text: str | None = None):
    """A result the way Label Studio writes it (value.text only when given)."""
    value: dict = {"start": start, "end": end, "labels": [label]}
    if text is not None:
        value["text"] = text
    return {
        "value": value,
        "id": rid,
        "from_name": FROM_NAME,
        "to_name": TO_NAME,
        "type": "labels",
        "origin": "manual",
    }


def annotation(user, *results, **extra):
    """An annotation with the keys of a real export around its results."""
    return {
        "id": 40,
        "completed_by": user,
        "result": list(results),
        "was_cancelled": False,
        "ground_truth": False,
        "created_at": "2024-05-02T09:14:27.123456Z",
        "updated_at": "2024-05-02T09:14:27.123456Z",
        "draft_created_at": None,
        "lead_time": 7.81,
        "prediction": {},
        "result_count": 0,
        "unique_id": "0c4e1b5e-4f5a-4a51-9a0b-5b2f7c1d9e11",
        "import_id": None,
        "last_action": None,
        "task": 1,
        "project": 3,
        "updated_by": user,
        "parent_prediction": None,
        "parent_annotation": None,
        "last_created_by": None,
        **extra,
    }


def task(task_id: int, text: str, *annotations, **data):
    return {
        "id": task_id,
        "annotations": list(annotations),
        "file_upload": "a1b2c3d4-queries.json",
        "drafts": [],
        "predictions": [],
        "data": {"text": text, **data},
        "meta": {},
        "created_at": "2024-05-02T09:00:00.000000Z",
        "updated_at": "2024-05-02T09:14:27.200000Z",
        "inner_id": task_id,
        "total_annotations": len(annotations),
        "cancelled_annotations": 0,
        "total_predictions": 0,
        "comment_count": 0,
        "unresolved_comment_count": 0,
        "last_comment_updated_at": None,
        "project": 3,
        "updated_by": None,
        "comment_authors": [],
    }


def test_answers_of_two_annotators_survive_a_round_trip(tmp_path):
    queries = [("q1", NYY), ("q2", FREEZERS), ("q3", FOOTBALL)]
    answers = [
        Record("q1", NYY, "ann", "flat", "new york yankees|tickets"),
        Record("q1", NYY, "bob", "flat", "new york|yankees|tickets"),
        Record("q1", NYY, "ann", "nested", "(((new york) yankees) tickets)"),
        Record("q1", NYY, "bob", "nested", "((new york) (yankees tickets))"),
        Record("q2", FREEZERS, "bob", "nested", "(stainless steel chest freezers)"),
        Record("q3", FOOTBALL, "ann", "flat", "🏈|ny giants|tickets"),
        Record("q3", FOOTBALL, "bob", "nested", "(🏈 ((ny giants) tickets))"),
    ]
    tasks = to_tasks(queries, answers)
    path = tmp_path / "tasks.json"
    write_tasks(tasks, path)

    imported = read_tasks(path)
    assert imported.problems == []
    assert imported.answers == answers

    written = json.loads(path.read_text(encoding="utf-8"))
    assert [t["data"] for t in written] == [{"text": t, "qid": q} for q, t in queries]
    first = written[0]["annotations"]
    assert [a["completed_by"] for a in first] == [
        {"id": 1, "email": "ann"},
        {"id": 2, "email": "bob"},
        {"id": 1, "email": "ann"},
        {"id": 2, "email": "bob"},
    ]
    assert [
        (r["value"]["start"], r["value"]["end"], r["value"]["text"]) for r in first[0]["result"]
    ] == [
        (0, 16, "New York Yankees"),
        (17, 24, "tickets"),
    ]
    assert {r["value"]["labels"][0] for r in first[2]["result"]} == {NESTED_LABEL}
    assert [r["value"]["text"] for r in first[2]["result"]] == [NYY, "New York Yankees", "New York"]
    # offsets count code points: "ny giants" starts at 2, after the emoji and a space
    football = written[2]["annotations"][0]["result"]
    assert [(r["value"]["start"], r["value"]["end"]) for r in football] == [
        (0, 1),
        (2, 11),
        (12, 19),
    ]


def test_the_label_config_names_what_the_tasks_use():
    view = ET.fromstring(LABEL_CONFIG)
    labels = view.find("Labels")
    assert labels is not None and labels.get("name") == FROM_NAME
    assert labels.get("toName") == TO_NAME
    assert [label.get("value") for label in labels] == [FLAT_LABEL, NESTED_LABEL]
    text = view.find("Text")
    assert text is not None and (text.get("name"), text.get("value")) == (TO_NAME, "$text")


def test_an_export_written_by_label_studio_imports(write):
    export = [
        task(
            17,
            NYY,
            annotation(
                3, span("aB3xK9pQ2z", 0, 16, text="New York Yankees"), span("Zq81LmN0vc", 17, 24)
            ),
            annotation(
                5,
                span("p0Oq1Wx2Ee", 0, 16, NESTED_LABEL),
                span("t7Uy6Rr5Hh", 0, 8, NESTED_LABEL, text="New York"),
            ),
            annotation(6, span("c4Nc3lL3dd", 0, 3), was_cancelled=True),
            annotation(7),
            annotation(
                8,
                {
                    "value": {"choices": ["navigational"]},
                    "id": "k2Kk2Kk2Kk",
                    "from_name": "intent",
                    "to_name": "text",
                    "type": "choices",
                    "origin": "manual",
                },
            ),
            annotation(9, span("n1N1n1N1n1", 0, 24, NESTED_LABEL)),
        ),
        task(
            18,
            "cheap flights to New York",
            annotation(
                {"id": 3, "email": "ann@example.com", "first_name": "Ann", "last_name": ""},
                span("f1F1f1F1f1", 0, 14, text="cheap flights "),  # a trailing space selected
                span("g2G2g2G2g2", 17, 25, text="New York"),
            ),
            qid="q7",
        ),
    ]
    export[0]["predictions"] = [
        {
            "id": 11,
            "model_version": "qseg-default",
            "created_ago": "2 hours",
            "score": 0.82,
            "result": [dict(span("m9M9m9M9m9", 0, 3), score=0.82)],
            "cluster": None,
            "neighbors": None,
            "mislabeling": 0.0,
            "task": 17,
            "project": 3,
        }
    ]
    export[0]["drafts"] = [{"id": 2, "user": "ann@example.com", "result": [span("d", 0, 3)]}]
    path = write("project-3-at-2024-05-02-09-20-4b1f2a.json", json.dumps(export))

    imported = read_tasks(path)
    assert imported.problems == []
    assert imported.answers == [
        Record("17", NYY, "3", "flat", "new york yankees|tickets"),
        Record("17", NYY, "5", "nested", "(((new york) yankees) tickets)"),
        Record("17", NYY, "9", "nested", "(new york yankees tickets)"),
        Record(
            "q7",
            "cheap flights to New York",
            "ann@example.com",
            "flat",
            "cheap flights|to|new york",
        ),
    ]


def test_one_task_object_and_json_lines_are_read(write):
    one = task(1, "new york", annotation(2, span("a", 0, 8)), qid="q1")
    other = task(2, "harry potter", annotation(2, span("b", 0, 5), span("c", 6, 12)), qid="q2")
    single = read_tasks(write("one.json", json.dumps(one)))
    lines = read_tasks(write("tasks.jsonl", json.dumps(one) + "\n" + json.dumps(other) + "\n"))
    assert [a.value for a in single.answers] == ["new york"]
    assert [a.value for a in lines.answers] == ["new york", "harry|potter"]


def test_offsets_counted_in_utf16_after_an_emoji_are_listed_with_a_hint(write):
    # "🏈" is one code point and two UTF-16 units: JavaScript offsets are one too far after it
    export = [
        task(
            1,
            FOOTBALL,
            annotation(3, span("js1", 3, 12, text="NY Giants"), span("js2", 13, 20)),
            annotation(4, span("py1", 2, 11, text="NY Giants"), span("py2", 12, 19)),
        )
    ]
    path = write("export.json", json.dumps(export))
    imported = read_tasks(path)
    assert imported.answers == [Record("1", FOOTBALL, "4", "flat", "🏈|ny giants|tickets")]
    hint = (
        "; they would fit if counted in UTF-16 code units, as JavaScript counts "
        "(Label Studio's offsets drift after an emoji)"
    )
    assert imported.problems == [
        f"{path}: task 1 (qid 1), annotation 1, result 'js1': offsets 3-12 cover "
        f"'Y Giants ', not the result's text 'NY Giants'{hint}",
        f"{path}: task 1 (qid 1), annotation 1, result 'js2': offsets 13-20 are not a span of "
        f"'🏈 NY Giants tickets' (19 characters){hint}",
    ]


def test_spans_that_fit_no_words_are_listed_and_the_rest_imported(write):
    export = [
        task(
            1,
            NYY,
            annotation(1, span("cut", 1, 8), span("ok", 9, 16)),
            annotation(2, span("s1", 0, 8), span("s2", 4, 16)),
            annotation(3, span("b1", 0, 8, NESTED_LABEL), span("b2", 4, 16, NESTED_LABEL)),
            annotation(4, span("s3", 0, 16)),
            qid="q1",
        ),
        task(2, WIDE, annotation(1, span("w", 0, 3)), qid="q2"),
    ]
    path = write("export.json", json.dumps(export))
    imported = read_tasks(path)
    assert imported.answers == [Record("q1", NYY, "4", "flat", "new york yankees|tickets")]
    assert imported.problems == [
        f"{path}: task 1 (qid q1), annotation 1, result 'cut': offsets 1-8 do not fall on "
        f"word boundaries of '{NYY}'",
        f"{path}: task 1 (qid q1), annotation 2: segments 'New York' and 'York Yankees' "
        "overlap; skipped",
        f"{path}: task 1 (qid q1), annotation 3: brackets 'New York' and 'York Yankees' "
        "cross; skipped",
        f"{path}: task 2 (qid q2): data.text {WIDE!r} cannot be aligned with its words; "
        "its annotations are skipped",
    ]


BAD_FILES = [
    ("empty.json", b"", "empty file"),
    ("blank.json", b"  \n\n", "empty file"),
    ("broken.json", b'[{"data": {"text": "new york"}', "not JSON: Expecting"),
    ("string.json", b'"new york"', "a JSON string, not a Label Studio export"),
    ("number.json", b"42", "a JSON number, not a Label Studio export"),
    ("image.json", b'[{"id": 1, "data": {"image": "1.jpg"}}]', "task 1 has no data.text"),
    ("nodata.json", b'[{"id": 1}]', "task 1 has no data.text"),
    ("listed.json", b"[[1, 2]]", "task 1 is a JSON array, not a task object"),
    ("typed.json", b'[{"data": {"text": 5}}]', "task 1: data.text is a JSON number"),
    ("annotations.json", b'[{"data": {"text": "a"}, "annotations": 3}]', "annotations is"),
    (
        "result.json",
        b'[{"id": 1, "data": {"text": "a"}, "annotations": [{"result": [1]}]}]',
        "result is",
    ),
    ("binary.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary data (NUL byte)"),
    ("latin1.json", '[{"data": {"text": "café"}}]'.encode("latin-1"), "invalid UTF-8 at byte"),
]


@pytest.mark.parametrize(("name", "content", "reason"), BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_files_fail_in_one_line_naming_the_file(write, name, content, reason):
    path = write(name, content)
    with pytest.raises(InputError) as caught:
        read_tasks(path)
    message = str(caught.value)
    assert message.startswith(f"{path}")
    assert reason in message
    assert "\n" not in message


def test_missing_files_and_folders_are_path_errors(tmp_path):
    with pytest.raises(PathError, match="no such file") as caught:
        read_tasks(tmp_path / "absent.json")
    assert str(caught.value) == f"{tmp_path / 'absent.json'}: no such file"
    with pytest.raises(PathError, match="is a directory"):
        read_tasks(tmp_path)
    with pytest.raises(PathError, match="is a directory"):
        write_tasks([], tmp_path)


def test_answers_that_do_not_fit_their_query_are_refused():
    queries = [("q1", NYY)]
    with pytest.raises(QsegError, match="'q9': no such query"):
        to_tasks(queries, [Record("q9", NYY, "ann", "flat", "new york")])
    with pytest.raises(QsegError, match="its words are not the query's"):
        to_tasks(queries, [Record("q1", NYY, "ann", "flat", "new york|tickets")])
    with pytest.raises(QsegError, match="mode must be flat or nested"):
        to_tasks(queries, [Record("q1", NYY, "ann", "tree", "new york yankees tickets")])


def test_a_text_its_words_cannot_be_placed_in_is_exported_as_its_words(tmp_path):
    """A query whose words cannot be found in its text (NFKC makes the full-width "(" a
    separator) is still exported: as its words joined by spaces, which imports back."""
    tasks = to_tasks([("q2", WIDE)], [Record("q2", WIDE, "ann", "flat", "new|york")])
    assert tasks[0]["data"]["text"] == "new york"
    spans = [r["value"]["text"] for r in tasks[0]["annotations"][0]["result"]]
    assert spans == ["new", "york"]
    path = tmp_path / "wide.json"
    write_tasks(tasks, path)
    imported = read_tasks(path)
    assert imported.problems == []
    assert imported.answers == [Record("q2", "new york", "ann", "flat", "new|york")]
