"""End-to-end time of an IR-based evaluation: 5 systems on NFCorpus's keyword queries, BQV_BF too.

Each run counts n-grams in the collection's documents, builds the tantivy index, segments the
144 nontopic-titles and vid-titles queries with five systems, runs every quoted version and
BQV_BF's candidates, and scores them: first into an empty cache folder, then again with the
index, counts and search results cached.

    python benchmarks/ir_eval.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {
    "naive": "naive",
    "wiki": "wiki",
    "wiki-unseen": "wiki(unseen_titles=true)",
    "pmi": "pmi",
    "pmi-strict": "pmi(tau=2.0)",
}


def evaluate(data: Path, folder: Path) -> tuple[float, object]:
    from qseg.corpora.ir import nfcorpus
    from qseg.evaluation.ir.counts import collection_counts
    from qseg.evaluation.ir.engines.tantivy_engine import TantivyEngine
    from qseg.evaluation.ir.framework import evaluate_ir, query_words, segment_queries
    from qseg.models import open_segmenter
    from qseg.resources import Resources

    start = time.perf_counter()
    collection = nfcorpus(data)
    words = query_words(collection)
    resources = Resources(ngrams=collection_counts(collection, folder / "counts"))
    systems = {}
    for name, spec in SYSTEMS.items():
        systems[name] = segment_queries(open_segmenter(spec, resources), words)
    results = evaluate_ir(
        collection, TantivyEngine(folder / "index"), systems, cache=str(folder / "results.sqlite")
    )
    return time.perf_counter() - start, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    data = args.shared / "data" / "ir" / "nfcorpus"
    if not data.exists():
        sys.exit(f"skipped: NFCorpus not found at {data} (pass --shared)")
    from qseg.resources.default import default_titles

    default_titles()  # the built-in titles are built once, outside the timings
    with tempfile.TemporaryDirectory() as tmp:
        first, results = evaluate(data, Path(tmp))
        second, again = evaluate(data, Path(tmp))
    print(f"{len(SYSTEMS)} systems + BQV_BF on {results.queries} NFCorpus queries")
    print(f"first run (counts, index, {results.searches:,} searches): {first:6.2f} s")
    print(
        f"second run ({again.cache_hits:,} cached results, {again.searches} searches): "
        f"{second:6.2f} s"
    )


if __name__ == "__main__":
    main()
