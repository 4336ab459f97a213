"""HTTP/1.1 as ``qseg serve``'s workers speak it: uvicorn's httptools protocol with what an
open port needs against slow or hostile clients, which neither uvicorn nor gunicorn's async
workers bound:

- a request's headers must arrive within ``header_seconds`` of its first byte (or of the
  connection, or of the previous answer), and its body at ``min_body_rate`` bytes a second
  after that grace: a client that sends half a request line, half its headers, only CRLFs,
  ``Expect: 100-continue`` and then nothing, or an unfinished chunked body, is answered 408 and
  closed instead of holding its connection for ever;
- a worker keeps at most ``max_connections`` connections: past that, the connection that has
  waited longest without a complete request is closed (so idle or slow clients cannot keep a
  new one out), or if every connection is busy, the new one is answered 503 at once;
- pipelined requests before a malformed one are answered, in order, before the 400.

Each event is logged on stderr once, then at most once every 10 s with a count.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

LOG_EVERY = 10.0
TICK = 1.0
"""Seconds between two looks at a connection's progress."""
RESERVED_FILES = 64
"""Open files a worker keeps for itself (its listening socket, models, metrics files)."""


class _Tally:
    """A log line per kind of event: the first at once, then a count every
    :data:`LOG_EVERY` seconds, so a flood of slow clients is a few lines, not thousands."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._last: dict[str, float] = {}
        self._logger = logging.getLogger("uvicorn.error")

    def __call__(self, message: str) -> None:
        self._counts[message] = self._counts.get(message, 0) + 1
        now = time.monotonic()
        if now - self._last.get(message, -LOG_EVERY) >= LOG_EVERY:
            count = self._counts.pop(message)
            self._last[message] = now
            self._logger.warning("qseg: %s (%d since the last report)", message, count)


class GuardedHttp(HttpToolsProtocol):
    """uvicorn's httptools protocol with time limits on incomplete requests, a bound on the
    connections of a worker, and ordered answers to a malformed pipelined request."""

    header_seconds = 10.0
    min_body_rate = 1024
    max_connections = 1000
    draining = False
    """Set in a worker that drains: each request is answered with ``Connection: close``."""
    tally = _Tally()

    @classmethod
    def configure(cls, header_seconds: float, min_body_rate: int, max_connections: int) -> None:
        """The limits (from the service's settings), the connections bounded by the open
        files the process may have too."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        files = soft - RESERVED_FILES if soft != resource.RLIM_INFINITY else max_connections
        cls.header_seconds = header_seconds
        cls.min_body_rate = min_body_rate
        cls.max_connections = max(8, min(max_connections, files))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting_since: float | None = time.monotonic()
        """When the connection began to wait for a request's headers (``None``: it has them)."""
        self.body_since: float | None = None
        self.body_bytes = 0
        self.began = False
        self.deferred_400: str | None = None
        self.half_closed = False
        self.running: Any = None
        """The request being answered (uvicorn keeps only the newest, maybe pipelined)."""
        self._ticker: asyncio.TimerHandle | None = None

    # the connection
    def connection_made(  # type: ignore[override]  # asyncio's takes any BaseTransport
        self, transport: asyncio.Transport
    ) -> None:
        super().connection_made(transport)
        self._tick_later()
        if len(self.connections) > self.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        # uvicorn tells only the newest request; the one being answered stops writing too
        for cycle in [self.running, *(c for c, _ in self.pipeline)]:
            if cycle is not None and not cycle.response_complete:
                cycle.disconnected = True
                cycle.message_event.set()
        super().connection_lost(exc)

    def eof_received(  # type: ignore[override]  # asyncio's may return True: keep it open
        self,
    ) -> bool | None:
        """A client that half-closes after its requests still reads their answers."""
        self.half_closed = True
        return True if self._busy() else None

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        self.running = cycle
        super()._start_asgi_task(cycle, app)

    def _make_room(self) -> None:
        """Close the connection that has waited longest for a request's headers; if none
        waits, answer this one 503."""
        waiting = [
            c
            for c in self.connections
            if c is not self and isinstance(c, GuardedHttp) and c.waiting_since is not None
        ]
        if waiting:
            oldest = min(waiting, key=lambda c: c.waiting_since or 0.0)
            oldest.transport.abort()
            self.tally(f"over {self.max_connections} connections: the longest idle one closed")
            return
        self.tally(f"over {self.max_connections} connections, all busy: a new one answered 503")
        self._answer_and_close(503, "the server is busy: try again")

    # progress of a request
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.began = True
        self.waiting_since = time.monotonic()

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self.draining and self.cycle is not None:
            self.cycle.keep_alive = False  # answered, then closed: the client reconnects
        self.waiting_since = None
        self.body_since = time.monotonic()
        self.body_bytes = 0

    def on_body(self, body: bytes) -> None:
        self.body_bytes += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.body_since = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self.deferred_400 is not None and not self._busy():
            self.send_400_response(self.deferred_400)
            return
        if self.half_closed and not self._busy():
            self.transport.close()
            return
        if self.waiting_since is None and not self._busy():
            self.waiting_since = time.monotonic()
            self.began = False

    def _busy(self) -> bool:
        """Whether a request of this connection is being answered or waits to be (not one
        given up for its malformed body)."""
        running = self.running
        answering = running is not None and not running.response_complete
        return bool(self.pipeline) or (answering and not running.disconnected)

    def _tick_later(self) -> None:
        self._ticker = self.loop.call_later(TICK, self._tick)

    def _tick(self) -> None:
        """Close a connection whose request is late: headers after ``header_seconds``, a
        body slower than ``min_body_rate`` after that grace."""
        self._ticker = None
        if self.transport is None or self.transport.is_closing():
            return
        now = time.monotonic()
        if self.waiting_since is not None and now - self.waiting_since > self.header_seconds:
            self.tally(f"a request's headers not complete within {self.header_seconds:g} s")
            self._late("the request's headers did not arrive in time")
            return
        reading = self.body_since is not None and self.cycle is not None
        if reading and not self.cycle.response_complete:
            allowed = now - (self.body_since or now) - self.header_seconds
            if allowed > 0 and self.body_bytes < self.min_body_rate * allowed:
                self.tally(f"a request's body slower than {self.min_body_rate} bytes/s")
                self._late("the request's body did not arrive in time")
                return
        self._tick_later()

    def _late(self, message: str) -> None:
        """408 to a client that began a request (and is not being answered), else close."""
        if self.began and (self.cycle is None or not self.cycle.response_started):
            if self.cycle is not None:
                self.cycle.disconnected = True  # the application reading the body stops
                self.cycle.message_event.set()
            self._answer_and_close(408, message)
        else:
            self.transport.close()

    def _answer_and_close(self, status: int, message: str) -> None:
        body = ('{"error": "' + message + '"}').encode()
        head = (
            b"content-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
            % len(body)
        )
        self.transport.write(STATUS_LINE[status] + head + body)
        self.transport.close()

    # a malformed request after pipelined good ones
    def send_400_response(self, msg: str) -> None:
        """uvicorn answers a malformed request at once, closing the connection under the
        requests pipelined before it; here they are answered first. A request whose body
        is malformed (an unknown transfer coding, a chunk size that overflows or is no
        number) will never arrive whole: it is given up at once, not left to time out."""
        if self.body_since is not None and self.cycle is not None:
            malformed = self.cycle
            malformed.disconnected = True  # the application reading its body stops
            malformed.message_event.set()
            self.pipeline = type(self.pipeline)(p for p in self.pipeline if p[0] is not malformed)
            self.body_since = None
        if self._busy():
            self.deferred_400 = msg
            self.flow.pause_reading()
            return
        super().send_400_response(msg)
