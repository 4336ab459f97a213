"""Adapting a model to a team's annotated queries, chosen by measurement, and its learning
curves (``qseg train --from``, :func:`qseg.adapt`).

Adapting can start from the base's trees (``continue``: they lean on the base, which wins
where the annotations are few or follow the base's convention) or from the annotations alone
(``fresh``: wins where they are many and their convention is far from the base's), decode
the two together (``both``: better than either at most sizes of docs/adapting.md's
simulations), or keep the base as it is. :func:`select` measures the four by
cross-validation over the annotations, :func:`choose` keeps ``both`` unless another is
clearly better, and :func:`adapt_model` trains it on all of them (:func:`qseg.adapt`): the
adapted model does no worse than its base or than a model of the annotations alone, as far
as the annotations can tell.
:func:`learning_curve` shows what more annotations would bring.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from qseg.errors import QsegError, needs_package
from qseg.models.adapting import BOTH, fit_adapted, together, unchanged
from qseg.segmentation import Segmentation, Target, majority

if TYPE_CHECKING:
    from qseg.segmenters.learned.break_model import BreakModel

STARTS = ("continue", "fresh")
"""The starts trained and measured (the base as it is, and the two together, are measured
too)."""
ORDER = ("base", "continue", BOTH, "fresh")
"""The candidates, from leaning wholly on the base to not at all."""
PREFERENCE = (BOTH, "continue", "base", "fresh")
"""The order :func:`choose` prefers them in: the two starts together first (in the
simulations of docs/adapting.md, better than either at most sizes), then leaning on the
base."""
MIN_QUERIES = 10
"""The fewest annotated queries of two words or more adapting takes."""
SIZES = (25, 50, 100, 200, 400, 800, 1600, 3200, 6400)
"""The sizes of a learning curve below all of a fold's training queries."""

Step = Callable[[str], None]


@dataclass(frozen=True)
class Figures:
    """Query and break accuracy (majority protocol) of one model on some annotated queries."""

    query: float
    breaks: float

    def as_dict(self) -> dict[str, float]:
        return {"query_accuracy": round(self.query, 4), "break_accuracy": round(self.breaks, 4)}


def figures(predicted: Sequence[Segmentation], targets: Sequence[Target]) -> Figures:
    """Query accuracy and break accuracy (over every gap) against each target's most voted
    segmentation."""
    right = gaps = exact = 0
    for seg, target in zip(predicted, targets, strict=True):
        reference = majority(target)
        same = sum(a == b for a, b in zip(seg.breaks, reference.breaks, strict=True))
        right += same
        gaps += len(seg.breaks)
        exact += same == len(seg.breaks)
    return Figures(exact / max(len(targets), 1), right / max(gaps, 1))


def _checked(words: Sequence[tuple[str, ...]]) -> None:
    if sum(len(w) >= 2 for w in words) < MIN_QUERIES:
        raise QsegError(
            f"adapting needs at least {MIN_QUERIES} annotated queries of two words or more, "
            f"got {sum(len(w) >= 2 for w in words)}"
        )


