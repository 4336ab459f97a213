"""The retrieval table of docs/integrations.md: every way of using segments against BM25 and
BM25 tuned, on one engine (Lucene through pyserini), with query latency.

For NFCorpus, Cranfield and Vaswani (``../shared/data/ir``), each judged query as the IR
evaluation sees it (the collection's stopwords removed) is run as:

- BM25 (k1 = 1.2, b = 0.75) on the plain query, and BM25 with k1 and b chosen by 5-fold
  cross-validation over the queries (a grid; the parameters of each fold chosen on the other
  four);
- SDM (Metzler & Croft 2005): every word, and an ordered and an unordered window for every pair
  of adjacent words; segment proximity (Bendersky, Croft & Smith 2009): the same for the pairs
  inside the default model's segments only (``Syntax(proximity=True)``; SDM is the whole query
  as one segment);
- phrase boosts (``Syntax(plain=True, boost=w)``) with the weight ``w`` chosen by
  leave-one-collection-out cross-validation (the best mean nDCG@10 over the other two
  collections: never tuned on the one scored), and with the weight 1;
- required phrases (``Syntax()``).

nDCG@10 and MAP with the paired t-test's p-value against plain and against tuned BM25, and the
latency of each query (the engine's search of the rendered query, p50 and p99). The tables
replace what lies between the markers in docs/integrations.md.

    python scripts/retrieval_report.py [--shared ../shared]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from qseg.evaluation.ir.bm25 import DEFAULT, GRID, cross_validated  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "integrations.md"
BEGIN = "<!-- retrieval report: begin -->"
END = "<!-- retrieval report: end -->"
COLLECTIONS = ("nfcorpus", "cranfield", "vaswani")
NAMES = {"nfcorpus": "NFCorpus", "cranfield": "Cranfield", "vaswani": "Vaswani"}
MEASURES = ("nDCG@10", "AP@1000")
SHOWN = {"nDCG@10": "nDCG@10", "AP@1000": "MAP"}
WEIGHTS = (0.05, 0.1, 0.25, 0.5, 1.0)
"""Phrase boost weights tried (1: the weight of an unboosted phrase)."""
DEPTH = 1000


def per_query(
    engine: Any, texts: dict[str, str], qrels: dict[str, dict[str, int]]
) -> tuple[dict[str, dict[str, float]], list[float]]:
    """Each query's measures, and each search's time in seconds."""
    from qseg.evaluation.ir.framework import parse_measures, score_rankings

    rankings, times = {}, []
    for qid, text in texts.items():
        started = time.perf_counter()
        found = engine.search_text(text, DEPTH)
        times.append(time.perf_counter() - started)
        rankings[qid] = dict(found)
    return score_rankings(parse_measures(MEASURES), qrels, rankings), times


def tuned_bm25(
    engine: Any, texts: dict[str, str], qrels: dict[str, dict[str, int]]
) -> tuple[dict[str, dict[str, float]], list[tuple[float, float]], float]:
    """BM25 with k1 and b chosen by cross-validation: each fold's queries scored with the
    parameters best (mean nDCG@10) on the other folds; returns the scores, the choices, and
    the mean nDCG@10 of a per-query oracle over the grid (each query's best parameters)."""
    grid = {}
    for k1, b in GRID:
        engine.bm25(k1, b)
        grid[k1, b], _ = per_query(engine, texts, qrels)
    engine.bm25(*DEFAULT)
    oracle = statistics.fmean(max(run[q]["nDCG@10"] for run in grid.values()) for q in texts)
    ndcg = {params: {q: v["nDCG@10"] for q, v in run.items()} for params, run in grid.items()}
    scores, chosen = {}, []
    for fold, best in cross_validated(ndcg, texts):
        chosen.append(best)
        scores |= {q: grid[best][q] for q in fold}
    return scores, chosen, oracle


def p_value(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]], m: str) -> float:
    from scipy.stats import ttest_rel

    ids = sorted(a)
    x, y = [a[q][m] for q in ids], [b[q][m] for q in ids]
    if x == y:
        return 1.0
    return float(ttest_rel(x, y).pvalue)


def _p(value: float) -> str:
    return "p<0.001" if value < 0.001 else f"p={value:.2g}"


