"""Engine query syntax: rendered query strings parse back (luqum, a Lucene query parser) to the
segments they came from, and the DSL equals what opensearch-py's own query builders make. No
engine server runs here; these are the engines' grammars and builders, test dependencies."""

from __future__ import annotations

import itertools
import json
import re
import string
from dataclasses import replace
from decimal import Decimal

import pytest
from helpers import assert_one_line_error, out, qseg
from hypothesis import given, settings
from hypothesis import strategies as st

from qseg.errors import QsegError
from qseg.integrations.syntax import (
    PHRASE_BOOST,
    PROXIMITY_BOOSTS,
    WINDOW,
    Syntax,
    escape_lucene,
    render,
    renderer,
    terrier_tokens,
)
from qseg.query import words_of
from qseg.segmentation import Segmentation

luqum_parser = pytest.importorskip("luqum.parser", reason="luqum is a test dependency").parser
query = pytest.importorskip("opensearchpy.helpers.query", reason="opensearch-py: test extra")
from luqum.tree import Boost, From, Phrase, Range, SearchField, To, Word  # noqa: E402

LUCENE_RESERVED = set('+-&|!(){}[]^"~*?:\\/')
"""The characters Lucene's classic query parser reserves, as its documentation lists them
("Escaping Special Characters"): typed here, not taken from the code."""
ELASTICSEARCH_RESERVED = LUCENE_RESERVED | set("=<>")
"""Elasticsearch's ``query_string`` reserved characters, as its documentation lists them
("Reserved characters": ``+ - = && || > < ! ( ) { } [ ] ^ " ~ * ? : \\ /``)."""


def parsed_back(text: str) -> list[tuple[str, ...]]:
    """The segments a Lucene query string holds: a phrase's words, each bare word alone."""
    found: list[tuple[str, ...]] = []

    def walk(node) -> None:
        if isinstance(node, Phrase):
            inner = node.value[1:-1]
            found.append(tuple(re.sub(r"\\(.)", r"\1", inner).split()))
        elif isinstance(node, Word):
            found.append((re.sub(r"\\(.)", r"\1", node.value),))
        else:
            for child in node.children:
                walk(child)

    walk(luqum_parser.parse(text))
    return found


def expected_parts(seg: Segmentation, quote=None) -> list[tuple[str, ...]]:
    parts: list[tuple[str, ...]] = []
    for i, segment in enumerate(seg.segments):
        if len(segment) > 1 and (quote is None or i in quote):
            parts.append(segment)
        else:
            parts.extend((word,) for word in segment)
    return parts


# words of every ASCII punctuation character (whatever any list of the code or of the tests
# holds), as qseg normalizes them
words = st.text(
    alphabet=st.sampled_from("ab1é" + string.punctuation), min_size=1, max_size=6
).filter(lambda w: list(words_of(w)) == [w])
segmentations = st.lists(st.lists(words, min_size=1, max_size=3), min_size=1, max_size=5).map(
    lambda segments: Segmentation.from_segments(segments)
)


@settings(max_examples=300, deadline=None)
@given(segmentations, st.one_of(st.none(), st.frozensets(st.integers(0, 5))))
def test_a_lucene_string_parses_back_to_its_segments(seg, quote):
    text = render(seg, Syntax("lucene", quote=quote))
    assert parsed_back(text) == expected_parts(seg, quote)


@settings(max_examples=100, deadline=None)
@given(segmentations)
def test_a_field_prefixes_every_clause(seg):
    tree = luqum_parser.parse(render(seg, Syntax("lucene", field="body")))
    fields = []

    def walk(node) -> None:
        if isinstance(node, SearchField):
            fields.append(node.name)
        else:
            for child in node.children:
                walk(child)

    walk(tree)
    assert fields == ["body"] * len(expected_parts(seg))


@settings(max_examples=100, deadline=None)
@given(segmentations, st.integers(0, 3), st.one_of(st.none(), st.floats(0.5, 4)))
def test_phrase_boosts_keep_every_word_and_add_the_phrases(seg, slop, boost):
    text = render(seg, Syntax("lucene", plain=True, slop=slop, boost=boost))
    phrases = [s for s in seg.segments if len(s) > 1]
    assert parsed_back(text) == [(w,) for w in seg.words] + phrases


def nodes(text: str) -> list:
    """Every node of a Lucene query string's parse tree, in the string's order."""
    found = []

    def walk(node) -> None:
        found.append(node)
        for child in node.children:
            walk(child)

    walk(luqum_parser.parse(text))
    return found


