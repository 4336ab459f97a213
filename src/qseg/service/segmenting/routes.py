"""``POST /segment``: one query or a batch, answered by the functions behind ``qseg
segment`` (:mod:`qseg.service.segmenting.answering`) with a segmenter opened at start-up;
``GET /methods``: what is served."""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types, and the
# request model is made per application (its limits are the service's settings)
import time
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from qseg.integrations.syntax import ENGINE_OPTIONS, OptionError, output_syntax
from qseg.service.foundation import metrics
from qseg.service.foundation.access import bearer, get_settings
from qseg.service.foundation.bodies import JsonRequest, JsonRoute
from qseg.service.foundation.dependencies import GUARDS, guard
from qseg.service.foundation.errors import GUARDED, Refusal, declared
from qseg.service.foundation.settings import Settings
from qseg.service.segmenting.answering import Bounds, OverLimit, TooLongToNest, answer, query_words
from qseg.service.segmenting.schemas import Methods, SegmentResponse, ranked_batch
from qseg.service.segmenting.served import ServedMethods, get_served

methods_router = APIRouter(tags=["status"], dependencies=GUARDS, responses=declared(*GUARDED))


@methods_router.get("/methods", response_model=Methods)
async def methods(
    served: Annotated[ServedMethods, Depends(get_served)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> dict[str, Any]:
    """What is served, the first being the default, with each model's metadata, and the
    limits of a request."""
    return {"methods": [s.describe() for s in served.values()], "limits": settings.limits()}


INLINE_WORDS = 24
"""The most words of a request answered on the event loop (see :func:`_inline`)."""


class SegmentRoute(JsonRoute):
    """``POST /segment`` declared as any route (its guard and its body's model are in the
    OpenAPI document) but answered by a handler that calls them itself, in FastAPI's order:
    the guard, then the body's model, then the endpoint. FastAPI's solving of dependencies
    costs a request several times what segmenting a query with the default costs, and this
    route is the hot path of a search request."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        assert self.body_field is not None
        field = self.body_field  # typed ModelField here: mypy drops a narrowing in the handler
        # the handler calls the guard the route declares: the two must not drift apart
        assert [d.dependency for d in self.dependencies] == [guard], self.dependencies
        endpoint = self.endpoint

        async def handle(request: Request) -> Response:
            request = JsonRequest(request.scope, request.receive)
            await guard(request, await bearer(request))
            if not await request.body():
                raise RequestValidationError([MISSING_BODY])
            body, errors = field.validate(await request.json(), {}, loc=("body",))
            if errors:
                raise RequestValidationError(errors)
            return await endpoint(body, request)

        return handle


MISSING_BODY = {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}
"""FastAPI's error for a request without a body."""


def segmenting_router(model: type[BaseModel]) -> APIRouter:
    """The router of ``POST /segment`` taking ``model`` (the application's request model)."""
    router = APIRouter(
        route_class=SegmentRoute,
        dependencies=GUARDS,
        responses=declared(*GUARDED, 400, 404, 422),
        tags=["segmenting"],
    )

    async def segment(
        body: Annotated[model, Body()],  # type: ignore[valid-type]  # a model made per application
        request: Request,
    ) -> Response:
        served: ServedMethods = request.app.state.served
        settings: Settings = request.app.state.settings
        if _inline(body):
            return segment_queries(body, served, settings)
        return await run_in_threadpool(segment_queries, body, served, settings)

    router.add_api_route(
        "/segment",
        segment,
        methods=["POST"],
        response_model=SegmentResponse,
        summary="Segment one query or a batch",
    )
    return router


def segment_queries(body: Any, served: ServedMethods, settings: Settings) -> Response:
    """The answer to a request the schema took, within the limits that tie its fields."""
    target = served.pick(body.method)
    options = {name: getattr(body, name) for name in ENGINE_OPTIONS}
    try:
        syntax = output_syntax(body.format, nested=body.nested, k=body.k, **options)
    except OptionError as exc:
        raise Refusal(422, str(exc), field=exc.option.split()[0]) from None
    _check_work(body, settings)
    head = {
        "method": target.name,
        "spec": target.segmenter.spec,
        "fingerprint": target.fingerprint,
    }
    bounds = Bounds(
        settings.max_answer, time.monotonic() + settings.max_seconds, settings.max_seconds
    )
    start = time.perf_counter()
    try:
        payload = answer(
            target.segmenter,
            body.queries,
            head,
            bounds,
            k=body.k,
            nested=body.nested,
            fmt=body.format,
            syntax=syntax,
        )
    except TooLongToNest as exc:
        field = f"queries.{exc.index}"
        raise Refusal(422, f"{field}: {exc}", field=field, limit=exc.limit) from None
    except OverLimit as exc:
        limit = exc.limit if isinstance(exc.limit, int) else None
        raise Refusal(exc.status, str(exc), field="queries", limit=limit) from None
    metrics.observe_segmenting(target.name, len(body.queries), time.perf_counter() - start)
    return Response(payload, media_type="application/json")


def _inline(body: Any) -> bool:
    """Whether a request is answered on the event loop rather than in a worker thread:
    a handful of words with ``k`` = 1 and no trees (little work for any model), where the hop
    to a thread would cost more than the work."""
    if body.k > 1 or body.nested:
        return False
    words = 0
    for query in body.queries:
        words += query_words(query)
        if words > INLINE_WORDS:
            return False
    return True


def _check_work(body: Any, settings: Settings) -> None:
    """The limits that tie fields (the schema says them as conditions): the queries of a
    request with k over 1, and of a nested request."""
    most = ranked_batch(settings)
    if body.k > 1 and len(body.queries) > most:
        raise Refusal(
            422,
            f"queries: {len(body.queries)} queries with k={body.k}; with k over 1 the limit "
            f"is {most} queries (--max-ranked / --max-k, so that queries x k stays within "
            f"{settings.max_ranked})",
            field="queries",
            limit=most,
        )
    if body.nested and len(body.queries) > settings.max_nested:
        raise Refusal(
            422,
            f"queries: {len(body.queries)} queries to nest; the limit is {settings.max_nested} "
            "(--max-nested)",
            field="queries",
            limit=settings.max_nested,
        )
