"""Label Studio's JSON task format: queries and answers out as tasks, its exports back in.

`Label Studio <https://labelstud.io>`_ keeps a labelled text span as character offsets into
the task's ``data.text`` with its labels. With :data:`LABEL_CONFIG`, a flat answer is one span
per segment (label ``Segment``, one-word segments too) and a nested answer one span per node
of two or more words, the root included (label ``Bracket``; the spans overlap). Imports come
back as the pipe and bracket text of :mod:`qseg.annotation.project`.

Annotators. Label Studio's JSON export names an annotation's author by ``completed_by``: the
user's integer id, or with the export API's ``expand=annotations.completed_by`` a dict
``{"id", "email", "first_name", "last_name"}``. Importing, it looks a dict up by its
``email`` among the organization's members (then by ``id``), and a bare integer by member
id; an unknown one is given to the importing user by recent versions, and refused by older
ones (an unknown email unless ``ALLOW_IMPORT_TASKS_WITH_UNKNOWN_EMAILS=true``; an unknown
integer always). So :func:`to_tasks` writes ``{"id": n, "email": name}`` (``n`` = 1, 2, ...
in order of first appearance): the name sits where Label Studio looks for a person, so
annotators whose Label Studio email is their qseg name are matched, and :func:`read_tasks`
reads the name back from it. A bare integer would lose the name, and be refused all the same.

Offsets are written in code points (Python ``str`` indices). Label Studio's editor has
counted JavaScript string units (its issue #1347), which drift by one after each emoji and
other characters beyond the Basic Multilingual Plane: :func:`read_tasks` says so when offsets
fit only when counted that way, rather than guessing which count a file used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from qseg.annotation.project import Record
from qseg.errors import InputError, PathError, QsegError
from qseg.fileio import atomic_write, check_output_file, open_binary
from qseg.query import QueryError, normalize, words_of
from qseg.segmentation import NestedSegmentation, Segmentation

FROM_NAME = "segment"
TO_NAME = "text"
FLAT_LABEL = "Segment"
NESTED_LABEL = "Bracket"

LABEL_CONFIG = f"""<View>
  <Labels name="{FROM_NAME}" toName="{TO_NAME}">
    <Label value="{FLAT_LABEL}" background="#1f77b4"/>
    <Label value="{NESTED_LABEL}" background="#ff7f0e"/>
  </Labels>
  <Text name="{TO_NAME}" value="$text"/>
</View>
"""
"""The labelling config of a Label Studio project for flat and nested segmentation."""

_TOKEN = re.compile(r'[^\s"|()]+')  # what normalize() splits on: whitespace and "|()
_GAPS = '"|()'
_UTF16_HINT = (
    "; they would fit if counted in UTF-16 code units, as JavaScript counts "
    "(Label Studio's offsets drift after an emoji)"
)


@dataclass
class Imported:
    """The answers of a Label Studio export, and one line per annotation left out and why."""

    answers: list[Record] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


# -- export ----------------------------------------------------------------------------------


def to_tasks(queries: Sequence[tuple[str, str]], answers: Iterable[Record]) -> list[dict]:
    """Label Studio tasks, one per query ``(qid, text)`` in order, each answer one annotation
    of ``labels`` spans. A :class:`~qseg.errors.QsegError` names an answer to no query, of
    another mode, or whose words are not its query's."""
    tasks: dict[str, dict[str, Any]] = {}
    for position, (qid, text) in enumerate(queries, start=1):
        if qid in tasks:
            raise QsegError(f"query id {qid!r} is given twice")
        data = {"text": text, "qid": qid}
        tasks[qid] = {"id": position, "data": data, "annotations": [], "predictions": []}
    users: dict[str, int] = {}
    offsets: dict[str, list[tuple[int, int]]] = {}
    for number, answer in enumerate(answers, start=1):
        task = tasks.get(answer.qid)
        if task is None:
            raise QsegError(
                f"answer of {answer.annotator!r} to query {answer.qid!r}: no such query"
            )
        if answer.qid not in offsets:
            offsets[answer.qid] = _export_offsets(answer.qid, task["data"])
        text = task["data"]["text"]
        label, spans = _answer_spans(answer, normalize(text))
        chars = offsets[answer.qid]
        results = []
        for k, (a, b) in enumerate(spans):
            start, end = chars[a][0], chars[b - 1][1]
            value = {"start": start, "end": end, "text": text[start:end], "labels": [label]}
            results.append(
                {
                    "id": f"{number}-{k + 1}",
                    "from_name": FROM_NAME,
                    "to_name": TO_NAME,
                    "type": "labels",
                    "origin": "manual",
                    "value": value,
                }
            )
        user = users.setdefault(answer.annotator, len(users) + 1)
        task["annotations"].append(
            {
                "id": number,
                "completed_by": {"id": user, "email": answer.annotator},
                "result": results,
                "was_cancelled": False,
                "ground_truth": False,
            }
        )
    return list(tasks.values())


