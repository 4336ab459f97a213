"""Joint decoding: score whole segmentations instead of deciding each gap alone.

Every segmentation of a query (all 2^(n-1) of them up to :data:`MAX_JOINT_WORDS` words) is a
candidate described by :data:`CANDIDATE_FEATURES`: how likely its breaks are under the gap
classifier, and what its segments are (counts, titles, phrases seen as segments in training,
segments that begin or end with a function word). A gradient-boosted scorer is trained with a
softmax over each query's candidates against the distribution of the annotators' votes (a
listwise loss), and the best-scored candidate is the output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import numpy as np

from qseg.segmenters.gap_features import FUNCTION_WORDS, MAX_SPAN, QueryTables

MAX_JOINT_WORDS = 12
"""Longer queries (4,096 candidates and more) are decided gap by gap."""

CANDIDATE_FEATURES = (
    "log_p",
    "min_log_p",
    "words",
    "segments",
    "multiword_segments",
    "longest_segment",
    "sum_log_count",
    "min_log_count",
    "max_log_count",
    "uncounted_segments",
    "title_segments",
    "title_words",
    "function_word_first",
    "function_word_last",
    "phrase_rate_min",
    "phrase_rate_sum",
    "seen_phrases",
    "log_p_gap_to_best",
    "sum_log_count_gap_to_best",
    "phrase_rate_gap_to_best",
)


@cache
def _layout(n: int) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """Break bits of every candidate, its span incidence matrix, and the span list."""
    gaps = n - 1
    codes = np.arange(2**gaps, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(gaps)) & 1).astype(np.int8)
    spans = [(a, b) for a in range(n) for b in range(a + 1, n + 1)]
    index = {span: i for i, span in enumerate(spans)}
    incidence = np.zeros((len(codes), len(spans)), dtype=bool)
    for c in range(len(codes)):
        start = 0
        for g in range(gaps + 1):
            if g == gaps or bits[c, g]:
                incidence[c, index[(start, g + 1)]] = True
                start = g + 1
    return bits, incidence, spans


def candidate_bits(n: int) -> np.ndarray:
    """All break vectors of an n-word query, one row each."""
    return _layout(n)[0]


def candidate_features(
    words: Sequence[str],
    gap_p: np.ndarray,
    tables: QueryTables,
    phrases: Mapping[str, float],
) -> np.ndarray:
    """One row of :data:`CANDIDATE_FEATURES` per candidate of the query."""
    n = len(words)
    bits, incidence, spans = _layout(n)
    p = np.clip(gap_p.astype(np.float64), 1e-6, 1 - 1e-6)
    log_bits = np.where(bits == 1, np.log(p), np.log1p(-p))
    log_p = log_bits.sum(axis=1)
    min_log_p = log_bits.min(axis=1) if n > 1 else np.zeros(1)
    lengths = np.array([b - a for a, b in spans], dtype=np.float64)
    multi = lengths > 1
    counted = np.array([b - a <= MAX_SPAN for a, b in spans])
    log_count = np.array([tables.log_counts[a, b] if b - a <= MAX_SPAN else 0.0 for a, b in spans])
    is_title = np.array([tables.titles[a, b] if b - a > 1 else False for a, b in spans])
    texts = [" ".join(words[a:b]) for a, b in spans]
    rate = np.array(
        [phrases.get(t, np.nan) if m else np.nan for t, m in zip(texts, multi, strict=True)]
    )
    first_fn = np.array([words[a] in FUNCTION_WORDS for a, _ in spans]) & multi
    last_fn = np.array([words[b - 1] in FUNCTION_WORDS for _, b in spans]) & multi

    inc = incidence.astype(np.float64)
    multi_inc = incidence & multi
    masked = np.where(multi_inc & counted, log_count, np.nan)
    with np.errstate(all="ignore"):
        rates = np.where(multi_inc, np.nan_to_num(rate, nan=0.5), np.nan)
        sum_log = np.nansum(masked, axis=1)
        features = np.column_stack(
            [
                log_p,
                min_log_p,
                np.full(len(bits), n, dtype=np.float64),
                inc.sum(axis=1),
                multi_inc.sum(axis=1),
                (incidence * lengths).max(axis=1),
                sum_log,
                _nan_reduce(np.nanmin, masked),
                _nan_reduce(np.nanmax, masked),
                (multi_inc & counted & (log_count == 0)).sum(axis=1),
                (multi_inc & is_title).sum(axis=1),
                (multi_inc & is_title) @ lengths,
                (incidence & first_fn).sum(axis=1),
                (incidence & last_fn).sum(axis=1),
                _nan_reduce(np.nanmin, rates),
                np.nansum(rates, axis=1),
                (multi_inc & ~np.isnan(rate)).sum(axis=1),
            ]
        )
    phrase_sum = features[:, CANDIDATE_FEATURES.index("phrase_rate_sum")]
    relative = [log_p - log_p.max(), sum_log - sum_log.max(), phrase_sum - phrase_sum.max()]
    return np.column_stack([features, *relative]).astype(np.float32)


def _nan_reduce(reduce: object, values: np.ndarray) -> np.ndarray:
    """Row-wise min or max ignoring NaN; NaN for rows with no value (no warning)."""
    empty = np.isnan(values).all(axis=1)
    out = np.full(len(values), np.nan)
    if (~empty).any():
        out[~empty] = reduce(values[~empty], axis=1)  # type: ignore[operator]
    return out


def softmax_objective(bounds: np.ndarray, target: np.ndarray) -> object:
    """The listwise loss for ``xgboost.train``: softmax cross-entropy within each query.

    ``bounds`` are the first row of each query's candidates plus the end; ``target`` holds each
    query's vote distribution over its candidates (summing to 1 per query).
    """
    starts = bounds[:-1]
    sizes = np.diff(bounds)

    def objective(scores: np.ndarray, _: object) -> tuple[np.ndarray, np.ndarray]:
        top = np.repeat(np.maximum.reduceat(scores, starts), sizes)
        e = np.exp(scores - top)
        p = e / np.repeat(np.add.reduceat(e, starts), sizes)
        return p - target, np.maximum(p * (1 - p), 1e-6)

    return objective
