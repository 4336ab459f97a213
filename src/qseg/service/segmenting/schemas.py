"""The service's request and response bodies as pydantic models: the OpenAPI schema says what
a request may hold (the limits included) and validation answers anything else with a 4xx.

The request model is made per service (:func:`request_model`), since its limits and the names
it may ask for are the service's options.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, create_model
from pydantic.config import JsonValue
from pydantic_core import PydanticCustomError

from qseg.integrations.syntax import ENGINE_OPTIONS, FIELD_PATTERN, SYNTAXES, TOKENISERS
from qseg.query import QueryError, normalize
from qseg.segmenters.nesting import MAX_NESTED_WORDS
from qseg.service.foundation.settings import Settings
from qseg.streams.records import FORMATS

_SPACE = r" \t|\"()\u00a0\u2000-\u200a\u202f\u205f\u3000"
"""What separates words and is allowed in a query (no control characters)."""
_WORD = r"[^\s|\"()\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]"
"""A character of a word: no separator, control or invisible format character."""


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")
"""Unicode's control characters (category Cc: U+0000-001F, U+007F-009F) but the tab."""


def query_pattern(words: int) -> str:
    """A regular expression of a query of 1 to ``words`` words, for the OpenAPI schema."""
    space = f"[{_SPACE}]"
    return f"^{space}*{_WORD}+(?:{space}+{_WORD}+){{0,{words - 1}}}{space}*$"


def check_query(text: str, words: int) -> str:
    """A query the service takes: no control character, 1 to ``words`` words when
    normalized."""
    control = _CONTROL.search(text)
    if control is not None:
        raise PydanticCustomError(
            "query_control_character",
            "holds the control character {character}; a query is one line of text",
            {"character": f"U+{ord(control.group()):04X}"},
        )
    try:
        found = len(normalize(text))
    except QueryError as exc:
        raise PydanticCustomError("query_words", str(exc)) from None
    if found > words:
        raise PydanticCustomError(
            "query_words",
            "has {found} words; the limit is {limit} (--max-words)",
            {"found": found, "limit": words},
        )
    return text


