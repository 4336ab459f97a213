"""The cost of decoding by query length, for the default model and a rule-based method.

Pins the process to one core and every numeric library to one thread before any loads. For
each length, queries of that many words are made by drawing words of the Webis-QSeC-10
queries (seed 0), so every length has real words and real counts; up to 12 words a joint
model enumerates every candidate, a longer query goes by the k-best of the gap model, the
dynamic programs and the 8-word windows of its gaps. Printed per length: queries/s in batches
(``segment_many``, best of 3 passes over at least 200 queries), milliseconds per query one at
a time (``segment``, median), the ratio of the time per word to that of 5-word queries in the
same run, and ``wiki(unseen_titles=true)`` the same way.

    python benchmarks/long_queries.py [--shared ../shared] [--lengths 2 5 12 13 20 40 100 200 1000]
"""

from __future__ import annotations

import os

os.sched_setaffinity(0, {0})
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402  (after pinning: the libraries read their thread counts on load)
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = [2, 5, 8, 12, 13, 20, 40, 100, 200, 1000]
REFERENCE = 5


def batch_rate(segmenter, texts: list[str], passes: int = 3) -> float:
    rates = []
    for _ in range(passes):
        started = time.perf_counter()
        for _ in segmenter.segment_many(texts):
            pass
        rates.append(len(texts) / (time.perf_counter() - started))
    return max(rates)


def single_ms(segmenter, texts: list[str]) -> float:
    times = []
    for text in texts[:50]:
        started = time.perf_counter()
        segmenter.segment(text)
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--lengths", type=int, nargs="+", default=LENGTHS)
    args = parser.parse_args()
    path = (
        args.shared / "data" / "webis-qsec-10-training" / ("webis-qsec-10-training-set-queries.txt")
    )
    if not path.exists():
        raise SystemExit(f"Webis-QSeC-10 not found at {path} (../shared is absent)")
    import qseg

    words = [w for line in path.read_text().splitlines() for w in line.split("\t")[1].split()]
    rng = random.Random(0)
    lengths = sorted(set(args.lengths) | {REFERENCE})
    queries = {
        n: [" ".join(rng.choice(words) for _ in range(n)) for _ in range(max(200, 4000 // n))]
        for n in lengths
    }
    segmenters = {"default": qseg.segmenter(), "wiki": qseg.segmenter("wiki(unseen_titles=true)")}
    for segmenter in segmenters.values():  # built and mapped before timing
        list(segmenter.segment_many(queries[REFERENCE][:10]))
    rows = []
    for n in lengths:
        row = [n]
        for segmenter in segmenters.values():
            row += [batch_rate(segmenter, queries[n]), single_ms(segmenter, queries[n])]
        rows.append(row)
    base = {name: next(r for r in rows if r[0] == REFERENCE) for name in segmenters}
    print(
        "words  default q/s  default ms/query  per word vs 5   wiki q/s  wiki ms/query  "
        "per word vs 5"
    )
    for row in rows:
        n = row[0]
        cells = [f"{n:5d}"]
        for i, name in enumerate(segmenters):
            rate, ms = row[1 + 2 * i], row[2 + 2 * i]
            per_word = (REFERENCE * base[name][1 + 2 * i]) / (n * rate)
            cells += [f"{rate:11,.0f}", f"{ms:16.2f}", f"{per_word:13.2f}x"]
        print("  ".join(cells))


if __name__ == "__main__":
    main()
