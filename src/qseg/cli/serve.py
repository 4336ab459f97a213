"""``qseg serve``: the segmenters as an HTTP service (``pip install 'qseg[serve]'``)."""

from __future__ import annotations

import argparse
import os
from dataclasses import fields
from typing import IO

from qseg.cli.common import at_least_one


def configure(serve: argparse.ArgumentParser) -> None:
    from qseg.service.config import DEFAULT_HOST, TOKEN_VARIABLE, Limits

    serve.description = (
        "Serve the segmenters over HTTP: POST /segment, GET /methods, /healthz, /readyz, "
        "/metrics, /docs. Everything served is opened (stores built where needed) before the "
        "port is bound; requests choose among the served names only. See docs/service.md."
    )
    serve.add_argument(
        "--method",
        action="append",
        metavar="SPEC",
        help="a method spec, model file or shipped model's name to serve, under that text "
        "(repeatable; the first is the default of requests; default: the shipped default model)",
    )
    serve.add_argument(
        "--host", default=DEFAULT_HOST, help="address to bind (default: %(default)s)"
    )
    serve.add_argument("--port", type=int, default=8000, help="default: %(default)s")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default: 1)")
    serve.add_argument(
        "--token",
        help=f"require 'Authorization: Bearer TOKEN' on every route but /healthz (default: "
        f"${TOKEN_VARIABLE}; required to bind another address than the loopback)",
    )
    defaults = Limits()
    limits = serve.add_argument_group("limits (over them: 413 or 422 naming the limit)")
    for limit in fields(Limits):
        limits.add_argument(
            f"--max-{limit.name}",
            type=int,
            default=getattr(defaults, limit.name),
            metavar="N",
            help=f"{limit.name}: default %(default)s",
        )
    serve.add_argument(
        "--drain-seconds",
        type=float,
        default=2.0,
        metavar="S",
        help="after SIGTERM, answer new requests with 503 for S seconds while those in flight "
        "finish (default: %(default)s)",
    )
    serve.add_argument(
        "--prepare",
        action="store_true",
        help="build everything the served methods need into the cache, then exit (for images "
        "and deploy steps)",
    )
    serve.set_defaults(run=run)


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.service.config import TOKEN_VARIABLE, Limits, ServiceConfig

    at_least_one(args.workers, "--workers")
    if not 0 <= args.port <= 65535:
        raise _usage(f"--port {args.port} is not a port (0 to 65535)")
    if args.drain_seconds < 0:
        raise _usage("--drain-seconds must be >= 0")
    limits = Limits(**{f.name: getattr(args, f"max_{f.name}") for f in fields(Limits)})
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    config = ServiceConfig(tuple(args.method or ()), limits, token)
    if args.prepare:
        from qseg.service.served import open_served

        served = open_served(config.methods)
        out.write(f"ready to serve: {', '.join(served)}\n")
        return
    from qseg.service.server import serve

    serve(config, host=args.host, port=args.port, workers=args.workers, drain=args.drain_seconds)


def _usage(message: str) -> Exception:
    from qseg.errors import QsegError

    return QsegError(message)