def _a_number(value: object) -> object:
    """A JSON number (for an integer, 12.0 is one), never a string or a boolean."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("number_type", "Input should be a number")
    return value


def tied_fields(settings: Settings) -> list[dict[str, Any]]:
    """What ties the fields of a request, as JSON Schema conditions (``allOf`` of ``if`` /
    ``then``): the rule of :func:`qseg.integrations.syntax.output_syntax` (the engine
    options only with an engine's format; a tree per query with neither them, ``k`` over 1
    nor a quoted or engine form, of at most :data:`MAX_NESTED_WORDS` words and
    ``max_nested`` queries), and with ``k`` over 1 at most :func:`ranked_batch` queries. (A
    few conditions: a validator that generates requests from the schema, schemathesis's,
    takes a few, not one per value of ``k``.)"""
    no_options: dict[str, Any] = {name: {"type": "null"} for name in ENGINE_OPTIONS}
    no_options["plain"] = {"const": False}
    no_options["proximity"] = {"const": False}
    words = min(settings.max_words, MAX_NESTED_WORDS)
    conditions: list[dict[str, Any]] = [
        {
            "if": {"properties": {"format": {"enum": list(FORMATS)}}},
            "then": {"properties": no_options},
        },
        {
            "if": {"properties": {"format": {"const": "terrier"}}, "required": ["format"]},
            "then": {
                "properties": {
                    "field": {"type": "null"},
                    "slop": {"enum": [None, 0]},
                    "boost": {"type": "null"},
                }
            },
        },
        {
            "if": {"properties": {"proximity": {"const": True}}, "required": ["proximity"]},
            "then": {
                "properties": {
                    "plain": {"const": False},
                    "occur": {"enum": [None, "must"]},
                    "slop": {"enum": [None, 0]},
                    "boost": {"type": "null"},
                }
            },
        },
        {
            "if": {
                "properties": {"format": {"enum": ["lucene", "es-dsl"]}},
                "required": ["format"],
            },
            "then": {"properties": {"tokeniser": {"enum": [None, "english"]}}},
        },
        {
            "if": {"properties": {"nested": {"const": True}}, "required": ["nested"]},
            "then": {
                "properties": {
                    "k": {"const": 1},
                    "format": {"enum": ["pipe", "json"]},
                    "queries": {
                        "maxItems": settings.max_nested,
                        "items": {"pattern": query_pattern(words)},
                    },
                }
                | no_options
            },
        },
    ]
    conditions.append(
        {
            "if": {"properties": {"k": {"minimum": 2}}, "required": ["k"]},
            "then": {"properties": {"queries": {"maxItems": ranked_batch(settings)}}},
        }
    )
    return conditions


def ranked_batch(settings: Settings) -> int:
    """The most queries of a request with ``k`` over 1: queries x k then stays within
    ``max_ranked`` whatever k."""
    return max(1, settings.max_ranked // settings.max_k)


def request_model(names: list[str], settings: Settings) -> type[BaseModel]:
    """``POST /segment``'s body for a service serving ``names`` within the limits of
    ``settings``: each field's in its schema, those that tie fields in :func:`tied_fields`."""
    batch, words, chars, k = (
        settings.max_batch,
        settings.max_words,
        settings.max_chars,
        settings.max_k,
    )
    query = Annotated[
        str,
        Field(min_length=1, max_length=chars, json_schema_extra={"pattern": query_pattern(words)}),
        AfterValidator(lambda text: check_query(text, words)),
    ]
    method_help = "a served name (GET /methods); default: the first one"
    return create_model(
        "SegmentRequest",
        __config__=ConfigDict(
            extra="forbid",
            strict=True,
            # the conditions are plain JSON (a list of dicts is not a list of JSON values to mypy)
            json_schema_extra={"allOf": cast(list[JsonValue], tied_fields(settings))},
        ),
        __doc__="Queries to segment, and how.",
        queries=(
            list[query],
            Field(
                min_length=1,
                max_length=batch,
                description=f"1 to {batch} queries (--max-batch), each of 1 to {words} words "
                f"(--max-words) and at most {chars} characters (--max-chars)",
            ),
        ),
        method=(
            str | None,
            Field(None, description=method_help, json_schema_extra={"enum": [*names, None]}),
        ),
        k=(
            Annotated[int, BeforeValidator(_a_number)],
            Field(
                1,
                ge=1,
                le=k,
                strict=False,
                description=f"the k best (at most {k}; with k over 1, at most "
                f"{ranked_batch(settings)} queries: --max-ranked / --max-k)",
            ),
        ),
        nested=(
            bool,
            Field(
                False,
                description="a binary tree per query (with neither k over 1 nor the engine "
                f"options; text: brackets; at most {settings.max_nested} queries of at most "
                f"{MAX_NESTED_WORDS} words, --max-nested)",
            ),
        ),
        format=(
            Literal[(*FORMATS, *SYNTAXES)],
            Field(
                "pipe",
                description="the form of `text`: what `qseg segment --format` prints (an "
                "engine's query syntax: lucene, es-dsl, terrier)",
            ),
        ),
        field=(
            str | None,
            Field(None, pattern=FIELD_PATTERN, description="lucene, es-dsl: the field searched"),
        ),
        occur=(
            Literal["must", "should"] | None,
            Field(None, description="must: every phrase required (default); should: optional"),
        ),
        plain=(bool, Field(False, description="the plain query with the phrases as boosts")),
        proximity=(
            bool,
            Field(False, description="segment proximity: words and windows of segment pairs"),
        ),
        slop=(
            Annotated[int, Field(ge=0, strict=False), BeforeValidator(_a_number)] | None,
            Field(None, description="lucene, es-dsl: phrase slop"),
        ),
        boost=(
            Annotated[float, Field(gt=0, strict=False), BeforeValidator(_a_number)] | None,
            Field(None, description="lucene, es-dsl: phrase boost"),
        ),
        quote=(
            list[Annotated[int, Field(ge=0, strict=False), BeforeValidator(_a_number)]] | None,
            Field(None, description="engine syntax: quote only these segments (from 0)"),
        ),
        tokeniser=(
            Literal[TOKENISERS] | None,
            Field(None, description="terrier: the index's tokeniser, english (default) or utf"),
        ),
    )


class Ranked(BaseModel):
    """One of the k best segmentations of a query."""

    segmentation: str = Field(description="pipe text: new york|yankees")
    quoted: str = Field(description='quoted text: "new york" yankees')
    segments: list[str]
    score: float | None = Field(description="the method's own score (null: minus infinity)")


class Answer(BaseModel):
    """One query's answer: the JSON record `qseg segment --format json` prints for it."""

    query: str = Field(description="the query's normalized words")
    segmentation: str | None = None
    quoted: str | None = None
    segments: list[str] | None = None
    score: float | None = None
    ranking: list[Ranked] | None = None
    nested: str | None = Field(None, description="with nested: ((new york) yankees)")
    heights: list[int] | None = None


class SegmentResponse(BaseModel):
    """The answers, in the order of the queries, and what produced them."""

    method: str = Field(description="the served name that segmented")
    spec: str
    fingerprint: str = Field(description="of the model file, or of a method's spec and release")
    results: list[Answer]
    text: str | None = Field(
        description="what `qseg segment` prints for these queries in `format` (null with "
        "format json: the records are `results`)"
    )


class Method(BaseModel):
    name: str
    spec: str
    fingerprint: str
    metadata: dict[str, Any]


class Methods(BaseModel):
    methods: list[Method] = Field(description="the served methods; the first is the default")
    limits: dict[str, int]