@settings(max_examples=300, deadline=None)
@given(segmentations, st.sampled_from([None, "title"]), st.booleans())
def test_no_documented_reserved_character_is_bare_and_no_word_is_a_range(seg, field, plain):
    text = render(seg, Syntax("lucene", field=field, plain=plain))
    tree = nodes(text)
    assert not [n for n in tree if isinstance(n, From | To | Range)], text
    for word in (n.value for n in tree if isinstance(n, Word)):
        bare = re.sub(r"\\.", "", word)  # what is left when the escaped ones are cut
        assert not set(bare) & ELASTICSEARCH_RESERVED, (word, text)
        assert word[:1] not in ("<", ">"), (word, text)  # a range in Elasticsearch, escaped or not


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-12, max_value=1e12, allow_nan=False, allow_infinity=False))
def test_a_boost_is_written_as_lucene_reads_it(boost):
    text = render(Segmentation.from_pipe("new york|tickets"), Syntax("lucene", boost=boost))
    assert re.fullmatch(r"[0-9]+(\.[0-9]+)?", text.split("^")[1].split()[0]), text
    (node,) = [n for n in nodes(text) if isinstance(n, Boost)]
    assert Decimal(str(node.force)) == Decimal(repr(boost))


def test_every_reserved_character_is_escaped():
    for char in ELASTICSEARCH_RESERVED:
        assert escape_lucene(f"a{char}b") == f"a\\{char}b"
    assert escape_lucene(">5") == '">5"' and escape_lucene("<a") == '"<a"'
    seg = Segmentation.from_pipe("price|>5|a=b")
    assert render(seg, Syntax("lucene", field="title")) == 'title:price title:">5" title:a\\=b'
    assert render(Segmentation.from_pipe("a b"), Syntax("lucene", boost=1e-5)) == '+"a b"^0.00001'
    seg = Segmentation.from_pipe("c++|new york|tickets")
    assert render(seg, Syntax("lucene")) == 'c\\+\\+ +"new york" tickets'
    assert render(seg, Syntax("lucene", occur="should")) == 'c\\+\\+ "new york" tickets'
    plain = Syntax("lucene", plain=True, slop=1, boost=2.0)
    assert render(seg, plain) == 'c\\+\\+ new york tickets "new york"~1^2'
    terrier = "c new york tickets #combine:0=0.25(#1(new york))"
    assert render(seg, Syntax("terrier", plain=True)) == terrier  # PHRASE_BOOST


@settings(max_examples=200, deadline=None)
@given(
    segmentations,
    st.sampled_from(["must", "should"]),
    st.integers(0, 3),
    st.one_of(st.none(), st.floats(0.5, 4)),
    st.one_of(st.none(), st.frozensets(st.integers(0, 5))),
)
def test_the_dsl_is_what_opensearch_pys_builders_make(seg, occur, slop, boost, quote):
    syntax = Syntax("es-dsl", field="body", occur=occur, slop=slop, boost=boost, quote=quote)
    phrases, words = [], []
    for i, segment in enumerate(seg.segments):
        if len(segment) > 1 and (quote is None or i in quote):
            options = {"query": " ".join(segment)}
            options |= {"slop": slop} if slop else {}
            options |= {"boost": boost} if boost is not None else {}
            phrases.append(query.MatchPhrase(body=options))
        else:
            words.extend(query.Match(body=word) for word in segment)
    if occur == "must":
        built = query.Bool(must=phrases, should=words)
    else:
        built = query.Bool(should=phrases + words)
    assert render(seg, syntax) == {"query": built.to_dict()}
    # phrase boosts: of weight PHRASE_BOOST where none is given
    weight = PHRASE_BOOST if boost is None else boost
    boosts = [
        query.MatchPhrase(body=p.to_dict()["match_phrase"]["body"] | {"boost": weight})
        for p in phrases
    ]
    plain = query.Bool(must=[query.Match(body=" ".join(seg.words))], should=boosts)
    assert render(seg, replace(syntax, plain=True)) == {"query": plain.to_dict()}


@settings(max_examples=200, deadline=None)
@given(segmentations, st.sampled_from([None, "body"]))
def test_segment_proximity_is_every_word_and_two_windows_per_pair_inside_a_segment(seg, field):
    tree = nodes(render(seg, Syntax("lucene", field=field, proximity=True)))
    pairs = [pair for segment in seg.segments for pair in itertools.pairwise(segment)]
    boosts = [n for n in tree if isinstance(n, Boost)]
    ordered, unordered = PROXIMITY_BOOSTS
    assert [float(n.force) for n in boosts] == [ordered, unordered] * len(pairs)
    windows = [n.expr for n in boosts]
    assert [parsed_back(str(n)) for n in windows] == [[pair] for pair in pairs for _ in (0, 1)]
    slops = [getattr(n, "degree", None) for n in windows]
    assert slops == [None, WINDOW - 1] * len(pairs)
    inside = {id(w) for w in windows} | {id(c) for w in windows for c in w.children}
    words = [n for n in tree if isinstance(n, Word | Phrase) and id(n) not in inside]
    assert len(words) == len(seg.words)  # every word once, optional
    assert not [n for n in tree if type(n).__name__ in ("Plus", "Prohibit")]


