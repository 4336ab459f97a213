import pytest

from qseg.corpora import Reference
from qseg.errors import QsegError
from qseg.evaluation import aggregate, choose_reference, evaluate, majority_stability, match
from qseg.segmentation import Segmentation


def seg(text):
    return Segmentation.from_pipe(text)


def test_san_jose_yellow_pages():
    """Paper 003, section 6.1: the worked example of every measure."""
    m = match("q", seg("san jose|yellow|pages"), seg("san jose|yellow pages"))
    assert m.correct is False
    assert m.segment_recall == 0.5
    assert m.segment_precision == pytest.approx(1 / 3)
    assert m.segment_f1 == pytest.approx(0.4)
    assert m.break_accuracy == pytest.approx(2 / 3)


def test_identical_segmentations_score_one_everywhere():
    m = match("q", seg("new york|yankees"), seg("new york|yankees"))
    assert (m.correct, m.segment_precision, m.segment_recall, m.break_accuracy) == (
        True,
        1.0,
        1.0,
        1.0,
    )


def test_aggregates_pool_segments_and_gaps():
    a = match("1", seg("a b|c"), seg("a b|c"))  # 2/2 segments, 2/2 gaps
    b = match("2", seg("a|b|c|d|e"), seg("a b c d e"))  # 0/5 vs 0/1, 0/4 gaps
    scores = aggregate("sys", [a, b])
    assert scores.queries == 2
    assert scores.query_accuracy == 0.5
    assert scores.segment_precision == pytest.approx(2 / 7)
    assert scores.segment_recall == pytest.approx(2 / 3)
    assert scores.segment_f1 == pytest.approx(2 * (2 / 7) * (2 / 3) / (2 / 7 + 2 / 3))
    assert scores.break_accuracy == pytest.approx(2 / 6)


def test_comparing_different_queries_is_an_error():
    with pytest.raises(QsegError, match="query 7: system segmented 'a b' but the reference"):
        match("7", seg("a b"), seg("a c"))


REFS = [
    Reference(seg("a b|c d"), 4),
    Reference(seg("a|b|c d"), 4),
    Reference(seg("a b c d"), 2),
]


def test_majority_takes_the_most_votes_and_the_first_listed_on_ties():
    assert choose_reference("majority", REFS) == seg("a b|c d")
    assert choose_reference("majority", REFS[1:]) == seg("a|b|c d")


def test_best_of_takes_the_reference_closest_in_break_accuracy():
    assert choose_reference("best-of", REFS, seg("a|b|c|d")) == seg("a|b|c d")
    assert choose_reference("best-of", REFS, seg("a b c|d")) == seg("a b c d")
    # a|b c d agrees with a|b|c d and with a b c d on 2 of 3 gaps: more votes win
    assert choose_reference("best-of", REFS, seg("a|b c d")) == seg("a|b|c d")
    with pytest.raises(QsegError, match="needs a system segmentation"):
        choose_reference("best-of", REFS)


def test_all_agree_keeps_only_unanimous_queries():
    assert choose_reference("all-agree", REFS) is None
    assert choose_reference("all-agree", [Reference(seg("a b"), 10)]) == seg("a b")


def test_evaluate_several_systems_under_each_protocol():
    gold = {"1": REFS, "2": [Reference(seg("x y"), 10)]}
    systems = {
        "never": {"1": seg("a b c d"), "2": seg("x y")},
        "always": {"1": seg("a|b|c|d"), "2": seg("x|y")},
    }
    majority = {r.system: r for r in evaluate(systems, gold, "majority")}
    assert majority["never"].query_accuracy == 0.5
    assert majority["never"].break_accuracy == pytest.approx(3 / 4)
    best = {r.system: r for r in evaluate(systems, gold, "best-of")}
    assert best["never"].query_accuracy == 1.0
    assert best["always"].break_accuracy == pytest.approx(2 / 4)
    agree = evaluate(systems, gold, "all-agree")
    assert [(r.system, r.queries, r.query_accuracy) for r in agree] == [
        ("never", 1, 1.0),
        ("always", 1, 0.0),
    ]


def test_a_missing_system_output_is_an_error():
    with pytest.raises(QsegError, match="system s has no segmentation for query 2"):
        evaluate({"s": {"1": seg("a b c d")}}, {"1": REFS, "2": REFS})
    with pytest.raises(QsegError, match="unknown protocol"):
        evaluate({}, {}, "best")


def test_majority_stability_of_a_unanimous_and_a_split_crowd():
    """A 5-5 split between "a b|c" (listed first, so the observed majority) and "a b c": a
    second crowd of ten keeps "a b|c" (which sorts last, so it also wins a tie) when it gets at
    least 5 votes, P = 638/1024 (binomial), and otherwise agrees on one of the two gaps; a
    unanimous query is always reproduced."""
    split = {"q": [Reference(seg("a b|c"), 5), Reference(seg("a b c"), 5)]}
    kept = 638 / 1024
    breaks, queries = majority_stability(split, draws=40_000, seed=1)
    assert queries == pytest.approx(kept, abs=0.01)
    assert breaks == pytest.approx((2 * kept + 1 * (1 - kept)) / 2, abs=0.01)
    # listed first but sorting first, "a b c" keeps a tie from nobody: it needs 6 votes
    flipped = {"q": [Reference(seg("a b c"), 5), Reference(seg("a b|c"), 5)]}
    assert majority_stability(flipped, draws=40_000, seed=1)[1] == pytest.approx(
        386 / 1024, abs=0.01
    )
    unanimous = {"q": [Reference(seg("a|b c"), 10)], "r": [Reference(seg("x y"), 10)]}
    assert majority_stability(unanimous, draws=10) == (1.0, 1.0)
    both = {**split, "r": [Reference(seg("x y"), 10)]}
    assert majority_stability(both, draws=40_000, seed=1)[1] == pytest.approx(
        (kept + 1) / 2, abs=0.01
    )
    with pytest.raises(QsegError, match="draws must be at least 1"):
        majority_stability(split, draws=0)
    with pytest.raises(QsegError, match="references of query q have no votes"):
        majority_stability({"q": [Reference(seg("a b"), 0)]})
    with pytest.raises(QsegError, match="no queries"):
        majority_stability({})
