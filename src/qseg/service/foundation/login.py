"""``/login``: how a browser gives the service its token (a page cannot send the
Authorization header): the token checked once, then kept as a cookie made from it. Wrong
tokens are throttled per client address."""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types
import secrets
from typing import Annotated

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from qseg.service.foundation.access import (
    client_address,
    get_settings,
    local_path,
    require_client,
    require_same_site,
    throttled,
)
from qseg.service.foundation.bodies import JsonRoute
from qseg.service.foundation.credentials import login_cookie
from qseg.service.foundation.errors import Refusal, declared
from qseg.service.foundation.pages import page
from qseg.service.foundation.settings import Settings
from qseg.service.foundation.throttle import Throttle

router = APIRouter(
    route_class=JsonRoute,
    dependencies=[Depends(require_client), Depends(require_same_site)],
    responses=declared(400, 401, 403, 405, 413, 422, 429),
    include_in_schema=False,
)


class Login(BaseModel):
    token: str = Field(max_length=4096)


async def get_throttle(request: Request) -> Throttle:
    return request.app.state.throttle


@router.get("/login")
def login_page(
    request: Request,
    settings: Annotated[Settings, Depends(get_settings)],
    throttle: Annotated[Throttle, Depends(get_throttle)],
    token: Annotated[str | None, Query(max_length=4096)] = None,
    next: Annotated[str, Query(max_length=4096)] = "/",
) -> Response:
    """The page asking for the token; with ``?token=`` (the link ``qseg annotate``
    prints), signed in at once and sent on."""
    if token is None:
        return page("login.html")
    where = _sign_in(request, settings, throttle, token, next)
    answer = RedirectResponse(where, 303)
    _set_cookie(answer, settings)
    return answer


@router.post("/login")
def login(
    request: Request,
    body: Annotated[Login, Body()],
    settings: Annotated[Settings, Depends(get_settings)],
    throttle: Annotated[Throttle, Depends(get_throttle)],
    next: Annotated[str, Query(max_length=4096)] = "/",
) -> Response:
    """Signed in: the cookie, and in ``next`` the page of this service to go to."""
    where = _sign_in(request, settings, throttle, body.token, next)
    answer = JSONResponse({"next": where})
    _set_cookie(answer, settings)
    return answer


def _sign_in(
    request: Request, settings: Settings, throttle: Throttle, given: str, asked: str
) -> str:
    """Where to go once the token is right (401 if wrong, 429 after too many wrong)."""
    token = settings.secret
    throttled(request)
    if token is None:
        raise Refusal(401, "this service has no token: open / without signing in")
    if not secrets.compare_digest(given.encode(), token.encode()):
        throttle.failed(client_address(request))
        raise Refusal(401, "wrong token", headers={"WWW-Authenticate": "Bearer"})
    return local_path(asked)


def _set_cookie(answer: Response, settings: Settings) -> None:
    assert settings.secret is not None
    name, value = login_cookie(settings.secret)
    answer.set_cookie(name, value, path="/", httponly=True, samesite="strict")
