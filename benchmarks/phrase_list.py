"""A phrase list of 1,000,000 phrases (``--phrases``): how long it takes to build once, to open
from the cache, and what it costs a query of the default's hot path, on one core.

Pins the process to one core and every numeric library to one thread before any loads,
writes a seeded list of 1,000,000 phrases of two to four words (made of the 3,848
Webis-QSeC-10 queries' words and 50,000 others, so that the queries' word pairs are looked up
for real) and 2,000 of the queries' own word pairs, builds it into a fresh cache, opens it
again (in this process and in a new one, the way a service worker or a command opens it), and
measures the default with and without the list, interleaved in each of :data:`ROUNDS` rounds
(after one of warming up), on the Webis queries one at a time: median and 99th percentile of
each query's best time, and the difference the list makes. It also checks that the list
keeps every listed phrase of each answer whole and that the compiled path's answers with the
list are the Python path's.

    python benchmarks/phrase_list.py [--shared ../shared]
"""

from __future__ import annotations

import os

os.sched_setaffinity(0, {0})
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402  (after pinning: the libraries read their thread counts on load)
import random  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from _timing import percentile, single_pass  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 3
PHRASES = 1_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    webis = args.shared / "data" / "webis-qsec-10-training"
    if not webis.exists():
        raise SystemExit(f"the corpora are not found under {args.shared} (../shared is absent)")
    folder = Path(tempfile.mkdtemp(prefix="qseg-bench-"))
    os.environ["QSEG_CACHE"] = str(folder / "cache")
    try:
        measure(webis, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(webis: Path, folder: Path) -> None:
    import qseg
    from qseg.corpora.webis import read_training_set
    from qseg.resources.phrase_list import phrase_list
    from qseg.segmenters.phrase_list import keeping_phrases

    queries = list(read_training_set(webis).words.values())
    texts = [" ".join(words) for words in queries]
    rng = random.Random(0)
    vocabulary = sorted({w for words in queries for w in words}) + [f"w{i}" for i in range(50_000)]
    pairs = sorted({" ".join(q[i : i + 2]) for q in queries for i in range(len(q) - 1)})
    listed = folder / "phrases.txt"
    with listed.open("w", encoding="utf-8") as handle:
        for _ in range(PHRASES - 2000):
            size = rng.randint(2, 4)
            handle.write(" ".join(rng.choice(vocabulary) for _ in range(size)) + "\n")
        for pair in rng.sample(pairs, 2000):
            handle.write(pair + "\n")
    started = time.perf_counter()
    phrase_list(listed)
    built = time.perf_counter() - started
    started = time.perf_counter()
    phrases = phrase_list(listed)
    opened = time.perf_counter() - started
    script = (
        "import time, sys; t = time.perf_counter(); from qseg.resources.phrase_list import "
        "phrase_list; p = phrase_list(sys.argv[1]); print(len(p), time.perf_counter() - t)"
    )
    fresh = subprocess.run(
        [sys.executable, "-c", script, str(listed)], capture_output=True, text=True, check=True
    )
    entries, fresh_seconds = fresh.stdout.split()
    plain = qseg.segmenter("default")
    kept = keeping_phrases(plain, phrases)
    python = keeping_phrases(plain.uncompiled(), phrases)  # type: ignore[attr-defined]
    answers = [kept.segment(t) for t in texts]
    if answers != [python.segment(t) for t in texts]:
        raise SystemExit("with the list, the compiled path differs from the Python path")
    changed = sum(a != b for a, b in zip(answers, plain.segment_many(texts), strict=True))
    best = {"default": [float("inf")] * len(texts), "default + list": [float("inf")] * len(texts)}
    for run in range(ROUNDS + 1):
        for name, segmenter in (("default", plain), ("default + list", kept)):
            took = single_pass(segmenter, texts)
            if run:
                best[name] = [min(a, b) for a, b in zip(best[name], took, strict=True)]
    print(f"one core: {sorted(os.sched_getaffinity(0))}; {int(entries):,} phrases listed")
    print(f"built once into the cache: {built:.1f} s; opened from it: {opened * 1e3:.1f} ms in")
    print(f"this process, {float(fresh_seconds) * 1e3:.0f} ms in a new one (imports included)")
    print(f"{len(texts)} Webis queries one at a time; {changed} answers changed by the list;")
    print("compiled = Python path with the list on every query")
    print(f"{'segmenter':16} {'p50 (us)':>9} {'p99':>7} {'x default':>10}")
    base_p50 = percentile(best["default"], 0.5)
    for name, took in best.items():
        p50, p99 = percentile(took, 0.5), percentile(took, 0.99)
        print(f"{name:16} {p50 * 1e6:9.2f} {p99 * 1e6:7.1f} {p50 / base_p50:10.2f}")
    cost = (percentile(best["default + list"], 0.5) - base_p50) * 1e6
    print(f"the list's cost a query (p50 difference): {cost:.2f} us")


if __name__ == "__main__":
    main()
