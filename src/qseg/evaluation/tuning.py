"""Tuning a method's parameters on human references (``qseg tune``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from qseg.evaluation.matching import choose_reference
from qseg.resources.probabilities import Probabilities
from qseg.segmentation import Reference
from qseg.segmenters.pmi import TauChoice, tune_tau


def tune_pmi(
    gold: Mapping[str, Sequence[Reference]], probabilities: Probabilities, protocol: str
) -> TauChoice:
    """The PMI threshold maximizing break accuracy on each query's ``protocol`` reference
    (``majority`` or ``all-agree``; queries without one are left out)."""
    references = [
        ref for refs in gold.values() if (ref := choose_reference(protocol, refs)) is not None
    ]
    return tune_tau(probabilities, references)
