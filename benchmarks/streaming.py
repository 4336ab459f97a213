"""Streaming: ``qseg segment`` on a file, through a pipe, as a co-process and line-buffered.

Pins every process to one core and every numeric library to one thread, then runs
``qseg segment`` (the default model, and ``--method naive``) on Webis-QSeC-10 queries
(``id<TAB>query`` lines, the 3,848 of the training set repeated), a fresh process a run:

- (a) a regular file on stdin (``qseg segment < FILE``): batches of 4,096, the reference;
- (b) the same lines all at once through a pipe (``cat FILE | qseg segment``): batches of
  whatever is in the pipe;
- (c) a co-process: one query written, its answer read back, then the next; the round trip
  per query (median, ms) and queries/s over them all;
- (d) ``--line-buffered`` on the file: each query answered and flushed alone;
- (e) ``--line-buffered`` through the pipe: what answering every line alone would cost a fast
  pipe (the adaptive batches of (b) are there to avoid it).

Queries/s leave out start-up: the median time of the same command on empty input is taken
off each run's time. Each figure is the median of the rounds, run interleaved so that drift of
the machine hits every input alike; the ratios are to (a) measured in the same run. The
output of (a), (b), (d) and (e) is checked to be the same. PYTHONUNBUFFERED is removed from
the environment: output is buffered as users have it.

    python benchmarks/streaming.py [--shared ../shared] [--rounds 3] [--round-trips 2000]
"""

from __future__ import annotations

import os

os.sched_setaffinity(0, {0})
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"
os.environ.pop("PYTHONUNBUFFERED", None)

import argparse  # noqa: E402  (after pinning: the children inherit the environment)
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUERY_FILE = "data/webis-qsec-10-training/webis-qsec-10-training-set-queries.txt"
REPEATS = {"default": 2, "naive": 20}
"""Passes over the 3,848 queries per method: a run of (a) of about half a second."""
ROWS = {
    "a": "(a) file",
    "b": "(b) cat file | (pipe)",
    "c": "(c) co-process, one at a time",
    "d": "(d) --line-buffered, file",
    "e": "(e) --line-buffered, pipe",
}


def qseg_command(method: str, *flags: str) -> list[str]:
    qseg = shutil.which("qseg", path=str(Path(sys.executable).parent)) or "qseg"
    return [qseg, "segment", "--method", method, *flags]


def from_file(command: list[str], queries: Path, output: Path) -> float:
    """Wall time of ``command < queries > output``."""
    with queries.open("rb") as stdin, output.open("wb") as stdout:
        started = time.perf_counter()
        subprocess.run(command, stdin=stdin, stdout=stdout, check=True)
        return time.perf_counter() - started


def through_pipe(command: list[str], queries: Path, output: Path) -> float:
    """Wall time of ``cat queries | command > output``."""
    with output.open("wb") as stdout:
        started = time.perf_counter()
        cat = subprocess.Popen(["cat", str(queries)], stdout=subprocess.PIPE)
        subprocess.run(command, stdin=cat.stdout, stdout=stdout, check=True)
        assert cat.stdout is not None
        cat.stdout.close()
        cat.wait()
        return time.perf_counter() - started


def round_trips(command: list[str], queries: list[bytes]) -> list[float]:
    """Seconds from writing each query to reading its answer, one query at a time (the
    first, which waits for start-up, is left out)."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    times = []
    try:
        for query in queries:
            started = time.perf_counter()
            process.stdin.write(query)
            process.stdin.flush()
            if not process.stdout.readline():
                raise SystemExit(f"{' '.join(command)}: no answer")
            times.append(time.perf_counter() - started)
    finally:
        process.stdin.close()
        process.wait()
    return times[1:]


def startup(command: list[str]) -> float:
    """Wall time of the command on empty input."""
    started = time.perf_counter()
    subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def measure(
    method: str, queries: Path, lines: list[bytes], folder: Path, rounds: int, trips: int
) -> tuple[dict[str, float], float, float]:
    """Queries/s of each input (c: over the round trips), the median round trip, and the
    start-up time taken off; checks that the outputs agree."""
    plain, buffered = qseg_command(method), qseg_command(method, "--line-buffered")
    runs: dict[str, tuple[Callable[[list[str], Path, Path], float], list[str]]] = {
        "a": (from_file, plain),
        "b": (through_pipe, plain),
        "d": (from_file, buffered),
        "e": (through_pipe, buffered),
    }
    times: dict[str, list[float]] = {key: [] for key in runs}
    starts, trip_times = [], []
    startup(plain)  # warm-up: the cache and the page cache
    for _ in range(rounds):
        starts.append(startup(plain))
        for key, (run, command) in runs.items():
            times[key].append(run(command, queries, folder / f"{method}-{key}.txt"))
        trip_times.extend(round_trips(plain, lines[: trips + 1]))
    outputs = {(folder / f"{method}-{key}.txt").read_bytes() for key in runs}
    if len(outputs) != 1:
        raise SystemExit(f"{method}: the inputs gave different outputs")
    start = statistics.median(starts)
    rates = {key: len(lines) / (statistics.median(t) - start) for key, t in times.items()}
    rates["c"] = len(trip_times) / sum(trip_times)
    return rates, statistics.median(trip_times), start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each input")
    parser.add_argument("--round-trips", type=int, default=2000, help="co-process queries a run")
    args = parser.parse_args()
    source = args.shared / QUERY_FILE
    if not source.exists():
        raise SystemExit(f"Webis-QSeC-10 queries not found at {source} (../shared is absent)")
    webis = source.read_bytes().splitlines(keepends=True)
    folder = Path(tempfile.mkdtemp(prefix="qseg-streaming-"))
    table = []
    try:
        for method, repeats in REPEATS.items():
            lines = webis * repeats
            queries = folder / f"{method}.txt"
            queries.write_bytes(b"".join(lines))
            rates, trip, start = measure(
                method, queries, lines, folder, args.rounds, args.round_trips
            )
            table.append((method, len(lines), rates, trip, start))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"one core: {sorted(os.sched_getaffinity(0))}; Webis-QSeC-10 queries; "
        f"median of {args.rounds} rounds; start-up taken off"
    )
    print(
        f"{'method':8} {'input':32} {'queries':>8} {'queries/s':>10} {'x (a)':>7} {'ms/query':>9}"
    )
    for method, count, rates, trip, start in table:
        for key, name in ROWS.items():
            shown = f"{args.round_trips:,}" if key == "c" else f"{count:,}"
            latency = f"{trip * 1000:9.3f}" if key == "c" else ""
            ratio = rates[key] / rates["a"]
            print(f"{method:8} {name:32} {shown:>8} {rates[key]:10,.0f} {ratio:7.3f} {latency}")
        print(f"{method:8} {'start-up (empty input), s':32} {'':>8} {start:10.3f}")


if __name__ == "__main__":
    main()
