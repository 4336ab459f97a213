"""Throughput of the n-gram segmenters on the Webis-QSeC-10 queries, on one core.

Every query is segmented from scratch: normalization, n-gram lookups, exact decoding and the
Segmentation object, with no cache of results across queries. Prints queries per second as the
median of several passes over all 3,848 queries (and the spread).

    python benchmarks/throughput.py [--shared ../shared] [--passes 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from qseg.corpora import read_queries
from qseg.resources import NgramCounts, TitleSet
from qseg.segmenters import NaiveSegmenter, WikiSegmenter
from qseg.segmenters.base import Segmenter

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "webis-qsec-10-training-set-"


def passes_per_second(segmenter: Segmenter, queries: list[str], passes: int) -> list[float]:
    rates = []
    for _ in range(passes):
        start = time.perf_counter()
        for _ in segmenter.segment_many(queries):
            pass
        rates.append(len(queries) / (time.perf_counter() - start))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args()
    corpus = args.shared / "data" / "webis-qsec-10-training"
    if not corpus.exists():
        sys.exit(f"skipped: Webis-QSeC-10 not found at {corpus} (pass --shared)")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    queries = [" ".join(w) for w in read_queries(corpus / f"{PREFIX}queries.txt").values()]
    counts = NgramCounts.from_file(corpus / "data" / f"{PREFIX}n-gram-web-frequencies-google.txt")
    titles = TitleSet.from_file(corpus / "data" / f"{PREFIX}n-gram-wikipedia-titles.txt")
    print(
        f"{len(queries)} Webis-QSeC-10 queries, {args.passes} passes, one core, Python "
        f"{sys.version.split()[0]}"
    )
    for name, segmenter in (
        ("naive", NaiveSegmenter(counts)),
        ("wiki", WikiSegmenter(counts, titles)),
    ):
        passes_per_second(segmenter, queries, 1)  # warm-up
        rates = passes_per_second(segmenter, queries, args.passes)
        print(
            f"{name:6s} {statistics.median(rates):>10,.0f} queries/s (median; "
            f"min {min(rates):,.0f}, max {max(rates):,.0f})"
        )
        long_query = " ".join(queries[:60]).split()[:200]
        start = time.perf_counter()
        for _ in range(100):
            segmenter.segment(" ".join(long_query))
        micros = (time.perf_counter() - start) / 100 * 1e6
        print(f"{name:6s} {micros:>10,.0f} microseconds for one 200-word query")


if __name__ == "__main__":
    main()
