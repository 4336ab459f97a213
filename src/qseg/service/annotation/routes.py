"""The annotation pages and their JSON API, served by ``qseg annotate`` on top of the service.

The pages are static HTML and a little JavaScript in ``static/`` (served by qseg itself at
``/static/annotate/``: nothing comes from a CDN; the style sheet is the foundation's). They
call ``/api/...``, whose routes only parse a request and call
:class:`qseg.annotation.project.Project` and :func:`qseg.annotation.summary.summarize`, on the
project :func:`open_project` opens for each request (every answer is committed before the
request returns).
"""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from qseg.annotation.labelstudio import tasks_json, to_tasks
from qseg.annotation.ordering import (
    read_ordering,
    retrain_due,
    start_retrain,
    suggesting_model,
)
from qseg.annotation.project import Missing, Project, ProjectError
from qseg.annotation.summary import summarize
from qseg.errors import QsegError
from qseg.query import normalize
from qseg.service.foundation.access import require_client
from qseg.service.foundation.bodies import JsonRoute
from qseg.service.foundation.dependencies import GUARDS
from qseg.service.foundation.errors import GUARDED, Refusal, declared
from qseg.service.foundation.pages import page, static_file
from qseg.service.segmenting.served import ServedMethods, get_served

STATIC = Path(__file__).parent / "static"
FILES = StaticFiles(directory=STATIC)
PAGES = {"/": "index.html", "/flat": "flat.html", "/nested": "nested.html"}
PAGES |= {"/agreement": "agreement.html"}
Mode = Literal["flat", "nested"]
Name = Annotated[
    str, Field(min_length=1, max_length=100, pattern=r"^[^\t\n\r\x00]*\S[^\t\n\r\x00]*$")
]
"""An annotator's name: what a line of the exported table can hold (no tab, line break, NUL)."""


def open_project(request: Request) -> Iterator[Project]:
    """The annotation project, opened for one request and closed after it: SQLite
    connections are neither shared between the threads that answer requests nor carried
    across the fork of the workers."""
    try:
        with Project.open(request.app.state.settings.project) as project:
            yield project
    except ProjectError as exc:  # damaged, locked or taken away since the start
        raise Refusal(503, f"the project cannot be used: {exc}") from None


OpenProject = Annotated[Project, Depends(open_project)]

pages = APIRouter(dependencies=GUARDS, responses=declared(*GUARDED), include_in_schema=False)
router = APIRouter(
    prefix="/api",
    route_class=JsonRoute,
    dependencies=GUARDS,
    responses=declared(*GUARDED, 400, 404, 409, 422),
    tags=["annotation"],
)


class NewAnnotator(BaseModel):
    name: Name


class NewAnswer(BaseModel):
    annotator: Name
    mode: Mode
    qid: Annotated[str, Field(min_length=1, max_length=200)]
    value: Annotated[str, Field(min_length=1, max_length=20_000)]
    suggested: bool = False
    """Whether the page showed the model's suggestion (``qseg annotate --suggest``)."""


def _page(name: str) -> Any:
    def shown() -> FileResponse:
        return page(name, STATIC)

    return shown


for _route, _name in PAGES.items():
    pages.add_api_route(_route, _page(_name), methods=["GET"], response_class=FileResponse)

files = APIRouter(
    dependencies=[Depends(require_client)], responses=declared(403, 404), include_in_schema=False
)
"""The pages' scripts, public code: what every client may fetch (the login page shows)."""


@files.get("/static/annotate/{path:path}")
async def annotation_file(path: str, request: Request) -> Response:
    return await static_file(FILES, "/static/annotate/", path, request.scope)


@router.get("/project", summary="The project: queries, annotators, settings")
def describe(project: OpenProject) -> dict[str, Any]:
    return {
        "name": Path(project.path).name,
        "queries": project.query_count(),
        "annotators": project.annotators(),
        "settings": project.settings(),
        "modes": ["flat", "nested"],
        "order": _order_of(project),
    }


def _order_of(project: Project) -> dict[str, Any]:
    """How the queries are served: the order, and by uncertainty the model and how many
    answered queries it learned from (0: as given)."""
    ordering = read_ordering(project.path) if project.settings()["order"] == "uncertain" else None
    if ordering is None:
        return {"kind": "added"}
    return {"kind": "uncertain", "model": ordering.model, "learned_from": ordering.learned_from}


def _served_order(
    project: Project, name: str, mode: str
) -> tuple[list[tuple[str, str]], list[bool]]:
    """The queries ``(id, text)`` in the order the pages serve them, and whether the annotator
    has answered each: by uncertainty (queries added since the order was made come last, as
    added), else as added."""
    queries = project.queries()
    answered = project.answered(name, mode)
    ordering = read_ordering(project.path) if project.settings()["order"] == "uncertain" else None
    if ordering is None:
        return queries, answered
    position = {qid: i for i, (qid, _) in enumerate(queries)}
    ranked = [position[qid] for qid in ordering.qids if qid in position]
    seen = set(ranked)
    ranked += [i for i in range(len(queries)) if i not in seen]
    return [queries[i] for i in ranked], [answered[i] for i in ranked]


