"""Joint decoding: score whole segmentations instead of deciding each gap alone.

Every segmentation of a query is a candidate described by :data:`CANDIDATE_FEATURES`: how
likely its breaks are under the gap classifier, and what its segments are (counts, titles,
phrases seen as segments in training, segments that begin or end with a function word, and,
where the query has part-of-speech tags, segments that read as noun phrases and breaks between
two nouns or after an adjective). Two scores of the unsupervised methods describe the candidate
as a whole: the log of the naive score of paper 003 (sum of |s|^|s| count(s) over its multiword
segments with a count) and the cohesion of its segments, the n-gram PMI ``log count(s) - sum
log count(w) + (|s| - 1) log N`` (sum and minimum, from counts plus one as in the span tables;
a multiword segment without a count adds 0). Together they add 0.4 points of query accuracy
(mean of five fold splits). A gradient-boosted scorer is trained with a softmax over each
query's candidates (a listwise loss) against a target that mixes the distribution of the
annotators' votes with credit for near misses (:func:`joint_target`); a second one, LambdaMART
(XGBoost's ``rank:ndcg``), learns to rank the candidates by their votes (:func:`vote_grades`),
which rewards putting the majority first. The candidate with the highest sum of the two scores
is the output (of those the gap classifier finds most probable; see
``BreakClassifier.max_candidates``).

Training and short queries (up to :data:`MAX_JOINT_WORDS` words) describe all 2^(n-1)
candidates at once. A longer query is decided by the same rule without enumerating them
(:func:`chosen_candidate_features`): its most probable candidates come from the exact k-best
of the gap model, and the features that compare a candidate with the best of all
(``*_gap_to_best``) take that best from dynamic programs over the segments, so every length
is decoded exactly as a short query is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache

import numpy as np

from qseg.segmentation import break_spans
from qseg.segmenters.learned.gap_features import (
    FUNCTION_WORDS,
    MAX_SPAN,
    POS_CLASSES,
    TAG_INDEX,
    QueryTables,
)

MAX_JOINT_WORDS = 12
"""The longest query whose candidates are all enumerated (2,048 of them): for training, and
when segmenting; longer ones are described candidate by candidate
(:func:`chosen_candidate_features`)."""

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
    "naive_log_score",
    "naive_log_score_gap_to_best",
    "cohesion_sum",
    "cohesion_min",
    "noun_phrase_segments",
    "other_multiword_segments",
    "noun_phrase_words",
    "noun_noun_breaks",
    "adjective_breaks",
)


def _classes(*names: str) -> np.ndarray:
    """Indices in :data:`POS_CLASSES` of the named word classes."""
    return np.array([POS_CLASSES.index(name) for name in names])


_NOUN_PHRASE_WORDS = _classes("noun", "proper", "adjective", "number", "verb")
_NOUN_PHRASE_HEADS = _classes("noun", "proper", "number")
_NOUNS = _classes("noun", "proper")
_ADJECTIVES = _classes("adjective")
_OTHER = POS_CLASSES.index("other")


Layout = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Candidates as the features see them: their break bits (one row each), the
candidate-by-span incidence matrix, the spans (start, end) they use, in order, and their
lengths."""


def _layout_of(bits: np.ndarray) -> Layout:
    """The :data:`Layout` of the candidates whose break bits are the rows of ``bits``."""
    segments = [break_spans(row) for row in bits.tolist()]
    spans = sorted({span for spans in segments for span in spans})
    index = {span: i for i, span in enumerate(spans)}
    incidence = np.zeros((len(bits), len(spans)), dtype=bool)
    for c, spans_of_c in enumerate(segments):
        incidence[c, [index[span] for span in spans_of_c]] = True
    span_array = np.array(spans, dtype=np.int64).reshape(-1, 2)
    arrays = bits, incidence, span_array, span_array[:, 1] - span_array[:, 0]
    for array in arrays:  # shared by every later call: a stray write must fail, not spread
        array.flags.writeable = False
    return arrays


@cache
def _layout(n: int) -> Layout:
    """The :data:`Layout` of every candidate of an n-word query (row c is the binary number
    c), over every span."""
    codes = np.arange(2 ** (n - 1), dtype=np.int64)
    return _layout_of(((codes[:, None] >> np.arange(n - 1)) & 1).astype(np.int8))


