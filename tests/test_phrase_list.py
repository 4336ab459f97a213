"""Phrase lists at run time (issue 67, item 4: ``qseg segment --phrases``, ``qseg serve
--method M --phrases F``): every listed phrase found in a query is kept whole in every answer
(flat, ranked, nested) of every segmenter, compiled and in Python alike; a list is built once
into the cache and opened from there; bad files are one line."""

from __future__ import annotations

import gzip
import json
import os
import pickle

import pytest
from helpers import Server, assert_one_line_error, out, qseg
from hypothesis import given, settings
from hypothesis import strategies as st

from qseg.errors import InputError, PathError
from qseg.models import open_segmenter
from qseg.resources.phrase_list import phrase_list, read_phrase_file
from qseg.resources.titles import TitleSet
from qseg.segmenters.nesting import nest
from qseg.segmenters.phrase_list import keeping_phrases

VOCABULARY = ["new", "york", "yankees", "tickets", "steel", "chest", "cheap", "a", "to"]
PHRASES = ["new york yankees", "york yankees tickets", "stainless steel", "chest freezers"]


def occurrences(words: tuple[str, ...], listed: list[str]) -> list[tuple[int, int]]:
    """Where each listed phrase occurs in ``words``: (first word, last word)."""
    found = []
    for phrase in listed:
        parts = tuple(phrase.split())
        for start in range(len(words) - len(parts) + 1):
            if words[start : start + len(parts)] == parts:
                found.append((start, start + len(parts) - 1))
    return found


