"""Who may call the service: :func:`require_access`, the dependency of every route but
``/healthz``, and what signing in at ``/login`` needs (the login cookie, the throttle on wrong
tokens, the page a browser is sent to after it).

Without a token the service answers only this machine: a client address on the loopback
(``scope["client"]``, whatever launched the application), asking for a loopback name (a page
of another site that had its name resolved to 127.0.0.1, DNS rebinding, is refused). With a
token, every request carries it, as ``Authorization: Bearer TOKEN`` or, from a browser that
signed in, as the login cookie. Either way a POST sent by a page of another site is refused.
"""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from qseg.service.foundation.credentials import LOGIN_COOKIE_PREFIX, signed
from qseg.service.foundation.errors import Refusal
from qseg.service.foundation.settings import TOKEN_VARIABLE, Settings, is_loopback, origin_of

bearer = HTTPBearer(
    auto_error=False,
    description="the service's token (--token or QSEG_TOKEN), when it has one",
)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


async def get_settings(request: Request) -> Settings:
    """The application's settings (made once, when the application is)."""
    return request.app.state.settings


async def require_client(
    request: Request, settings: Annotated[Settings, Depends(get_settings)]
) -> None:
    """Without a token, a loopback client asking for a loopback name (or a public origin)."""
    if settings.token is not None:
        return
    client = request.scope.get("client")
    address = client[0] if client else None
    if not is_loopback(address):
        raise Refusal(
            403,
            f"this service answers only this machine without a token; to answer "
            f"{address or 'other addresses'}, start it with --token or {TOKEN_VARIABLE}",
        )
    host = request.headers.get("host", "")
    if not is_loopback(host_name(host)) and not _public(request, settings):
        raise Refusal(
            403,
            f"this service answers requests to 127.0.0.1 or localhost, not to {host!r} "
            "(another name needs a token)",
        )


async def require_same_site(
    request: Request, settings: Annotated[Settings, Depends(get_settings)]
) -> None:
    """No POST sent by a page of another site (cross-site request forgery)."""
    if request.method not in SAFE_METHODS and not same_site(request, settings):
        raise Refusal(403, "a request sent by a page of another site is refused")


async def require_access(
    request: Request, credentials: HTTPAuthorizationCredentials | None
) -> None:
    """The token (or without one, this machine: :func:`require_client`), then no POST from
    another site's page: for every route but ``/healthz`` and ``/login`` (the first part of
    :func:`qseg.service.foundation.dependencies.guard`, which gives it ``bearer``'s credentials)."""
    settings: Settings = request.app.state.settings
    token = settings.secret
    if token is None:
        await require_client(request, settings)
    else:
        tried = credentials is not None or _has_login_cookie(request)
        if tried:  # a guess is throttled, the right token from a throttled address too
            throttled(request)
        if not signed(request, token, credentials):
            if tried:
                request.app.state.throttle.failed(client_address(request))
            raise Refusal(
                401,
                "this service needs its token: Authorization: Bearer TOKEN (in a browser: "
                "open /login)",
                headers={"WWW-Authenticate": "Bearer"},
            )
    await require_same_site(request, settings)


def client_address(request: Request) -> str:
    """The client's address as the application trusts it: the connection's peer, or what a
    proxy of ``--forwarded-allow-ips`` says (its middleware rewrote the scope)."""
    client = request.scope.get("client")
    return client[0] if client else ""


def throttled(request: Request) -> None:
    """429 if the client's address has tried too many wrong tokens this minute."""
    address = client_address(request)
    if (wait := request.app.state.throttle.wait(address)) > 0:
        raise Refusal(
            429,
            f"too many wrong tokens from {address}: try again in {math.ceil(wait)} s",
            headers={"Retry-After": str(math.ceil(wait))},
        )


def _has_login_cookie(request: Request) -> bool:
    return any(name.startswith(LOGIN_COOKIE_PREFIX) for name in request.cookies)


def host_name(host: str) -> str | None:
    """The name in a Host header (``[::1]:8000`` -> ``::1``); ``None`` if it is none."""
    name = host.strip()
    if name.startswith("["):
        end = name.find("]")
        return name[1:end] if end > 1 else None
    name = name.rsplit(":", 1)[0] if name.count(":") == 1 else name
    return name.lower() or None


def same_site(request: Request, settings: Settings) -> bool:
    """Whether a request is not from another site's page: no Origin (curl and scripts send
    none; a browser sends one with every POST), the service's own origin as the client
    addressed it, or a public origin of the settings (behind a proxy that rewrites Host)."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    given = origin_of(origin)
    own = origin_of(f"{request.scope.get('scheme', 'http')}://{request.headers.get('host', '')}")
    return given is not None and (given == own or given in settings.public_origins)


def _public(request: Request, settings: Settings) -> bool:
    """Whether a request names a public origin's host (a proxy that keeps Host)."""
    own = origin_of(f"{request.scope.get('scheme', 'http')}://{request.headers.get('host', '')}")
    return own is not None and own in settings.public_origins


def local_path(asked: str) -> str:
    """Where to send a browser after it signed in: ``asked`` as the browser would read it
    (WHATWG URL parsing drops tabs and line breaks, trims control characters and spaces,
    reads ``\\`` as ``/``), if that is a path of this service; else ``/``."""
    cleaned = asked.strip("".join(map(chr, range(0x21))))
    cleaned = cleaned.translate({9: None, 10: None, 13: None}).replace("\\", "/")
    if not cleaned.startswith("/") or cleaned.startswith("//"):
        return "/"
    if any(ord(c) < 0x21 or c in "\x7f<>\"'`" or ord(c) > 0x7E for c in cleaned):
        return "/"
    return cleaned