def candidate_bits(n: int) -> np.ndarray:
    """All break vectors of an n-word query, one row each."""
    return _layout(n)[0]


AGREEMENT_SHARPNESS = 20.0
"""How steeply the agreement part of :func:`joint_target` falls with each disagreeing gap."""


def joint_target(
    n: int, votes: Mapping[tuple[int, ...], float], agreement_weight: float
) -> np.ndarray:
    """The training distribution over the candidates of an n-word query (rows of
    :func:`candidate_bits`).

    The vote shares alone give nothing to a segmentation no annotator chose, however close it
    is to theirs, while break accuracy counts every gap. So ``agreement_weight`` of the target
    goes to a softmax of each candidate's expected break agreement with the annotators
    (sharpness :data:`AGREEMENT_SHARPNESS`). On Webis-QSeC-10 half of it and none of it score
    within the fold-split noise of each other (docs/supervised.md, `joint` against `joint,
    votes only`: within 0.1 points in break accuracy, on one side or the other with the name
    vectors of two machines).
    """
    bits = candidate_bits(n)
    shares = np.zeros(len(bits))
    agreement = np.zeros(len(bits))
    for breaks, share in votes.items():
        shares[_row(breaks)] += share
        agreement += share * (bits == np.asarray(breaks)).mean(axis=1)
    credit = np.exp(AGREEMENT_SHARPNESS * (agreement - agreement.max()))
    return (1 - agreement_weight) * shares + agreement_weight * credit / credit.sum()


VOTE_GRADES = 10
"""The relevance grade of a candidate with all the votes (Webis-QSeC-10 has 10 annotators)."""


def vote_grades(n: int, votes: Mapping[tuple[int, ...], float]) -> np.ndarray:
    """Relevance grades of the candidates of an n-word query for the vote ranker: each one's
    share of the votes in tenths, so on Webis-QSeC-10 its number of votes."""
    grades = np.zeros(2 ** (n - 1))
    for breaks, share in votes.items():
        grades[_row(breaks)] += round(share * VOTE_GRADES)
    return grades


def _row(breaks: Sequence[int]) -> int:
    """The row of a break vector among :func:`candidate_bits` (its bits read as a number)."""
    return sum(bit << g for g, bit in enumerate(breaks))


_CHUNK_CELLS = 1 << 22
"""Queries x candidates x spans computed at once (bounds the memory of long queries)."""


