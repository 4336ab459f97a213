"""What every request passes before its route: the :class:`Gate` ASGI middleware (the token,
the refusal while shutting down, the body-size limit, a JSON body, the metrics, and for a
browser's pages the checks against other sites), so that it holds for every route, the schema
and an unknown path alike."""

import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi.responses import RedirectResponse, Response

from qseg.service import metrics
from qseg.service.refusal import Refusal

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

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


@dataclass
class ServiceState:
    """Whether the worker is ready (its segmenters loaded, the application started) and
    whether it is draining (SIGTERM received: it answers 503 to new requests)."""

    ready: bool = False
    draining: bool = False


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
        routes: frozenset[str],
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
