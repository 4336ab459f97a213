"""``qseg tune pmi|phrases``: the threshold that maximizes break accuracy on references."""

from __future__ import annotations

import argparse
from typing import IO

from qseg.cli.common import add_resource_flags, at_least_one


def configure(tune: argparse.ArgumentParser) -> None:
    methods = tune.add_subparsers(dest="method", required=True, metavar="METHOD")
    pmi = methods.add_parser(
        "pmi",
        help="choose the PMI threshold tau maximizing break accuracy",
        description="Choose tau maximizing break accuracy on the gold references.",
    )
    pmi.add_argument("--gold", required=True, metavar="FILE")
    pmi.add_argument("--protocol", choices=("majority", "all-agree"), default="majority")
    add_resource_flags(pmi, querylog=False)
    pmi.set_defaults(run=run_pmi)
    phrases = methods.add_parser(
        "phrases",
        help="choose the threshold of gensim's Phrases maximizing break accuracy",
        description="Choose the threshold of phrases(...) maximizing break accuracy on the "
        "gold references (candidates: midpoints between quantiles of the pair scores).",
    )
    phrases.add_argument("--gold", required=True, metavar="FILE")
    phrases.add_argument("--protocol", choices=("majority", "all-agree"), default="majority")
    # the method's own defaults (npmi, gensim's connector words), so that what is tuned is
    # what `--method phrases` runs
    from qseg.segmenters.rules.phrases import PARAMS

    phrases.add_argument(
        "--scoring", choices=("default", "npmi"), default=PARAMS["scoring"].default
    )
    phrases.add_argument("--min-count", type=int, default=PARAMS["min_count"].default, metavar="N")
    phrases.add_argument(
        "--connectors",
        action=argparse.BooleanOptionalAction,
        default=PARAMS["connectors"].default,
        help="gensim's English connector words may sit inside a phrase (default: yes)",
    )
    phrases.add_argument("--layers", type=int, choices=(1, 2), default=PARAMS["layers"].default)
    add_resource_flags(phrases, querylog=False)
    phrases.set_defaults(run=run_phrases)


def run_pmi(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import resources
    from qseg.corpora.training import read_gold
    from qseg.evaluation.tuning import tune_pmi

    gold = read_gold(args.gold)
    choice = tune_pmi(gold, resources(args).require_probabilities(), args.protocol)
    out.write(
        f"tau={choice.tau!r}\tbreak_accuracy={choice.break_accuracy:.4f}\t"
        f"queries={choice.queries}\tgaps={choice.gaps}\n"
    )


def run_phrases(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.cli.common import resources
    from qseg.corpora.training import read_gold
    from qseg.evaluation.tuning import tune_phrases
    from qseg.segmenters.rules.phrases import PARAMS
    from qseg.segmenters.spec import format_spec

    at_least_one(args.min_count, "--min-count")
    gold = read_gold(args.gold)
    options = {
        "scoring": args.scoring,
        "min_count": args.min_count,
        "connectors": args.connectors,
        "layers": args.layers,
    }
    choice = tune_phrases(gold, resources(args).require_ngrams(), args.protocol, **options)
    spec = format_spec("phrases", PARAMS, options | {"threshold": choice.threshold})
    out.write(
        f"{spec}\tbreak_accuracy={choice.break_accuracy:.4f}\t"
        f"query_accuracy={choice.query_accuracy:.4f}\tqueries={choice.queries}\n"
    )
