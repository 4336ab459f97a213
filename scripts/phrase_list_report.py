"""Measure what a phrase list adds (docs/adapting.md's "A catalog of names"): on each
simulated domain, the phrases of the training folds' gold segmentations (every segment of two
words or more of each query's most voted segmentation) kept whole in the answers of the base
and of the base adapted with 200 random annotated queries, judged on the held-out fold
(5-fold cross-validation, as scripts/adaptation_report.py's simulations; query and break
accuracy against the most voted segmentation).

Figures go to ``docs/phrase_lists.json``, then into docs/adapting.md between its ``<!--
phrase lists -->`` marks. About ten minutes on this machine.

    python scripts/phrase_list_report.py [--shared ../shared] [--render-only]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from adaptation_report import SIMULATIONS, base_of, corpus  # noqa: E402

from qseg.evaluation.adaptation import _folds, figures  # noqa: E402
from qseg.evaluation.provenance import provenance_line  # noqa: E402
from qseg.fileio import atomic_write  # noqa: E402
from qseg.models.adapting import fit_adapted  # noqa: E402
from qseg.resources.titles import TitleSet  # noqa: E402
from qseg.segmentation import majority, target_words  # noqa: E402
from qseg.segmenters.phrase_list import keeping_phrases  # noqa: E402
from qseg.tables import render_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
JSON = ROOT / "docs" / "phrase_lists.json"
PAGE = ROOT / "docs" / "adapting.md"
BEGIN, END = "<!-- phrase lists -->", "<!-- /phrase lists -->"
ADAPTED_WITH = 200
MODELS = ("base", "base + list", "adapted", "adapted + list")


def measure(name: str, shared: Path) -> dict[str, Any]:
    """Per model, the query and break accuracy of each fold, and the list's sizes."""
    gold = corpus(name, shared)
    ids = sorted(gold)
    words = [target_words(gold[i]) for i in ids]
    targets = [gold[i] for i in ids]
    base = base_of(SIMULATIONS[name][0])
    found: dict[str, Any] = {model: [] for model in MODELS} | {"phrases": []}
    for fold, (train, test) in enumerate(_folds(len(ids), 5, 0)):
        phrases = {
            " ".join(segment)
            for i in train
            for segment in majority(targets[i]).segments
            if len(segment) > 1
        }
        listed = TitleSet(phrases)
        annotated = np.random.default_rng(fold).permutation(train)[:ADAPTED_WITH]
        adapted = fit_adapted(
            base, [words[i] for i in annotated], [targets[i] for i in annotated], "continue"
        )
        held, truth = [words[i] for i in test], [targets[i] for i in test]
        for model, segmenter in (
            ("base", base),
            ("base + list", keeping_phrases(base, listed)),
            ("adapted", adapted),
            ("adapted + list", keeping_phrases(adapted, listed)),
        ):
            result = figures(list(segmenter.segment_many(held)), truth)
            found[model].append([result.query, result.breaks])
            print(f"  {name} fold {fold} {model}: {result.query:.3f}", flush=True)
        found["phrases"].append(len(phrases))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    found: dict[str, Any] = json.loads(JSON.read_text()) if JSON.exists() else {}
    if not args.render_only:
        for name in SIMULATIONS:
            if name not in found:
                found[name] = measure(name, args.shared)
                with atomic_write(JSON) as handle:
                    handle.write(json.dumps(found, indent=1) + "\n")
    render(found)


def render(found: dict[str, Any]) -> None:
    header = ["domain", "phrases listed", *MODELS]
    rows = []
    for name, (_, corpus_name, what) in SIMULATIONS.items():
        if name not in found:
            continue
        record = found[name]
        cells = []
        for model in MODELS:
            runs = np.array(record[model])
            cells.append(f"{runs[:, 0].mean():.3f} / {runs[:, 1].mean():.3f}")
        rows.append([f"{what} ({corpus_name})", f"{np.mean(record['phrases']):,.0f}", *cells])
    section = (
        "\n"
        + render_table(header, rows, markdown=True)
        + "\n\nQuery / break accuracy, mean over the 5 folds; adapted: continued from the base "
        f"with {ADAPTED_WITH} random annotated queries of the training folds.\n\n"
        + provenance_line()
        + "\n"
    )
    page = PAGE.read_text(encoding="utf-8")
    start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
    with atomic_write(PAGE) as handle:
        handle.write(page[:start] + section + page[end:])


if __name__ == "__main__":
    main()
