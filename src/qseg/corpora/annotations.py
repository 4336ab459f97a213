"""Readers for multi-annotator data: segmentations per item, and graded relevance judgments.

Segmentations (flat or nested) come as:

- the Webis crowd-vote file, expanded so that a segmentation with ``k`` votes becomes ``k``
  annotations (annotator ids are synthetic: the crowd workers are not in the file);
- bracket files, one per annotator, one nested segmentation a line, line ``i`` of every file
  about item ``i``; several top-level parts on a line are joined under one root;
- tables ``item<TAB>annotator<TAB>segmentation``, where a segmentation starting with ``(`` is
  bracket text and anything else pipe text.

Relevance judgments come as a table with a header row, one row per judged (query, document)
pair, one column per judge, grades as integers and an empty cell or ``-`` for "not judged".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qseg.corpora.webis import read_votes
from qseg.errors import InputError, QsegError
from qseg.fileio import StrPath, read_lines, split_fields
from qseg.segmentation import NestedSegmentation, Segmentation

Structure = Segmentation | NestedSegmentation


@dataclass(frozen=True)
class Annotation:
    """One annotator's segmentation of one item."""

    annotator: str
    segmentation: Structure


Annotations = dict[str, list[Annotation]]
"""Item id -> its annotations, in file order."""


def annotations_of(items: Mapping[str, Sequence[Structure]]) -> Annotations:
    """Wrap plain segmentations per item as annotations by annotators ``"1"``, ``"2"``, ..."""
    return {
        item: [Annotation(str(i), seg) for i, seg in enumerate(segs, 1)]
        for item, segs in items.items()
    }


INPUT_FORMATS = ("votes", "table", "brackets", "judgments")


def detect_format(path: StrPath) -> str:
    """Which of :data:`INPUT_FORMATS` a file is in, from its first line."""
    source = str(path)
    first = next(read_lines(path), None)
    if first is None:
        raise InputError(source, None, "no records in file (it is empty)")
    fields = first[1].split("\t")
    if len(fields) == 2 and fields[1].lstrip().startswith("["):
        return "votes"
    if any(f.strip().lower().startswith("judge") for f in fields):
        return "judgments"
    if len(fields) == 3:
        return "table"
    if len(fields) == 1 and fields[0].lstrip().startswith("("):
        return "brackets"
    raise InputError(
        source,
        1,
        "cannot tell the format: expected Webis votes (id<TAB>[(votes, 'seg|ments'), ...]), "
        "item<TAB>annotator<TAB>segmentation, bracket text, or a judgment table with judge* "
        "columns",
    )


def read_annotations(paths: Sequence[StrPath], input_format: str | None = None) -> Annotations:
    """Segmentation annotations from files in one of the segmentation formats (default: detected).

    Bracket files hold one annotator each; the other formats are read one file after another
    and merged (an item may not appear in two files).
    """
    if not paths:
        raise QsegError("no annotation files given")
    kind = input_format or detect_format(paths[0])
    if kind == "brackets":
        return read_bracket_files(paths)
    readers = {"votes": read_webis_votes, "table": read_annotation_table}
    if kind not in readers:
        raise QsegError(f"{kind!r} is not a format of segmentation annotations")
    result: Annotations = {}
    for path in paths:
        part = readers[kind](path)
        clash = part.keys() & result.keys()
        if clash:
            raise QsegError(f"{path}: item {sorted(clash)[0]!r} is also in an earlier file")
        result.update(part)
    return result


def read_webis_votes(path: StrPath) -> Annotations:
    """The Webis crowd votes, one annotation per vote (annotators ``"1"`` .. ``"10"``)."""
    result: Annotations = {}
    for item, references in read_votes(path).items():
        expanded = [ref.segmentation for ref in references for _ in range(ref.votes)]
        result[item] = [Annotation(str(i), seg) for i, seg in enumerate(expanded, 1)]
    return result


def _parse_structure(text: str, source: str, lineno: int) -> Structure:
    rooted = f"({text})"  # a line may hold several top-level groups: they get one root
    try:
        if text.lstrip().startswith("("):
            return NestedSegmentation.from_brackets(rooted)
        return Segmentation.from_pipe(text)
    except QsegError as exc:  # the message quotes the line as written, not the rooted text
        raise InputError(source, lineno, str(exc).replace(repr(rooted), repr(text))) from None


