"""``qseg select``: the queries of a file a model is least sure of, to annotate first."""

from __future__ import annotations

import argparse
from typing import IO


def configure(select: argparse.ArgumentParser) -> None:
    from qseg.segmenters.uncertainty import MEASURES

    select.description = (
        "Print the N queries of FILE (one a line, or id<TAB>query, as qseg segment reads) the "
        "model is least sure of, least sure first, each line as read: the order qseg annotate "
        "--order uncertain serves, for annotating in another tool or in batches. Annotating "
        "them first teaches an adapted model more than as many random ones (docs/adapting.md)."
    )
    select.add_argument(
        "--model",
        metavar="SPEC",
        default="default",
        help="the model to ask (a model file, a shipped model, default: %(default)s)",
    )
    select.add_argument(
        "--queries", metavar="FILE", required=True, help="the queries to choose from"
    )
    select.add_argument("-n", type=int, required=True, metavar="N", help="how many to print")
    select.add_argument(
        "--measure",
        choices=MEASURES,
        help="entropy: of the break probabilities (trained models; the default for them); "
        "margin: between the scores of the two best segmentations (any segmenter; the "
        "default for the others)",
    )
    select.add_argument("--quiet", action="store_true", help="no progress bar")
    select.set_defaults(run=run)


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import at_least_one
    from qseg.fileio import open_binary
    from qseg.models import open_segmenter
    from qseg.progress import progress_bar
    from qseg.query import normalize
    from qseg.segmenters.uncertainty import check_measure, most_uncertain
    from qseg.streams.lines import QueryLines
    from qseg.streams.records import Skipped

    at_least_one(args.n, "-n")
    lines: list[str] = []
    queries: list[tuple[str, ...]] = []
    with open_binary(args.queries) as stream:
        for record in QueryLines(stream, args.queries):  # a bad line raises, naming it
            assert not isinstance(record, Skipped)  # (skip_bad is off)
            ident, text = record
            lines.append(text if ident is None else f"{ident}\t{text}")
            queries.append(normalize(text))
    segmenter = open_segmenter(args.model)
    if args.measure is not None:
        check_measure(segmenter, args.measure)
    with progress_bar(args.quiet, "queries", "measuring", total=len(queries)) as bar:
        done = 0

        def advanced(count: int) -> None:
            nonlocal done
            bar.update(count - done)
            done = count

        chosen = most_uncertain(segmenter, queries, args.n, args.measure, advanced)
    for position in chosen:
        out.write(lines[position] + "\n")
