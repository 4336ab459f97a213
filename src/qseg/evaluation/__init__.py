"""Evaluation: matching metrics against human annotations, agreement among annotators."""

from qseg.evaluation.agreement import (
    Agreement,
    agreement,
    distance,
    krippendorff_alpha,
    random_model_s,
)
from qseg.evaluation.matching import (
    PROTOCOLS,
    QueryMatch,
    SystemScores,
    aggregate,
    choose_reference,
    evaluate,
    majority_stability,
    match,
)

__all__ = [
    "PROTOCOLS",
    "Agreement",
    "QueryMatch",
    "SystemScores",
    "aggregate",
    "agreement",
    "choose_reference",
    "distance",
    "evaluate",
    "krippendorff_alpha",
    "majority_stability",
    "match",
    "random_model_s",
]
