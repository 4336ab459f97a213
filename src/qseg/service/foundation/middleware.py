"""The ASGI middlewares of the service, one concern each, for what must happen before a
route is chosen or a body parsed: the body-size limit (:class:`BodyLimit`), ``HEAD`` on every
``GET`` route (:class:`HeadAsGet`), the request metrics (:class:`Metrics`) and the headers
that keep every answer out of other sites' frames (:class:`NoFraming`). Who may call
is not here: that is a dependency of the routes (:mod:`.access`)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from qseg.service.foundation import metrics
from qseg.service.foundation.errors import Refusal

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DISCARDED = 64 << 20
"""The most of an oversized body read and thrown away before the 413 is answered."""
DISCARD_SECONDS = 10.0
"""The longest a client sending an oversized body is read before it is answered."""


class BodyLimit:
    """A 413 for a body over ``limit`` bytes, by its Content-Length or as it comes, before
    anything parses it. The rest of an oversized body is read and thrown away (up to
    :data:`DISCARDED` bytes or :data:`DISCARD_SECONDS`) before the answer, as nginx's
    lingering close does: a client that writes its whole body before it reads (``urllib``,
    ``requests``) then reads the 413 instead of a reset connection."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"")
        declared = int(length) if length.isdigit() else None
        chunks: list[bytes] = []
        size, more = 0, True
        while more and size <= self.limit and (declared or 0) <= self.limit:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        if size > self.limit or (declared or 0) > self.limit:
            # over the limit, whether the rest is still coming or came in the last message
            # (a chunked body's chunks may arrive as one)
            if more:
                await self._discard(receive, size, declared)
            refusal = Refusal(
                413,
                f"the body is over the limit of {self.limit} bytes (--max-body)",
                headers={"Connection": "close"},
                field="body",
                limit=self.limit,
            )
            await refusal.response()(scope, receive, send)
            return
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def _discard(self, receive: Receive, size: int, declared: int | None) -> None:
        """Read what is left of an oversized body, within the bounds."""
        if declared is not None and declared > DISCARDED:
            return
        deadline = time.monotonic() + DISCARD_SECONDS
        while size <= DISCARDED and time.monotonic() < deadline:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                return


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body already read, given again to the application; then the real channel (a
    disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class HeadAsGet:
    """``HEAD`` answered as the ``GET`` of the same path without its body (load balancers
    check health with it); the server drops the body of a HEAD's answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "HEAD":
            scope = dict(scope, method="GET")
        await self.app(scope, receive, send)


FRAMING_HEADERS = [
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
]
FRAME_POLICY = (b"content-security-policy", b"frame-ancestors 'none'")


class NoFraming:
    """Every answer, page, static file, JSON or error alike, refuses to be framed by any
    page (``X-Frame-Options`` for old browsers, CSP ``frame-ancestors`` for the others) and
    to be sniffed as another type: a page of another origin framing an annotation page
    could make an annotator's click save an answer (clickjacking). A page's own, stricter
    policy (:data:`qseg.service.foundation.pages.PAGE_HEADERS`) is kept."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                names = {name.lower() for name, _ in headers}
                headers += [h for h in FRAMING_HEADERS if h[0] not in names]
                if FRAME_POLICY[0] not in names:
                    headers.append(FRAME_POLICY)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, sending)


class Metrics:
    """Each request counted and timed under the path of the route that answered it (the
    router puts it in the scope), ``static`` or ``other``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        metrics.IN_FLIGHT.inc()
        try:
            await self.app(scope, receive, sending)
        finally:
            metrics.IN_FLIGHT.dec()
            route = scope.get("route")
            path = getattr(route, "path", None)
            name = path if isinstance(path, str) else "other"
            if scope["path"].startswith("/static/"):
                name = "static"
            metrics.observe_request(name, status, time.perf_counter() - start)