def _folds(count: int, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import KFold

    return list(KFold(folds, shuffle=True, random_state=seed).split(np.arange(count)))


def adapt_steps(folds: int) -> int:
    """How many steps :func:`adapt_model` reports (a model trained, or the base kept, each)."""
    return len(STARTS) * folds + 1


@dataclass(frozen=True)
class Measured:
    """The candidates' figures by cross-validation over the annotations, and which queries
    each segmented right (what :func:`choose` compares)."""

    figures: dict[str, Figures]
    right: dict[str, np.ndarray]


def select(
    base: BreakModel,
    words: Sequence[tuple[str, ...]],
    targets: Sequence[Target],
    *,
    folds: int = 5,
    random_state: int = 0,
    n_jobs: int = 1,
    step: Step | None = None,
) -> Measured:
    """The base as it is, each start (:data:`STARTS`) and the two together (``both``),
    measured by ``folds``-fold
    cross-validation over the annotated queries (each fold's models trained on the others);
    ``step`` is called after each model trained."""
    _checked(words)
    predicted: dict[str, list[Segmentation | None]] = {name: [None] * len(words) for name in ORDER}
    for train, test in _folds(len(words), folds, random_state):
        held = [words[i] for i in test]
        for i, seg in zip(test, base.predict(held), strict=True):
            predicted["base"][i] = seg
        models = {}
        for start in STARTS:
            models[start] = fit_adapted(
                base,
                [words[i] for i in train],
                [targets[i] for i in train],
                start,
                random_state=random_state,
                n_jobs=n_jobs,
            )
            if step is not None:
                step(start)
        models[BOTH] = together(base, models["continue"], models["fresh"])
        for name, model in models.items():
            for i, seg in zip(test, model.predict(held), strict=True):
                predicted[name][i] = seg
    found = {name: [s for s in segs if s is not None] for name, segs in predicted.items()}
    return Measured(
        {name: figures(segs, targets) for name, segs in found.items()},
        {
            name: np.array([s == majority(t) for s, t in zip(segs, targets, strict=True)])
            for name, segs in found.items()
        },
    )


def choose(measured: Measured) -> str:
    """The first of :data:`PREFERENCE` (``both``, ``continue``, the base, ``fresh``) whose
    queries segmented right are within one standard error (of the difference, query by
    query) of the best candidate's: with few annotations a better figure is often luck, and
    the two starts together, then continuing, lean on the base where the annotations say
    little. (In the simulations of docs/adapting.md, taking the best figure took ``fresh`` on
    25 product queries that lost 0.05 to the base; keeping the base within one error of the
    best kept it where 100 or 200 of them lifted the others by 0.03-0.08.)"""
    right = measured.right
    best = max(PREFERENCE, key=lambda name: (right[name].mean(), -PREFERENCE.index(name)))
    for name in PREFERENCE:
        gap = right[best].astype(float) - right[name]
        error = gap.std(ddof=1) / np.sqrt(len(gap)) if len(gap) > 1 else 0.0
        if gap.mean() <= error:
            return name
    return best


def selection_record(found: Mapping[str, Figures], chosen: str, folds: int) -> dict[str, object]:
    """What an adapted model records of how it was chosen."""
    return {
        "chosen": chosen,
        "folds": folds,
        "figures": {name: f.as_dict() for name, f in found.items()},
    }


def adapt_model(
    base: BreakModel,
    words: Sequence[tuple[str, ...]],
    targets: Sequence[Target],
    *,
    folds: int = 5,
    random_state: int = 0,
    n_jobs: int = 1,
    step: Step | None = None,
) -> BreakModel:
    """``base`` adapted to the annotated queries: the candidate of :func:`select` that
    :func:`choose` takes, trained on all of them (the base itself, adding nothing, if that is
    the base)."""
    measured = select(
        base, words, targets, folds=folds, random_state=random_state, n_jobs=n_jobs, step=step
    )
    chosen = choose(measured)
    record = selection_record(measured.figures, chosen, folds)
    if chosen == "base":
        model = unchanged(base, len(words), record)
    else:
        model = fit_adapted(
            base,
            words,
            targets,
            chosen,
            random_state=random_state,
            n_jobs=n_jobs,
            selection=record,
        )
    if step is not None:
        step(chosen)
    return model


@dataclass(frozen=True)
class CurvePoint:
    """One model's figures at one size of a learning curve, fold by fold."""

    size: int
    model: str
    """``adapted``, ``base`` or ``alone`` (the annotations alone: the ``fresh`` start)."""
    folds: tuple[Figures, ...]

    def mean(self) -> Figures:
        return Figures(
            float(np.mean([f.query for f in self.folds])),
            float(np.mean([f.breaks for f in self.folds])),
        )

    def spread(self) -> Figures:
        """The standard deviation over the folds."""
        return Figures(
            float(np.std([f.query for f in self.folds])),
            float(np.std([f.breaks for f in self.folds])),
        )


def curve_sizes(available: int) -> list[int]:
    """The sizes of a learning curve over ``available`` training queries: those of
    :data:`SIZES` below it, and all of them."""
    return [s for s in SIZES if s < available] + [available]


def learning_curve(
    base: BreakModel,
    words: Sequence[tuple[str, ...]],
    targets: Sequence[Target],
    *,
    folds: int = 5,
    sizes: Sequence[int] | None = None,
    random_state: int = 0,
    n_jobs: int = 1,
    step: Step | None = None,
) -> list[CurvePoint]:
    """By ``folds``-fold cross-validation over the annotated queries: at each size (default
    :func:`curve_sizes` of a training fold), the adapted model (:func:`adapt_model`), the base
    and a model of the annotations alone, each trained on that many queries of the training
    folds (the first of a shuffled order) and measured on the fold held out."""
    _checked(words)
    splits = _folds(len(words), folds, random_state)
    shortest = min(len(train) for train, _ in splits)
    chosen_sizes = sorted(set(sizes)) if sizes else curve_sizes(shortest)
    if chosen_sizes[0] < MIN_QUERIES or chosen_sizes[-1] > shortest:
        raise QsegError(
            f"the sizes of a learning curve must be between {MIN_QUERIES} and {shortest} "
            f"(the queries of a training fold)"
        )
    found: dict[tuple[int, str], list[Figures]] = {}
    for k, (train, test) in enumerate(splits):
        order = np.random.default_rng(random_state + k).permutation(train)
        held, gold = [words[i] for i in test], [targets[i] for i in test]
        at_base = figures(base.predict(held), gold)
        for size in chosen_sizes:
            part = order[:size]
            part_words, part_targets = [words[i] for i in part], [targets[i] for i in part]
            if sum(len(w) >= 2 for w in part_words) < MIN_QUERIES:
                raise QsegError(f"{size} queries hold fewer than {MIN_QUERIES} of two words")
            adapted = adapt_model(
                base,
                part_words,
                part_targets,
                folds=folds,
                random_state=random_state,
                n_jobs=n_jobs,
                step=step,
            )
            assert adapted.adapted is not None
            chosen = adapted.adapted.selection["chosen"]
            alone = adapted if chosen == "fresh" else adapted.partner
            if alone is None:
                alone = fit_adapted(
                    base, part_words, part_targets, "fresh", random_state=random_state,
                    n_jobs=n_jobs,
                )  # fmt: skip
            if step is not None:
                step("fresh")
            for name, model in (("adapted", adapted), ("alone", alone)):
                found.setdefault((size, name), []).append(figures(model.predict(held), gold))
            found.setdefault((size, "base"), []).append(at_base)
    return [
        CurvePoint(size, name, tuple(found[size, name]))
        for size in chosen_sizes
        for name in ("adapted", "base", "alone")
    ]


def curve_steps(count: int, folds: int, sizes: Sequence[int] | None = None) -> int:
    """How many steps :func:`learning_curve` reports (a model trained or reused each)."""
    shortest = count - -(-count // folds)  # the smallest training fold
    per_size = adapt_steps(folds) + 1
    return folds * per_size * len(sorted(set(sizes)) if sizes else curve_sizes(shortest))


MODELS = ("adapted", "base", "alone")
"""The models of a learning curve, in the order shown."""


def curve_table(points: Sequence[CurvePoint]) -> tuple[list[str], list[list[str]]]:
    """A learning curve as a table: per size, each model's mean query and break accuracy over
    the folds, each with its standard deviation."""
    by = {(p.size, p.model): p for p in points}
    rows = []
    for size in sorted({p.size for p in points}):
        cells = [f"{size:,}"]
        for model in MODELS:
            mean, spread = by[size, model].mean(), by[size, model].spread()
            cells.append(
                f"{mean.query:.3f}±{spread.query:.3f} / {mean.breaks:.3f}±{spread.breaks:.3f}"
            )
        rows.append(cells)
    return ["queries", *MODELS], rows


def check_plotting() -> None:
    """Refuse to draw a learning curve where matplotlib is missing before the curve's
    minutes are spent, naming the extra that brings it (``train``)."""
    from importlib.util import find_spec

    if find_spec("matplotlib") is None:
        raise needs_package("matplotlib", "train")


def plot_curve(points: Sequence[CurvePoint], path: str | os.PathLike[str], title: str) -> None:
    """Draw a learning curve (query and break accuracy against the number of annotated
    queries, a band of one standard deviation over the folds) into a PNG file, written
    whole or not at all."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from qseg.fileio import atomic_write_bytes

    sizes = sorted({p.size for p in points})
    by = {(p.size, p.model): p for p in points}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    for ax, measure, label in (
        (axes[0], "query", "query accuracy"),
        (axes[1], "breaks", "break accuracy"),
    ):
        for model in MODELS:
            mean = np.array([getattr(by[s, model].mean(), measure) for s in sizes])
            spread = np.array([getattr(by[s, model].spread(), measure) for s in sizes])
            ax.plot(sizes, mean, marker="o", label=model)
            ax.fill_between(sizes, mean - spread, mean + spread, alpha=0.2)
        ax.set_xscale("log")
        ax.set_xticks(sizes, [f"{size:,}" for size in sizes])
        ax.minorticks_off()
        ax.set_xlabel("annotated queries")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())
