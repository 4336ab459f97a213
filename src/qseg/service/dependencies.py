"""What the routes need, as FastAPI dependencies: the served segmenters, the worker's state
(a 503 while it drains), the open annotation project. Each reads what the application was
made with (``app.state``), so nothing depends on how the application was launched."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials

from qseg.annotation.project import Project, ProjectError
from qseg.service.access import bearer, require_access
from qseg.service.errors import Refusal
from qseg.service.middleware import ARRIVED
from qseg.service.served import ServedMethods


@dataclass
class ServiceState:
    """Whether the worker is ready (its segmenters loaded, the application started) and
    since when it drains (SIGTERM received: it answers 503 to requests that arrive after)."""

    ready: bool = False
    draining_since: float | None = None

    @property
    def draining(self) -> bool:
        return self.draining_since is not None

    def drain(self) -> None:
        if self.draining_since is None:
            self.draining_since = time.monotonic()


async def get_state(request: Request) -> ServiceState:
    return request.app.state.service


async def get_served(request: Request) -> ServedMethods:
    """The segmenters the application serves, by name."""
    return request.app.state.served


async def accepting(request: Request) -> None:
    """A draining worker refuses the requests that arrived after it began to drain (those in
    flight finish), closing the connection so that a client that keeps it alive goes to
    another worker rather than ask this one again."""
    state: ServiceState = request.app.state.service
    since = state.draining_since
    arrived = request.scope.get("state", {}).get(ARRIVED, time.monotonic())
    if since is not None and arrived >= since:
        raise Refusal(
            503,
            "shutting down: send the request to another worker",
            headers={"Connection": "close"},
        )


async def guard(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> None:
    """The access rules, then the drain, as one dependency: each dependency FastAPI solves
    costs every request tens of microseconds, more than segmenting a query."""
    await require_access(request, credentials)
    await accepting(request)


GUARDS = [Depends(guard)]
"""The dependencies of every route but ``/healthz``: the access rules, then the drain."""


def open_project(request: Request) -> Iterator[Project]:
    """The annotation project, opened for one request and closed after it: SQLite
    connections are neither shared between the threads that answer requests nor carried
    across the fork of the workers."""
    try:
        with Project.open(request.app.state.settings.project) as project:
            yield project
    except ProjectError as exc:  # damaged, locked or taken away since the start
        raise Refusal(503, f"the project cannot be used: {exc}") from None
