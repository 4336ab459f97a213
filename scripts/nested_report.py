"""Write docs/nested.md: qseg's nested segmentations of the 500 queries of paper 000 beside the
authors' own ("Mishra et al. + Wiki" under 17 nesting schemes,
``../shared/data/saharoy-sigir12/mishra-wiki-nested/``): Krippendorff's alpha with paper 001's
d1 and d2 between each qseg method and each scheme, and the mean tree height by query length
against the random expectation (paper 001, section 6 and Table 5).

    python scripts/nested_report.py [--shared ../shared] [--out docs/nested.md]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path

from _cite import cite
from _logs import log_sources, write_demo_log

import qseg
from qseg.evaluation.agreement import krippendorff_alpha
from qseg.evaluation.provenance import builtin_resources, with_provenance
from qseg.evaluation.random_model import expected_height
from qseg.fileio import atomic_write, read_lines
from qseg.segmentation import NestedSegmentation
from qseg.segmenters.nesting import nest
from qseg.tables import render_table

ROOT = Path(__file__).resolve().parents[1]
METHODS = {
    "the default model (merging)": "default",
    "wiki(unseen_titles=true) (splitting)": "wiki(unseen_titles=true)",
    "naive (splitting)": "naive",
    "pmi on the built-in counts (splitting)": "pmi",
}
QUERYLOG = "Mishra et al. + Wiki-Boost on the small log (its own nesting)"
"""The query-log method on the log of scripts/_logs.py (which holds the 500 queries)."""


def read_schemes(folder: Path, queries: dict[str, str]) -> dict[str, dict[str, NestedSegmentation]]:
    schemes = {}
    for path in sorted(folder.glob("scheme_*.txt")):
        lines = [text for _, text in read_lines(path)]
        if len(lines) != len(queries):
            raise SystemExit(f"{path}: {len(lines)} lines for {len(queries)} queries")
        trees = {}
        for (ident, query), text in zip(queries.items(), lines, strict=True):
            tree = NestedSegmentation.from_brackets(f"({text})")  # scheme_000 has no root
            if " ".join(tree.words) != " ".join(query.split()).lower():
                raise SystemExit(f"{path}: query {ident} has other words: {text}")
            trees[ident] = tree
        schemes[path.stem] = trees
    return schemes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "nested.md")
    args = parser.parse_args()
    data = args.shared / "data" / "saharoy-sigir12"
    queries = dict(line.split("\t", 1) for _, line in read_lines(data / "queries.tsv"))
    schemes = read_schemes(data / "mishra-wiki-nested", queries)
    segmenters = {name: qseg.segmenter(spec) for name, spec in METHODS.items()}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.txt"
        write_demo_log(log, args.shared)
        segmenters[QUERYLOG] = qseg.segmenter("querylog", query_log=log)
    ours = {
        name: {ident: nest(segmenter, text) for ident, text in queries.items()}
        for name, segmenter in segmenters.items()
    }
    alpha_rows = []
    for name, trees in ours.items():
        for power in (1, 2):
            values = [
                krippendorff_alpha({i: [trees[i], scheme[i]] for i in queries}, power)
                for scheme in schemes.values()
            ]
            alpha_rows.append(
                [
                    name,
                    f"d{power}",
                    f"{statistics.mean(values):.3f}",
                    f"{min(values):.3f}",
                    f"{max(values):.3f}",
                    f"{values[1]:.3f}",
                ]
            )
            print(alpha_rows[-1], flush=True)
    lengths = sorted({len(t.words) for t in next(iter(schemes.values())).values()})
    height_rows = [
        ["random binary trees (expected)"] + [f"{float(expected_height(n)):.2f}" for n in lengths]
    ]
    sources = {
        **ours,
        "authors' scheme_001": schemes["scheme_001"],
        "authors' scheme_016": schemes["scheme_016"],
    }
    for name, trees in sources.items():
        by_length: dict[int, list[int]] = defaultdict(list)
        for tree in trees.values():
            by_length[len(tree.words)].append(tree.height)
        height_rows.append([name] + [f"{statistics.mean(by_length[n]):.2f}" for n in lengths])
    alpha_table = render_table(
        ["qseg method", "distance", "mean alpha over 17 schemes", "min", "max", "scheme_001"],
        alpha_rows,
        markdown=True,
    )
    count = defaultdict(int)
    for tree in next(iter(schemes.values())).values():
        count[len(tree.words)] += 1
    height_table = render_table(
        ["mean root height", *(f"{n} words ({count[n]})" for n in lengths)],
        height_rows,
        markdown=True,
    )
    with atomic_write(args.out) as out:
        text = TEMPLATE.format(alpha=alpha_table, heights=height_table)
        page = with_provenance(text, [data, *log_sources(args.shared)], builtin_resources())
        out.write(cite(page))
    print(f"wrote {args.out}")


TEMPLATE = """# Nested segmentations

Produced by `python scripts/nested_report.py`. The 500 queries of paper 000 (Bing Australia,
5-8 words) with the authors' nested output of their "Mishra et al. + Wiki" method under 17
nesting schemes (`../shared/data/saharoy-sigir12/mishra-wiki-nested/`; `scheme_000` is flat,
the others are trees, not all binary), against qseg's `--nested` output: the default model's
trees merge the gaps with the lowest break probability first; the other methods split each
fragment at its weakest boundary (Huang et al. 2010). All on qseg's built-in resources, except
qseg's version of the authors' method itself, `querylog` (see [query-log.md](query-log.md)), whose
log is the small one of the shared query corpora (QueryNER train and dev and these 500 queries,
9,212 lines), a far cry from the Bing log the authors had: its trees nest Seg-Phase-1 segments
inside Seg-Phase-2 segments.

## Agreement with the authors' trees

Krippendorff's alpha with paper 001's boundary distances d1 and d2, qseg's trees and one scheme
as two annotations of each query (500 items); mean, minimum and maximum over the 17 schemes.

{alpha}

## Tree shapes

Mean height of the root (0 for two words joined) by query length, against the mean over all
binary trees of that many words (paper 001, Table 5, "Expected"; the paper's annotators stay
well below it, for example 2.00-2.08 for five words).

{heights}
"""


if __name__ == "__main__":
    main()