def read_bracket_files(paths: Sequence[StrPath]) -> Annotations:
    """Nested segmentations from one bracket file per annotator (named by its file stem).

    Items are the line numbers (``"1"``, ``"2"``, ...); every file must have the same number of
    lines and the same words on each line.
    """
    if not paths:
        raise QsegError("no bracket files given")
    result: Annotations = {}
    lengths = {}
    for path in paths:
        annotator = Path(path).stem
        source = str(path)
        count = 0
        for lineno, line in read_lines(path):
            if not line.strip():
                raise InputError(source, lineno, "empty line (expected bracket text)")
            nested = _parse_structure(line, source, lineno)
            if not isinstance(nested, NestedSegmentation):
                raise InputError(source, lineno, "expected bracket text starting with '('")
            item = str(lineno)
            _add(result, item, Annotation(annotator, nested), source, lineno)
            count = lineno
        if count == 0:
            raise InputError(source, None, "no records in file (it is empty)")
        lengths[source] = count
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{source}: {n}" for source, n in lengths.items())
        raise QsegError(f"bracket files differ in length ({detail})")
    return result


def read_annotation_table(path: StrPath) -> Annotations:
    """Annotations from ``item<TAB>annotator<TAB>segmentation`` lines."""
    source = str(path)
    result: Annotations = {}
    for lineno, line in read_lines(path):
        item, annotator, text = split_fields(line, source, lineno, 3)
        if not item.strip() or not annotator.strip():
            raise InputError(source, lineno, "empty item or annotator id")
        annotation = Annotation(annotator, _parse_structure(text, source, lineno))
        if any(a.annotator == annotator for a in result.get(item, ())):
            raise InputError(source, lineno, f"annotator {annotator!r} annotated {item!r} twice")
        _add(result, item, annotation, source, lineno)
    if not result:
        raise InputError(source, None, "no records in file (it is empty)")
    return result


def _add(result: Annotations, item: str, annotation: Annotation, source: str, line: int) -> None:
    """Append an annotation, checking that all annotations of an item segment the same words."""
    known = result.setdefault(item, [])
    if known and known[0].segmentation.words != annotation.segmentation.words:
        raise InputError(
            source,
            line,
            f"item {item!r} is {' '.join(known[0].segmentation.words)!r} in an earlier "
            f"annotation, not {' '.join(annotation.segmentation.words)!r}",
        )
    known.append(annotation)


@dataclass(frozen=True)
class Judgments:
    """Graded labels of several judges: ``grades[i, j]`` is judge ``j``'s grade of item ``i``."""

    items: tuple[tuple[str, ...], ...]
    judges: tuple[str, ...]
    grades: np.ndarray  # float, NaN where a judge gave no grade


def read_judgments(path: StrPath, judges: Sequence[str] | None = None) -> Judgments:
    """A relevance-judgment table with a header row.

    ``judges`` names the grade columns (default: every column whose name starts with
    ``judge``); the columns before the first of them identify the item.
    """
    source = str(path)
    lines = read_lines(path)
    first = next(lines, None)
    if first is None:
        raise InputError(source, None, "no header row (the file is empty)")
    header = first[1].split("\t")
    chosen = list(judges) if judges else [h for h in header if h.lower().startswith("judge")]
    missing = [name for name in chosen if name not in header]
    if missing or not chosen:
        raise InputError(
            source,
            1,
            f"judge columns {missing or 'judge*'} not in the header {header}",
        )
    columns = [header.index(name) for name in chosen]
    keys = list(range(min(columns)))
    if not keys:
        raise InputError(source, 1, "no item columns before the first judge column")
    items: list[tuple[str, ...]] = []
    rows: list[list[float]] = []
    seen: set[tuple[str, ...]] = set()
    for lineno, line in lines:
        fields = split_fields(line, source, lineno, len(header))
        key = tuple(fields[k] for k in keys)
        if key in seen:
            raise InputError(source, lineno, f"item {key} judged twice")
        seen.add(key)
        row = []
        for c in columns:
            cell = fields[c].strip()
            if cell in ("", "-"):
                row.append(float("nan"))
                continue
            try:
                row.append(float(int(cell)))
            except ValueError:
                raise InputError(
                    source, lineno, f"grade {cell!r} of {header[c]} is not an integer"
                ) from None
        items.append(key)
        rows.append(row)
    if not rows:
        raise InputError(source, None, "no judgments after the header row")
    return Judgments(tuple(items), tuple(chosen), np.array(rows, dtype=float))
