"""The model file: one zip archive holding a fitted break classifier, checked piece by piece.

Members (written with a fixed date, so the same model gives the same bytes; deflated where that
saves a quarter of their bytes, else stored, :data:`DEFLATE_GAIN`):

- ``meta.json``: format name and version, the method spec, every constructor parameter, the
  fitted scalars (feature count, whether trained with tags), the resources it was trained with
  (content fingerprints, :mod:`.provenance`), the feature names, the qseg version, and the
  size and SHA-256 of every other member (``members``, :data:`MANIFEST`);
- ``gap_model.npz``: the per-gap classifier (boosted trees as arrays, :mod:`..segmenters.trees`,
  or the logistic regression's arrays);
- ``lexicon.json``, ``probe.npz``, ``vectors.npz``: the learned lexicon, the contextual probe
  and the word vectors, where the inputs use them;
- ``joint.npz``, ``phrases.json``, ``ranker.npz``: the joint scorer (trees as arrays), its
  phrase rates and the vote ranker, where decoding is joint.

Reading checks everything before anything is used: the archive's structure and declared sizes
before anything is unpacked (:mod:`qseg.archives`), the format version, every parameter's name
and type, which members must be there (before they are read), every member's size and SHA-256
against the manifest (a carried one too, whatever a cache holds of it), every array's shape and
dtype, and that the gap model takes exactly the features the inputs give. Every problem is one
:class:`ModelError` naming the file (and the member). A file written before the manifest is
still read, every member in full with its zip CRC-32 checked (which catches damage, not a member
rewritten with its CRC recomputed); saving it again (:func:`.loading.save`) adds one.

Why this module is long (about 750 lines): it is the file format, written and checked; a
member's writing and its check on reading are kept side by side, so that a change to one is
made to the other (the three file kinds share every check).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import reprlib
import stat
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from qseg.archives import ArchiveError, checked_members, open_zip, read_member
from qseg.errors import DataError, PathError, QsegError
from qseg.fileio import StrPath, atomic_write_bytes
from qseg.segmenters.learned.trainable import (
    GROUPS,
    SCALARS,
    STARTS,
    Decoding,
    Inputs,
    check_group,
    needed_resources,
    spec_of,
)

FORMAT = "qseg-break-classifier"
FORMAT_VERSION = 9
"""Version 9: trees as arrays (version 8: grouped parameters, the resources' fingerprints). The
manifest came within version 9: a qseg that predates it reads a file that has one."""
MANIFEST = "members"
"""The key of ``meta.json`` that maps every other member to its size and SHA-256 (``bytes``,
``sha256``): a member changed inside a valid zip (its CRC recomputed) is refused."""
_SHA256 = re.compile(r"[0-9a-f]{64}")

ROUTED_FORMAT = "qseg-routed-models"
ROUTED_VERSION = 1
"""A routed model file (:class:`RoutedFile`): a model per kind of query and their router."""

ADAPTED_FORMAT = "qseg-adapted-model"
ADAPTED_VERSION = 1
"""A model adapted from a base model (:class:`AdaptedFile`): what adapting added, and the base
it extends, named by fingerprint."""
ADAPTED_PARTS = ("joint_trees.npz", "ranker_trees.npz", "lexicon.json")
"""The members an adapted model file may hold besides its gap trees and phrase counts."""
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

_DATE = (1980, 1, 1, 0, 0, 0)
DEFLATE_GAIN = 0.25
"""A member is written deflated only where that saves at least this share of its bytes:
unpacking is what opening a model waits on (inflating word vectors costs every open more than
the few bytes it saves are worth), and the models inside a routed file and the packed stores
it carries hardly shrink."""
CARRIED = {
    "titles": {"list": "titles.txt", "packed": "titles.npz"},
    "names": {"packed": "names.npz"},
}
"""Resources a model file may carry itself, and the member that holds each in each form (the
resource entry's ``form``, ``list`` where it has none): an exact title set as one key a line,
a compact one packed (:mod:`qseg.resources.packed`); name statistics, a compact count store,
packed."""
CARRIED_MEMBERS = {member for forms in CARRIED.values() for member in forms.values()}
SHAREABLE = CARRIED_MEMBERS | {"vectors.npz"}
"""Members the models of a routed model file hold once between them where they are the same."""
BESIDE = "beside"
"""The key of a routed file's ``meta.json`` listing the shared members kept beside it."""


def carried_member(kind: str, entry: dict[str, Any]) -> str:
    """The member that holds a carried resource, by its form."""
    return CARRIED[kind][entry.get("form", "list")]


class ModelError(DataError):
    """A model file that cannot be read or holds what no model holds."""


class ResourceMismatch(QsegError):
    """A model given resources other than those it was trained with: a usage error (give its
    own, or pass ``allow_other_resources=True``; ``--allow-other-resources`` on the command
    line)."""


RUNTIME = ("n_jobs",)
"""Parameters that say how to run, not what the model is: not saved (same model, same bytes)."""


@dataclass(frozen=True)
class ModelFile:
    """A model file read and checked as far as it can be without building anything: its
    metadata, its constructor parameters, and the raw members, every one verified."""

    path: str
    meta: dict[str, Any]
    params: dict[str, Any]
    members: dict[str, bytes]

    @property
    def inputs(self) -> Inputs:
        return self.params["inputs"] or Inputs()

    @property
    def decoding(self) -> Decoding:
        return self.params["decoding"] or Decoding()

    @property
    def resources(self) -> dict[str, dict[str, Any] | None]:
        return self.meta["resources"]

    def read_member(self, name: str) -> bytes:
        """A member's bytes (a carried resource's too), read and verified with the file."""
        return self.members[name]

    def fail(self, message: str, member: str | None = None) -> ModelError:
        where = f"{self.path} ({member})" if member else self.path
        return ModelError(f"{where}: {message}")

    def mismatch(self, message: str) -> ResourceMismatch:
        return ResourceMismatch(f"{self.path}: {message}")


ROUTER = "router.npz"


@dataclass(frozen=True)
class RoutedFile:
    """A routed model file read and checked: ``meta.json`` names the kinds of query (the
    router's labels), the style it segments in unless told otherwise, the members the models
    share and the kinds that also have a model with the contextual probe (opt-in: it needs
    torch); ``members``: the router (:data:`ROUTER`), each kind's model file (``KIND.qseg``,
    :func:`contextual_member` too, without the shared members) and the shared members, every
    one verified. Shared members it lists as :attr:`beside` are files of their own next to it
    (:func:`beside_path`), verified by its manifest like the rest: a model carrying large stores
    stays in files of at most 10 MB."""

    path: str
    meta: dict[str, Any]
    members: dict[str, bytes]

    @property
    def kinds(self) -> list[str]:
        return self.meta["kinds"]

    @property
    def style(self) -> str:
        return self.meta["style"]

    @property
    def shared(self) -> list[str]:
        return self.meta["shared"]

    @property
    def contextual(self) -> list[str]:
        """The kinds whose contextual model the file also holds (all of them, or none)."""
        return self.meta.get("contextual", [])

    @property
    def beside(self) -> list[str]:
        """The shared members kept in files beside this one (:func:`beside_path`)."""
        return self.meta.get(BESIDE, [])

    def fail(self, message: str, member: str | None = None) -> ModelError:
        where = f"{self.path} ({member})" if member else self.path
        return ModelError(f"{where}: {message}")

    @classmethod
    def checked(cls, path: str, meta: dict[str, Any]) -> RoutedFile:
        """The routed file of this metadata (without its members yet), every value checked."""
        routed = cls(path, meta, {})
        kinds, style, shared = meta.get("kinds"), meta.get("style"), meta.get("shared")
        if (
            not isinstance(kinds, list)
            or len(kinds) != 2
            or not all(isinstance(k, str) and re.fullmatch(r"[a-z]+", k) for k in kinds)
            or kinds[0] == kinds[1]
        ):
            raise routed.fail("meta.json: kinds must be two names of lower-case letters")
        if style not in ("auto", *kinds):
            raise routed.fail(f"meta.json: style must be auto or one of the kinds, not {style!r}")
        if not isinstance(shared, list) or not set(shared) <= SHAREABLE:
            raise routed.fail(f"meta.json: shared must list members of {sorted(SHAREABLE)}")
        if meta.get("contextual", []) not in ([], kinds):
            raise routed.fail("meta.json: contextual must list no kind or every kind")
        beside = meta.get(BESIDE, [])
        if not isinstance(beside, list) or not set(beside) <= set(shared):
            raise routed.fail(f"meta.json: {BESIDE} must list shared members")
        if MANIFEST not in meta:  # a routed file is never older than manifests
            raise routed.fail(f"meta.json lacks {MANIFEST!r}")
        return routed


@dataclass(frozen=True)
class AdaptedFile:
    """An adapted model file read and checked: ``meta.json`` names the base (``base``: a
    shipped model's versioned ``model`` name or a file's ``path``, the ``kind`` of query whose
    model in a routed file it is, or ``null``, and the base's ``fingerprint``), how the
    annotations weigh (``adaptation``), the size of the trees added (``boosting``), how many
    annotated queries it learnt from (``queries``) and which of :data:`ADAPTED_PARTS` it holds
    (``parts``); ``members``: the trees added to the gap model (``gap_trees.npz``), the
    domain's phrase counts (``phrases.json``) and those parts, every one verified. A model
    decoded with a partner (the other start) has ``partner`` give its ``adaptation``,
    ``boosting`` and ``parts``, its members named under ``partner/``."""

    path: str
    meta: dict[str, Any]
    members: dict[str, bytes]

    @property
    def base(self) -> dict[str, Any]:
        return self.meta["base"]

    @property
    def parts(self) -> list[str]:
        return self.meta["parts"]

    @property
    def expected(self) -> set[str]:
        """The members it holds: its own, and its partner's under ``partner/``."""
        own = {"gap_trees.npz", "phrases.json", *self.parts}
        if "partner" in self.meta:
            theirs = {"gap_trees.npz", "phrases.json", *self.meta["partner"]["parts"]}
            own |= {f"partner/{name}" for name in theirs}
        return own

    def fail(self, message: str, member: str | None = None) -> ModelError:
        where = f"{self.path} ({member})" if member else self.path
        return ModelError(f"{where}: {message}")

    @classmethod
    def checked(cls, path: str, meta: dict[str, Any]) -> AdaptedFile:
        """The adapted file of this metadata (without its members yet), every value checked."""
        adapted = cls(path, meta, {})
        base = meta.get("base")
        if (
            not isinstance(base, dict)
            or not base.keys() <= {"model", "path", "kind", "fingerprint"}
            or len(base.keys() & {"model", "path"}) != 1
            or not isinstance(base.get("fingerprint"), str)
            or not _FINGERPRINT.fullmatch(base["fingerprint"])
            or not (base.get("kind") is None or re.fullmatch(r"[a-z]+", str(base["kind"])))
            or ("model" in base and not _MODEL_NAME.fullmatch(str(base["model"])))
            or ("path" in base and not (isinstance(base["path"], str) and base["path"]))
        ):
            raise adapted.fail(
                "meta.json: base must name a shipped model or a file, its kind and its fingerprint"
            )
        adapted._check_adding(meta, "")
        if "partner" in meta:
            partner = meta["partner"]
            if not isinstance(partner, dict) or partner.keys() != {
                "adaptation",
                "boosting",
                "parts",
            }:
                raise adapted.fail("meta.json: partner must give adaptation, boosting and parts")
            adapted._check_adding(partner, "partner: ")
            starts = (meta["adaptation"]["start"], partner["adaptation"]["start"])
            if starts != ("continue", "fresh"):
                raise adapted.fail(
                    "meta.json: a model with a partner continues its base and its partner "
                    f"starts fresh, not {starts[0]} and {starts[1]}"
                )
        queries = meta.get("queries")
        if type(queries) is not int or queries < 0:
            raise adapted.fail("meta.json: queries must be a count")
        if not isinstance(meta.get("selection"), dict):
            raise adapted.fail("meta.json: selection must be an object")
        if MANIFEST not in meta:
            raise adapted.fail(f"meta.json lacks {MANIFEST!r}")
        return adapted

    def _check_adding(self, meta: dict[str, Any], where: str) -> None:
        """What one adapted model adds (its ``adaptation``, ``boosting`` and ``parts``) is
        well formed (``where``: whose, in an error)."""
        how = meta.get("adaptation")
        if (
            not isinstance(how, dict)
            or how.keys() != {"start", "weight", "base_count"}
            or how["start"] not in STARTS
            or type(how["weight"]) not in (int, float)
            or not 0 < how["weight"] <= 1e6
            or type(how["base_count"]) not in (int, float)
            or not 0 <= how["base_count"] <= 1e6
        ):
            raise self.fail(f"meta.json: {where}adaptation must give start, weight and base_count")
        boosting = meta.get("boosting")
        if (
            not isinstance(boosting, dict)
            or boosting.keys() != {"n_estimators", "max_depth", "learning_rate"}
            or not all(type(v) in (int, float) and v >= 0 for v in boosting.values())
        ):
            raise self.fail(f"meta.json: {where}boosting must give the size of the trees added")
        parts = meta.get("parts")
        if not isinstance(parts, list) or not set(parts) <= set(ADAPTED_PARTS):
            raise self.fail(f"meta.json: {where}parts must list members of {list(ADAPTED_PARTS)}")


def beside_path(path: StrPath, member: str) -> Path:
    """Where a routed model file keeps a member beside itself: ``NAME.qseg``'s ``titles.npz``
    in ``NAME.titles.npz``."""
    path = Path(path)
    return path.with_name(f"{path.stem}.{member}")


def routed_members(routed: RoutedFile) -> set[str]:
    """The members a routed model file holds."""
    return {
        ROUTER,
        *(f"{kind}.qseg" for kind in routed.kinds),
        *(contextual_member(kind) for kind in routed.contextual),
        *routed.shared,
    }


def contextual_member(kind: str) -> str:
    """The member of a routed file that holds ``kind``'s model with the contextual probe."""
    return f"{kind}.contextual.qseg"


def model_bytes(meta: dict[str, Any], members: dict[str, bytes], leave_out: set[str]) -> bytes:
    """One zip file of ``meta.json``, with the manifest of all ``members``, and the members
    but those in ``leave_out`` (which a routed model file holds once for its models)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        text = json.dumps(meta | {MANIFEST: manifest(members)}, indent=1, sort_keys=True)
        kept = {n: d for n, d in members.items() if n not in leave_out}
        for name, data in {"meta.json": text.encode(), **kept}.items():
            zf.writestr(zipfile.ZipInfo(name, _DATE), data, _compression(data))
    return buffer.getvalue()


def _compression(data: bytes) -> int:
    """Deflated if that saves :data:`DEFLATE_GAIN` of the bytes (as ``zipfile`` deflates:
    the default level, a raw stream), else stored."""
    packer = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)
    size = len(packer.compress(data)) + len(packer.flush())
    return zipfile.ZIP_DEFLATED if size <= (1 - DEFLATE_GAIN) * len(data) else zipfile.ZIP_STORED


def write_model(path: StrPath, meta: dict[str, Any], members: dict[str, bytes]) -> None:
    """Write ``meta.json``, with the members' manifest, and the members into one zip file,
    replaced atomically."""
    atomic_write_bytes(path, model_bytes(meta, members, set()))


def manifest(members: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """Each member's size and SHA-256, for :data:`MANIFEST`: what reading verifies every
    member by, a carried one too, so that no cache decides whether a damaged file loads."""
    return {
        name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in members.items()
    }


def model_meta(params: dict[str, Any], fitted: dict[str, Any], resources: Any) -> dict[str, Any]:
    """The metadata of a fitted classifier with these constructor parameters."""
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "method": spec_of(params),
        "params": {
            key: (
                {f.name: getattr(value, f.name) for f in fields(value)}
                if key in GROUPS and value is not None
                else value
            )
            for key, value in params.items()
            if (key in GROUPS or key in SCALARS) and key not in RUNTIME
        },
        "fitted": fitted,
        "resources": resources,
        "qseg": qseg_version(),
    }


def qseg_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("qseg")
    except PackageNotFoundError:
        return "unknown"


@contextmanager
def _archive(
    path: StrPath, data: bytes | None = None
) -> Iterator[tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]]:
    """The model file's archive and its members by name, checked before anything is
    unpacked: a path that cannot be read is a :class:`PathError`, damage a :class:`ModelError`.
    (Opened without blocking, so that a FIFO is refused instead of waited on.) ``data``: the
    file's bytes, already read (a model inside a routed model file), ``path`` its name."""
    if data is not None:
        try:
            zf = open_zip(io.BytesIO(data))
            infos = checked_members(zf, len(data))
        except ArchiveError as exc:
            raise ModelError(f"{path}: not a readable model file ({exc})") from None
        with zf:
            yield zf, infos
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise PathError(path, f"cannot read the model file ({exc.strerror or exc})") from None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):
        os.close(fd)
        if stat.S_ISDIR(status.st_mode):
            raise PathError(path, "is a directory, not a model file")
        raise PathError(path, "is not a regular file (a device, FIFO or socket)")
    with os.fdopen(fd, "rb") as file:
        try:
            zf = open_zip(file)
            infos = checked_members(zf, status.st_size)
        except ArchiveError as exc:
            raise ModelError(f"{path}: not a readable model file ({exc})") from None
        with zf:
            yield zf, infos


def _read_member(zf: zipfile.ZipFile, path: StrPath, info: zipfile.ZipInfo) -> bytes:
    try:
        return read_member(zf, info)
    except ArchiveError as exc:
        raise ModelError(f"{path} ({info.filename}): {exc}") from None


JSON_DEPTH = 16
"""The deepest nesting of ``meta.json`` read (it has 3 levels)."""
LARGEST_INT = 2**63
"""Integers in ``meta.json`` are below this in magnitude (larger ones overflow where used)."""


def model_json(raw: bytes) -> Any:
    """The JSON value of a model member (UTF-8); ``ValueError`` if it is not one, also where
    it nests too deeply for the parser. (What reads it checks its numbers are finite.)"""
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _check_meta_values(meta: Any) -> None:
    """``ValueError`` unless ``meta.json`` nests at most :data:`JSON_DEPTH` deep and holds
    finite floats (``1e999`` parses as infinity) and integers of at most 64 bits."""
    stack = [(meta, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"a number out of range ({value})")
        if isinstance(value, int) and not -LARGEST_INT <= value < LARGEST_INT:
            raise ValueError(f"an integer out of range ({reprlib.repr(value)})")
        if isinstance(value, (dict, list)):
            if depth > JSON_DEPTH:
                raise ValueError(f"nested more than {JSON_DEPTH} deep")
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)


def read_model(
    path: StrPath, data: bytes | None = None, shared: dict[str, bytes] | None = None
) -> ModelFile:
    """Read a model file and check its metadata, its parameters and the names and sizes of its
    members, then read every member and verify its SHA-256 (they are checked again when
    decoded, :mod:`.loading`). ``data`` and ``shared``: a model inside a routed model file,
    its bytes and the members it shares with the other models there (verified by its own
    manifest like the rest)."""
    read = read_file(path, data, shared)
    if not isinstance(read, ModelFile):
        raise ModelError(f"{path}: a routed model file, where a single model was expected")
    return read


def read_file(
    path: StrPath, data: bytes | None = None, shared: dict[str, bytes] | None = None
) -> ModelFile | RoutedFile | AdaptedFile:
    """A model file (:func:`read_model`), a routed model file (:class:`RoutedFile`) or an
    adapted one (:class:`AdaptedFile`), by the format its ``meta.json`` names, every member
    verified."""
    shared = shared or {}
    with _archive(path, data) as (zf, infos):
        if "meta.json" not in infos:
            raise ModelError(f"{path}: not a readable model file (no meta.json)")
        raw = _read_member(zf, path, infos["meta.json"])
        try:
            meta = model_json(raw)
            _check_meta_values(meta)
        except ValueError as exc:
            raise ModelError(f"{path}: not a readable model file (meta.json: {exc})") from None
        formats = {
            FORMAT: FORMAT_VERSION,
            ROUTED_FORMAT: ROUTED_VERSION,
            ADAPTED_FORMAT: ADAPTED_VERSION,
        }
        if not isinstance(meta, dict) or meta.get("format") not in formats:
            raise ModelError(f"{path}: not a qseg model file")
        if meta.get("version") != formats[meta["format"]]:
            raise ModelError(
                f"{path}: model format version {reprlib.repr(meta.get('version'))}; this qseg "
                f"reads version {formats[meta['format']]} (retrain with `qseg train`)"
            )
        names = sorted(infos.keys() - {"meta.json"})
        checked: ModelFile | RoutedFile | AdaptedFile
        beside: dict[str, Path] = {}
        if meta["format"] == ADAPTED_FORMAT:
            checked = AdaptedFile.checked(str(path), meta)
            _check_present(checked, checked.expected, set(names))
        elif meta["format"] == ROUTED_FORMAT:
            checked = RoutedFile.checked(str(path), meta)
            beside = _beside_files(checked, data is not None, set(names))
            _check_present(checked, routed_members(checked), set(names) | beside.keys())
        else:
            checked = _checked(str(path), meta)
            if shared.keys() & set(names):
                raise checked.fail(f"unexpected member {sorted(shared.keys() & set(names))[0]!r}")
            _check_members(checked, set(names) | shared.keys())
        sizes = {n: infos[n].file_size for n in names} | {n: len(b) for n, b in shared.items()}
        sizes |= {name: _beside_size(checked, name, place) for name, place in beside.items()}
        digests = _digests(checked, sizes)
        members = {n: _verified(checked, zf, infos[n], digests) for n in names}
        outside = {name: _read_beside(place) for name, place in beside.items()}
        for name, content in (shared | outside).items():
            _check_digest(checked, name, content, digests)
            members[name] = content
    return replace(checked, members=members)


def _beside_files(routed: RoutedFile, in_memory: bool, inside: set[str]) -> dict[str, Path]:
    """The files of the members a routed file keeps beside itself, by member."""
    if routed.beside and in_memory:
        raise routed.fail("keeps members in files beside it: read it from its path")
    if inside & set(routed.beside):
        raise routed.fail(f"unexpected member {sorted(inside & set(routed.beside))[0]!r}")
    return {name: beside_path(routed.path, name) for name in routed.beside}


def _beside_size(routed: ModelFile | RoutedFile | AdaptedFile, name: str, place: Path) -> int:
    """The size of the file of a member kept beside a routed file (checked against the
    manifest before it is read)."""
    try:
        status = place.stat()
    except FileNotFoundError:
        raise routed.fail(
            f"member {name!r} is missing (it is kept beside the file, in {place})"
        ) from None
    except OSError as exc:
        raise PathError(place, f"cannot read the model's member ({exc.strerror or exc})") from None
    if not stat.S_ISREG(status.st_mode):
        raise PathError(place, "is not a regular file")
    return status.st_size


def _read_beside(place: Path) -> bytes:
    try:
        return place.read_bytes()
    except OSError as exc:
        raise PathError(place, f"cannot read the model's member ({exc.strerror or exc})") from None


def _digests(
    model: ModelFile | RoutedFile | AdaptedFile, sizes: dict[str, int]
) -> dict[str, str] | None:
    """The SHA-256 the manifest records of each member, once it lists exactly the members
    present at the sizes their headers declare (checked before any is unpacked); ``None`` for
    a file written before manifests."""
    if MANIFEST not in model.meta:
        return None
    recorded = model.meta[MANIFEST]
    if not isinstance(recorded, dict) or not all(map(_manifest_entry, recorded.values())):
        raise model.fail(f"meta.json: {MANIFEST} must map each member to its bytes and sha256")
    if recorded.keys() != sizes.keys():
        differ = sorted(recorded.keys() ^ sizes.keys())[0]
        raise model.fail(f"meta.json: {MANIFEST} does not list the members present ({differ!r})")
    for name, size in sizes.items():
        if recorded[name]["bytes"] != size:
            expected = recorded[name]["bytes"]
            raise model.fail(
                f"declares {size:,} bytes, meta.json records {expected:,} (the file is damaged)",
                name,
            )
    return {name: entry["sha256"] for name, entry in recorded.items()}


def _manifest_entry(entry: Any) -> bool:
    """Whether a manifest entry is ``{"bytes": size, "sha256": 64 hex digits}``."""
    return (
        isinstance(entry, dict)
        and entry.keys() == {"bytes", "sha256"}
        and type(entry["bytes"]) is int
        and entry["bytes"] >= 0
        and isinstance(entry["sha256"], str)
        and _SHA256.fullmatch(entry["sha256"]) is not None
    )


def _verified(
    model: ModelFile | RoutedFile | AdaptedFile,
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    digests: dict[str, str] | None,
) -> bytes:
    """A member read in full (its zip CRC-32 checked), its SHA-256 the one the manifest
    records."""
    data = _read_member(zf, model.path, info)
    _check_digest(model, info.filename, data, digests)
    return data


def _check_digest(
    model: ModelFile | RoutedFile | AdaptedFile,
    name: str,
    data: bytes,
    digests: dict[str, str] | None,
) -> None:
    if digests is not None and hashlib.sha256(data).hexdigest() != digests[name]:
        raise model.fail("its SHA-256 is not the one meta.json records (the file is damaged)", name)


def _checked(path: str, meta: dict[str, Any]) -> ModelFile:
    """The model file of this metadata (without its members yet), every value checked."""
    for key in ("method", "params", "fitted", "resources", "features", "candidate_features"):
        if key not in meta:
            raise ModelError(f"{path}: meta.json lacks {key!r}")
    model = ModelFile(path, meta, _params(path, meta["params"]), {})
    if meta["method"] is not None and not isinstance(meta["method"], str):
        raise model.fail("meta.json: method must be a spec or null")
    for key in ("features", "candidate_features"):
        if not isinstance(meta[key], list) or not all(isinstance(n, str) for n in meta[key]):
            raise model.fail(f"meta.json: {key} must be a list of names")
    _check_fitted(model)
    _check_resources(model)
    return model


def _params(path: str, raw: Any) -> dict[str, Any]:
    """The constructor parameters of meta.json, each name known and each value typed."""

    def fail(message: str) -> ModelError:
        return ModelError(f"{path}: {message}")

    if not isinstance(raw, dict):
        raise fail("meta.json: params must be an object")
    unknown = raw.keys() - GROUPS.keys() - SCALARS.keys()
    if unknown:
        raise fail(f"meta.json: unknown parameter {sorted(unknown)[0]!r}")
    params: dict[str, Any] = {}
    for name, (kind, default) in SCALARS.items():
        value = raw.get(name, default)
        if type(value) is not kind:
            shown = reprlib.repr(value)
            raise fail(f"meta.json: parameter {name} must be {kind.__name__}, not {shown}")
        params[name] = value
    for name, group in GROUPS.items():
        value = raw.get(name)
        if value is not None:
            if not isinstance(value, dict):
                raise fail(f"meta.json: parameter {name} must be an object or null")
            known = {f.name for f in fields(group)}
            if value.keys() - known:
                field = sorted(value.keys() - known)[0]
                raise fail(f"meta.json: unknown parameter {name}.{field}")
            value = group(**value)
            try:
                check_group(name, value)
            except TypeError as exc:
                raise fail(f"meta.json: {exc}") from None
        params[name] = value
    return params


def _check_fitted(model: ModelFile) -> None:
    fitted = model.meta["fitted"]
    if not isinstance(fitted, dict):
        raise model.fail("meta.json: fitted must be an object")
    expected = {"n_features_in": int, "tagged": bool, "joint": bool}
    for key, kind in expected.items():
        if type(fitted.get(key)) is not kind:
            raise model.fail(f"meta.json: fitted {key} must be {kind.__name__}")
    if fitted.keys() - expected.keys():
        unknown = sorted(fitted.keys() - expected.keys())[0]
        raise model.fail(f"meta.json: unknown fitted value {unknown!r}")
    if fitted["joint"] and not model.decoding.joint:
        raise model.fail("meta.json: a joint scorer fitted for gap-by-gap decoding")


def _check_resources(model: ModelFile) -> None:
    record = model.resources
    if not isinstance(record, dict):
        raise model.fail("meta.json: resources must be an object")
    needed = needed_resources(model.inputs, model.decoding)
    if record.keys() != needed:
        differ = sorted(record.keys() ^ needed)[0]
        raise model.fail(f"meta.json: resources do not match the inputs ({differ!r})")
    for kind, entry in record.items():
        if entry is None and kind == "titles":
            continue
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("fingerprint"), str)
            or not isinstance(entry.get("source"), str)
            or (kind != "encoder" and not isinstance(entry.get("builtin"), bool))
            or not isinstance(entry.get("carried", False), bool)
            or (entry.get("carried") and kind not in CARRIED)
            or not isinstance(entry.get("form", "list"), str)
            or (entry.get("carried") and entry.get("form", "list") not in CARRIED[kind])
        ):
            raise model.fail(f"meta.json: resource {kind!r} needs a fingerprint and a source")


