"""The retrieval table of docs/integrations.md: a PyTerrier experiment per collection and engine.

For NFCorpus, Cranfield and Vaswani (``../shared/data/ir``) and each engine (tantivy, embedded;
Lucene through pyserini where Java is installed), ``pt.Experiment`` runs BM25 on the plain
query beside BM25 on the queries rewritten by ``QsegRewriter`` with the default model and with
``wiki(unseen_titles=true)``, the segments used two ways: as required phrases
(``+"new york yankees" tickets``, ``qseg ir-eval``'s all-quoted version) and as phrase boosts
added to the plain query (``new york yankees tickets "new york yankees"^0.25``). MAP, nDCG@10 and
MRR, with the paired t-test's p-value against plain BM25 as ``pt.Experiment`` reports it.
The table replaces what lies between the markers in docs/integrations.md.

    python scripts/pyterrier_experiment.py [--shared ../shared] [--engine tantivy]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "integrations.md"
BEGIN = "<!-- pyterrier experiment: begin -->"
END = "<!-- pyterrier experiment: end -->"
COLLECTIONS = ("nfcorpus", "cranfield", "vaswani")
MEASURES = {"map": "MAP", "ndcg_cut_10": "nDCG@10", "recip_rank": "MRR"}
METHODS = {"default": "default", "wiki": "wiki(unseen_titles=true)"}


def experiment(collection, engine: str) -> list[str]:
    import pyterrier as pt

    from qseg.integrations.pyterrier import QsegRetriever, QsegRewriter, qrels, topics
    from qseg.integrations.syntax import Syntax

    bm25 = QsegRetriever(collection, engine=engine)
    systems, names = [bm25], ["BM25, plain query"]
    frame, judged = topics(collection), qrels(collection)
    if engine == "lucene":  # tantivy's BM25 parameters are fixed
        systems.append(tuned_bm25(collection, frame, judged))
        names.append("BM25 tuned (k1, b by 5-fold cross-validation)")
    for label, spec in METHODS.items():
        systems.append(QsegRewriter(spec) >> bm25)
        names.append(f"{label}: required phrases")
        systems.append(QsegRewriter(spec, Syntax("lucene", plain=True)) >> bm25)
        names.append(f"{label}: phrase boosts")
        systems.append(QsegRewriter(spec, Syntax("lucene", proximity=True)) >> bm25)
        names.append(f"{label}: segment proximity")
    tables = [
        pt.Experiment(
            systems,
            frame,
            judged,
            eval_metrics=list(MEASURES),
            names=names,
            baseline=baseline,
            verbose=False,
        )
        for baseline in ([0, 1] if engine == "lucene" else [0])
    ]
    rows = []
    for i, row in tables[0].iterrows():
        cells = [f"{row[m]:.4f}{_p(row.get(f'{m} p-value'))}" for m in MEASURES]
        tuned = "-" if len(tables) == 1 else _p(tables[1].loc[i].get("ndcg_cut_10 p-value"))
        cells.append(tuned.strip(" ()") or "-")
        rows.append(f"| {collection.name} | {engine} | {row['name']} | " + " | ".join(cells) + " |")
    return rows


def _p(p: float | None) -> str:
    if p is None or p != p:
        return ""
    return f" (p={p:.2g})" if p >= 0.001 else " (p<0.001)"


def tuned_bm25(collection, frame, judged):
    """BM25 on Lucene with k1 and b of the grid of ``retrieval_report.py`` chosen by 5-fold
    cross-validation over the queries: each fold's queries retrieved with the parameters of the
    best mean nDCG@10 on the other four."""
    import pandas as pd
    import pyterrier as pt

    from qseg.evaluation.ir.bm25 import GRID, cross_validated
    from qseg.integrations.pyterrier import QsegRetriever

    grid = {(k1, b): QsegRetriever(collection, engine="lucene", bm25=(k1, b)) for k1, b in GRID}
    ndcg = {}
    for params, retriever in grid.items():
        run = pt.Experiment([retriever], frame, judged, eval_metrics=["ndcg_cut_10"], perquery=True)
        ndcg[params] = dict(zip(run["qid"].astype(str), run["value"], strict=True))
    ids = [str(q) for q in frame["qid"]]
    chosen = [(set(fold), grid[best]) for fold, best in cross_validated(ndcg, ids)]

    def retrieve(topics: pd.DataFrame) -> pd.DataFrame:
        parts = [
            retriever.transform(topics[topics["qid"].astype(str).isin(fold)])
            for fold, retriever in chosen
        ]
        return pd.concat(parts, ignore_index=True)

    return pt.apply.generic(retrieve)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--engine", action="append", choices=("tantivy", "lucene"))
    args = parser.parse_args()
    from qseg.corpora.ir import known_collection

    engines = args.engine or ["tantivy", "lucene"]
    if "lucene" in engines and shutil.which("java") is None:
        print("no Java: the Lucene rows are left out", file=sys.stderr)
        engines.remove("lucene")
    header = " | ".join(MEASURES.values())
    lines = [
        f"| collection | engine | system | {header} | nDCG@10 p against tuned BM25 |",
        "| --- | --- | --- | " + " | ".join("---:" for _ in MEASURES) + " | ---: |",
    ]
    began = time.perf_counter()
    for name in COLLECTIONS:
        folder = args.shared / "data" / "ir" / name
        if not folder.exists():
            sys.exit(f"{name} not found at {folder} (../shared is absent)")
        collection = known_collection(name, folder)
        for engine in engines:
            lines += experiment(collection, engine)
            print(f"{name}, {engine}: done ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
    text = PAGE.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    block = "\n".join(lines)
    PAGE.write_text(f"{head}{BEGIN}\n{block}\n{END}{tail}", encoding="utf-8")
    print(block)


if __name__ == "__main__":
    main()
