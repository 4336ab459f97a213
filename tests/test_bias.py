"""Annotation-bias statistics (paper 001, section 6) and agreement of relevance judges."""

from __future__ import annotations

import krippendorff
import pytest
from conftest import SHARED
from helpers import KRIPPENDORFF_2011

from qseg.corpora.annotations import annotations_of, read_judgments
from qseg.evaluation.bias import (
    POSITIONS,
    bias_statistics,
    bias_tables,
    plot_bias,
    random_spread,
)
from qseg.evaluation.judge_agreement import label_agreement
from qseg.segmentation import NestedSegmentation, Segmentation


def flat(*pipes: str) -> list[Segmentation]:
    return [Segmentation.from_pipe(p) for p in pipes]


def test_segment_counts_and_spreads():
    stats = bias_statistics(
        annotations_of(
            {
                "a": flat("a b c|d e f g", "a b|c d e f g", "a b c d e f g"),
                "b": flat("x|y|z", "x y|z"),
            }
        )
    )
    assert stats.segments == {7: {2: 2, 1: 1}, 3: {3: 1, 2: 1}}
    # paper 001: 3 + 4 words give sd 0.5, 2 + 5 give 1.5
    assert sorted(stats.spreads[2]) == [(3, 0.5), (7, 0.5), (7, 1.5)]
    assert stats.spreads[3] == [(3, 0.0)]


def test_random_spread_is_the_mean_over_all_segmentations():
    # 7 words in 2 segments: 1+6, 2+5, 3+4, 4+3, 5+2, 6+1 -> sd 2.5, 1.5, 0.5, 0.5, 1.5, 2.5
    assert random_spread(7, 2) == pytest.approx(1.5)
    # 3 words in 3 segments: only 1+1+1
    assert random_spread(3, 3) == 0.0


def test_preposition_positions():
    stats = bias_statistics(
        annotations_of(
            {
                "1": flat("how to|choose a bike size"),  # 'to': after it only -> right
                "2": flat("birthday party ideas|for one year old"),  # 'for': before -> left
                "3": flat("flights to"),  # at the end -> edge
                "4": flat("lord|of|the rings", "lord of the rings"),  # both, none
            }
        )
    )
    assert stats.prepositions == {
        "to": {"right": 1, "edge": 1},
        "for": {"left": 1},
        "of": {"both": 1, "none": 1},
    }
    _, _, rows = next(t for t in bias_tables(stats) if "Table 6" in t[0])
    assert [r[0] for r in rows] == list(POSITIONS)
    assert {r[0]: r[1:] for r in rows}["right"] == ["1", "20.0"]


def test_tree_heights_against_the_random_expectation():
    words = [f"w{i}" for i in range(5)]
    trees = [
        NestedSegmentation.from_tree(((words[0], words[1]), (words[2], (words[3], words[4])))),
        NestedSegmentation(words, [0, 1, 2, 3]),
    ]
    stats = bias_statistics(annotations_of({"q": trees, "r": flat("a|b")}))
    assert stats.heights == {5: {2: 1, 3: 1}}
    _, _, rows = next(t for t in bias_tables(stats) if "Table 5" in t[0])
    assert rows == [["5", "2", "2.50", "2.57"]]


def test_plots_are_written_whole(tmp_path):
    stats = bias_statistics(
        annotations_of(
            {
                "a": flat("new york|yankees", "new|york|yankees"),
                "b": [NestedSegmentation.from_brackets("((a b) c)")] * 2,
                "c": flat("flights|to|new york"),
            }
        )
    )
    paths = plot_bias(stats, tmp_path / "plots", prefix="x-")
    assert sorted(p.name for p in paths) == [
        "x-prepositions.png",
        "x-segment-length-sd.png",
        "x-segments-by-length.png",
        "x-tree-heights.png",
    ]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == sorted(p.name for p in paths)


# -- relevance judges -------------------------------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with four
# observers and twelve units, and its published alphas: nominal .743, ordinal .815,
# interval .849.


@pytest.mark.parametrize(
    "level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_judge_alpha_reproduces_krippendorffs_published_example(write, level, published):
    judgments = read_judgments(write("k.tsv", KRIPPENDORFF_2011))
    result = label_agreement(judgments, level, replicates=200)
    assert round(result.alpha, 3) == published
    assert result.items == 11  # unit 12 has a single grade
    low, high = result.alpha_ci
    assert low <= result.alpha <= high


def test_judge_pairs(write):
    judgments = read_judgments(write("k.tsv", KRIPPENDORFF_2011))
    pairs = {p.judges: p for p in label_agreement(judgments, replicates=10).pairs}
    assert len(pairs) == 6
    ab = pairs[("judgeA", "judgeB")]
    # units 1-9 graded by both; they differ only on unit 6 (1 vs 2)
    assert ab.items == 9 and ab.agreement == pytest.approx(8 / 9)
    # Cohen's kappa by hand: p_o = 8/9; A's grades 1,2,3,3,2,1,4,1,2 and B's 1,2,3,3,2,2,4,1,2
    # marginals A: 1:3, 2:3, 3:2, 4:1; B: 1:2, 2:4, 3:2, 4:1 -> p_e = (6 + 12 + 4 + 1) / 81
    p_e = 23 / 81
    assert ab.kappa == pytest.approx((8 / 9 - p_e) / (1 - p_e))


def test_the_saharoy_judges_agree_substantially():
    path = SHARED / "data" / "saharoy-sigir12" / "judgments.tsv"
    if not path.exists():
        pytest.skip(f"saharoy-sigir12 data not found at {path} (../shared is absent)")
    result = label_agreement(read_judgments(path), "ordinal", replicates=20)
    assert result.items == 15000
    # pairwise shares of equal grades, counted directly from the file
    grades = read_judgments(path).grades
    same = (grades[:, 0] == grades[:, 1]).mean()
    assert result.pairs[0].agreement == pytest.approx(same)
    # the package fed the raw grades (judges x items) gives the same alpha
    direct = krippendorff.alpha(reliability_data=grades.T, level_of_measurement="ordinal")
    assert result.alpha == pytest.approx(direct, abs=1e-12)
