"""Training and prediction speed of the supervised segmenters on Webis-QSeC-10, on one core.

Pins the process to one core and every numeric library to one thread (before any of them
loads), trains each method on all 3,848 queries with the corpus's n-gram counts, titles and
part-of-speech tags (as `qseg train --ngrams --titles --pos` does), then segments the 3,848
queries 5 times in batches of 4,096 (features, store lookups, classifier and decoding
included) and prints the best queries per second, with its ratio to `wiki` on the same queries
and resources in the same process (the reference, so that the machine's drift cancels).

    python benchmarks/supervised.py [--shared ../shared]
"""

from __future__ import annotations

import os

os.sched_setaffinity(0, {0})
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402  (after pinning: the libraries read their thread counts on load)
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECS = ("joint", "joint(contextual=false)", "features", "features(classifier=logreg)")


def best_rate(segment: Callable[[], None], queries: int, passes: int = 5) -> float:
    rates = []
    for _ in range(passes):
        started = time.perf_counter()
        segment()
        rates.append(queries / (time.perf_counter() - started))
    return max(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    webis = args.shared / "data" / "webis-qsec-10-training"
    if not webis.exists():
        raise SystemExit(f"Webis-QSeC-10 not found at {webis} (../shared is absent)")
    import torch

    from qseg.corpora.webis import read_training_set
    from qseg.models import estimator, open_segmenter
    from qseg.resources.bundle import Resources

    torch.set_num_threads(1)
    training = read_training_set(webis)
    votes = list(training.votes.values())
    words, tags = list(training.words.values()), list(training.tags.values())
    texts = [" ".join(w) for w in words]
    resources = Resources.load(ngrams=training.ngram_file, titles=training.titles_file)
    wiki = open_segmenter("wiki", resources)
    repeats = 20  # the reference runs long enough to measure steadily
    reference = best_rate(
        lambda: [list(wiki.segment_many(texts)) for _ in range(repeats)], repeats * len(texts)
    )
    print(f"one core: {sorted(os.sched_getaffinity(0))}; reference wiki {reference:,.0f} q/s")
    print(f"{'method':34} {'train (s)':>10} {'predict (queries/s)':>20} {'x wiki':>8}")
    for spec in SPECS:
        model = estimator(spec, resources, jobs=1)
        started = time.perf_counter()
        model.fit(words, votes, tags)
        trained = time.perf_counter() - started

        def predict(model=model) -> None:
            for i in range(0, len(words), 4096):
                model.predict(words[i : i + 4096], tags[i : i + 4096])

        rate = best_rate(predict, len(words))
        print(f"{spec:34} {trained:10.1f} {rate:20,.0f} {rate / reference:8.4f}")


if __name__ == "__main__":
    main()
