"""Segmentation methods, one module each, chosen by spec through :mod:`.registry`."""

from qseg.segmenters.base import Segmenter, SpanScoringSegmenter
from qseg.segmenters.registry import METHODS, canonical_spec, create, parse_spec
from qseg.segmenters.rules.naive import NaiveSegmenter
from qseg.segmenters.rules.pmi import PmiSegmenter, tune_tau
from qseg.segmenters.rules.wiki import WikiSegmenter

__all__ = [
    "METHODS",
    "NaiveSegmenter",
    "PmiSegmenter",
    "Segmenter",
    "SpanScoringSegmenter",
    "WikiSegmenter",
    "canonical_spec",
    "create",
    "parse_spec",
    "tune_tau",
]
