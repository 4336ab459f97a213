"""``qseg tune pmi``: the PMI threshold that maximizes break accuracy on references."""

from __future__ import annotations

import argparse
from typing import IO

from qseg.cli.common import add_resource_flags


def configure(tune: argparse.ArgumentParser) -> None:
    methods = tune.add_subparsers(dest="method", required=True, metavar="METHOD")
    pmi = methods.add_parser(
        "pmi",
        help="choose the PMI threshold tau maximizing break accuracy",
        description="Choose tau maximizing break accuracy on the gold references.",
    )
    pmi.add_argument("--gold", required=True, metavar="FILE")
    pmi.add_argument("--protocol", choices=("majority", "all-agree"), default="majority")
    add_resource_flags(pmi)
    pmi.set_defaults(run=run_pmi)


def run_pmi(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import resources
    from qseg.corpora.webis import read_references
    from qseg.evaluation.tuning import tune_pmi

    gold = read_references(args.gold)
    choice = tune_pmi(gold, resources(args).require_probabilities(), args.protocol)
    out.write(
        f"tau={choice.tau!r}\tbreak_accuracy={choice.break_accuracy:.4f}\t"
        f"queries={choice.queries}\tgaps={choice.gaps}\n"
    )
