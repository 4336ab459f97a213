"""Running the service: gunicorn's arbiter with uvicorn workers, the application made once in
the arbiter before the workers are forked.

Why this launcher: the segmenters are opened (stores built where needed, models decoded and
warmed up) once, before any worker exists, and every worker is a fork of that process, so the
model arrays and imported libraries are shared pages in all of them, not a copy per worker
(uvicorn's own ``--workers`` spawns fresh interpreters that each load everything:
``benchmarks/service.py --memory`` measures both). The port is bound only once everything is
loaded, so nothing answers before the service can segment.

On SIGTERM each worker drains (:class:`DrainingServer`): it stops taking connections and for
``drain`` seconds answers what comes on the ones it has, closing each after its answer; then it
stops. A reload (SIGHUP: gunicorn starts new workers, then sends the old ones SIGTERM) is
thereby invisible to clients: no request is refused.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import signal
import sys
import tempfile
from types import FrameType
from typing import Any, ClassVar
from urllib.parse import quote

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from uvicorn import Server
from uvicorn_worker import UvicornWorker

from qseg.service.foundation.protocol import GuardedHttp
from qseg.service.foundation.settings import MULTIPROCESS_VARIABLE, Settings, check_binding


class DrainingServer(Server):
    """uvicorn's server, draining for ``drain`` seconds after SIGTERM before it stops: it
    stops listening at once (new connections go to the other workers: on a reload, the new
    ones gunicorn has started), answers every request that comes on a connection it has,
    each with ``Connection: close`` (the client reconnects, to another worker), and
    ``/readyz`` with 503 (a load balancer takes it out); then uvicorn's shutdown closes what
    is idle and waits for the requests in flight."""

    def __init__(self, config: Any, state: Any, drain: float) -> None:
        super().__init__(config)
        self.state = state
        self.drain = drain

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGTERM and self.drain > 0 and not self.state.draining:
            self.state.drain()
            GuardedHttp.draining = True
            # from the signal handler, only what is safe there: the rest in the event loop
            asyncio.get_event_loop().call_soon_threadsafe(self._begin_draining, sig, frame)
            return
        super().handle_exit(sig, frame)

    def _begin_draining(self, sig: int, frame: FrameType | None) -> None:
        for server in self.servers:
            server.close()  # the listening socket, not the connections
        asyncio.get_running_loop().call_later(self.drain, Server.handle_exit, self, sig, frame)


class DrainingWorker(UvicornWorker):
    """A gunicorn worker running :class:`DrainingServer` on the application it was forked
    with, speaking HTTP with :class:`~qseg.service.foundation.protocol.GuardedHttp` (time limits on
    incomplete requests, a bound on connections) and no WebSocket: the application has no
    WebSocket route, and an upgrade request is answered as the HTTP request it is."""

    CONFIG_KWARGS: ClassVar[dict[str, Any]] = {
        "loop": "auto",
        "http": GuardedHttp,
        "ws": "none",
        "proxy_headers": False,  # the application believes only its own forwarded_allow_ips
    }
    drain: float = 2.0
    """Set by :func:`serve` before the workers are forked."""

    async def _serve(self) -> None:
        self.config.app = self.wsgi
        settings: Settings = self.wsgi.state.settings
        GuardedHttp.configure(
            settings.header_seconds, settings.min_body_rate, settings.max_connections
        )
        server = DrainingServer(self.config, self.wsgi.state.service, self.drain)
        # SIGQUIT is the arbiter's "stop at once" (what SIGINT to it sends the workers):
        # uvicorn's own handler only marks the worker, which then served on until gunicorn
        # killed it a minute later
        asyncio.get_running_loop().add_signal_handler(signal.SIGQUIT, self._quit_now, server)
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)

    def _quit_now(self, server: Server) -> None:
        self.alive = False
        server.should_exit = True  # what is in flight finishes; idle connections close


class _Launcher(BaseApplication):
    """gunicorn run from Python on an application already made."""

    def __init__(self, application: Any, options: dict[str, Any]) -> None:
        self.application = application
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.application


def serve(
    settings: Settings,
    *,
    host: str,
    port: int,
    workers: int = 1,
    drain: float = 2.0,
    timeout: int = 60,
) -> None:
    """Open the served segmenters, then answer on ``host:port`` (0: a free port, named on
    stderr once bound) with ``workers`` processes until SIGTERM or SIGINT; with the
    annotation pages of ``settings.project`` if it names one."""
    check_binding(host, settings)
    own = MULTIPROCESS_VARIABLE not in os.environ
    if own:  # before prometheus_client is imported: the workers' metrics are summed
        os.environ[MULTIPROCESS_VARIABLE] = tempfile.mkdtemp(prefix="qseg-metrics-")
    try:
        from qseg.service.app import create_app
        from qseg.service.foundation.metrics import worker_exited
        from qseg.service.segmenting.served import open_served

        served = open_served(settings.methods, settings.phrases)
        app = create_app(settings, served)
        DrainingWorker.drain = drain
        where = f"[{host}]" if ":" in host else host

        def ready(arbiter: Arbiter) -> None:
            """Say where the service answers, the port as bound (``--port 0``)."""
            bound = arbiter.LISTENERS[0].sock.getsockname()[1]
            print(
                f"qseg: serving {', '.join(served)} on http://{where}:{bound} with {workers} "
                f"worker{'s' if workers > 1 else ''}",
                file=sys.stderr,
                flush=True,
            )
            if settings.project is not None:
                token = settings.secret
                login = f"login?token={quote(token, safe='')}" if token else ""
                print(
                    f"qseg: annotation pages: http://{where}:{bound}/{login}",
                    file=sys.stderr,
                    flush=True,
                )

        options = {
            "bind": f"{where}:{port}",
            "workers": workers,
            "worker_class": f"{__name__}.DrainingWorker",
            "graceful_timeout": math.ceil(drain) + timeout,
            "timeout": timeout,
            "keepalive": 5,
            "loglevel": "warning",
            "accesslog": None,
            "when_ready": ready,
            "child_exit": lambda arbiter, worker: worker_exited(worker.pid),
            "on_exit": lambda arbiter: print("qseg: stopped", file=sys.stderr, flush=True),
        }
        _Launcher(app, options).run()
    finally:
        if own:
            shutil.rmtree(os.environ.pop(MULTIPROCESS_VARIABLE), ignore_errors=True)
