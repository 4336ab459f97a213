"""What a service serves, its limits, its token and how it meets the network: one settings
class, read from ``QSEG_SERVE_*`` variables (and ``QSEG_TOKEN``) whatever starts the
application, with ``qseg serve``'s and ``qseg annotate``'s options given over them.

The rules that keep callers out read these settings inside the application
(:mod:`.access`), so they hold for ``qseg serve``, ``uvicorn``, ``gunicorn`` and a test alike.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from qseg.errors import QsegError

DEFAULT_HOST = "127.0.0.1"
TOKEN_VARIABLE = "QSEG_TOKEN"
PREFIX = "QSEG_SERVE_"
MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
"""Where the workers' metrics meet; set before ``prometheus_client`` is first imported."""
TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
"""RFC 6750's b64token: what ``Authorization: Bearer`` can carry."""
LOOPBACK_NAMES = frozenset({"localhost", "localhost."})
"""Host names that always mean this machine (RFC 6761); addresses are checked as addresses."""

Specs = Annotated[tuple[str, ...], NoDecode]
"""A list in one variable: ``;``-separated for specs (a spec may hold commas), else commas."""


class Settings(BaseSettings):
    """Everything the application needs to know about how it is served. A limit that is
    passed answers 413 or 422 naming it (and its ``qseg serve`` option)."""

    model_config = SettingsConfigDict(
        env_prefix=PREFIX, frozen=True, extra="forbid", populate_by_name=True
    )

    methods: Specs = Field(
        (), description="served method specs, the first the default (none: the shipped default)"
    )
    project: str | None = Field(None, description="an annotation project file to serve pages of")
    phrases: str | None = Field(
        None, description="a phrase file (one a line) whose phrases every served method keeps whole"
    )
    token: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices(TOKEN_VARIABLE, f"{PREFIX}TOKEN", "token"),
        description="required of every request but /healthz (none: loopback clients only)",
    )
    public_origins: Specs = Field(
        (), description="origins the pages are reached at through a proxy (https://host)"
    )
    forwarded_allow_ips: Specs = Field(
        (), description="proxies whose X-Forwarded-For and -Proto are believed"
    )
    max_batch: int = Field(1000, ge=1, description="queries in one request")
    max_words: int = Field(64, ge=1, description="words in one query")
    max_chars: int = Field(1000, ge=1, description="characters in one query")
    max_body: int = Field(1 << 20, ge=1, description="bytes in one request body")
    max_k: int = Field(100, ge=1, description="k best of one query")
    max_ranked: int = Field(
        10_000, ge=1, description="queries x k in one request (k over 1: max-ranked/max-k queries)"
    )
    max_nested: int = Field(100, ge=1, description="queries in one nested request")
    max_answer: int = Field(8 << 20, ge=1024, description="bytes in one answer")
    max_seconds: float = Field(20.0, gt=0, description="seconds a request may segment for")
    header_seconds: float = Field(
        10.0, gt=0, description="seconds a client has to send a request's headers"
    )
    min_body_rate: int = Field(
        1024, ge=1, description="bytes/s a body must arrive at, after header-seconds"
    )
    max_connections: int = Field(
        1000, ge=8, description="open connections a worker keeps (then the idlest is closed)"
    )
    login_attempts: int = Field(
        10, ge=1, description="wrong tokens a client may try at /login a minute"
    )

    @field_validator("methods", "public_origins", "forwarded_allow_ips", mode="before")
    @classmethod
    def _split(cls, value: Any, info: Any) -> Any:
        if not isinstance(value, str):
            return value
        separator = ";" if info.field_name == "methods" else ","
        return tuple(part.strip() for part in value.split(separator) if part.strip())

    @field_validator("token", mode="before")
    @classmethod
    def _token68(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if not isinstance(text, str) or not TOKEN68.fullmatch(text):
            raise ValueError(
                "a token is letters, digits and - . _ ~ + / (then = signs), as a Bearer "
                "token must be (RFC 6750): make one with python3 -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'"
            )
        return text

    @field_validator("public_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        normalized = tuple(origin_of(v) for v in value)
        for given, origin in zip(value, normalized, strict=True):
            if origin is None:
                raise ValueError(f"{given!r} is not an origin (scheme://host[:port])")
        return tuple(o for o in normalized if o is not None)

    @property
    def secret(self) -> str | None:
        """The token, or ``None``."""
        return None if self.token is None else self.token.get_secret_value()

    def limits(self) -> dict[str, int | float]:
        """The request limits by name (``max_batch`` as ``batch``), as ``GET /methods`` says."""
        return {
            name.removeprefix("max_"): getattr(self, name)
            for name in type(self).model_fields
            if name.startswith("max_") and name != "max_connections"
        }


def load_settings(**given: Any) -> Settings:
    """The settings from the environment with ``given`` over them (``None`` values left
    out); a bad value is one line naming the variable or option."""
    try:
        return Settings(**{k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error.get("loc") else "settings"
        if name in ("token", TOKEN_VARIABLE):
            where = f"--token ({TOKEN_VARIABLE})"
        else:
            where = f"{flag(name)} ({PREFIX}{name.upper()})"
        message = str(error["msg"]).removeprefix("Value error, ")
        raise QsegError(f"{where}: {message}") from None


def flag(name: str) -> str:
    """The ``qseg serve`` option of a setting."""
    return "--" + name.replace("_", "-")


@functools.lru_cache(maxsize=1024)
def is_loopback(host: str | None) -> bool:
    """Whether an address (or a host name) is this machine's loopback: 127.0.0.0/8, ::1,
    ::ffff:127.x.y.z, or the name localhost. The one definition the launcher and the
    application use (remembered: every request asks it of its client and Host)."""
    if host is None:
        return False
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a URL, lower-cased, the default port dropped; ``None``
    for anything that is no http(s) origin (``http://[``, ``null``)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not host:
        return None
    if port in (None, {"http": 80, "https": 443}[parts.scheme]):
        port = None
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown}" + (f":{port}" if port is not None else "")


def check_binding(host: str, settings: Settings) -> None:
    """A launcher's early word: an address other than the loopback needs a token (the
    application refuses other clients without one in any case)."""
    if not is_loopback(host) and settings.token is None:
        raise QsegError(
            f"binding {host} makes the service reachable from other machines: give a token "
            f"(--token or {TOKEN_VARIABLE}), which every request then carries as "
            "'Authorization: Bearer TOKEN'"
        )
