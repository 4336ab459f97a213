"""The segmenters a service serves: opened once at start-up by :func:`open_segmenter`, each
under the name it was given, with what identifies it (a fingerprint) and its metadata.

A request chooses among these names only: nothing a request carries opens a file, builds a
resource or names a path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request

from qseg._version import VERSION
from qseg.errors import QsegError
from qseg.evaluation.provenance import file_fingerprint
from qseg.models import DEFAULT, open_segmenter
from qseg.models.catalog import shipped_model
from qseg.models.format import AdaptedFile, RoutedFile, read_file, read_model
from qseg.resources.built_once import build_tag
from qseg.resources.phrase_list import phrase_list
from qseg.segmenters.base import Segmenter
from qseg.service.foundation.errors import Refusal

WARM_UP = "new york yankees tickets"
"""Segmented by every served segmenter before the service is ready: whatever a segmenter
builds or maps on first use is in place before the first request."""


@dataclass(frozen=True)
class Served:
    """One served segmenter under the name it is requested by."""

    name: str
    segmenter: Segmenter
    fingerprint: str
    """The first 16 hex digits of the SHA-256 of the model file, or for a rule-based method of
    its spec, the qseg release and the built-in resources' build tag."""
    metadata: dict[str, Any]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "spec": self.segmenter.spec,
            "fingerprint": self.fingerprint,
            "metadata": self.metadata,
        }


class NotServed(Refusal):
    """A request names a method the service does not serve: 404 naming the served ones."""

    def __init__(self, name: str, served: list[str]) -> None:
        message = f"method {name!r} is not served; served: {', '.join(served)}"
        super().__init__(404, message, field="method", served=served)
        self.served = served


class ServedMethods(dict[str, Served]):
    """The served segmenters by name, in the order given: the first is the default."""

    def pick(self, name: str | None) -> Served:
        """The segmenter served as ``name`` (``None``: the default); the one lookup every
        route uses."""
        if name is None:
            return next(iter(self.values()))
        if name not in self:
            raise NotServed(name, list(self))
        return self[name]


def open_served(specs: Iterable[str], phrases: str | None = None) -> ServedMethods:
    """The segmenters ``specs`` name (none: the shipped default model), by name, each opened,
    built where needed (behind the cache's lock, progress on stderr) and warmed up, each
    keeping the phrases of the file ``phrases`` whole if one is given."""
    listed = None if phrases is None else phrase_list(phrases)
    served = ServedMethods()
    for spec in list(specs) or [DEFAULT]:
        name = spec.strip()
        if name in served:
            raise QsegError(f"--method {name!r} is given twice")
        segmenter = open_segmenter(name, phrases=listed)
        segmenter.segment(WARM_UP)
        for member in getattr(segmenter, "models", {}).values():  # a routed model's kinds:
            member.segment(WARM_UP)  # each compiled before the workers fork, shared by them
        fingerprint, metadata = _identity(name, segmenter)
        served[name] = Served(name, segmenter, fingerprint, metadata)
    return served


def _identity(name: str, segmenter: Segmenter) -> tuple[str, dict[str, Any]]:
    """The fingerprint and metadata of a served segmenter: a saved model's file and record
    (a shipped one's card too), or a rule-based method's spec."""
    base = name.split("(", 1)[0].strip()
    path = shipped_model(base)
    card: dict[str, Any] = {}
    if path is not None:
        card = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    elif base.endswith(".qseg") or Path(base).is_file():
        path = Path(base)
    if path is None:
        digest = hashlib.sha256(f"{segmenter.spec}\0{VERSION}\0{build_tag()}".encode())
        return digest.hexdigest()[:16], {"kind": "method", "qseg": VERSION}
    metadata = _model_metadata(path)
    if card:
        metadata |= {"shipped": card["name"], "card": card}
    return file_fingerprint(path), metadata


def _model_metadata(path: Path) -> dict[str, Any]:
    """What a model file records of itself: its method, release, format and resources (a
    routed file: each kind's model's method, the resources they share, kinds and style; an
    adapted one: its base, how it was adapted and to how many queries)."""
    file = read_file(path)
    if isinstance(file, AdaptedFile):
        return {
            "kind": "adapted model",
            "base": file.base,
            "start": file.meta["adaptation"]["start"],
            "queries": file.meta["queries"],
            "qseg": file.meta["qseg"],
            "format_version": file.meta["version"],
        }
    if not isinstance(file, RoutedFile):
        meta = file.meta
        return {
            "kind": "model",
            "method": meta["method"],
            "qseg": meta["qseg"],
            "format_version": meta["version"],
            "resources": meta["resources"],
        }
    shared = {name: file.members[name] for name in file.shared}
    inner = {
        kind: read_model(f"{path} ({kind}.qseg)", file.members[f"{kind}.qseg"], shared).meta
        for kind in file.kinds
    }
    return {
        "kind": "routed model",
        "method": "; ".join(f"{kind}: {meta['method']}" for kind, meta in inner.items()),
        "qseg": file.meta["qseg"],
        "format_version": file.meta["version"],
        "resources": inner[file.kinds[0]]["resources"],
        "kinds": file.kinds,
        "style": file.style,
    }


async def get_served(request: Request) -> ServedMethods:
    """The segmenters the application serves, by name (a route's dependency)."""
    return request.app.state.served