def run(shared: Path) -> tuple[list[str], list[str], list[str]]:
    """The system table, the weight table and the tuned parameters, as Markdown lines."""
    import qseg
    from qseg.corpora.ir import known_collection
    from qseg.evaluation.ir.engines import open_engine
    from qseg.evaluation.ir.framework import query_words
    from qseg.fileio import cache_dir
    from qseg.integrations.syntax import Syntax, render
    from qseg.segmentation import Segmentation

    segmenter = qseg.segmenter("default")
    systems: dict[str, Callable[[Segmentation], str]] = {
        "SDM": lambda s: str(render(Segmentation.from_segments([s.words]), Syntax(proximity=True))),
        "segment proximity": lambda s: str(render(s, Syntax(proximity=True))),
        "required phrases": lambda s: str(render(s, Syntax())),
    }
    weights = {w: (lambda s, w=w: str(render(s, Syntax(plain=True, boost=w)))) for w in WEIGHTS}
    found: dict[str, dict[str, Any]] = {}
    began = time.perf_counter()
    for name in COLLECTIONS:
        folder = shared / "data" / "ir" / name
        if not folder.exists():
            sys.exit(f"{name} not found at {folder} (../shared is absent)")
        collection = known_collection(name, folder)
        engine = open_engine("lucene", cache_dir() / "ir" / "indexes")
        engine.index(collection)
        words = query_words(collection)
        segmentations = dict(zip(words, segmenter.segment_many(list(words.values())), strict=True))
        plain = {q: str(render(s, Syntax(quote=frozenset()))) for q, s in segmentations.items()}
        qrels = collection.qrels
        runs = {"BM25": per_query(engine, plain, qrels)}
        tuned, chosen, oracle = tuned_bm25(engine, plain, qrels)
        runs["BM25 tuned"] = (tuned, [])
        for label, make in systems.items():
            runs[label] = per_query(engine, {q: make(s) for q, s in segmentations.items()}, qrels)
        boosted = {
            w: per_query(engine, {q: make(s) for q, s in segmentations.items()}, qrels)
            for w, make in weights.items()
        }
        found[name] = {
            "runs": runs,
            "boosted": boosted,
            "chosen": chosen,
            "oracle": oracle,
            "queries": len(words),
        }
        print(f"{name}: done ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
    return tables(found)


def mean(scores: dict[str, dict[str, float]], measure: str) -> float:
    return statistics.fmean(v[measure] for v in scores.values())


def tables(found: dict[str, dict[str, Any]]) -> tuple[list[str], list[str], list[str]]:
    """Markdown: the systems per collection, the boost weights with the weight chosen for each
    collection on the other two, and the BM25 parameters chosen per fold."""
    held_out = {}
    for name in COLLECTIONS:
        others = [o for o in COLLECTIONS if o != name]
        held_out[name] = max(
            WEIGHTS,
            key=lambda w: statistics.fmean(
                mean(found[o]["boosted"][w][0], "nDCG@10") for o in others
            ),
        )
    weight_lines = [
        "| weight | " + " | ".join(NAMES[n] for n in COLLECTIONS) + " | mean |",
        "| ---: | " + " | ".join("---:" for _ in COLLECTIONS) + " | ---: |",
    ]
    for w in WEIGHTS:
        cells = [mean(found[n]["boosted"][w][0], "nDCG@10") for n in COLLECTIONS]
        marks = ["*" if held_out[n] == w else "" for n in COLLECTIONS]
        shown = " | ".join(f"{c:.4f}{m}" for c, m in zip(cells, marks, strict=True))
        weight_lines.append(f"| {w:g} | {shown} | {statistics.fmean(cells):.4f} |")
    header = " | ".join(
        f"{SHOWN[m]} | {SHOWN[m]} p (BM25) | {SHOWN[m]} p (tuned)" for m in MEASURES
    )
    lines = [
        f"| collection | system | {header} | p50 ms | p99 ms |",
        "| --- | --- | " + " | ".join("---:" for _ in range(3 * len(MEASURES) + 2)) + " |",
    ]
    for name in COLLECTIONS:
        runs = dict(found[name]["runs"])
        w = held_out[name]
        runs[f"phrase boosts, weight {w:g} (chosen on the other two)"] = found[name]["boosted"][w]
        runs["phrase boosts, weight 1"] = found[name]["boosted"][1.0]
        plain, tuned = runs["BM25"][0], runs["BM25 tuned"][0]
        for label, (scores, times) in runs.items():
            cells = []
            for m in MEASURES:
                cells.append(f"{mean(scores, m):.4f}")
                cells.append("" if label == "BM25" else _p(p_value(scores, plain, m)))
                cells.append("" if label == "BM25 tuned" else _p(p_value(scores, tuned, m)))
            if times:
                ms = sorted(t * 1000 for t in times)
                cells += [f"{statistics.median(ms):.2f}", f"{ms[int(0.99 * (len(ms) - 1))]:.2f}"]
            else:
                cells += ["", ""]
            lines.append(f"| {NAMES[name]} | {label} | " + " | ".join(cells) + " |")
    chosen_lines = [
        f"- {NAMES[n]} ({found[n]['queries']} queries): "
        + ", ".join(f"k1 {k1:g} b {b:g}" for k1, b in found[n]["chosen"])
        + f"; phrase boost weight chosen on the other two: {held_out[n]:g}; a per-query oracle "
        f"over the {len(GRID)} BM25 parameter pairs: nDCG@10 {found[n]['oracle']:.4f} "
        f"({found[n]['oracle'] / mean(found[n]['runs']['BM25'][0], 'nDCG@10') - 1:+.1%} over "
        "BM25)"
        for n in COLLECTIONS
    ]
    return lines, weight_lines, chosen_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    if shutil.which("java") is None:
        sys.exit("the Lucene engine needs Java 17+ (and pyserini 0.25.0)")
    from qseg.evaluation.provenance import builtin_resources, provenance_line

    lines, weight_lines, chosen = run(args.shared)
    record = provenance_line([args.shared / "data" / "ir"], builtin_resources())
    block = "\n".join(
        [
            record,
            "",
            *lines,
            "",
            "nDCG@10 of phrase boosts by weight (`*`: the weight chosen for that collection on "
            "the other two):",
            "",
            *weight_lines,
            "",
            "The parameters chosen (BM25 tuned: per fold; the boost weight: per collection):",
            "",
            *chosen,
        ]
    )
    text = PAGE.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    PAGE.write_text(f"{head}{BEGIN}\n{block}\n{END}{tail}", encoding="utf-8")
    print(block)


if __name__ == "__main__":
    main()