def _export_offsets(qid: str, data: dict[str, str]) -> list[tuple[int, int]]:
    """The character ranges of a query's words in ``data["text"]``. A text whose words cannot
    be placed in it (a full-width parenthesis, which NFKC makes a separator) is replaced by
    its words joined by spaces, so that every answered query can be exported."""
    try:
        words = normalize(data["text"])
    except QueryError as exc:
        raise QsegError(f"query {qid!r}: {exc}") from None
    offsets = _word_offsets(data["text"], words)
    if offsets is None:
        data["text"] = " ".join(words)
        offsets = _word_offsets(data["text"], words)
        assert offsets is not None
    return offsets


def _answer_spans(answer: Record, words: tuple[str, ...]) -> tuple[str, list[tuple[int, int]]]:
    """The label and word ranges an answer is written as, checked against the query's words."""
    try:
        if answer.mode == "flat":
            structure: Segmentation | NestedSegmentation = Segmentation.from_pipe(answer.value)
            label, spans = FLAT_LABEL, list(structure.spans)
        elif answer.mode == "nested":
            structure = NestedSegmentation.from_brackets(answer.value)
            root = (0, len(structure.words))
            nodes = [s for s in structure.spans if s[1] - s[0] > 1 or s == root]
            label, spans = NESTED_LABEL, sorted(nodes, key=lambda s: (s[0], -s[1]))
        else:
            raise QsegError(f"mode must be flat or nested, not {answer.mode!r}")
    except QsegError as exc:
        raise QsegError(f"answer of {answer.annotator!r} to query {answer.qid!r}: {exc}") from None
    if structure.words != words:
        raise QsegError(
            f"answer of {answer.annotator!r} to query {answer.qid!r}: its words are not the "
            f"query's: {answer.value!r}"
        )
    return label, spans


def tasks_json(tasks: list[dict]) -> str:
    """The tasks as the text of a JSON file."""
    return json.dumps(tasks, ensure_ascii=False, indent=2) + "\n"


def write_tasks(tasks: list[dict], path: str | Path) -> None:
    """Write tasks as a JSON file, atomically: Label Studio never reads half a file."""
    target = check_output_file(path, "Label Studio file")
    try:
        with atomic_write(target) as out:
            out.write(tasks_json(tasks))
    except OSError as exc:
        raise PathError(target, f"cannot be written ({exc.strerror or exc})") from None


# -- import ----------------------------------------------------------------------------------


def read_tasks(path: str | Path) -> Imported:
    """The answers in a Label Studio JSON export (a list of tasks, one task, or JSON lines).

    An annotation whose spans do not fit the words of its task's text is left out and named
    in :attr:`Imported.problems`, the rest imported; a file that is no such export raises a
    one-line :class:`~qseg.errors.InputError` or :class:`~qseg.errors.PathError`.
    """
    source = str(path)
    imported = Imported()
    for number, task in enumerate(_load(Path(path)), start=1):
        _read_task(source, number, task, imported)
    return imported


def _load(path: Path) -> list[Any]:
    """The tasks of a file, or an error naming the file and what is wrong with it."""
    try:
        with open_binary(path) as handle:
            raw = handle.read()
    except OSError as exc:
        raise InputError(path, None, f"cannot be read: {exc.strerror or exc}") from None
    if b"\x00" in raw:
        raise InputError(path, None, "binary data (NUL byte); expected a Label Studio JSON export")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(
            path, None, f"invalid UTF-8 at byte {exc.start}; input must be UTF-8 encoded"
        ) from None
    if not text.strip():
        raise InputError(path, None, "empty file; expected a Label Studio JSON export")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise InputError(
                path, exc.lineno, f"not JSON: {exc.msg} (column {exc.colno})"
            ) from None
        data = _json_lines(path, text)
    except (ValueError, RecursionError) as exc:  # a huge number, nesting too deep
        raise InputError(path, None, f"not JSON: {exc}") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise InputError(
            path, None, f"a JSON {_kind(data)}, not a Label Studio export (a list of tasks)"
        )
    return data


