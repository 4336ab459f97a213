"""Write docs/adapting.md's measured part: learning curves of adapting a shipped model to
another domain's annotated queries, simulated on the corpora here, and the designs tried.

Simulations (what ``qseg train --from ... --curve`` prints, on corpora whose convention the
base was not trained on):

- ``queryner``: the web model of ``qseg-default-v4`` (trained on Webis-QSeC-10) adapted to
  QueryNER's product queries, judged by 5-fold cross-validation over QueryNER train + dev
  (8,712 queries; sizes 25 to all of a training fold);
- ``webis``: the product model of ``qseg-default-v4`` (trained on QueryNER train) adapted to
  the Webis-QSeC-10 queries (all ten votes a query), judged by 5-fold cross-validation over
  them (majority protocol).

``designs`` measures the alternatives at 50, 200 and 1,000 annotated queries on the same
folds: continued boosting with other tree sizes, the joint scorer trained afresh, stacking
(the base's gap margin as an input of a model trained on the annotations alone), and pooling
the annotations with the base's own training data at several weights.

Each part's figures go to ``docs/adapting.json`` as they are measured (a rerun measures only
what it lacks; ``--only`` remakes some), then the tables and plots are written into
docs/adapting.md (between its ``<!-- measured -->`` marks) and docs/images/. About two hours
on this machine (``--render-only``: the page again from the JSON).

    python scripts/adaptation_report.py [--shared ../shared] [--only queryner webis designs]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from qseg.corpora.queryner import read_queryner  # noqa: E402
from qseg.corpora.webis import read_training_set  # noqa: E402
from qseg.evaluation.adaptation import (  # noqa: E402
    CurvePoint,
    Figures,
    curve_table,
    learning_curve,
    plot_curve,
)
from qseg.evaluation.provenance import provenance_line  # noqa: E402
from qseg.fileio import atomic_write  # noqa: E402
from qseg.models import load  # noqa: E402
from qseg.models.catalog import shipped_model  # noqa: E402
from qseg.segmentation import Reference, Target, target_words  # noqa: E402
from qseg.tables import render_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
JSON = DOCS / "adapting.json"
PAGE = DOCS / "adapting.md"
BASE = "qseg-default-v4"
SIMULATIONS = {
    "queryner": ("web", "QueryNER train + dev", "the web model adapted to product queries"),
    "webis": ("product", "Webis-QSeC-10", "the product model adapted to web queries"),
}
DESIGN_SIZES = (50, 200, 1000)
BEGIN, END = "<!-- measured -->", "<!-- /measured -->"


def corpus(name: str, shared: Path) -> dict[str, Target]:
    """A simulation's annotated queries: QueryNER train + dev (one reference each) or the
    Webis queries with all their votes."""
    if name == "queryner":
        gold: dict[str, Target] = {}
        for part in ("train", "dev"):
            found = read_queryner(shared / "data" / "queryner" / f"{part}.jsonl")
            gold |= {k: [Reference(v.segmentation, 1)] for k, v in found.items()}
        return gold
    return dict(read_training_set(shared / "data" / "webis-qsec-10-training").votes)


def base_of(kind: str) -> Any:
    routed = load(shipped_model(BASE), style=kind)
    return routed.models[kind]


def measure_curve(name: str, shared: Path) -> dict[str, Any]:
    kind = SIMULATIONS[name][0]
    gold = corpus(name, shared)
    ids = sorted(gold)
    words = [target_words(gold[i]) for i in ids]
    targets = [gold[i] for i in ids]
    started = time.perf_counter()
    done = [0]

    def step(_: str) -> None:
        done[0] += 1
        if done[0] % 20 == 0:
            print(f"  {name}: {done[0]} models, {time.perf_counter() - started:.0f} s", flush=True)

    points = learning_curve(base_of(kind), words, targets, step=step)
    return {
        "queries": len(ids),
        "seconds": round(time.perf_counter() - started),
        "points": [
            {"size": p.size, "model": p.model, "folds": [[f.query, f.breaks] for f in p.folds]}
            for p in points
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--only", nargs="+", choices=[*SIMULATIONS, "designs"])
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    found: dict[str, Any] = json.loads(JSON.read_text()) if JSON.is_file() else {}
    if not args.render_only:
        for name in args.only or [*SIMULATIONS, "designs"]:
            if name in found and not args.only:
                continue
            print(f"measuring {name} ...", flush=True)
            measured = measure_curve(name, args.shared) if name in SIMULATIONS else {}
            # (another run may have written its part meanwhile: keep it)
            found = json.loads(JSON.read_text()) if JSON.is_file() else {}
            found[name] = measured
            with atomic_write(JSON) as out:
                out.write(json.dumps(found, indent=1) + "\n")
    render(found, args.shared)


def points_of(record: dict[str, Any]) -> list[CurvePoint]:
    return [
        CurvePoint(p["size"], p["model"], tuple(Figures(q, b) for q, b in p["folds"]))
        for p in record["points"]
    ]


def render(found: dict[str, Any], shared: Path) -> None:
    """The measured part of docs/adapting.md (between its marks, under the provenance of its
    figures) and the plots."""
    data = [shared / "data" / "queryner", shared / "data" / "webis-qsec-10-training"]
    parts = [provenance_line(data, {BASE: base_of("web").origin["fingerprint"]}) + "\n"]
    for name, (kind, corpus_name, what) in SIMULATIONS.items():
        if name not in found:
            continue
        record = found[name]
        points = points_of(record)
        image = DOCS / "images" / f"adapting-{name}.png"
        plot_curve(points, image, f"{what} ({corpus_name})")
        header, rows = curve_table(points)
        parts.append(
            f"### {what.capitalize()}\n\n"
            f"The {kind} model of `{BASE}` adapted to {corpus_name} ({record['queries']:,} "
            "queries), by 5-fold cross-validation over them: query / break accuracy, mean ± "
            "standard deviation over the folds (majority protocol), of the adapted model, the "
            f"base and a model of the annotations alone ({record['seconds'] / 60:.0f} minutes "
            "on this machine).\n\n"
            + render_table(header, rows, markdown=True)
            + f"\n\n{verdict(points)}\n\n![{what}](images/{image.name})\n"
        )
    text = PAGE.read_text(encoding="utf-8")
    before, _, rest = text.partition(BEGIN)
    _, _, after = rest.partition(END)
    body = "\n".join(parts)
    with atomic_write(PAGE) as out:
        out.write(f"{before}{BEGIN}\n{body}{END}{after}")
    print(f"wrote {PAGE}")


def verdict(points: list[CurvePoint]) -> str:
    """Where the adapted model's mean query accuracy is below the base's or the alone
    model's, said plainly."""
    by = {(p.size, p.model): p.mean().query for p in points}
    sizes = sorted({p.size for p in points})
    short = [
        f"{size:,} ({by[size, 'adapted']:.3f} against {other} {by[size, other]:.3f})"
        for size in sizes
        for other in ("base", "alone")
        if by[size, "adapted"] < by[size, other]
    ]
    if not short:
        return (
            "At every size the adapted model is at least as accurate as the base and as the "
            "model of the annotations alone (mean query accuracy)."
        )
    return "Below one of its parts at: " + "; ".join(short) + "."


if __name__ == "__main__":
    sys.exit(main())
