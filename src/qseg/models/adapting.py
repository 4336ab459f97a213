"""Adapting a saved model to annotated queries: the base it starts from, and one adapted fit.

:mod:`qseg.evaluation.adaptation` chooses how to adapt (by cross-validation over the
annotations) and draws learning curves; this module makes one adapted model
(:mod:`qseg.segmenters.learned.adaptation` says what it holds).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from qseg.errors import QsegError
from qseg.resources.bundle import Resources
from qseg.segmentation import Target
from qseg.segmenters.learned.trainable import Boosting

if TYPE_CHECKING:
    from qseg.segmenters.learned.break_model import BreakModel

BOTH = "both"
"""The ``continue`` and ``fresh`` starts decoded together (:func:`together`)."""

CONTINUE_BOOSTING = Boosting(n_estimators=100, max_depth=4, learning_rate=0.05)
"""The trees a continued model adds to each of the base's ensembles: 100 of depth 4 did best
of 100, 300 and 500 trees in the simulations of docs/adapting.md (300 of depth 5 lost 0.02
query accuracy from 50 to 1,000 annotated queries, and gained 0.01 with all 7,000). A
learning rate of 0.05 rather than 0.1 lifted both starts decoded together by 0.003-0.021 from
25 to 400 annotated queries of either simulation and left them within 0.001 at 1,600 (0.03:
0.003-0.028 higher up to 400, 0.003-0.007 lower at 1,600); the same five folds each."""


def base_model(
    base: str | os.PathLike[str] | BreakModel,
    resources: Resources | None = None,
    *,
    allow_other_resources: bool = False,
) -> BreakModel:
    """The model to adapt: a trained model as it is, or the one a spec opens (a shipped
    model's name, ``default`` included, with a style for a model of two kinds of query, or a
    model file); an error for anything else."""
    from qseg.models import open_segmenter
    from qseg.segmenters.learned.break_model import BreakModel
    from qseg.segmenters.learned.routing import AUTO, RoutedModel

    if isinstance(base, BreakModel):
        return base
    opened = open_segmenter(base, resources, allow_other_resources=allow_other_resources)
    shown = os.fspath(base)
    if isinstance(opened, RoutedModel):
        if opened.style == AUTO:
            styles = ", ".join(f"{shown}(style={kind})" for kind in opened.router.labels)
            raise QsegError(
                f"{shown} routes each query to a model per kind: adapt one of them ({styles})"
            )
        return opened.models[opened.style]
    if not isinstance(opened, BreakModel):
        raise QsegError(
            f"{shown} is not a trained model: adapting starts from one (the default, a shipped "
            "model or a file `qseg train` wrote)"
        )
    if opened.partner is not None:
        raise QsegError(
            f"{shown} decodes two adapted models together: adapt its base again instead, with "
            "all the annotations"
        )
    return opened


def fit_adapted(
    base: BreakModel,
    words: Sequence[tuple[str, ...]],
    targets: Sequence[Target],
    start: str,
    *,
    random_state: int = 0,
    n_jobs: int = 1,
    selection: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> BreakModel:
    """``base`` adapted to the annotated queries from ``start`` (``continue`` or ``fresh``,
    :class:`~qseg.segmenters.learned.adaptation.Adaptation`, or ``both``: the two decoded
    together, :func:`together`); ``selection``: how the start was chosen, recorded in the
    model."""
    from qseg.segmenters.learned.adaptation import Adaptation
    from qseg.segmenters.learned.supervised import BreakClassifier

    if start == BOTH:
        ours, theirs = (
            fit_adapted(
                base, words, targets, one, random_state=random_state, n_jobs=n_jobs,
                progress=progress,
            )
            for one in ("continue", "fresh")
        )  # fmt: skip
        return together(base, ours, theirs, selection)

    boosting = CONTINUE_BOOSTING if start == "continue" else base.params.get("boosting")
    params = base.params
    classifier = BreakClassifier(
        inputs=params.get("inputs"),
        classifier=params.get("classifier", "xgboost"),
        boosting=boosting,
        decoding=params.get("decoding"),
        inner_folds=params.get("inner_folds", 5),
        random_state=random_state,
        n_jobs=n_jobs,
        base=base,
        adaptation=Adaptation(start=start),
    )
    model = classifier.fit(words, targets, progress=progress).model_
    assert model.adapted is not None  # (fitted from a base)
    return replace(model, adapted=replace(model.adapted, selection=dict(selection or {})))


def together(
    base: BreakModel,
    continued: BreakModel,
    fresh: BreakModel,
    selection: Mapping[str, Any] | None = None,
) -> BreakModel:
    """The ``continue`` and ``fresh`` adaptations of ``base`` decoded together (``both``):
    each query's candidates of the two, their joint scores made probabilities within each
    model and added (:attr:`.break_model.BreakModel.partner`)."""
    assert continued.adapted is not None and fresh.adapted is not None  # (fitted from base)
    parts = replace(continued.adapted, partner=fresh.adapted, selection=dict(selection or {}))
    return base.adapted_by(parts)


def unchanged(base: BreakModel, queries: int, selection: Mapping[str, Any]) -> BreakModel:
    """``base`` as an adapted model that adds nothing: what adapting gives where the
    annotations did not improve on the base (its file names the base and the figures)."""
    from qseg.segmenters.learned.adaptation import Adaptation, AdaptedParts
    from qseg.segmenters.learned.trees import TreeEnsemble

    if base.origin is None:
        raise QsegError(
            "the base model was never saved: an adapted model names its base's file, so save "
            "the base (qseg.models.save) and adapt the model loaded from it"
        )
    assert isinstance(base.gap_model, TreeEnsemble)  # (adaptable)
    parts = AdaptedParts(
        origin=base.origin,
        adaptation=Adaptation(),
        gap_trees=base.gap_model.emptied(),
        joint_trees=None,
        ranker_trees=None,
        lexicon=None,
        phrase_counts={},
        queries=queries,
        boosting={"n_estimators": 0, "max_depth": 0, "learning_rate": 0.0},
        selection=dict(selection),
    )
    return base.adapted_by(parts)
