"""Training and prediction speed of the supervised segmenters on Webis-QSeC-10 (one core).

Trains each method on all 3,848 queries with the corpus's n-gram counts, titles and
part-of-speech tags (as `qseg train --ngrams --titles --pos` does), then
segments the 3,848 queries 5 times in batches of 4,096 (features, store lookups, classifier
and decoding included) and prints queries per second.

    python benchmarks/supervised.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from qseg.corpora.webis import read_training_set
from qseg.resources.bundle import Resources
from qseg.segmenters.registry import create

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    webis = args.shared / "data" / "webis-qsec-10-training"
    if not webis.exists():
        raise SystemExit(f"Webis-QSeC-10 not found at {webis} (../shared is absent)")
    training = read_training_set(webis)
    votes = list(training.votes.values())
    words, tags = list(training.words.values()), list(training.tags.values())
    resources = Resources.load(ngrams=training.ngram_file, titles=training.titles_file)
    torch.set_num_threads(1)  # the contextual probe's encoder, like everything else, on one core
    print(f"{'method':34} {'train (s)':>10} {'predict (queries/s)':>20}")
    for spec in ("joint", "joint(contextual=false)", "features", "features(classifier=logreg)"):
        model = create(spec, resources)
        started = time.perf_counter()
        model.fit(words, votes, tags)
        trained = time.perf_counter() - started
        rates = []
        for _ in range(5):
            started = time.perf_counter()
            for i in range(0, len(words), 4096):
                model.predict(words[i : i + 4096], tags[i : i + 4096])
            rates.append(len(words) / (time.perf_counter() - started))
        print(f"{spec:34} {trained:10.1f} {max(rates):20,.0f}")


if __name__ == "__main__":
    main()
