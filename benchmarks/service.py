"""``qseg serve`` under load, and the memory of its workers.

Load (default): for ``wiki(unseen_titles=true)`` and the default model, at 1 and 2 workers,
a fresh ``qseg serve`` on 127.0.0.1 and a free port is sent Webis-QSeC-10 queries by an
asyncio load generator (httpx, ``--connections`` concurrent connections), bounded both in
requests and in seconds: single-query requests, then batches of 100. Each row gives queries/s,
the p50/p95/p99 latency of a request, the errors (anything but a 200 with the right number of
answers; must be 0), and the ratio of its queries/s to the in-process ``segment_many`` rate
of the same segmenter on the same queries, measured in this process in the same run (the
service's overhead). Client and server share this machine's cores, so the rates are what one
machine holds with its load generator on it.

Memory (``--memory``): for ``qseg serve`` (gunicorn arbiter, workers forked after the
segmenters are opened) and ``uvicorn --workers`` (workers spawned, each opening them itself),
at 1, 2 and 4 workers serving the default model, each worker's RSS, PSS and private memory
(``/proc/PID/smaps_rollup``) after 200 requests, averaged over the workers.

    python benchmarks/service.py [--shared ../shared] [--requests 4000] [--seconds 20]
    python benchmarks/service.py --memory
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402  (after the thread settings: the servers inherit them)
import asyncio  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import httpx  # noqa: E402

QUERY_FILE = "data/webis-qsec-10-training/webis-qsec-10-training-set-queries.txt"
METHODS = ("wiki(unseen_titles=true)", "default")
BATCH = 100


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(command: list[str], env: dict[str, str], port: int) -> subprocess.Popen:
    """A server process, returned once ``/readyz`` answers 200."""
    process = subprocess.Popen(
        command, env=os.environ | env, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"the server exited: {process.stderr.read().decode()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    stop(process)
    sys.exit("the server was not ready within 300 s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def serve_command(method: str, port: int, workers: int) -> list[str]:
    qseg = shutil.which("qseg", path=str(Path(sys.executable).parent)) or "qseg"
    return [qseg, "serve", "--method", method, "--port", str(port), "--workers", str(workers)]


async def load(
    url: str, method: str, queries: list[str], size: int, requests: int, seconds: float, conns: int
) -> dict[str, float]:
    """Send up to ``requests`` requests of ``size`` queries (or for ``seconds``) over
    ``conns`` connections; the rate in queries/s, latency percentiles in ms, errors."""
    latencies: list[float] = []
    errors = 0
    sent = 0
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=conns, max_keepalive_connections=conns)

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal errors, sent
        while sent < requests and time.perf_counter() < deadline:
            first = (sent * size) % (len(queries) - size)
            sent += 1
            body = {"queries": queries[first : first + size], "method": method}
            began = time.perf_counter()
            try:
                answer = await client.post("/segment", json=body)
                good = answer.status_code == 200 and len(answer.json()["results"]) == size
            except httpx.HTTPError:
                good = False
            latencies.append(time.perf_counter() - began)
            errors += not good

    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        began = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(conns)))
        elapsed = time.perf_counter() - began
    cuts = statistics.quantiles(latencies, n=100)
    return {
        "requests": len(latencies),
        "qps": len(latencies) * size / elapsed,
        "p50": cuts[49] * 1000,
        "p95": cuts[94] * 1000,
        "p99": cuts[98] * 1000,
        "errors": errors,
    }


def in_process_rate(method: str, queries: list[str]) -> float:
    import qseg

    segmenter = qseg.segmenter(method)
    list(segmenter.segment_many(queries[:200]))
    began = time.perf_counter()
    list(segmenter.segment_many(queries))
    return len(queries) / (time.perf_counter() - began)


def run_load(queries: list[str], args: argparse.Namespace) -> None:
    print(
        f"| method | workers | request | requests | queries/s | p50 ms | p95 ms | p99 ms | errors "
        f"| in-process queries/s | service / in-process |\n|{'---|' * 11}"
    )
    for method in METHODS:
        local = in_process_rate(method, queries)
        for workers in (1, 2):
            port = free_port()
            server = start(serve_command(method, port, workers), {}, port)
            try:
                url = f"http://127.0.0.1:{port}"
                for size, requests in ((1, args.requests), (BATCH, max(args.requests // 20, 20))):
                    asyncio.run(load(url, method, queries, size, 50, 5, args.connections))  # warm
                    row = asyncio.run(
                        load(url, method, queries, size, requests, args.seconds, args.connections)
                    )
                    kind = "1 query" if size == 1 else f"{size} queries"
                    print(
                        f"| `{method}` | {workers} | {kind} | {row['requests']:,} | "
                        f"{row['qps']:,.0f} | {row['p50']:.2f} | {row['p95']:.2f} | "
                        f"{row['p99']:.2f} | {row['errors']} | {local:,.0f} | "
                        f"{row['qps'] / local:.3f} |",
                        flush=True,
                    )
            finally:
                stop(server)


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(child) for child in text]
    return found


def memory_of(pid: int) -> dict[str, float]:
    """RSS, PSS and private memory of a process in MB (``smaps_rollup``)."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value = line.split(":", 1)
        values[key] = int(value.split()[0])
    private = values["Private_Clean"] + values["Private_Dirty"]
    return {"rss": values["Rss"] / 1024, "pss": values["Pss"] / 1024, "private": private / 1024}