@router.post("/annotators", summary="Add an annotator (known ones are kept)")
def add_annotator(body: Annotated[NewAnnotator, Body()], project: OpenProject) -> dict[str, str]:
    project.add_annotator(body.name)
    return {"name": body.name.strip()}


@router.get("/item", summary="One query to annotate, with the annotator's answer")
def item(
    annotator: Annotated[str, Query(min_length=1, max_length=100)],
    mode: Mode,
    project: OpenProject,
    served: Annotated[ServedMethods, Depends(get_served)],
    index: Annotated[int | None, Query(ge=0)] = None,
) -> dict[str, Any]:
    """The query at ``index`` (default: the annotator's first unanswered one, else the
    last), the annotator's latest answer to it, progress, and the pre-filled segmentation
    where the project has one."""
    name = annotator.strip()
    try:
        project.check_annotator(name)
    except Missing as exc:
        raise Refusal(404, f"{exc}: add it on the start page") from None
    queries, answered = _served_order(project, name, mode)
    total = len(answered)
    if total == 0:
        raise Refusal(404, "the project has no queries: add some with qseg annotate --queries")
    if index is None:
        index = next((i for i, done in enumerate(answered) if not done), total - 1)
    if index >= total:
        raise Refusal(404, f"no query at position {index}: the project has {total}")
    qid, text = queries[index]
    settings = project.settings()
    prefill = settings["prefill"]
    filled = suggestion = None
    if prefill and mode == "flat":
        filled = served.pick(prefill).segmenter.segment(text)
    if settings["suggest"] == "1" and mode == "flat":
        suggestion = suggesting_model(project).segment(text).to_pipe()
    return {
        "index": index,
        "total": total,
        "done": sum(answered),
        "qid": qid,
        "text": text,
        "words": list(normalize(text)),
        "answer": project.answer(name, qid, mode),
        "prefill": filled.to_pipe() if filled is not None else None,
        "suggestion": suggestion,
        "order": _order_of(project),
    }


@router.post("/answers", summary="Save an answer (every answer is kept with its time)")
def save(body: Annotated[NewAnswer, Body()], project: OpenProject) -> dict[str, Any]:
    """409 when the answer is no segmentation of the query (the message says why): the
    request is well formed, its content does not fit the project's query."""
    name = body.annotator.strip()
    try:
        project.save(name, body.qid, body.mode, body.value, suggested=body.suggested)
    except Missing as exc:
        raise Refusal(404, str(exc)) from None
    except QsegError as exc:
        raise Refusal(409, str(exc)) from None
    answered = project.answered(name, body.mode)
    if retrain_due(project):  # in a process of its own: this save does not wait for it
        start_retrain(project.path)
    return {"saved": True, "done": sum(answered), "total": len(answered)}


@router.get("/agreement", summary="Agreement and biases so far (Hagen et al. 2011)")
def agreement(
    request: Request,
    mode: Mode,
    project: OpenProject,
    replicates: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> dict[str, Any]:
    """The figures ``qseg agree`` gives on the export of ``mode`` (same bootstrap
    replicates and seed), recomputed only when an answer has been saved since."""
    return request.app.state.summaries.get(project, mode, replicates)


@router.get(
    "/export",
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
def export(
    mode: Mode,
    project: OpenProject,
    format: Literal["table", "label-studio"] = "table",
    raw: bool = False,
) -> Response:
    """``item<TAB>annotator<TAB>segmentation`` lines (what ``qseg agree``, ``qseg
    evaluate`` and ``qseg train --gold`` read; a cell a spreadsheet would run as a formula
    begins with ``'`` unless ``raw``) or Label Studio's JSON tasks; ``X-Qseg-Answers`` says
    how many answers it holds. Nothing from a damaged project (503)."""
    rows = project.exported(mode)  # the project checked whole, once
    if format == "table":
        body = project.export_table(mode, raw=raw, rows=rows)
        kind, suffix = "text/tab-separated-values", "tsv"
    else:
        tasks = to_tasks(project.queries(), project.records(mode, rows))
        body, kind, suffix = tasks_json(tasks), "application/json", "json"
    name = f"{Path(project.path).stem}-{mode}.{suffix}"
    plain = "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
    disposition = f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"
    headers = {"Content-Disposition": disposition, "X-Qseg-Answers": str(len(rows))}
    return Response(body, media_type=f"{kind}; charset=utf-8", headers=headers)


class Summaries:
    """The latest agreement summary of each mode, recomputed once per saved answer however
    many pages ask (a lock per mode: a second page waits for the first's). One summary a mode
    is kept, whatever ``replicates`` was asked: a client asking for many values of it costs
    time, never memory."""

    def __init__(self) -> None:
        self._latest: dict[str, dict[str, Any]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def __len__(self) -> int:
        """How many summaries are kept (one a mode at most)."""
        return len(self._latest)

    def get(self, project: Project, mode: str, replicates: int) -> dict[str, Any]:
        with self._guard:
            lock = self._locks.setdefault(mode, threading.Lock())
        with lock:
            version = project.last_change()
            latest = self._latest.get(mode)
            if latest is None or (latest["version"], latest["replicates"]) != (version, replicates):
                latest = summarize(project, mode, replicates) | {"version": version}
                self._latest[mode] = latest
            return latest
