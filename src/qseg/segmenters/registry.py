"""Segmenters by name: specs such as ``naive``, ``wiki(unseen_titles=true)``, ``pmi(tau=1.2)``.

A spec is a method name with optional ``key=value`` parameters. Parameters are typed and
validated; :func:`canonical_spec` writes the spec back with defaults left out, so a spec
round-trips (the ir_measures convention).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from qseg.errors import QsegError
from qseg.resources.bundle import Resources
from qseg.segmenters.base import Segmenter
from qseg.segmenters.naive import NaiveSegmenter
from qseg.segmenters.pmi import PAPER_TAU, PmiSegmenter
from qseg.segmenters.wiki import MEDIAN_BIGRAM_COUNT, WikiSegmenter


class SpecError(QsegError):
    """A method spec that names no method or has bad parameters."""


@dataclass(frozen=True)
class Param:
    """A typed method parameter with its default."""

    kind: type
    default: Any
    help: str


@dataclass(frozen=True)
class Method:
    """A registered segmentation method."""

    name: str
    summary: str
    needs: str
    build: Callable[..., Any]
    params: Mapping[str, Param] = field(default_factory=dict)


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "naive",
            "|s|^|s| * freq(s) scoring, exact decoding (paper 003, section 4)",
            "n-gram counts",
            lambda res: NaiveSegmenter(res.require_ngrams()),
        ),
        Method(
            "wiki",
            "Wikipedia-title normalization with the median-2-gram rule (paper 003, section 5)",
            "n-gram counts and Wikipedia titles",
            lambda res, unseen_titles, median: WikiSegmenter(
                titles=res.require_titles("wiki"),
                counts=res.require_ngrams(),
                unseen_titles=unseen_titles,
                median=median,
            ),
            {
                "unseen_titles": Param(
                    bool, False, "titles without an n-gram count also get the title weight"
                ),
                "median": Param(int, MEDIAN_BIGRAM_COUNT, "count given to unseen sub-2-grams"),
            },
        ),
        Method(
            "pmi",
            "break iff PMI of adjacent words < tau (paper 003, section 6.2)",
            "word and 2-gram probabilities",
            lambda res, tau: PmiSegmenter(res.require_probabilities(), tau),
            {"tau": Param(float, PAPER_TAU, "PMI threshold (log10); tune with `qseg tune pmi`")},
        ),
    )
}

_SPEC = re.compile(r"\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*", re.DOTALL)


def _convert(method: str, key: str, param: Param, text: str) -> Any:
    text = text.strip()
    if param.kind is bool:
        if text.lower() in ("true", "1", "yes"):
            return True
        if text.lower() in ("false", "0", "no"):
            return False
    else:
        try:
            value = param.kind(text)
        except ValueError:
            pass
        else:
            if param.kind is float and value != value:  # NaN
                raise SpecError(f"{method}: {key} must be a number, not {text!r}")
            return value
    raise SpecError(f"{method}: {key} must be of type {param.kind.__name__}, got {text!r}")


def parse_spec(spec: str, methods: Mapping[str, Method] = METHODS) -> tuple[Method, dict[str, Any]]:
    """The method a spec names in ``methods`` and its full parameters (defaults filled in)."""
    match = _SPEC.fullmatch(spec)
    if not match:
        raise SpecError(f"malformed method spec {spec!r}; expected NAME or NAME(key=value, ...)")
    name, args = match.group(1), match.group(2)
    method = methods.get(name.lower())
    if method is None:
        raise SpecError(f"unknown method {name!r}; available: {', '.join(sorted(methods))}")
    params = {key: p.default for key, p in method.params.items()}
    for item in filter(str.strip, (args or "").split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in method.params:
            known = ", ".join(method.params) or "none"
            raise SpecError(f"{method.name}: unknown parameter {item.strip()!r}; known: {known}")
        params[key] = _convert(method.name, key, method.params[key], value)
    return method, params


def canonical_spec(spec: str) -> str:
    """The spec with the method name lower-cased and parameters at their default dropped."""
    method, params = parse_spec(spec)
    changed = [
        f"{key}={_format(value)}"
        for key, value in params.items()
        if value != method.params[key].default
    ]
    return f"{method.name}({', '.join(changed)})" if changed else method.name


def _format(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else repr(value)


def create(spec: str, resources: Resources | None = None) -> Segmenter:
    """Build the segmenter a spec names, from ``resources`` (defaults where allowed)."""
    method, params = parse_spec(spec)
    try:
        return method.build(resources or Resources(), **params)
    except ValueError as exc:
        raise SpecError(f"{method.name}: {exc}") from None


BEST_SPEC = "wiki(unseen_titles=true)"
"""The default method where Wikipedia titles are available: the strongest of the n-gram
methods on Webis-QSeC-10, with the corpus's resources and with the built-in ones."""


def default_spec(resources: Resources) -> str:
    """:data:`BEST_SPEC` where titles are given or built in, else ``naive``."""
    if resources.titles is not None:
        return BEST_SPEC
    from qseg.resources.default import default_titles

    return BEST_SPEC if default_titles() is not None else "naive"
