"""What a service serves and the limits of its requests, from ``qseg serve``'s options or, for a
server started by its own command line (``uvicorn``, ``gunicorn``), from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from qseg.errors import QsegError

DEFAULT_HOST = "127.0.0.1"
METHODS_VARIABLE = "QSEG_SERVE_METHODS"
"""The served method specs, separated by ``;`` (a spec never holds one)."""
TOKEN_VARIABLE = "QSEG_TOKEN"
MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
"""Where the workers' metrics meet; set before ``prometheus_client`` is first imported."""


@dataclass(frozen=True)
class Limits:
    """The largest request the service answers; over a limit, a 413 or 422 naming it."""

    batch: int = 1000
    """Queries in one request."""
    words: int = 64
    """Words in one query (after normalization)."""
    chars: int = 1000
    """Characters in one query."""
    body: int = 1 << 20
    """Bytes in one request body."""
    k: int = 100
    """Segmentations ranked for one query (``k``)."""

    def __post_init__(self) -> None:
        for limit in fields(self):
            value = getattr(self, limit.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise QsegError(
                    f"the limit {limit.name} must be a whole number >= 1, not {value!r}"
                )

    @classmethod
    def from_env(cls) -> Limits:
        """``QSEG_SERVE_MAX_BATCH``, ``..._WORDS``, ``..._CHARS``, ``..._BODY``, ``..._K``."""
        given = {}
        for limit in fields(cls):
            variable = f"QSEG_SERVE_MAX_{limit.name.upper()}"
            if (text := os.environ.get(variable)) is not None:
                try:
                    given[limit.name] = int(text)
                except ValueError:
                    raise QsegError(f"{variable}={text!r} is not a whole number") from None
        return cls(**given)


@dataclass(frozen=True)
class ServiceConfig:
    """The served method specs (empty: the shipped default model), the request limits and the
    token every route but ``/healthz`` requires (``None``: none required)."""

    methods: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    token: str | None = None

    @classmethod
    def from_env(cls) -> ServiceConfig:
        """``QSEG_SERVE_METHODS`` (``;``-separated specs), the ``QSEG_SERVE_MAX_*`` limits and
        ``QSEG_TOKEN``."""
        methods = os.environ.get(METHODS_VARIABLE, "")
        specs = tuple(s.strip() for s in methods.split(";") if s.strip())
        return cls(specs, Limits.from_env(), os.environ.get(TOKEN_VARIABLE) or None)


def check_binding(host: str, token: str | None) -> None:
    """A service reachable from other machines must require a token."""
    if host not in (DEFAULT_HOST, "localhost", "::1") and not token:
        raise QsegError(
            f"binding {host} makes the service reachable from other machines: give a token "
            f"(--token or {TOKEN_VARIABLE}), which every request then carries as "
            "'Authorization: Bearer TOKEN'"
        )
