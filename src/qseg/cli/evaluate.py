"""``qseg evaluate``: matching measures of segmentation files against human references."""

from __future__ import annotations

import argparse
import json
from typing import IO, cast

from qseg.cli.common import (
    add_model_flags,
    add_resource_flags,
    named_files,
    note,
)
from qseg.evaluation.matching import PROTOCOLS


def configure(ev: argparse.ArgumentParser) -> None:
    ev.description = (
        "Matching metrics of Hagen et al. 2011 for each SEGFILE (`id<TAB>seg|ments`, "
        "named NAME=FILE or by file stem) and each --system NAME=SPEC (a method spec or a "
        "saved model, run on the gold queries) against the gold file (Webis crowd votes, "
        "`id<TAB>seg|ments`, an annotation table `item<TAB>annotator<TAB>seg|ments` (each "
        "annotator a vote) or QueryNER .jsonl, read as `qseg train --gold` reads it)."
    )
    ev.add_argument("segfiles", nargs="*", metavar="SEGFILE")
    ev.add_argument(
        "--gold",
        required=True,
        metavar="FILE",
        help="Webis crowd votes, id<TAB>seg|ments, item<TAB>annotator<TAB>seg|ments, or "
        "QueryNER .jsonl",
    )
    ev.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="a segmenter by method spec or model file, run on the gold queries (repeatable)",
    )
    add_resource_flags(ev)
    add_model_flags(ev)
    ev.add_argument("--protocol", choices=PROTOCOLS, default="majority")
    ev.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="McNemar's test of systems A and B on the same queries, by query and by gap "
        "(with --format json the output is then an object: systems and mcnemar)",
    )
    ev.add_argument("--format", choices=("table", "json"), default="table")
    ev.set_defaults(run=run)


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import resources
    from qseg.corpora.training import read_gold
    from qseg.corpora.webis import read_segmentations
    from qseg.errors import QsegError
    from qseg.evaluation.matching import evaluate, scores_table, segment_gold
    from qseg.evaluation.significance import compare, mcnemar_table
    from qseg.models import open_segmenter
    from qseg.tables import render_table

    if not args.segfiles and not args.system:
        raise QsegError("give segmentation files, --system NAME=SPEC, or both")
    gold = read_gold(args.gold)
    systems = {}
    for name, path in named_files(args.segfiles).items():
        outputs = read_segmentations(path)
        extra = len(outputs.keys() - gold.keys())
        if extra:
            note(f"{path}: {extra} segmentations of queries not in the gold file are ignored")
        systems[name] = outputs
    names = [*systems, *(item.partition("=")[0] for item in args.system)]
    for name in args.compare or ():
        if name not in names:  # before any system runs
            raise QsegError(f"--compare: no system named {name!r}; have {', '.join(names)}")
    given = resources(args) if args.system else None
    for item in args.system:
        name, eq, spec = item.partition("=")
        if not eq:
            raise QsegError(f"--system {item!r}: expected NAME=SPEC")
        if name in systems:
            raise QsegError(f"two systems are named {name!r}")
        segmenter = open_segmenter(spec, given, allow_other_resources=args.allow_other_resources)
        systems[name] = segment_gold(segmenter, gold)
    pair = cast("tuple[str, str] | None", args.compare)  # nargs=2: the names of A and B
    tests = compare(systems, *pair, gold, args.protocol) if pair else ()
    results = evaluate(systems, gold, args.protocol)
    if args.format == "json":
        rows = [r.summary() for r in results]
        report = {"systems": rows, "mcnemar": [t.row() for t in tests]} if tests else rows
        out.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        return
    out.write(render_table(*scores_table(results)) + "\n")
    if tests:
        out.write("\n" + render_table(*mcnemar_table(tests)) + "\n")
