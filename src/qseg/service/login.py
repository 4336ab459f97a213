"""``/login``: how a browser gives the service its token (a page cannot send the
Authorization header): the token checked once, then kept as a cookie the gate takes."""

# no `from __future__ import annotations`: FastAPI reads the route signatures' types
import secrets
from typing import Annotated

from fastapi import Body, FastAPI, Query
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel

from qseg.service.gate import cookie_name
from qseg.service.pages import page
from qseg.service.refusal import Refusal


class Login(BaseModel):
    token: str


def add_login(app: FastAPI, token: str | None) -> None:
    """``/login``: the page asking for the token, and the routes that check it and set it as
    the cookie the gate takes (``GET /login?token=...`` is the link ``qseg annotate``
    prints)."""

    def accepted(given: str, goto: str) -> Response:
        if token is None or not secrets.compare_digest(given.encode(), token.encode()):
            raise Refusal(401, "wrong token", headers={"WWW-Authenticate": "Bearer"})
        # a path of this service only: "//host" and "/\\host" would leave it
        here = goto.startswith("/") and not goto.startswith(("//", "/\\"))
        answer = RedirectResponse(goto if here else "/", 303)
        answer.set_cookie(cookie_name(token), token, path="/", httponly=True, samesite="strict")
        return answer

    @app.get("/login", include_in_schema=False)
    def login_page(
        token: Annotated[str | None, Query()] = None, next: Annotated[str, Query()] = "/"
    ) -> Response:
        if token is None:
            return page("login.html")
        return accepted(token, next)

    @app.post("/login", include_in_schema=False)
    def login(body: Annotated[Login, Body()], next: Annotated[str, Query()] = "/") -> Response:
        return accepted(body.token, next)
