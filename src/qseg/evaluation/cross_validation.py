"""K-fold cross-validation of supervised segmenters over queries.

Folds split query ids, so a query (with all of its annotations) is either trained on or tested,
never both; every query is tested exactly once. Training on a share of each training fold gives
a learning curve: how much a model would gain from more annotated queries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from qseg.errors import QsegError
from qseg.segmentation import Segmentation, Target, target_words
from qseg.segmenters.learned.supervised import BreakClassifier


def query_folds(ids: Sequence[str], k: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """``k`` (train ids, test ids) pairs over shuffled ids; test parts are disjoint."""
    from sklearn.model_selection import KFold

    if not 2 <= k <= len(ids):
        raise QsegError(f"cannot make {k} folds of {len(ids)} queries")
    order = np.asarray(list(ids), dtype=object)
    return [
        (list(order[train]), list(order[test]))
        for train, test in KFold(k, shuffle=True, random_state=seed).split(order)
    ]


def cross_validate(
    make: Callable[[], BreakClassifier],
    gold: Mapping[str, Target],
    tags: Mapping[str, Sequence[str] | None] | None = None,
    *,
    k: int = 5,
    seed: int = 0,
    train_share: float = 1.0,
    on_fold: Callable[[int], None] | None = None,
) -> dict[str, Segmentation]:
    """Out-of-fold segmentations of every gold query: each from a model that never saw it,
    trained on a random ``train_share`` of its training fold (drawn with ``seed``)."""
    if not 0 < train_share <= 1:
        raise QsegError(f"train_share must be in (0, 1], got {train_share}")
    rng = np.random.default_rng(seed)
    result: dict[str, Segmentation] = {}
    for fold, (all_train, test) in enumerate(query_folds(list(gold), k, seed)):
        train = all_train
        if train_share < 1:
            keep = max(1, round(train_share * len(all_train)))
            train = [all_train[i] for i in np.sort(rng.permutation(len(all_train))[:keep])]
        model = make().fit(
            [target_words(gold[i]) for i in train],
            [gold[i] for i in train],
            [tags.get(i) for i in train] if tags is not None else None,
        )
        predicted = model.predict(
            [target_words(gold[i]) for i in test],
            [tags.get(i) for i in test] if tags is not None else None,
        )
        result.update(zip(test, predicted, strict=True))
        if on_fold is not None:
            on_fold(fold)
    return {i: result[i] for i in gold}
