"""Segmenting a query log on Spark: queries/s at local[1] and local[2] beside one process.

The input is Webis-QSeC-10's 3,848 training queries (``id<TAB>query``) repeated to
``--queries`` lines (default 1,000,000) in one file. For each method (the default model and
``wiki(unseen_titles=true)``): the in-process ``segment_many`` rate of the same segmenter on
the same queries (one process, the reference), then for each master a fresh process with a
fresh Spark session -- its start-up (the JVM and a first job) timed apart -- running
``segment_files`` (what ``qseg segment --engine spark`` runs) on the file, the rate counted
from the job alone, and its ratio to the reference. The output is checked to have one line
per query, then removed.

    python benchmarks/spark_segment.py [--shared ../shared] [--queries 1000000]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

QUERY_FILE = "data/webis-qsec-10-training/webis-qsec-10-training-set-queries.txt"
METHODS = ("default", "wiki(unseen_titles=true)")
MASTERS = ("local[1]", "local[2]")


def run_child(method: str, master: str, source: Path) -> None:
    """One Spark run in this fresh process: start-up seconds, segmenting seconds, lines."""
    from qseg.integrations import spark as on_spark
    from qseg.models import open_segmenter

    segmenter = open_segmenter(method)
    output = source.parent / f"out-{os.getpid()}"
    began = time.perf_counter()
    with on_spark.spark_session(master) as spark:
        spark.sparkContext.parallelize([0]).count()  # the JVM and a first job
        started = time.perf_counter() - began
        began = time.perf_counter()
        outcome = on_spark.segment_files(spark, [str(source)], str(output), segmenter)
        seconds = time.perf_counter() - began
    shutil.rmtree(output)
    print(json.dumps([started, seconds, outcome.lines]))


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        run_child(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared"
    )
    parser.add_argument("--queries", type=int, default=1_000_000)
    args = parser.parse_args()
    path = args.shared / QUERY_FILE
    if not path.exists():
        sys.exit(f"Webis-QSeC-10 queries not found at {path} (../shared is absent)")
    from qseg.models import open_segmenter

    lines = path.read_text(encoding="utf-8").splitlines()
    work = Path(tempfile.mkdtemp(prefix="qseg-spark-bench-"))
    try:
        source = work / "queries.txt"
        with open(source, "w", encoding="utf-8") as handle:
            for i in range(args.queries):
                handle.write(lines[i % len(lines)] + "\n")
        texts = [line.split("\t", 1)[1] for line in lines]
        print(f"{args.queries:,} queries ({source.stat().st_size / 1e6:.0f} MB)")
        print(
            "| method | run | start-up s | segmenting s | queries/s | x one process |\n"
            "|---|---|---:|---:|---:|---:|"
        )
        for method in METHODS:
            segmenter = open_segmenter(method)
            sample = [texts[i % len(texts)] for i in range(min(args.queries, 200_000))]
            list(segmenter.segment_many(sample[:2000]))
            began = time.perf_counter()
            list(segmenter.segment_many(sample))
            local = len(sample) / (time.perf_counter() - began)
            print(
                f"| `{method}` | one process, segment_many | | | {local:,.0f} | 1.00 |", flush=True
            )
            for master in MASTERS:
                child = subprocess.run(
                    [sys.executable, __file__, "--child", method, master, str(source)],
                    capture_output=True,
                    text=True,
                )
                if child.returncode:
                    sys.exit(child.stderr.strip().splitlines()[-1])
                started, seconds, written = json.loads(child.stdout.strip().splitlines()[-1])
                if written != args.queries:
                    sys.exit(f"{master}: {written:,} lines written, not {args.queries:,}")
                rate = args.queries / seconds
                print(
                    f"| `{method}` | Spark {master} | {started:.1f} | {seconds:.1f} | "
                    f"{rate:,.0f} | {rate / local:.2f} |",
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
