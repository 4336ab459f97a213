"""The annotation pages and their JSON API, served by ``qseg annotate`` on top of the service.

The pages are static HTML, CSS and a little JavaScript in ``static/annotate`` (served by qseg
itself: nothing comes from a CDN). They call ``/api/...``, whose routes only parse a request
and call :class:`qseg.annotation.project.Project` and :func:`qseg.annotation.summary.summarize`.
The project file is opened per request: SQLite connections are neither shared between the
threads that answer requests nor carried across the fork of the workers, and every answer is
committed before the request returns.
"""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Body, Query
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, Field

from qseg.annotation.labelstudio import tasks_json, to_tasks
from qseg.annotation.project import Missing, Project
from qseg.annotation.summary import summarize
from qseg.errors import QsegError
from qseg.query import normalize
from qseg.service.pages import page
from qseg.service.refusal import Refusal
from qseg.service.schemas import ErrorBody
from qseg.service.served import Served

PAGES = {"/": "index.html", "/flat": "flat.html", "/nested": "nested.html"}
PAGES |= {"/agreement": "agreement.html"}
Mode = Literal["flat", "nested"]
Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\t\n\r]*\S[^\t\n\r]*$")]


_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in {
        400: "malformed JSON or a body that is not UTF-8",
        401: "no token or a wrong one (when the service has one)",
        403: "a request from a page of another site, or to another name than the loopback's",
        404: "an annotator, query or position the project does not have",
        405: "another HTTP verb than the route's",
        409: "an answer that is no segmentation of its query (the message says why)",
        413: "a body over the size limit",
        422: "a request outside the schema",
        503: "not ready yet, or shutting down",
    }.items()
}


class NewAnnotator(BaseModel):
    name: Name


class NewAnswer(BaseModel):
    annotator: Name
    mode: Mode
    qid: Annotated[str, Field(min_length=1, max_length=200)]
    value: Annotated[str, Field(min_length=1, max_length=20_000)]


