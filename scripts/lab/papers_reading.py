"""What docs/papers.md reads: the tables the other reports wrote (docs/*.md and
docs/default-model.json) beside the figures ``papers_measures.py`` measured, and figures as
its tables write them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from _cite import cite

from qseg.tables import render_table

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
HEADER = ["paper's row", "published", "qseg", "qseg's setting (source)"]


def md_table(path: Path, heading: str, index: int = 0) -> list[dict[str, str]]:
    """The ``index``-th Markdown table under the first heading containing ``heading``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(
        (i for i, line in enumerate(lines) if line.startswith("#") and heading in line), None
    )
    if start is None:
        raise SystemExit(f"{path}: no heading with {heading!r}; rerun the script that writes it")
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            current.append([cell.strip() for cell in line.strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    if index >= len(tables):
        raise SystemExit(f"{path}: fewer than {index + 1} tables under {heading!r}")
    header, _, *rows = tables[index]
    names: list[str] = []
    for cell in header:  # a repeated header gets its place: "query", "query (2)"
        names.append(cell if cell not in names else f"{cell} ({names.count(cell) + 1})")
    return [dict(zip(names, row, strict=True)) for row in rows]


def row(rows: list[dict[str, str]], key: str) -> dict[str, str]:
    """The row whose first cell is ``key``, as written or with its papers cited (as the
    reports write them)."""
    for found in rows:
        if next(iter(found.values())) in (key, cite(key)):
            return found
    raise SystemExit(f"no row {key!r} in a report table; rerun the script that writes it")


def first_number(text: str) -> str:
    return re.match(r"-?[\d.]+", text.replace(",", "")).group(0)  # type: ignore[union-attr]


def pair(result: dict) -> str:
    """Query / break accuracy."""
    return f"{result['query_accuracy']:.3f} / {result['break_accuracy']:.3f}"


def five(result: dict) -> list[str]:
    keys = ("query_accuracy", "segment_precision", "segment_recall", "segment_f1")
    return [f"{result[k]:.3f}" for k in keys] + [f"{result['break_accuracy']:.3f}"]


def table(rows: list[list[str]]) -> str:
    return render_table(HEADER, rows, markdown=True)


def read_reports(figures: dict[str, Any]) -> dict[str, Any]:
    """The figures with what the sections read of the other reports (docs/*.md and
    docs/default-model.json): a section's names, by name."""
    corpus_runs = figures["corpus_runs"]
    majority, best_of = corpus_runs["majority"], corpus_runs["best-of"]
    supervised = md_table(DOCS / "supervised.md", "Webis-QSeC-10: 5-fold")
    queryner = md_table(DOCS / "supervised.md", "QueryNER and across domains")
    default_rows = {r[0]: r for r in json.loads((DOCS / "default-model.json").read_text())["rows"]}
    naive_product = default_rows["`naive` (unsupervised, built-in resources)"]
    webis_alpha = row(md_table(DOCS / "agreement.md", "Webis-QSeC-10 crowd votes"), "all")
    prepositions = md_table(DOCS / "agreement.md", "Webis-QSeC-10 crowd votes", index=3)
    schemes = md_table(DOCS / "agreement.md", "17 nesting schemes")
    judges = md_table(DOCS / "agreement.md", "Relevance judges")
    nested_alpha = md_table(DOCS / "nested.md", "Agreement with the authors' trees")
    heights = md_table(DOCS / "nested.md", "Tree shapes")
    nfcorpus = md_table(DOCS / "ir-evaluation.md", "## NFCorpus (test")
    kendall = md_table(DOCS / "ir-evaluation.md", "## NFCorpus (test", index=1)
    speed = re.search(
        r"wiki, exact store, from scratch\s+([\d,]+) queries/s",
        (DOCS / "resources.md").read_text(encoding="utf-8"),
    )
    if speed is None:
        raise SystemExit("docs/resources.md: no wiki throughput line; rerun its benchmark")

    def cv(name: str, which: str = "majority") -> str:
        found = row(supervised, name)
        return f"{found[f'{which} query']} / {found[f'{which} break']}"

    webis = "Webis training part, 3,848 queries, majority"
    sup = "5-fold CV on the Webis training part, majority (docs/supervised.md)"
    return {
        **figures,
        "best_of": best_of,
        "cv": cv,
        "default_rows": default_rows,
        "heights": heights,
        "judges": judges,
        "kendall": kendall,
        "majority": majority,
        "naive_product": naive_product,
        "nested_alpha": nested_alpha,
        "nfcorpus": nfcorpus,
        "prepositions": prepositions,
        "queryner": queryner,
        "schemes": schemes,
        "speed": speed,
        "sup": sup,
        "supervised": supervised,
        "webis": webis,
        "webis_alpha": webis_alpha,
    }
