"""Segmenting a stream of queries with ids, and the output forms of ``qseg segment``.

:func:`segment_records` is how every interface segments many queries: in batches where the
segmenter gains from them (a trained model), one at a time where it ranks, with each query's
part-of-speech tags where the segmenter uses them. A batch ends early where reading on would
wait for the writer (``ready``), so that a co-process that writes a query and waits for its
answer gets it. A :class:`Skipped` record (a bad line passed over) keeps its place in the
output, so that line N of the output answers line N of the input. :func:`format_result`
writes one result as pipe text, quoted text or a JSON record.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from qseg.errors import QsegError
from qseg.query import QueryError, normalize
from qseg.segmentation import NestedSegmentation, Segmentation, quoted_text
from qseg.segmenters.base import Segmenter

FORMATS = ("pipe", "quoted", "json")

TagLookup = Callable[[str | None, tuple[str, ...]], Sequence[str] | None]
"""Tags of a query from its id and words, or ``None``."""

Record = tuple[str | None, str]
"""A query to segment: its id (``None`` if it has none) and its text."""


@dataclass(frozen=True)
class Skipped:
    """A query passed over (bad data, skipped on request). It still takes one place in the
    output, a marker, so that the answers stay aligned with the input."""

    line: int
    """Its place in the input, from 1: its line number."""
    error: QsegError


@dataclass(frozen=True)
class Result:
    """One query's segmentations, best first, with their scores (``None``: not asked for)."""

    ident: str | None
    ranking: list[tuple[Segmentation, float | None]]

    @property
    def segmentation(self) -> Segmentation:
        return self.ranking[0][0]


def uses_tags(segmenter: Segmenter) -> bool:
    """Whether the segmenter was trained with part-of-speech tags (and so takes them)."""
    return bool(getattr(segmenter, "uses_tags", False))


def segment_records(
    segmenter: Segmenter,
    records: Iterable[Record | Skipped],
    *,
    k: int = 1,
    scores: bool = False,
    tags: TagLookup | None = None,
    batch: int = 1,
    ready: Callable[[], bool] | None = None,
) -> Iterator[Result | Skipped]:
    """Segment ``(id, text)`` records in order; a :class:`Skipped` one comes out as it went
    in. With ``k > 1`` or ``scores`` each query is ranked (``k`` best with scores); otherwise
    up to ``batch`` queries are segmented at once, fewer where ``ready()`` says the next
    record is not in yet (the batch then goes without waiting for it). ``tags`` is used only
    by a segmenter trained with tags."""
    tags = tags if uses_tags(segmenter) else None
    items = iter(records)
    if k > 1 or scores:
        for item in items:
            yield item if isinstance(item, Skipped) else _ranked(segmenter, item, k, tags)
        return
    while True:
        chunk: list[Record | Skipped] = []
        try:
            _take(items, chunk, batch, ready)
        except BaseException:
            # a bad record stops the run, but not before the good ones read with it are out
            yield from _segmented(segmenter, chunk, tags)
            raise
        if not chunk:
            return
        yield from _segmented(segmenter, chunk, tags)


def _take(
    items: Iterator[Record | Skipped],
    chunk: list[Record | Skipped],
    batch: int,
    ready: Callable[[], bool] | None,
) -> None:
    """Append up to ``batch`` items to ``chunk``, stopping after any item where the next one
    would have to be waited for (appended in place: what was read stays if reading fails)."""
    for item in items:
        chunk.append(item)
        if len(chunk) >= batch or (ready is not None and not ready()):
            return


def _ranked(segmenter: Segmenter, record: Record, k: int, tags: TagLookup | None) -> Result:
    ident, text = record
    options: dict[str, Any] = {}
    if tags is not None:
        options["tags"] = tags(ident, normalize(text))
    return Result(ident, [(seg, score) for seg, score in segmenter.rank(text, k, **options)])


def _segmented(
    segmenter: Segmenter, chunk: Sequence[Record | Skipped], tags: TagLookup | None
) -> Iterator[Result | Skipped]:
    queries = [item for item in chunk if not isinstance(item, Skipped)]
    texts = [text for _, text in queries]
    if tags is not None:
        found = [tags(i, normalize(t)) for i, t in queries]
        answers = iter(segmenter.segment_many(texts, tags=found))  # type: ignore[call-arg]
    else:
        answers = iter(segmenter.segment_many(texts))
    for item in chunk:
        yield item if isinstance(item, Skipped) else Result(item[0], [(next(answers), None)])


