"""The FastAPI application of ``qseg serve``.

The routes only parse input and call the library: ``POST /segment`` runs the functions behind
``qseg segment`` (:mod:`.segmenting`) with a segmenter opened at start-up (:mod:`.served`).
What applies to every request -- the token, the refusal while shutting down, the body-size
limit, the metrics -- is one ASGI middleware (:class:`Gate`), so it holds for every route,
the schema and an unknown path alike.
"""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types, and the
# request model is made per application
import hashlib
import json
import secrets
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Annotated, Any
from urllib.parse import quote, urlsplit

from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from qseg._version import VERSION
from qseg.errors import QsegError
from qseg.integrations.syntax import SYNTAXES, Syntax
from qseg.service import metrics
from qseg.service.config import ServiceConfig
from qseg.service.pages import STATIC, page
from qseg.service.refusal import Refusal
from qseg.service.schemas import ErrorBody, Methods, SegmentResponse, Status, request_model
from qseg.service.segmenting import TooLongToNest, answer
from qseg.service.served import Served, open_served

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

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
ANNOTATION_ROUTES = (
    "/",
    "/flat",
    "/nested",
    "/agreement",
    "/api/project",
    "/api/annotators",
    "/api/item",
    "/api/answers",
    "/api/agreement",
    "/api/export",
)
OPEN = "/healthz"
"""The one route answered without the token and while shutting down."""
UNGUARDED = ("/healthz", "/login")
STATIC_PREFIX = "/static/"
"""Scripts and style sheets: public code, served without the token (the pages are not)."""
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def cookie_name(token: str) -> str:
    """A browser cannot send the Authorization header on a page load: the login page sets the
    token as this cookie (HttpOnly, SameSite=Strict), which the gate takes in its place. Its
    name is the token's own (cookies are shared by every port of a host), so that two
    services with two tokens do not sign each other's browsers out."""
    return "qseg_token_" + hashlib.sha256(token.encode()).hexdigest()[:12]


LIMIT_FLAGS = {
    "batch": "--max-batch",
    "words": "--max-words",
    "chars": "--max-chars",
    "body": "--max-body",
    "k": "--max-k",
}


@dataclass
class ServiceState:
    """Whether the worker is ready (its segmenters loaded, the application started) and
    whether it is draining (SIGTERM received: it answers 503 to new requests)."""

    ready: bool = False
    draining: bool = False


class Login(BaseModel):
    token: str


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
    routes = ROUTES + (ANNOTATION_ROUTES if project else ())

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
    _add_login(app, config.token)
    if project is not None:
        from qseg.service.annotating import annotation_router

        app.include_router(annotation_router(project, served))
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


def _add_login(app: FastAPI, token: str | None) -> None:
    """``/login``: the page asking for the token, and the routes that check it and set it as
    the cookie the gate takes (``GET /login?token=...`` is the link ``qseg annotate``
    prints)."""

    def accepted(given: str, goto: str) -> Response:
        if token is None or not secrets.compare_digest(given.encode(), token.encode()):
            raise Refusal(401, "wrong token", headers={"WWW-Authenticate": "Bearer"})
        # a path of this service only: "//host" and "/\\host" would leave it
        here = goto.startswith("/") and not goto.startswith(("//", "/\\"))
        answer = RedirectResponse(goto if here else "/", 303)
        answer.set_cookie(cookie_name(token), token, path="/", httponly=True, samesite="strict")
        return answer

    @app.get("/login", include_in_schema=False)
    def login_page(
        token: Annotated[str | None, Query()] = None, next: Annotated[str, Query()] = "/"
    ) -> Response:
        if token is None:
            return page("login.html")
        return accepted(token, next)

    @app.post("/login", include_in_schema=False)
    def login(body: Annotated[Login, Body()], next: Annotated[str, Query()] = "/") -> Response:
        return accepted(body.token, next)


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


