"""docs/default-model.md laid out: its template, tables and sections from the figures
``default_measures.py`` measured and the findings ``default_findings.py`` computes, and the
shipped model's card."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lab.default_findings import TARGETS, findings, kind_findings, verdict_table
from lab.default_measures import (
    CANDIDATES,
    ENCODER,
    SHIPPED,
    V3_ROW,
    three_places,
)
from lab.judges import (
    FUNCTION_WORDS,
    LONG,
    NOISE,
    RIGHT_STYLE,
    Candidate,
    as_candidate,
    style_cost,
)
from lab.recipes import (
    DEFAULT,
    DEFAULT_NAME,
    V3_NAME,
    V4_NAME,
    Corpora,
)
from qseg.evaluation.provenance import builtin_resources, with_provenance
from qseg.tables import render_table

MARKS = "¹²³⁴⁵⁶⁷⁸⁹"


class Notes:
    """Footnotes of one table: each distinct text gets the next mark."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, texts: Iterable[str]) -> str:
        marks = []
        for text in texts:
            if text not in self.texts:
                self.texts.append(text)
            marks.append(MARKS[self.texts.index(text) % len(MARKS)])
        return "".join(marks)

    def render(self) -> str:
        return "\n".join(f"{MARKS[i % len(MARKS)]} {t}" for i, t in enumerate(self.texts))


def _cell(value: float | None) -> str:
    return "-" if value is None else three_places(value)


def _name(name: str) -> str:
    return f"`{name}`" if "(" in name or name in ("naive",) or name.startswith("qseg-") else name


def skipped_ideas(skipped: list[list[str]]) -> str:
    """The ideas without a row, each with why."""
    if not skipped:
        return ""
    return "\n\nNot in the table:\n\n" + "\n".join(f"- {name}: {why}." for name, why in skipped)


def _row_name(row: dict[str, Any]) -> str:
    setting = row.get("setting")
    return _name(row["name"]) + (f", {setting}" if setting else "")


def made_by(figures: dict[str, Any], section: str) -> str:
    """The line under a table: the command that made it, and how to remake it alone."""
    made = figures.get("made", {}).get(section)
    if made is None:
        return f"Made by `python scripts/default_report.py` (this table alone: `--only {section}`)."
    quick = " **Quick mode: not figures to keep.**" if made["quick"] else ""
    return (
        f"Made by `{made['command']}` ({made['scale']}; {made['seconds']:.0f} s of that run, "
        "models trained for the tables above it reused); this table "
        f"alone: `--only {section}`.{quick}"
    )


def missing(section: str) -> str:
    return f"_Not measured yet: `python scripts/default_report.py --only {section}`._"


def candidate_notes(candidates: Sequence[Candidate]) -> str:
    """What each candidate is, in words."""
    lines = []
    for c in candidates:
        if c.recipe is not None and c.segmenter is not None:
            lines.append(
                f"- {_name(c.name)}: the shipped model where a table needs one trained on "
                f"everything (QVRS, the unlabelled query sets); its recipe `{c.recipe.name}` "
                f"(`{c.recipe.spec}`, trained on {' and '.join(c.recipe.corpora)}), trained "
                "again, where a column needs a model that has not seen the queries."
            )
        elif c.recipe is not None:
            lines.append(
                f"- {_name(c.name)}: the recipe `{c.recipe.name}` (`{c.recipe.spec}`, trained "
                f"on {' and '.join(c.recipe.corpora)}), trained as each column needs; for "
                "QVRS saved to a temporary model file."
            )
        elif c.unsupervised:
            lines.append(f"- {_name(c.name)}: unsupervised, built-in resources.")
        else:
            lines.append(f"- {_name(c.name)}: a trained model, used as it is.")
    return "\n".join(lines)


def held_out_table(rows: list[dict[str, Any]]) -> str:
    """The in-domain and left-out figures; a note marks the "-" cells it explains, or the
    candidate's name where it explains figures."""
    notes = Notes()
    body = []
    for row in rows:
        name, cells = _name(row["name"]), []
        for group, values, texts in (
            ("in-domain columns", row["in_domain"], row["in_domain_notes"]),
            ("left-out columns", row["left_out"], row["left_out_notes"]),
        ):
            if any(v is None for v in values):
                marks = notes.mark(texts)
                cells += [_cell(v) + (marks if v is None else "") for v in values]
            else:
                name += notes.mark(f"{group}: {t}" for t in texts)
                cells += [_cell(v) for v in values]
        body.append([name, *cells])
    table = render_table(
        [
            "candidate",
            "web break (CV)",
            "web query (CV)",
            "product break (dev)",
            "product query (dev)",
            "web break, trained without web",
            "web query, trained without web",
            "product break, trained without product",
            "product query, trained without product",
        ],
        body,
        markdown=True,
    )
    return table + ("\n\n" + notes.render() if notes.texts else "")


