"""A segmentation in a search engine's query syntax: the one renderer behind ``qseg segment
--format``, the service's ``format`` and the Python API.

- ``lucene``: a Lucene / Elasticsearch / OpenSearch / Solr query string, multiword segments
  as quoted phrases (``+"new york yankees" tickets``), every character that any of these
  parsers reserves escaped in a bare word (``c\\+\\+``, ``a\\=b``; Elasticsearch's ``=``, ``<``
  and ``>`` too), and a bare word that begins with ``<`` or ``>`` quoted: Elasticsearch reads
  such a word as a range (``price:>5``) however it is escaped, never a quoted one;
- ``es-dsl``: an Elasticsearch / OpenSearch search body, ``{"query": {"bool": ...}}`` with a
  ``match_phrase`` clause per quoted segment and a ``match`` clause per other word;
- ``terrier``: Terrier's (and Indri's) ``#1(new york yankees) tickets``, words cut into
  tokens as the index's tokeniser cut the documents: ``english`` (Terrier's and PyTerrier's
  default, ``EnglishTokeniser``: runs of ``A-Z a-z 0-9``, so ``naïve`` is ``na ve``) or ``utf``
  (``UTFTokeniser``: runs of Unicode letters, digits and combining marks); both drop a token of
  more than 20 characters, of more than 4 digits or with a character more than 3 times in a row.

Two ways to use the segments: as **required phrases** (``occur="must"``, the default: a
document must hold each phrase, the other words are optional and scored, as in paper 000's
quoted queries; ``occur="should"``: every clause optional), or as **phrase boosts** added to
the plain query (``plain=True``: every word as typed, each phrase an extra optional clause,
what production engines do). A phrase may have a ``slop`` and a ``boost``; a phrase boost's
weight is :data:`PHRASE_BOOST` unless one is given (weight 1 costs nDCG@10 significantly on
Vaswani, 0.358 -> 0.332; the weight chosen by leave-one-collection-out cross-validation costs
nothing significant on any of the three collections: docs/integrations.md).

A third way, **segment proximity** (``proximity=True``), is Bendersky, Croft & Smith's (2009)
two-stage idea on the sequential dependence model of Metzler & Croft (2005): every word as
typed, and for each pair of adjacent words *inside a segment* an ordered window (the pair as a
phrase: Terrier's ``#1``) and an unordered one (:data:`WINDOW` words: Terrier's ``#uw8``; in
Lucene and Elasticsearch a phrase of slop ``WINDOW - 1``), weighted as SDM weighs them
(0.85 / 0.1 / 0.05, the words' weight taken as 1: :data:`PROXIMITY_BOOSTS`). The whole query as
one segment is SDM itself.

Which multiword segments are quoted is the quoted version of paper 000: all of them (the
default), or those whose indices ``quote`` names (a one-word segment is never quoted).
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections.abc import Callable, Collection
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from qseg.errors import QsegError
from qseg.segmentation import Segmentation

SYNTAXES = ("lucene", "es-dsl", "terrier")
TEXT_FORMS = ("pipe", "quoted")
Occur = Literal["must", "should"]

_LUCENE_RESERVED = re.compile(r'([+\-=&|!(){}\[\]^"~*?:\\/<>])')
"""Lucene's classic query parser's reserved characters and Elasticsearch's (``= < >``)."""
FIELD_PATTERN = r"^[A-Za-z_@][A-Za-z0-9_.@-]*$"
_FIELD = re.compile(FIELD_PATTERN)
TOKENISERS = ("english", "utf")
"""Terrier's tokenisers a ``terrier`` query is cut for (PyTerrier's ``TerrierTokeniser``)."""
_ENGLISH_RUN = re.compile(r"[A-Za-z0-9]+")
_UTF_TOKEN = frozenset(("Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Mn", "Mc"))
"""Java's ``Character.isLetterOrDigit``, and the combining marks ``UTFTokeniser`` keeps."""
_SAME_IN_A_ROW, _DIGITS, _LONGEST = 3, 4, 20
"""What Terrier's tokenisers drop: a character more than 3 times in a row, more than 4 digits,
more than 20 characters (``maxNumOfSameConseqLettersPerTerm``, ``maxNumOfDigitsPerTerm``,
``max.term.length``)."""


