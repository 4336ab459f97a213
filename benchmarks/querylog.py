"""The query-log method at scale: loading a synthetic log and segmenting with it.

Generates a log of Zipf-distributed words (the generator of ``build_speed.py``), loads it
(``QueryLog.from_file``: time and peak memory), and segments queries drawn from it with
``querylog(wiki=false)`` (Seg-Phase-1; every n-gram's statistics computed on first use, then
memoized) and, as the reference in the same process, ``naive`` on the built-in counts.

    python benchmarks/querylog.py [--queries 1000000] [--segment 2000]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from build_speed import generate

from qseg.resources.querylog import QueryLog
from qseg.segmenters.registry import create
from qseg.segmenters.rules.querylog import QueryLogSegmenter
from qseg.tables import render_table


def rate(segment, queries: list[str]) -> float:
    started = time.perf_counter()
    for query in queries:
        segment(query)
    return len(queries) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000, help="lines of the log")
    parser.add_argument("--segment", type=int, default=2000, help="queries segmented")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.txt"
        generate(path, args.queries)
        started = time.perf_counter()
        log = QueryLog.from_file(path)
        load = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with path.open(encoding="utf-8") as lines:
            queries = [next(lines).strip() for _ in range(args.segment)]
    naive = create("naive").segment
    reference = rate(naive, queries)
    cold = rate(QueryLogSegmenter(log, wiki=False).segment, queries)
    rows = [
        ["naive, built-in counts (reference)", f"{reference:,.0f}", "1.00"],
        ["querylog(wiki=false), first use", f"{cold:,.0f}", f"{cold / reference:.4f}"],
    ]
    print(f"{log!r}: loaded in {load:.1f} s, peak RSS {peak:,.0f} MB\n")
    print(render_table(["segmenter", "queries/s", "ratio"], rows))


if __name__ == "__main__":
    main()
