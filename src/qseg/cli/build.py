"""``qseg build ngrams|titles``: build n-gram count and title stores."""

from __future__ import annotations

import argparse
from typing import IO

from qseg.resources.builders.sources import SOURCE_KINDS
from qseg.resources.store import DEFAULT_COUNT_BITS, DEFAULT_FINGERPRINT_BITS

ENGINES = ("duckdb", "spark")


def _add_store_flags(parser: argparse.ArgumentParser, *, counts: bool) -> None:
    parser.add_argument(
        "--mode",
        choices=("exact", "compact"),
        default="exact",
        help="exact: keys and counts as they are; compact: hashed keys, quantized counts",
    )
    parser.add_argument(
        "--fingerprint-bits",
        type=int,
        default=DEFAULT_FINGERPRINT_BITS,
        help="compact mode: hash bits kept per key (false positives 2^-bits)",
    )
    if counts:
        parser.add_argument(
            "--count-bits",
            type=int,
            default=DEFAULT_COUNT_BITS,
            help="compact mode: bits of the log-quantized count",
        )
    parser.add_argument("--memory-limit", metavar="SIZE", help="e.g. 4GB (default: DuckDB's)")
    parser.add_argument("--threads", type=int, metavar="N", help="worker threads")
    parser.add_argument("--quiet", action="store_true", help="no progress output")


def configure(build: argparse.ArgumentParser) -> None:
    targets = build.add_subparsers(dest="target", required=True, metavar="STORE")
    ngrams = targets.add_parser(
        "ngrams",
        help="count n-grams into a store",
        description="Build an n-gram count store from a Web1T directory, ngram<TAB>count "
        "files, or query logs / text (one query or sentence a line, optional <TAB>count).",
    )
    ngrams.add_argument("inputs", nargs="+", metavar="INPUT")
    ngrams.add_argument("-o", "--output", required=True, metavar="STORE")
    ngrams.add_argument("--from", dest="source", choices=SOURCE_KINDS, default="counts")
    ngrams.add_argument("--engine", choices=ENGINES, default="duckdb")
    ngrams.add_argument("--master", metavar="URL", help="Spark master (default: local)")
    ngrams.add_argument("--max-order", type=int, default=5, help="longest n-gram (default 5)")
    ngrams.add_argument("--min-count", type=int, default=1, help="drop rarer n-grams")
    _add_store_flags(ngrams, counts=True)
    ngrams.set_defaults(run=run_ngrams)
    titles = targets.add_parser(
        "titles",
        help="collect Wikipedia titles into a store",
        description="Build a title store from English Wikipedia all-titles-in-ns0 dumps.",
    )
    titles.add_argument("inputs", nargs="+", metavar="DUMP")
    titles.add_argument("-o", "--output", required=True, metavar="STORE")
    titles.add_argument("--stop-titles", metavar="FILE", help="titles to leave out, one a line")
    titles.add_argument(
        "--single-words", action="store_true", help="keep one-word titles (dropped by default)"
    )
    _add_store_flags(titles, counts=False)
    titles.set_defaults(run=run_titles)


def run_ngrams(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import not_an_input
    from qseg.resources.builders import build_ngrams

    not_an_input(args.output, args.inputs)

    build_ngrams(
        args.inputs,
        args.output,
        source=args.source,
        engine=args.engine,
        mode=args.mode,
        min_count=args.min_count,
        max_order=args.max_order,
        memory_limit=args.memory_limit,
        threads=args.threads,
        master=args.master,
        fingerprint_bits=args.fingerprint_bits,
        count_bits=args.count_bits,
        quiet=args.quiet,
    )


def run_titles(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import not_an_input
    from qseg.resources.builders import build_titles

    not_an_input(args.output, [*args.inputs, args.stop_titles])

    build_titles(
        args.inputs,
        args.output,
        stop_titles=args.stop_titles,
        single_words=args.single_words,
        mode=args.mode,
        memory_limit=args.memory_limit,
        threads=args.threads,
        fingerprint_bits=args.fingerprint_bits,
        quiet=args.quiet,
    )