def ir_table(runs: list[dict[str, Any]]) -> str:
    """QVRS and all-quoted scores of every candidate on every collection, ``*`` where the
    paired t-test against the unsegmented query gives p < 0.05; the commands below."""
    systems = runs[0]["systems"]
    header = ["segmentations"]
    columns: list[tuple[int, int]] = []
    for i, run in enumerate(runs):
        for j, row in enumerate(run["table"]):
            header.append(f"{COLLECTION_NAMES[run['collection']]} {row['measure']}")
            columns.append((i, j))

    def line(name: str, column: str) -> list[str]:
        cells = [name]
        for i, j in columns:
            row = runs[i]["table"][j]
            if column not in row:
                cells.append("-")
                continue
            p = row.get(f"{column} p")
            cells.append(f"{row[column]:.4f}{'*' if p is not None and p < 0.05 else ''}")
        return cells

    body = [line("unsegmented", "unsegmented")]
    body += [line(f"{_name(name)}: QVRS", f"{key} QVRS") for key, name in systems.items()]
    body += [line("BQV_BF (best segmentation, fully quoted)", "BQV_BF")]
    body += [
        line(f"{_name(name)}: all quoted", f"{key} all-quoted") for key, name in systems.items()
    ]
    commands = "\n".join(run["command"] for run in runs)
    queries = ", ".join(f"{COLLECTION_NAMES[run['collection']]} {run['queries']}" for run in runs)
    seconds = ", ".join(
        f"{COLLECTION_NAMES[r['collection']]} {r['seconds']:.1f} s ({r['searches']:,} searches, "
        f"{r['cache_hits']:,} from the cache)"
        for r in runs
    )
    files = runs[0].get("saved", [])
    saved = (
        f" `{'`, `'.join(f + '.qseg' for f in files)}`: the candidate's recipe trained on all its "
        "corpora and saved to a temporary model file (`qseg.models.save`)."
        if files
        else ""
    )
    return (
        render_table(header, body, markdown=True)
        + f"\n\nQueries scored: {queries}. Time: {seconds}.{saved}\n\n"
        + "<!-- checked by: scripts/lab/judges.py -->\n```sh\n"
        + commands
        + "\n```"
    )


COLLECTION_NAMES = {"nfcorpus": "NFCorpus", "cranfield": "Cranfield", "vaswani": "Vaswani"}


def long_table(figures: dict[str, Any]) -> str:
    notes = Notes()
    header = ["segmentations", *figures["corpora"]]
    body = [
        [
            f"queries of {figures['least']}+ words",
            *(f"{n:,} of {q:,}" for n, q in zip(figures["long"], figures["queries"], strict=True)),
        ]
    ]
    for row in figures["rows"]:
        cells = []
        for count in row["counts"]:
            if count is None:
                cells.append("-")
            else:
                long, whole = count
                cells.append(f"{whole:,} ({whole / long:.1%})" if long else "0")
        body.append([_row_name(row) + notes.mark(row["notes"]), *cells])
    table = render_table(header, body, markdown=True)
    return table + ("\n\n" + notes.render() if notes.texts else "")


def function_table(figures: dict[str, Any]) -> str:
    notes = Notes()
    header = ["segmentations"]
    for corpus in figures["corpora"]:
        header += [f"{corpus}: next to a function word", f"{corpus}: between content words"]
    gaps = ["gaps"]
    rates = ["gold: break rate"]
    for gold in figures["gold"]:
        gaps += [f"{gold['function']:,}", f"{gold['content']:,}"]
        rates += [
            three_places(gold["function_broken"] / gold["function"]),
            three_places(gold["content_broken"] / gold["content"]),
        ]
    body = [gaps, rates]
    for row in figures["rows"]:
        cells = []
        for cell in row["cells"]:
            if cell is None:
                cells += ["-", "-"]
            else:
                cells += [
                    three_places(cell["function_correct"] / cell["function"]),
                    three_places(cell["content_correct"] / cell["content"]),
                ]
        body.append([_row_name(row) + notes.mark(row["notes"]), *cells])
    table = render_table(header, body, markdown=True)
    return table + ("\n\n" + notes.render() if notes.texts else "")


STYLE_HEADER = ["style", "web break (CV)", "web query (CV)", "product break (dev)"]
STYLE_HEADER += ["product query (dev)"]


CORPUS_NAMES = {"webis": "Webis-QSeC-10 (cross-validation)", "queryner": "QueryNER dev"}


