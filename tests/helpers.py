"""Helpers shared by several test modules (plain functions and data, no fixtures: those
live in conftest.py, so that each runs once)."""

from __future__ import annotations

import gzip
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

from forkserver import main_status

from qseg.resources import NgramCounts, TitleSet
from qseg.segmenters.learned.gap_features import FeatureSource
from qseg.segmenters.learned.supervised import BreakClassifier
from qseg.segmenters.learned.trainable import Boosting

WORDS = {"new": 1000, "york": 500, "yankees": 80, "tickets": 90}
PHRASES = {"new york": 100, "york yankees": 50, "new york yankees": 40, "yankees tickets": 9}


def qseg(
    *args, stdin: bytes | str = b"", env: dict[str, str] | None = None, process: bool = False
) -> subprocess.CompletedProcess:
    """``qseg ARGS`` with ``stdin``: its status, stdout and stderr as bytes.

    Run in this process (``qseg.cli.main`` on streams in memory, as ``python -m qseg`` runs it
    on pipes), unless ``env`` adds to (or overrides) the environment or ``process`` asks for
    a process of its own: what a test of the process itself needs (its start, its import of
    libraries, what it says once a process, its signals) keep the real thing, and the docs'
    commands run in bash, each a process (forked: tests/forkserver.py). Starting Python and
    importing qseg for each of hundreds of commands was a sixth of the suite's time."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    if env is None and not process:
        return _in_process([str(arg) for arg in args], data)
    return subprocess.run(
        [sys.executable, "-m", "qseg", *map(str, args)],
        input=data,
        capture_output=True,
        timeout=120,
        # unbuffered output would hide a missing flush (PYTHONUNBUFFERED is set in some shells)
        env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | (env or {}),
    )


def _in_process(argv: list[str], data: bytes) -> subprocess.CompletedProcess:
    """``qseg.cli.main(argv)`` with stdin, stdout and stderr in memory (UTF-8, as on a pipe),
    this process's streams and signal handlers given back after it; an exception it lets out
    is a traceback on stderr and status 1, as the interpreter makes of it."""
    streams = sys.stdin, sys.stdout, sys.stderr
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    stdout, stderr = io.BytesIO(), io.BytesIO()
    # the wrappers kept here: one dropped would close the bytes it wraps
    text_in = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    text_out = io.TextIOWrapper(stdout, encoding="utf-8")
    text_err = io.TextIOWrapper(stderr, encoding="utf-8", line_buffering=True)
    sys.stdin, sys.stdout, sys.stderr = text_in, text_out, text_err
    try:
        status = main_status(argv)
    finally:
        text_out.flush()
        text_err.flush()
        sys.stdin, sys.stdout, sys.stderr = streams
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    return subprocess.CompletedProcess(
        ["qseg", *argv], status, stdout.getvalue(), stderr.getvalue()
    )


def adapted_default(folder: Path) -> Path:
    """The shipped default adapted to 60 toy queries (3 folds), saved in ``folder`` once: an
    adapted model file for the tests of every interface that takes a method."""
    import toy

    import qseg as qs
    from qseg.models import save

    path = folder / "adapted.qseg"
    if not path.is_file():
        save(qs.adapt("default", list(toy.gold(60)), folds=3), path)
    return path


def build_env() -> dict[str, str]:
    """What the tests that compile the package (the sdist's wheel, the Dockerfile's build) add
    to the environment: the kernels unoptimised (these test that it builds, not its speed),
    through ccache where it is installed, its cache under .pytest_cache (the two builds compile
    the same C: the second one, and a later run's, reuse the objects)."""
    env = {"CFLAGS": "-O0"}
    if shutil.which("ccache"):
        compiler = sysconfig.get_config_var("CC") or "cc"
        cache = Path(__file__).resolve().parents[1] / ".pytest_cache" / "ccache"
        env |= {"CC": f"ccache {compiler}", "CCACHE_DIR": str(cache)}
    return env


def out(result) -> str:
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def assert_one_line_error(result, *fragments, status=2):
    """One line on stderr naming every fragment; status 2 for a usage error, 1 for bad data."""
    err = result.stderr.decode()
    assert result.returncode == status, err
    assert "Traceback" not in err
    assert err.startswith("qseg: error: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err


def toy_source(titles=("new york yankees",)) -> FeatureSource:
    return FeatureSource(NgramCounts(PHRASES), NgramCounts(WORDS), TitleSet(titles))


def small(resources, **kw) -> BreakClassifier:
    """A classifier with small boosters and three inner folds (``kw``: other parameters)."""
    return BreakClassifier(
        resources, boosting=Boosting(n_estimators=20, max_depth=3), inner_folds=3, **kw
    )


def words_of(refs):
    return [r[0].segmentation.words for r in refs]


def make_web1t(root: Path, grams: dict[int, list[tuple[str, int]]], per_file: int = 2) -> Path:
    """A Web1T-layout folder: 1gms/vocab.gz and Ngms/Ngm-NNNN.gz with ``per_file`` lines each."""
    for order, rows in grams.items():
        folder = root / f"{order}gms"
        folder.mkdir(parents=True)
        chunks = [rows[i : i + per_file] for i in range(0, len(rows), per_file)] or [[]]
        for index, chunk in enumerate(chunks):
            name = "vocab.gz" if order == 1 else f"{order}gm-{index:04d}.gz"
            if order == 1 and index:
                break
            with gzip.open(folder / name, "wt", encoding="utf-8") as out:
                for ngram, count in rows if order == 1 else chunk:
                    out.write(f"{ngram}\t{count}\n")
    return root


WEB1T = {
    1: [("New", 500), ("new", 900), ("York", 300), ("york", 400), ("(", 10**6), ("city", 50)],
    2: [
        ("new york", 200),
        ("New York", 100),
        ("( new", 70),
        ("york city", 40),
        ("caf\u00e9 au", 3),
    ],
    3: [("new york city", 30), ("NEW YORK CITY", 5), ('" new york', 9)],
    4: [("new york city hall", 8)],
}


KRIPPENDORFF_2011 = """unit\tjudgeA\tjudgeB\tjudgeC\tjudgeD
1\t1\t1\t\t1
2\t2\t2\t3\t2
3\t3\t3\t3\t3
4\t3\t3\t3\t3
5\t2\t2\t2\t2
6\t1\t2\t3\t4
7\t4\t4\t4\t4
8\t1\t1\t2\t1
9\t2\t2\t2\t2
10\t\t5\t5\t5
11\t\t\t1\t1
12\t\t3\t\t
"""


class Server:
    """``qseg serve ARGS`` (or another serving command, ``qseg annotate``) on a port the
    server binds itself (``--port 0``: no race for a free port between test processes), read
    off its stderr; ready when ``/readyz`` says so. Its stderr is read as it comes (a full
    pipe would stall it) and given back by :meth:`stop`."""

    port: int | None = None

    def __init__(
        self,
        *args: str,
        token: str | None = None,
        env: dict[str, str] | None = None,
        command: str = "serve",
        host: str = "127.0.0.1",
        files: int | None = None,
    ):
        """``files``: the open files the server may have (``ulimit -n``, as a systemd unit
        gives 1,024)."""
        import httpx

        self.token = token
        command_line = [sys.executable, "-m", "qseg", command, "--port", "0", *args]
        if command == "serve" and "--drain-seconds" not in args:
            # no 503s after SIGTERM for a load balancer to see: stopping takes no 2 s (the
            # test of the drain gives its own)
            command_line += ["--drain-seconds", "0"]
        if host != "127.0.0.1":
            command_line += ["--host", host]
        self.process = subprocess.Popen(
            command_line,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ | (env or {}),
            start_new_session=True,
            preexec_fn=None if files is None else lambda: _limit_files(files),
        )
        self.lines: list[str] = []
        bound = threading.Event()
        self._reader = threading.Thread(target=self._read, args=(bound,), daemon=True)
        self._reader.start()
        if not bound.wait(180) or self.port is None:
            self.stop()
            raise AssertionError(f"qseg {command} did not bind: {''.join(self.lines)}")
        where = f"[{host}]" if ":" in host else host
        self.url = f"http://{where}:{self.port}"
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.url, headers=headers, timeout=60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self.http.get("/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise AssertionError("qseg serve was not ready within 60 s of binding")

    def _read(self, bound: threading.Event) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            line = raw.decode(errors="replace")
            self.lines.append(line)
            found = re.search(r"^qseg: serving .* on http://\S+:(\d+) ", line)
            if found and self.port is None:
                self.port = int(found.group(1))
                bound.set()
        bound.set()

    def log(self) -> str:
        """What the server has written on stderr so far."""
        return "".join(self.lines)

    def stop(self) -> str:
        """SIGTERM, then the server's stderr once it has exited."""
        if hasattr(self, "http"):
            self.http.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(10)
        return self.log()


def _limit_files(count: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))
