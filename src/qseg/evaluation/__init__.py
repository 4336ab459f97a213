"""Evaluation of segmenters: matching metrics against human annotations."""

from qseg.evaluation.matching import (
    PROTOCOLS,
    QueryMatch,
    SystemScores,
    aggregate,
    choose_reference,
    evaluate,
    match,
)

__all__ = [
    "PROTOCOLS",
    "QueryMatch",
    "SystemScores",
    "aggregate",
    "choose_reference",
    "evaluate",
    "match",
]
