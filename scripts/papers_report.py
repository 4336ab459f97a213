"""Write docs/papers.md: every results table of the five papers beside qseg's closest figures.

    python scripts/papers_report.py [--shared ../shared] [--out docs/papers.md]

Published figures are copied from the text of the papers in ../shared/papers (line numbers
given). qseg's figures are computed here (`qseg evaluate` on the Webis-QSeC-10 training part,
the query-log method on a small log, cross-validation of the SVM, the random model) or read
from the reports the other scripts write (docs/*.md and docs/default-model.json, named in each
row), so this page is as fresh as those; rerun them first when their code changes. About a
minute.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from _cite import cite
from _logs import log_sources, write_demo_log
from _qseg import evaluate, qseg

from qseg.corpora.webis import TRAINING_PREFIX as PREFIX
from qseg.corpora.webis import read_training_set
from qseg.evaluation.cross_validation import cross_validate
from qseg.evaluation.matching import evaluate as evaluate_outputs
from qseg.evaluation.provenance import builtin_resources, with_provenance
from qseg.evaluation.random_model import expected_height
from qseg.fileio import atomic_write
from qseg.resources.bundle import Resources
from qseg.segmenters.registry import create
from qseg.segmenters.rules.wiki import MEDIAN_BIGRAM_COUNT
from qseg.tables import render_table

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HEADER = ["paper's row", "published", "qseg", "qseg's setting (source)"]
PAPER_000_TAUS = {"PMI-W": 8.141, "PMI-Q": 0.156}


# -- reading the other reports ---------------------------------------------------------------


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


# -- qseg's own runs ---------------------------------------------------------------------------


def pair(result: dict) -> str:
    """Query / break accuracy."""
    return f"{result['query_accuracy']:.3f} / {result['break_accuracy']:.3f}"


def five(result: dict) -> list[str]:
    keys = ("query_accuracy", "segment_precision", "segment_recall", "segment_f1")
    return [f"{result[k]:.3f}" for k in keys] + [f"{result['break_accuracy']:.3f}"]


def tuned(*arguments: str) -> dict[str, str]:
    line = qseg("tune", *arguments).strip()
    fields = line.split("\t")
    found = dict(f.split("=", 1) for f in fields if "=" in f and not f.startswith("phrases"))
    if fields[0].startswith("phrases"):
        found["spec"] = fields[0]
    return found


def svm_figures(shared: Path) -> dict[str, dict]:
    """5-fold cross-validation (fold split 0, majority) of paper 004's SVM on Webis."""
    webis = read_training_set(shared / "data" / "webis-qsec-10-training")
    resources = Resources.load(ngrams=webis.ngram_file, titles=webis.titles_file)
    figures = {}
    for spec in ("features(classifier=svm)", "features(classifier=svm, pair_counts=true)"):
        outputs = cross_validate(
            lambda spec=spec: create(spec, resources).set_params(n_jobs=2),
            webis.votes,
            webis.tags,
            k=5,
            seed=0,
        )
        s = evaluate_outputs({spec: outputs}, webis.votes)[0]
        figures[spec] = {"query_accuracy": s.query_accuracy, "break_accuracy": s.break_accuracy}
        print(spec, pair(figures[spec]), flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=DOCS / "papers.md")
    args = parser.parse_args()
    corpus = args.shared / "data" / "webis-qsec-10-training"
    if not corpus.exists():
        raise SystemExit(f"Webis-QSeC-10 not found at {corpus}; pass --shared")
    gold = corpus / f"{PREFIX}segmentations-crowdsourced.txt"
    data = corpus / "data"
    paper_resources = [
        "--ngrams", str(data / f"{PREFIX}n-gram-web-frequencies-google.txt"),
        "--titles", str(data / f"{PREFIX}n-gram-wikipedia-titles.txt"),
        "--unigrams", str(data / f"{PREFIX}1-gram-web-frequencies-msn.txt"),
        "--bigrams", str(data / f"{PREFIX}2-gram-web-frequencies-msn.txt"),
    ]  # fmt: skip
    rules = {
        "naive": "naive",
        "wiki": "wiki",
        "pmi": "pmi",
        "always-split": "always-split",
        "never-split": "never-split",
    }
    corpus_runs = {
        protocol: evaluate(gold, rules, *paper_resources, protocol=protocol)
        for protocol in ("majority", "best-of")
    }
    print("rule-based methods on the corpus's resources", flush=True)
    pmi_w = tuned("pmi", "--gold", str(gold))
    phrases_default = tuned("phrases", "--gold", str(gold), "--scoring", "default")
    phrases_npmi = tuned("phrases", "--gold", str(gold), "--scoring", "npmi", "--connectors")
    builtin = evaluate(
        gold,
        {
            "PMI-W, paper tau": f"pmi(tau={PAPER_000_TAUS['PMI-W']})",
            "PMI-W, tuned": f"pmi(tau={pmi_w['tau']})",
            "phrases, default scorer, tuned": phrases_default["spec"],
            "phrases, npmi, tuned": phrases_npmi["spec"],
            "wiki-unseen": "wiki(unseen_titles=true)",
        },
    )
    print("baselines on the built-in resources", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.txt"
        lines = write_demo_log(log, args.shared)
        counts = Path(tmp) / "log.qseg"
        qseg("build", "ngrams", "--from", "text", "--max-order", "2", "--quiet", "-o", str(counts),
             str(log))  # fmt: skip
        pmi_q = tuned("pmi", "--gold", str(gold), "--ngrams", str(counts))
        logged = evaluate(
            gold,
            {
                "Mishra et al.": "querylog(wiki=false)",
                "Mishra et al. + Wiki": "querylog",
                "PMI-Q, paper tau": f"pmi(tau={PAPER_000_TAUS['PMI-Q']})",
                "PMI-Q, tuned": f"pmi(tau={pmi_q['tau']})",
            },
            "--query-log", str(log), "--ngrams", str(counts),
        )  # fmt: skip
    print("query-log methods", flush=True)
    svm = svm_figures(args.shared)
    page = render(
        args,
        corpus_runs=corpus_runs,
        builtin=builtin,
        logged=logged,
        log_lines=lines,
        taus={"PMI-W": pmi_w["tau"], "PMI-Q": pmi_q["tau"]},
        svm=svm,
    )
    with atomic_write(args.out) as out:
        page = with_provenance(page, [corpus, *log_sources(args.shared)], builtin_resources())
        out.write(cite(page, ""))
    print(f"wrote {args.out}")


def phrases_sentence(majority: dict, builtin: dict, logged: dict) -> str:
    """Which of qseg's unsupervised methods beat gensim's best Phrases, and by how much."""
    best = max(
        (builtin["phrases, default scorer, tuned"], builtin["phrases, npmi, tuned"]),
        key=lambda r: r["query_accuracy"],
    )
    ours = {
        "`wiki(unseen_titles=true)` on the same built-in counts": builtin["wiki-unseen"],
        "`wiki` on the corpus's counts": majority["wiki"],
        "`naive` on the corpus's counts": majority["naive"],
        "`pmi` on the corpus's probabilities": majority["pmi"],
        "`querylog`": logged["Mishra et al. + Wiki"],
    }
    margins = {
        name: (
            round(r["query_accuracy"] - best["query_accuracy"], 3),
            round(r["break_accuracy"] - best["break_accuracy"], 3),
        )
        for name, r in ours.items()
    }
    beat = [
        f"{name} by {query:.3f} query / {brk:.3f} break accuracy"
        for name, (query, brk) in margins.items()
        if query > 0 and brk > 0
    ]
    lost = [name for name, r in ours.items() if not any(name in b for b in beat)]
    return (
        f"Gensim's best Phrases here ({pair(best)}, its threshold tuned on these very queries) "
        f"is beaten by {'; '.join(beat) or 'none of them'}; not by {', '.join(lost)}."
    )


def table(rows: list[list[str]]) -> str:
    return render_table(HEADER, rows, markdown=True)


def render(args, *, corpus_runs, builtin, logged, log_lines, taus, svm) -> str:
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
    parts = [INTRO.format(log_lines=f"{log_lines:,}")]

    # -- paper 000 -----------------------------------------------------------------------------
    ndcg10 = row(nfcorpus, "nDCG@10")
    qvrs = {k: v for k, v in ndcg10.items() if k.endswith("QVRS")}
    above = all(
        float(first_number(v)) >= float(first_number(ndcg10["unsegmented"])) for v in qvrs.values()
    )
    below = all(
        float(first_number(v)) <= float(first_number(ndcg10["BQV_BF"])) for v in qvrs.values()
    )
    tau10 = row(kendall, "nDCG@10")
    parts.append(
        PAPER_000.format(
            matching=table(
                [
                    [
                        "Li et al. [9]",
                        "-",
                        "not implemented",
                        "EM over a query's segmentations; no web n-gram counts here to run it",
                    ],
                    [
                        "Hagen et al. [7] (wiki-based normalization)",
                        "-",
                        pair(majority["wiki"]),
                        f"`wiki`, the corpus's counts and titles; {webis}",
                    ],
                    [
                        "Mishra et al. [11]",
                        "-",
                        pair(logged["Mishra et al."]),
                        f"`querylog(wiki=false)` on a {log_lines:,}-query log of the shared "
                        f"corpora; {webis}",
                    ],
                    [
                        "Mishra et al. [11] + Wiki",
                        "-",
                        pair(logged["Mishra et al. + Wiki"]),
                        f"`querylog`, same log, built-in DBpedia names; {webis}",
                    ],
                    [
                        f"PMI-W, tau {PAPER_000_TAUS['PMI-W']}",
                        "-",
                        pair(builtin["PMI-W, paper tau"]),
                        f"`pmi(tau={PAPER_000_TAUS['PMI-W']})` on the built-in Web1T counts; "
                        f"{webis}",
                    ],
                    [
                        "PMI-W, tuned",
                        "-",
                        pair(builtin["PMI-W, tuned"]),
                        f"tau {float(taus['PMI-W']):.3f} tuned in-sample (`qseg tune pmi`)",
                    ],
                    [
                        f"PMI-Q, tau {PAPER_000_TAUS['PMI-Q']}",
                        "-",
                        pair(logged["PMI-Q, paper tau"]),
                        f"`pmi(tau={PAPER_000_TAUS['PMI-Q']})` on the log's word and 2-gram "
                        f"counts; {webis}",
                    ],
                    [
                        "PMI-Q, tuned",
                        "-",
                        pair(logged["PMI-Q, tuned"]),
                        f"tau {float(taus['PMI-Q']):.3f} tuned in-sample",
                    ],
                    [
                        "gensim Phrases, default scorer (external baseline)",
                        "-",
                        pair(builtin["phrases, default scorer, tuned"]),
                        "threshold tuned in-sample (`qseg tune phrases`), built-in counts",
                    ],
                    [
                        "gensim Phrases, npmi + connectors (external baseline)",
                        "-",
                        pair(builtin["phrases, npmi, tuned"]),
                        "threshold tuned in-sample, built-in counts",
                    ],
                    [
                        "(qseg's `wiki(unseen_titles=true)`, on the same counts as Phrases)",
                        "-",
                        pair(builtin["wiki-unseen"]),
                        "built-in Web1T counts and DBpedia names, untuned",
                    ],
                ]
            ),
            phrases=phrases_sentence(majority, builtin, logged),
            ir=table(
                [
                    [
                        "Unseg. Query, nDCG@10",
                        "-",
                        ndcg10["unsegmented"],
                        "NFCorpus test, tantivy, counts from its documents (docs/ir-evaluation.md)",
                    ],
                    *[
                        [f"{name.removesuffix(' QVRS')} QVRS, nDCG@10", "-", value, "the same run"]
                        for name, value in qvrs.items()
                    ],
                    ["BQV_BF, nDCG@10", "-", ndcg10["BQV_BF"], "the same run"],
                    [
                        "every QVRS above the unsegmented query (L42)",
                        "yes",
                        "yes" if above else "no",
                        "the same run",
                    ],
                    [
                        "every QVRS at most BQV_BF (L42)",
                        "yes",
                        "yes" if below else "no",
                        "the same run",
                    ],
                    [
                        "Kendall tau, IR vs matching metrics, average (L45)",
                        "0.75",
                        f"{tau10['break_accuracy']} (break acc, nDCG@10)",
                        "against BQV_BF's best segmentation, not human references (none for "
                        "NFCorpus)",
                    ],
                    [
                        "relevance judges' agreement (Table 8, last row)",
                        '"quite high" (no figure in the copy)',
                        f"alpha {row(judges, 'ordinal')['alpha [95% CI]'].split()[0]} ordinal, "
                        f"{row(judges, 'nominal')['alpha [95% CI]'].split()[0]} nominal",
                        "the released judgments of the 500 queries (docs/agreement.md)",
                    ],
                ]
            ),
        )
    )

    # -- paper 001 -----------------------------------------------------------------------------
    schemes_d2 = next(r for r in schemes if r["scope"] == "all" and r["distance"] == "d2")
    both, none = row(prepositions, "both"), row(prepositions, "none")
    left, right = row(prepositions, "left"), row(prepositions, "right")
    alpha_rows = [
        [
            "Q500 / Q700, flat d (Table 4)",
            "0.22 (0.62) / 0.21 (0.59)",
            f"{webis_alpha['alpha [95% CI]'].split()[0]} ({webis_alpha['S [95% CI]'].split()[0]})",
            "Webis crowd votes, 38,537 flat annotations of 3,848 queries (docs/agreement.md)",
        ],
        [
            "Q500 / Q700, nested d1 (Table 4)",
            "0.15 (0.70) / 0.21 (0.89)",
            f"{row(schemes, 'all')['alpha [95% CI]'].split()[0]} "
            f"({row(schemes, 'all')['S [95% CI]'].split()[0]})",
            "the 17 nesting schemes of Mishra et al. + Wiki as annotators of the 500 queries: "
            "machines, not people",
        ],
        [
            "Q500 / Q700, nested d2 (Table 4)",
            "0.15 (0.44) / 0.16 (0.68)",
            f"{schemes_d2['alpha [95% CI]'].split()[0]} ({schemes_d2['S [95% CI]'].split()[0]})",
            "the same schemes, d2",
        ],
        [
            "QG500 / S300 flat (Table 4)",
            "0.61 (0.88) / 0.27 (0.74)",
            "-",
            "no expert (QG500) or sentence (S300) annotations here",
        ],
        [
            "QRand U250 / B250 / T250, flat (Table 4)",
            "0.23 (0.89) / 0.22 (0.86) / 0.20 (0.86)",
            "-",
            "no annotations of random word sequences here",
        ],
    ]
    for name in (r["qseg method"] for r in nested_alpha if r["distance"] == "d1"):
        d1 = next(r for r in nested_alpha if r["qseg method"] == name and r["distance"] == "d1")
        d2 = next(r for r in nested_alpha if r["qseg method"] == name and r["distance"] == "d2")
        alpha_rows.append(
            [
                f"qseg `--nested` vs the authors' trees: {name}",
                "-",
                f"{d1['mean alpha over 17 schemes']} / {d2['mean alpha over 17 schemes']}",
                "d1 / d2, mean over the 17 schemes (docs/nested.md)",
            ]
        )
    ours_d1 = {
        r["qseg method"]: r["mean alpha over 17 schemes"]
        for r in nested_alpha
        if r["distance"] == "d1"
    }
    published_heights = {
        5: ("2.57", "2.00"),
        6: ("3.24", "2.26"),
        7: ("3.88", "2.70"),
        8: ("4.47", "2.89"),
    }
    height_rows = []
    for n, (expected, q500) in published_heights.items():
        ours = float(expected_height(n))
        column = next(k for k in heights[0] if k.startswith(f"{n} words"))
        default_tree = row(heights, "the default model (merging)")[column]
        authors = row(heights, "authors' scheme_001")[column]
        querylog = row(heights, "Mishra et al. + Wiki-Boost on the small log (its own nesting)")[
            column
        ]
        height_rows.append(
            [
                f"{n} words, Expected",
                expected,
                f"{ours:.4f}",
                "exact, by enumerating the binary trees (`random_model.expected_height`)",
            ]
        )
        height_rows.append(
            [
                f"{n} words, Q500 (Turkers)",
                q500,
                f"{default_tree} / {querylog} / {authors}",
                "the 500 queries: qseg's default model / `querylog` / the authors' scheme_001 "
                "(docs/nested.md)",
            ]
        )
    parts.append(
        PAPER_001.format(
            webis_alpha=webis_alpha["alpha [95% CI]"].split()[0],
            schemes_alpha=row(schemes, "all")["alpha [95% CI]"].split()[0],
            ours_low=min(ours_d1.values(), key=float),
            ours_high=max(ours_d1.values(), key=float),
            best=max(ours_d1, key=lambda name: float(ours_d1[name])),
            alpha=table(alpha_rows),
            heights=table(height_rows),
            prepositions=table(
                [
                    [
                        "Both (Q500 / Q700)",
                        "2.24 / 2.78",
                        both["%"],
                        "Webis crowd annotations, share of preposition occurrences "
                        "(docs/agreement.md)",
                    ],
                    ["None", "50.34 / 35.74", none["%"], "the same"],
                    ["Right", "23.86 / 19.02", right["%"], "the same"],
                    ["Left", "18.08 / 40.59", left["%"], "the same"],
                ]
            ),
            edge=row(prepositions, "edge")["%"],
        )
    )

    # -- paper 002 -----------------------------------------------------------------------------
    qn = row(queryner, "joint, trained on QueryNER train")
    embeddings = float(row(supervised, "embeddings (XGBoost; paper 002)")["majority query"])
    joint = float(row(supervised, "joint")["majority query"])
    parts.append(
        PAPER_002.format(
            short=f"{0.54 - embeddings:.3f}",
            joint_gap=f"{joint - 0.552:+.3f}",
            webis=table(
                [
                    [
                        "Naive n-gram (Table 1)",
                        "0.351 / 0.677",
                        pair(majority["naive"]),
                        "`naive`, the corpus's counts, all 3,848 queries (no training); majority",
                    ],
                    [
                        "Logistic Regression, AOL word2vec (Table 1)",
                        "0.418 / 0.731",
                        cv("embeddings (logistic regression)"),
                        f"`embeddings(classifier=logreg)`; {sup}",
                    ],
                    [
                        "XGBoost, GloVe web crawl (Table 2)",
                        "0.552 / 0.811",
                        cv("embeddings (XGBoost; paper 002)"),
                        "`embeddings`, vectors trained on the Webis n-gram file (no GloVe "
                        f"offline); {sup}",
                    ],
                    [
                        "XGBoost, Google News word2vec (Table 2)",
                        "0.523 / 0.797",
                        "-",
                        "not available offline",
                    ],
                    [
                        "XGBoost, fastText wikipedia (Table 2)",
                        "0.548 / 0.806",
                        "-",
                        "not available offline",
                    ],
                    [
                        "XGBoost, word2vec on the AOL corpus (Table 2)",
                        "0.54 / 0.804",
                        cv("embeddings (XGBoost; paper 002)"),
                        "the closest: vectors from the corpus's own n-gram file",
                    ],
                    ["(qseg's best, for scale)", "-", cv("joint"), f"`joint`; {sup}"],
                ]
            ),
            ebay=table(
                [
                    [
                        "Naive n-gram (Table 3)",
                        "0.578 / 0.713",
                        f"{naive_product[4]:.3f} / {naive_product[3]:.3f}",
                        "`naive`, built-in counts, QueryNER dev, 871 product queries "
                        "(docs/default-model.json)",
                    ],
                    [
                        "Fasttext cbow + XGBoost (Table 3)",
                        "0.683 / 0.799",
                        f"{qn['query']} / {qn['QueryNER dev break']}",
                        "`joint` trained on QueryNER train, QueryNER dev (docs/supervised.md)",
                    ],
                ]
            ),
        )
    )

    # -- paper 003 -----------------------------------------------------------------------------
    best_rows = []
    for label, published, system in (
        ("MI", ["0.598", "0.727", "0.738", "0.732", "0.844"], "pmi"),
        ("[10] naive", ["0.599", "0.736", "0.733", "0.734", "0.842"], "naive"),
        ("Our (wiki-based)", ["0.616", "0.744", "0.739", "0.742", "0.850"], "wiki"),
    ):
        ours = five(best_of[system])
        best_rows.append(
            [
                f"{label}, Best of AMT",
                " / ".join(published),
                " / ".join(ours),
                f"`{system}`, the corpus's resources; training part, best-of protocol",
            ]
        )
    bwc_rows = [
        ["MI, Best of A, B, C (Table 5)", "0.583 / 0.849", "-", "BWC07 is not in ../shared"],
        ["[4] Bergsma & Wang (Table 5)", "0.702 / 0.899", "-", "BWC07 is not in ../shared"],
        ["[10] naive (Table 5)", "0.700 / 0.889", "-", "BWC07 is not in ../shared"],
        ["Our (Table 5)", "0.726 / 0.900", "-", "BWC07 is not in ../shared"],
        ["AMT workers (Table 6)", "0.821 / 0.941", "-", "BWC07 is not in ../shared"],
        [
            "[10] naive, Best of AMT, enriched (Table 7)",
            "0.859 / 0.950",
            "-",
            "BWC07 is not in ../shared",
        ],
        ["Our, Best of AMT, enriched (Table 7)", "0.857 / 0.952", "-", "BWC07 is not in ../shared"],
    ]
    parts.append(
        PAPER_003.format(
            webis=table(best_rows),
            bwc=table(bwc_rows),
            other=table(
                [
                    [
                        "median 2-gram count (Tables 2-3)",
                        "3 461 030",
                        f"{MEDIAN_BIGRAM_COUNT:,}",
                        "`wiki`'s default `median`",
                    ],
                    [
                        "runtime (section 7)",
                        "about 3 000 queries/s, 13 GB hash table",
                        f"{speed.group(1)} queries/s",
                        "`wiki`, exact store from the corpus's files, one core "
                        "(docs/resources.md, benchmarks/throughput.py)",
                    ],
                    [
                        "MI threshold tau",
                        "0.894775",
                        "0.894775",
                        "`pmi`'s default; with the Microsoft probabilities it reproduces "
                        "`pmi-baseline` on all 3,848 queries",
                    ],
                ]
            ),
        )
    )

    # -- paper 004 -----------------------------------------------------------------------------
    parts.append(
        PAPER_004.format(
            breaks=majority["always-split"]["break_accuracy"],
            table=table(
                [
                    [
                        "Naive Baseline 1 (always split)",
                        "4.2% / 44.8%",
                        pair(majority["always-split"]),
                        f"`always-split`; {webis}",
                    ],
                    [
                        "Naive Baseline 2 (never split)",
                        "4.0% / 55.2%",
                        pair(majority["never-split"]),
                        f"`never-split`; {webis}",
                    ],
                    [
                        "State-of-the-Art Baseline (MI)",
                        "26.6% / 68%",
                        pair(majority["pmi"]),
                        f"`pmi`, paper 003's tau, the Microsoft probabilities; {webis}",
                    ],
                    [
                        "SVM, all features",
                        "not in the text copy",
                        pair(svm["features(classifier=svm)"]),
                        "`features(classifier=svm)`, 5-fold CV (fold split 0), majority",
                    ],
                    [
                        "SVM with the L0/R1 and L1/R0 pair counts",
                        "not in the text copy",
                        pair(svm["features(classifier=svm, pair_counts=true)"]),
                        "the same with `pair_counts=true`",
                    ],
                    [
                        "(XGBoost on the same features, for scale)",
                        "-",
                        cv("features (XGBoost)"),
                        sup,
                    ],
                ]
            ),
        )
    )
    return "\n".join(parts)


INTRO = """# Every paper's results beside qseg's

Produced by `python scripts/papers_report.py`. For each results table of the five papers in
`../shared/papers`: the published figure, qseg's figure on the closest data available here,
and how the two differ. Published figures are copied from the text of the papers; where the
text lost a table's numbers, the row says so. qseg's figures are computed by the script
(`qseg evaluate` on the Webis-QSeC-10 training part, the query-log method on a small log, the
SVM by cross-validation, the random model) or read from the pages the other report scripts
write, named in each row. Accuracies are written query accuracy / break accuracy unless a row
says otherwise.

What is missing here, for every paper: the held-out test part of Webis-QSeC-10 (qseg measures
on the 3,848 training queries), the Bergsma-Wang corpus (BWC07), the Bing result pages and
human segmentations of paper 000's 500 queries, paper 001's Turker annotations (only the
authors' nested machine output of the 500 queries is here), paper 002's eBay queries and
pretrained GloVe / word2vec / fastText vectors, and a web query log: the query-log rows use a
{log_lines}-query log made of the shared query corpora (QueryNER train and dev, the 500
queries of paper 000), none of them Webis queries.
"""

PAPER_000 = """## Paper 000: Saha Roy et al., an IR-based evaluation framework (SIGIR 2012)

The text copy of this paper has none of its table values (Tables 3-8: the QVRS of six
algorithms and three annotators on 500 Bing queries, matching metrics against BQV_BF, the
Li et al. / PMI-Q inversion, Kendall tau, the Bing API run, annotator agreement). What it
states in prose is in the rows below; its algorithms are measured here by matching metrics on
Webis (Table 3's algorithms; its own queries have no released human segmentation) and by the
IR framework on NFCorpus (its Bing result pages were never released).

### The six algorithms (Tables 2-4), by matching metrics

{matching}

Under matching metrics paper 000 found "Mishra et al. + Wiki" the best of its algorithms
(L45). Not on this log: a 9,212-query log finds few segments (docs/query-log.md; with the
Webis queries themselves in the log it reaches 0.451 / 0.744). Paper 000's PMI-W threshold
belongs to its units: on qseg's log10 relative frequencies it breaks every gap, exactly
`always-split`. {phrases}

### The IR framework (Tables 3, 6, 8), on NFCorpus

{ir}
"""

PAPER_001 = """## Paper 001: Ramanath et al., agreement of flat and nested segmentations (ACL 2013)

### Table 4: agreement, alpha (S)

{alpha}

Paper 001's Turkers agreed little on queries (Q500 and Q700: flat alpha 0.21-0.22, nested
0.15-0.21 with d1); the Webis crowd agrees more ({webis_alpha}), on shorter AOL queries with ten
workers each. The authors' 17 nesting schemes agree far more ({schemes_alpha}), being one
method's output. qseg's trees agree with the authors' with alpha {ours_low} to {ours_high} (d1,
mean over the schemes): machine against machine, so not comparable with the Turkers' figures;
{best} agrees best.

### Table 5: mean tree height by query length

{heights}

The expected heights are reproduced exactly. Paper 001's Turkers build flatter trees than
random (2.00 for five words); so do the authors' trees and qseg's.

### Table 6: segment boundaries around prepositions (% of occurrences)

{prepositions}

Paper 001's Bing annotators seldom cut on both sides of a preposition; the Webis workers
mostly do. Paper 001 leaves out prepositions at a query's edge; qseg counts them in a row of
their own ({edge}% of occurrences), so its four rows add up to the rest.
"""

PAPER_002 = """## Paper 002: Kale et al., word embeddings for query segmentation (Neu-IR 2017)

### Tables 1-2: Webis-QSeC-10 (the paper's "AOL queries", a 60-20-20 split)

{webis}

Paper 002 trains on 60% and tests on 20% of its Webis queries; qseg cross-validates on the
3,848 training queries (the test part is held out). Its best vectors (GloVe web crawl, 840
billion tokens) are not available offline; qseg's `embeddings` uses vectors trained on the
corpus's n-gram file, nearest its "word2vec on the AOL corpus" row, and falls {short} query
accuracy short of it; `joint`, which adds counts, titles and joint decoding, is {joint_gap} query
accuracy above the paper's best row.

### Table 3: eBay product queries

{ebay}

The eBay queries are not public; QueryNER (Amazon product queries with entity spans read as
segments) is the closest product data here.
"""

PAPER_003 = """## Paper 003: Hagen et al., query segmentation revisited (WWW 2011)

### Table 8: Webis-QSeC-10 (query / segment precision / recall / F / break accuracy)

{webis}

qseg reproduces the authors' released outputs of naive, wiki and the MI baseline on every one
of the 3,848 training queries (docs/webis-qsec-10.md), so the gaps are data, not method: the
paper's figures are over its corpus as then annotated, qseg's over the training part of the
published corpus with the best-of protocol (the reference maximizing break accuracy). The MI
row differs most; paper 003 does not say which queries or which MI threshold Table 8 used.

### Tables 5-7: the Bergsma-Wang corpus (query / break accuracy)

{bwc}

### Other figures

{other}
"""

PAPER_004 = """## Paper 004: Bergsma and Wang, noun phrase query segmentation (a thesis chapter)

### The accuracy table (query / break accuracy)

{table}

The chapter's table itself is missing from the text copy (a LaTeX `\\input`, L51); only its
three baselines are in the prose, on 500 AOL test queries of noun phrases (BWC07, not here).
There never-split is the stronger floor (55.2% of gaps are not breaks); on Webis
always-split is ({breaks:.1%} of gaps are breaks). qseg's McNemar test (`qseg evaluate
--compare A B`) is paper 004's test of significance. The pair counts add nothing to the SVM
here, as the chapter found for wider ranges (L43).
"""


if __name__ == "__main__":
    main()
