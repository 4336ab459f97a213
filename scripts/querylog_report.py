"""Write docs/query-log.md: the query-log methods of paper 000 (Mishra et al., Mishra et al. +
Wiki-Boost, PMI-Q) on a small log made of the shared query corpora, scored on the Webis-QSeC-10
training part.

    python scripts/querylog_report.py [--shared ../shared] [--out docs/query-log.md]

No public web query log is at hand: the log is QueryNER train and dev and the 500 queries of
paper 000 (9,212 lines), and, as a second log, the same plus the 3,848 Webis training queries
themselves (a log holding the very queries it segments, as a real log would hold most of them).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _cite import cite
from _logs import log_sources, write_demo_log
from _qseg import evaluate, qseg

from qseg.evaluation.provenance import builtin_resources, with_provenance
from qseg.fileio import atomic_write
from qseg.segmenters.rules.pmi import PAPER_TAU
from qseg.tables import render_table

ROOT = Path(__file__).resolve().parents[1]
PMI_Q_TAU = 0.156
"""Paper 000's PMI-Q threshold (tuned there for segment F on its development set)."""
SYSTEMS = {
    "Mishra et al. (Seg-Phase-1), delta 0.05": "querylog(wiki=false)",
    "Mishra et al. + Wiki-Boost (Seg-Phase-2), delta 0.05": "querylog",
    "Mishra et al. + Wiki-Boost, delta 0.001 (stricter, for comparison)": "querylog(delta=0.001)",
    f"PMI-Q, paper 000's tau {PMI_Q_TAU}": f"pmi(tau={PMI_Q_TAU})",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "query-log.md")
    args = parser.parse_args()
    gold = (
        args.shared
        / "data"
        / "webis-qsec-10-training"
        / "webis-qsec-10-training-set-segmentations-crowdsourced.txt"
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, with_webis in (("shared corpora", False), ("+ the Webis queries", True)):
            log = Path(tmp) / f"log-{with_webis}.txt"
            lines = write_demo_log(log, args.shared, with_webis)
            counts = Path(tmp) / f"log-{with_webis}.qseg"
            qseg(
                "build",
                "ngrams",
                "--from",
                "text",
                "--max-order",
                "2",
                "--quiet",
                "-o",
                str(counts),
                str(log),
            )
            tuned = qseg("tune", "pmi", "--gold", str(gold), "--ngrams", str(counts))
            tau = float(tuned.split("\t")[0].removeprefix("tau="))
            systems = {**SYSTEMS, f"PMI-Q, tau {tau:.3f} (in-sample choice)": f"pmi(tau={tau!r})"}
            flags = ["--query-log", str(log), "--ngrams", str(counts)]
            for result in evaluate(gold, systems, *flags).values():
                rows.append(
                    [
                        f"{label} ({lines:,} lines)",
                        result["system"],
                        f"{result['break_accuracy']:.3f}",
                        f"{result['query_accuracy']:.3f}",
                        f"{result['segment_f1']:.3f}",
                    ]
                )
                print(rows[-1], flush=True)
    table = render_table(
        ["log", "method", "break acc", "query acc", "segment F"], rows, markdown=True
    )
    with atomic_write(args.out) as out:
        text = TEMPLATE.format(table=table, paper_tau=PAPER_TAU)
        out.write(cite(with_provenance(text, log_sources(args.shared), builtin_resources())))
    print(f"wrote {args.out}")


TEMPLATE = """# Query-log segmentation (paper 000's "Mishra et al." and "Mishra et al. + Wiki")

Produced by `python scripts/querylog_report.py`.

`qseg segment --method 'querylog(wiki=false)' --query-log FILE` is Seg-Phase-1 only;
`--method querylog` adds Wiki-Boost and Seg-Phase-2 (titles: `--titles FILE`, else the built-in
DBpedia names); `--nested` gives the method's own tree. The commands, run on a small log, are in
[the query-log method](query-log-method.md).

The log is a text file, one query a line, optionally `<TAB>count` (the lines `qseg build ngrams
--from text` reads, read by the same parser). It is held in memory as an index (posting lists of
queries per word). On a synthetic log of a million queries (`python benchmarks/querylog.py`)
it loads in 6.4 s with a peak of 664 MB, and Seg-Phase-1 segments 443 queries/s while every
n-gram's statistics are computed for the first time (then memoized). Titles are the
`--titles` store or the built-in DBpedia names.

## The method

- **Seg-Phase-1** (Mishra et al., WWW 2011): for an n-gram M of n words, among the k log queries
  that hold all its words (in any order), N hold M contiguously and in order, and E would if
  each query's words were shuffled (a query of l different words holds it with probability
  (l-n+1)!/l!; where words repeat, E counts the expected occurrences, exact whenever M fits
  only once and stricter otherwise). Hoeffding's inequality bounds the chance of N - E >= t
  by exp(-2t^2/k): M's score is 2(N-E)^2/k, and M may be a segment iff that bound is at most
  `delta` (N > E and score >= ln(1/delta)). A query's segmentation maximizes the sum of its
  segments' scores (exact dynamic program; single words score 0).
- **Wiki-Boost** (paper 000, Algorithm 1): a title, segmented by Seg-Phase-1 into s1..sn, scores
  max(PMI(s1..s(n-1); sn), PMI(s1; s2..sn)) with frequencies from the log; a word scores its
  probability in the log.
- **Seg-Phase-2**: joins adjacent Seg-Phase-1 segments into titles where that raises the product
  of the scores of the output segments (exact dynamic program over the segments).
- **Nested output**: a binary tree whose lowest joins are inside Seg-Phase-1 segments, then
  between segments that Seg-Phase-2 joined, then between Seg-Phase-2 segments; within a level,
  the adjacent pair of words with the higher PMI first. Its agreement with the authors' own
  nested output is in [nested.md](nested.md).

## What the sources leave open, and what qseg chose

Paper 000 names Seg-Phase-1 and gives Algorithm 1 and one paragraph for Seg-Phase-2; Mishra et
al.'s paper is not among the papers here.

1. **PMI is a ratio**, p(ab) / (p(a) p(b)), not its logarithm: Seg-Phase-2 multiplies scores, and
   log-PMIs may be negative. Probabilities are counts over the log's word tokens, for every n.
   A consequence: a title joins whenever the log holds it at all, as that n-gram (a PMI
   ratio is rarely below the product of word probabilities it replaces).
2. **A title Seg-Phase-1 leaves whole** (n = 1: the formula has no two parts) is scored over its
   words, max(PMI(w1..w(m-1); wm), PMI(w1; w2..wm)). A Seg-Phase-1 segment that is not a
   title is scored the same way; Seg-Phase-2 joins segments only into titles.
3. **Unseen text**: a title the log never holds (in order, side by side) has PMI 0 and is never
   joined; a word the log lacks scores 1 (it can only stand alone, so its score is common to
   every candidate and changes nothing).
4. **Titles are looked up when a query needs them**, which gives the scores Algorithm 1 would
   (it scores every title first) without segmenting millions of titles no query asks for.
5. **No stemming**: the paper stems titles and log; qseg's queries and references are surface
   words, and a stemmer would merge forms the log tells apart.
6. **delta = 0.05** (a conventional significance level; not tuned) and n-grams of up to
   `max_words = 5` words in Seg-Phase-1. Both are parameters.
7. **Ranking** (`rank`, `--k`): Seg-Phase-1 ranks the segmentations made of significant n-grams
   by their sum of scores; with Wiki-Boost, the coarsenings of the Seg-Phase-1 segmentation by
   the log of their product of scores.

## Figures on the shared data

Webis-QSeC-10 training part (3,848 queries, majority reference, built-in DBpedia names as titles
for Wiki-Boost). PMI-Q is `pmi` on the log's word and 2-gram counts (`qseg build ngrams --from
text --max-order 2`). Rows marked in-sample chose their parameter on these very queries.

{table}

**What this log limits.** Paper 000's log holds millions of Bing queries; this one 9,212 queries,
mostly product searches (QueryNER), none of them the Webis queries: most Webis n-grams never
occur in it, so Seg-Phase-1 has little to find and Wiki-Boost few titles to confirm. The second
log adds the Webis queries themselves, as a real log would hold the queries it is asked to
segment; each of its queries still occurs once, so an n-gram's evidence is a handful of
queries, not the thousands of a web log. Paper 000 reports its figures on its own 500 Bing
queries against its own annotators, not on Webis: docs/papers.md sets them side by side.
(The PMI baseline's default tau, {paper_tau}, is paper 003's for web probabilities.)
"""


if __name__ == "__main__":
    main()