@dataclass(frozen=True)
class Syntax:
    """How to render: the syntax, the field searched (``None``: the engine's default field;
    ``text`` for ``es-dsl``), the occurrence of the phrases, a phrase slop and boost, the
    segments to quote by index from 0 (``None``: every multiword segment), whether the
    phrases are boosts added to the plain query, and (``terrier``) the tokeniser of the index
    searched (:data:`TOKENISERS`); ``proximity``: the segment proximity rewrite instead of
    phrases."""

    name: str = "lucene"
    field: str | None = None
    occur: Occur = "must"
    slop: int = 0
    boost: float | None = None
    quote: frozenset[int] | None = None
    plain: bool = False
    tokeniser: str = "english"
    proximity: bool = False

    @property
    def phrase_boost(self) -> float | None:
        """The weight of each phrase: ``boost``, else :data:`PHRASE_BOOST` for a phrase added
        to the plain query, else none (a required phrase)."""
        if self.boost is not None:
            return self.boost
        return PHRASE_BOOST if self.plain else None

    def __post_init__(self) -> None:
        if self.name not in SYNTAXES:
            raise QsegError(f"unknown query syntax {self.name!r}; one of {', '.join(SYNTAXES)}")
        if self.field is not None and not _FIELD.fullmatch(self.field):
            raise QsegError(f"{self.field!r} is not a field name (letters, digits, _ . @ -)")
        if self.occur not in ("must", "should"):
            raise QsegError(f"occur must be 'must' or 'should', not {self.occur!r}")
        if isinstance(self.slop, bool) or not isinstance(self.slop, int) or self.slop < 0:
            raise QsegError(f"slop must be a whole number >= 0, not {self.slop!r}")
        if self.boost is not None and not self.boost > 0:
            raise QsegError(f"boost must be > 0, not {self.boost!r}")
        if self.quote is not None and any(
            isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in self.quote
        ):
            raise QsegError(f"quote takes segment numbers >= 0, not {sorted(self.quote)!r}")
        if not isinstance(self.plain, bool):
            raise QsegError(f"plain must be true or false, not {self.plain!r}")
        if not isinstance(self.proximity, bool):
            raise QsegError(f"proximity must be true or false, not {self.proximity!r}")
        if self.proximity and (self.plain or self.occur != "must" or self.slop or self.boost):
            raise QsegError("proximity sets its own clauses: drop plain, occur, slop and boost")
        if self.name == "terrier" and (self.field or self.slop or self.boost):
            raise QsegError("the terrier syntax takes no field, slop or boost")
        if self.tokeniser not in TOKENISERS:
            raise QsegError(f"tokeniser must be english or utf, not {self.tokeniser!r}")
        if self.name != "terrier" and self.tokeniser != "english":
            raise QsegError("tokeniser is an option of the terrier syntax only")


class OptionError(QsegError):
    """Output options that do not go together; ``option`` names the first one to drop."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


PHRASE_BOOST = 0.25
"""The weight of a phrase added to the plain query when no ``boost`` is given: the weight that
leave-one-collection-out cross-validation chose on NFCorpus, Cranfield and Vaswani
(``scripts/retrieval_report.py``: 0.25 for two held-out collections, 0.05 for the third)."""

ENGINE_OPTIONS = ("field", "occur", "plain", "slop", "boost", "quote", "tokeniser", "proximity")
"""The options of an engine syntax, by their names in :class:`Syntax`."""


def output_syntax(
    form: str,
    *,
    nested: bool = False,
    k: int = 1,
    spell: Callable[[str], str] = str,
    **options: Any,
) -> Syntax | None:
    """The engine syntax of an output (``None`` for pipe, quoted and json), one rule for
    ``qseg segment`` and the service: the engine options only with an engine's format, and a
    tree per query (``nested``) with neither them, ``k`` over 1 nor a quoted or engine form.
    ``spell`` names an option as the caller's user gives it (``--k`` on the command line)."""
    unknown = options.keys() - set(ENGINE_OPTIONS)
    assert not unknown, unknown
    given = [name for name in ENGINE_OPTIONS if options.get(name) not in (None, False)]
    if nested:
        dropped = (["k"] if k > 1 else []) + given
        if form in ("quoted", *SYNTAXES):
            dropped.append(f"format {form}")
        if dropped:
            names = ", ".join(spell(name) for name in dropped)
            raise OptionError(
                f"{spell('nested')} prints one tree per query: drop {names}", dropped[0]
            )
        return None
    if form not in SYNTAXES:
        if given:
            raise OptionError(
                f"{', '.join(map(spell, given))}: only with {spell('format')} lucene, es-dsl "
                "or terrier",
                given[0],
            )
        return None
    quote = options.get("quote")
    try:
        return Syntax(
            form,
            field=options.get("field"),
            occur=options.get("occur") or "must",
            slop=options.get("slop") or 0,
            boost=options.get("boost"),
            quote=None if quote is None else frozenset(quote),
            plain=bool(options.get("plain")),
            tokeniser=options.get("tokeniser") or "english",
            proximity=bool(options.get("proximity")),
        )
    except QsegError as exc:
        raise OptionError(str(exc), given[0] if given else "format") from None


