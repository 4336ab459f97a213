"""The service's credentials, below the access rules that use them (:mod:`.access`) and the
error answers that say more to a client who has them (:mod:`.errors`): the token in an
Authorization header, or the login cookie made from it."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request
from fastapi.security import HTTPAuthorizationCredentials

from qseg.service.foundation.settings import Settings, is_loopback

LOGIN_COOKIE_PREFIX = "qseg_login_"


def signed(request: Request, token: str, credentials: HTTPAuthorizationCredentials | None) -> bool:
    """The token in the Authorization header, or the login cookie made from it."""
    if credentials is not None and credentials.scheme.lower() == "bearer":
        return secrets.compare_digest(credentials.credentials.encode(), token.encode())
    name, value = login_cookie(token)
    given = request.cookies.get(name)
    return given is not None and secrets.compare_digest(given.encode(), value.encode())


def login_cookie(token: str) -> tuple[str, str]:
    """The login cookie's name and value: keyed hashes of the token, never the token (a
    stolen cookie does not give the token away). The name differs per token, since cookies
    are shared by every port of a host: two services do not sign each other's browsers out."""

    def keyed(purpose: str) -> str:
        return hmac.new(token.encode(), purpose.encode(), hashlib.sha256).hexdigest()

    return LOGIN_COOKIE_PREFIX + keyed("qseg login cookie name")[:12], keyed("qseg login cookie")


def may_be_told(request: Request) -> bool:
    """Whether a request comes from a client the access rules let in (the token, or without
    one the loopback): what an answer may say about the service beyond a refusal (the list
    of routes of a 404)."""
    settings: Settings = request.app.state.settings
    token = settings.secret
    if token is None:
        client = request.scope.get("client")
        return is_loopback(client[0] if client else None)
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    credentials = (
        HTTPAuthorizationCredentials(scheme=scheme, credentials=given.strip()) if given else None
    )
    return signed(request, token, credentials)
