"""Annotated queries to train on, however a team has them: an annotation project (``qseg
annotate``'s SQLite file), a gold file ``qseg train --gold`` reads, or segmentations given in
Python."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence

from qseg.corpora.training import TrainingData, read_training_data
from qseg.errors import InputError
from qseg.fileio import StrPath
from qseg.segmentation import Reference, Segmentation, Target, as_target, target_words

SQLITE = b"SQLite format 3\x00"
"""How an SQLite file begins (an annotation project is one)."""

Annotated = str | os.PathLike[str] | Sequence[str | Segmentation] | Mapping[str, Target]
"""Annotations as :func:`annotated` takes them."""


def is_project(path: StrPath) -> bool:
    """Whether ``path`` is an SQLite file (so, for qseg, an annotation project)."""
    try:
        with open(path, "rb") as file:
            return file.read(len(SQLITE)) == SQLITE
    except OSError:
        return False  # (reading it as a gold file says what is wrong with it)


def read_annotated(
    path: StrPath, queries: StrPath | None = None, pos: StrPath | None = None
) -> TrainingData:
    """The annotated queries of a gold file (:func:`qseg.corpora.training.read_training_data`,
    with ``queries`` and ``pos``) or of an annotation project: each query with a flat answer,
    in the project's order, each annotator's latest answer a vote."""
    if not is_project(path):
        return read_training_data(path, queries, pos)
    from qseg.annotation.project import Project, parse_answer

    if queries is not None or pos is not None:
        raise InputError(path, None, "an annotation project is read whole (no --queries, --pos)")
    votes: dict[str, Counter[Segmentation]] = {}
    with Project.open(os.fspath(path)) as project:
        for record in project.records("flat"):
            answer = parse_answer("flat", record.value)
            assert isinstance(answer, Segmentation)  # (a flat answer)
            votes.setdefault(record.qid, Counter())[answer] += 1
    if not votes:
        raise InputError(path, None, "the project has no flat answers yet to train on")
    ids = list(votes)
    targets: list[Target] = [[Reference(s, n) for s, n in votes[i].most_common()] for i in ids]
    return TrainingData(ids, [target_words(t) for t in targets], targets)


def annotated(gold: Annotated) -> TrainingData:
    """Annotations as a file or project (:func:`read_annotated`), segmentations (pipe text or
    :class:`~qseg.Segmentation`) or query id -> segmentation or votes."""
    if isinstance(gold, (str, os.PathLike)):
        return read_annotated(gold)
    items: list[tuple[str, object]] = (
        [(str(k), v) for k, v in gold.items()]
        if isinstance(gold, Mapping)
        else [(str(i), v) for i, v in enumerate(gold)]
    )
    targets = [as_target(value, i) for i, (_, value) in enumerate(items)]
    return TrainingData([k for k, _ in items], [target_words(t) for t in targets], targets)
