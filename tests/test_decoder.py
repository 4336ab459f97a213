"""The exact decoder against brute force over all 2^(n-1) segmentations."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qseg.errors import QsegError
from qseg.segmenters.decoder import best_breaks, kbest_breaks, kbest_gaps, score_breaks


@st.composite
def weight_tables(draw):
    """A random query length and weights; 0 (not allowed) is common, ties are common."""
    n = draw(st.integers(1, 9))
    table = []
    for i in range(n - 1):
        row = []
        for end in range(i + 2, n + 1):
            weight = draw(st.sampled_from([0, 0, 1, 2, 3, 5, 8, 10**12]))
            if weight:
                row.append((end, weight))
        table.append(row)
    return n, table


def brute_force(n, table):
    """Every segmentation scored by paper 003's definition, best first, ties by break vector."""
    weights = {(i, end): w for i, row in enumerate(table) for end, w in row}
    scored = []
    for breaks in itertools.product((0, 1), repeat=n - 1):
        cuts = [0] + [i + 1 for i, b in enumerate(breaks) if b] + [n]
        multi = [(a, b) for a, b in itertools.pairwise(cuts) if b - a >= 2]
        allowed = all((a, b) in weights for a, b in multi)
        score = sum(weights[s] for s in multi) if allowed else -1
        scored.append((score, breaks))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return scored


@given(weight_tables())
def test_best_equals_brute_force(case):
    n, table = case
    assert best_breaks(table, n) == brute_force(n, table)[0]


@given(weight_tables(), st.integers(1, 12))
def test_k_best_equals_brute_force_over_valid_segmentations(case, k):
    n, table = case
    valid = [item for item in brute_force(n, table) if item[0] >= 0]
    assert kbest_breaks(table, n, k) == valid[:k]


@given(weight_tables())
def test_score_matches_the_definition_for_every_segmentation(case):
    n, table = case
    for score, breaks in brute_force(n, table):
        assert score_breaks(table, breaks) == score


def test_ties_prefer_the_longer_first_segment():
    # a b c: "a b"|c and a|"b c" both score 5
    table = [[(2, 5)], [(3, 5)]]
    assert best_breaks(table, 3) == (5, (0, 1))
    assert kbest_breaks(table, 3, 3) == [(5, (0, 1)), (5, (1, 0)), (0, (1, 1))]


def test_k_must_be_positive():
    with pytest.raises(QsegError, match="k must be a whole number of at least 1"):
        kbest_breaks([], 1, 0)


@st.composite
def gap_scores(draw):
    """Per gap a score with and without a break; ties, zeros and -inf are common."""
    n = draw(st.integers(0, 8))
    value = st.one_of(
        st.sampled_from([0.0, -1.0, 0.5, float("-inf")]),
        st.floats(-5, 5, allow_nan=False),
    )
    return [draw(value) for _ in range(n)], [draw(value) for _ in range(n)]


@given(gap_scores(), st.integers(1, 300))
def test_kbest_gaps_equals_brute_force(scores, k):
    """The k best break vectors under independent gap scores, as brute force finds them."""
    if_break, if_not = scores
    n = len(if_break)
    every = sorted(
        (sum(if_break[g] if bit else if_not[g] for g, bit in enumerate(bits)) for bits in
         itertools.product((0, 1), repeat=n)),
        reverse=True,
    )  # fmt: skip
    ranked = kbest_gaps(if_break, if_not, k)
    assert len(ranked) == min(k, 2**n)
    assert len({bits for _, bits in ranked}) == len(ranked)
    assert [score for score, _ in ranked] == pytest.approx(every[: len(ranked)])
    best = tuple(int(if_break[g] > if_not[g]) for g in range(n))  # no break on a tie
    assert ranked[0][1] == best
