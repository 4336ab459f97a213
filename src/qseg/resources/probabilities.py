"""Word and 2-gram probabilities (log10) for the PMI baseline of paper 003, section 6.2.

Two sources: probability files (:class:`LogProbabilities`, the Microsoft Web N-gram form) and
n-gram counts (:class:`CountProbabilities`). Both offer ``pmi(first, second)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Protocol

from qseg.errors import InputError, QsegError
from qseg.fileio import StrPath, read_lines, split_fields
from qseg.resources.counts import NgramCounts, parse_ngram


def _read_log10(path: StrPath, order: int) -> dict[str, float]:
    """Read ``ngram<TAB>log10 probability`` lines, the Microsoft Web N-gram form."""
    source = str(path)
    values: dict[str, float] = {}
    for lineno, line in read_lines(path):
        ngram, value = split_fields(line, source, lineno, 2)
        key = parse_ngram(ngram, source, lineno)
        if key.count(" ") + 1 != order:
            raise InputError(
                source, lineno, f"expected a {order}-gram, found {key.count(' ') + 1} words"
            )
        try:
            logp = float(value)
        except ValueError:
            raise InputError(source, lineno, f"{value!r} is not a number") from None
        if not logp <= 0.0:
            raise InputError(source, lineno, f"log10 probability {value} is not <= 0")
        if key in values:
            raise InputError(source, lineno, f"duplicate entry for {key!r}")
        values[key] = logp
    if not values:
        raise InputError(source, None, "no probabilities in file (it is empty)")
    return values


class Probabilities(Protocol):
    """Anything that gives the PMI of two adjacent words."""

    def pmi(self, first: str, second: str) -> float: ...


class LogProbabilities:
    """log10 p(w) and log10 p(w1 w2); PMI(w1, w2) = log10 p(w1 w2) - log10 p(w1) - log10 p(w2).

    A pair whose 2-gram or either word is unknown has PMI -inf, so PMI segmentation breaks there.
    """

    def __init__(self, unigrams: Mapping[str, float], bigrams: Mapping[str, float]) -> None:
        self.unigrams = dict(unigrams)
        self.bigrams = dict(bigrams)

    @classmethod
    def from_files(cls, unigrams: StrPath, bigrams: StrPath) -> LogProbabilities:
        """Read word and 2-gram files of ``ngram<TAB>log10 probability`` lines."""
        return cls(_read_log10(unigrams, 1), _read_log10(bigrams, 2))

    def pmi(self, first: str, second: str) -> float:
        """Pointwise mutual information (log10) of two adjacent words."""
        joint = self.bigrams.get(f"{first} {second}")
        p1 = self.unigrams.get(first)
        p2 = self.unigrams.get(second)
        if joint is None or p1 is None or p2 is None:
            return -math.inf
        return joint - p1 - p2


class CountProbabilities:
    """PMI from n-gram counts: relative frequencies over the sum of the 1-gram counts.

    Used for query-log statistics (PMI-Q of paper 000) and whenever no probability files are
    given. A pair whose 2-gram or either word has no count has PMI -inf.
    """

    def __init__(self, counts: NgramCounts) -> None:
        if counts.unigram_total <= 0:
            raise QsegError("PMI from counts needs 1-gram counts; these counts have none")
        self.counts = counts
        self._log_total = math.log10(counts.unigram_total)

    def pmi(self, first: str, second: str) -> float:
        """Pointwise mutual information (log10) of two adjacent words."""
        count = self.counts.count
        joint, c1, c2 = count(f"{first} {second}"), count(first), count(second)
        if not (joint and c1 and c2):
            return -math.inf
        return math.log10(joint) + self._log_total - math.log10(c1) - math.log10(c2)
