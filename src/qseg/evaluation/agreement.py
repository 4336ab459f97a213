"""Inter-annotator agreement on segmentations (paper 001, section 4).

Every flat or nested segmentation of an ``n``-word query is its vector of ``n - 1`` boundary
values ``b`` (break bits, or node heights). The distance between two annotations is

- eq. 4-5, equal lengths: ``d_k = 1/(n-1) * sum_i |b_i^k - b'_i^k|`` (``k = 1`` or ``2``; for
  flat segmentations ``d1 = d2``, called ``d``);
- eq. 6, lengths ``n < n'``: the shorter vector slides over the longer one,
  ``d_k = 1/(r(n-1)) * sum_{a<r} sum_i |b_i^k - b'_{i+a}^k|`` with ``r = n' - n + 1``.

Krippendorff's alpha (eq. 1-3) is ``1 - D_o / D_e`` in its general form, which lets every item
have its own number ``m_u`` of annotations: ``D_o = 1/N sum_u 1/(m_u - 1) sum_{pairs in u} d``
and ``D_e = 1/(N(N-1)) sum_{all pairs} d`` over ordered pairs of distinct annotations, with
``N`` the number of annotations. With ``c`` annotations on every item this is eq. 2-3 exactly.
Items with fewer than two annotations or fewer than two words carry no pair and are left out.

Because the distance is a sum over boundaries, both sums need only the histogram of values at
each boundary position, per item: alpha costs one pass over the annotations, whatever the
number of cross-item pairs, and a bootstrap replicate is a weighted sum of those histograms.

``S`` (eq. 7) is the mean over items and over all ordered pairs ``(m, n)`` of an item's
annotations, the pairs ``m = n`` included as in the paper, of ``P(d >= d(q_m, q_n))`` under the
random model of :mod:`qseg.evaluation.random_model`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from qseg.corpora.annotations import Annotation, Structure
from qseg.errors import AgreementError
from qseg.evaluation import random_model
from qseg.segmentation import NestedSegmentation, Segmentation

AnnotationsLike = Mapping[str, Sequence[Annotation | Structure]]
A = TypeVar("A", Annotation, Segmentation, NestedSegmentation)


def boundaries(structure: Structure) -> tuple[int, ...]:
    """The boundary values of paper 001: break bits of a flat, heights of a nested segmentation."""
    return structure.breaks if isinstance(structure, Segmentation) else structure.heights


def distance(a: Structure, b: Structure, power: int = 1) -> float:
    """``d1`` (``power=1``) or ``d2`` (``power=2``) between two annotations (eq. 4-6)."""
    _check_power(power)
    x, y = boundaries(a), boundaries(b)
    if len(x) > len(y):
        x, y = y, x
    if not x:
        raise AgreementError("the distance needs queries of at least two words")
    r = len(y) - len(x) + 1
    total = sum(abs(x[i] ** power - y[i + a] ** power) for a in range(r) for i in range(len(x)))
    return total / (r * len(x))


def _check_power(power: int) -> None:
    if power not in (1, 2):
        raise AgreementError(f"power must be 1 (d1) or 2 (d2), not {power}")


def _structures(annotations: Sequence[Annotation | Structure]) -> list[Structure]:
    return [a.segmentation if isinstance(a, Annotation) else a for a in annotations]


@dataclass(frozen=True)
class _Item:
    words: int
    values: np.ndarray  # (annotations, words - 1): boundary values to the power k
    kind: str  # "flat", "nested", or "mixed" (no random model)


def _items(annotations: AnnotationsLike, power: int) -> tuple[list[_Item], int]:
    """The items that carry pairs, and how many were left out."""
    _check_power(power)
    items = []
    for key, annots in annotations.items():
        structures = _structures(annots)
        if any(s.words != structures[0].words for s in structures):
            raise AgreementError(f"the annotations of item {key!r} segment different words")
        if len(structures) < 2 or len(structures[0].words) < 2:
            continue
        kinds = {"flat" if isinstance(s, Segmentation) else "nested" for s in structures}
        values = np.array([boundaries(s) for s in structures], dtype=np.int64) ** power
        kind = kinds.pop() if len(kinds) == 1 else "mixed"
        items.append(_Item(len(structures[0].words), values, kind))
    if not items:
        raise AgreementError("no item has two or more annotations of a query of two or more words")
    return items, len(annotations) - len(items)


class _Histograms:
    """Per-item histograms of boundary values, grouped by query length."""

    def __init__(self, items: list[_Item]) -> None:
        domain = np.unique(np.concatenate([item.values.ravel() for item in items]))
        self.distances = np.abs(domain[:, None] - domain[None, :]).astype(float)
        v = len(domain)
        self.lengths = sorted({item.words for item in items})
        self.index = {
            n: np.array([i for i, it in enumerate(items) if it.words == n]) for n in self.lengths
        }
        self.hist: dict[int, np.ndarray] = {}
        for n in self.lengths:
            group = [items[i].values for i in self.index[n]]
            owner = np.repeat(np.arange(len(group)), [len(values) for values in group])
            codes = np.searchsorted(domain, np.vstack(group))
            cells = (owner[:, None] * (n - 1) + np.arange(n - 1)) * v + codes
            counts = np.bincount(cells.ravel(), minlength=len(group) * (n - 1) * v)
            self.hist[n] = counts.reshape(len(group), n - 1, v).astype(float)
        self.sizes = np.array([len(item.values) for item in items], dtype=float)
        within = np.zeros(len(items))
        for n in self.lengths:
            h = self.hist[n]
            within[self.index[n]] = np.einsum("uiv,vw,uiw->u", h, self.distances, h) / (n - 1)
        self.observed = within / (self.sizes - 1)

    def alpha(self, weights: np.ndarray) -> np.ndarray:
        """Alpha for each row of item weights (1 each for the data, counts for a replicate)."""
        total = weights @ self.sizes
        observed = weights @ self.observed
        pooled = {
            n: (weights[:, self.index[n]] @ self.hist[n].reshape(len(self.index[n]), -1)).reshape(
                len(weights), n - 1, -1
            )
            for n in self.lengths
        }
        expected = np.zeros(len(weights))
        for j, n in enumerate(self.lengths):
            g = pooled[n]
            expected += np.einsum("biv,vw,biw->b", g, self.distances, g) / (n - 1)
            for longer in self.lengths[j + 1 :]:
                r = longer - n + 1
                cum = np.cumsum(pooled[longer], axis=1)
                cum = np.concatenate([np.zeros_like(cum[:, :1]), cum], axis=1)
                window = cum[:, r : r + n - 1] - cum[:, : n - 1]
                expected += (
                    2 * np.einsum("biv,vw,biw->b", g, self.distances, window) / (r * (n - 1))
                )
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(expected > 0, 1 - (total - 1) * observed / expected, np.nan)


def krippendorff_alpha(annotations: AnnotationsLike, power: int = 1) -> float:
    """Krippendorff's alpha with ``d1`` or ``d2`` (eq. 1-6)."""
    items, _ = _items(annotations, power)
    value = float(_Histograms(items).alpha(np.ones((1, len(items))))[0])
    if np.isnan(value):
        raise AgreementError("alpha is undefined: every annotation has the same boundaries")
    return value