def test_sdm_is_segment_proximity_of_the_whole_query_in_every_syntax():
    seg = Segmentation.from_pipe("new york yankees|tickets")
    whole = Segmentation.from_segments([seg.words])
    assert render(seg, Syntax("lucene", proximity=True)) == (
        'new york yankees tickets "new york"^0.12 "new york"~7^0.06 '
        '"york yankees"^0.12 "york yankees"~7^0.06'
    )
    sdm = render(whole, Syntax("terrier", proximity=True))
    assert sdm.startswith("new york yankees tickets #combine:0=0.12(#1(new york)) ")
    assert sdm.endswith("#combine:0=0.06(#uw8(yankees tickets))") and sdm.count("#uw8") == 3
    assert render(
        Segmentation.from_pipe("new york|yankees|tickets"), Syntax("es-dsl", proximity=True)
    ) == {"query": query.Bool(should=[query.Match(text="new york yankees tickets"), *[
        query.MatchPhrase(text={"query": "new york", "slop": s, "boost": b})
        for s, b in ((0, 0.12), (7, 0.06))
    ]]).to_dict()}  # fmt: skip
    with pytest.raises(QsegError, match="proximity sets its own clauses"):
        Syntax("lucene", proximity=True, plain=True)


def test_terrier_phrases_and_words_cut_as_its_tokenizer_cuts_them():
    seg = Segmentation.from_pipe("new york yankees|c++|u.s. open")
    assert render(seg, Syntax("terrier")) == "#1(new york yankees) c #1(u s open)"
    # PyTerrier indexes with TerrierTokeniser.english by default: A-Z a-z 0-9 only
    cafe = Segmentation.from_pipe("naïve café|münchen")
    assert render(cafe, Syntax("terrier")) == "#1(na ve caf) m nchen"
    assert render(cafe, Syntax("terrier", tokeniser="utf")) == "#1(naïve café) münchen"
    # both drop a character more than 3 times in a row, more than 4 digits, over 20 characters
    twenty = string.ascii_lowercase[:20]
    assert terrier_tokens(f"zzz zzzz 1234 12345 {twenty} {twenty}u") == ["zzz", "1234", twenty]
    # utf: Java's letters and digits of UTF-16 (a combining mark stays; no surrogate pair)
    assert terrier_tokens("e\u0301t\u00e9 \U0001d400b ٣٤", "utf") == ["e\u0301t\u00e9", "b", "٣٤"]
    assert render(seg, Syntax("terrier", quote=frozenset({0}))) == "#1(new york yankees) c u s open"
    # nothing the index holds: the empty query (a log goes on past it)
    nothing = Segmentation.from_pipe("+++ ---|東京")
    assert render(nothing, Syntax("terrier")) == ""
    assert render(nothing, Syntax("terrier", tokeniser="utf")) == "東京"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "sql"}, "unknown query syntax"),
        ({"field": "a b"}, "not a field name"),
        ({"occur": "filter"}, "occur must be"),
        ({"slop": -1}, "slop must be"),
        ({"boost": 0}, "boost must be"),
        ({"quote": frozenset({-1})}, "quote takes"),
        ({"name": "terrier", "field": "x"}, "terrier syntax takes no field"),
    ],
)
def test_bad_options_are_refused_by_name(options, message):
    with pytest.raises(QsegError, match=message):
        Syntax(**options)


def test_the_command_line_renders_with_the_same_module():
    import qseg as library

    seg = library.segmenter("wiki").segment("new york yankees tickets")
    for fmt in ("lucene", "es-dsl", "terrier"):
        printed = out(
            qseg("segment", "--method", "wiki", "--format", fmt, "new york yankees tickets")
        )
        assert printed == renderer(fmt)(seg) + "\n"
    printed = out(
        qseg(
            "segment",
            "--format",
            "es-dsl",
            "--field",
            "body",
            "--occur",
            "should",
            "--slop",
            "1",
            "--boost",
            "2",
            "--quote",
            "0",
            "new york yankees tickets",
        )
    )
    body = json.loads(printed)
    assert body["query"]["bool"]["should"][0] == {
        "match_phrase": {"body": {"query": "new york yankees", "slop": 1, "boost": 2.0}}
    }
    printed = out(qseg("segment", "--format", "lucene", "--quote", "none", "new york yankees"))
    assert printed == "new york yankees\n"
    assert_one_line_error(qseg("segment", "--slop", "1", "a b"), "--slop: only with --format")
    assert_one_line_error(
        qseg("segment", "--format", "terrier", "--nested", "a b"),
        "--nested prints one tree",
        "drop --format terrier",
    )
    assert out(qseg("segment", "--format", "terrier", "+++", "new york")) == "\n#1(new york)\n"
