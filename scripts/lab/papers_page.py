"""docs/papers.md laid out: every results table of the five papers beside qseg's figures
(:mod:`papers_reading`), one section per paper, in the prose of ``templates/papers/`` (the
introduction and one page per paper)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lab.papers_measures import PAPER_000_TAUS
from lab.papers_reading import first_number, five, pair, read_reports, row, table
from qseg.evaluation.random_model import expected_height
from qseg.segmenters.rules.wiki import MEDIAN_BIGRAM_COUNT

TEMPLATES = Path(__file__).parent / "templates" / "papers"
INTRO, PAPER_000, PAPER_001, PAPER_002, PAPER_003, PAPER_004 = (
    (TEMPLATES / f"{name}.md").read_text("utf-8")
    for name in ("intro", "000", "001", "002", "003", "004")
)


def render(figures: dict[str, Any]) -> str:
    """The page from the figures of :func:`papers_measures.measure` (and the other reports)."""
    seen = read_reports(figures)
    sections = [paper_000, paper_001, paper_002, paper_003, paper_004]
    return "\n".join(
        [INTRO.format(log_lines=f"{figures['log_lines']:,}")] + [s(seen) for s in sections]
    )


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


def paper_000(seen: dict[str, Any]) -> str:
    """Paper 000's section: its tables beside qseg's figures."""
    builtin = seen["builtin"]
    judges = seen["judges"]
    kendall = seen["kendall"]
    log_lines = seen["log_lines"]
    logged = seen["logged"]
    majority = seen["majority"]
    nfcorpus = seen["nfcorpus"]
    taus = seen["taus"]
    webis = seen["webis"]
    parts: list[str] = []
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
    return "\n".join(parts)


def paper_001(seen: dict[str, Any]) -> str:
    """Paper 001's section: its tables beside qseg's figures."""
    heights = seen["heights"]
    nested_alpha = seen["nested_alpha"]
    prepositions = seen["prepositions"]
    schemes = seen["schemes"]
    webis_alpha = seen["webis_alpha"]
    parts: list[str] = []
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
    return "\n".join(parts)


def paper_002(seen: dict[str, Any]) -> str:
    """Paper 002's section: its tables beside qseg's figures."""
    cv = seen["cv"]
    majority = seen["majority"]
    naive_product = seen["naive_product"]
    queryner = seen["queryner"]
    sup = seen["sup"]
    supervised = seen["supervised"]
    parts: list[str] = []
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
    return "\n".join(parts)


def paper_003(seen: dict[str, Any]) -> str:
    """Paper 003's section: its tables beside qseg's figures."""
    best_of = seen["best_of"]
    speed = seen["speed"]
    parts: list[str] = []
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
    return "\n".join(parts)


def paper_004(seen: dict[str, Any]) -> str:
    """Paper 004's section: its tables beside qseg's figures."""
    cv = seen["cv"]
    majority = seen["majority"]
    sup = seen["sup"]
    svm = seen["svm"]
    webis = seen["webis"]
    parts: list[str] = []
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
