"""``/healthz`` (no token, answered while shutting down), ``/readyz`` and ``/metrics``
(Prometheus metrics, summed over the workers)."""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from qseg.service.foundation import metrics
from qseg.service.foundation.dependencies import GUARDS, ServiceState, get_state
from qseg.service.foundation.errors import GUARDED, Refusal, declared
from qseg.service.foundation.schemas import Status

health = APIRouter(tags=["status"], responses=declared(405, 413))
router = APIRouter(tags=["status"], dependencies=GUARDS, responses=declared(*GUARDED))


@health.get("/healthz", response_model=Status)
async def healthz() -> dict[str, str]:
    """The process is up (answered without the token, while loading and shutting down)."""
    return {"status": "ok"}


@router.get("/readyz", response_model=Status)
async def readyz(state: Annotated[ServiceState, Depends(get_state)]) -> dict[str, str]:
    """Every served segmenter is loaded and the worker takes requests (503 otherwise: a
    load balancer takes a draining worker out)."""
    if not state.ready:
        raise Refusal(503, "not ready: starting")
    if state.draining:
        raise Refusal(503, "shutting down", headers={"Connection": "close"})
    return {"status": "ready"}


_TEXT: dict[int | str, dict[str, Any]] = {
    200: {"content": {metrics.CONTENT_TYPE: {"schema": {"type": "string"}}}}
}
"""The answer's OpenAPI response: the exposition text."""


@router.get("/metrics", response_class=Response, responses=_TEXT)
def metrics_route() -> Response:
    """Prometheus metrics, summed over the workers."""
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)