def units(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Occurrences that share a word, joined: the units the rule keeps whole."""
    joined: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined


def whole(breaks: tuple[int, ...], spans: list[tuple[int, int]]) -> bool:
    return all(not any(breaks[start:end]) for start, end in spans)


@pytest.fixture(scope="module")
def segmenters():
    listed = TitleSet(PHRASES)
    return {
        spec: keeping_phrases(open_segmenter(spec), listed)
        for spec in ("naive", "wiki(unseen_titles=true)", "default")
    }


@settings(max_examples=60)
@given(
    words=st.lists(st.sampled_from(VOCABULARY), min_size=2, max_size=9).map(tuple),
    extra=st.lists(
        st.lists(st.sampled_from(VOCABULARY), min_size=2, max_size=4).map(" ".join), max_size=4
    ),
)
def test_a_listed_phrase_is_never_broken_in_any_answer(words, extra):
    listed = PHRASES + extra
    store = TitleSet(listed)
    spans = occurrences(words, listed)
    for spec in ("naive", "default"):
        kept = keeping_phrases(open_segmenter(spec), store)
        assert whole(kept.segment(words).breaks, spans)
        for answer, _ in kept.rank(words, 5):
            assert whole(answer.breaks, spans)
        if spec == "default" and len(words) <= 10:  # its tree: each unit of phrases a node
            nodes = nest(kept, " ".join(words)).spans
            assert all((start, end + 1) in nodes for start, end in units(spans)), nodes
        # outside the occurrences, the answer is the segmenter's own
        own = open_segmenter(spec).segment(words).breaks
        inside = {gap for start, end in spans for gap in range(start, end)}
        answer = kept.segment(words).breaks
        assert all(answer[g] == own[g] for g in range(len(own)) if g not in inside)


def test_a_trained_model_keeps_each_listed_phrase_a_node_of_its_tree(segmenters):
    kept = segmenters["default"]
    query = "cheap new york yankees tickets"
    assert kept.break_probabilities([query])[0][1:4].tolist() == [0.0] * 3
    # new york yankees and york yankees tickets overlap: one unit, a node of the tree
    assert (1, 5) in nest(kept, query).spans
    assert kept.segment(query).to_pipe().endswith("|new york yankees tickets")


def test_the_compiled_and_the_python_path_agree_with_and_without_a_list(segmenters):
    queries = [
        "cheap new york yankees tickets",
        "stainless steel chest freezers",
        "new york yankees",
        "tickets to new york",
        "a steel chest",
    ]
    compiled = open_segmenter("default")
    python = compiled.uncompiled()
    listed = TitleSet(PHRASES)
    for plain_a, plain_b in ((compiled, python),):
        assert [plain_a.segment(q) for q in queries] == [plain_b.segment(q) for q in queries]
        a, b = keeping_phrases(plain_a, listed), keeping_phrases(plain_b, listed)
        assert [a.segment(q) for q in queries] == [b.segment(q) for q in queries]
        assert list(a.segment_many(queries)) == [a.segment(q) for q in queries]
    assert segmenters["default"].segment("stainless steel chest freezers").to_pipe() == (
        "stainless steel|chest freezers"
    )


def test_overlapping_phrases_join_into_one_segment(segmenters):
    answer = segmenters["naive"].segment("cheap new york yankees tickets")
    assert answer.to_pipe() == "cheap|new york yankees tickets"


def test_a_list_is_built_once_into_the_cache_and_opened_from_there(tmp_path, monkeypatch):
    monkeypatch.setenv("QSEG_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "phrases.txt.gz"
    with gzip.open(source, "wt", encoding="utf-8") as handle:
        handle.write("New York Yankees\n\nsolo\nstainless  steel\n")
    first = phrase_list(source)
    assert sorted(first) == ["new york yankees", "stainless steel"]
    built = list((tmp_path / "cache").glob("phrases-*.qseg"))
    assert len(built) == 1
    again = phrase_list(source)
    assert again.store.path == first.store.path == built[0]
    kept = open_segmenter("naive", phrases=source)
    assert kept.segment("new york yankees tickets").to_pipe() == "new york yankees|tickets"
    assert pickle.loads(pickle.dumps(kept)).segment("stainless steel a").to_pipe() == (
        "stainless steel|a"
    )


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"new york\n" + b" ".join([b"w"] * 10_000) + b"\n", "p.txt:2: a phrase of 10000 words"),
        (b"new york\ncaf\xe9 au lait\n", "p.txt:2"),
        (b"\n\nsolo\n", "no phrase of two words or more"),
        (b"new york\tny\n", "p.txt:1: expected one phrase a line, found a tab"),
    ],
    ids=["10000-words", "not-utf8", "only-one-word", "a-tab"],
)
def test_bad_phrase_files_are_one_line_naming_them(tmp_path, content, fragment):
    path = tmp_path / "p.txt"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"p\.txt"):
        read_phrase_file(path)
    result = qseg("segment", "--phrases", path, "new york")
    assert_one_line_error(result, fragment, status=1)


def test_a_folder_or_a_missing_file_is_one_line(tmp_path):
    for path, fragment in ((tmp_path, "is a directory"), (tmp_path / "no.txt", "no such file")):
        with pytest.raises(PathError):
            phrase_list(path)
        assert_one_line_error(qseg("segment", "--phrases", path, "new york"), fragment)
    if os.geteuid() != 0:
        locked = tmp_path / "locked.txt"
        locked.write_text("new york\n")
        locked.chmod(0)
        assert_one_line_error(qseg("segment", "--phrases", locked, "a b"), "permission denied")


def test_the_command_line_and_the_service_keep_the_listed_phrases(tmp_path, write):
    phrases = write("phrases.txt", "stainless steel chest\n")
    plain = out(qseg("segment", "stainless steel chest freezers"))
    assert plain.strip() == "stainless steel|chest freezers"
    kept = out(qseg("segment", "--phrases", phrases, "stainless steel chest freezers"))
    assert kept.strip() == "stainless steel chest freezers"
    server = Server("--method", "naive", "--phrases", str(phrases))
    try:
        answer = server.http.post("/segment", json={"queries": ["stainless steel chest a"]})
        assert answer.json()["text"] == "stainless steel chest|a\n"
        ranked = server.http.post(
            "/segment", json={"queries": ["stainless steel chest a"], "k": 3, "format": "json"}
        )
        first = ranked.json()["results"][0]
        for record in first.get("ranking") or [first]:
            assert "stainless steel chest" in record["segments"]
    finally:
        assert "Traceback" not in server.stop()
    assert json.loads(out(qseg("segment", "--phrases", phrases, "--format", "json", "a b")))


@settings(max_examples=40)
@given(
    words=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=90).map(tuple),
    extra=st.lists(
        st.lists(st.sampled_from(VOCABULARY), min_size=2, max_size=5).map(" ".join), max_size=6
    ),
)
def test_the_compiled_lookup_and_the_long_query_loop_find_the_same_gaps(words, extra):
    """Queries of up to 64 words are looked up by the store's compiled loop, longer ones in
    Python: both give exactly the gaps inside the listed phrases' occurrences."""
    listed = PHRASES + extra
    kept = keeping_phrases(open_segmenter("naive"), TitleSet(listed))
    expected = sorted({g for start, end in occurrences(words, listed) for g in range(start, end)})
    assert list(kept.joined_gaps(words)) == expected
