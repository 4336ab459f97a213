"""Tuning a method's parameters on human references (``qseg tune``)."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from qseg.errors import QsegError
from qseg.evaluation.matching import choose_reference
from qseg.resources.counts import NgramCounts
from qseg.resources.probabilities import Probabilities
from qseg.segmentation import Reference, Segmentation
from qseg.segmenters.rules.phrases import PhrasesSegmenter
from qseg.segmenters.rules.pmi import TauChoice, tune_tau


def _references(gold: Mapping[str, Sequence[Reference]], protocol: str) -> list[Segmentation]:
    """Each query's ``protocol`` reference (queries without one are left out)."""
    return [ref for refs in gold.values() if (ref := choose_reference(protocol, refs)) is not None]


def tune_pmi(
    gold: Mapping[str, Sequence[Reference]], probabilities: Probabilities, protocol: str
) -> TauChoice:
    """The PMI threshold maximizing break accuracy on each query's ``protocol`` reference
    (``majority`` or ``all-agree``; queries without one are left out)."""
    references = _references(gold, protocol)
    return tune_tau(probabilities, references)


@dataclass(frozen=True)
class ThresholdChoice:
    """The threshold chosen, with the break and query accuracy it gives on the references."""

    threshold: float
    break_accuracy: float
    query_accuracy: float
    queries: int
    candidates: int


def tune_phrases(
    gold: Mapping[str, Sequence[Reference]],
    counts: NgramCounts,
    protocol: str = "majority",
    candidates: int = 200,
    **options: object,
) -> ThresholdChoice:
    """The threshold of gensim's Phrases (``options``: scoring, min_count, connectors,
    layers) maximizing break accuracy on each query's ``protocol`` reference; ties go to the
    higher query accuracy, then to the lower threshold. Candidates are midpoints between
    quantiles of the scores of the references' adjacent word pairs (and one below all)."""
    references = _references(gold, protocol)
    if not references:
        raise QsegError("no references to tune on")
    probe = PhrasesSegmenter(counts, threshold=0.5, **options)  # type: ignore[arg-type]
    scores = sorted(
        {
            score
            for ref in references
            for a, b in itertools.pairwise(ref.words)
            if math.isfinite(score := probe.pair_score(a, b))
        }
    )
    if not scores:
        raise QsegError("no adjacent word pair of the references has a count to score")
    step = max(1, len(scores) // candidates)
    picked = [*scores[::step], scores[-1]]
    thresholds = [picked[0] - 1.0] + [(a + b) / 2 for a, b in itertools.pairwise(picked) if a != b]
    low, high = (-1.0, 1.0) if probe.scoring == "npmi" else (1e-9, math.inf)
    thresholds = sorted({min(max(t, low), high) for t in thresholds})  # gensim's ranges
    gaps = sum(len(ref.breaks) for ref in references)
    best: tuple[float, float, float] | None = None
    for threshold, (right_gaps, right_queries) in zip(
        thresholds, threshold_accuracies(references, counts, thresholds, **options), strict=True
    ):
        key = (right_gaps / max(gaps, 1), right_queries / len(references), -threshold)
        if best is None or key > best:
            best = key
    assert best is not None
    return ThresholdChoice(-best[2], best[0], best[1], len(references), len(thresholds))


def threshold_accuracies(
    references: Sequence[Segmentation],
    counts: NgramCounts,
    thresholds: Sequence[float],
    **options: object,
) -> list[tuple[int, int]]:
    """For each of the ascending ``thresholds``, the gaps and the queries that gensim's
    Phrases (``options``) segments as the references do. A query is segmented once for each
    run of thresholds that gives it the same breaks (a few), not once for each threshold:
    its breaks hold up to the lowest score gensim compared above the threshold."""
    segmenters: dict[int, PhrasesSegmenter] = {}
    # each query adds its figures to a run of thresholds: at the run's start, taken off after
    right_gaps, right_queries = [0] * (len(thresholds) + 1), [0] * (len(thresholds) + 1)
    for ref in references:
        i = 0
        while i < len(thresholds):
            if i not in segmenters:
                segmenters[i] = PhrasesSegmenter(counts, threshold=thresholds[i], **options)  # type: ignore[arg-type]
            breaks, compared = segmenters[i].breaks_and_scores(ref.words)
            above = min((s for s in compared if s > thresholds[i]), default=math.inf)
            end = bisect.bisect_left(thresholds, above, lo=i + 1)
            same = sum(x == y for x, y in zip(breaks, ref.breaks, strict=True))
            right_gaps[i] += same
            right_gaps[end] -= same
            right_queries[i] += breaks == ref.breaks
            right_queries[end] -= breaks == ref.breaks
            i = end
    return list(
        zip(
            itertools.accumulate(right_gaps[:-1]),
            itertools.accumulate(right_queries[:-1]),
            strict=True,
        )
    )
