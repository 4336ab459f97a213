"""Write docs/papers.md: every results table of the five papers beside qseg's closest figures.

    python scripts/papers_report.py [--shared ../shared] [--out docs/papers.md] [--render-only]

Published figures are copied from the text of the papers in ../shared/papers (line numbers
given; the prose is in ``lab/templates/papers/``). qseg's figures are measured by
``lab/papers_measures.py`` (`qseg evaluate` on the Webis-QSeC-10 training part, the query-log
method on a small log, cross-validation of the SVM; about a minute) into OUT with ``.json``, or
read from the reports the other scripts write (docs/*.md and docs/default-model.json, named in
each row) by ``lab/papers_page.py``, which lays the page out, so this page is as fresh as
those; rerun them first when their code changes. ``--render-only`` writes the page again from
the last run's figures.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _cite import cite
from _logs import log_sources
from lab.papers_measures import measure
from lab.papers_page import render
from lab.papers_reading import DOCS, ROOT

from qseg.evaluation.provenance import builtin_resources, with_provenance
from qseg.fileio import atomic_write


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=DOCS / "papers.md")
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="write the page from the figures of the last run (OUT with .json) again",
    )
    args = parser.parse_args()
    figures_path = args.out.with_suffix(".json")
    if args.render_only:
        figures = json.loads(figures_path.read_text("utf-8"))
    else:
        figures = measure(args.shared)
        with atomic_write(figures_path) as out:
            out.write(json.dumps(figures, indent=1) + "\n")
    corpus = args.shared / "data" / "webis-qsec-10-training"
    page = with_provenance(
        render(figures), [corpus, *log_sources(args.shared)], builtin_resources()
    )
    with atomic_write(args.out) as out:
        out.write(cite(page, ""))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
