"""A trained model adapted to a domain's own annotations, starting from what it knows.

A team's queries follow their own convention, and a few hundred of them annotated teach a
model more than the base's training data does, but too few to train one alone. Adapting
keeps everything the base model segments with and adds what the annotations teach, in the
places the base already reads:

- its **lexicon** (break rates of words and word pairs) and **phrase rates** (how often an
  n-gram is a segment) get the annotations' counts added, each annotation weighing
  :attr:`Adaptation.weight` base gaps: the base's trees, which learnt to trust those inputs,
  follow the domain's rates where it has seen the words, and the base's elsewhere;
- its **gap model**, **joint scorer** and **vote ranker** go on boosting from the base's
  margins on the annotated queries (XGBoost's ``base_margin``): a few trees that correct the
  base where the domain disagrees with it, and add little where the annotations are few.

Where the domain's convention is far from the base's, a model learnt from the annotations
alone does better once they are many; it is the other start (``fresh``) of the same file
format, which still runs on the base's resources. The two can also be decoded together
(``both``: each query's candidates of the two, their joint scores made probabilities within
each model and added), which does better than either in most of those simulations.
:func:`qseg.adapt` chooses among the three and the base as it is, by cross-validation over
the annotations.

The adapted model is the base's trees followed by the new ones, one ensemble each
(:meth:`.break_model.BreakModel.adapted_by`), so it runs on the compiled path like any model.
Its file holds only what adapting added (:class:`AdaptedParts`) and names its base by
fingerprint (:mod:`qseg.models`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from qseg.segmenters.learned.lexicon import Lexicon
from qseg.segmenters.learned.trainable import STARTS
from qseg.segmenters.learned.trees import TreeEnsemble


@dataclass(frozen=True)
class Adaptation:
    """How a model is adapted (the size of the trees it learns is the classifier's
    ``boosting``)."""

    start: str = "continue"
    """``continue``: the base's trees boosted further on the annotated queries, its lexicon
    and phrase rates with theirs added; ``fresh``: trees, lexicon and phrase rates learnt
    from the annotated queries alone, on the base's inputs and resources (a model trained on
    them alone that needs nothing its base does not)."""
    weight: float = 5.0
    """Continuing: each annotated gap's weight in the lexicon and the phrase rates, against
    one gap of the base's training queries."""
    base_count: float = 1.0
    """Continuing: how many occurrences the base's rate of a phrase stands for."""

    def __post_init__(self) -> None:
        if self.start not in STARTS:
            raise ValueError(f"start must be one of {', '.join(STARTS)}, not {self.start!r}")
        if not (0 < self.weight <= 1e6 and 0 <= self.base_count <= 1e6):
            raise ValueError("weight must be positive and base_count not negative")


@dataclass(frozen=True)
class AdaptedParts:
    """What adapting learnt on top of a base model: the trees (after the base's, or instead
    of them), the domain's lexicon and phrase counts, how they weigh, and the base they build
    on (``origin``: how its file was named)."""

    origin: Mapping[str, Any]
    adaptation: Adaptation
    gap_trees: TreeEnsemble
    joint_trees: TreeEnsemble | None
    ranker_trees: TreeEnsemble | None
    lexicon: Lexicon | None
    phrase_counts: Mapping[str, tuple[float, int]]
    queries: int
    """How many annotated queries it learnt from."""
    boosting: Mapping[str, Any]
    """The size of the trees learnt (``n_estimators``, ``max_depth``, ``learning_rate``)."""
    selection: Mapping[str, Any] = field(default_factory=dict)
    """How the start was chosen: each candidate's cross-validated figures on the
    annotations (:func:`qseg.evaluation.adaptation.select`)."""
    partner: AdaptedParts | None = None
    """The other start's parts, decoded with these (``both``); ``None``: one model."""


def merged_phrases(
    base: Mapping[str, float],
    counts: Mapping[str, tuple[float, int]],
    adaptation: Adaptation,
) -> dict[str, float]:
    """The base's phrase rates with the domain's counts (made a segment, occurrences) added:
    a phrase the base knows starts from its rate as :attr:`Adaptation.base_count`
    occurrences; one it does not, from the domain's alone (smoothed as
    :func:`.lexicon.phrase_rates` smooths). Starting fresh: the domain's rates alone."""
    if adaptation.start == "fresh":
        return {k: (made + 0.05) / (seen + 0.1) for k, (made, seen) in counts.items()}
    merged = dict(base)
    w, c0 = adaptation.weight, adaptation.base_count
    for key, (made, seen) in counts.items():
        if key in base:
            merged[key] = (c0 * base[key] + w * made) / (c0 + w * seen)
        else:
            merged[key] = (w * made + 0.05) / (w * seen + 0.1)
    return merged


class ContinuedGapModel:
    """Boosted trees trained from the margins of a base gap model (training only): predicts
    the base's margin plus the new trees', through the logistic function."""

    def __init__(self, base: TreeEnsemble, booster: Any) -> None:
        self.base, self.booster = base, booster

    @classmethod
    def fit(
        cls,
        base: TreeEnsemble,
        x: np.ndarray,
        rates: np.ndarray,
        params: Mapping[str, Any],
        weights: np.ndarray | None = None,
    ) -> ContinuedGapModel:
        """Trees fitted to the break ``rates`` from the base's margins on ``x``."""
        import xgboost as xgb

        train = xgb.DMatrix(x, label=rates, weight=weights, base_margin=base.margins(x))
        settings = {
            "objective": "binary:logistic",
            # no intercept of its own: the base's margins are the start (XGBoost would
            # estimate one from the labels, infinite where every annotated gap breaks)
            "base_score": 0.5,
            "max_depth": params["max_depth"],
            "eta": params["learning_rate"],
            "subsample": params["subsample"],
            "colsample_bytree": params["colsample_bytree"],
            "min_child_weight": params["min_child_weight"],
            "seed": params["random_state"],
            "nthread": params["n_jobs"],
        }
        return cls(base, xgb.train(settings, train, params["n_estimators"]))

    def predict(self, x: np.ndarray) -> np.ndarray:
        import xgboost as xgb

        return self.booster.predict(xgb.DMatrix(x, base_margin=self.base.margins(x)))
