"""The PMI baseline (paper 003, section 6.2) and the tuner of its threshold.

PMI(w1, w2) = log10 p(w1 w2) - log10 p(w1) - log10 p(w2); a break goes between two adjacent
words iff their PMI is below the threshold tau. The default tau = 0.894775 is the value paper
003 tuned on the Bergsma-Wang corpus with Microsoft Web N-gram probabilities; other probability
sources need their own tau (:func:`tune_tau`, ``qseg tune pmi``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from qseg.errors import QsegError
from qseg.query import Query, normalize
from qseg.resources.probabilities import Probabilities
from qseg.segmentation import Segmentation
from qseg.segmenters.base import OneByOne
from qseg.segmenters.decoder import check_k, kbest_gaps

PAPER_TAU = 0.894775


class PmiSegmenter(OneByOne):
    """Break between two words iff their PMI is below ``tau``.

    As a ranking, a segmentation scores minus the sum of ``|PMI - tau|`` over the gaps where it
    goes against the threshold: the thresholded segmentation scores 0, and the next ones flip
    the gaps whose PMI lies closest to ``tau`` (a pair never seen together, PMI -inf, costs
    -inf to join).
    """

    def __init__(self, probabilities: Probabilities, tau: float = PAPER_TAU) -> None:
        if math.isnan(tau):
            raise ValueError("tau must be a number, not NaN")
        self.probabilities = probabilities
        self.tau = tau
        self.spec = "pmi" if tau == PAPER_TAU else f"pmi(tau={tau!r})"

    def gap_pmis(self, words: Sequence[str]) -> list[float]:
        """PMI of every pair of adjacent words."""
        pmi = self.probabilities.pmi
        return [pmi(words[i], words[i + 1]) for i in range(len(words) - 1)]

    def segment(self, query: Query) -> Segmentation:
        words = normalize(query)
        tau = self.tau
        breaks = tuple(1 if value < tau else 0 for value in self.gap_pmis(words))
        return Segmentation._trusted(words, breaks)

    def rank(self, query: Query, k: int) -> list[tuple[Segmentation, float]]:
        check_k(k)
        words = normalize(query)
        gaps = [value - self.tau for value in self.gap_pmis(words)]
        ranked = kbest_gaps([min(0.0, -d) for d in gaps], [min(0.0, d) for d in gaps], k)
        return [(Segmentation._trusted(words, breaks), score) for score, breaks in ranked]

    def __repr__(self) -> str:
        return f"<PmiSegmenter {self.spec}>"


@dataclass(frozen=True)
class TauChoice:
    """The result of tuning: the threshold and the break accuracy it reaches."""

    tau: float
    break_accuracy: float
    gaps: int
    queries: int


def tune_tau(probabilities: Probabilities, references: Iterable[Segmentation]) -> TauChoice:
    """The tau that maximizes break accuracy (micro-averaged over all gaps) on ``references``.

    Accuracy only changes where tau crosses an observed PMI value, so every interval between
    consecutive distinct values is tried; the chosen tau is the midpoint of the best interval
    (the lowest such interval on ties).
    """
    pmi = probabilities.pmi
    gaps: list[tuple[float, int]] = []
    queries = 0
    for ref in references:
        queries += 1
        words = ref.words
        gaps.extend((pmi(words[i], words[i + 1]), bit) for i, bit in enumerate(ref.breaks))
    if not gaps:
        raise QsegError("cannot tune tau: the references have no gaps (all one-word queries)")
    gaps.sort()
    # tau <= smallest value: no gap breaks; correct = gaps that should not break
    correct = sum(1 for _, bit in gaps if bit == 0)
    best_correct = correct
    best_index = 0  # number of gaps (in sorted order) that break
    i = 0
    while i < len(gaps):
        value = gaps[i][0]
        while i < len(gaps) and gaps[i][0] == value:
            correct += 1 if gaps[i][1] == 1 else -1
            i += 1
        if correct > best_correct:
            best_correct = correct
            best_index = i
    tau = _threshold_between(gaps, best_index)
    return TauChoice(tau, best_correct / len(gaps), len(gaps), queries)


def _threshold_between(gaps: list[tuple[float, int]], index: int) -> float:
    """A tau that breaks exactly the first ``index`` gaps of the sorted list (break iff < tau)."""
    if index == 0:
        return gaps[0][0]
    if index == len(gaps):
        last = gaps[-1][0]
        return last + 1.0 if math.isfinite(last) else 0.0
    low, high = gaps[index - 1][0], gaps[index][0]
    return (low + high) / 2 if math.isfinite(low) else high
