"""The FastAPI application of ``qseg serve`` and ``qseg annotate``, made of two apps on one
foundation: the segmenting API (:mod:`.segmenting`: ``/segment``, ``/methods``), the
annotation app (:mod:`.annotation`: its pages and ``/api``, with a project), and what both
stand on (:mod:`.foundation`: settings, who may call, middlewares, the error table, login,
docs and status routes). Every rule holds whatever launches the application: ``qseg serve``,
``uvicorn --factory qseg.service.app:create_app``, gunicorn or a test.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, cast

from fastapi import FastAPI
from fastapi.routing import APIRoute
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from qseg._version import VERSION
from qseg.errors import QsegError, StyleHint
from qseg.service.foundation import docs, login, status
from qseg.service.foundation.dependencies import ServiceState
from qseg.service.foundation.errors import install_handlers
from qseg.service.foundation.middleware import BodyLimit, HeadAsGet, Metrics, NoFraming
from qseg.service.foundation.settings import MULTIPROCESS_VARIABLE, Settings, load_settings
from qseg.service.foundation.throttle import Throttle
from qseg.service.segmenting import routes as segmenting
from qseg.service.segmenting.schemas import request_model
from qseg.service.segmenting.served import ServedMethods, open_served


def log_style_hints() -> None:
    """A :class:`~qseg.errors.StyleHint` (once a served model, in each worker) as a line of
    the server's log, ``qseg: note: ...``; other warnings as Python shows them."""
    shown = warnings.showwarning
    if getattr(shown, "qseg_hints", False):
        return

    def logged(message: Any, category: type[Warning], *rest: Any, **named: Any) -> None:
        if issubclass(category, StyleHint):
            logging.getLogger("uvicorn.error").warning("qseg: note: %s", message)
        else:
            shown(message, category, *rest, **named)

    logged.qseg_hints = True  # type: ignore[attr-defined]
    warnings.showwarning = logged


def create_app(settings: Settings | None = None, served: ServedMethods | None = None) -> FastAPI:
    """The application serving ``served`` (default: opened from ``settings.methods``) with
    ``settings`` (default: from the environment, ``QSEG_SERVE_*`` and ``QSEG_TOKEN``), with
    the annotation pages of ``settings.project`` if it names one."""
    if settings is None:  # launched by uvicorn or gunicorn: a bad setting is one line
        try:
            settings = load_settings()
            served = (
                served if served is not None else open_served(settings.methods, settings.phrases)
            )
        except QsegError as exc:
            print(f"qseg: error: {exc}", file=sys.stderr, flush=True)
            raise SystemExit(3) from None  # gunicorn: a worker that cannot boot stops the arbiter
    log_style_hints()
    served = served if served is not None else open_served(settings.methods, settings.phrases)
    state = ServiceState()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state.ready = True
        yield
        state.ready = False

    app = FastAPI(
        title="qseg",
        version=VERSION,
        summary="Web search query segmentation: new york yankees|tickets",
        lifespan=lifespan,
        openapi_url=None,  # served by routers.docs, behind the access rules
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.served = served
    app.state.service = state
    # counted once for all the workers, in the folder they share for their metrics
    app.state.throttle = Throttle(settings.login_attempts, os.environ.get(MULTIPROCESS_VARIABLE))
    model = request_model(list(served), settings)
    routers = [segmenting.segmenting_router(model), segmenting.methods_router]
    routers += [status.health, status.router]
    routers += [login.router, docs.router, docs.files]
    if settings.project is not None:
        from qseg.service.annotation import routes as annotation

        app.state.summaries = annotation.Summaries()
        routers += [annotation.pages, annotation.router, annotation.files]
    for router in routers:
        app.include_router(router)
    # the routers hold only API routes (made by their decorators), each with a path
    routes = [cast(APIRoute, r) for router in routers for r in router.routes]
    app.state.paths = list(dict.fromkeys(r.path for r in routes))
    # the outermost last: a HEAD is a GET for everything after it
    app.add_middleware(BodyLimit, limit=settings.max_body)
    if settings.forwarded_allow_ips:  # no proxy trusted: the headers are left unread
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(settings.forwarded_allow_ips))
    app.add_middleware(Metrics)
    app.add_middleware(NoFraming)
    app.add_middleware(HeadAsGet)
    install_handlers(app)
    if settings.token is None:
        app.openapi = partial(_open_schema, app)  # type: ignore[method-assign]  # FastAPI's way
    return app


def _open_schema(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of a service without a token: no security scheme to satisfy
    (the access rules are then this machine's address, which no request field can show)."""
    if app.openapi_schema is None:
        schema = FastAPI.openapi(app)
        schema.get("components", {}).pop("securitySchemes", None)
        for operations in schema["paths"].values():
            for operation in operations.values():
                operation.pop("security", None)
                operation.get("responses", {}).pop("401", None)
        app.openapi_schema = schema
    return app.openapi_schema
