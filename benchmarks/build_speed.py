"""Build speed of both engines on a synthetic query log: queries per second and peak memory.

Generates a log of N queries (default 10 million) of 1 to 8 words (the length distribution of
the AOL log in paper 003, Table 9, extended to short queries) drawn from a 200,000-word
vocabulary with Zipf-distributed word frequencies, then runs

    qseg build ngrams --from text --engine ENGINE --memory-limit 8GB --threads 2 -o OUT LOG

for each engine in a child process and samples the resident memory of the whole process tree
(Python, DuckDB, the Spark JVM and its Python workers) from /proc every 0.2 s.

    python benchmarks/build_speed.py [--queries 10000000] [--engines duckdb spark]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

LENGTHS = {1: 0.10, 2: 0.20, 3: 0.30, 4: 0.18, 5: 0.10, 6: 0.06, 7: 0.04, 8: 0.02}


def generate(path: Path, n: int, seed: int = 11) -> None:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(200_000)])
    weights = 1 / np.arange(1, len(vocab) + 1) ** 1.05
    weights /= weights.sum()
    lengths = rng.choice(list(LENGTHS), size=n, p=list(LENGTHS.values()))
    words = vocab[rng.choice(len(vocab), size=int(lengths.sum()), p=weights)]
    ends = np.cumsum(lengths)
    with open(path, "w", encoding="utf-8") as out:
        start = 0
        for chunk in range(0, n, 100_000):
            stop = ends[min(chunk + 100_000, n) - 1]
            block = words[start:stop]
            cuts = ends[chunk : chunk + 100_000] - start
            pieces = np.split(block, cuts[:-1])
            out.write("\n".join(" ".join(p) for p in pieces) + "\n")
            start = stop


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
        stack.extend(children.get(current, []))
    return total


def run(command: list[str]) -> tuple[float, int, str]:
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]

    def sample() -> None:
        while process.poll() is None:
            peak[0] = max(peak[0], tree_rss(process.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = process.communicate()
    sampler.join()
    if process.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{err}")
    return time.perf_counter() - start, peak[0], err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000_000)
    parser.add_argument("--engines", nargs="+", default=["duckdb", "spark"])
    parser.add_argument("--max-order", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.txt"
        start = time.perf_counter()
        generate(log, args.queries)
        print(
            f"generated {args.queries:,} queries ({log.stat().st_size / 1e6:,.0f} MB) in "
            f"{time.perf_counter() - start:.0f} s"
        )
        stores = {}
        for engine in args.engines:
            out = Path(tmp) / f"{engine}.qseg"
            seconds, peak, _ = run(
                [
                    sys.executable,
                    "-m",
                    "qseg",
                    "build",
                    "ngrams",
                    "--from",
                    "text",
                    "--engine",
                    engine,
                    "--max-order",
                    str(args.max_order),
                    "--memory-limit",
                    "8GB",
                    "--threads",
                    "2",
                    "--quiet",
                    "-o",
                    str(out),
                    str(log),
                ]
            )
            stores[engine] = out
            from qseg.resources.store import Store

            info = Store.open(out).info
            print(
                f"{engine:7s} {seconds:7.1f} s  {args.queries / seconds:>10,.0f} queries/s  "
                f"peak memory {peak / 1e9:.2f} GB  {info.entries:,} distinct n-grams"
            )
        if len(stores) == 2:
            a, b = (path.read_bytes() for path in stores.values())
            from qseg.resources.store import HEADER_REGION

            same = a[HEADER_REGION:] == b[HEADER_REGION:]
            print(f"stores of the two engines identical past the header: {same}")


if __name__ == "__main__":
    main()
