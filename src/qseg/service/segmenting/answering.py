"""What ``POST /segment`` answers: the functions behind ``qseg segment`` run on a request's
queries, giving each query's JSON record and the text the command would print, within the
service's bounds on the size of an answer and the time a request may take."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from qseg.errors import QsegError
from qseg.integrations.syntax import Syntax, renderer
from qseg.query import QueryError, normalize
from qseg.segmentation import NestedSegmentation
from qseg.segmenters.base import BATCH, Segmenter
from qseg.segmenters.nesting import MAX_NESTED_WORDS
from qseg.streams.records import (
    Result,
    format_nested,
    format_result,
    nest_records,
    nested_record,
    result_record,
    segment_records,
)

CHUNK_WORK = 4096
"""Words x k segmented between two looks at the clock (well under a second of the slowest
method), so a request is stopped soon after its time is up."""


class TooLongToNest(QsegError):
    """A query of the request has more words than a tree is built for."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.limit = MAX_NESTED_WORDS


class OverLimit(QsegError):
    """An answer that would pass one of the service's bounds (its size, its time)."""

    def __init__(self, message: str, limit: int | float, *, status: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.status = status


@dataclass(frozen=True)
class Bounds:
    """The largest answer in bytes, and the clock time by which it must be made."""

    answer: int
    deadline: float
    seconds: float


def answer(
    segmenter: Segmenter,
    queries: list[str],
    head: dict[str, Any],
    bounds: Bounds,
    *,
    k: int,
    nested: bool,
    fmt: str,
    syntax: Syntax | None = None,
) -> bytes:
    """The JSON answer: ``head`` (what segmented), each query's record (``qseg segment
    --format json``'s, without the id) and the text ``qseg segment --format fmt`` prints
    (``None`` for json: it would repeat the records). :class:`OverLimit` as soon as the
    answer passes ``bounds``."""
    render = None if nested or fmt == "json" else renderer(fmt, syntax)
    records: list[bytes] = []
    texts: list[str] = []
    size = 0
    for records_of_chunk, chunk_text in _chunks(segmenter, queries, k, nested, fmt, render, bounds):
        records += records_of_chunk
        texts.append(chunk_text)
        size += sum(len(r) + 1 for r in records_of_chunk) + len(chunk_text.encode())
        if size > bounds.answer:
            raise OverLimit(
                f"the answer would be over the limit of {bounds.answer} bytes (--max-answer): "
                "send fewer queries or a smaller k",
                bounds.answer,
                status=422,
            )
    text = None if fmt == "json" else "".join(texts)
    prefix = json.dumps(head, ensure_ascii=False)[:-1].encode()
    tail = json.dumps(text, ensure_ascii=False).encode()
    return prefix + b', "results": [' + b", ".join(records) + b'], "text": ' + tail + b"}"


def _chunks(
    segmenter: Segmenter,
    queries: list[str],
    k: int,
    nested: bool,
    fmt: str,
    render: Any,
    bounds: Bounds,
) -> Iterator[tuple[list[bytes], str]]:
    """The records and text of the queries, a chunk of about :data:`CHUNK_WORK` at a time,
    the clock checked before each."""
    start = 0
    while start < len(queries):
        if time.monotonic() > bounds.deadline:
            raise OverLimit(
                f"the request ran over the limit of {bounds.seconds:g} s (--max-seconds): "
                "send smaller batches",
                bounds.seconds,
                status=503,
            )
        end, work = start, 0
        while end < len(queries) and (end == start or work < CHUNK_WORK):
            work += query_words(queries[end]) * k
            end += 1
        chunk = [(None, query) for query in queries[start:end]]
        if nested:
            # no Skipped comes out: skip_bad is off, so a refused query raises
            nested_items = cast(
                Iterator[tuple[str | None, NestedSegmentation]],
                nest_records(segmenter, chunk, refused=partial(_refused, start)),
            )
            trees = [tree for _, tree in nested_items]
            records = [_json(nested_record(None, tree)) for tree in trees]
            text = "".join(format_nested(None, tree, "pipe") for tree in trees)
        else:
            # no Skipped comes out: none went in
            results = cast(
                list[Result],
                list(segment_records(segmenter, chunk, k=k, scores=fmt == "json", batch=BATCH)),
            )
            records = [_json(result_record(result)) for result in results]
            text = "" if render is None else "".join(format_result(r, fmt, render) for r in results)
        yield records, text
        start = end


def query_words(query: str) -> int:
    """A query's words as the bounds on work count them (one for a query that has none)."""
    try:
        return len(normalize(query))
    except QueryError:
        return 1


def _json(record: dict[str, Any]) -> bytes:
    record.pop("id")
    return json.dumps(record, ensure_ascii=False, allow_nan=False).encode()


def _refused(offset: int, place: int, exc: QueryError) -> TooLongToNest:
    """The error of the query at ``place`` (from 1) of a chunk starting at ``offset``."""
    return TooLongToNest(offset + place - 1, str(exc))
