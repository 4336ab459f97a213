"""The two floors of paper 004's results table: every word its own segment (always-split) and
the whole query one segment (never-split). A method that does not beat both has learned
nothing about phrases; on Bergsma and Wang's corpus they score 44.8% and 55.2% break accuracy.
"""

from __future__ import annotations

from qseg.query import Query, normalize
from qseg.segmentation import Segmentation
from qseg.segmenters.base import OneByOne
from qseg.segmenters.decoder import check_k, kbest_gaps


class ConstantSegmenter(OneByOne):
    """A break at every gap (``split=True``) or at none.

    As a ranking, a segmentation scores minus the number of gaps where it differs from the
    constant one, so the next best flip one gap, then two, and so on.
    """

    def __init__(self, split: bool) -> None:
        self.split = split
        self.spec = "always-split" if split else "never-split"

    def segment(self, query: Query) -> Segmentation:
        words = normalize(query)
        return Segmentation._trusted(words, (int(self.split),) * (len(words) - 1))

    def rank(self, query: Query, k: int) -> list[tuple[Segmentation, float]]:
        check_k(k)
        words = normalize(query)
        gaps = len(words) - 1
        on, off = [0.0] * gaps, [-1.0] * gaps
        ranked = kbest_gaps(on, off, k) if self.split else kbest_gaps(off, on, k)
        return [(Segmentation._trusted(words, breaks), score) for score, breaks in ranked]

    def __repr__(self) -> str:
        return f"<ConstantSegmenter {self.spec}>"
