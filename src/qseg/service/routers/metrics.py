"""``/metrics``: Prometheus metrics, summed over the workers."""

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from qseg.service import metrics
from qseg.service.dependencies import GUARDS
from qseg.service.errors import GUARDED, declared

router = APIRouter(tags=["status"], dependencies=GUARDS)

_TEXT: dict[int | str, dict[str, Any]] = {
    200: {"content": {metrics.CONTENT_TYPE: {"schema": {"type": "string"}}}}
}
"""The answer's OpenAPI response: the exposition text."""


@router.get(
    "/metrics",
    response_class=Response,
    responses=_TEXT | declared(*GUARDED),
)
def metrics_route() -> Response:
    """Prometheus metrics, summed over the workers."""
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)