def run_memory(queries: list[str]) -> None:
    qseg = shutil.which("qseg", path=str(Path(sys.executable).parent)) or "qseg"
    uvicorn = shutil.which("uvicorn", path=str(Path(sys.executable).parent)) or "uvicorn"
    print(
        "| launcher | workers | RSS MB / worker | PSS MB / worker | private MB / worker | "
        f"PSS MB, all processes |\n|{'---|' * 6}"
    )
    for launcher in ("qseg serve (gunicorn, forked)", "uvicorn --workers (spawned)"):
        for workers in (1, 2, 4):
            port = free_port()
            folder = tempfile.mkdtemp(prefix="qseg-bench-metrics-")
            if launcher.startswith("qseg"):
                command = [qseg, "serve", "--port", str(port), "--workers", str(workers)]
            else:
                command = [
                    uvicorn,
                    "--factory",
                    "qseg.service.app:create_app",
                    "--port",
                    str(port),
                    "--workers",
                    str(workers),
                    "--log-level",
                    "warning",
                ]
            env = {"QSEG_SERVE_METHODS": "default", "PROMETHEUS_MULTIPROC_DIR": folder}
            server = start(command, env, port)
            try:
                with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
                    for start_at in range(0, 20_000, 100):
                        first = start_at % (len(queries) - 100)
                        client.post("/segment", json={"queries": queries[first : first + 100]})
                time.sleep(1)
                pids = [
                    pid
                    for pid in children(server.pid)
                    if "resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_text()
                ]
                # uvicorn with one worker serves in its own process
                per = [memory_of(pid) for pid in pids or [server.pid]]
                total = sum(memory_of(pid)["pss"] for pid in {server.pid, *pids})
                mean = {key: statistics.mean(m[key] for m in per) for key in per[0]}
                print(
                    f"| {launcher} | {len(per)} | {mean['rss']:.0f} | {mean['pss']:.0f} | "
                    f"{mean['private']:.0f} | {total:.0f} |",
                    flush=True,
                )
            finally:
                stop(server)
                shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared"
    )
    parser.add_argument("--requests", type=int, default=4000, help="single-query requests a row")
    parser.add_argument("--seconds", type=float, default=20, help="at most this long a row")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--memory", action="store_true", help="measure the workers' memory")
    args = parser.parse_args()
    path = args.shared / QUERY_FILE
    if not path.exists():
        sys.exit(f"Webis-QSeC-10 queries not found at {path} (../shared is absent)")
    queries = [line.split("\t", 1)[1] for line in path.read_text(encoding="utf-8").splitlines()]
    if args.memory:
        run_memory(queries)
    else:
        run_load(queries, args)


if __name__ == "__main__":
    main()
