"""Tuning a method's parameters on human references (``qseg tune``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from qseg.errors import QsegError
from qseg.evaluation.matching import choose_reference
from qseg.resources.counts import NgramCounts
from qseg.resources.probabilities import Probabilities
from qseg.segmentation import Reference, Segmentation
from qseg.segmenters.phrases import PhrasesSegmenter
from qseg.segmenters.pmi import TauChoice, tune_tau


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


class _Remembered:
    """The counts as gensim's scorer reads them (``get``, ``len``, and the unigram total),
    every lookup remembered: each candidate threshold asks the same n-grams of the
    references again (a third of the tuning's time was the store's lookups)."""

    def __init__(self, counts: NgramCounts) -> None:
        self._counts = counts
        self._seen: dict[str, int] = {}
        self.unigram_total = counts.unigram_total

    def get(self, ngram: str, default: int = 0) -> int:
        value = self._seen.get(ngram)
        if value is None:
            value = self._seen[ngram] = self._counts.count(ngram)
        return value if value else default

    def __len__(self) -> int:
        return len(self._counts)


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
    best: tuple[float, float, float] | None = None
    remembered = cast(NgramCounts, _Remembered(counts))
    for threshold in thresholds:
        segmenter = PhrasesSegmenter(remembered, threshold=threshold, **options)  # type: ignore[arg-type]
        right_gaps = gaps = right_queries = 0
        for ref in references:
            breaks = segmenter.breaks_of(ref.words)
            right_gaps += sum(x == y for x, y in zip(breaks, ref.breaks, strict=True))
            gaps += len(breaks)
            right_queries += breaks == ref.breaks
        key = (right_gaps / max(gaps, 1), right_queries / len(references), -threshold)
        if best is None or key > best:
            best = key
    assert best is not None
    return ThresholdChoice(-best[2], best[0], best[1], len(references), len(thresholds))
