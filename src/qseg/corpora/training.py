"""Training data for the supervised segmenters: annotated queries, their labels and tags.

Gold annotations come as Webis crowd votes (every vote counts), ``id<TAB>seg|ments`` lines,
``item<TAB>annotator<TAB>seg|ments`` tables (an annotation project's export: each annotator a
vote) or a QueryNER ``.jsonl`` file (:func:`read_gold`, which ``qseg evaluate`` reads too); a
query file may choose a subset of them (and must agree with their words); a part-of-speech tag
file (the Webis form, by query id) may add tags.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from qseg.corpora.annotations import read_annotation_table
from qseg.corpora.queryner import read_queryner
from qseg.corpora.webis import aligned_tags, read_queries, read_references, read_tags
from qseg.errors import InputError, QsegError
from qseg.fileio import StrPath, read_lines
from qseg.segmentation import Reference, Segmentation, Target, target_words


@dataclass(frozen=True)
class TrainingData:
    """Queries (ids and words), their labels, and their tags (``None`` without a tag file;
    ``None`` for a query whose tags are missing or not one per word)."""

    ids: list[str]
    words: list[tuple[str, ...]]
    targets: list[Target]
    tags: list[tuple[str, ...] | None] | None = None

    @property
    def untagged(self) -> int:
        """Queries that go without tags although a tag file was given."""
        return 0 if self.tags is None else sum(t is None for t in self.tags)


def read_gold(path: StrPath) -> dict[str, list[Reference]]:
    """Query id -> gold references of any gold file: a QueryNER ``.jsonl`` file (told by its
    name; each query one reference with one vote), else Webis crowd votes or
    ``id<TAB>seg|ments`` lines or ``item<TAB>annotator<TAB>seg|ments`` tables. Training and
    evaluation read gold files through this alone."""
    if str(path).endswith(".jsonl"):
        return {k: [Reference(v.segmentation, 1)] for k, v in read_queryner(path).items()}
    first = next(read_lines(path), None)
    if first is not None and first[1].count("\t") == 2:
        return _votes_of_table(path)
    return read_references(path)


def _votes_of_table(path: StrPath) -> dict[str, list[Reference]]:
    """An annotation table as crowd votes: each distinct flat segmentation of an item with the
    number of annotators who gave it, the most given first."""
    gold: dict[str, list[Reference]] = {}
    for item, annots in read_annotation_table(path).items():
        votes: Counter[Segmentation] = Counter()
        for annotation in annots:
            if not isinstance(annotation.segmentation, Segmentation):
                raise QsegError(
                    f"{path}: item {item!r} is nested (bracket text); gold for training and "
                    "evaluation is flat: export the flat mode"
                )
            votes[annotation.segmentation] += 1
        gold[item] = [Reference(s, n) for s, n in votes.most_common()]
    return gold


def read_training_data(
    gold: StrPath, queries: StrPath | None = None, pos: StrPath | None = None
) -> TrainingData:
    """The annotated queries of ``gold`` (those of ``queries`` only, if given), with the tags
    of ``pos``."""
    labels: dict[str, Target] = dict(read_gold(gold))
    ids = list(labels)
    if queries is not None:
        chosen = read_queries(queries)
        missing = [k for k in chosen if k not in labels]
        if missing:
            raise InputError(
                queries,
                _line_of(queries, missing[0]),
                f"{len(missing)} of its queries have no gold segmentation in {gold}, e.g. "
                f"{missing[0]!r}",
            )
        for k, expected in chosen.items():
            found = target_words(labels[k])
            if found != expected:
                raise InputError(
                    queries,
                    _line_of(queries, k),
                    f"query {k} is {' '.join(expected)!r}, but its gold segmentation in {gold} "
                    f"is of {' '.join(found)!r}",
                )
        ids = list(chosen)
    words = [target_words(labels[k]) for k in ids]
    tags = None
    if pos is not None:
        tagged = read_tags(pos)
        tags = [aligned_tags(w, tagged.get(k)) for k, w in zip(ids, words, strict=True)]
    return TrainingData(ids, words, [labels[k] for k in ids], tags)


def _line_of(path: StrPath, ident: str) -> int | None:
    """The line of ``path`` (``id<TAB>...`` lines) that holds ``ident``."""
    return next((n for n, line in read_lines(path) if line.split("\t", 1)[0] == ident), None)


@dataclass
class PosTags:
    """Part-of-speech tags by query id, looked up for queries as they come; counts the
    queries that go without (id missing, or not one tag per word)."""

    tags: dict[str, tuple[str, ...]]
    source: str
    looked_up: int = 0
    missing: int = 0

    @classmethod
    def read(cls, path: StrPath) -> PosTags:
        return cls(read_tags(path), str(path))

    def __call__(self, ident: str | None, words: tuple[str, ...]) -> tuple[str, ...] | None:
        self.looked_up += 1
        found = aligned_tags(words, self.tags.get(ident or ""))
        self.missing += found is None
        return found
