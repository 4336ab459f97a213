"""BM25 with k1 and b chosen by cross-validation over the queries: the baseline a use of
segments has to beat, not just BM25 at its textbook parameters.

On the collections in ``../shared`` tuning k1 and b gains 2-5% nDCG@10 significantly, more
than any use of segments measured there (docs/integrations.md), so every IR table compares
against it as well as against plain BM25. The queries are split into :data:`FOLDS` folds
(shuffled with a fixed seed); each fold is scored with the parameters of :data:`GRID` whose
mean on the other folds is best, so no query is scored with parameters chosen on itself.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterable, Mapping

K1 = (0.6, 0.9, 1.2, 1.5, 1.8)
B = (0.3, 0.45, 0.6, 0.75, 0.9)
GRID = tuple((k1, b) for k1 in K1 for b in B)
"""The parameter pairs tried, in the order ties are broken (the first best wins)."""
DEFAULT = (1.2, 0.75)
"""BM25's usual parameters: Lucene's and tantivy's defaults, the ``unsegmented`` column's."""
FOLDS = 5

Params = tuple[float, float]


def folds(ids: Iterable[str], count: int = FOLDS, seed: int = 0) -> list[list[str]]:
    """The query ids in ``count`` folds (fewer if there are fewer queries), shuffled with
    ``seed`` from their sorted order, so that the split does not depend on the input order."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    count = max(1, min(count, len(order)))
    return [order[i::count] for i in range(count)]


def cross_validated(
    scores: Mapping[Params, Mapping[str, float]], ids: Iterable[str]
) -> list[tuple[list[str], Params]]:
    """Each fold of ``ids`` with the parameters whose mean score (``scores[params][query]``;
    a query missing there scores 0) is best on the other folds; with a single fold there is
    nothing to choose on, and it keeps :data:`DEFAULT`."""
    split = folds(ids)
    chosen = []
    for fold in split:
        held = set(fold)
        train = [q for part in split for q in part if q not in held]
        if not train:
            chosen.append((fold, DEFAULT))
            continue
        best = max(scores, key=lambda p: statistics.fmean(scores[p].get(q, 0.0) for q in train))
        chosen.append((fold, best))
    return chosen


def tuned(
    grid: Mapping[Params, Mapping[str, Mapping[str, float]]], ids: Iterable[str]
) -> tuple[dict[str, dict[str, float]], dict[str, list[Params]]]:
    """Per measure, every query's score under the parameters cross-validation chose for its
    fold on that measure (``grid[params][measure][query]``), and the parameters of each fold."""
    ids = list(ids)
    measures = list(next(iter(grid.values()))) if grid else []
    scores: dict[str, dict[str, float]] = {}
    chosen: dict[str, list[Params]] = {}
    for measure in measures:
        by_params = {params: grid[params][measure] for params in grid}
        scores[measure], chosen[measure] = {}, []
        for fold, best in cross_validated(by_params, ids):
            chosen[measure].append(best)
            scores[measure] |= {q: by_params[best].get(q, 0.0) for q in fold}
    return scores, chosen