def quoted_segments(segmentation: Segmentation, quote: Collection[int] | None) -> list[bool]:
    """For each segment, whether it is quoted: multiword and chosen by ``quote`` (an index
    past the last segment chooses none: one choice serves a batch of queries)."""
    return [
        len(segment) > 1 and (quote is None or i in quote)
        for i, segment in enumerate(segmentation.segments)
    ]


def render(segmentation: Segmentation, syntax: Syntax) -> str | dict[str, Any]:
    """The segmentation in ``syntax``: a query string, or for ``es-dsl`` a search body."""
    quoted = quoted_segments(segmentation, syntax.quote)
    if syntax.proximity:
        return proximity(segmentation, quoted, syntax)
    if syntax.name == "lucene":
        return lucene(segmentation.segments, quoted, syntax)
    if syntax.name == "terrier":
        return terrier(segmentation.segments, quoted, syntax)
    pairs = list(zip(segmentation.segments, quoted, strict=True))
    phrases = [segment for segment, phrase in pairs if phrase]
    if syntax.plain:
        words = list(segmentation.words)
    else:
        words = [word for segment, phrase in pairs if not phrase for word in segment]
    return es_dsl(phrases, words, syntax)


WINDOW = 8
"""The unordered window of segment proximity and SDM, in words (Terrier's ``#uw8``)."""
PROXIMITY_BOOSTS = (0.12, 0.06)
"""The weights of a pair's ordered and unordered window beside a word's 1: SDM's 0.1 and 0.05
against its 0.85 for the words, rounded."""


def adjacent_pairs(segmentation: Segmentation, quoted: list[bool]) -> list[tuple[str, str]]:
    """The pairs of adjacent words inside each chosen multiword segment, in order."""
    return [
        (a, b)
        for segment, chosen in zip(segmentation.segments, quoted, strict=True)
        if chosen
        for a, b in itertools.pairwise(segment)
    ]


def proximity(
    segmentation: Segmentation, quoted: list[bool], syntax: Syntax
) -> str | dict[str, Any]:
    """The segment proximity rewrite (see the module docstring) in ``syntax``."""
    pairs = adjacent_pairs(segmentation, quoted)
    ordered, unordered = (fixed_point(b) for b in PROXIMITY_BOOSTS)
    if syntax.name == "terrier":
        words = [t for w in segmentation.words for t in terrier_tokens(w, syntax.tokeniser)]
        for a, b in pairs:
            tokens = terrier_tokens(f"{a} {b}", syntax.tokeniser)
            if len(tokens) > 1:
                pair = " ".join(tokens)
                words.append(f"#combine:0={ordered}(#1({pair}))")
                words.append(f"#combine:0={unordered}(#uw{WINDOW}({pair}))")
        return " ".join(words)
    if syntax.name == "es-dsl":
        field = syntax.field or "text"
        clauses: list[dict[str, Any]] = [{"match": {field: " ".join(segmentation.words)}}]
        for a, b in pairs:
            for slop, boost in zip((0, WINDOW - 1), PROXIMITY_BOOSTS, strict=True):
                body = {"query": f"{a} {b}", "slop": slop, "boost": boost}
                clauses.append({"match_phrase": {field: body}})
        return {"query": {"bool": {"should": clauses}}}
    prefix = f"{syntax.field}:" if syntax.field else ""
    clauses_text = [prefix + escape_lucene(word) for word in segmentation.words]
    for a, b in pairs:
        pair = lucene_phrase(f"{a} {b}")
        clauses_text.append(f"{prefix}{pair}^{ordered}")
        clauses_text.append(f"{prefix}{pair}~{WINDOW - 1}^{unordered}")
    return " ".join(clauses_text)


def escape_lucene(word: str) -> str:
    """A bare word with every reserved character of the Lucene query syntax escaped, or
    quoted where it begins with ``<`` or ``>`` (Elasticsearch unescapes a word before it
    looks for a range; a one-word phrase is the same term)."""
    if word[:1] in ("<", ">"):
        return lucene_phrase(word)
    escaped = _LUCENE_RESERVED.sub(r"\\\1", word)
    # a first ' too: Lucene reads it as a letter, other parsers of its syntax (luqum) as a quote
    return "\\" + escaped if escaped.startswith("'") else escaped


