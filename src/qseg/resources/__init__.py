"""Statistics that segmenters read: n-gram counts, Wikipedia title sets, word probabilities."""

from qseg.resources.bundle import Resources
from qseg.resources.counts import NgramCounts
from qseg.resources.probabilities import CountProbabilities, LogProbabilities
from qseg.resources.titles import TitleSet

__all__ = ["CountProbabilities", "LogProbabilities", "NgramCounts", "Resources", "TitleSet"]
