"""Request bodies as the service reads them: JSON whatever the Content-Type (``curl -d`` sends
a form type), in UTF-8 only (``json.loads`` of bytes would take UTF-16 and UTF-32 too), as
FastAPI's guide to custom request classes does it: a route class whose requests parse so."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.datastructures import Headers, MutableHeaders

from qseg.service.foundation.errors import Unreadable

MAX_KEYS = 64
"""The most keys a body's object may have: no request has a tenth of that, and validating an
object of 100,000 unknown keys costs a worker seconds and an answer of megabytes."""


class JsonRequest(Request):
    """A request whose body is JSON in UTF-8; a body that is not becomes an
    :class:`Unreadable` value, refused (400) by validation, after the access rules."""

    @property
    def headers(self) -> Headers:
        if not hasattr(self, "_json_headers"):
            headers = MutableHeaders(scope={"type": "http", "headers": self.scope["headers"]})
            headers["content-type"] = "application/json"
            self._json_headers = Headers(raw=headers.raw)
        return self._json_headers

    async def json(self) -> Any:
        body = await self.body()
        try:
            value = json.loads(body.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return Unreadable(f"it is not UTF-8 (byte {exc.start}); send JSON in UTF-8")
        except json.JSONDecodeError as exc:
            return Unreadable(f"it is not valid JSON ({exc.msg} at character {exc.pos})")
        except RecursionError:
            return Unreadable("it nests too deeply")
        except ValueError as exc:  # an integer past Python's int-string limit
            return Unreadable(f"it holds a number Python does not read ({exc})")
        if isinstance(value, dict) and len(value) > MAX_KEYS:
            return Unreadable(
                f"it has {len(value):,} keys at its top, more than any request has ({MAX_KEYS})"
            )
        return value


class JsonRoute(APIRoute):
    """An API route whose requests are :class:`JsonRequest` s."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            return await handler(JsonRequest(request.scope, request.receive))

        return handle
