"""``qseg serve`` under load, and the memory of its workers.

Load (default): one ``qseg serve`` worker pinned to core 1, on 127.0.0.1 and a free port, and
``wrk`` (the compiled load generator: ``apt-get install wrk``) pinned to core 0 with
``--connections`` connections, for ``--seconds`` a row: ``GET /healthz`` (the HTTP stack
without a body or segmenting), then single-query requests and requests of 100 queries
(Webis-QSeC-10 queries, each request the next ones) for ``never-split`` (a no-op segmenter:
the ceiling of ``POST /segment``, what the request and its answer cost), ``naive`` (next to
nothing), ``wiki(unseen_titles=true)`` and the default model. Each row gives requests/s,
queries/s, the p50/p99 latency of a request (wrk's), the errors (non-2xx answers and socket
errors; must be 0), its requests/s as a share of the no-op segmenter's with requests of the
same size, and the ratio of its queries/s to the same segmenter in process on one pinned core
(``segment`` one query at a time for single-query requests, ``segment_many`` for batches),
measured in this process in the same run.

Memory (``--memory``): for ``qseg serve`` (gunicorn arbiter, workers forked after the
segmenters are opened) and ``uvicorn --workers`` (workers spawned, each opening them itself),
at 1, 2 and 4 workers serving the default model, each worker's RSS, PSS and private memory
(``/proc/PID/smaps_rollup``) after 200 requests, averaged over the workers.

    python benchmarks/service.py [--shared ../shared] [--seconds 10] [--connections 8]
    python benchmarks/service.py --memory
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402  (after the thread settings: the servers inherit them)
import json  # noqa: E402
import re  # noqa: E402
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
NO_OP = "never-split"
"""The segmenter whose requests measure the ceiling of ``POST /segment``."""
METHODS = (NO_OP, "naive", "wiki(unseen_titles=true)", "default")
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


WRK_SCRIPT = """
local bodies = {}
for line in io.lines(os.getenv("QSEG_BODIES")) do bodies[#bodies + 1] = line end
local next_body = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  next_body = next_body % #bodies + 1
  return wrk.format(nil, "/segment", nil, bodies[next_body])
end
"""


def run_wrk(url: str, bodies: Path | None, seconds: float, connections: int) -> dict[str, float]:
    """``wrk`` on core 0 against ``url`` (``GET /healthz`` without ``bodies``, else POSTs
    of the bodies in turn): requests/s, p50/p99 in ms, errors."""
    wrk = shutil.which("wrk")
    if wrk is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    command = ["taskset", "-c", "0", wrk, "-t1", f"-c{connections}", f"-d{seconds:g}s"]
    command += ["--latency", "--timeout", "10s"]
    env = dict(os.environ)
    if bodies is not None:
        script = bodies.with_suffix(".lua")
        script.write_text(WRK_SCRIPT)
        command += ["-s", str(script)]
        env["QSEG_BODIES"] = str(bodies)
        url = url.rstrip("/")
    else:
        url += "/healthz"
    output = subprocess.run([*command, url], capture_output=True, text=True, env=env, check=True)
    text = output.stdout
    found = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", text, re.MULTILINE))
    errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", text))
    errors += sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
    return {
        "requests": int(re.search(r"(\d+) requests in", text).group(1)),
        "rps": float(re.search(r"Requests/sec:\s+(\S+)", text).group(1)),
        "p50": milliseconds(found["50"]),
        "p99": milliseconds(found["99"]),
        "errors": errors,
    }


def milliseconds(value: str) -> float:
    """wrk's latency (``812.00us``, ``1.20ms``, ``2.01s``) in milliseconds."""
    for unit, scale in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if value.endswith(unit):
            return float(value[: -len(unit)]) * scale
    raise ValueError(f"not a wrk latency: {value}")


def in_process_rates(method: str, queries: list[str]) -> tuple[float, float]:
    """Queries/s of ``method`` on this process's pinned core: one at a time, in batches."""
    import qseg

    segmenter = qseg.segmenter(method)
    list(segmenter.segment_many(queries[:200]))
    single = batch = 0.0
    for _ in range(3):
        began = time.perf_counter()
        for query in queries:
            segmenter.segment(query)
        single = max(single, len(queries) / (time.perf_counter() - began))
        began = time.perf_counter()
        list(segmenter.segment_many(queries))
        batch = max(batch, len(queries) / (time.perf_counter() - began))
    return single, batch


def run_load(queries: list[str], args: argparse.Namespace) -> None:
    os.sched_setaffinity(0, {0})
    folder = Path(tempfile.mkdtemp(prefix="qseg-bench-wrk-"))
    print(
        "| route / method | request | requests | requests/s | queries/s | p50 ms | p99 ms | "
        "errors | of the no-op's requests/s | in process queries/s | service / in process |"
        f"\n|{'---|' * 11}"
    )
    ceiling: dict[int, float] = {}
    try:
        for method in METHODS:
            single, batch = in_process_rates(method, queries)
            port = free_port()
            command = ["taskset", "-c", "1", *serve_command(method, port, 1)]
            server = start(command, {}, port)
            try:
                url = f"http://127.0.0.1:{port}"
                if method == NO_OP:
                    row = run_wrk(url, None, args.seconds, args.connections)
                    print(
                        f"| `GET /healthz` | | {row['requests']:,} | {row['rps']:,.0f} | | "
                        f"{row['p50']:.2f} | {row['p99']:.2f} | {row['errors']} | | | |",
                        flush=True,
                    )
                for size, local in ((1, single), (BATCH, batch)):
                    bodies = folder / f"bodies-{size}.jsonl"
                    with bodies.open("w", encoding="utf-8") as out:
                        for first in range(0, len(queries) - size, size):
                            chunk = queries[first : first + size]
                            out.write(json.dumps({"queries": chunk, "method": method}) + "\n")
                    run_wrk(url, bodies, 2, args.connections)  # warm up
                    row = run_wrk(url, bodies, args.seconds, args.connections)
                    kind = "1 query" if size == 1 else f"{size} queries"
                    qps = row["rps"] * size
                    ceiling.setdefault(size, row["rps"])
                    print(
                        f"| `{method}` | {kind} | {row['requests']:,} | {row['rps']:,.0f} | "
                        f"{qps:,.0f} | {row['p50']:.2f} | {row['p99']:.2f} | {row['errors']} | "
                        f"{row['rps'] / ceiling[size]:.2f} | {local:,.0f} | {qps / local:.3f} |",
                        flush=True,
                    )
            finally:
                stop(server)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
    parser.add_argument("--seconds", type=float, default=10, help="how long a row")
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
