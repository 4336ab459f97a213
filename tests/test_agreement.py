"""Krippendorff's alpha with d1/d2 and S under the random model (paper 001, section 4)."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import krippendorff
import numpy as np
import pytest
from conftest import webis_file
from hypothesis import given, settings
from hypothesis import strategies as st

from qseg.corpora.annotations import Annotation, annotations_of, read_webis_votes
from qseg.evaluation import random_model
from qseg.evaluation.agreement import (
    AgreementError,
    agreement,
    boundaries,
    by_length,
    distance,
    krippendorff_alpha,
    random_model_s,
)
from qseg.resources.default import build_tag
from qseg.segmentation import NestedSegmentation, Segmentation

WORDS = ["apply", "first", "aid", "course", "on", "line"]

# Paper 001, Table 1: frequency, boundary variables of ten flat annotations.
TABLE_1 = [(4, (1, 0, 0, 1, 0)), (3, (0, 0, 0, 1, 0)), (2, (0, 0, 1, 0, 0)), (1, (1, 0, 1, 1, 0))]
# Paper 001, Table 2 (second row with its missing bracket restored, see test_segmentation.py).
TABLE_2 = [
    (4, "((apply first) ((aid course) (on line)))", (0, 2, 0, 1, 0)),
    (2, "(((apply (first aid)) course) (on line))", (1, 0, 2, 3, 0)),
    (2, "((apply ((first aid) course)) (on line))", (2, 0, 1, 3, 0)),
    (1, "(apply (((first aid) course) (on line)))", (3, 0, 1, 2, 0)),
    (1, "((apply (first aid)) (course (on line)))", (1, 0, 2, 1, 0)),
]


def table_1() -> list[Segmentation]:
    return [Segmentation(WORDS, bits) for f, bits in TABLE_1 for _ in range(f)]


def table_2() -> list[NestedSegmentation]:
    return [NestedSegmentation.from_brackets(text) for f, text, _ in TABLE_2 for _ in range(f)]


# -- distances --------------------------------------------------------------------------------


def test_table_1_pipe_text_gives_the_boundary_variables():
    pipes = [
        "apply|first aid course|on line",
        "apply first aid course|on line",
        "apply first aid|course on line",
        "apply|first aid|course|on line",
    ]
    assert [boundaries(Segmentation.from_pipe(p)) for p in pipes] == [b for _, b in TABLE_1]


@pytest.mark.parametrize(
    "a, b, d",
    [
        (0, 1, Fraction(1, 5)),  # 10010 vs 00010
        (0, 2, Fraction(3, 5)),  # 10010 vs 00100
        (0, 3, Fraction(1, 5)),  # 10010 vs 10110
        (1, 2, Fraction(2, 5)),
        (2, 3, Fraction(2, 5)),
        (3, 3, Fraction(0)),
    ],
)
def test_flat_distance_on_table_1(a, b, d):
    x = Segmentation(WORDS, TABLE_1[a][1])
    y = Segmentation(WORDS, TABLE_1[b][1])
    assert distance(x, y) == distance(y, x) == float(d)
    assert distance(x, y, power=2) == float(d)  # d1 = d2 for flat segmentations


@pytest.mark.parametrize(
    "a, b, d1, d2",
    [
        # 02010 vs 10230: |0-1|+|2-0|+|0-2|+|1-3|+0 = 7; squares: 1+4+4+8 = 17
        (0, 1, Fraction(7, 5), Fraction(17, 5)),
        # 10230 vs 20130: 1+0+1+0+0 = 2; squares: 3+0+3+0 = 6
        (1, 2, Fraction(2, 5), Fraction(6, 5)),
        # 02010 vs 30120: 3+2+1+1 = 7; squares: 9+4+1+3 = 17
        (0, 3, Fraction(7, 5), Fraction(17, 5)),
        # 10230 vs 10210: 0+0+0+2+0 = 2; squares: 9-1 = 8
        (1, 4, Fraction(2, 5), Fraction(8, 5)),
    ],
)
def test_nested_distances_on_table_2(a, b, d1, d2):
    x = NestedSegmentation.from_brackets(TABLE_2[a][1])
    y = NestedSegmentation.from_brackets(TABLE_2[b][1])
    assert boundaries(x) == TABLE_2[a][2]
    assert distance(x, y, 1) == pytest.approx(float(d1), abs=1e-15)
    assert distance(x, y, 2) == pytest.approx(float(d2), abs=1e-15)


def test_unequal_lengths_slide_the_shorter_query_eq_6():
    # |q| = 3, |q'| = 5, r = 3. Flat: b = (1, 0), b' = (0, 1, 1, 0):
    # a=0: |1-0| + |0-1| = 2; a=1: |1-1| + |0-1| = 1; a=2: |1-1| + |0-0| = 0 -> 3 / (3 * 2)
    short = Segmentation.from_pipe("a|b c")
    long = Segmentation.from_pipe("w x|y|z v")
    assert distance(short, long) == distance(long, short) == 0.5
    # Nested: b = (1, 0), b' = (0, 2, 0, 1):
    # d1: a=0: 1 + 2 = 3; a=1: 1 + 0 = 1; a=2: 1 + 1 = 2 -> 6 / 6
    # d2: a=0: 1 + 4 = 5; a=1: 3 + 0 = 3; a=2: 1 + 1 = 2 -> 10 / 6
    short_tree = NestedSegmentation.from_brackets("(a (b c))")
    long_tree = NestedSegmentation.from_brackets("((w x) ((y z) v))")
    assert boundaries(long_tree) == (0, 2, 0, 1)
    assert distance(short_tree, long_tree, 1) == 1.0
    assert distance(long_tree, short_tree, 2) == pytest.approx(10 / 6, abs=1e-15)


def test_distance_refuses_one_word_queries_and_bad_powers():
    with pytest.raises(AgreementError, match="two words"):
        distance(Segmentation(["a"], []), Segmentation.from_pipe("a|b"))
    with pytest.raises(AgreementError, match="power"):
        distance(Segmentation.from_pipe("a|b"), Segmentation.from_pipe("a|b"), power=3)


# -- alpha ------------------------------------------------------------------------------------


def test_alpha_on_a_hand_computed_case_with_unequal_lengths():
    # Item 1 (3 words): 10, 00. Item 2 (4 words): 010, 110. N = 4.
    # Within: d(10, 00) = 1/2, d(010, 110) = 1/3 -> D_o = (2 * 1/2 + 2 * 1/3) / 4 = 5/12.
    # Across (eq. 6, r = 2, divide by 4): 10~010: 2/4, 10~110: 1/4, 00~010: 2/4, 00~110: 3/4.
    # All ordered pairs: 5/3 + 2 * 2 = 17/3 -> D_e = (17/3) / (4 * 3) = 17/36.
    # alpha = 1 - (5/12) / (17/36) = 2/17.
    items = annotations_of(
        {
            "1": [Segmentation.from_pipe("a|b c"), Segmentation.from_pipe("a b c")],
            "2": [Segmentation.from_pipe("w x|y z"), Segmentation.from_pipe("w|x|y z")],
        }
    )
    assert krippendorff_alpha(items) == pytest.approx(2 / 17, abs=1e-12)


def test_one_item_alone_has_alpha_zero():
    # With one item, the observed and the expected disagreement are the same pairs.
    assert krippendorff_alpha({"q": table_1()}) == pytest.approx(0.0, abs=1e-12)
    assert krippendorff_alpha({"q": table_2()}, power=2) == pytest.approx(0.0, abs=1e-12)


def test_perfect_agreement_is_one_and_no_variation_is_refused():
    items = {
        "1": [Segmentation.from_pipe("a|b c")] * 3,
        "2": [Segmentation.from_pipe("x y|z")] * 2,
    }
    assert krippendorff_alpha(items) == 1.0
    with pytest.raises(AgreementError, match="undefined"):
        krippendorff_alpha({"1": [Segmentation.from_pipe("a|b")] * 2})


def test_items_without_pairs_are_left_out_and_mismatched_words_refused():
    items = {
        "1": table_1(),
        "lonely": [Segmentation.from_pipe("x|y")],
        "one word": [Segmentation(["x"], []), Segmentation(["x"], [])],
    }
    result = agreement(items, replicates=10)
    assert (result.items, result.excluded_items, result.annotations) == (1, 2, 10)
    with pytest.raises(AgreementError, match="'bad'"):
        krippendorff_alpha({"bad": [Segmentation.from_pipe("a|b"), Segmentation.from_pipe("a|c")]})
    with pytest.raises(AgreementError, match="no item"):
        krippendorff_alpha({"lonely": [Segmentation.from_pipe("x|y")]})


def brute_force_alpha(items: dict[str, list], power: int) -> float:
    """Eq. 1-3 (general form) written out pair by pair with :func:`distance`."""
    used = [v for v in items.values() if len(v) >= 2 and len(v[0].words) >= 2]
    values = [s for v in used for s in v]
    n = len(values)
    observed = sum(
        sum(distance(x, y, power) for x, y in itertools.permutations(v, 2)) / (len(v) - 1)
        for v in used
    )
    expected = sum(distance(x, y, power) for x, y in itertools.permutations(values, 2))
    return 1 - (n - 1) * observed / expected


@st.composite
def item_sets(draw):
    nested = draw(st.booleans())
    items = {}
    for i in range(draw(st.integers(2, 6))):
        n = draw(st.integers(2, 6))
        words = [f"w{j}" for j in range(n)]
        annotations = []
        for _ in range(draw(st.integers(1, 5))):
            if nested:
                heights = random_model.binary_trees(n)
                row = heights[draw(st.integers(0, len(heights) - 1))]
                annotations.append(NestedSegmentation(words, [int(h) for h in row]))
            else:
                bits = draw(st.lists(st.integers(0, 1), min_size=n - 1, max_size=n - 1))
                annotations.append(Segmentation(words, bits))
        items[str(i)] = annotations
    return items


@settings(max_examples=150, deadline=None)
@given(item_sets(), st.sampled_from([1, 2]))
def test_alpha_equals_the_equations_written_out_pair_by_pair(items, power):
    try:
        expected = brute_force_alpha(items, power)
    except ZeroDivisionError:
        with pytest.raises(AgreementError):
            krippendorff_alpha(items, power)
        return
    assert krippendorff_alpha(items, power) == pytest.approx(expected, abs=1e-9)


def package_alpha(items: dict[str, list[Segmentation]]) -> float:
    """The ``krippendorff`` package on the same items: each distinct break vector a code, d1 as
    a callable on codes."""
    domain = sorted({s.breaks for v in items.values() for s in v})
    code = {breaks: i for i, breaks in enumerate(domain)}
    vectors = np.array(domain, dtype=float)
    width = max(len(v) for v in items.values())
    data = np.full((width, len(items)), np.nan)
    for u, annots in enumerate(items.values()):
        for j, s in enumerate(annots):
            data[j, u] = code[s.breaks]

    def d1(v1, v2, i1, i2, n_v, dtype=np.float64):
        a, b = np.asarray(v1, dtype=int), np.asarray(v2, dtype=int)
        return np.abs(vectors[a] - vectors[b]).mean(axis=-1).astype(dtype)

    return float(
        krippendorff.alpha(
            reliability_data=data,
            value_domain=list(range(len(domain))),
            level_of_measurement=d1,
        )
    )


def test_alpha_equals_the_krippendorff_package_on_random_equal_length_items():
    rng = np.random.default_rng(7)
    for n in (3, 5, 8):
        words = [f"w{j}" for j in range(n)]
        items = {
            str(u): [
                Segmentation(words, [int(b) for b in rng.integers(0, 2, n - 1)])
                for _ in range(rng.integers(2, 7))
            ]
            for u in range(40)
        }
        assert krippendorff_alpha(items) == pytest.approx(package_alpha(items), abs=1e-9)


def test_alpha_equals_the_krippendorff_package_on_webis_queries_of_each_length():
    votes = read_webis_votes(
        webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt")
    )
    for n, group in by_length(votes).items():
        items = {key: [a.segmentation for a in annots] for key, annots in group.items()}
        assert krippendorff_alpha(items) == pytest.approx(package_alpha(items), abs=1e-9), n


# -- S ----------------------------------------------------------------------------------------


def test_s_on_table_1_by_hand():
    # Hamming distances between the four distinct annotations (frequencies 4, 3, 2, 1):
    # A-B 1, A-C 3, A-D 1, B-C 2, B-D 2, C-D 2. Under the random model of 6 words,
    # P(total >= t) = sum_{j >= t} C(5, j) / 32: 1, 31/32, 26/32, 16/32, ...
    # The 30 ordered pairs of equal annotations (m = n included) count 1 each:
    # S = (30 + (24 + 8) * 31/32 + 16 * 16/32 + (12 + 6 + 4) * 26/32) / 100 = 0.86875.
    assert random_model_s({"q": table_1()}) == pytest.approx(0.86875, abs=1e-12)


def test_s_on_table_2_by_enumerating_the_trees_directly():
    trees = [
        NestedSegmentation(WORDS, [int(h) for h in row]) for row in random_model.binary_trees(6)
    ]
    annotations = table_2()
    for power in (1, 2):
        expected = np.mean(
            [
                np.mean(
                    [
                        distance(s, t, power) >= distance(a, b, power) - 1e-12
                        for s in trees
                        for t in trees
                    ]
                )
                for a in annotations
                for b in annotations
            ]
        )
        assert random_model_s({"q": annotations}, power) == pytest.approx(expected, abs=1e-12)


def test_s_refuses_items_beyond_the_nested_model():
    n = random_model.MAX_NESTED_WORDS + 1
    words = [f"w{i}" for i in range(n)]
    tree = NestedSegmentation(words, list(range(n - 1)))
    with pytest.raises(AgreementError, match="random model"):
        random_model_s({"long": [tree, tree]})
    result = agreement(
        {"long": [tree, NestedSegmentation(words, list(range(n - 2, -1, -1)))]}, replicates=5
    )
    assert result.s is None and result.s_items == 0


# -- bootstrap --------------------------------------------------------------------------------


def test_bootstrap_intervals_hold_the_estimates_and_are_reproducible():
    rng = np.random.default_rng(3)
    words = [f"w{j}" for j in range(5)]
    items = {
        str(u): [
            Segmentation(words, [int(b) for b in (rng.random(4) < 0.2 + 0.6 * (u % 2))])
            for _ in range(6)
        ]
        for u in range(60)
    }
    first = agreement(items, replicates=300, seed=1)
    assert first.alpha == pytest.approx(krippendorff_alpha(items), abs=1e-12)
    assert first.s == pytest.approx(random_model_s(items), abs=1e-12)
    assert first.alpha_ci[0] < first.alpha < first.alpha_ci[1]
    assert first.s_ci is not None and first.s_ci[0] < first.s < first.s_ci[1]
    assert agreement(items, replicates=300, seed=1) == first
    narrow = agreement(items, replicates=300, seed=1, confidence=0.5)
    assert first.alpha_ci[0] < narrow.alpha_ci[0] < narrow.alpha_ci[1] < first.alpha_ci[1]


def test_annotation_objects_and_plain_segmentations_give_the_same_result():
    plain = {"q": table_1(), "r": table_1()[:4]}
    wrapped = {k: [Annotation(str(i), s) for i, s in enumerate(v)] for k, v in plain.items()}
    assert krippendorff_alpha(plain) == krippendorff_alpha(wrapped)


# -- the random model -------------------------------------------------------------------------


def test_table_5_expected_heights_are_reproduced_exactly():
    # Paper 001, Table 5, column "Expected" for lengths 5-8.
    paper = {5: 2.57, 6: 3.24, 7: 3.88, 8: 4.47}
    assert {n: round(float(random_model.expected_height(n)), 2) for n in paper} == paper
    assert random_model.expected_height(5) == Fraction(18, 7)  # heights 2 (x10), 3 (x4) ...
    assert random_model.expected_height(3) == 1


def catalan(k: int) -> int:
    return comb(2 * k, k) // (k + 1)


@pytest.mark.parametrize("n", range(2, 12))
def test_all_binary_trees_are_enumerated_once(n):
    trees = random_model.binary_trees(n)
    assert len(trees) == catalan(n - 1)
    assert len({row.tobytes() for row in trees}) == len(trees)
    if n <= 8:
        for row in trees:
            assert NestedSegmentation([f"w{i}" for i in range(n)], [int(h) for h in row]).is_binary


@pytest.mark.parametrize("n", range(2, 9))
def test_flat_pair_counts_are_binomial_and_match_brute_force(n):
    counts = random_model.pair_counts(n, "flat")
    assert counts.tolist() == [2 ** (n - 1) * comb(n - 1, t) for t in range(n)]
    vectors = list(itertools.product((0, 1), repeat=n - 1))
    brute = np.bincount(
        [sum(a != b for a, b in zip(x, y, strict=True)) for x in vectors for y in vectors],
        minlength=n,
    )
    assert counts.tolist() == brute.tolist()


@pytest.mark.parametrize("n", range(2, 8))
@pytest.mark.parametrize("power", [1, 2])
def test_nested_pair_counts_match_brute_force(n, power):
    trees = [tuple(int(h) for h in row) for row in random_model.binary_trees(n)]
    totals = [
        sum(abs(a**power - b**power) for a, b in zip(x, y, strict=True))
        for x in trees
        for y in trees
    ]
    counts = random_model.pair_counts(n, "nested", power)
    assert counts.tolist() == np.bincount(totals, minlength=len(counts)).tolist()


def test_distributions_and_survival():
    dist = random_model.distribution(4, "flat")
    assert dist == [
        (Fraction(0), Fraction(1, 8)),
        (Fraction(1, 3), Fraction(3, 8)),
        (Fraction(2, 3), Fraction(3, 8)),
        (Fraction(1), Fraction(1, 8)),
    ]
    for n in (5, 9):
        for kind in random_model.KINDS:
            assert sum(p for _, p in random_model.distribution(n, kind, 2)) == 1
            tail = random_model.survival(n, kind, 1)
            assert tail[0] == 1 and tail[-1] == 0 and np.all(np.diff(tail) <= 0)


def test_nested_counts_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("QSEG_CACHE", str(tmp_path))
    random_model._nested_counts.cache_clear()
    try:
        counts = random_model.pair_counts(7, "nested", 2)
        path = tmp_path / "agreement" / f"nested-d2-7-v1-{build_tag()}.json"  # qseg's release
        assert path.exists()
        path.write_text("[1, 2, 3]")  # what is on disk is what is used
        random_model._nested_counts.cache_clear()
        assert random_model.pair_counts(7, "nested", 2).tolist() == [1, 2, 3]
        path.write_text("not json")  # a damaged file is computed again
        random_model._nested_counts.cache_clear()
        assert random_model.pair_counts(7, "nested", 2).tolist() == counts.tolist()
    finally:
        random_model._nested_counts.cache_clear()


@pytest.mark.parametrize(
    "n, kind, power, message",
    [
        (1, "flat", 1, "2 to 25"),
        (12, "nested", 1, "2 to 11"),
        (5, "tree", 1, "unknown kind"),
        (5, "flat", 3, "power"),
    ],
)
def test_random_model_limits(n, kind, power, message):
    with pytest.raises(random_model.RandomModelError, match=message):
        random_model.pair_counts(n, kind, power)
