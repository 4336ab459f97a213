"""Agreement of relevance judges on graded labels (paper 000, Table 8, last row).

Krippendorff's alpha comes from the ``krippendorff`` package at the chosen level of measurement
(grades 0/1/2 are ordinal by nature; nominal and interval are there to compare), with a
percentile bootstrap over judged items. Per pair of judges: the share of items graded alike
and Cohen's kappa (scikit-learn), plain and linearly weighted.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from qseg.corpora.annotations import Judgments
from qseg.evaluation.agreement import AgreementError, bootstrap_weights, percentile_interval

LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class JudgePair:
    """Two judges on the items both graded."""

    judges: tuple[str, str]
    items: int
    agreement: float
    kappa: float
    weighted_kappa: float


@dataclass(frozen=True)
class LabelAgreement:
    """Alpha over all judges with its bootstrap interval, and pairwise figures."""

    level: str
    items: int
    judges: tuple[str, ...]
    alpha: float
    alpha_ci: tuple[float, float]
    pairs: tuple[JudgePair, ...]
    confidence: float
    replicates: int


def label_agreement(
    judgments: Judgments,
    level: str = "ordinal",
    replicates: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    progress: Callable[[int], object] | None = None,
) -> LabelAgreement:
    """Alpha at ``level`` (one of :data:`LEVELS`) and every pair's agreement and kappa.

    ``progress`` is called with 1 after each bootstrap replicate.
    """
    import krippendorff  # imported here: the command line reads LEVELS on every start
    from sklearn.metrics import cohen_kappa_score

    if level not in LEVELS:
        raise AgreementError(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    if not 0 < confidence < 1 or replicates < 1:
        raise AgreementError("need 0 < confidence < 1 and at least one replicate")
    grades = judgments.grades
    domain = np.unique(grades[~np.isnan(grades)])
    if len(domain) < 2:
        raise AgreementError("alpha is undefined: the judges used a single grade")
    counts = (grades[:, :, None] == domain[None, None, :]).sum(axis=1)
    pairable = counts.sum(axis=1) >= 2
    counts = counts[pairable]

    def alpha_of(value_counts: np.ndarray) -> float:
        try:
            return float(
                krippendorff.alpha(
                    value_counts=value_counts, value_domain=domain, level_of_measurement=level
                )
            )
        except (ValueError, ZeroDivisionError):
            return float("nan")

    alpha = alpha_of(counts)
    weights = bootstrap_weights(len(counts), replicates, seed)
    replicate_alphas = np.empty(replicates)
    for i, w in enumerate(weights):
        replicate_alphas[i] = alpha_of(np.repeat(counts, w.astype(int), axis=0))
        if progress:
            progress(1)
    pairs = []
    for a, b in itertools.combinations(range(len(judgments.judges)), 2):
        both = ~np.isnan(grades[:, a]) & ~np.isnan(grades[:, b])
        x, y = grades[both, a].astype(int), grades[both, b].astype(int)
        pairs.append(
            JudgePair(
                judges=(judgments.judges[a], judgments.judges[b]),
                items=int(both.sum()),
                agreement=float((x == y).mean()),
                kappa=float(cohen_kappa_score(x, y)),
                weighted_kappa=float(cohen_kappa_score(x, y, weights="linear")),
            )
        )
    return LabelAgreement(
        level=level,
        items=int(pairable.sum()),
        judges=judgments.judges,
        alpha=alpha,
        alpha_ci=percentile_interval(replicate_alphas, confidence),
        pairs=tuple(pairs),
        confidence=confidence,
        replicates=replicates,
    )
