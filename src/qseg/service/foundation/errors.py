"""Every refusal of the service: one table of the error statuses (what the OpenAPI document
declares), :class:`Refusal` (raised by routes and dependencies, answered by the middlewares
directly), and the exception handlers that turn FastAPI's and qseg's errors into one-line
error bodies."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException

from qseg.errors import QsegError
from qseg.service.foundation.credentials import may_be_told
from qseg.service.foundation.schemas import ErrorBody

STATUSES = {
    400: "malformed JSON or a body that is not UTF-8",
    401: "no token or a wrong one, when the service has a token (Authorization: Bearer TOKEN)",
    403: "without a token, a client other than the loopback; a page of another site",
    404: "a method that is not served; an annotator, query or position the project lacks",
    405: "another HTTP verb than the route's (the Allow header lists its verbs)",
    408: "a request whose headers or body did not arrive in time",
    409: "an answer that is no segmentation of its query (the message says why)",
    413: "a body over the size limit (--max-body)",
    422: "a request outside the schema or the limits; `field` names it, `limit` the limit",
    429: "too many wrong tokens from one client (Retry-After says when to try again)",
    503: "not ready yet, shutting down, or a request that ran over --max-seconds",
}
"""What each error status means, for every route that can answer it."""
GUARDED = (401, 403, 405, 413, 503)
"""What any route behind the access rules can answer."""


def declared(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` of these statuses, each with the error body."""
    return {
        status: {"model": ErrorBody, "description": STATUSES[status]}
        for status in sorted(set(statuses))
    }


class Refusal(Exception):
    """A request answered with a 4xx or 503 and an :class:`ErrorBody`."""

    def __init__(
        self, status: int, error: str, headers: Mapping[str, str] | None = None, **body: Any
    ) -> None:
        super().__init__(error)
        assert status in STATUSES, status
        self.status = status
        self.body = {"error": error} | {k: v for k, v in body.items() if v is not None}
        self.headers = headers

    def response(self) -> JSONResponse:
        return JSONResponse(self.body, self.status, headers=self.headers)


def install_handlers(app: FastAPI) -> None:
    """Answer every error of a request with an error body (a bug too, without its
    traceback, which goes to the log)."""
    app.add_exception_handler(Refusal, _refusal)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(QsegError, _qseg_error)
    app.add_exception_handler(Exception, _unexpected)


async def _refusal(request: Request, exc: Exception) -> Response:
    """The refusal; a browser asking for a page without the token is sent to sign in."""
    assert isinstance(exc, Refusal)
    page = request.method == "GET" and "text/html" in request.headers.get("accept", "")
    if exc.status == 401 and page:
        query = request.scope.get("query_string", b"").decode("latin-1")
        asked = request.scope["path"] + (f"?{query}" if query else "")
        return RedirectResponse("/login?next=" + quote(asked, safe="/"), 303)
    return exc.response()


class Unreadable:
    """A request body that is no JSON in UTF-8, kept to be refused (400) only after the
    access rules have run (a body is read before the dependencies are)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


LISTED_ERRORS = 20
"""The most validation errors an answer lists (it counts the others): a few kB at most."""
LIMIT_FLAGS = {"queries": "--max-batch", "k": "--max-k", "body": "--max-body"}


async def _invalid(request: Request, exc: Exception) -> Response:
    """Validation errors as one line each, naming the field (``queries.3``) and the limit."""
    assert isinstance(exc, RequestValidationError)
    found = []
    for error in exc.errors():
        if isinstance(error.get("input"), Unreadable):
            return Refusal(400, f"the body cannot be read: {error['input'].reason}").response()
        where = [str(part) for part in error.get("loc", ()) if part != "body"]
        field = ".".join(where) or "body"
        found.append((field, str(error.get("msg", "invalid")), error.get("ctx") or {}))
    field, message, context = found[0]
    message = message.removeprefix("Value error, ")
    limit = next((context[key] for key in ("limit", "le", "max_length") if key in context), None)
    if (option := _limit_flag(field, message)) is not None:
        message += f" ({option})"
    errors = [{"field": f, "message": m} for f, m, _ in found[:LISTED_ERRORS]]
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
    if field.startswith("queries."):
        return "--max-chars"
    return LIMIT_FLAGS.get(field)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    path = request.scope["path"]
    if exc.status_code == 404:
        message = f"no route {request.method} {path}"
        if may_be_told(request):  # a stranger learns nothing of the service
            routes = ", ".join(p for p in request.app.state.paths if "{" not in p)
            message += f"; routes: {routes}"
    elif exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        message = f"{request.method} is not allowed on {path}; allowed: {allowed}"
    elif exc.status_code == 400:
        message = f"the body cannot be read: {exc.detail} (it must be JSON in UTF-8)"
    elif exc.status_code in STATUSES:
        message = str(exc.detail)
    else:
        return await _unexpected(request, exc)
    return Refusal(exc.status_code, message, headers=exc.headers).response()


async def _qseg_error(request: Request, exc: Exception) -> Response:
    return Refusal(422, str(exc)).response()


async def _unexpected(request: Request, exc: Exception) -> Response:
    """A bug: logged with its traceback on stderr, answered without it."""
    traceback.print_exception(exc, file=sys.stderr)
    return JSONResponse({"error": "internal error (logged by the server)"}, 500)