def _item_s(items: list[_Item], power: int) -> np.ndarray:
    """Each item's mean of ``P(d >= observed d)`` over all ordered pairs (NaN: not modelled)."""
    result = np.full(len(items), np.nan)
    for i, item in enumerate(items):
        limit = (
            random_model.MAX_FLAT_WORDS if item.kind == "flat" else random_model.MAX_NESTED_WORDS
        )
        if item.kind == "mixed" or item.words > limit:
            continue
        tail = random_model.survival(item.words, item.kind, power)
        totals = np.abs(item.values[:, None, :] - item.values[None, :, :]).sum(axis=2)
        result[i] = tail[np.minimum(totals, len(tail) - 1)].mean()
    return result


def random_model_s(annotations: AnnotationsLike, power: int = 1) -> float:
    """``S`` of eq. 7: how often random annotations agree no better than the observed ones."""
    items, _ = _items(annotations, power)
    per_item = _item_s(items, power)
    if np.isnan(per_item).any():
        raise AgreementError(
            "S needs items of one kind (flat or nested) within the random model's lengths "
            f"(flat up to {random_model.MAX_FLAT_WORDS} words, nested up to "
            f"{random_model.MAX_NESTED_WORDS})"
        )
    return float(per_item.mean())


@dataclass(frozen=True)
class Agreement:
    """Alpha and S with bootstrap confidence intervals over items."""

    distance: str
    items: int
    annotations: int
    excluded_items: int
    alpha: float
    alpha_ci: tuple[float, float]
    s: float | None
    s_ci: tuple[float, float] | None
    s_items: int
    confidence: float
    replicates: int

    def summary(self) -> dict[str, object]:
        """A flat, JSON-ready view."""
        return {
            "distance": self.distance,
            "items": self.items,
            "annotations": self.annotations,
            "excluded_items": self.excluded_items,
            "alpha": self.alpha,
            "alpha_low": self.alpha_ci[0],
            "alpha_high": self.alpha_ci[1],
            "s": self.s,
            "s_low": self.s_ci[0] if self.s_ci else None,
            "s_high": self.s_ci[1] if self.s_ci else None,
            "s_items": self.s_items,
            "confidence": self.confidence,
            "replicates": self.replicates,
        }


