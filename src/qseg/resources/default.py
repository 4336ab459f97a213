"""The built-in default resources: Google Web1T counts as shipped by the ``wordsegment`` package.

``wordsegment`` (Grant Jenks, Apache-2.0) carries Peter Norvig's extracts of the Google Web 1T
5-gram corpus: 333,213 frequent words and 286,358 lines of frequent 2-grams with their Web1T
counts (258,437 distinct 2-grams once case variants are added up). Only 1- and 2-grams
exist there, so the default n-gram segmenters can form segments of at most two words.
For real work, build or load full counts and pass ``--ngrams``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources as importlib_resources

from qseg.resources.counts import NgramCounts
from qseg.resources.probabilities import LogProbabilities


def _wordsegment_file(name: str) -> str:
    return str(importlib_resources.files("wordsegment").joinpath(name))


@cache
def default_counts() -> NgramCounts:
    """Web1T 1-gram and 2-gram counts from ``wordsegment``, loaded once per process."""
    counts: dict[str, int] = {}
    for name in ("unigrams.txt", "bigrams.txt"):
        counts.update(NgramCounts.from_file(_wordsegment_file(name)))
    return NgramCounts(counts)


@cache
def default_probabilities() -> LogProbabilities:
    """Relative frequencies of the default counts, for the PMI baseline."""
    return LogProbabilities.from_counts(default_counts())
