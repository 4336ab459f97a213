"""``qseg serve``: the segmenters as an HTTP service (``pip install 'qseg[serve]'``). Its
options are the fields of :class:`qseg.service.foundation.settings.Settings` (``--max-batch`` sets
``max_batch``, as ``QSEG_SERVE_MAX_BATCH`` does), given over the environment."""

from __future__ import annotations

import argparse
from typing import IO, Any

from qseg.cli.common import at_least_one

OWN = {"methods", "project", "phrases", "token", "public_origins", "forwarded_allow_ips"}
"""Settings with an option of their own shape (the rest are numbers: ``--name N``)."""


def configure(serve: argparse.ArgumentParser) -> None:
    from qseg.service.foundation.settings import DEFAULT_HOST

    serve.description = (
        "Serve the segmenters over HTTP: POST /segment, GET /methods, /healthz, /readyz, "
        "/metrics, /docs. Everything served is opened (stores built where needed) before the "
        "port is bound; requests choose among the served names only. Every option can also "
        "be set as QSEG_SERVE_<OPTION> (QSEG_TOKEN for the token). See docs/service.md."
    )
    serve.add_argument(
        "--method",
        dest="methods",
        action="append",
        metavar="SPEC",
        help="a method spec, model file or shipped model's name to serve, under that text "
        "(repeatable; the first is the default of requests; default: the shipped default model)",
    )
    serve.add_argument(
        "--phrases",
        metavar="FILE",
        help="a phrase file (one a line, .gz too) whose phrases every served method keeps whole "
        "(a catalog's names; see docs/adapting.md)",
    )
    serve.add_argument(
        "--host", default=DEFAULT_HOST, help="address to bind (default: %(default)s)"
    )
    serve.add_argument("--port", type=int, default=8000, help="default: %(default)s; 0: a free one")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    serve.add_argument(
        "--drain-seconds",
        type=float,
        default=2.0,
        metavar="S",
        help="after SIGTERM, stop taking connections and for S seconds answer what comes on "
        "the open ones, closing each, while those in flight finish (default: %(default)s)",
    )
    serve.add_argument(
        "--prepare",
        action="store_true",
        help="build everything the served methods need into the cache, then exit (for images "
        "and deploy steps)",
    )
    add_settings(serve)
    serve.set_defaults(run=run)


def add_settings(parser: argparse.ArgumentParser, *, numbers: bool = True) -> None:
    """The options of the settings: the token, the network's, and (``numbers``) the limits."""
    from qseg.service.foundation.settings import TOKEN_VARIABLE, Settings, flag

    fields = Settings.model_fields
    parser.add_argument(
        "--token",
        help=f"require it of every request but /healthz, as 'Authorization: Bearer TOKEN' "
        f"(default: ${TOKEN_VARIABLE}); without one, only this machine is answered",
    )
    parser.add_argument(
        "--public-origin",
        dest="public_origins",
        action="append",
        metavar="URL",
        help="an origin the pages are reached at through a proxy that rewrites Host, "
        "https://annotate.example.org (repeatable)",
    )
    parser.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        help="comma-separated addresses of proxies whose X-Forwarded-For and "
        "X-Forwarded-Proto are believed (default: none)",
    )
    if not numbers:
        return
    group = parser.add_argument_group("limits (over them: 408, 413, 422 or 503 naming them)")
    for name, field in fields.items():
        if name in OWN:
            continue
        group.add_argument(
            flag(name),
            dest=name,
            type=field.annotation,  # type: ignore[arg-type]  # int or float: callable
            metavar="N",
            help=f"{field.description} (default: {field.default})",
        )


def settings_of(args: argparse.Namespace, **more: Any) -> Any:
    """The settings the options give, over the environment's."""
    from qseg.service.foundation.settings import Settings, load_settings

    given = {name: getattr(args, name, None) for name in Settings.model_fields}
    given = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items()}
    return load_settings(**(given | more))


def run(args: argparse.Namespace, out: IO[str]) -> None:
    at_least_one(args.workers, "--workers")
    if not 0 <= args.port <= 65535:
        raise _usage(f"--port {args.port} is not a port (0 to 65535)")
    if args.drain_seconds < 0:
        raise _usage("--drain-seconds must be >= 0")
    settings = settings_of(args)
    if args.prepare:
        from qseg.service.segmenting.served import open_served

        served = open_served(settings.methods, settings.phrases)
        out.write(f"ready to serve: {', '.join(served)}\n")
        return
    from qseg.service.server import serve

    serve(settings, host=args.host, port=args.port, workers=args.workers, drain=args.drain_seconds)


def _usage(message: str) -> Exception:
    from qseg.errors import QsegError

    return QsegError(message)
