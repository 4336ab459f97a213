"""What ``POST /segment`` answers: the functions behind ``qseg segment`` run on a request's
queries, giving each query's JSON record and the text the command would print."""

from __future__ import annotations

from typing import Any

from qseg.errors import QsegError
from qseg.integrations.syntax import Syntax, renderer
from qseg.query import QueryError
from qseg.segmenters.base import Segmenter
from qseg.segmenters.nesting import MAX_NESTED_WORDS
from qseg.segmenters.records import (
    BATCH,
    Result,
    format_nested,
    format_result,
    nest_records,
    nested_record,
    result_record,
    segment_records,
)


class TooLongToNest(QsegError):
    """A query of the request has more words than a tree is built for."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.limit = MAX_NESTED_WORDS


def answer(
    segmenter: Segmenter,
    queries: list[str],
    *,
    k: int,
    nested: bool,
    fmt: str,
    syntax: Syntax | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Each query's record (``qseg segment --format json``'s, without the id) and the text
    ``qseg segment --format fmt`` prints for the queries (``syntax``: the options of an
    engine's query syntax)."""
    records = [(None, query) for query in queries]
    if nested:
        trees = [tree for _, tree in nest_records(segmenter, records, refused=_refused)]  # type: ignore[misc]
        text = "".join(format_nested(None, tree, fmt) for tree in trees)
        return [_without_id(nested_record(None, tree)) for tree in trees], text
    results: list[Result] = list(
        segment_records(segmenter, records, k=k, scores=fmt == "json", batch=BATCH)  # type: ignore[arg-type]
    )
    render = None if fmt == "json" else renderer(fmt, syntax)
    text = "".join(format_result(result, fmt, render) for result in results)
    return [_without_id(result_record(result)) for result in results], text


def _refused(place: int, exc: QueryError) -> TooLongToNest:
    return TooLongToNest(place - 1, str(exc))


def _without_id(record: dict[str, Any]) -> dict[str, Any]:
    record.pop("id")
    return record