def _json_lines(path: Path, text: str) -> list[Any]:
    """One task a line (JSON lines), for files that hold more than one JSON value."""
    tasks = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                tasks.append(json.loads(line))
            except (ValueError, RecursionError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc
                raise InputError(path, lineno, f"not JSON, nor JSON lines: {reason}") from None
    return tasks


def _kind(value: object) -> str:
    """The JSON name of a parsed value's type, for messages."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _read_task(source: str, number: int, task: object, imported: Imported) -> None:
    """Add a task's answers to ``imported``, and a problem for each annotation left out."""
    where = f"task {number}"
    if not isinstance(task, dict):
        raise InputError(source, None, f"{where} is a JSON {_kind(task)}, not a task object")
    data = task.get("data")
    if not isinstance(data, dict) or "text" not in data:
        raise InputError(
            source, None, f"{where} has no data.text; expected the JSON export of a text project"
        )
    text = data["text"]
    if not isinstance(text, str):
        raise InputError(source, None, f"{where}: data.text is a JSON {_kind(text)}, not text")
    annotations = task.get("annotations", task.get("completions")) or []  # completions: LS 0.x
    if not isinstance(annotations, list):
        raise InputError(source, None, f"{where}: annotations is a JSON {_kind(annotations)}")
    qid = data.get("qid", task.get("id"))
    if qid is None or isinstance(qid, bool) or not isinstance(qid, str | int):
        if annotations:
            imported.problems.append(f"{source}: {where} has no data.qid nor id; skipped")
        return
    where = f"{where} (qid {qid})"
    aligned: tuple[tuple[str, ...], list[tuple[int, int]]] | None = None
    for index, annotation in enumerate(annotations, start=1):
        if not isinstance(annotation, dict):
            raise InputError(source, None, f"{where}: annotation {index} is not an object")
        results = annotation.get("result") or []
        if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
            raise InputError(
                source, None, f"{where}: annotation {index}: result is not a list of objects"
            )
        spans = [r for r in results if r.get("type") == "labels"]  # not choices, ratings...
        if annotation.get("was_cancelled") or not spans:
            continue
        if aligned is None:
            try:
                words = normalize(text)
            except QueryError as exc:
                imported.problems.append(f"{source}: {where}: {exc}; its annotations are skipped")
                return
            offsets = _word_offsets(text, words)
            if offsets is None:
                imported.problems.append(
                    f"{source}: {where}: data.text {_quote(text)} cannot be aligned with its "
                    "words; its annotations are skipped"
                )
                return
            aligned = words, offsets
        prefix = f"{source}: {where}, annotation {index}"
        answer = _read_annotation(prefix, annotation, spans, text, *aligned, imported.problems)
        if answer is not None:
            mode, value, annotator = answer
            imported.answers.append(Record(str(qid), text, annotator, mode, value))


def _annotator(completed_by: object) -> str | None:
    """The annotator's name: an email where given (what :func:`to_tasks` writes), else an id."""
    if isinstance(completed_by, dict):
        email = completed_by.get("email")
        if isinstance(email, str) and email.strip():
            return email.strip()
        completed_by = completed_by.get("id")
    if isinstance(completed_by, bool):
        return None
    if isinstance(completed_by, int):
        return str(completed_by)
    if isinstance(completed_by, str) and completed_by.strip():
        return completed_by.strip()
    return None


def _read_annotation(
    prefix: str,
    annotation: dict[str, Any],
    results: list[dict[str, Any]],
    text: str,
    words: tuple[str, ...],
    offsets: list[tuple[int, int]],
    problems: list[str],
) -> tuple[str, str, str] | None:
    """``(mode, value, annotator)`` of an annotation, or ``None`` with its problems listed."""
    annotator = _annotator(annotation.get("completed_by"))
    if annotator is None:
        problems.append(f"{prefix}: completed_by names no annotator; skipped")
        return None
    starts = {start: i for i, (start, _) in enumerate(offsets)}
    ends = {end: i + 1 for i, (_, end) in enumerate(offsets)}
    spans: dict[tuple[int, int], str] = {}  # word range -> the text it covers
    nested = False
    bad = False
    for k, result in enumerate(results, start=1):
        name = f"result {result['id']!r}" if isinstance(result.get("id"), str) else f"result {k}"
        value = result.get("value")
        value = value if isinstance(value, dict) else {}
        labels = value.get("labels")
        nested = nested or (isinstance(labels, list) and NESTED_LABEL in labels)
        found = _span(text, value, starts, ends)
        if isinstance(found, str):
            problems.append(f"{prefix}, {name}: {found}")
            bad = True
        else:
            spans.setdefault(found[:2], text[found[2] : found[3]])
    if bad:
        return None
    if nested:
        clash = _crossing(spans)
        if clash is not None:
            problems.append(f"{prefix}: brackets {clash[0]!r} and {clash[1]!r} cross; skipped")
            return None
        return "nested", _brackets(words, spans), annotator
    clash = _overlap(spans)
    if clash is not None:
        problems.append(f"{prefix}: segments {clash[0]!r} and {clash[1]!r} overlap; skipped")
        return None
    return "flat", _pipe(words, spans), annotator


def _span(
    text: str, value: dict[str, Any], starts: dict[int, int], ends: dict[int, int]
) -> tuple[int, int, int, int] | str:
    """``(first word, end word, start, end)`` of a result's span, or why it has none."""
    start, end = value.get("start"), value.get("end")
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
        return f"value.start and value.end are not offsets: {start!r}, {end!r}"
    given = value.get("text")
    given = given if isinstance(given, str) else None
    found = _locate(text, start, end, given, starts, ends)  # type: ignore[arg-type]
    if isinstance(found, str) and any(ord(c) > 0xFFFF for c in text):
        index = _utf16_index(text)
        if start in index and end in index:
            moved = _locate(text, index[start], index[end], given, starts, ends)
            if not isinstance(moved, str):
                found += _UTF16_HINT
    return found


def _locate(
    text: str, start: int, end: int, given: str | None, starts: dict[int, int], ends: dict[int, int]
) -> tuple[int, int, int, int] | str:
    """:func:`_span` for offsets counted in code points."""
    if not 0 <= start < end <= len(text):
        return f"offsets {start}-{end} are not a span of {_quote(text)} ({len(text)} characters)"
    covered = text[start:end]
    if given is not None and given.split() != covered.split():
        return f"offsets {start}-{end} cover {covered!r}, not the result's text {given!r}"
    first, last = start, end
    while first < last and (text[first].isspace() or text[first] in _GAPS):
        first += 1
    while last > first and (text[last - 1].isspace() or text[last - 1] in _GAPS):
        last -= 1
    a, b = starts.get(first), ends.get(last)
    if a is None or b is None or a >= b:
        return f"offsets {start}-{end} do not fall on word boundaries of {_quote(text)}"
    return a, b, first, last


def _utf16_index(text: str) -> dict[int, int]:
    """Code point index of each UTF-16 offset of ``text`` that falls between characters."""
    index, unit = {}, 0
    for i, char in enumerate(text):
        index[unit] = i
        unit += 2 if ord(char) > 0xFFFF else 1
    index[unit] = len(text)
    return index


def _word_offsets(text: str, words: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """The character range of each word in ``text``, or ``None`` if they cannot be found
    (a token that NFKC splits into several words, as with a full-width parenthesis)."""
    offsets, found = [], []
    for token in _TOKEN.finditer(text):
        parts = words_of(token.group())
        if len(parts) > 1:
            return None
        if parts:
            offsets.append(token.span())
            found.append(parts[0])
    return offsets if tuple(found) == words else None


def _overlap(spans: dict[tuple[int, int], str]) -> tuple[str, str] | None:
    """Two spans of a flat answer that share a word, if any."""
    ordered = sorted(spans)
    for before, after in pairwise(ordered):
        if before[1] > after[0]:
            return spans[before], spans[after]
    return None


def _crossing(spans: dict[tuple[int, int], str]) -> tuple[str, str] | None:
    """Two spans of a nested answer that neither nest nor are disjoint, if any."""
    open_: list[tuple[int, int]] = []
    for span in sorted(spans, key=lambda s: (s[0], -s[1])):
        while open_ and open_[-1][1] <= span[0]:
            open_.pop()
        if open_ and open_[-1][1] < span[1]:
            return spans[open_[-1]], spans[span]
        open_.append(span)
    return None


def _pipe(words: tuple[str, ...], spans: dict[tuple[int, int], str]) -> str:
    """Pipe text of disjoint spans; a word no span covers is a segment of its own."""
    cuts = {cut for span in spans for cut in span}
    covered = {i for a, b in spans for i in range(a, b)}
    cuts.update(cut for i in range(len(words)) if i not in covered for cut in (i, i + 1))
    breaks = [int(i + 1 in cuts) for i in range(len(words) - 1)]
    return Segmentation(words, breaks).to_pipe()


def _brackets(words: tuple[str, ...], spans: dict[tuple[int, int], str]) -> str:
    """Bracket text of laminar spans plus the root; a word in no span is a leaf."""
    nodes = {s for s in spans if s[1] - s[0] > 1} | {(0, len(words))}
    parts = [
        "(" * sum(a == i for a, _ in nodes) + word + ")" * sum(b == i + 1 for _, b in nodes)
        for i, word in enumerate(words)
    ]
    return NestedSegmentation.from_brackets(" ".join(parts)).to_brackets()


def _quote(text: str) -> str:
    """A query's text for a message line: quoted, long ones cut."""
    return repr(text if len(text) <= 60 else text[:57] + "...")