def candidate_features(
    queries: Sequence[Sequence[str]],
    gap_p: Sequence[np.ndarray],
    tables: Sequence[QueryTables],
    phrases: Sequence[Mapping[str, float]],
    tags: Sequence[Sequence[str] | None] | None = None,
) -> list[np.ndarray]:
    """Per query (2 to :data:`MAX_JOINT_WORDS` words), one row of :data:`CANDIDATE_FEATURES`
    per candidate; queries of one length are computed together as matrix products. The
    part-of-speech features are NaN for a query without tags."""
    blocks: list[np.ndarray] = [np.zeros((0, len(CANDIDATE_FEATURES)), np.float32)] * len(queries)
    by_length: dict[int, list[int]] = {}
    for q, words in enumerate(queries):
        if not 2 <= len(words) <= MAX_JOINT_WORDS:
            raise ValueError(f"joint decoding takes 2 to {MAX_JOINT_WORDS} words, not {len(words)}")
        by_length.setdefault(len(words), []).append(q)
    for n, group in by_length.items():
        incidence = _layout(n)[1]
        step = max(1, _CHUNK_CELLS // incidence.size)
        for i in range(0, len(group), step):
            chunk = group[i : i + step]
            features = _group_features(
                _layout(n),
                [queries[q] for q in chunk],
                [gap_p[q] for q in chunk],
                [tables[q] for q in chunk],
                [phrases[q] for q in chunk],
                [tags[q] if tags is not None else None for q in chunk],
            )
            for q, block in zip(chunk, features, strict=True):
                blocks[q] = block
    return blocks


_FEW_CANDIDATES = 32
"""Up to this many candidates, their segments are walked in Python: quicker than laying out
their spans (the decoder's few most probable candidates of a query)."""


def _untitled_long_row(row: list[int], titles: np.ndarray, limit: int) -> bool:
    start = 0
    for gap, broken in enumerate([*row, 1]):
        if broken:
            if gap + 1 - start >= limit and not titles[start, gap + 1]:
                return True
            start = gap + 1
    return False


def untitled_long(bits: np.ndarray, titles: np.ndarray, limit: int) -> np.ndarray:
    """Per candidate (rows of break bits), whether one of its segments has ``limit`` words or
    more and is not a title (``titles``: the query's span table, ``[start, end)``)."""
    n = bits.shape[1] + 1
    every = n <= MAX_JOINT_WORDS and bits is candidate_bits(n)  # (its layout is cached)
    if not every and len(bits) <= _FEW_CANDIDATES:
        return np.array([_untitled_long_row(row, titles, limit) for row in bits.tolist()])
    layout = _layout(n) if every else _layout_of(bits)
    _, incidence, spans, lengths = layout
    bad = (lengths >= limit) & ~titles[spans[:, 0], spans[:, 1]].astype(bool)
    return np.asarray(incidence[:, bad].any(axis=1))


def chosen_candidate_features(
    words: Sequence[str],
    gap_p: np.ndarray,
    table: QueryTables,
    phrases: Mapping[str, float],
    tags: Sequence[str] | None,
    candidates: np.ndarray,
    longest_phrase: int,
) -> np.ndarray:
    """One row of :data:`CANDIDATE_FEATURES` for each candidate of a query of any length given
    as break bits (rows of ``candidates``), the same as :func:`candidate_features` gives it
    among all candidates. The comparisons with the best of all candidates need only the best
    under each measure, so the candidates that maximize them join the rows computed (the
    most probable candidate must be among ``candidates``; ``longest_phrase``: the most words
    of a key of ``phrases``)."""
    best = _best_candidates(words, table, phrases, longest_phrase)
    rows = np.vstack([candidates, np.array(best, dtype=np.int8).reshape(len(best), -1)])
    block = _group_features(_layout_of(rows), [words], [gap_p], [table], [phrases], [tags])
    return block[0, : len(candidates)]


def _best_candidates(
    words: Sequence[str], table: QueryTables, phrases: Mapping[str, float], longest_phrase: int
) -> list[list[int]]:
    """The break bits of the candidates with the highest sum of log counts, phrase rates and
    naive score (each a sum over the segments, so a dynamic program finds it)."""
    n = len(words)
    counts = np.nan_to_num(table.log_counts, nan=0.0)
    short = range(2, min(MAX_SPAN, n) + 1)
    log_count = {(a, a + m): float(counts[a, a + m]) for m in short for a in range(n - m + 1)}
    naive = {
        span: math.expm1(value) * float((span[1] - span[0]) ** (span[1] - span[0]))
        for span, value in log_count.items()
        if value > 0
    }
    reach = max(longest_phrase, 2)
    rates = {
        (a, a + m): phrases.get(" ".join(words[a : a + m]), 0.5)
        for m in range(2, min(reach, n) + 1)
        for a in range(n - m + 1)
    }
    return [
        _best_sum(n, log_count, MAX_SPAN, None),
        _best_sum(n, rates, reach, 0.5),  # a longer span is no phrase seen: rate 0.5
        _best_sum(n, naive, MAX_SPAN, None),
    ]


def _best_sum(
    n: int, weights: Mapping[tuple[int, int], float], reach: int, beyond: float | None
) -> list[int]:
    """The break bits of the segmentation of n words with the highest sum of its multiword
    segments' ``weights`` (non-negative; absent: 0), where a segment of more than ``reach``
    words weighs ``beyond`` (``None``: 0). Single words weigh 0, so the best total never
    falls as the query goes on, and the best start of a long segment is the latest."""
    best = [0.0] * (n + 1)
    start = [0] * (n + 1)
    for end in range(1, n + 1):
        best[end], start[end] = best[end - 1], end - 1
        for first in range(max(0, end - reach), end - 1):
            value = best[first] + weights.get((first, end), 0.0)
            if value > best[end]:
                best[end], start[end] = value, first
        if beyond is not None and end - reach - 1 >= 0:
            value = best[end - reach - 1] + beyond
            if value > best[end]:
                best[end], start[end] = value, end - reach - 1
    bits = [0] * (n - 1)
    end = n
    while end > 0:
        if start[end] > 0:
            bits[start[end] - 1] = 1
        end = start[end]
    return bits


def _group_features(
    layout: Layout,
    queries: Sequence[Sequence[str]],
    gap_p: Sequence[np.ndarray],
    tables: Sequence[QueryTables],
    phrases: Sequence[Mapping[str, float]],
    tags: Sequence[Sequence[str] | None],
) -> np.ndarray:
    """Candidate features of queries that all have n words: shape (queries, candidates, F)."""
    bits, incidence, spans, lengths = layout
    n = bits.shape[1] + 1
    starts, ends = spans[:, 0], spans[:, 1]
    multi = lengths > 1
    counted = lengths <= MAX_SPAN
    p = np.clip(np.array(gap_p, dtype=np.float64).reshape(len(queries), n - 1), 1e-6, 1 - 1e-6)
    # log-probability of each candidate's break bits (queries x candidates x gaps)
    log_bits = np.where(bits[None] == 1, np.log(p)[:, None, :], np.log1p(-p)[:, None, :])
    log_count = np.array([t.log_counts[starts, ends] for t in tables])
    log_count = np.where(counted, log_count, 0.0)
    is_title = np.array([t.titles[starts, ends] for t in tables]) & multi
    rate = np.array(
        [
            [
                known.get(" ".join(w[a:b]), np.nan) if m else np.nan
                for a, b, m in zip(starts, ends, multi, strict=True)
            ]
            for known, w in zip(phrases, queries, strict=True)
        ]
    )
    fn = np.array([[word in FUNCTION_WORDS for word in w] for w in queries])
    first_fn = fn[:, starts] & multi
    last_fn = fn[:, ends - 1] & multi

    inc = incidence.astype(np.float64)
    multi_inc = incidence & multi
    counted_inc = multi_inc & counted
    scored = counted_inc.astype(np.float64)
    segments = multi_inc.T.astype(np.float64)
    seen = ~np.isnan(rate) & multi
    filled = np.where(seen, rate, 0.5)
    # paper 003's naive weight and the n-gram PMI of every multiword span with a count
    found = multi & counted & (log_count > 0)
    positions = np.arange(n)
    single = np.array([t.log_counts[positions, positions + 1] for t in tables])
    word_log = np.concatenate([np.zeros((len(queries), 1)), np.cumsum(single, axis=1)], axis=1)
    log_n = np.array([t.log_corpus_size for t in tables])[:, None]
    cohesion = log_count - (word_log[:, ends] - word_log[:, starts]) + (lengths - 1) * log_n
    cohesion = np.where(found, cohesion, 0.0)
    short = np.minimum(lengths, MAX_SPAN).astype(np.float64)  # (found spans are that short)
    naive = np.where(found, np.expm1(log_count) * short**short, 0.0)
    with np.errstate(invalid="ignore"):
        log_p = log_bits.sum(axis=2)
        sum_log = log_count @ scored.T
        phrase_sum = np.where(multi, filled, 0.0) @ segments
        naive_sum = naive @ segments
        log_naive = np.log(np.where(naive_sum > 0, naive_sum, 1.0))
        columns = [
            log_p,
            log_bits.min(axis=2),
            np.full(log_p.shape, float(n)),
            np.broadcast_to(inc.sum(axis=1), log_p.shape),
            np.broadcast_to(multi_inc.sum(axis=1), log_p.shape),
            np.broadcast_to((incidence * lengths).max(axis=1), log_p.shape),
            sum_log,
            _masked_reduce(np.min, log_count, counted_inc),
            _masked_reduce(np.max, log_count, counted_inc),
            (log_count == 0).astype(np.float64) @ scored.T,
            is_title.astype(np.float64) @ segments,
            (is_title * lengths) @ segments,
            first_fn.astype(np.float64) @ inc.T,
            last_fn.astype(np.float64) @ inc.T,
            _masked_reduce(np.min, filled, multi_inc),
            phrase_sum,
            seen.astype(np.float64) @ segments,
            log_p - log_p.max(axis=1, keepdims=True),
            sum_log - sum_log.max(axis=1, keepdims=True),
            phrase_sum - phrase_sum.max(axis=1, keepdims=True),
            log_naive,
            log_naive - log_naive.max(axis=1, keepdims=True),
            cohesion @ segments,
            _masked_reduce(np.min, cohesion, counted_inc),
            *_tag_columns(tags, bits, spans, multi, segments),
        ]
    # each column cast to float32 as it is put in place (no float64 copy of the whole)
    features = np.empty((*log_p.shape, len(columns)), dtype=np.float32)
    for i, column in enumerate(columns):
        features[:, :, i] = column
    return features


def _tag_columns(
    tags: Sequence[Sequence[str] | None],
    bits: np.ndarray,
    spans: np.ndarray,
    multi: np.ndarray,
    segments: np.ndarray,
) -> list[np.ndarray]:
    """Per query and candidate: its multiword segments that read as noun phrases (nouns,
    adjectives, numbers or verbs ending in a noun or number) and the other multiword ones,
    the words in the former, and its breaks between two nouns and right after an adjective.
    ``segments`` is the span-by-candidate incidence of multiword segments, as floats."""
    n = bits.shape[1] + 1
    if all(tag is None for tag in tags):  # no tags (as for any query typed in): all NaN
        return [np.full((len(tags), len(bits)), np.nan) for _ in range(5)]
    classes = np.array(
        [[TAG_INDEX.get(t, _OTHER) for t in tag] if tag is not None else [-1] * n for tag in tags]
    ).reshape(len(tags), n)
    tagged = classes[:, 0] >= 0
    # words outside a noun phrase before each position: a span holds none if the counts match
    outside = np.cumsum(~np.isin(classes, _NOUN_PHRASE_WORDS), axis=1)
    outside = np.concatenate([np.zeros((len(tags), 1)), outside], axis=1)
    heads = np.isin(classes, _NOUN_PHRASE_HEADS)
    starts, ends = spans[:, 0], spans[:, 1]
    noun_phrase = (outside[:, ends] == outside[:, starts]) & heads[:, ends - 1] & multi
    nouns = np.isin(classes, _NOUNS)
    gaps = bits.T.astype(np.float64)
    columns = [
        noun_phrase @ segments,
        (multi & ~noun_phrase) @ segments,
        (noun_phrase * (ends - starts)) @ segments,
        (nouns[:, :-1] & nouns[:, 1:]) @ gaps,
        np.isin(classes, _ADJECTIVES)[:, :-1] @ gaps,
    ]
    return [np.where(tagged[:, None], c, np.nan) for c in columns]


def _masked_reduce(reduce: object, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per query and candidate, min or max of ``values`` (queries x spans) over the spans
    ``mask`` (candidates x spans) selects; NaN where it selects none. The spans are gathered
    by index, a candidate's few (at most one a word) padded to the most any has, rather than
    all spans masked: queries x candidates x words instead of x spans (a sixth for 12 words)."""
    fill = np.inf if reduce is np.min else -np.inf
    counts = mask.sum(axis=1)
    candidates, spans = np.nonzero(mask)  # row-major: each candidate's spans in a run
    slot = np.arange(len(spans)) - np.repeat(np.cumsum(counts) - counts, counts)
    width = max(int(counts.max(initial=0)), 1)
    index = np.zeros((len(mask), width), dtype=np.intp)
    index[candidates, slot] = spans
    selected = np.zeros((len(mask), width), dtype=bool)
    selected[candidates, slot] = True
    out = reduce(np.where(selected[None], values[:, index], fill), axis=2)  # type: ignore[operator]
    return np.where((counts > 0)[None], out, np.nan)


def softmax_objective(
    bounds: np.ndarray, target: np.ndarray, weights: np.ndarray | None = None
) -> object:
    """The listwise loss for ``xgboost.train``: softmax cross-entropy within each query.

    ``bounds`` are the first row of each query's candidates plus the end; ``target`` holds each
    query's vote distribution over its candidates (summing to 1 per query); ``weights``, if
    given, each candidate row's weight (its query's).
    """
    starts = bounds[:-1]
    sizes = np.diff(bounds)

    def objective(scores: np.ndarray, _: object) -> tuple[np.ndarray, np.ndarray]:
        top = np.repeat(np.maximum.reduceat(scores, starts), sizes)
        e = np.exp(scores - top)
        p = e / np.repeat(np.add.reduceat(e, starts), sizes)
        gradient, hessian = p - target, np.maximum(p * (1 - p), 1e-6)
        if weights is None:
            return gradient, hessian
        return gradient * weights, hessian * weights

    return objective