def styles_section(figures: dict[str, Any]) -> str:
    """The styles table, what ``auto`` costs against each corpus's own style (a sentence from
    the table), and the examples table."""
    rows = figures["rows"]
    table = render_table(
        STYLE_HEADER,
        [[f"`style={r['style']}`", *map(_cell, r["figures"])] for r in rows],
        markdown=True,
    )
    by_style = {r["style"]: r["figures"] for r in rows}
    auto, cost = by_style["auto"], style_cost(rows)
    parts = []
    for corpus, offset in (("webis", 0), ("queryner", 2)):
        right = RIGHT_STYLE[corpus]
        fixed = by_style[right]
        lost_break, lost_query = cost[corpus]
        parts.append(
            f"on {CORPUS_NAMES[corpus]}, `style=auto` gives {auto[offset]:.3f} break / "
            f"{auto[offset + 1]:.3f} query accuracy and `style={right}` "
            f"{fixed[offset]:.3f} / {fixed[offset + 1]:.3f}: auto costs {lost_break:+.3f} "
            f"break and {lost_query:+.3f} query accuracy"
        )
    wrong = []
    for corpus, offset in (("webis", 0), ("queryner", 2)):
        other = next(s for s in by_style if s not in ("auto", RIGHT_STYLE[corpus]))
        lost = by_style[RIGHT_STYLE[corpus]][offset + 1] - by_style[other][offset + 1]
        wrong.append(f"`style={other}` on {CORPUS_NAMES[corpus]} {lost:.3f}")
    sentence = (
        "What `auto` costs against the right fixed style (the fixed style's accuracy minus "
        "auto's; negative: auto does better): "
        + "; ".join(parts)
        + ". The wrong fixed style costs, in query accuracy against the right one: "
        + ", ".join(wrong)
        + "."
    )
    examples = figures.get("examples", [])
    names = list(examples[0]["styles"]) if examples else []
    body = [
        [e["corpus"], f"`{e['gold']}`", *(f"`{e['styles'][n]}`" for n in names)] for e in examples
    ]
    shown = render_table(
        ["corpus", "gold", *(f"`{figures['shipped']}(style={n})`" for n in names)],
        body,
        markdown=True,
    )
    return f"{table}\n\n{sentence}\n\n{shown}"


KIND_HEADER = ["recipe", "style", "web break", "web query", "product break", "product query"]


def kinds_section(figures: dict[str, Any], ideas: dict[str, list[float]]) -> str:
    """The kinds table, the references, the router's accuracy and what they decide (each
    sentence computed from the figures)."""
    rows = figures["rows"]
    table = render_table(
        [*KIND_HEADER, "file (MB)"],
        [
            [
                f"`{r['name']}`" if r["name"].startswith("qseg-") else r["name"],
                f"`{r['style']}`",
                *map(_cell, r["figures"]),
                f"{r['bytes'] / 1e6:.1f}",
            ]
            for r in rows
        ],
        markdown=True,
    )
    references = {r["name"]: r["figures"] for r in figures["references"]}
    if ENCODER in ideas:
        references["`joint` (the contextual probe), web queries only"] = ideas[ENCODER]
    if V3_ROW in ideas:
        references[f"{V3_NAME} (one model of both kinds, the kind an input)"] = ideas[V3_ROW]
    shown = render_table(
        ["reference", "web break", "web query", "product break", "product query"],
        [[name, *map(_cell, values)] for name, values in references.items()],
        markdown=True,
    )
    routing = figures["routing"]
    route = (
        "The router (a hashed word and character n-gram classifier, both kinds weighed alike) "
        f"sends {routing['webis_cv']:.1%} of the Webis queries and "
        f"{routing['queryner_train_cv']:.1%} of QueryNER train to the model of their kind "
        "(5-fold cross-validation over both), "
        f"and {routing['queryner_dev']:.1%} of QueryNER dev (trained on all)."
    )
    findings = kind_findings(rows, references, figures.get("distilled"))
    return f"{table}\n\n{shown}\n\n{route}\n\n{findings}"


def product_cv(meta: dict[str, Any]) -> str:
    """The product model's cross-validation over QueryNER train + dev, from its card."""
    found = meta.get("product_cross_validation", {}).get("queryner_train_dev_5_fold")
    if found is None:
        return "not measured: `python scripts/train_default.py`"
    return f"{found['query_accuracy']:.4f} query and {found['break_accuracy']:.4f} break accuracy"


