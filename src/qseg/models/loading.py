"""Saving a fitted break classifier to one file and loading it back as a segmenter.

Loading reads and checks the file (:mod:`.format`), takes the resources it was trained with
(:mod:`.provenance`), decodes every member with its shapes checked, and checks that the gap
model takes exactly the features the inputs give. What comes back is a fitted
:class:`~qseg.segmenters.supervised.BreakClassifier`, whose ``spec`` is the path (or shipped
name) it was loaded by.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from qseg.errors import QsegError
from qseg.fileio import StrPath
from qseg.models.format import ModelFile, model_meta, read_model, write_model
from qseg.models.provenance import check_encoder, check_integrity, feature_source
from qseg.resources.bundle import Resources
from qseg.segmenters.trainable import Inputs

if TYPE_CHECKING:
    from qseg.segmenters.supervised import BreakClassifier

T = TypeVar("T")


def save(model: BreakClassifier, path: StrPath) -> None:
    """Write a fitted classifier to one model file (replaced atomically)."""
    if not hasattr(model, "gap_model_"):
        raise QsegError("this segmenter is not trained yet; nothing to save")
    members = {"gap_model.bin": model.gap_model_.to_bytes()}
    if model.lexicon_ is not None:
        members["lexicon.json"] = json.dumps(model.lexicon_.to_json()).encode()
    if model.probe_ is not None:
        members["probe.npz"] = model.probe_.to_bytes()
    if model.joint_ is not None:
        members["joint.ubj"] = bytes(model.joint_.save_raw("ubj"))
        members["phrases.json"] = json.dumps(model.phrases_).encode()
    if model.ranker_ is not None:
        members["ranker.ubj"] = bytes(model.ranker_.save_raw("ubj"))
    if model.vectors_ is not None:
        members["vectors.npz"] = model.vectors_.to_bytes()
    fitted = {
        "n_features_in": int(model.n_features_in_),
        "tagged": bool(model.tagged_),
        "joint": model.joint_ is not None,
    }
    meta = model_meta(model.get_params(), fitted, model.resources_)
    meta["features"], meta["candidate_features"] = _feature_names(model.inputs, fitted["joint"])
    write_model(path, meta, members)


def _feature_names(inputs: Inputs | None, joint: bool) -> tuple[list[str], list[str]]:
    """The named gap features (the paper 004 and name features; vectors, probe and lexicon
    columns follow them) and the candidate features of the joint scorer, as this qseg
    computes them: a model from a qseg that computes others is refused."""
    from qseg.segmenters.gap_features import FEATURE_NAMES
    from qseg.segmenters.joint import CANDIDATE_FEATURES
    from qseg.segmenters.name_features import NAME_FEATURES

    inputs = inputs or Inputs()
    gap = [
        *(FEATURE_NAMES if inputs.features else ()),
        *(NAME_FEATURES if inputs.name_statistics else ()),
    ]
    return gap, list(CANDIDATE_FEATURES) if joint else []


def load(
    path: StrPath,
    resources: Resources | None = None,
    *,
    allow_other_resources: bool = False,
    spec: str | None = None,
) -> BreakClassifier:
    """A model saved by :func:`save`, running on ``resources`` (see :mod:`.provenance`);
    ``spec`` is what the loaded segmenter reports as its spec (default: the path)."""
    from qseg.resources.vectors import WordVectors
    from qseg.segmenters.contextual import BreakProbe, gap_width, require_encoder
    from qseg.segmenters.gap_features import FEATURE_NAMES
    from qseg.segmenters.gap_models import LinearGapModel, TreeGapModel, load_booster
    from qseg.segmenters.lexicon import LEXICON_FEATURES, Lexicon, check_phrase_rates
    from qseg.segmenters.name_features import NAME_FEATURES
    from qseg.segmenters.supervised import BreakClassifier

    file = read_model(path)
    resources = resources or Resources()
    allow = allow_other_resources
    model = BreakClassifier(resources, **file.params)
    try:
        model._check_params()  # the values' ranges, beyond the types read_model checked
    except QsegError as exc:
        raise file.fail(f"meta.json: {exc}") from None
    inputs, decoding = file.inputs, file.decoding
    if [file.meta["features"], file.meta["candidate_features"]] != list(
        _feature_names(inputs, file.meta["fitted"]["joint"])
    ):
        raise file.fail(
            "its features are not the ones this qseg computes (a model of another qseg "
            "version?); retrain it with `qseg train`"
        )
    model.source_ = None
    if "ngrams" in file.resources:
        model.source_ = feature_source(file, resources, allow)
    model.resources_ = file.resources
    width = 0
    if inputs.features:
        width += len(FEATURE_NAMES)
    if inputs.name_statistics:
        width += len(NAME_FEATURES)
    model.vectors_ = None
    if inputs.word_vectors:
        vectors = _decode(file, "vectors.npz", WordVectors.from_bytes)
        check_integrity(file, "vectors", vectors.fingerprint)
        model.vectors_ = vectors
        width += 2 * vectors.dimensions
    model.probe_ = None
    if inputs.contextual:
        encoder = require_encoder()
        check_encoder(file, encoder.fingerprint, allow)
        model.probe_ = _decode(
            file, "probe.npz", lambda raw: BreakProbe.from_bytes(raw, gap_width(encoder))
        )
        width += 1
    model.lexicon_ = None
    if inputs.lexicon:
        model.lexicon_ = _decode(file, "lexicon.json", lambda raw: Lexicon.from_json(_json(raw)))
        width += len(LEXICON_FEATURES)
    fitted = file.meta["fitted"]
    if fitted["n_features_in"] != width:
        raise file.fail(
            f"the inputs give {width} features, the model was fitted on {fitted['n_features_in']}"
        )
    linear = model.classifier == "logreg"
    gap = _decode(
        file, "gap_model.bin", LinearGapModel.from_bytes if linear else TreeGapModel.from_bytes
    )
    if gap.n_features != width:
        raise file.fail(f"the gap model takes {gap.n_features} features, not {width}")
    model.gap_model_ = gap
    model.joint_ = model.ranker_ = None
    model.phrases_ = {}
    if file.meta["fitted"]["joint"]:
        model.joint_ = _booster(file, "joint.ubj", load_booster)
        model.phrases_ = _decode(file, "phrases.json", lambda raw: check_phrase_rates(_json(raw)))
        if decoding.rank_votes:
            model.ranker_ = _booster(file, "ranker.ubj", load_booster)
    model.n_features_in_ = width
    model.tagged_ = fitted["tagged"]
    model.spec_ = spec if spec is not None else str(path)
    return model


def _json(raw: bytes) -> Any:
    return json.loads(raw.decode("utf-8"))


def _decode(file: ModelFile, member: str, decode: Callable[[bytes], T]) -> T:
    try:
        return decode(file.members[member])
    except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise file.fail(str(exc) or type(exc).__name__, member) from None


def _booster(file: ModelFile, member: str, load_booster: Callable[[bytes], Any]) -> Any:
    from qseg.segmenters.joint import CANDIDATE_FEATURES

    booster = _decode(file, member, load_booster)
    if booster.num_features() != len(CANDIDATE_FEATURES):
        raise file.fail(
            f"the scorer takes {booster.num_features()} features, not {len(CANDIDATE_FEATURES)}",
            member,
        )
    return booster
