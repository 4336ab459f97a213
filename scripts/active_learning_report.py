"""Measure annotating in uncertainty order against random order (docs/adapting.md's
"Which queries to annotate"): the learning curves of a model adapted after each round of
annotations, simulated on the corpora here.

Simulations (as scripts/adaptation_report.py's): the web model of ``qseg-default-v4`` adapted
to QueryNER's product queries (train + dev), the product model adapted to the Webis-QSeC-10
queries. For each seed (a fold of 5-fold cross-validation held out as the test set, the other
four the pool of unannotated queries): 50 random queries annotated first, then rounds of 50,
chosen at random or as the current adapted model's least sure (``margin`` or ``entropy``,
:mod:`qseg.segmenters.uncertainty`) among 2,000 random unannotated queries of the pool; after
each round the base is adapted again (``continue``) with every annotation so far and judged
on the test fold (query accuracy).

Figures go to ``docs/active_learning.json`` as measured (a rerun measures only what it
lacks), then the section of docs/adapting.md between its ``<!-- active learning -->`` marks
and docs/images/active-learning-*.png are written. About 30 minutes on this machine.

    python scripts/active_learning_report.py [--shared ../shared] [--render-only]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from adaptation_report import SIMULATIONS, base_of, corpus  # noqa: E402

from qseg.evaluation.adaptation import _folds, figures  # noqa: E402
from qseg.evaluation.provenance import provenance_line  # noqa: E402
from qseg.fileio import atomic_write  # noqa: E402
from qseg.models.adapting import fit_adapted  # noqa: E402
from qseg.segmentation import target_words  # noqa: E402
from qseg.segmenters.uncertainty import most_uncertain  # noqa: E402
from qseg.tables import render_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
JSON = ROOT / "docs" / "active_learning.json"
PAGE = ROOT / "docs" / "adapting.md"
BEGIN, END = "<!-- active learning -->", "<!-- /active learning -->"
ORDERS = ("random", "margin", "entropy")
SEEDS = tuple(range(10))
"""Seed s holds out fold s % 5 and draws its random queries with seed s."""
FIRST, ROUND, LAST = 50, 50, 300
CANDIDATES = 2000


def simulate(name: str, seed: int, shared: Path) -> dict[str, list[float]]:
    """Query accuracy after each round, by order, for one seed of one simulation."""
    kind = SIMULATIONS[name][0]
    gold = corpus(name, shared)
    ids = sorted(gold)
    words = [target_words(gold[i]) for i in ids]
    targets = [gold[i] for i in ids]
    pool, test = _folds(len(ids), 5, 0)[seed % 5]
    rng = np.random.default_rng(seed)
    pool = rng.permutation(pool)
    held, truth = [words[i] for i in test], [targets[i] for i in test]
    base = base_of(kind)
    found: dict[str, list[float]] = {}
    for order in ORDERS:
        chosen = list(pool[:FIRST])
        curve = []
        while True:
            model = fit_adapted(
                base, [words[i] for i in chosen], [targets[i] for i in chosen], "continue"
            )
            curve.append(figures(model.predict(held), truth).query)
            print(f"  {name} seed {seed} {order} {len(chosen)}: {curve[-1]:.3f}", flush=True)
            if len(chosen) >= LAST:
                break
            taken = set(chosen)
            left = [i for i in pool if i not in taken]
            if order == "random":
                chosen += left[:ROUND]
            else:
                sample = list(rng.permutation(left)[:CANDIDATES])
                picked = most_uncertain(model, [words[i] for i in sample], ROUND, order)
                chosen += [sample[p] for p in picked]
        found[order] = curve
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    found: dict[str, Any] = json.loads(JSON.read_text()) if JSON.exists() else {}
    if not args.render_only:
        for name in SIMULATIONS:
            for seed in SEEDS:
                key = f"{name}/{seed}"
                if key in found:
                    continue
                started = time.perf_counter()
                found[key] = simulate(name, seed, args.shared)
                found[key]["seconds"] = [round(time.perf_counter() - started)]
                with atomic_write(JSON) as handle:
                    handle.write(json.dumps(found, indent=1) + "\n")
    render(found, args.shared)


def sizes() -> list[int]:
    return list(range(FIRST, LAST + 1, ROUND))


def curves(found: dict[str, Any], name: str) -> dict[str, np.ndarray]:
    """Per order, a seeds x sizes array of query accuracy."""
    runs = [found[f"{name}/{seed}"] for seed in SEEDS if f"{name}/{seed}" in found]
    return {order: np.array([run[order] for run in runs]) for order in ORDERS}


def reached(curve: np.ndarray, level: float) -> int | None:
    """The fewest annotations at which a mean curve reaches ``level`` (linear between
    rounds), or ``None``."""
    for i, value in enumerate(curve):
        if value >= level:
            if i == 0:
                return FIRST
            low = curve[i - 1]
            return round(sizes()[i - 1] + ROUND * (level - low) / (value - low))
    return None


def render(found: dict[str, Any], shared: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = []
    for name, (_, corpus_name, what) in SIMULATIONS.items():
        by_order = curves(found, name)
        if not len(by_order["random"]):
            continue
        seeds = len(by_order["random"])
        header = ["order", *[str(s) for s in sizes()], f"reaches random's {200}"]
        random_200 = by_order["random"].mean(axis=0)[sizes().index(200)]
        rows = []
        figure, axis = plt.subplots(figsize=(6, 3.6))
        for order, runs in by_order.items():
            mean, spread = runs.mean(axis=0), runs.std(axis=0)
            at = reached(mean, random_200)
            rows.append(
                [order, *[f"{m:.3f} ± {s:.3f}" for m, s in zip(mean, spread, strict=True)],
                 "-" if at is None else f"{at}"]
            )  # fmt: skip
            axis.errorbar(sizes(), mean, yerr=spread, label=order, capsize=3, marker="o")
        axis.set_xlabel("annotated queries")
        axis.set_ylabel("query accuracy")
        axis.set_title(what)
        axis.legend()
        figure.tight_layout()
        image = ROOT / "docs" / "images" / f"active-learning-{name}.png"
        figure.savefig(image, dpi=100)
        plt.close(figure)
        parts.append(
            f"**{what}** ({corpus_name}; mean ± sd over {seeds} seeds; query accuracy after "
            f"each round):\n\n{render_table(header, rows, markdown=True)}\n\n"
            f"![{what}](images/{image.name})\n"
        )
    section = "\n".join(parts) + f"\n{provenance_line()}\n"
    page = PAGE.read_text(encoding="utf-8")
    start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
    with atomic_write(PAGE) as handle:
        handle.write(page[:start] + "\n" + section + page[end:])


if __name__ == "__main__":
    main()
