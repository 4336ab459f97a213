"""Segmenting a stream of queries with ids, and the output forms of ``qseg segment``.

:func:`segment_records` is how every interface segments many queries: in batches where the
segmenter gains from them (a trained model), one at a time where it ranks, with each query's
part-of-speech tags where the segmenter uses them. :func:`format_result` writes one result as
pipe text, quoted text or a JSON record.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from qseg.query import QueryError, normalize
from qseg.segmentation import NestedSegmentation, Segmentation
from qseg.segmenters.base import Segmenter

FORMATS = ("pipe", "quoted", "json")
BATCH = 4096
"""Queries segmented at once where a segmenter gains from batches (a trained model)."""

TagLookup = Callable[[str | None, tuple[str, ...]], Sequence[str] | None]
"""Tags of a query from its id and words, or ``None``."""


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
    records: Iterable[tuple[str | None, str]],
    *,
    k: int = 1,
    scores: bool = False,
    tags: TagLookup | None = None,
    batch: int = 1,
) -> Iterator[Result]:
    """Segment ``(id, text)`` records in order. With ``k > 1`` or ``scores`` each query is
    ranked (``k`` best with scores); otherwise up to ``batch`` queries are segmented at once.
    ``tags`` is used only by a segmenter trained with tags."""
    tags = tags if uses_tags(segmenter) else None
    items = iter(records)
    if k > 1 or scores:
        for ident, text in items:
            options: dict[str, Any] = {}
            if tags is not None:
                options["tags"] = tags(ident, normalize(text))
            ranked = segmenter.rank(text, k, **options)
            yield Result(ident, [(seg, score) for seg, score in ranked])
        return
    while True:
        chunk: list[tuple[str | None, str]] = []
        try:
            chunk.extend(islice(items, batch))
        except BaseException:
            # a bad record stops the run, but not before the good ones read with it are out
            yield from _segmented(segmenter, chunk, tags)
            raise
        if not chunk:
            return
        yield from _segmented(segmenter, chunk, tags)


def _segmented(
    segmenter: Segmenter, chunk: Sequence[tuple[str | None, str]], tags: TagLookup | None
) -> Iterator[Result]:
    texts = [text for _, text in chunk]
    if tags is not None:
        found = [tags(i, normalize(t)) for i, t in chunk]
        segmented = segmenter.segment_many(texts, tags=found)  # type: ignore[call-arg]
    else:
        segmented = segmenter.segment_many(texts)
    for (ident, _), seg in zip(chunk, segmented, strict=True):
        yield Result(ident, [(seg, None)])


def _finite(score: float | None) -> float | None:
    """JSON has no infinities: a score of -inf (PMI joining a pair never seen) is null."""
    return score if score is None or math.isfinite(score) else None


def describe(seg: Segmentation) -> dict[str, Any]:
    """A segmentation as JSON-ready values: pipe text, quoted text and segments."""
    return {
        "segmentation": seg.to_pipe(),
        "quoted": seg.to_quoted(),
        "segments": list(seg.segment_texts),
    }


def format_result(result: Result, fmt: str) -> str:
    """Output lines for one result (with a final newline): ``[id<TAB>]segmentation``, with
    several segmentations ``[id<TAB>]rank<TAB>segmentation<TAB>score`` lines, or one JSON
    record (``--format json``)."""
    if fmt == "json":
        best, score = result.ranking[0]
        record = {"id": result.ident, "query": best.query} | describe(best)
        if score is not None:
            record["score"] = _finite(score)
        if len(result.ranking) > 1:
            record["ranking"] = [describe(s) | {"score": _finite(v)} for s, v in result.ranking]
        return json.dumps(record, allow_nan=False) + "\n"
    prefix = "" if result.ident is None else f"{result.ident}\t"
    render = Segmentation.to_quoted if fmt == "quoted" else Segmentation.to_pipe
    if len(result.ranking) == 1 and result.ranking[0][1] is None:
        return f"{prefix}{render(result.segmentation)}\n"
    return "".join(
        f"{prefix}{rank}\t{render(seg)}\t{score}\n"
        for rank, (seg, score) in enumerate(result.ranking, start=1)
    )


def nest_records(
    segmenter: Segmenter, records: Iterable[tuple[str | None, str]]
) -> Iterator[tuple[str | None, NestedSegmentation]]:
    """``(id, tree)`` per record, in order: the segmenter's nested segmentation
    (:func:`qseg.segmenters.nesting.nest`)."""
    from qseg.segmenters.nesting import nest

    for ident, text in records:
        try:
            tree = nest(segmenter, text)
        except QueryError as exc:
            raise QueryError(f"query {ident}: {exc}" if ident is not None else str(exc)) from None
        yield ident, tree


def format_nested(ident: str | None, tree: NestedSegmentation, fmt: str) -> str:
    """``[id<TAB>]((bracket) text)``, or one JSON record with the tree and its heights."""
    if fmt == "json":
        record = {"id": ident, "query": " ".join(tree.words), "nested": tree.to_brackets()}
        return json.dumps(record | {"heights": list(tree.heights)}) + "\n"
    prefix = "" if ident is None else f"{ident}\t"
    return f"{prefix}{tree.to_brackets()}\n"
