"""Majority break and query accuracy of a trainable method under several 5-fold splits of Webis.

The quick check of one setting against the issue's goal (break >= 0.85, query >= 0.63) without
the whole report (scripts/supervised_report.py): the same data, resources and folds as its
fold-split table, one line per fold split and the mean.

    python scripts/fold_splits.py [--spec joint] [--splits 0 1 2 3 4] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from qseg.corpora.webis import read_training_set
from qseg.errors import QsegError
from qseg.evaluation.cross_validation import cross_validate
from qseg.evaluation.matching import evaluate
from qseg.resources.bundle import Resources
from qseg.segmenters.registry import create, parse_spec

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="joint")
    parser.add_argument("--splits", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    try:
        method, _ = parse_spec(args.spec)
    except QsegError as error:
        parser.error(str(error))
    if not method.trains:
        parser.error(f"{method.name} is not a trainable method")
    webis = read_training_set(args.shared / "data" / "webis-qsec-10-training")
    votes, tags = webis.votes, webis.tags
    resources = Resources.load(ngrams=webis.ngram_file, titles=webis.titles_file)
    scores = []
    for split in args.splits:
        started = time.perf_counter()
        outputs = cross_validate(
            lambda: create(args.spec, resources).set_params(n_jobs=args.jobs),
            votes,
            tags,
            k=5,
            seed=split,
        )
        s = evaluate({args.spec: outputs}, votes)[0]
        scores.append((s.break_accuracy, s.query_accuracy))
        print(
            f"{args.spec} fold split {split}: break {s.break_accuracy:.4f} "
            f"query {s.query_accuracy:.4f} ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    mean = np.mean(scores, axis=0)
    print(f"{args.spec} mean of {len(scores)}: break {mean[0]:.4f} query {mean[1]:.4f}")


if __name__ == "__main__":
    main()
