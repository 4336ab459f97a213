"""``qseg select`` and the uncertainty measures (issue 67, item 2): the queries a model is
least sure of, least sure first, each line as read."""

from __future__ import annotations

import math

import pytest
from helpers import assert_one_line_error, out, qseg

from qseg.errors import QsegError
from qseg.models import open_segmenter
from qseg.query import normalize
from qseg.segmenters.uncertainty import MEASURES, most_uncertain, uncertainties

QUERIES = [
    "new york yankees tickets",
    "cheap flights",
    "paris",
    "stainless steel chest freezers",
    "black and decker edge hog replacement blade",
    "how to tie a tie",
    "harry potter and the goblet of fire",
]


def test_the_margin_is_the_gap_between_the_two_best_scores():
    model = open_segmenter("default")
    words = [normalize(q) for q in QUERIES]
    found = uncertainties(model, words, "margin")
    for value, query in zip(found, words, strict=True):
        if len(query) == 1:
            assert value == -math.inf  # nothing to choose
            continue
        (_, best), (_, second) = model.rank(query, 2)
        assert value == pytest.approx(-(best - second))
    order = most_uncertain(model, words, None, "margin")
    assert sorted(order) == list(range(len(words)))
    assert [found[i] for i in order] == sorted(found, reverse=True)


def test_the_entropy_sums_the_gaps_and_needs_break_probabilities():
    model = open_segmenter("default")
    words = [normalize(q) for q in QUERIES]
    found = uncertainties(model, words, "entropy")
    p = model.break_probabilities([words[0]])[0]
    entropy = -sum(x * math.log(x) + (1 - x) * math.log(1 - x) for x in p)
    assert found[0] == pytest.approx(entropy)
    assert found[2] == -math.inf  # one word: no gap
    with pytest.raises(QsegError, match="gives no break probabilities"):
        uncertainties(open_segmenter("naive"), words, "entropy")
    with pytest.raises(QsegError, match="unknown measure"):
        uncertainties(model, words, "votes")
    assert MEASURES[0] == "entropy"


def test_select_prints_the_least_sure_queries_as_read(write):
    lines = [f"q{i}\t{q}" if i % 2 else q for i, q in enumerate(QUERIES)]
    queries = write("queries.txt", "\n".join(lines) + "\n")
    printed = out(qseg("select", "--queries", queries, "-n", "3", "--quiet")).splitlines()
    model = open_segmenter("default")
    expected = most_uncertain(model, [normalize(q) for q in QUERIES], 3, "entropy")
    assert printed == [lines[i] for i in expected]
    everything = out(qseg("select", "--queries", queries, "-n", "100", "--measure", "margin",
                          "--quiet")).splitlines()  # fmt: skip
    assert sorted(everything) == sorted(lines)
    assert everything[-1] == "paris"  # one word: the surest


def test_select_refuses_bad_input_in_one_line(write):
    bad = write("bad.txt", "new york\n\ncheap flights\n")
    assert_one_line_error(qseg("select", "--queries", bad, "-n", "1"), "bad.txt:2", status=1)
    good = write("good.txt", "new york\n")
    assert_one_line_error(qseg("select", "--queries", good, "-n", "0"), "-n")
    refused = qseg(
        "select", "--queries", good, "-n", "1", "--model", "naive", "--measure", "entropy"
    )
    assert_one_line_error(refused, "gives no break probabilities")
