"""``qseg ir-eval``: Saha Roy et al. 2012's IR-based evaluation of segmenters on a search engine."""

from __future__ import annotations

import argparse
from typing import IO, TYPE_CHECKING, cast

from qseg.cli.common import (
    add_model_flags,
    add_resource_flags,
    named_files,
    note,
)
from qseg.corpora import ir
from qseg.corpora.ir import FILE_FORMATS, KNOWN
from qseg.evaluation.ir.engines import ENGINES
from qseg.evaluation.ir.framework import DEFAULT_MEASURES

if TYPE_CHECKING:
    from collections.abc import Mapping

    from qseg.segmentation import NestedSegmentation, Segmentation


def configure(ir: argparse.ArgumentParser) -> None:
    ir.description = (
        "Saha Roy et al. 2012's framework: every quoted version of each system's segmentation "
        "runs on a search engine; QVRS, the unsegmented query, all-quoted versions and BQV_BF "
        "are scored with ir_measures against graded judgments."
    )
    where = ir.add_argument_group("collection (a known one, or files)")
    where.add_argument("--collection", choices=KNOWN)
    where.add_argument("--data", metavar="DIR", help="the collection's folder")
    where.add_argument(
        "--nfcorpus-queries",
        default="nontopic-titles,vid-titles",
        metavar="KINDS",
        help="NFCorpus query files (comma-separated; default: the keyword-style ones)",
    )
    where.add_argument("--docs", metavar="FILE")
    where.add_argument("--docs-format", choices=FILE_FORMATS, default="tsv")
    where.add_argument("--queries", metavar="FILE")
    where.add_argument("--queries-format", choices=FILE_FORMATS, default="tsv")
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
        help="a segmenter by method spec or saved model file (repeatable)",
    )
    what.add_argument(
        "--segmentations",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="segmentations from a file, id<TAB>seg|ments (repeatable)",
    )
    what.add_argument(
        "--nested",
        action="store_true",
        help="--system segmenters give trees (Ramanath et al. 2013; --segmentations files "
        "stay flat); versions quote constituents that do not overlap",
    )
    what.add_argument(
        "--counts-from-documents",
        action="store_true",
        help="segmenters use n-gram counts built from the collection's documents",
    )
    add_resource_flags(ir)
    add_model_flags(ir)
    how = ir.add_argument_group("evaluation")
    how.add_argument(
        "--engine",
        choices=ENGINES,
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
        "--tuned-bm25",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a baseline column of BM25 with k1 and b chosen by 5-fold cross-validation over "
        "the queries (25 parameter pairs; default: on where the engine can set them, lucene)",
    )
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
        help="gold segmentations (votes, id<TAB>seg|ments or QueryNER .jsonl; majority) "
        "for Kendall tau",
    )
    how.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    how.add_argument("--quiet", action="store_true", help="no progress bars")
    ir.set_defaults(run=run)


