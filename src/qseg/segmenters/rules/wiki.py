"""Wikipedia-based normalization (Hagen et al. WWW 2011; paper 003, section 5).

For a segment s of two or more words::

    weight(s) = |s| + max{freq(s') : s' a 2-word sub-segment of s}   if s is a Wikipedia title
              = freq(s)                                              otherwise

where a sub-2-gram without a count gets the median 2-gram count (3,461,030 in Web1T, paper 003
Table 2). A segmentation scores sum |s| * weight(s), or -1 if some segment has weight 0.

Which titles get the title weight is the one choice the paper leaves open. By default, as in the
original authors' implementation (``stein2011e`` in Webis-QSeC-10, reproduced on every query),
only titles that have an n-gram count of their own do. With ``unseen_titles=true`` every title
does, including ones missing from the counts ("new concepts", paper 003 section 5, Remarks);
those may then be longer than the longest n-gram.
"""

from __future__ import annotations

from qseg.resources.counts import NgramCounts
from qseg.resources.titles import TitleSet
from qseg.segmenters._kernel import WikiScorer
from qseg.segmenters.base import SpanScoringSegmenter

MEDIAN_BIGRAM_COUNT = 3_461_030
"""Median 2-gram frequency of a frequency-weighted Web1T 5-gram sample (paper 003, Table 2)."""


class WikiSegmenter(SpanScoringSegmenter):
    """Wikipedia-title-normalized frequency scoring with exact decoding."""

    def __init__(
        self,
        counts: NgramCounts,
        titles: TitleSet,
        *,
        unseen_titles: bool = False,
        median: int = MEDIAN_BIGRAM_COUNT,
    ) -> None:
        if median <= 0:
            raise ValueError(f"median must be positive, got {median}")
        self.counts = counts
        self.titles = titles
        self.unseen_titles = unseen_titles
        self.median = median
        options = []
        if unseen_titles:
            options.append("unseen_titles=true")
        if median != MEDIAN_BIGRAM_COUNT:
            options.append(f"median={median}")
        self.spec = f"wiki({', '.join(options)})" if options else "wiki"
        self.source = counts.store.description
        self.scorer = WikiScorer(counts.view, titles.view, unseen_titles, median)
