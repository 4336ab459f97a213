"""``qseg agree``: agreement of annotators (Ramanath et al. 2013), and of relevance judges."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import IO

from qseg.corpora.annotations import INPUT_FORMATS
from qseg.evaluation.judge_agreement import LEVELS

MAX_REPLICATES = 10_000
"""The most bootstrap replicates: percentile intervals from 10,000 move by less than 0.01,
and the judgments' bootstrap holds a replicates x items matrix."""


def configure(agree: argparse.ArgumentParser) -> None:
    agree.description = (
        "Agreement of several annotators per item. Segmentations: Webis crowd "
        "votes, item<TAB>annotator<TAB>segmentation tables (pipe or bracket text), or bracket "
        "files, one per annotator; alpha with d1/d2, S under the random model, bootstrap "
        "intervals, and with --bias the annotation biases. Relevance judgments: a table with "
        "a header and judge* columns; alpha per level and pairwise kappa."
    )
    agree.add_argument("files", nargs="+", metavar="FILE")
    agree.add_argument(
        "--input",
        choices=INPUT_FORMATS,
        help="input format (default: told by the first line)",
    )
    agree.add_argument(
        "--distance",
        nargs="+",
        choices=("d1", "d2"),
        help="distances (default: d for flat, d1 and d2 when annotations are nested)",
    )
    agree.add_argument("--by-length", action="store_true", help="also one row per query length")
    agree.add_argument(
        "--replicates",
        type=int,
        default=1000,
        help=f"bootstrap replicates (default 1000, at most {MAX_REPLICATES:,})",
    )
    agree.add_argument("--confidence", type=float, default=0.95, help="interval coverage")
    agree.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    agree.add_argument("--bias", action="store_true", help="print the bias statistics")
    agree.add_argument("--plots", metavar="DIR", help="write the bias plots (PNG) to DIR")
    agree.add_argument(
        "--level",
        nargs="+",
        choices=LEVELS,
        default=["ordinal"],
        help="judgments: levels of measurement for alpha (default: ordinal)",
    )
    agree.add_argument("--judges", metavar="NAMES", help="judgments: comma-separated judge columns")
    agree.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    agree.add_argument("--quiet", action="store_true", help="no progress bars")
    agree.set_defaults(run=run)


def _judgments(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.corpora.annotations import read_judgments
    from qseg.errors import QsegError
    from qseg.evaluation.agreement_report import label_tables
    from qseg.evaluation.judge_agreement import label_agreement
    from qseg.progress import progress_bar
    from qseg.tables import render_tables

    if len(args.files) != 1:
        raise QsegError("give one judgment table")
    judges = args.judges.split(",") if args.judges else None
    judgments = read_judgments(args.files[0], judges)
    total = len(args.level) * args.replicates
    with progress_bar(args.quiet, "replicates", "bootstrap", total) as bar:
        results = [
            label_agreement(
                judgments, level, args.replicates, args.confidence, args.seed, bar.update
            )
            for level in args.level
        ]
    if args.format == "json":
        out.write(json.dumps([asdict(r) for r in results], indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(render_tables(label_tables(results), args.format))


def _check_bootstrap(args: argparse.Namespace) -> None:
    """The bootstrap's flags in range, before any file is read."""
    from qseg.errors import QsegError

    if not 1 <= args.replicates <= MAX_REPLICATES:
        raise QsegError(
            f"--replicates must be between 1 and {MAX_REPLICATES:,}, got {args.replicates}"
        )
    if args.seed < 0:
        raise QsegError(f"--seed must be 0 or more, got {args.seed}")


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.corpora.annotations import detect_format, read_annotations
    from qseg.evaluation.agreement_report import agreement_table, default_powers, measure
    from qseg.evaluation.bias import bias_statistics, bias_tables, plot_bias
    from qseg.tables import render_tables

    _check_bootstrap(args)
    kind = args.input or detect_format(args.files[0])
    if kind == "judgments":
        _judgments(args, out)
        return
    annotations = read_annotations(args.files, kind)
    powers = default_powers(annotations)
    if args.distance:
        powers = tuple(int(d[1]) for d in args.distance)
    scoped = measure(
        annotations, powers, args.by_length, args.replicates, args.confidence, args.seed
    )
    flat = powers == (1,) and len(default_powers(annotations)) == 1
    tables = [agreement_table(scoped, flat=flat)]
    if args.bias or args.plots:
        stats = bias_statistics(annotations)
        if args.bias:
            tables += bias_tables(stats)
        if args.plots:
            for path in plot_bias(stats, args.plots):
                print(f"qseg: wrote {path}", file=sys.stderr)
    if args.format == "json" and not args.bias:
        records = [{"scope": scope, **(r.summary() if r else {})} for scope, r in scoped]
        out.write(json.dumps(records, indent=2, ensure_ascii=False) + "\n")
        return
    out.write(render_tables(tables, args.format))