def annotation_router(project_path: str, served: dict[str, Served]) -> APIRouter:
    """The pages and ``/api`` routes of the project in ``project_path``; the flat page is
    pre-filled by the served segmenter the project's ``prefill`` setting names."""
    router = APIRouter(responses=_ERRORS)
    summaries = _Summaries()

    @contextmanager
    def project() -> Iterator[Project]:
        with Project.open(project_path) as opened:
            yield opened

    for route, name in PAGES.items():
        router.add_api_route(
            route,
            _page(name),
            methods=["GET"],
            include_in_schema=False,
            response_class=FileResponse,
        )

    @router.get("/api/project", summary="The project: queries, annotators, settings")
    def describe() -> dict[str, Any]:
        with project() as p:
            return {
                "name": Path(project_path).name,
                "queries": p.query_count(),
                "annotators": p.annotators(),
                "settings": p.settings(),
                "modes": ["flat", "nested"],
            }

    @router.post("/api/annotators", summary="Add an annotator (known ones are kept)")
    def add_annotator(body: Annotated[NewAnnotator, Body()]) -> dict[str, str]:
        with project() as p:
            p.add_annotator(body.name)
        return {"name": body.name.strip()}

    @router.get("/api/item", summary="One query to annotate, with the annotator's answer")
    def item(
        annotator: Annotated[str, Query(min_length=1, max_length=100)],
        mode: Mode,
        index: Annotated[int | None, Query(ge=0)] = None,
    ) -> dict[str, Any]:
        """The query at ``index`` (default: the annotator's first unanswered one, else the
        last), the annotator's latest answer to it, progress, and the pre-filled
        segmentation where the project has one."""
        with project() as p:
            try:
                p.check_annotator(annotator.strip())
            except Missing as exc:
                raise Refusal(404, f"{exc}: add it on the start page") from None
            answered = p.answered(annotator.strip(), mode)
            total = len(answered)
            if total == 0:
                raise Refusal(
                    404, "the project has no queries: add some with qseg annotate --queries"
                )
            if index is None:
                index = next((i for i, done in enumerate(answered) if not done), total - 1)
            if index >= total:
                raise Refusal(404, f"no query at position {index}: the project has {total}")
            found = p.query_at(index)
            assert found is not None
            qid, text = found
            prefill = p.settings()["prefill"]
            answer = p.answer(annotator.strip(), qid, mode)
        filled = _segmenter(served, prefill).segment(text) if prefill and mode == "flat" else None
        return {
            "index": index,
            "total": total,
            "done": sum(answered),
            "qid": qid,
            "text": text,
            "words": list(normalize(text)),
            "answer": answer,
            "prefill": filled.to_pipe() if filled is not None else None,
        }

    @router.post("/api/answers", summary="Save an answer (every answer is kept with its time)")
    def save(body: Annotated[NewAnswer, Body()]) -> dict[str, Any]:
        """409 when the answer is no segmentation of the query (the message says why): the
        request is well formed, its content does not fit the project's query."""
        name = body.annotator.strip()
        with project() as p:
            try:
                p.save(name, body.qid, body.mode, body.value)
            except Missing as exc:
                raise Refusal(404, str(exc)) from None
            except QsegError as exc:
                raise Refusal(409, str(exc)) from None
            answered = p.answered(name, body.mode)
        return {"saved": True, "done": sum(answered), "total": len(answered)}

    @router.get("/api/agreement", summary="Agreement and biases so far (paper 001)")
    def agreement(
        mode: Mode, replicates: Annotated[int, Query(ge=1, le=10_000)] = 1000
    ) -> dict[str, Any]:
        """The figures ``qseg agree`` gives on the export of ``mode`` (same bootstrap
        replicates and seed), recomputed only when an answer has been saved since."""
        with project() as p:
            return summaries.get(p, mode, replicates)

    @router.get(
        "/api/export",
        summary="The latest answers as a file",
        response_class=Response,
        responses={
            200: {
                "content": {
                    "text/tab-separated-values": {"schema": {"type": "string"}},
                    "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
                }
            }
        },
    )
    def export(mode: Mode, format: Literal["table", "label-studio"] = "table") -> Response:
        """``item<TAB>annotator<TAB>segmentation`` lines (what ``qseg agree``, ``qseg
        evaluate`` and ``qseg train --gold`` read) or Label Studio's JSON tasks."""
        stem = Path(project_path).stem
        with project() as p:
            if format == "table":
                body, kind, suffix = p.export_table(mode), "text/tab-separated-values", "tsv"
            else:
                tasks = to_tasks(p.queries(), p.records(mode))
                body, kind, suffix = tasks_json(tasks), "application/json", "json"
        name = f"{stem}-{mode}.{suffix}"
        plain = "".join(
            c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name
        )
        disposition = f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"
        return Response(
            body,
            media_type=f"{kind}; charset=utf-8",
            headers={"Content-Disposition": disposition},
        )

    return router


def _page(name: str) -> Any:
    def shown() -> FileResponse:
        return page(f"annotate/{name}")

    return shown


class _Summaries:
    """The latest agreement summary of each (mode, replicates), recomputed once per saved
    answer however many pages ask (a lock per key: a second page waits for the first's)."""

    def __init__(self) -> None:
        self._latest: dict[tuple[str, int], dict[str, Any]] = {}
        self._locks: dict[tuple[str, int], threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, project: Project, mode: str, replicates: int) -> dict[str, Any]:
        key = (mode, replicates)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            version = project.last_change()
            latest = self._latest.get(key)
            if latest is None or latest["version"] != version:
                latest = summarize(project, mode, replicates) | {"version": version}
                self._latest[key] = latest
            return latest


def _segmenter(served: dict[str, Served], spec: str) -> Any:
    if spec not in served:
        raise QsegError(f"the pre-filling method {spec!r} is not served")
    return served[spec].segmenter
