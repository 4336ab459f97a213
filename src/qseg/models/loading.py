"""Saving a fitted break classifier to one file and loading it back as a segmenter.

Loading reads and checks the file (:mod:`.format`), takes the resources it was trained with
(:mod:`.provenance`), decodes every member with its shapes checked, and checks that the gap
model takes exactly the features the inputs give. What comes back is a fitted
:class:`~qseg.segmenters.learned.supervised.BreakClassifier`, whose ``spec`` is the path (or shipped
name) it was loaded by.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from qseg.errors import QsegError
from qseg.fileio import StrPath, atomic_write_bytes
from qseg.models.catalog import SHIPPED
from qseg.models.format import (
    ADAPTED_FORMAT,
    ADAPTED_PARTS,
    ADAPTED_VERSION,
    BESIDE,
    CARRIED,
    CARRIED_MEMBERS,
    ROUTED_FORMAT,
    ROUTED_VERSION,
    ROUTER,
    SHAREABLE,
    AdaptedFile,
    ModelFile,
    RoutedFile,
    beside_path,
    carried_member,
    contextual_member,
    model_bytes,
    model_json,
    model_meta,
    qseg_version,
    read_file,
    read_model,
    write_model,
)
from qseg.models.provenance import check_encoder, check_integrity, feature_source
from qseg.resources.bundle import Resources
from qseg.segmenters.learned.trainable import LINEAR, Inputs, check_settings

if TYPE_CHECKING:
    from qseg.resources.counts import NgramCounts
    from qseg.resources.titles import TitleSet
    from qseg.segmenters.learned.adaptation import AdaptedParts
    from qseg.segmenters.learned.break_model import BreakModel
    from qseg.segmenters.learned.routing import RoutedModel
    from qseg.segmenters.learned.supervised import BreakClassifier
    from qseg.segmenters.learned.trees import TreeEnsemble

T = TypeVar("T")


def save(
    model: BreakModel | BreakClassifier | RoutedModel,
    path: StrPath,
    *,
    carry_titles: bool = False,
    carry_names: bool = False,
    beside: Collection[str] = (),
) -> None:
    """Write a trained model (or a fitted classifier's, or a routed model) to one model file,
    replaced atomically. ``carry_titles``: the file holds its title set itself (an exact one
    as a list, a compact one packed: :mod:`qseg.resources.packed`), so that it runs without
    any title resource installed; ``carry_names``: its name statistics too (a compact count
    store, packed); a routed model's models hold one copy between them. ``beside``: members
    a routed model's models share that are written to files of their own next to ``path``
    (:func:`.format.beside_path`; before it, so that it never names a file not yet there)."""
    carry = {"titles": carry_titles, "names": carry_names}
    from qseg.segmenters.learned.routing import RoutedModel

    if isinstance(model, RoutedModel):
        data, outside = _routed_bytes(model, carry, set(beside))
        for name, content in outside.items():
            atomic_write_bytes(beside_path(path, name), content)
        atomic_write_bytes(path, data)
        return
    if beside:
        raise QsegError("only a routed model keeps members in files beside its own")
    trained = _trained(model)
    if trained.adapted is not None:
        if carry_titles or carry_names:
            raise QsegError("an adapted model carries nothing itself: its base does")
        write_model(path, *adapted_bytes(trained.adapted))
        return
    meta, members = _meta_and_members(trained, carry)
    write_model(path, meta, members)


def _trained(model: BreakModel | BreakClassifier) -> BreakModel:
    if not hasattr(model, "gap_model"):
        if not hasattr(model, "model_"):
            raise QsegError("this segmenter is not trained yet; nothing to save")
        return model.model_
    return model


def _carried_form(model: BreakModel, kind: str) -> tuple[str, bytes]:
    """How a model file carries its titles or name statistics: an exact title set as a list,
    a compact store packed."""
    store = getattr(model.source, kind, None) if model.source is not None else None
    if store is None:
        raise QsegError(f"the model was trained without {kind}: it has none to carry")
    if store.info.mode == "compact":
        from qseg.resources.packed import pack

        return "packed", pack(store.store)
    if kind == "names":
        raise QsegError("name statistics are carried as a compact store; build them compact")
    return "list", "".join(f"{title}\n" for title in sorted(store)).encode()


def _routed_bytes(
    routed: RoutedModel, carry: dict[str, bool], beside: set[str]
) -> tuple[bytes, dict[str, bytes]]:
    """A routed model file: the router, each kind's model file and, once, the members they
    share (:data:`.format.SHAREABLE`, where the same in each; a carried resource must be);
    and the shared members ``beside`` names, which the file's manifest covers but which are
    written apart."""
    if not routed.complete:
        raise QsegError(
            "a routed model loaded for one style holds that kind's model only: load it with "
            "style=auto to save it"
        )
    files = {kind: _meta_and_members(routed.models[kind], carry) for kind in routed.router.labels}
    for kind, model in sorted(routed.contextual.items()):
        files[contextual_member(kind).removesuffix(".qseg")] = _meta_and_members(model, carry)
    shared: dict[str, bytes] = {}
    for name in sorted(SHAREABLE):
        found = [own[name] for _, own in files.values() if name in own]
        if len(found) == len(files) and all(data == found[0] for data in found):
            shared[name] = found[0]
        elif found and name in CARRIED_MEMBERS:
            raise QsegError(f"the models of a routed model carry different {name}")
    if beside - shared.keys():
        raise QsegError(f"{sorted(beside - shared.keys())[0]} is not a member the models share")
    members = {ROUTER: routed.router.to_bytes()}
    for kind, (meta, own) in files.items():
        members[f"{kind}.qseg"] = model_bytes(meta, own, set(shared))
    meta = {
        "format": ROUTED_FORMAT,
        "version": ROUTED_VERSION,
        "kinds": list(routed.router.labels),
        "style": routed.style,
        "contextual": list(routed.router.labels) if routed.contextual else [],
        "shared": sorted(shared),
        "qseg": qseg_version(),
    } | ({BESIDE: sorted(beside)} if beside else {})
    outside = {name: shared[name] for name in sorted(beside)}
    return model_bytes(meta, members | shared, beside), outside


def _meta_and_members(
    model: BreakModel, carry: dict[str, bool]
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """What a model file of ``model`` holds: its metadata and its members (with the resources
    ``carry`` says it carries)."""
    members = {"gap_model.npz": model.gap_model.to_bytes()}
    resources = model.resources
    for kind in ("titles", "names"):
        if carry[kind]:
            form, data = _carried_form(model, kind)
            members[CARRIED[kind][form]] = data
            entry = resources[kind]
            assert entry is not None  # recorded: the model has the store _carried_form found
            resources = resources | {kind: entry | {"carried": True, "form": form}}
    if model.lexicon is not None:
        members["lexicon.json"] = json.dumps(model.lexicon.to_json()).encode()
    if model.probe is not None:
        members["probe.npz"] = model.probe.to_bytes()
    if model.domain is not None:
        members["domain.npz"] = model.domain.to_bytes()
    if model.joint is not None:
        members["joint.npz"] = model.joint.to_bytes()
        members["phrases.json"] = json.dumps(model.phrases).encode()
    if model.ranker is not None:
        members["ranker.npz"] = model.ranker.to_bytes()
    if model.vectors is not None:
        members["vectors.npz"] = model.vectors.to_bytes()
    fitted: dict[str, Any] = {
        "n_features_in": model.n_features,
        "tagged": model.tagged,
        "joint": bool(model.joint),
    }
    meta = model_meta(model.params, fitted, resources)
    meta["features"], meta["candidate_features"] = _feature_names(model.inputs, fitted["joint"])
    return meta, members


def _feature_names(inputs: Inputs | None, joint: bool) -> tuple[list[str], list[str]]:
    """The named gap features (the paper 004 and name features; vectors, probe and lexicon
    columns follow them) and the candidate features of the joint scorer, as this qseg
    computes them: a model from a qseg that computes others is refused."""
    from qseg.segmenters.learned.gap_features import FEATURE_NAMES, PAIR_FEATURES
    from qseg.segmenters.learned.joint import CANDIDATE_FEATURES
    from qseg.segmenters.learned.name_features import NAME_FEATURES

    inputs = inputs or Inputs()
    gap = [
        *(FEATURE_NAMES if inputs.features else ()),
        *(NAME_FEATURES if inputs.name_statistics else ()),
        *(PAIR_FEATURES if inputs.pair_counts else ()),
    ]
    candidates = [*CANDIDATE_FEATURES, *(["domain"] if inputs.domain else [])]
    return gap, candidates if joint else []


def load(
    path: StrPath,
    resources: Resources | None = None,
    *,
    allow_other_resources: bool = False,
    spec: str | None = None,
    contextual: bool = False,
    style: str | None = None,
) -> BreakModel | RoutedModel:
    """A model saved by :func:`save`, running on ``resources`` (see :mod:`.provenance`);
    ``spec`` is what the loaded segmenter reports as its spec (default: the path);
    ``contextual``: a routed model's models with the contextual probe, where it has them;
    ``style``: a routed model segmenting in that style (default: the one it was saved with),
    with only the model that style needs read."""
    file = read_file(path)
    spec = spec if spec is not None else str(path)
    if contextual and not (isinstance(file, RoutedFile) and file.contextual):
        raise QsegError(
            f"{path}: holds no models with the contextual probe to opt in to (train one with "
            "contextual=true and give it as the method)"
        )
    if isinstance(file, AdaptedFile):
        model = _load_adapted(file, resources or Resources(), allow_other_resources)
        return replace(model, spec_text=spec, origin=origin_of(path, None, file))
    if isinstance(file, ModelFile):
        model = _load_model(file, resources or Resources(), allow_other_resources, spec)
        return replace(model, origin=origin_of(path, None, file))
    return _load_routed(
        file, resources or Resources(), allow_other_resources, spec, contextual, style
    )


def origin_of(path: StrPath, kind: str | None, file: ModelFile | AdaptedFile) -> dict[str, Any]:
    """How a model adapted from the model of ``file`` (at ``path``; ``kind``: the model of
    that kind in a routed file) names it: a shipped model by its versioned name, another
    file by its path; and the fingerprint of what it holds (:func:`model_fingerprint`)."""
    place = Path(path).resolve()
    where: dict[str, Any] = (
        {"model": place.stem} if place.parent == SHIPPED.resolve() else {"path": str(place)}
    )
    return where | {"kind": kind, "fingerprint": model_fingerprint(file)}


def model_fingerprint(file: ModelFile | AdaptedFile) -> str:
    """A fingerprint of a model: of its metadata, whose manifest has the SHA-256 of every
    member (so of everything it segments with)."""
    text = json.dumps(file.meta, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _load_routed(
    file: RoutedFile,
    resources: Resources,
    allow_other_resources: bool,
    spec: str,
    contextual: bool = False,
    style: str | None = None,
) -> RoutedModel:
    """A routed model: its router and the model of each kind ``style`` needs (with the
    contextual probe if ``contextual``), read with the members they share."""
    from qseg.segmenters.learned.domain import DomainModel
    from qseg.segmenters.learned.routing import RoutedModel

    router = _decode(file, ROUTER, DomainModel.from_bytes)
    if list(router.labels) != file.kinds:
        raise file.fail(f"the router tells {', '.join(router.labels)} apart", ROUTER)
    shared = {name: file.members[name] for name in file.shared}
    models = {}
    style = style or file.style
    for kind in [k for k in file.kinds if k == style] or file.kinds:  # auto: every kind
        name = contextual_member(kind) if contextual else f"{kind}.qseg"
        member = f"{file.path} ({name})"
        inner = read_model(member, file.members[name], shared)
        model = _load_model(inner, resources, allow_other_resources, f"{spec}:{kind}")
        models[kind] = replace(model, origin=origin_of(file.path, kind, inner))
    return RoutedModel(router, models, spec, style)


def _load_model(
    file: ModelFile, resources: Resources, allow_other_resources: bool, spec: str
) -> BreakModel:
    """The model of a model file read and checked, every member decoded and checked."""
    from qseg.resources.vectors import WordVectors
    from qseg.segmenters.learned.break_model import BreakModel
    from qseg.segmenters.learned.contextual import BreakProbe, gap_width, require_encoder
    from qseg.segmenters.learned.domain import DomainModel
    from qseg.segmenters.learned.gap_models import LinearGapModel
    from qseg.segmenters.learned.lexicon import LEXICON_FEATURES, Lexicon, check_phrase_rates
    from qseg.segmenters.learned.trees import TreeEnsemble

    allow = allow_other_resources
    try:
        check_settings(file.params)  # the values' ranges, beyond the types read_model checked
    except QsegError as exc:
        raise file.fail(f"meta.json: {exc}") from None
    inputs = file.inputs
    fitted = file.meta["fitted"]
    names, candidates = _feature_names(inputs, fitted["joint"])
    if [file.meta["features"], file.meta["candidate_features"]] != [names, candidates]:
        raise file.fail(
            "its features are not the ones this qseg computes (a model of another qseg "
            "version?); retrain it with `qseg train`"
        )
    source = None
    if "ngrams" in file.resources:
        source = feature_source(file, resources, allow, lambda kind: _carried(file, kind))
    width = len(names)
    vectors = None
    if inputs.word_vectors:
        vectors = _decode(file, "vectors.npz", WordVectors.from_bytes)
        check_integrity(file, "vectors", vectors.fingerprint)
        width += 2 * vectors.dimensions
    probe = None
    if inputs.contextual:
        encoder = require_encoder()
        check_encoder(file, encoder.fingerprint, allow)
        probe = _decode(
            file, "probe.npz", lambda raw: BreakProbe.from_bytes(raw, gap_width(encoder))
        )
        width += 1
    domain = None
    if inputs.domain:
        domain = _decode(file, "domain.npz", DomainModel.from_bytes)
        width += 1
    lexicon = None
    if inputs.lexicon:
        lexicon = _decode(file, "lexicon.json", lambda raw: Lexicon.from_json(model_json(raw)))
        width += len(LEXICON_FEATURES)
    if fitted["n_features_in"] != width:
        raise file.fail(
            f"the inputs give {width} features, the model was fitted on {fitted['n_features_in']}"
        )
    linear = file.params["classifier"] in LINEAR
    decode_gap: Callable[[bytes], LinearGapModel | TreeEnsemble] = (
        LinearGapModel.from_bytes if linear else TreeEnsemble.from_bytes
    )
    gap = _decode(file, "gap_model.npz", decode_gap)
    # not linear: a tree ensemble
    if gap.n_features != width or (not linear and not cast(TreeEnsemble, gap).logistic):
        raise file.fail(f"the gap model takes {gap.n_features} features, not {width}")
    joint = ranker = None
    phrases: dict[str, float] = {}
    if fitted["joint"]:
        joint = _scorer(file, "joint.npz", len(candidates))
        phrases = _decode(file, "phrases.json", lambda raw: check_phrase_rates(model_json(raw)))
        if file.decoding.rank_votes:
            ranker = _scorer(file, "ranker.npz", len(candidates))
    return BreakModel(
        spec_text=spec,
        params=file.params,
        source=source,
        vectors=vectors,
        probe=probe,
        domain=domain,
        lexicon=lexicon,
        gap_model=gap,
        joint=joint,
        ranker=ranker,
        phrases=phrases,
        n_features=width,
        tagged=fitted["tagged"],
        resources=file.resources,
    )


def _load_adapted(
    file: AdaptedFile, resources: Resources, allow_other_resources: bool
) -> BreakModel:
    """The model of an adapted model file: its base, loaded and checked by fingerprint, with
    what the file adds (:meth:`~qseg.segmenters.learned.break_model.BreakModel.adapted_by`)."""
    from qseg.segmenters.learned.adaptation import Adaptation, AdaptedParts
    from qseg.segmenters.learned.lexicon import Lexicon
    from qseg.segmenters.learned.trees import TreeEnsemble

    base = _base_of(file, resources, allow_other_resources)
    assert base.joint is not None  # (only such models are adapted)
    joint_width = base.joint.n_features

    def parts_of(meta: dict[str, Any], prefix: str) -> AdaptedParts:
        def trees(member: str, width: int, logistic: bool) -> TreeEnsemble | None:
            if prefix + member not in file.members:
                return None
            found = _decode(file, prefix + member, TreeEnsemble.from_bytes)
            if found.n_features != width or found.logistic != logistic:
                raise file.fail(
                    f"the trees take {found.n_features} features, not {width}", prefix + member
                )
            return found

        gap = trees("gap_trees.npz", base.n_features, True)
        assert gap is not None  # (a member every adapted file has)
        lexicon = None
        if prefix + "lexicon.json" in file.members:
            lexicon = _decode(
                file, prefix + "lexicon.json", lambda raw: Lexicon.from_json(model_json(raw))
            )
        counts = _decode(
            file, prefix + "phrases.json", lambda raw: phrase_counts_of(model_json(raw))
        )
        return AdaptedParts(
            origin=file.base,
            adaptation=Adaptation(**meta["adaptation"]),
            gap_trees=gap,
            joint_trees=trees("joint_trees.npz", joint_width, False),
            ranker_trees=trees("ranker_trees.npz", joint_width, False),
            lexicon=lexicon,
            phrase_counts=counts,
            queries=file.meta["queries"],
            boosting=meta["boosting"],
            selection=file.meta["selection"],
        )

    parts = parts_of(file.meta, "")
    if "partner" in file.meta:
        parts = replace(parts, partner=parts_of(file.meta["partner"], "partner/"))
    return base.adapted_by(parts)


def phrase_counts_of(data: Any) -> dict[str, tuple[float, int]]:
    """Phrase counts read back from JSON (``ValueError`` unless they map n-grams to
    ``[made a segment, occurrences]`` with 0 <= made <= occurrences)."""
    from qseg.segmenters.learned.lexicon import check_keys

    if not isinstance(data, dict):
        raise ValueError("phrase counts map n-grams to [made a segment, occurrences]")
    counts = {}
    for key, value in data.items():
        if (
            type(value) is not list
            or len(value) != 2
            or type(value[0]) not in (int, float)
            or type(value[1]) is not int
            or not 0 <= value[0] <= value[1] + 1e-6
        ):
            raise ValueError(f"phrase {key!r} is not [made a segment, occurrences]")
        counts[key] = (float(value[0]), value[1])
    check_keys(counts, "phrase")
    return counts


def _base_of(file: AdaptedFile, resources: Resources, allow_other_resources: bool) -> BreakModel:
    """The base model an adapted file names, refused in one line if it is missing or is not
    the model it was adapted from (another fingerprint)."""
    from qseg.models.catalog import shipped_model
    from qseg.segmenters.learned.routing import RoutedModel

    ref = file.base
    if "model" in ref:
        shown = f"the shipped model {ref['model']}"
        place = shipped_model(ref["model"])
        if place is None or not place.is_file():
            raise file.fail(
                f"its base, {shown}, is not shipped with this qseg (an adapted model runs "
                "on the release of qseg that has its base; adapt it again from a shipped model)"
            )
    else:
        shown = ref["path"]
        place = Path(ref["path"])
        if not place.is_file():  # moved together with the adapted file?
            place = Path(file.path).parent / place.name
        if not place.is_file():
            raise file.fail(
                f"its base model {ref['path']} is missing (an adapted model names its base's "
                "file: put it back, or adapt again)"
            )
    loaded = load(place, resources, allow_other_resources=allow_other_resources, style=ref["kind"])
    if isinstance(loaded, RoutedModel):
        if ref["kind"] not in loaded.models:
            raise file.fail(f"its base, {shown}, has no {ref['kind']} model")
        loaded = loaded.models[ref["kind"]]
    assert loaded.origin is not None  # (set by load)
    if loaded.origin["fingerprint"] != ref["fingerprint"]:
        raise file.fail(
            f"its base, {shown}, has changed since it was adapted (fingerprint "
            f"{ref['fingerprint']} then, {loaded.origin['fingerprint']} now): adapt it again"
        )
    if loaded.joint is None or loaded.n_features <= 0:
        raise file.fail(f"its base, {shown}, is not a model that can be adapted")
    return loaded


def adapted_bytes(parts: AdaptedParts) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The metadata and members of an adapted model's file (:class:`.format.AdaptedFile`)."""
    meta, members = _adding(parts)
    meta = {
        "format": ADAPTED_FORMAT,
        "version": ADAPTED_VERSION,
        "base": dict(parts.origin),
        **meta,
        "queries": parts.queries,
        "selection": dict(parts.selection),
        "qseg": qseg_version(),
    }
    if parts.partner is not None:
        theirs, their_members = _adding(parts.partner)
        meta["partner"] = theirs
        members |= {f"partner/{name}": raw for name, raw in their_members.items()}
    return meta, members


def _adding(parts: AdaptedParts) -> tuple[dict[str, Any], dict[str, bytes]]:
    """What one adapted model adds, as metadata (its adaptation, boosting and parts) and
    members."""
    members = {
        "gap_trees.npz": parts.gap_trees.to_bytes(),
        "phrases.json": json.dumps(
            {k: [v[0], v[1]] for k, v in parts.phrase_counts.items()}
        ).encode(),
    }
    if parts.joint_trees is not None:
        members["joint_trees.npz"] = parts.joint_trees.to_bytes()
    if parts.ranker_trees is not None:
        members["ranker_trees.npz"] = parts.ranker_trees.to_bytes()
    if parts.lexicon is not None:
        members["lexicon.json"] = json.dumps(parts.lexicon.to_json()).encode()
    how = parts.adaptation
    meta = {
        "adaptation": {"start": how.start, "weight": how.weight, "base_count": how.base_count},
        "boosting": dict(parts.boosting),
        "parts": [name for name in ADAPTED_PARTS if name in members],
    }
    return meta, members


@cache
def carried_titles_of(path: Path) -> TitleSet | None:
    """The title set the model file ``path`` carries (a routed file: the one its models
    share), built once into the cache; ``None`` if it carries none."""
    file = read_file(path)
    if isinstance(file, RoutedFile):
        shared = {name: file.members[name] for name in file.shared}
        name = f"{file.kinds[0]}.qseg"
        file = read_model(f"{file.path} ({name})", file.members[name], shared)
    if isinstance(file, AdaptedFile):
        return None  # (its base carries them)
    entry = file.resources.get("titles")
    if entry is None or not entry.get("carried"):
        return None
    titles: TitleSet = _carried(file, "titles")
    return titles


def _carried(file: ModelFile, kind: str) -> Any:
    """The title set or name statistics a model file carries, as a store built once into the
    cache (its member verified by :func:`.read_model` whatever the cache holds, decoded only
    where it lacks it)."""
    from qseg.resources.default import carried_names, carried_titles

    entry = file.resources[kind]
    assert entry is not None
    member, form = carried_member(kind, entry), entry.get("form", "list")
    found: TitleSet | NgramCounts
    try:
        if kind == "titles":
            found = carried_titles(file.read_member(member), entry["fingerprint"], form)
        else:
            found = carried_names(file.read_member(member), entry["fingerprint"])
    except (ValueError, UnicodeDecodeError) as exc:
        raise file.fail(str(exc) or type(exc).__name__, member) from None
    check_integrity(file, kind, found.fingerprint)
    return found


def _decode(
    file: ModelFile | RoutedFile | AdaptedFile, member: str, decode: Callable[[bytes], T]
) -> T:
    """A member decoded, any damage a :class:`ModelError` naming it: also numbers too large
    for a float (``OverflowError``) and values nested too deeply to show in a message."""
    try:
        return decode(file.members[member])
    except RecursionError:
        raise file.fail("nested too deeply", member) from None
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        raise file.fail(str(exc) or type(exc).__name__, member) from None


def _scorer(file: ModelFile, member: str, width: int) -> TreeEnsemble:
    """A joint scorer: trees on the candidate features, giving margins."""
    from qseg.segmenters.learned.trees import TreeEnsemble

    trees = _decode(file, member, TreeEnsemble.from_bytes)
    if trees.n_features != width or trees.logistic:
        raise file.fail(f"the scorer takes {trees.n_features} features, not {width}", member)
    return trees