def first_use_text(figures: dict[str, Any]) -> str:
    """How long the default's first query takes on an empty cache, and on the cache made."""
    made = figures.get("first_use")
    if made is None:
        return "(the first use is not measured yet: `--only speed`)"
    files = ", ".join(f"`{name}` ({size / 1e6:.1f} MB)" for name, size in made["files"])
    return (
        f"`{made['command']}` takes {made['empty']:.1f} s on an empty cache and "
        f"{made['made']:.1f} s on the cache it makes ({files})"
    )


def render(figures: dict[str, Any], shared: Path) -> str:
    """The report from its figures (sections never measured say how to measure them)."""
    meta = json.loads((SHIPPED / f"{DEFAULT_NAME}.json").read_text())
    v3 = json.loads((SHIPPED / f"{V3_NAME}.json").read_text())
    rows = {row[0]: row[1:] for row in figures.get("rows", [])}
    table = render_table(
        ["model", "web break", "web query", "product break", "product query"],
        [[name, *map(_cell, values)] for name, values in rows.items()],
        markdown=True,
    )
    candidates = [as_candidate(c) for c in CANDIDATES]
    licences = "\n".join(f"- {what}: {licence}" for what, licence in meta["licences"].items())
    quick = any(m.get("quick") for m in figures.get("made", {}).values())
    methods = dict(part.split(": ", 1) for part in meta["method"].split("; "))
    text = TEMPLATE.format(
        targets=" and ".join(
            f"{b:.2f} break / {q:.2f} query accuracy on {kind} queries"
            for kind, (b, q) in TARGETS.items()
        ),
        warning=QUICK_WARNING if quick else "",
        name=DEFAULT_NAME,
        web_method=methods["web"],
        product_method=methods["product"],
        style=meta["style"],
        v3=V3_NAME,
        v4=V4_NAME,
        product_cv=product_cv(meta),
        v3_method=v3["method"],
        v3_bytes=v3["bytes"],
        first_use=first_use_text(figures),
        table=table if rows else missing("ideas"),
        ideas_made=made_by(figures, "ideas") + skipped_ideas(figures.get("ideas_skipped", [])),
        findings=findings(rows) if rows else "",
        verdicts=verdict_table(rows) if rows else "",
        noise=NOISE,
        kinds=kinds_section(figures["kinds"], rows) if "kinds" in figures else missing("kinds"),
        kinds_made=made_by(figures, "kinds"),
        candidates=candidate_notes(candidates),
        held_out=held_out_table(figures["held_out"])
        if "held_out" in figures
        else missing("held-out"),
        held_out_made=made_by(figures, "held-out"),
        ir=ir_table(figures["ir"]) if "ir" in figures else missing("ir"),
        ir_made=made_by(figures, "ir"),
        long=long_table(figures["long"]) if "long" in figures else missing("long"),
        long_made=made_by(figures, "long"),
        least=LONG,
        function_words=function_table(figures["function_words"])
        if "function_words" in figures
        else missing("function-words"),
        function_made=made_by(figures, "function-words"),
        function_list=", ".join(f'"{w}"' for w in sorted(FUNCTION_WORDS)),
        conventions=figures.get("conventions") or missing("conventions"),
        conventions_made=made_by(figures, "conventions"),
        styles=styles_section(figures["styles"]) if "styles" in figures else missing("styles"),
        styles_made=made_by(figures, "styles"),
        style_spec=figures.get("styles", {}).get("spec", DEFAULT.spec),
        speed=figures.get("speed", "(not measured yet: --only speed)"),
        speed_made=made_by(figures, "speed"),
        bytes=meta["bytes"],
        sha=meta["sha256"],
        beside=", ".join(
            f"`{name}` ({entry['bytes']:,} bytes)" for name, entry in meta["beside"].items()
        ),
        webis=meta["trained_on"]["web model"]["webis-qsec-10-training"],
        queryner=meta["trained_on"]["product model"]["queryner-train"],
        counts=meta["resources"]["counts"],
        titles=meta["resources"]["titles"],
        names=meta["resources"]["names"],
        vectors=meta["resources"]["vectors"],
        licences=licences,
        libraries=", ".join(f"{k} {v}" for k, v in meta["libraries"].items()),
    )
    folders = [
        *Corpora.folders(shared),
        shared / "data" / "ir",
        shared / "data" / "saharoy-sigir12",
    ]
    return with_provenance(text, folders, builtin_resources())


QUICK_WARNING = """
> **Quick mode** (`--quick`): models trained on a quarter of the training queries with small
> boosters; the figures check the report's code and are not the model's. Do not commit.
"""


TEMPLATE = (Path(__file__).parent / "templates" / "default-model.md").read_text("utf-8")
"""The page's prose, its figures as ``str.format`` fields."""