class Gate:
    """What every request passes before its route: the token (every route but ``/healthz``),
    the 503 while draining, the body-size limit (a 413 before the body is parsed), a JSON body
    whatever its Content-Type (``curl -d`` sends a form type), and the metrics."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        state: ServiceState,
        token: str | None,
        max_body: int,
        routes: frozenset[str] = frozenset(ROUTES),
        pages: bool = False,
    ) -> None:
        self.app = app
        self.state = state
        self.token = token.encode() if token else None
        self.cookie = cookie_name(token) if token else ""
        self.max_body = max_body
        self.routes = routes
        self.pages = pages

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        path = scope["path"]
        route = (
            path if path in self.routes else "static" if path.startswith(STATIC_PREFIX) else "other"
        )
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            headers = dict(scope["headers"])
            refusal = self._check(scope, headers)
            if refusal is None:
                body, refusal = await self._read(scope, headers, receive)
            if refusal is not None:
                await self._answer(refusal, scope, headers)(scope, receive, sending)
                return
            await self.app(scope, _replay(body, receive), sending)
        finally:
            metrics.observe_request(route, status, time.perf_counter() - start)

    def _check(self, scope: Scope, headers: dict[bytes, bytes]) -> Refusal | None:
        path = scope["path"]
        if path == OPEN:
            return None
        unguarded = path in UNGUARDED or path.startswith(STATIC_PREFIX)
        if self.pages and (refusal := self._same_site(scope, headers)) is not None:
            return refusal
        if self.token is not None and not unguarded and not self._has_token(headers):
            return Refusal(
                401,
                "this service needs its token: Authorization: Bearer TOKEN (in a browser: "
                "open /login)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if self.state.draining:
            return Refusal(503, "shutting down: send the request to another worker")
        return None

    def _same_site(self, scope: Scope, headers: dict[bytes, bytes]) -> Refusal | None:
        """What a browser's pages need beyond the token. Without one, the service is on the
        loopback, and a request addressed to another name is a page of another site that had
        its name resolved to 127.0.0.1 (DNS rebinding). A POST whose Origin is another site
        is a form of that site sending the annotator's browser (cross-site request forgery):
        a browser sends Origin with every POST, curl and scripts send none."""
        host = headers.get(b"host", b"").decode("latin-1")
        if self.token is None and urlsplit(f"//{host}").hostname not in LOOPBACK_NAMES:
            return Refusal(
                403,
                f"this service answers requests to 127.0.0.1 or localhost, not to {host!r} "
                "(another address needs a token)",
            )
        origin = headers.get(b"origin")
        elsewhere = origin is not None and urlsplit(origin.decode("latin-1")).netloc != host
        if scope["method"] == "POST" and elsewhere:
            return Refusal(403, "a request sent by a page of another site is refused")
        return None

    def _answer(self, refusal: Refusal, scope: Scope, headers: dict[bytes, bytes]) -> Response:
        """The refusal; a browser asking for a page without the token is sent to sign in."""
        page = scope["method"] == "GET" and b"text/html" in headers.get(b"accept", b"")
        if refusal.status == 401 and page:
            query = scope.get("query_string", b"").decode("latin-1")
            asked = scope["path"] + (f"?{query}" if query else "")
            return RedirectResponse("/login?next=" + quote(asked, safe="/"), 303)
        return refusal.response()

    def _has_token(self, headers: dict[bytes, bytes]) -> bool:
        """The token in the Authorization header, or in the login cookie."""
        assert self.token is not None
        scheme, _, value = headers.get(b"authorization", b"").partition(b" ")
        if scheme.lower() == b"bearer" and secrets.compare_digest(value, self.token):
            return True
        try:
            cookies = SimpleCookie(headers.get(b"cookie", b"").decode("latin-1"))
        except CookieError:
            return False
        found = cookies.get(self.cookie)
        given = found.value.encode("latin-1") if found is not None else b""
        return secrets.compare_digest(given, self.token)

    async def _read(
        self, scope: Scope, headers: dict[bytes, bytes], receive: Receive
    ) -> tuple[bytes, Refusal | None]:
        """The whole body, or a 413 as soon as it is over the limit (by its Content-Length,
        else by what has come)."""
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            return b"", self._too_big()
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body:
                return b"", self._too_big()
            if not message.get("more_body"):
                break
        if scope["method"] == "POST":
            scope["headers"] = [(k, v) for k, v in scope["headers"] if k != b"content-type"] + [
                (b"content-type", b"application/json")
            ]
        return b"".join(chunks), None

    def _too_big(self) -> Refusal:
        return Refusal(
            413,
            f"the body is over the limit of {self.max_body} bytes (--max-body)",
            field="body",
            limit=self.max_body,
        )


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body read by the gate, given again to the application; then the real channel
    (a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
