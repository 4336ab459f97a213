"""The OpenAPI document, ``/docs`` (Swagger UI served by qseg itself: it works without
internet) and the service's static files, each behind the same access rules as the rest:
the document and ``/docs`` need the token; scripts, style sheets and images (public code)
need only what every client needs, so that the login page can show."""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types
from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, Depends, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from qseg.service.foundation.access import require_client
from qseg.service.foundation.dependencies import GUARDS
from qseg.service.foundation.errors import GUARDED, declared
from qseg.service.foundation.pages import STATIC, static_file

STATIC_PREFIX = "/static/"
SWAGGER_FILES = StaticFiles(directory=Path(fastapi_offline.__file__).parent / "static")
QSEG_FILES = StaticFiles(directory=STATIC)

router = APIRouter(dependencies=GUARDS, responses=declared(*GUARDED), include_in_schema=False)
files = APIRouter(
    dependencies=[Depends(require_client)], responses=declared(403, 404), include_in_schema=False
)


@router.get("/openapi.json")
def openapi(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())


@router.get("/docs")
def swagger() -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="qseg - Swagger UI",
        swagger_js_url=f"{STATIC_PREFIX}docs/swagger-ui-bundle.js",
        swagger_css_url=f"{STATIC_PREFIX}docs/swagger-ui.css",
        swagger_favicon_url=f"{STATIC_PREFIX}qseg/favicon.svg",
    )


@files.get(STATIC_PREFIX + "docs/{path:path}")
async def swagger_file(path: str, request: Request) -> Response:
    return await SWAGGER_FILES.get_response(path, request.scope)


@files.get(STATIC_PREFIX + "qseg/{path:path}")
async def qseg_file(path: str, request: Request) -> Response:
    return await static_file(QSEG_FILES, STATIC_PREFIX + "qseg/", path, request.scope)
