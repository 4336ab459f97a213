"""Tables of agreement results, shared by ``qseg agree`` and the report script."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from qseg.corpora.annotations import Annotation, Annotations
from qseg.evaluation.agreement import (
    Agreement,
    AgreementError,
    agreement,
    by_length,
)
from qseg.evaluation.judge_agreement import LabelAgreement
from qseg.segmentation import NestedSegmentation
from qseg.tables import Table

Scoped = tuple[str, Agreement | None]
"""A scope ("all", "5 words") and its result (``None``: undefined there)."""


def default_powers(annotations: Annotations) -> tuple[int, ...]:
    """``d`` (= d1) for flat annotations; d1 and d2 as soon as one is nested."""
    nested = any(
        isinstance(a.segmentation, NestedSegmentation)
        for annots in annotations.values()
        for a in annots
    )
    return (1, 2) if nested else (1,)


def measure(
    annotations: Annotations,
    powers: Sequence[int] = (1,),
    lengths: bool = False,
    replicates: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[Scoped]:
    """Agreement over all items, then (with ``lengths``) per query length, for each power."""
    scopes: list[tuple[str, Mapping[str, Sequence[Annotation]]]] = [("all", annotations)]
    if lengths:
        scopes += [(f"{n} words", group) for n, group in by_length(annotations).items()]
    results: list[Scoped] = []
    for power in powers:
        for scope, subset in scopes:
            try:
                results.append((scope, agreement(subset, power, replicates, confidence, seed)))
            except AgreementError:
                if scope == "all":
                    raise
                results.append((scope, None))
    return results


def _with_ci(value: float, ci: tuple[float, float]) -> str:
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def agreement_table(results: Sequence[Scoped], flat: bool) -> Table:
    """One row per scope and distance: items, annotations, alpha and S with their intervals."""
    confidence = next((r.confidence for _, r in results if r), 0.95)
    pct = f"{100 * confidence:g}%"
    header = ["scope", "distance", "items", "annotations", f"alpha [{pct} CI]", f"S [{pct} CI]"]
    rows = []
    for scope, r in results:
        if r is None:
            rows.append([scope, "-", "-", "-", "undefined", "-"])
            continue
        s = _with_ci(r.s, r.s_ci) if r.s is not None and r.s_ci is not None else "-"
        if r.s is not None and r.s_items < r.items:
            s += f" ({r.s_items} items)"
        name = "d" if flat else r.distance
        rows.append(
            [scope, name, str(r.items), str(r.annotations), _with_ci(r.alpha, r.alpha_ci), s]
        )
    return "Krippendorff's alpha and S (Ramanath et al. 2013, eq. 1-7)", header, rows


def label_tables(results: Sequence[LabelAgreement]) -> list[Table]:
    """Alpha per level of measurement, then the pairwise figures (the same for every level)."""
    first = results[0]
    pct = f"{100 * first.confidence:g}%"
    alpha_rows = [
        [r.level, str(r.items), str(len(r.judges)), _with_ci(r.alpha, r.alpha_ci)] for r in results
    ]
    pair_rows = [
        [
            " / ".join(p.judges),
            str(p.items),
            f"{p.agreement:.3f}",
            f"{p.kappa:.3f}",
            f"{p.weighted_kappa:.3f}",
        ]
        for p in first.pairs
    ]
    if pair_rows:
        mean = [
            sum(getattr(p, k) for p in first.pairs) / len(first.pairs)
            for k in ("agreement", "kappa", "weighted_kappa")
        ]
        pair_rows.append(["mean of pairs", "-", *(f"{m:.3f}" for m in mean)])
    return [
        (
            "Krippendorff's alpha of the judges",
            ["level", "items", "judges", f"alpha [{pct} CI]"],
            alpha_rows,
        ),
        (
            "Pairs of judges",
            ["judges", "items", "same grade", "Cohen's kappa", "linear weighted kappa"],
            pair_rows,
        ),
    ]