def expected_members(model: ModelFile) -> set[str]:
    """The members a model with these parameters holds."""
    inputs, decoding = model.inputs, model.decoding
    members = {"gap_model.npz"}
    if inputs.lexicon:
        members.add("lexicon.json")
    if inputs.contextual:
        members.add("probe.npz")
    if inputs.domain:
        members.add("domain.npz")
    for kind in CARRIED:
        entry = model.resources.get(kind)
        if entry is not None and entry.get("carried"):
            members.add(carried_member(kind, entry))
    if inputs.word_vectors:
        members.add("vectors.npz")
    if model.meta["fitted"]["joint"]:  # not if no training query had 2 to 12 words
        members |= {"joint.npz", "phrases.json"}
        if decoding.rank_votes:
            members.add("ranker.npz")
    return members


def _check_members(model: ModelFile, present: set[str]) -> None:
    _check_present(model, expected_members(model), present)


def _check_present(
    file: ModelFile | RoutedFile | AdaptedFile, expected: set[str], present: set[str]
) -> None:
    """Every member expected is present, and nothing else."""
    if expected - present:
        raise file.fail(f"member {sorted(expected - present)[0]!r} is missing")
    if present - expected:
        raise file.fail(f"unexpected member {sorted(present - expected)[0]!r}")