def lucene_phrase(text: str) -> str:
    """``text`` as a quoted phrase of the Lucene query syntax (its ``\\`` and ``"`` escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def fixed_point(number: float) -> str:
    """A number as Lucene's grammar reads a boost: digits and a point, never an exponent
    (``1e-05`` is a syntax error there: ``0.00001``)."""
    return format(Decimal(repr(number)).normalize(), "f")


def lucene(
    segments: tuple[tuple[str, ...], ...], quoted: list[bool], syntax: Syntax = Syntax()
) -> str:
    prefix = f"{syntax.field}:" if syntax.field else ""
    required = "+" if syntax.occur == "must" and not syntax.plain else ""
    slop = f"~{syntax.slop}" if syntax.slop else ""
    weight = syntax.phrase_boost
    boost = f"^{fixed_point(weight)}" if weight is not None else ""
    words: list[str] = []
    phrases: list[str] = []
    for segment, phrase in zip(segments, quoted, strict=True):
        if phrase:
            phrases.append(f"{required}{prefix}{lucene_phrase(' '.join(segment))}{slop}{boost}")
        if not phrase or syntax.plain:
            words.extend(prefix + escape_lucene(word) for word in segment)
        if phrase and not syntax.plain:
            words.append(phrases.pop())
    return " ".join(words + phrases)


def es_dsl(phrases: list[tuple[str, ...]], words: list[str], syntax: Syntax) -> dict[str, Any]:
    field = syntax.field or "text"
    phrase_clauses = []
    for segment in phrases:
        body: dict[str, Any] = {"query": " ".join(segment)}
        if syntax.slop:
            body["slop"] = syntax.slop
        if syntax.phrase_boost is not None:
            body["boost"] = syntax.phrase_boost
        phrase_clauses.append({"match_phrase": {field: body}})
    if syntax.plain:
        clauses = {"must": [{"match": {field: " ".join(words)}}], "should": phrase_clauses}
        return {"query": {"bool": {k: v for k, v in clauses.items() if v}}}
    word_clauses = [{"match": {field: word}} for word in words]
    if syntax.occur == "should":
        clauses = {"should": phrase_clauses + word_clauses}
    else:
        clauses = {"must": phrase_clauses, "should": word_clauses}
    return {"query": {"bool": {k: v for k, v in clauses.items() if v}}}


def terrier_tokens(text: str, tokeniser: str = "english") -> list[str]:
    """The tokens Terrier's ``tokeniser`` makes of ``text`` when it indexes it: runs of
    ``A-Z a-z 0-9`` (``english``) or of letters, digits and combining marks of Unicode's
    Basic Multilingual Plane (``utf``: Java reads UTF-16 units, and a surrogate is neither),
    lower-cased, without the tokens Terrier drops."""
    if tokeniser == "english":
        runs = _ENGLISH_RUN.findall(text)
    else:
        token = [ch <= "\uffff" and unicodedata.category(ch) in _UTF_TOKEN for ch in text]
        runs = [
            "".join(ch for ch, _ in run)
            for kept, run in itertools.groupby(zip(text, token, strict=True), lambda x: x[1])
            if kept
        ]
    return [run.lower() for run in runs if _indexed(run)]


def _indexed(token: str) -> bool:
    """Whether Terrier keeps a token (its tokenisers' ``check``)."""
    if len(token) > _LONGEST or sum(ch.isdecimal() for ch in token) > _DIGITS:
        return False
    return all(len(list(same)) <= _SAME_IN_A_ROW for _, same in itertools.groupby(token))


def terrier(
    segments: tuple[tuple[str, ...], ...], quoted: list[bool], syntax: Syntax = Syntax("terrier")
) -> str:
    words, phrases = [], []
    weight = syntax.phrase_boost
    for segment, phrase in zip(segments, quoted, strict=True):
        tokens = [token for word in segment for token in terrier_tokens(word, syntax.tokeniser)]
        if phrase and len(tokens) > 1:
            ordered = f"#1({' '.join(tokens)})"
            if weight is not None and weight != 1:
                ordered = f"#combine:0={fixed_point(weight)}({ordered})"
            phrases.append(ordered)
            if not syntax.plain:
                words.append(phrases.pop())
                continue
        words.extend(tokens)
    # a query with no token the tokeniser indexes is the empty query: the index holds nothing
    # of it (an error would stop a whole log at its first query in another script)
    return " ".join(words + phrases)


def renderer(form: str, syntax: Syntax | None = None) -> Callable[[Segmentation], str]:
    """One segmentation as one line of text: ``pipe``, ``quoted``, or an engine syntax
    (``es-dsl`` as compact JSON); ``syntax`` gives the options of an engine syntax."""
    if form == "pipe":
        return Segmentation.to_pipe
    if form == "quoted":
        return Segmentation.to_quoted
    chosen = Syntax(form) if syntax is None else syntax
    if chosen.name != form:
        raise QsegError(f"the options are for {chosen.name}, the format is {form}")

    def line(segmentation: Segmentation) -> str:
        rendered = render(segmentation, chosen)
        return rendered if isinstance(rendered, str) else json.dumps(rendered)

    return line