def _finite(score: float | None) -> float | None:
    """JSON has no infinities: a score of -inf (PMI joining a pair never seen) is null."""
    return score if score is None or math.isfinite(score) else None


def describe(seg: Segmentation) -> dict[str, Any]:
    """A segmentation as JSON-ready values: pipe text, quoted text and segments."""
    texts = seg.segment_texts  # made once: the service describes every query it answers
    return {"segmentation": "|".join(texts), "quoted": quoted_text(texts), "segments": list(texts)}


def result_record(result: Result) -> dict[str, Any]:
    """One result as the JSON record of ``--format json`` (and of the HTTP service): its id,
    query, best segmentation, its score where asked, and the ranking where there are several."""
    best, score = result.ranking[0]
    record = {"id": result.ident, "query": best.query} | describe(best)
    if score is not None:
        record["score"] = _finite(score)
    if len(result.ranking) > 1:
        record["ranking"] = [describe(s) | {"score": _finite(v)} for s, v in result.ranking]
    return record


def format_result(
    result: Result, fmt: str, render: Callable[[Segmentation], str] | None = None
) -> str:
    """Output lines for one result (with a final newline): ``[id<TAB>]segmentation``, with
    several segmentations ``[id<TAB>]rank<TAB>segmentation<TAB>score`` lines, or one JSON
    record (``--format json``). ``render`` writes a segmentation as one line (default: pipe
    text, or quoted text for ``quoted``; an engine's syntax: :mod:`qseg.integrations.syntax`)."""
    if fmt == "json":
        return json.dumps(result_record(result), allow_nan=False, ensure_ascii=False) + "\n"
    prefix = "" if result.ident is None else f"{result.ident}\t"
    if render is None:
        render = Segmentation.to_quoted if fmt == "quoted" else Segmentation.to_pipe
    if len(result.ranking) == 1 and result.ranking[0][1] is None:
        return f"{prefix}{render(result.segmentation)}\n"
    return "".join(
        f"{prefix}{rank}\t{render(seg)}\t{score}\n"
        for rank, (seg, score) in enumerate(result.ranking, start=1)
    )


def format_skipped(skipped: Skipped, fmt: str, marker: str = "") -> str:
    """The one line that holds a skipped query's place: ``marker`` (no id: a bad line has no
    trustworthy one), or with ``--format json`` ``{"id": null, "line": N, "error": "..."}``;
    one line whatever the number of segmentations asked for."""
    if fmt == "json":
        record = {"id": None, "line": skipped.line, "error": str(skipped.error)}
        return json.dumps(record, ensure_ascii=False) + "\n"
    return f"{marker}\n"


def nest_records(
    segmenter: Segmenter,
    records: Iterable[Record | Skipped],
    *,
    refused: Callable[[int, QueryError], QsegError] | None = None,
    skip_bad: bool = False,
) -> Iterator[tuple[str | None, NestedSegmentation] | Skipped]:
    """``(id, tree)`` per record, in order: the segmenter's nested segmentation
    (:func:`qseg.segmenters.nesting.nest`); a :class:`Skipped` record comes out as it went in.
    A query that cannot be nested (too long) raises ``refused(place, error)`` (``place``: its
    place among the records, from 1; by default a :class:`QueryError` naming its id), or with
    ``skip_bad`` comes out as a :class:`Skipped` holding that error."""
    from qseg.segmenters.nesting import nest

    for place, item in enumerate(records, start=1):
        if isinstance(item, Skipped):
            yield item
            continue
        ident, text = item
        try:
            tree = nest(segmenter, text)
        except QueryError as exc:
            error = _unnested(ident, exc) if refused is None else refused(place, exc)
            if not skip_bad:
                raise error from None
            yield Skipped(place, error)
            continue
        yield ident, tree


def _unnested(ident: str | None, exc: QueryError) -> QueryError:
    return QueryError(f"query {ident}: {exc}" if ident is not None else str(exc))


def nested_record(ident: str | None, tree: NestedSegmentation) -> dict[str, Any]:
    """One tree as the JSON record of ``--nested --format json``: id, query, brackets, heights."""
    record = {"id": ident, "query": " ".join(tree.words), "nested": tree.to_brackets()}
    return record | {"heights": list(tree.heights)}


def format_nested(ident: str | None, tree: NestedSegmentation, fmt: str) -> str:
    """``[id<TAB>]((bracket) text)``, or one JSON record with the tree and its heights."""
    if fmt == "json":
        return json.dumps(nested_record(ident, tree), ensure_ascii=False) + "\n"
    prefix = "" if ident is None else f"{ident}\t"
    return f"{prefix}{tree.to_brackets()}\n"
