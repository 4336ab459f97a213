"""``qseg train``: fit a trainable method on annotated queries and save it to one file."""

from __future__ import annotations

import argparse
import sys
from typing import IO

from qseg.cli.common import add_model_flags, add_resource_flags, note
from qseg.errors import QsegError
from qseg.segmenters.learned.trainable import PRESETS

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
        metavar="SPEC",
        help=f"trainable method: {', '.join(PRESETS)} (default: {DEFAULT_METHOD}); e.g. "
        "'features(classifier=logreg)'",
    )
    train.add_argument(
        "--from",
        dest="base",
        metavar="SPEC",
        help="adapt this trained model to the --gold queries instead of training from "
        "scratch: default(style=web), another shipped model or a model file; the best of "
        "continuing from it, training on the queries alone, the two together and keeping it "
        "as it is, chosen "
        "by cross-validation over them (docs/adapting.md)",
    )
    train.add_argument(
        "--curve",
        action="store_true",
        help="with --from: print the learning curve, by cross-validation over the --gold "
        "queries, of the adapted model, the base and a model of the queries alone at growing "
        "sizes (--out is then optional)",
    )
    train.add_argument(
        "--plot", metavar="FILE.png", help="with --curve: draw it into this PNG file"
    )
    train.add_argument(
        "--folds", type=int, default=5, help="with --from: cross-validation folds (default 5)"
    )
    train.add_argument(
        "--queries", metavar="FILE", help="id<TAB>query lines to train on (default: all of --gold)"
    )
    train.add_argument(
        "--gold",
        required=True,
        metavar="FILE",
        help="Webis crowd votes (every vote counts), id<TAB>seg|ments, "
        "item<TAB>annotator<TAB>seg|ments (each annotator a vote; qseg annotate --export), "
        "an annotation project (qseg annotate's file: each annotator a vote), or QueryNER .jsonl",
    )
    add_resource_flags(train, probabilities=False, querylog=False)
    add_model_flags(train)
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
    train.add_argument("--out", metavar="MODEL", help="model file to write")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.set_defaults(run=run)


def run(args: argparse.Namespace, out: IO[str]) -> None:
    if args.base is not None:
        _adapt(args, out)
        return
    for flag, given in (("--curve", args.curve), ("--plot", args.plot)):
        if given:
            raise QsegError(f"{flag} draws the learning curve of adapting: give --from SPEC")
    if args.out is None:
        raise QsegError("give --out MODEL: the model file to write")
    args.method = args.method or DEFAULT_METHOD
    _train(args)


def _train(args: argparse.Namespace) -> None:
    import time

    from qseg.annotation.gold import read_annotated
    from qseg.cli.common import can_create, not_an_input, resources
    from qseg.errors import PathError
    from qseg.fileio import check_output_file
    from qseg.models import estimator, save
    from qseg.models.training import trainable_method
    from qseg.progress import progress_bar
    from qseg.segmenters.learned.trainable import check_seed

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
    data = read_annotated(args.gold, args.queries, args.pos)
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


_SCRATCH_ONLY = ("method", "queries", "pos", "corpus")
"""Flags of training from scratch that adapting does not take (the base fixes the method, and
its inputs take no tags or corpus)."""


def _adapt(args: argparse.Namespace, out: IO[str]) -> None:
    """``qseg train --from SPEC``: adapt a trained model to the --gold queries (and/or draw
    the learning curve of adapting it)."""
    import time

    from qseg.annotation.gold import read_annotated
    from qseg.cli.common import can_create, not_an_input, resources
    from qseg.errors import PathError
    from qseg.evaluation.adaptation import (
        adapt_model,
        adapt_steps,
        check_plotting,
        curve_steps,
        curve_table,
        learning_curve,
        plot_curve,
    )
    from qseg.fileio import check_output_file
    from qseg.models import save
    from qseg.models.adapting import base_model
    from qseg.progress import progress_bar
    from qseg.tables import render_table

    started = time.perf_counter()
    for name in _SCRATCH_ONLY:
        if getattr(args, name) is not None:
            raise QsegError(
                f"--{name} is for training from scratch; --from adapts the base model as it "
                "was trained (its method and inputs)"
            )
    if args.plot and not args.curve:
        raise QsegError("--plot draws the learning curve: give --curve too")
    if args.plot:
        check_plotting()
    if not args.curve and args.out is None:
        raise QsegError("give --out MODEL (the adapted model to write), or --curve")
    if not 2 <= args.folds <= 20:
        raise QsegError(f"--folds must be between 2 and 20, got {args.folds}")
    seed = 0 if args.seed is None else args.seed
    written = [(path, what) for path, what in ((args.out, "model"), (args.plot, "plot")) if path]
    for path, what in written:
        check_output_file(path, what)
        not_an_input(path, (args.gold, args.ngrams, args.titles))
        can_create(path, what)
    base = base_model(args.base, resources(args), allow_other_resources=args.allow_other_resources)
    data = read_annotated(args.gold)
    words, targets = data.words, data.targets
    if args.curve:
        total = curve_steps(len(words), args.folds)
        with progress_bar(args.quiet, "model", "learning curve", total, scale=False) as bar:
            points = learning_curve(
                base,
                words,
                targets,
                folds=args.folds,
                random_state=seed,
                n_jobs=args.jobs,
                step=lambda _: bar.update(1),
            )
        title = (
            f"query / break accuracy (mean ± sd over {args.folds} folds) of {args.base} "
            "adapted to n of the annotated queries, the base, and a model of the n alone"
        )
        header, rows = curve_table(points)
        out.write(f"{title}\n\n{render_table(header, rows)}\n")
        out.flush()
        if args.plot:
            plot_curve(points, args.plot, f"adapting {args.base} to {args.gold}")
            print(f"qseg: drew the learning curve -> {args.plot}", file=sys.stderr)
    if args.out is None:
        return
    with progress_bar(
        args.quiet, "model", f"adapting {args.base}", adapt_steps(args.folds), scale=False
    ) as bar:
        model = adapt_model(
            base,
            words,
            targets,
            folds=args.folds,
            random_state=seed,
            n_jobs=args.jobs,
            step=lambda _: bar.update(1),
        )
    try:
        save(model, args.out)
    except OSError as exc:  # a disk that fills up while the model is written
        raise PathError(args.out, f"cannot write the model ({exc.strerror or exc})") from None
    assert model.adapted is not None
    selection = model.adapted.selection
    chosen = selection["chosen"]
    figures = selection["figures"]
    shown = ", ".join(f"{name} {f['query_accuracy']:.3f}" for name, f in figures.items())
    took = time.perf_counter() - started
    print(
        f"qseg: adapted {args.base} to {len(words)} queries in {took:.1f} s -> {args.out}: "
        f"{_CHOSEN[chosen]} (query accuracy by {args.folds}-fold cross-validation: {shown})",
        file=sys.stderr,
    )


_CHOSEN = {
    "continue": "continued from the base",
    "both": "continued from the base and trained on the queries alone, decoded together",
    "fresh": "trained on the queries alone (they did better without the base)",
    "base": "the base as it is (the queries did not improve on it)",
}
