"""``qseg train``: fit a trainable method on annotated queries and save it to one file."""

from __future__ import annotations

import argparse
import sys
from typing import IO

from qseg.cli.common import add_resource_flags, note
from qseg.segmenters.trainable import PRESETS

DEFAULT_METHOD = "joint"
MAX_DIMENSIONS = 1000
"""The widest word vectors trained (Kale et al. 2017 and word2vec use 50 to 300)."""


def configure(train: argparse.ArgumentParser) -> None:
    train.description = (
        "Train a break classifier (Bergsma and Wang 2007, Kale et al. 2017) on annotated "
        "queries and save it to one file; the file is then a method like any other "
        "(`qseg segment --method FILE`), run with the resources it was trained with."
    )
    train.add_argument(
        "--method",
        default=DEFAULT_METHOD,
        metavar="SPEC",
        help=f"trainable method: {', '.join(PRESETS)} (default: {DEFAULT_METHOD}); e.g. "
        "'features(classifier=logreg)'",
    )
    train.add_argument(
        "--queries", metavar="FILE", help="id<TAB>query lines to train on (default: all of --gold)"
    )
    train.add_argument(
        "--gold",
        required=True,
        metavar="FILE",
        help="Webis crowd votes (every vote counts), id<TAB>seg|ments, "
        "item<TAB>annotator<TAB>seg|ments (each annotator a vote; qseg annotate --export), or "
        "QueryNER .jsonl",
    )
    add_resource_flags(train, probabilities=False, querylog=False)
    train.add_argument("--pos", metavar="FILE", help="part-of-speech tags by query id (Webis)")
    train.add_argument(
        "--corpus",
        metavar="FILE",
        help="text or ngram<TAB>count lines to train word vectors on "
        "(joint: instead of the built-in name vectors)",
    )
    train.add_argument("--dimensions", type=int, default=50, help="word vector size (default 50)")
    train.add_argument(
        "--seed", type=int, help="random seed (default: the spec's random_state parameter, 0)"
    )
    train.add_argument("--jobs", type=int, default=1, help="threads for XGBoost (default 1)")
    train.add_argument("--out", required=True, metavar="MODEL", help="model file to write")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.set_defaults(run=run)


def run(args: argparse.Namespace, out: IO[str]) -> None:
    import time

    from qseg.cli.common import can_create, not_an_input, resources
    from qseg.corpora.training import read_training_data
    from qseg.errors import PathError, QsegError
    from qseg.fileio import check_output_file
    from qseg.models import estimator, save
    from qseg.models.training import trainable_method
    from qseg.progress import progress_bar
    from qseg.segmenters.trainable import check_seed

    started = time.perf_counter()
    _, params = trainable_method(args.method)  # a wrong method stops here, before any data is read
    check_seed(
        *(
            (args.seed, "--seed")
            if args.seed is not None
            else (params["random_state"], "random_state")
        )
    )
    if not 1 <= args.dimensions <= MAX_DIMENSIONS:
        raise QsegError(
            f"--dimensions must be between 1 and {MAX_DIMENSIONS}, got {args.dimensions}"
        )
    check_output_file(args.out, "model")  # and a model that cannot be written
    inputs = (args.gold, args.queries, args.pos, args.corpus, args.ngrams, args.titles)
    not_an_input(args.out, inputs)
    can_create(args.out, "model")
    data = read_training_data(args.gold, args.queries, args.pos)
    if data.untagged:
        note(
            f"{data.untagged} of {len(data.ids)} queries have no part-of-speech tags in "
            f"{args.pos} (id missing or not one tag per word); they go without tag features"
        )
    if args.corpus:
        print(
            f"qseg: training {args.dimensions}-dimensional word vectors on {args.corpus}",
            file=sys.stderr,
        )
    model = estimator(
        args.method,
        resources(args),
        corpus=args.corpus,
        dimensions=args.dimensions,
        random_state=args.seed,
        jobs=args.jobs,
    )
    stages = model.training_stages()
    desc = f"training {args.method}"
    with progress_bar(args.quiet, "stage", desc, len(stages), scale=False) as bar:

        def done(stage: str) -> None:
            bar.set_postfix_str(stage, refresh=False)
            bar.update(1)

        model.fit(data.words, data.targets, data.tags, progress=done)
    try:
        save(model, args.out)
    except OSError as exc:  # a disk that fills up while the model is written
        raise PathError(args.out, f"cannot write the model ({exc.strerror or exc})") from None
    took = time.perf_counter() - started
    print(
        f"qseg: trained {args.method} on {len(data.ids)} queries in {took:.1f} s -> {args.out}",
        file=sys.stderr,
    )
