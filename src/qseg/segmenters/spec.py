"""Method specs: ``NAME`` or ``NAME(key=value, ...)``, with typed parameters.

A spec names a method of :mod:`.registry` and sets some of its parameters; every parameter is
typed and has a default. :func:`parse` gives the method and the full parameters, :func:`format_spec`
writes them back with the defaults left out, so a spec round-trips (the ir_measures convention:
``nDCG(rel=2)@10``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from qseg.errors import QsegError


class SpecError(QsegError):
    """A method spec that names no method or has bad parameters."""


@dataclass(frozen=True)
class Param:
    """A typed method parameter with its default, a one-line description and, for some, the
    values it may take."""

    kind: type
    default: Any
    help: str
    choices: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Method:
    """A registered segmentation method: what it needs, its parameters, whether it must be
    trained first, and the factory that builds it from resources and parameters."""

    name: str
    summary: str
    needs: str
    build: Callable[..., Any]
    params: Mapping[str, Param] = field(default_factory=dict)
    trains: bool = False


_SPEC = re.compile(r"\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*", re.DOTALL)


def looks_like_spec(text: str) -> bool:
    """Whether ``text`` has the shape ``NAME`` or ``NAME(...)`` (it may still name no method)."""
    return _SPEC.fullmatch(text) is not None


def _convert(method: str, key: str, param: Param, text: str) -> Any:
    value = _typed(method, key, param, text.strip())
    if param.choices and value not in param.choices:
        allowed = ", ".join(map(_format, param.choices))
        raise SpecError(f"{method}: {key} must be one of {allowed}, got {text.strip()!r}")
    return value


def _typed(method: str, key: str, param: Param, text: str) -> Any:
    if param.kind is str:
        quoted = len(text) >= 2 and text[0] == text[-1] and text[0] in "'\""
        return text[1:-1] if quoted else text
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
            if param.kind is float and not math.isfinite(value):  # nan, inf, 1e999
                raise SpecError(f"{method}: {key} must be a finite number, not {text!r}")
            return value
    raise SpecError(f"{method}: {key} must be of type {param.kind.__name__}, got {text!r}")


def parse(
    spec: str, methods: Mapping[str, Method], shown: str | None = None
) -> tuple[Method, dict[str, Any]]:
    """The method a spec names in ``methods`` and its full parameters (defaults filled in);
    ``shown``: the text a malformed spec is named by, where the spec was made from it."""
    match = _SPEC.fullmatch(spec)
    if not match:
        raise SpecError(f"malformed method spec {spec!r}; expected NAME or NAME(key=value, ...)")
    name, args = match.group(1), match.group(2)
    items = _items(shown or spec, args)
    method = methods.get(name.lower())
    if method is None:
        raise SpecError(f"unknown method {name!r}; available: {', '.join(sorted(methods))}")
    params = {key: p.default for key, p in method.params.items()}
    given: set[str] = set()
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in method.params:
            known = ", ".join(method.params) or "none"
            raise SpecError(f"{method.name}: unknown parameter {item.strip()!r}; known: {known}")
        if key in given:
            raise SpecError(f"{method.name}: {key} is given twice")
        given.add(key)
        params[key] = _convert(method.name, key, method.params[key], value)
    return method, params


def _items(spec: str, args: str | None) -> list[str]:
    """The ``key=value`` items between a spec's parentheses (none in ``NAME()``): an empty one
    (``NAME(,)``, ``NAME(a=1,)``) is refused, as a typo rather than a parameter left out."""
    if args is None or not args.strip():
        return []
    items = args.split(",")
    if not all(item.strip() for item in items):
        raise SpecError(f"malformed method spec {spec!r}: an empty parameter (a stray comma)")
    return items


def format_spec(name: str, declared: Mapping[str, Param], values: Mapping[str, Any]) -> str:
    """The canonical spec of method ``name``: the parameters that differ from their defaults,
    in the order they are ``declared``."""
    changed = [
        f"{key}={_format(values[key])}"
        for key, param in declared.items()
        if key in values and values[key] != param.default
    ]
    return f"{name}({', '.join(changed)})" if changed else name


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str) and re.fullmatch(r"[\w.-]+", value):
        return value
    return repr(value)
