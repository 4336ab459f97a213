"""Training data for the supervised segmenters: annotated queries, their labels and tags.

Gold annotations come as Webis crowd votes (every vote counts), ``id<TAB>seg|ments`` lines or a
QueryNER ``.jsonl`` file (:func:`read_gold`, which ``qseg evaluate`` reads too); a query file may
choose a subset of them (and must agree with their words); a part-of-speech tag file (the Webis
form, by query id) may add tags.
"""

from __future__ import annotations

from dataclasses import dataclass

from qseg.corpora.queryner import read_queryner
from qseg.corpora.webis import aligned_tags, read_queries, read_references, read_tags
from qseg.errors import QsegError
from qseg.fileio import StrPath
from qseg.segmentation import Reference, Target, target_words


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
    ``id<TAB>seg|ments`` lines. Training and evaluation read gold files through this alone."""
    if str(path).endswith(".jsonl"):
        return {k: [Reference(v.segmentation, 1)] for k, v in read_queryner(path).items()}
    return read_references(path)


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
            raise QsegError(
                f"{len(missing)} queries have no gold segmentation, e.g. {missing[0]!r}"
            )
        for k, words in chosen.items():
            if target_words(labels[k]) != words:
                raise QsegError(f"query {k}: the gold segmentation is of another query")
        ids = list(chosen)
    words = [target_words(labels[k]) for k in ids]
    tags = None
    if pos is not None:
        tagged = read_tags(pos)
        tags = [aligned_tags(w, tagged.get(k)) for k, w in zip(ids, words, strict=True)]
    return TrainingData(ids, words, [labels[k] for k in ids], tags)


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
