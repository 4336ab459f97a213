"""Throughput of the n-gram segmenters on the Webis-QSeC-10 queries, counts served from stores.

Builds exact and compact stores of the corpus's Web1T counts and Wikipedia titles with
``qseg build`` (DuckDB) in a temporary folder, opens them memory-mapped, and segments all
3,848 queries: every query from scratch (normalization, store lookups, exact decoding, the
Segmentation object; no cache of results), on one core, as the median of several passes.
Then:

- the same with a cache of results (``CachedSegmenter``) on a heavy-tailed stream of the
  queries, the separate feature, with its hit rate;
- two processes, each on its own core, sharing one store file (the page cache holds one copy);
- the built-in default resources;
- one 200-word query.

    python benchmarks/throughput.py [--shared ../shared] [--passes 7]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "webis-qsec-10-training-set-"

WORKER = r"""
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
from qseg.corpora import read_queries
from qseg.resources import NgramCounts, TitleSet
from qseg.segmenters import WikiSegmenter
queries = [" ".join(w) for w in read_queries(sys.argv[2]).values()]
seg = WikiSegmenter(NgramCounts.from_file(sys.argv[3]), TitleSet.from_file(sys.argv[4]))
for _ in seg.segment_many(queries):
    pass
print("ready", flush=True)
sys.stdin.readline()
start = time.perf_counter()
n = 0
for _ in range(int(sys.argv[5])):
    for _ in seg.segment_many(queries):
        n += 1
print(n / (time.perf_counter() - start), flush=True)
"""


def rates(segmenter, queries: list[str], passes: int) -> list[float]:
    result = []
    for _ in range(passes):
        start = time.perf_counter()
        for _ in segmenter.segment_many(queries):
            pass
        result.append(len(queries) / (time.perf_counter() - start))
    return result


def show(label: str, values: list[float]) -> None:
    print(
        f"{label:44s} {statistics.median(values):>10,.0f} queries/s "
        f"(median of {len(values)}; min {min(values):,.0f}, max {max(values):,.0f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args()
    corpus = args.shared / "data" / "webis-qsec-10-training"
    if not corpus.exists():
        sys.exit(f"skipped: Webis-QSeC-10 not found at {corpus} (pass --shared)")
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[0]})

    from qseg.corpora import read_queries
    from qseg.resources import NgramCounts, TitleSet
    from qseg.resources.builders import build_ngrams, build_titles
    from qseg.segmenters import NaiveSegmenter, WikiSegmenter, create
    from qseg.segmenters.cache import CachedSegmenter

    query_file = corpus / f"{PREFIX}queries.txt"
    queries = [" ".join(w) for w in read_queries(query_file).values()]
    counts_file = corpus / "data" / f"{PREFIX}n-gram-web-frequencies-google.txt"
    titles_file = corpus / "data" / f"{PREFIX}n-gram-wikipedia-titles.txt"
    print(f"{len(queries)} Webis-QSeC-10 queries, one core, Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory() as tmp:
        stores = {}
        for mode in ("exact", "compact"):
            counts = build_ngrams(
                [counts_file], Path(tmp) / f"counts-{mode}.qseg", mode=mode, quiet=True
            )
            titles = build_titles(
                [titles_file],
                Path(tmp) / f"titles-{mode}.qseg",
                mode=mode,
                single_words=True,
                quiet=True,
            )
            stores[mode] = (counts.path, titles.path)
            counts_store = NgramCounts.from_file(counts.path)
            title_store = TitleSet.from_file(titles.path)
            for name, segmenter in (
                ("naive", NaiveSegmenter(counts_store)),
                ("wiki", WikiSegmenter(counts_store, title_store)),
            ):
                rates(segmenter, queries, 1)  # warm-up: page the store in
                show(f"{name}, {mode} store, from scratch", rates(segmenter, queries, args.passes))

        counts_store = NgramCounts.from_file(stores["exact"][0])
        title_store = TitleSet.from_file(stores["exact"][1])
        rng = random.Random(1)
        weights = [1 / (rank + 1) for rank in range(len(queries))]
        stream = rng.choices(queries, weights=weights, k=100_000)
        cached = CachedSegmenter(WikiSegmenter(counts_store, title_store), size=10_000)
        values = rates(cached, stream, 3)
        show("wiki, exact store, with a 10k result cache", [v for v in values])
        print(
            f"{'':44s} (Zipf stream of 100,000 queries; hit rate "
            f"{cached.hits / (cached.hits + cached.misses):.3f})"
        )

        if len(cores) >= 2:
            workers = [
                subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        WORKER,
                        str(core),
                        str(query_file),
                        str(stores["exact"][0]),
                        str(stores["exact"][1]),
                        str(args.passes),
                    ],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                for core in cores[:2]
            ]
            for worker in workers:
                assert worker.stdout.readline().strip() == "ready"
            for worker in workers:
                worker.stdin.write("go\n")
                worker.stdin.flush()
            each = [float(worker.communicate()[0]) for worker in workers]
            print(
                f"{'wiki, 2 processes sharing one exact store':44s} {sum(each):>10,.0f} "
                f"queries/s in all ({', '.join(f'{v:,.0f}' for v in each)} per process)"
            )

    default = create("wiki(unseen_titles=true)")
    rates(default, queries, 1)
    show("wiki(unseen_titles=true), built-in resources", rates(default, queries, args.passes))
    naive = create("naive")
    rates(naive, queries, 1)
    show("naive, built-in counts", rates(naive, queries, args.passes))

    long_query = " ".join(" ".join(queries[:60]).split()[:200])
    start = time.perf_counter()
    for _ in range(100):
        default.segment(long_query)
    print(
        f"{'one 200-word query, default method':44s} "
        f"{(time.perf_counter() - start) / 100 * 1e6:>10,.0f} microseconds"
    )


if __name__ == "__main__":
    main()
