"""``/metrics``: Prometheus metrics, summed over the workers."""

from fastapi import APIRouter
from fastapi.responses import Response

from qseg.service import metrics
from qseg.service.dependencies import GUARDS
from qseg.service.errors import GUARDED, declared

router = APIRouter(tags=["status"], dependencies=GUARDS)


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {metrics.CONTENT_TYPE: {"schema": {"type": "string"}}}}}
    | declared(*GUARDED),
)
def metrics_route() -> Response:
    """Prometheus metrics, summed over the workers."""
    return Response(metrics.exposition(), media_type=metrics.CONTENT_TYPE)
