"""The FastAPI application of ``qseg serve``.

The routes only parse input and call the library: ``POST /segment`` runs the functions behind
``qseg segment`` (:mod:`.segmenting`) with a segmenter opened at start-up (:mod:`.served`).
What applies to every request is the gate (:mod:`.gate`); a browser signs in at ``/login``
(:mod:`.login`); ``qseg annotate`` adds the annotation pages (:mod:`.annotating`).
"""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types, and the
# request model is made per application
import json
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Body, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException

from qseg._version import VERSION
from qseg.errors import QsegError
from qseg.integrations.syntax import SYNTAXES, Syntax
from qseg.service import metrics
from qseg.service.config import ServiceConfig
from qseg.service.gate import OPEN, STATIC_PREFIX, Gate, ServiceState
from qseg.service.login import add_login
from qseg.service.pages import STATIC
from qseg.service.refusal import Refusal
from qseg.service.schemas import ErrorBody, Methods, SegmentResponse, Status, request_model
from qseg.service.segmenting import TooLongToNest, answer
from qseg.service.served import Served, open_served

ROUTES = (
    "/segment",
    "/methods",
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/docs",
    "/login",
)
LIMIT_FLAGS = {
    "batch": "--max-batch",
    "words": "--max-words",
    "chars": "--max-chars",
    "body": "--max-body",
    "k": "--max-k",
}


def create_app(
    config: ServiceConfig | None = None,
    served: dict[str, Served] | None = None,
    project: str | None = None,
) -> FastAPI:
    """The application serving ``served`` (default: opened from ``config.methods``; a
    configuration from the environment where none is given: :meth:`ServiceConfig.from_env`),
    for ``uvicorn --factory qseg.service.app:create_app`` as for ``qseg serve``; with the
    annotation pages of the ``project`` file if one is given (``qseg annotate``)."""
    config = config or ServiceConfig.from_env()
    served = served if served is not None else open_served(config.methods)
    names = list(served)
    limits = config.limits
    state = ServiceState()
    pages = None
    if project is not None:
        from qseg.service.annotating import annotation_router

        pages = annotation_router(project, served)
    # the gate's names of routes (metrics, 404s): the pages' are read off their router
    page_routes = [route.path for route in pages.routes] if pages is not None else []
    routes = ROUTES + tuple(dict.fromkeys(page_routes))

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        state.ready = True
        yield
        state.ready = False

    app = FastAPIOffline(  # /docs with Swagger UI served by the service itself, not a CDN
        title="qseg",
        version=VERSION,
        summary="Web search query segmentation: new york yankees|tickets",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
        static_url=STATIC_PREFIX + "docs",
        favicon_url=STATIC_PREFIX + "qseg/favicon.svg",
    )
    app.state.service = state
    app.state.routes = routes
    app.add_middleware(
        Gate,
        state=state,
        token=config.token,
        max_body=limits.body,
        routes=frozenset(routes),
        pages=project is not None,
    )
    app.mount(STATIC_PREFIX + "qseg", StaticFiles(directory=STATIC), name="qseg-static")
    add_login(app, config.token)
    if pages is not None:
        app.include_router(pages)
    errors = _declared_errors(config.token is not None)
    segment_request = request_model(names, limits.batch, limits.words, limits.chars, limits.k)

    @app.post(
        "/segment",
        response_model=SegmentResponse,
        responses=errors("/segment"),
        summary="Segment one query or a batch",
    )
    def segment(request: Annotated[segment_request, Body()]) -> Response:  # type: ignore[valid-type]
        body: Any = request
        target = _pick(served, body.method)
        # a tree per query: k and the engine options are left aside, the text is brackets (or
        # JSON), as the schema cannot tie them to nested
        fmt = body.format if not body.nested or body.format == "json" else "pipe"
        syntax = None if body.nested else _syntax(body)
        start = time.perf_counter()
        try:
            results, text = answer(
                target.segmenter,
                body.queries,
                k=1 if body.nested else body.k,
                nested=body.nested,
                fmt=fmt,
                syntax=syntax,
            )
        except TooLongToNest as exc:
            field = f"queries.{exc.index}"
            raise Refusal(422, f"{field}: {exc}", field=field, limit=exc.limit) from None
        metrics.observe_segmenting(target.name, len(body.queries), time.perf_counter() - start)
        payload = {
            "method": target.name,
            "spec": target.segmenter.spec,
            "fingerprint": target.fingerprint,
            "results": results,
            "text": text,
        }
        return Response(json.dumps(payload, allow_nan=False), media_type="application/json")

    @app.get("/methods", response_model=Methods, responses=errors("/methods"))
    def methods() -> dict[str, Any]:
        """What is served, the first being the default, with each model's metadata."""
        limits_now = {name: getattr(limits, name) for name in LIMIT_FLAGS}
        return {"methods": [s.describe() for s in served.values()], "limits": limits_now}

    @app.get("/healthz", response_model=Status, responses=errors("/healthz"))
    def healthz() -> dict[str, str]:
        """The process is up (answered while loading and while shutting down, without token)."""
        return {"status": "ok"}

    @app.get("/readyz", response_model=Status, responses=errors("/readyz"))
    def readyz() -> Any:
        """Every served segmenter is loaded and the worker takes requests (503 otherwise)."""
        if not state.ready or state.draining:
            raise Refusal(503, "not ready: " + ("shutting down" if state.draining else "starting"))
        return {"status": "ready"}

    @app.get(
        "/metrics",
        response_class=Response,
        responses={200: {"content": {metrics.CONTENT_TYPE: {"schema": {"type": "string"}}}}}
        | errors("/metrics"),
    )
    def metrics_route() -> Response:
        """Prometheus metrics, summed over the workers."""
        return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)

    app.add_exception_handler(Refusal, _refusal)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(QsegError, _qseg_error)
    app.add_exception_handler(Exception, _unexpected)
    return app


