"""The query-log method (Mishra et al. 2011; paper 000's Wiki-Boost and Seg-Phase-2) on logs
small enough to work every figure out by hand."""

from __future__ import annotations

import math

import pytest

from qseg.errors import InputError, QsegError
from qseg.resources.bundle import Resources
from qseg.resources.querylog import QueryLog
from qseg.resources.titles import TitleSet
from qseg.segmentation import NestedSegmentation, Segmentation
from qseg.segmenters.nesting import nest, split_tree
from qseg.segmenters.registry import create
from qseg.segmenters.rules.querylog import QueryLogSegmenter
from qseg.segmenters.spec import SpecError

LOG = ["new york hotels", "hotels new york", "New York", "york new", ("cheap hotels", 3)]
# 16 word tokens: new 4, york 4, hotels 5, cheap 3; "new york" 3 times


@pytest.fixture(scope="module")
def log() -> QueryLog:
    return QueryLog(LOG)


def seg(text: str) -> Segmentation:
    return Segmentation.from_pipe(text)


def test_statistics_of_an_ngram(log):
    stats = log.stats(("new", "york"))
    # four queries hold both words; three in order; by chance 1/3 + 1/3 + 1/2 + 1/2
    assert (stats.together, stats.contiguous, stats.count) == (4, 3, 3)
    assert stats.expected == pytest.approx(5 / 3)
    assert stats.significance == pytest.approx(2 * (3 - 5 / 3) ** 2 / 4)  # 8/9
    cheap = log.stats(("cheap", "hotels"))  # one query counted 3 times
    assert (cheap.together, cheap.contiguous, cheap.expected) == (3, 3, 1.5)
    assert cheap.significance == pytest.approx(1.5)
    assert log.stats(("york", "new", "hotels")).contiguous == 0
    assert log.stats(("york", "new", "hotels")).significance == 0.0
    assert log.stats(("new", "paris")) == log.stats(("paris",))
    assert log.count(("paris",)) == 0
    assert (log.total_tokens, log.queries, log.distinct_queries) == (16, 7, 5)
    assert log.count(("hotels",)) / log.total_tokens == 5 / 16


def test_repeated_words_need_as_many_in_the_query_and_count_by_their_arrangements():
    log = QueryLog(["a a b", "a b"])
    twice = log.stats(("a", "a"))
    assert (twice.together, twice.contiguous, twice.count) == (1, 1, 1)
    assert twice.expected == pytest.approx(2 / 3)  # 2 of the 3 orders of a, a, b
    pair = log.stats(("a", "b"))
    assert (pair.together, pair.contiguous) == (2, 2)
    assert pair.expected == pytest.approx(2 / 3 + 1 / 2)
    # shuffling "ha ha" changes nothing: no excess over chance, never significant
    laughs = QueryLog(["ha ha"] * 10).stats(("ha", "ha"))
    assert (laughs.contiguous, laughs.expected, laughs.significance) == (10, 10.0, 0.0)
    # "new york" is in 24 of the 60 orders of "new york to new jersey"
    trips = QueryLog(["new york to new jersey"] * 3 + ["new jersey to new york"] * 3)
    assert trips.stats(("new", "york")).expected == pytest.approx(6 * 24 / 60)


