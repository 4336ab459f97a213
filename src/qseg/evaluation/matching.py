"""Matching metrics against human segmentations (paper 003, section 6.1).

Per query: query accuracy (1 iff the segmentations are identical), segment precision and recall
(segments compared as word spans), segment F, and break accuracy (share of the n - 1 gaps decided
as the reference does). Aggregated over queries as in Bergsma & Wang 2007 and paper 002:
query accuracy is the share of correct queries; segment precision, recall and break accuracy are
pooled over all segments and gaps of the corpus (micro averages); segment F is the harmonic mean
of the pooled precision and recall (paper 003's Tables 5-8 satisfy F = 2PR / (P + R)).

With several references per query the reference is chosen by a protocol:

- ``majority``: the segmentation with the most votes; on a tie, the one listed first in the
  reference file (the Webis file lists by votes, ties in its own order);
- ``best-of``: per system and query, the reference with the highest break accuracy for that
  system's output (paper 003: "Best of"); ties go to more votes, then to the one listed first;
- ``all-agree``: only queries whose references are all the same segmentation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from qseg.errors import QsegError
from qseg.segmentation import Reference, Segmentation, majority
from qseg.segmenters.base import Segmenter

PROTOCOLS = ("majority", "best-of", "all-agree")


@dataclass(frozen=True)
class QueryMatch:
    """Counts of agreement between one system output and one reference."""

    query_id: str
    correct: bool
    common_segments: int
    predicted_segments: int
    reference_segments: int
    correct_gaps: int
    gaps: int

    @property
    def segment_precision(self) -> float:
        return self.common_segments / self.predicted_segments

    @property
    def segment_recall(self) -> float:
        return self.common_segments / self.reference_segments

    @property
    def segment_f1(self) -> float:
        return _harmonic(self.segment_precision, self.segment_recall)

    @property
    def break_accuracy(self) -> float:
        """Share of gaps decided right; 1.0 for a one-word query (nothing to decide)."""
        return self.correct_gaps / self.gaps if self.gaps else 1.0


@dataclass(frozen=True)
class SystemScores:
    """Aggregated matching metrics of one system, with the per-query details."""

    system: str
    queries: int
    query_accuracy: float
    segment_precision: float
    segment_recall: float
    segment_f1: float
    break_accuracy: float
    per_query: tuple[QueryMatch, ...]

    def summary(self) -> dict[str, str | int | float]:
        """The aggregate row (the JSON form of ``qseg evaluate``)."""
        return {
            "system": self.system,
            "queries": self.queries,
            "query_accuracy": self.query_accuracy,
            "segment_precision": self.segment_precision,
            "segment_recall": self.segment_recall,
            "segment_f1": self.segment_f1,
            "break_accuracy": self.break_accuracy,
        }


def _harmonic(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def match(query_id: str, predicted: Segmentation, reference: Segmentation) -> QueryMatch:
    """Compare one system segmentation with one reference of the same query."""
    if predicted.words != reference.words:
        raise QsegError(
            f"query {query_id}: system segmented {predicted.query!r} "
            f"but the reference is of {reference.query!r}"
        )
    predicted_spans = predicted.spans
    reference_spans = reference.spans
    common = len(set(predicted_spans) & set(reference_spans))
    gaps = len(predicted.breaks)
    correct_gaps = sum(a == b for a, b in zip(predicted.breaks, reference.breaks, strict=True))
    return QueryMatch(
        query_id,
        predicted.breaks == reference.breaks,
        common,
        len(predicted_spans),
        len(reference_spans),
        correct_gaps,
        gaps,
    )


def aggregate(system: str, matches: Sequence[QueryMatch]) -> SystemScores:
    """Pool per-query counts into corpus-level metrics (see the module docstring)."""
    if not matches:
        raise QsegError(f"system {system}: no queries to evaluate")
    common = sum(m.common_segments for m in matches)
    precision = common / sum(m.predicted_segments for m in matches)
    recall = common / sum(m.reference_segments for m in matches)
    gaps = sum(m.gaps for m in matches)
    return SystemScores(
        system=system,
        queries=len(matches),
        query_accuracy=sum(m.correct for m in matches) / len(matches),
        segment_precision=precision,
        segment_recall=recall,
        segment_f1=_harmonic(precision, recall),
        break_accuracy=sum(m.correct_gaps for m in matches) / gaps if gaps else 1.0,
        per_query=tuple(matches),
    )


def choose_reference(
    protocol: str, references: Sequence[Reference], predicted: Segmentation | None = None
) -> Segmentation | None:
    """The reference a protocol compares ``predicted`` with; ``None`` drops the query.

    ``best-of`` depends on the system output and needs ``predicted``; the others do not.
    """
    if protocol == "majority":
        return majority(references)
    if protocol == "all-agree":
        return references[0].segmentation if len(references) == 1 else None
    if protocol == "best-of":
        if predicted is None:
            raise QsegError("the best-of protocol needs a system segmentation to compare")
        if any(r.segmentation.words != predicted.words for r in references):
            return references[0].segmentation  # match() reports the mismatch

        def key(item: tuple[int, Reference]) -> tuple[int, int, int]:
            index, ref = item
            bits = zip(predicted.breaks, ref.segmentation.breaks, strict=True)
            agree = sum(a == b for a, b in bits)
            return agree, ref.votes, -index

        return max(enumerate(references), key=key)[1].segmentation
    raise QsegError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")


def check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise QsegError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")


def evaluate(
    systems: Mapping[str, Mapping[str, Segmentation]],
    gold: Mapping[str, Sequence[Reference]],
    protocol: str = "majority",
) -> list[SystemScores]:
    """Score every system on the gold queries (in gold order) under ``protocol``.

    Every gold query needs an output from every system; outputs for queries outside the gold
    set are ignored (the caller may report them).
    """
    check_protocol(protocol)  # also where there is no system to score
    return [
        aggregate(name, [match(*pair) for pair in judged(name, outputs, gold, protocol)])
        for name, outputs in systems.items()
    ]


def judged(
    name: str,
    outputs: Mapping[str, Segmentation],
    gold: Mapping[str, Sequence[Reference]],
    protocol: str,
) -> Iterator[tuple[str, Segmentation, Segmentation]]:
    """``(query id, system output, reference)`` for every gold query the protocol keeps, in
    gold order; a gold query without an output of system ``name`` is an error."""
    check_protocol(protocol)
    for query_id, references in gold.items():
        predicted = outputs.get(query_id)
        if predicted is None:
            raise QsegError(f"system {name} has no segmentation for query {query_id}")
        reference = choose_reference(protocol, references, predicted)
        if reference is not None:
            yield query_id, predicted, reference


def majority_stability(
    gold: Mapping[str, Sequence[Reference]], draws: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """Break and query accuracy of a second crowd's majority against the first's.

    Per query, ``draws`` times, as many votes as the query has are drawn from its vote shares
    and their majority is matched with the observed one. Ties among drawn votes go to the
    segmentation whose ``|`` text sorts last, the order in which the Webis file lists tied
    segmentations (2,862 of its 2,863 tied neighbours), not to the one observed first. A model
    that knew every query's vote shares would score about this under the ``majority``
    protocol, so it tells how much of the gap to 1 is annotation noise (a plug-in estimate:
    the observed shares stand in for the crowd's).
    """
    if draws < 1:
        raise QsegError(f"draws must be at least 1, got {draws}")
    if not gold:
        raise QsegError("no queries to resample")
    rng = np.random.default_rng(seed)
    correct_gaps = gaps = correct_queries = 0
    for query_id, references in gold.items():
        votes = np.array([r.votes for r in references], dtype=np.float64)
        if votes.sum() <= 0:
            raise QsegError(f"the references of query {query_id} have no votes")
        observed = majority(references)
        matches = [match(query_id, r.segmentation, observed) for r in references]
        agree = np.array([m.correct_gaps for m in matches])
        same = np.array([m.correct for m in matches])
        order = sorted(
            range(len(references)),
            key=lambda i: references[i].segmentation.to_pipe(),
            reverse=True,
        )
        counts = rng.multinomial(int(votes.sum()), votes[order] / votes.sum(), size=draws)
        winners = np.array(order)[counts.argmax(axis=1)]  # argmax: the first of the tied
        correct_gaps += int(agree[winners].sum())
        correct_queries += int(same[winners].sum())
        gaps += draws * len(observed.breaks)
    return correct_gaps / gaps if gaps else 1.0, correct_queries / (draws * len(gold))


def scores_table(rows: Sequence[SystemScores]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the matching measures, one row per system (three decimals)."""
    header = ["system", "queries", "query acc", "seg prec", "seg rec", "seg F", "break acc"]
    measures = ("query_accuracy", "segment_precision", "segment_recall", "segment_f1")
    body = [
        [
            r.system,
            str(r.queries),
            *(f"{getattr(r, m):.3f}" for m in (*measures, "break_accuracy")),
        ]
        for r in rows
    ]
    return header, body


def segment_gold(
    segmenter: Segmenter, gold: Mapping[str, Sequence[Reference]]
) -> dict[str, Segmentation]:
    """A segmenter's segmentation of every gold query, by query id."""
    ids = list(gold)
    texts = [gold[i][0].segmentation.query for i in ids]
    return dict(zip(ids, segmenter.segment_many(texts), strict=True))