def bootstrap_weights(items: int, replicates: int, seed: int) -> np.ndarray:
    """How often each item is drawn in each replicate (draws with replacement)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(items, np.full(items, 1 / items), size=replicates).astype(float)


def percentile_interval(values: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile bootstrap interval, ignoring undefined replicates."""
    tail = (1 - confidence) / 2 * 100
    low, high = np.nanpercentile(values, [tail, 100 - tail])
    return float(low), float(high)


def agreement(
    annotations: AnnotationsLike,
    power: int = 1,
    replicates: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Agreement:
    """Alpha and S with percentile bootstrap intervals from ``replicates`` resamplings of items.

    S covers the items the random model can enumerate (``s_items`` of them); it is ``None``
    when there is none, or when flat and nested annotations are mixed.
    """
    if replicates < 1:
        raise AgreementError("the bootstrap needs at least one replicate")
    if not 0 < confidence < 1:
        raise AgreementError(f"confidence must be between 0 and 1, not {confidence}")
    items, excluded = _items(annotations, power)
    hist = _Histograms(items)
    alpha = float(hist.alpha(np.ones((1, len(items))))[0])
    if np.isnan(alpha):
        raise AgreementError("alpha is undefined: every annotation has the same boundaries")
    per_item = _item_s(items, power)
    modelled = ~np.isnan(per_item)
    alphas, ses = [], []
    batch = max(1, 20_000_000 // (len(items) * 8))
    for start in range(0, replicates, batch):
        w = bootstrap_weights(len(items), min(batch, replicates - start), seed + start)
        alphas.append(hist.alpha(w))
        if modelled.any():
            wm = w[:, modelled]
            with np.errstate(invalid="ignore"):
                ses.append(wm @ per_item[modelled] / wm.sum(axis=1))
    s = float(per_item[modelled].mean()) if modelled.any() else None
    return Agreement(
        distance=f"d{power}",
        items=len(items),
        annotations=int(hist.sizes.sum()),
        excluded_items=excluded,
        alpha=alpha,
        alpha_ci=percentile_interval(np.concatenate(alphas), confidence),
        s=s,
        s_ci=percentile_interval(np.concatenate(ses), confidence) if ses else None,
        s_items=int(modelled.sum()),
        confidence=confidence,
        replicates=replicates,
    )


def by_length(annotations: Mapping[str, Sequence[A]]) -> dict[int, dict[str, Sequence[A]]]:
    """The items grouped by query length in words, shortest first."""
    groups: dict[int, dict[str, Sequence[A]]] = {}
    for key, annots in annotations.items():
        if annots:
            n = len(_structures(annots[:1])[0].words)
            groups.setdefault(n, {})[key] = annots
    return dict(sorted(groups.items()))
