"""What every route needs, as FastAPI dependencies: the access rules and the worker's state
(draining or not). Each reads what the application was made with (``app.state``), so nothing
depends on how the application was launched."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials

from qseg.service.foundation.access import bearer, require_access


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


async def guard(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> None:
    """The access rules as one dependency: each dependency FastAPI solves costs every
    request tens of microseconds, more than segmenting a query."""
    await require_access(request, credentials)


GUARDS = [Depends(guard)]
"""The dependencies of every route but ``/healthz``: the access rules."""
