"""Evaluation: matching metrics against human annotations, agreement among annotators.

The names below load their module on first use (PEP 562), so that importing one evaluation
module (the command line reads a few constants) does not load the others.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_SOURCES = {
    "Agreement": "agreement",
    "agreement": "agreement",
    "distance": "agreement",
    "krippendorff_alpha": "agreement",
    "random_model_s": "agreement",
    "McNemar": "significance",
    "PROTOCOLS": "matching",
    "QueryMatch": "matching",
    "SystemScores": "matching",
    "aggregate": "matching",
    "choose_reference": "matching",
    "compare": "significance",
    "evaluate": "matching",
    "majority_stability": "matching",
    "match": "matching",
    "mcnemar": "significance",
}

__all__ = sorted(_SOURCES)


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_SOURCES[name]}"), name)
