"""The IR-based evaluation of paper 000: oracle scores over quoted versions, QVRS and BQV_BF.

For each query and segmentation system, every distinct quoted version (see ``versions.py``) is
run on a search engine and scored against the relevance judgments; the system's oracle score
for the query is its best version's score, and its QVRS is the mean over queries. Beside the
QVRS of each system the report has the unsegmented query, each system's all-quoted version (the
segmentation as typed), and BQV_BF, the best of all 2^(l-1) segmentations with every multiword
segment quoted. Metrics come from ir_measures: nDCG@k on the graded judgments, AP@k with grade
>= 1 relevant, RR@k with grade 2 relevant (paper 000, section 4.1); k = 5 and 10.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from qseg.corpora.ir import Collection
from qseg.errors import QsegError
from qseg.evaluation.ir import bm25
from qseg.evaluation.ir.cache import CachedSearch
from qseg.evaluation.ir.engines.base import Engine
from qseg.evaluation.ir.versions import (
    MAX_NESTED_VERSIONS,
    QuotedQuery,
    all_quoted,
    bqv_candidates,
    ir_words,
    version_count,
    versions_of,
)
from qseg.evaluation.matching import aggregate, choose_reference, match
from qseg.segmentation import NestedSegmentation, Reference, Segmentation
from qseg.segmenters.base import Segmenter

DEFAULT_MEASURES = (
    "nDCG@5",
    "nDCG@10",
    "AP(rel=1)@5",
    "AP(rel=1)@10",
    "RR(rel=2)@5",
    "RR(rel=2)@10",
)
UNSEGMENTED = "unsegmented"
TUNED = "BM25 tuned"
"""The unsegmented query on BM25 with k1 and b chosen by cross-validation (:mod:`.bm25`)."""
BQV = "BQV_BF"
MATCHING = ("query_accuracy", "segment_precision", "segment_recall", "segment_f1", "break_accuracy")


def parse_measures(specs: Sequence[str]) -> list[Any]:
    """ir_measures measure objects from strings such as ``nDCG@10`` or ``RR(rel=2)@5``."""
    import ir_measures

    measures = []
    for spec in specs:
        try:
            measures.append(ir_measures.parse_measure(spec))
        except (ValueError, NameError, SyntaxError):
            raise QsegError(
                f"unknown measure {spec!r} (ir_measures syntax, e.g. nDCG@10)"
            ) from None
    return measures


def score_rankings(
    measures: Sequence[Any],
    qrels: Mapping[str, Mapping[str, int]],
    rankings: Mapping[str, Mapping[str, float]],
) -> dict[str, dict[str, float]]:
    """Every measure of every ranking (``key -> {doc: score}``), judged by ``qrels[key]``.

    ir_measures leaves out empty rankings; they score 0 on every measure here.
    """
    import ir_measures

    values = {key: {str(m): 0.0 for m in measures} for key in rankings}
    nonempty = {key: dict(ranking) for key, ranking in rankings.items() if ranking}
    judged = {key: dict(qrels[key]) for key in nonempty}
    for metric in ir_measures.iter_calc(list(measures), judged, nonempty):
        values[metric.query_id][str(metric.measure)] = metric.value
    return values


def _has_ties(values: Sequence[float]) -> bool:
    """Whether two values are equal (as scipy's Kendall tau compares them)."""
    return len(set(values)) < len(values)


def _unnested(
    segmentations: Mapping[str, Segmentation | NestedSegmentation | None], qid: str
) -> bool:
    if qid not in segmentations:
        return False  # not a nested system's gap: a missing segmentation is an error below
    seg = segmentations[qid]
    if seg is None:  # a nested system that could not nest this query
        return True
    return isinstance(seg, NestedSegmentation) and version_count(seg) > MAX_NESTED_VERSIONS


def segment_queries(
    segmenter: Segmenter, words: Mapping[str, tuple[str, ...]]
) -> dict[str, Segmentation]:
    """A system's segmentation of every query (words as the engine sees them)."""
    ids = list(words)
    segmented = segmenter.segment_many(" ".join(words[qid]) for qid in ids)
    return dict(zip(ids, segmented, strict=True))


def nest_queries(
    segmenter: Segmenter, words: Mapping[str, tuple[str, ...]]
) -> dict[str, NestedSegmentation | None]:
    """A system's nested segmentation of every query (see :func:`qseg.segmenters.nesting.nest`);
    ``None`` for a query too long to nest, which :func:`evaluate_ir` then leaves out."""
    from qseg.segmenters.nesting import MAX_NESTED_WORDS, nest

    return {
        qid: nest(segmenter, " ".join(query)) if len(query) <= MAX_NESTED_WORDS else None
        for qid, query in words.items()
    }


def query_words(collection: Collection) -> dict[str, tuple[str, ...]]:
    """Judged queries as the engine sees them (stopwords of the collection removed), non-empty."""
    words = {}
    for qid, text in collection.judged_queries().items():
        found = ir_words(text, collection.stopwords)
        if found:
            words[qid] = found
    return words


UNJUDGED = "no judgment of grade >= 1"
WORDLESS = "no words left for the engine (stopwords and punctuation removed)"


def left_out_queries(collection: Collection) -> dict[str, list[str]]:
    """The queries :func:`query_words` leaves out, by reason, in the collection's order: no
    oracle can be scored for them (without a relevant document every version scores 0)."""
    judged = collection.judged_queries()
    reasons = {
        UNJUDGED: [qid for qid in collection.queries if qid not in judged],
        WORDLESS: [qid for qid, t in judged.items() if not ir_words(t, collection.stopwords)],
    }
    return {reason: ids for reason, ids in reasons.items() if ids}


def unreachable_measures(
    measures: Sequence[Any], qrels: Mapping[str, Mapping[str, int]], qids: Iterable[str]
) -> dict[str, int]:
    """Measure -> the highest grade judged, for every measure counting only documents of a
    grade above it (``RR(rel=2)`` on binary 0/1 judgments): it is 0 for every query and
    system, so it ranks nothing."""
    highest = max((g for qid in qids for g in qrels.get(qid, {}).values()), default=0)
    return {str(m): highest for m in measures if m.params.get("rel", 1) > highest}


@dataclass
class IrResults:
    """Per-query scores of every column and measure, with the tables derived from them."""

    measures: list[str]
    columns: list[str]
    systems: list[str]
    scores: dict[str, dict[str, dict[str, float]]]  # column -> measure -> qid -> score
    bqv_reference: dict[str, dict[str, Segmentation]] = field(default_factory=dict)
    skipped_bqv: list[str] = field(default_factory=list)
    skipped_nested: list[str] = field(default_factory=list)
    left_out: dict[str, list[str]] = field(default_factory=dict)
    """Queries of the collection no column covers, by reason (see :func:`left_out_queries`)."""
    unreachable: dict[str, int] = field(default_factory=dict)
    """Measures left out of every column, with the highest grade judged (see
    :func:`unreachable_measures`)."""
    searches: int = 0
    cache_hits: int = 0
    bm25_parameters: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    """Per measure, the BM25 parameters cross-validation chose for each fold (the
    :data:`TUNED` column's; empty without it)."""

    @property
    def queries(self) -> int:
        """How many queries every column was computed over."""
        return len(self.scores[UNSEGMENTED][self.measures[0]])

    def mean(self, column: str, measure: str) -> float:
        values = list(self.scores[column][measure].values())
        return sum(values) / len(values) if values else math.nan

    def p_value(self, column: str, measure: str, against: str = UNSEGMENTED) -> float:
        """Paired two-sided t-test of ``column`` against ``against`` (the unsegmented query,
        or tuned BM25), per query."""
        from scipy.stats import ttest_rel

        base = self.scores[against][measure]
        other = self.scores[column][measure]
        qids = [q for q in base if q in other]
        a = [other[q] for q in qids]
        b = [base[q] for q in qids]
        if len(qids) < 2 or all(x == y for x, y in zip(a, b, strict=True)):
            return 1.0
        return float(ttest_rel(a, b).pvalue)

    def table(self) -> list[dict[str, Any]]:
        """Rows per measure: the mean of every column, its p-value against unsegmented and,
        where the table has tuned BM25, against that (``"<column> p tuned"``)."""
        rows = []
        tuned = TUNED in self.columns
        for measure in self.measures:
            row: dict[str, Any] = {"measure": measure}
            for column in self.columns:
                row[column] = self.mean(column, measure)
                if column != UNSEGMENTED:
                    row[f"{column} p"] = self.p_value(column, measure)
                if tuned and column not in (UNSEGMENTED, TUNED):
                    row[f"{column} p tuned"] = self.p_value(column, measure, TUNED)
            rows.append(row)
        return rows

    def kendall_tau(
        self,
        references: Mapping[str, Mapping[str, Segmentation]],
        segmentations: Mapping[str, Mapping[str, Segmentation]],
    ) -> list[dict[str, Any]]:
        """Kendall tau between the systems' ranking by QVRS and by each matching metric.

        ``references[measure]`` gives the reference segmentation of each query (BQV_BF's best
        for that measure, or gold segmentations); needs at least two systems. A row also
        names the systems' number and, under ``tied``, the metrics where either ranking has
        equal values: scipy's tau is tau-b, which leaves tied pairs out of its denominator, so
        there it does not move in the steps of the untied case.
        """
        from scipy.stats import kendalltau

        rows = []
        names = [name for name in self.systems if name in segmentations]
        for measure in self.measures:
            reference = references[measure]
            qvrs = [self.mean(f"{name} QVRS", measure) for name in names]
            row: dict[str, Any] = {"measure": measure, "systems": len(names), "tied": []}
            for metric in MATCHING:
                values = []
                for name in names:
                    matches = [
                        match(qid, segmentations[name][qid], reference[qid])
                        for qid in reference
                        if qid in segmentations[name]
                    ]
                    values.append(getattr(aggregate(name, matches), metric))
                tau = kendalltau(qvrs, values).statistic if len(names) > 1 else math.nan
                row[metric] = float(tau)
                if _has_ties(qvrs) or _has_ties(values):
                    row["tied"].append(metric)
            rows.append(row)
        return rows


def evaluate_ir(
    collection: Collection,
    engine: Engine,
    systems: Mapping[str, Mapping[str, Segmentation | NestedSegmentation | None]],
    *,
    measures: Sequence[str] = DEFAULT_MEASURES,
    cache: str | None = None,
    bqv: bool = True,
    bqv_max_words: int = 12,
    tuned_bm25: bool = False,
    progress: Callable[[int], None] | None = None,
) -> IrResults:
    """Run every quoted version once (cached), score it, and take the oracles.

    ``engine`` is indexed here unless it already holds the collection's index.

    ``systems`` maps a name to the segmentation of each query of :func:`query_words`, flat or
    nested (a tree's versions quote sets of its constituents, see ``versions.py``; a query
    with no tree, or a tree of over ``MAX_NESTED_VERSIONS`` versions, is left out of every
    column and listed in ``skipped_nested``). With
    ``bqv``, BQV_BF needs 2^(l-1) searches for an l-word query, so every column is computed
    over the queries of at most ``bqv_max_words`` words (the others are listed as skipped).
    Measures that count only grades no judgment of these queries reaches are left out (listed
    in ``unreachable``); it is an error if no measure is left. With ``tuned_bm25`` the
    unsegmented query also runs with every other BM25 parameter pair of :data:`.bm25.GRID`
    (the engine must have ``bm25(k1, b)`` and rank with :data:`.bm25.DEFAULT` until told
    otherwise), and the :data:`TUNED` column scores each query with the pair
    cross-validation chose for its fold, per measure.
    """
    set_bm25 = getattr(engine, "bm25", None)
    if tuned_bm25 and set_bm25 is None:
        raise QsegError(
            f"tuned BM25 needs an engine whose k1 and b can be set (--engine lucene); "
            f"{engine.name}'s are fixed"
        )
    words = query_words(collection)
    parsed = parse_measures(measures)
    unreachable = unreachable_measures(parsed, collection.qrels, words)
    parsed = [m for m in parsed if str(m) not in unreachable]
    if not parsed:
        raise QsegError(
            f"no measure left: {', '.join(unreachable)} count only grades above the highest "
            f"judged, {max(unreachable.values())} (map grades with --grades, e.g. 1:2)"
        )
    names = [str(m) for m in parsed]
    depth = max(m.params.get("cutoff") or 1000 for m in parsed)
    skipped: list[str] = []
    if bqv:  # every column over the same queries: those BQV_BF can search
        skipped = [qid for qid, query in words.items() if len(query) > bqv_max_words]
        words = {qid: query for qid, query in words.items() if len(query) <= bqv_max_words}
    # a query some system has no tree of (too long to nest), or a tree of too many versions
    unnested = sorted(
        qid
        for qid in words
        if any(_unnested(segmentations, qid) for segmentations in systems.values())
    )
    words = {qid: query for qid, query in words.items() if qid not in unnested}
    for name, segmentations in systems.items():
        for qid, query in words.items():
            seg = segmentations.get(qid)
            if seg is None:
                raise QsegError(f"system {name} has no segmentation of query {qid}")
            if seg.words != query:
                raise QsegError(
                    f"system {name} segmented query {qid} as {' '.join(seg.words)!r}; the "
                    f"engine sees {' '.join(query)!r}"
                )
    # every distinct version of every query, once
    versions: dict[str, dict[str, QuotedQuery]] = {qid: {} for qid in words}
    per_system: dict[str, dict[str, list[str]]] = {}
    for name, segmentations in systems.items():
        per_system[name] = {}
        for qid in words:
            texts = []
            seg = segmentations[qid]
            assert seg is not None  # every system has one of each query left (checked above)
            for version in versions_of(seg):
                versions[qid].setdefault(version.text, version)
                texts.append(version.text)
            per_system[name][qid] = texts
    candidates: dict[str, list[tuple[Segmentation, str]]] = {}
    for qid, query in words.items():
        unsegmented = Segmentation(query, (1,) * (len(query) - 1))
        versions[qid].setdefault(all_quoted(unsegmented).text, all_quoted(unsegmented))
        if not bqv:
            continue
        candidates[qid] = []
        for seg, version in bqv_candidates(query):
            versions[qid].setdefault(version.text, version)
            candidates[qid].append((seg, version.text))

    index = engine.fingerprint or engine.index(collection)
    searcher = CachedSearch(engine, index, cache)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    keys: dict[tuple[str, str], str] = {}
    try:
        for qid, by_text in versions.items():
            for position, (text, version) in enumerate(by_text.items()):
                key = f"{qid}\x1f{position}"
                keys[qid, text] = key
                run[key] = {doc: score for doc, score in searcher.search(version, depth)}
                qrels[key] = collection.qrels[qid]
                if progress:
                    progress(1)
    finally:
        searcher.close()
    values = score_rankings(parsed, qrels, run)
    searches, hits = searcher.misses, searcher.hits
    tuned: dict[str, dict[str, float]] = {}
    chosen: dict[str, list[tuple[float, float]]] = {}
    if tuned_bm25 and set_bm25 is not None:
        plain = {qid: " ".join(query) for qid, query in words.items()}
        # BM25's usual pair is what the unsegmented query already ran with
        grid = {
            bm25.DEFAULT: {m: {q: values[keys[q, t]][m] for q, t in plain.items()} for m in names}
        }
        try:
            for params in bm25.GRID:
                if params == bm25.DEFAULT:
                    continue
                set_bm25(*params)
                # the parameters are part of what a cached result was searched with
                varied = CachedSearch(engine, f"{index}:bm25={params[0]},{params[1]}", cache)
                rankings: dict[str, dict[str, float]] = {}
                try:
                    for qid, text in plain.items():
                        rankings[qid] = dict(varied.search(versions[qid][text], depth))
                        if progress:
                            progress(1)
                finally:
                    varied.close()
                searches, hits = searches + varied.misses, hits + varied.hits
                by_query = score_rankings(parsed, {q: collection.qrels[q] for q in plain}, rankings)
                grid[params] = {m: {q: by_query[q][m] for q in plain} for m in names}
        finally:
            set_bm25(*bm25.DEFAULT)
        tuned, chosen = bm25.tuned({params: grid[params] for params in bm25.GRID}, plain)

    def score(qid: str, text: str, measure: str) -> float:
        return values[keys[qid, text]][measure]

    columns = [UNSEGMENTED]
    scores: dict[str, dict[str, dict[str, float]]] = {UNSEGMENTED: {}}
    for measure in names:
        scores[UNSEGMENTED][measure] = {
            qid: score(qid, " ".join(q), measure) for qid, q in words.items()
        }
    if tuned:
        columns.append(TUNED)
        scores[TUNED] = tuned
    for name, segmentations in systems.items():
        nested = any(isinstance(s, NestedSegmentation) for s in segmentations.values())
        typed = f"{name} {'top-level quoted' if nested else 'all-quoted'}"
        oracle = f"{name} QVRS"
        columns += [typed, oracle]
        scores[typed] = {m: {} for m in names}
        scores[oracle] = {m: {} for m in names}
        for qid in words:
            texts = per_system[name][qid]
            for measure in names:
                scores[typed][measure][qid] = score(qid, texts[-1], measure)
                scores[oracle][measure][qid] = max(score(qid, t, measure) for t in texts)
    reference: dict[str, dict[str, Segmentation]] = {}
    if bqv:
        columns.append(BQV)
        scores[BQV] = {m: {} for m in names}
        for measure in names:
            reference[measure] = {}
            for qid, options in candidates.items():
                best_seg, best = options[0][0], score(qid, options[0][1], measure)
                for seg, text in options[1:]:
                    value = score(qid, text, measure)
                    if value > best:
                        best_seg, best = seg, value
                scores[BQV][measure][qid] = best
                reference[measure][qid] = best_seg
    return IrResults(
        measures=names,
        columns=columns,
        systems=list(systems),
        scores=scores,
        bqv_reference=reference,
        skipped_bqv=skipped,
        skipped_nested=unnested,
        left_out=left_out_queries(collection),
        unreachable=unreachable,
        searches=searches,
        cache_hits=hits,
        bm25_parameters=chosen,
    )


def kendall_taus(
    results: IrResults,
    systems: Mapping[str, Mapping[str, Segmentation]],
    *,
    bqv: bool,
    gold: Mapping[str, Sequence[Reference]] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Kendall tau of the systems' rankings by QVRS and by matching metrics, against BQV_BF's
    best segmentations and (majority of) ``gold``; over the flat systems (matching metrics
    compare flat segmentations), empty with fewer than two."""
    taus: dict[str, list[dict[str, Any]]] = {}
    systems = {
        name: segs
        for name, segs in systems.items()
        if all(isinstance(s, Segmentation) for s in segs.values())
    }
    if len(systems) < 2:
        return taus
    if bqv:
        taus["BQV_BF"] = results.kendall_tau(results.bqv_reference, systems)
    if gold is not None:
        judged = results.scores[UNSEGMENTED][results.measures[0]]
        majority = {}
        for qid, refs in gold.items():
            if qid in judged and (ref := choose_reference("majority", refs)) is not None:
                majority[qid] = ref
        taus["the gold segmentations"] = results.kendall_tau(
            dict.fromkeys(results.measures, majority), systems
        )
    return taus
