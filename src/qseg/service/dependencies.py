"""What the routes need, as FastAPI dependencies: the served segmenters, the worker's state
(draining or not), the open annotation project. Each reads what the application was
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
from qseg.service.served import ServedMethods


@dataclass
class ServiceState:
    """Whether the worker is ready (its segmenters loaded, the application started) and
    since when it drains (SIGTERM received: ``/readyz`` answers 503, every other request is
    answered and its connection closed, :class:`qseg.service.server.DrainingServer`)."""

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


async def guard(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> None:
    """The access rules as one dependency: each dependency FastAPI solves costs every
    request tens of microseconds, more than segmenting a query."""
    await require_access(request, credentials)


GUARDS = [Depends(guard)]
"""The dependencies of every route but ``/healthz``: the access rules."""


def open_project(request: Request) -> Iterator[Project]:
    """The annotation project, opened for one request and closed after it: SQLite
    connections are neither shared between the threads that answer requests nor carried
    across the fork of the workers."""
    try:
        with Project.open(request.app.state.settings.project) as project:
            yield project
    except ProjectError as exc:  # damaged, locked or taken away since the start
        raise Refusal(503, f"the project cannot be used: {exc}") from None