def test_reading_a_log_file(write):
    path = write("log.txt", "New York hotels\t2\n\n  \nparis\t0\nnew york\n")
    log = QueryLog.from_file(path)
    assert (log.queries, log.distinct_queries) == (3, 2)
    assert log.count(("new", "york")) == 3
    assert log.source == str(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "log.txt: no usable queries (every line is blank or has count 0)"),
        ("new york\t3000000000000000000\n", "log.txt: the counts add up to 6000000000000000000"),
        ("\n \nparis\t0\n", "log.txt: no usable queries"),
        ("new york\t1.5\n", "log.txt:1: count '1.5' after the last tab"),
    ],
)
def test_a_log_without_usable_lines_is_refused(write, content, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        QueryLog.from_file(write("log.txt", content))


def test_seg_phase_1_maximizes_the_sum_of_significant_scores(log):
    every = QueryLogSegmenter(log, wiki=False, delta=1.0)  # every n-gram with N > E may join
    # new york 8/9; york hotels: N 1, E 2/3, k 2 -> 1/9; new york hotels: N 1, E 1/3, k 2 -> 4/9
    ranked = every.rank("new york hotels", 10)
    assert [(str(s), round(v, 6)) for s, v in ranked] == [
        ("new york|hotels", round(8 / 9, 6)),
        ("new york hotels", round(4 / 9, 6)),
        ("new|york hotels", round(1 / 9, 6)),
        ("new|york|hotels", 0.0),
    ]
    assert every.score(seg("new york hotels")) == pytest.approx(4 / 9)
    # delta = exp(-1/2): only new york (8/9 >= 1/2) is significant
    strict = QueryLogSegmenter(log, wiki=False, delta=math.exp(-0.5))
    assert [str(s) for s, _ in strict.rank("new york hotels", 10)] == [
        "new york|hotels",
        "new|york|hotels",
    ]
    assert strict.score(seg("new york hotels")) is None
    assert QueryLogSegmenter(log, wiki=False, delta=math.exp(-1)).segment("new york hotels") == seg(
        "new|york|hotels"
    )


def test_wiki_boost_joins_segments_into_a_title(log):
    titles = TitleSet(["new york hotels", "york hotels"])
    method = QueryLogSegmenter(log, titles, delta=math.exp(-0.5))
    # Seg-Phase-1: new york | hotels. The title "new york hotels" is itself segmented
    # new york | hotels: PMI = 1 * 16 / (3 * 5). Apart: "new york" scores its word PMI
    # 3 * 16 / (4 * 4) = 3, "hotels" its probability 5/16.
    ranked = method.rank("new york hotels", 5)
    assert [str(s) for s, _ in ranked] == ["new york hotels", "new york|hotels"]
    assert ranked[0][1] == pytest.approx(math.log(16 / 15))
    assert ranked[1][1] == pytest.approx(math.log(3 * 5 / 16))
    assert method.score(seg("new york hotels")) == pytest.approx(ranked[0][1])
    assert method.score(seg("new|york hotels")) is None  # not a coarsening of Seg-Phase-1
    assert method.segment("cheap new york hotels") == seg("cheap|new york hotels")


def test_a_title_never_seen_in_the_log_is_not_joined(log):
    method = QueryLogSegmenter(log, TitleSet(["hotels cheap"]), delta=math.exp(-0.5))
    assert method.segment("hotels cheap") == seg("hotels|cheap")


def test_the_nested_output_joins_phase_1_then_phase_2(log):
    method = QueryLogSegmenter(log, TitleSet(["new york hotels"]), delta=math.exp(-0.5))
    assert nest(method, "cheap new york hotels") == NestedSegmentation.from_brackets(
        "(cheap ((new york) hotels))"
    )
    assert nest(method, "hotels") == NestedSegmentation.from_brackets("hotels")


def test_the_nested_output_is_the_methods_own_not_huang_splitting():
    # nothing significant: every gap is between Seg-Phase-2 segments, and the pairs join in
    # order of their PMI in the log: x y (5 * 15 / (5 * 6)), then y z (15 / (6 * 3)), w x never
    log = QueryLog([*["x y"] * 5, "y z", "z", "z", "w"])
    method = QueryLogSegmenter(log, wiki=False, delta=1e-300)
    own = nest(method, "w x y z")
    assert own == NestedSegmentation.from_brackets("(w ((x y) z))")
    assert split_tree(method, "w x y z") != own


def test_wiki_boost_needs_multiword_titles(log, write):
    path = write("titles.txt", "paris\nlondon\n")
    with pytest.raises(InputError, match=r"titles.txt: no multiword titles"):
        QueryLogSegmenter(log, TitleSet.from_file(path))
    assert QueryLogSegmenter(log, TitleSet.from_file(path), wiki=False).segment("new york")


def test_the_registry_builds_it_from_resources(log):
    method = create("querylog(delta=0.5)", Resources(query_log=log, titles=TitleSet(["a b"])))
    assert method.spec == "querylog(delta=0.5)"
    with pytest.raises(QsegError, match="needs a query log: give `query_log=FILE`"):
        create("querylog", Resources())
    with pytest.raises(SpecError, match=r"querylog: delta must be in \(0, 1\], not 0.0"):
        create("querylog(delta=0)", Resources(query_log=log, titles=TitleSet(["a b"])))
