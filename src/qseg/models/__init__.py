"""Saved trained models: the file format, its checks, loading as a segmenter, shipped models.

:func:`open_segmenter` is the one way from a spec to a segmenter, for every interface: a
method spec of the registry (``wiki(unseen_titles=true)``), the path of a model file saved by
``qseg train`` (``webis.qseg``), or the name of a model shipped with qseg.
"""

from __future__ import annotations

import os
from pathlib import Path

from qseg.errors import PathError
from qseg.models.catalog import REBUILD, SHIPPED, shipped_model, shipped_names
from qseg.models.format import ModelError
from qseg.models.loading import load, save
from qseg.models.training import estimator
from qseg.resources.bundle import Resources
from qseg.segmenters.base import Segmenter
from qseg.segmenters.registry import METHODS, SpecError, create, default_spec
from qseg.segmenters.spec import looks_like_spec

__all__ = [
    "DEFAULT",
    "ModelError",
    "default_method",
    "estimator",
    "load",
    "open_segmenter",
    "save",
    "shipped_names",
]

MODEL_SUFFIX = ".qseg"
DEFAULT = "default"
"""The name of the shipped default model (an alias of its versioned name)."""


def default_method(resources: Resources | None = None, shipped: Path = SHIPPED) -> str:
    """What a command without a method uses: the shipped default model; where none is shipped,
    the rule-based default (``wiki(unseen_titles=true)`` with titles, else ``naive``)."""
    if shipped_model(DEFAULT, shipped) is not None:
        return DEFAULT
    return default_spec(resources or Resources())


def open_segmenter(
    spec: str | os.PathLike[str],
    resources: Resources | None = None,
    *,
    allow_other_resources: bool = False,
    shipped: Path = SHIPPED,
) -> Segmenter:
    """The segmenter ``spec`` names, ready to segment: a method of the registry, a shipped
    model's name, or a model file's path. A trainable method is refused (train it with
    ``qseg train``, or take it untrained from :func:`qseg.segmenters.registry.create`). A saved
    model runs on ``resources`` only if they are what it was trained with, unless
    ``allow_other_resources``."""
    text = os.fspath(spec).strip()
    name = text.split("(", 1)[0].strip().lower()
    if looks_like_spec(text) and name in METHODS:
        if METHODS[name].trains:
            raise SpecError(
                f"{name} is trained first: `qseg train --method {text} ... --out MODEL` "
                "(in Python: qseg.models.estimator(spec).fit), then give MODEL as the method"
            )
        return create(text, resources)
    if (path := shipped_model(text, shipped)) is not None:
        try:
            return load(path, resources, allow_other_resources=allow_other_resources, spec=text)
        except (ModelError, PathError) as exc:  # a shipped file: the installation is broken
            raise ModelError(f"{exc}; a model shipped with qseg: {REBUILD}") from None
    path = Path(text)
    if path.is_dir():
        raise PathError(text, "is a directory, not a method or a model file")
    if text.endswith(MODEL_SUFFIX) or "/" in text or path.is_file():
        if not path.exists():
            raise PathError(text, "no such model file")
        return load(path, resources, allow_other_resources=allow_other_resources)
    names = shipped_names(shipped)
    others = (f"a shipped model ({', '.join(names)}), " if names else "") + "a model file's path"
    if not looks_like_spec(text):
        raise SpecError(
            f"malformed method spec {spec!r}; expected NAME or NAME(key=value, ...), or {others}"
        )
    raise SpecError(f"unknown method {name!r}; available: {', '.join(METHODS)}; or {others}")
