"""Segmentation methods, one module each, chosen by name through :mod:`.registry`."""

from qseg.segmenters.base import RankingSegmenter, Segmenter, SpanScoringSegmenter
from qseg.segmenters.naive import NaiveSegmenter
from qseg.segmenters.pmi import PmiSegmenter, tune_tau
from qseg.segmenters.registry import METHODS, canonical_spec, create, parse_spec
from qseg.segmenters.wiki import WikiSegmenter

__all__ = [
    "METHODS",
    "NaiveSegmenter",
    "PmiSegmenter",
    "RankingSegmenter",
    "Segmenter",
    "SpanScoringSegmenter",
    "WikiSegmenter",
    "canonical_spec",
    "create",
    "parse_spec",
    "tune_tau",
]