def _collection(args: argparse.Namespace) -> ir.Collection:
    from qseg.errors import QsegError

    stopwords = ir.read_words(args.stopwords) if args.stopwords else frozenset()
    if args.collection:
        if not args.data:
            raise QsegError("--collection needs --data DIR, the collection's folder")
        kinds = [k.strip() for k in args.nfcorpus_queries.split(",") if k.strip()]
        return ir.known_collection(args.collection, args.data, kinds, stopwords)
    if not (args.docs and args.queries and args.qrels):
        raise QsegError("give --collection and --data, or --docs, --queries and --qrels")
    return ir.collection_from_files(
        args.docs,
        args.queries,
        args.qrels,
        docs_format=args.docs_format,
        queries_format=args.queries_format,
        grades=ir.parse_grades(args.grades) if args.grades else None,
        stopwords=stopwords,
    )


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from dataclasses import replace
    from pathlib import Path

    from qseg.cli.common import resources
    from qseg.corpora.training import read_gold
    from qseg.corpora.webis import read_segmentations
    from qseg.errors import QsegError
    from qseg.evaluation.ir.counts import collection_counts
    from qseg.evaluation.ir.engines import open_engine
    from qseg.evaluation.ir.framework import (
        evaluate_ir,
        kendall_taus,
        nest_queries,
        query_words,
        segment_queries,
    )
    from qseg.evaluation.ir.report import (
        bm25_note,
        left_out_note,
        marks_note,
        table_rows,
        tau_note,
        tau_rows,
        to_json,
        unreachable_note,
    )
    from qseg.evaluation.ir.versions import MAX_NESTED_VERSIONS
    from qseg.fileio import cache_dir
    from qseg.models import default_method, open_segmenter
    from qseg.progress import progress_bar
    from qseg.segmenters.registry import default_spec
    from qseg.tables import render_table

    collection = _collection(args)
    folder = Path(args.cache_dir) if args.cache_dir else cache_dir() / "ir"
    words = query_words(collection)
    given = resources(args)
    specs: dict[str, str] = {}
    for item in args.system:
        name, eq, spec = item.partition("=")
        if not eq:
            raise QsegError(f"--system {item!r}: expected NAME=SPEC")
        if name in specs:
            raise QsegError(f"two systems are named {name!r}")
        specs[name] = spec
    files = named_files(args.segmentations)
    if both := specs.keys() & files.keys():
        raise QsegError(f"two systems are named {sorted(both)[0]!r}")
    if not specs and not files:
        # the default model runs on the counts it was trained with, not on a collection's
        default = default_spec(given) if args.counts_from_documents else default_method(given)
        specs = {spec: spec for spec in ("naive", default)}
    if specs and args.counts_from_documents:
        given = replace(given, ngrams=collection_counts(collection, folder / "counts"))
    # a query's segmentation, its tree, or None where it has no tree (too long to nest)
    systems: dict[str, Mapping[str, Segmentation | NestedSegmentation | None]] = {}
    for name, spec in specs.items():
        segmenter = open_segmenter(spec, given, allow_other_resources=args.allow_other_resources)
        by = nest_queries if args.nested else segment_queries
        systems[name] = by(segmenter, words)
    for name, path in files.items():
        systems[name] = read_segmentations(path)
    stop = ir.read_words(args.engine_stopwords) if args.engine_stopwords else frozenset()
    engine = open_engine(args.engine, folder / "indexes", stop)
    with progress_bar(args.quiet, "docs", "indexing") as bar:
        engine.progress = bar.update  # type: ignore[attr-defined]  # each engine has one
        engine.index(collection)
    with progress_bar(args.quiet, "searches", "evaluating") as bar:
        results = evaluate_ir(
            collection,
            engine,
            systems,  # a query without a tree (None) is left out of every column
            measures=args.measures.split(),
            cache=None if args.no_cache else str(folder / "results.sqlite"),
            bqv=not args.no_bqv,
            bqv_max_words=args.bqv_max_words,
            tuned_bm25=hasattr(engine, "bm25") if args.tuned_bm25 is None else args.tuned_bm25,
            progress=bar.update,
        )
    gold = read_gold(args.gold) if args.gold else None
    # kendall_taus keeps the flat systems only (matching metrics compare flat segmentations)
    flat = cast("dict[str, Mapping[str, Segmentation]]", systems)
    taus = kendall_taus(results, flat, bqv=not args.no_bqv, gold=gold)
    for message in (unreachable_note(results), left_out_note(results)):
        if message:
            note(message)
    if args.format == "json":
        out.write(to_json(results, taus) + "\n")
        return
    markdown = args.format == "markdown"
    out.write(
        f"{collection.name}: {results.queries} queries, engine {engine.name}; "
        f"{marks_note(results)}\n\n"
    )
    out.write(render_table(*table_rows(results), markdown=markdown) + "\n")
    if chosen := bm25_note(results):
        out.write(f"\n{chosen}\n")
    for reference, rows in taus.items():
        out.write(
            f"\nKendall tau, systems ranked by QVRS vs by matching metrics against {reference}:\n\n"
        )
        out.write(render_table(*tau_rows(rows), markdown=markdown) + "\n")
        out.write(f"\n{tau_note(rows)}\n")
    if left_out := left_out_note(results):
        out.write(f"\n{left_out}\n")
    if results.skipped_nested:
        out.write(
            f"\n{len(results.skipped_nested)} queries left out: too long to nest, or their "
            f"trees have over {MAX_NESTED_VERSIONS:,} quoted versions\n"
        )
    if results.skipped_bqv:
        out.write(
            f"\nBQV_BF skipped {len(results.skipped_bqv)} queries of more than "
            f"{args.bqv_max_words} words\n"
        )