def _syntax(body: Any) -> Syntax | None:
    """The engine syntax a request asks for; an option the format does not take is left
    aside (the schema cannot tie options to formats, so none is refused for it)."""
    if body.format not in SYNTAXES:
        return None
    terrier = body.format == "terrier"
    return Syntax(
        body.format,
        field=None if terrier else body.field,
        occur=body.occur or "must",
        slop=0 if terrier else body.slop or 0,
        boost=None if terrier else body.boost,
        quote=None if body.quote is None else frozenset(body.quote),
        plain=body.plain,
    )


def _pick(served: dict[str, Served], name: str | None) -> Served:
    if name is None:
        return next(iter(served.values()))
    if name not in served:
        raise Refusal(
            404,
            f"method {name!r} is not served; served: {', '.join(served)}",
            field="method",
            served=list(served),
        )
    return served[name]


def _declared_errors(token: bool) -> Callable[[str], dict[int | str, dict[str, Any]]]:
    """The error statuses each route can answer, for the OpenAPI schema."""
    described = {
        400: "malformed JSON or a body that is not UTF-8",
        401: "no token or a wrong one (Authorization: Bearer TOKEN)",
        404: "a method that is not served",
        405: "another HTTP verb than the route's (the Allow header lists its verbs)",
        413: "a body over the size limit (--max-body)",
        422: "a request outside the schema or the limits; `field` names it, `limit` the limit",
        503: "not ready yet, or shutting down",
    }

    def errors(route: str) -> dict[int | str, dict[str, Any]]:
        statuses = [405, 413]
        if route != OPEN:
            statuses += [503] + ([401] if token else [])
        if route == "/segment":
            statuses += [400, 404, 422]
        return {
            status: {"model": ErrorBody, "description": described[status]}
            for status in sorted(statuses)
        }

    return errors


async def _refusal(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refusal)
    return exc.response()


async def _invalid(request: Request, exc: Exception) -> Response:
    """Validation errors as one line each, naming the field (``queries.3``) and the limit."""
    assert isinstance(exc, RequestValidationError)
    found = []
    for error in exc.errors():
        where = [str(part) for part in error.get("loc", ()) if part != "body"]
        field = ".".join(where) or "body"
        if error.get("type") == "json_invalid":
            return Refusal(400, f"the body is not valid JSON: {error.get('msg')}").response()
        found.append((field, str(error.get("msg", "invalid")), error.get("ctx") or {}))
    field, message, context = found[0]
    limit = next((context[key] for key in ("limit", "le", "max_length") if key in context), None)
    if (flag := _limit_flag(field, message)) is not None:
        message += f" ({flag})"
    errors = [{"field": f, "message": m} for f, m, _ in found]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return Refusal(
        422,
        f"{field}: {message}{more}",
        field=field,
        limit=limit if isinstance(limit, int) else None,
        errors=errors,
    ).response()


def _limit_flag(field: str, message: str) -> str | None:
    """The option that sets the limit an error is about, if it is about one."""
    if "--max-" in message or ("at most" not in message and "less than" not in message):
        return None
    if field == "queries":
        return LIMIT_FLAGS["batch"]
    if field.startswith("queries."):
        return LIMIT_FLAGS["chars"]
    return LIMIT_FLAGS.get(field)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        routes = ", ".join(request.app.state.routes)
        message = f"no route {request.method} {request.url.path}; routes: {routes}"
    elif exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        message = f"{request.method} is not allowed on {request.url.path}; allowed: {allowed}"
    elif exc.status_code == 400:
        message = f"the body cannot be read: {exc.detail} (it must be JSON in UTF-8)"
    else:
        message = str(exc.detail)
    return Refusal(exc.status_code, message, headers=exc.headers).response()


async def _qseg_error(request: Request, exc: Exception) -> Response:
    return Refusal(422, str(exc)).response()


async def _unexpected(request: Request, exc: Exception) -> Response:
    """A bug: logged with its traceback on stderr, answered without it."""
    traceback.print_exception(exc, file=sys.stderr)
    return JSONResponse({"error": "internal error (logged by the server)"}, 500)
