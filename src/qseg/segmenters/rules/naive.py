"""Naive query segmentation (Hagen et al. SIGIR 2010; paper 003, section 4).

weight(s) = |s|^|s| * freq(s) for every segment of two or more words; a segment with frequency
0 is not allowed. The exponential factor compensates the power-law drop of n-gram frequencies
with length, so that ``toronto blue jays`` can beat ``blue jays``.

Segments longer than the longest n-gram in the counts (5 for Web1T) have no frequency and are
therefore never chosen.
"""

from __future__ import annotations

from qseg.resources.counts import NgramCounts
from qseg.segmenters._kernel import NaiveScorer
from qseg.segmenters.base import SpanScoringSegmenter


class NaiveSegmenter(SpanScoringSegmenter):
    """|s|^|s| frequency scoring with exact decoding."""

    def __init__(self, counts: NgramCounts) -> None:
        self.counts = counts
        self.source = counts.store.description
        self.scorer = NaiveScorer(counts.view, counts.max_order)
        self.spec = "naive"
