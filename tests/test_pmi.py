import math

import pytest

from qseg.resources import CountProbabilities, LogProbabilities, NgramCounts
from qseg.segmentation import Segmentation
from qseg.segmenters import PmiSegmenter, tune_tau
from qseg.segmenters.rules.pmi import PAPER_TAU

PROBS = LogProbabilities(
    {"new": -3.0, "york": -4.0, "pizza": -5.0},
    {"new york": -5.0, "york pizza": -9.5},
)


def test_pmi_is_log10_joint_minus_marginals():
    assert PROBS.pmi("new", "york") == pytest.approx(-5.0 + 3.0 + 4.0)  # 2.0
    assert PROBS.pmi("york", "pizza") == pytest.approx(-9.5 + 4.0 + 5.0)  # -0.5
    assert PROBS.pmi("pizza", "new") == -math.inf  # no 2-gram
    assert PROBS.pmi("new", "unknown") == -math.inf


def test_break_iff_pmi_below_tau():
    assert PmiSegmenter(PROBS, tau=1.0).segment("new york pizza").to_pipe() == "new york|pizza"
    assert PmiSegmenter(PROBS, tau=-0.5).segment("new york pizza").to_pipe() == "new york pizza"
    assert PmiSegmenter(PROBS, tau=2.5).segment("new york pizza").to_pipe() == "new|york|pizza"
    assert PmiSegmenter(PROBS).tau == PAPER_TAU == 0.894775


def test_probabilities_from_counts_use_the_unigram_total():
    probs = CountProbabilities(NgramCounts({"a": 60, "b": 40, "a b": 10}))
    assert probs.pmi("a", "b") == pytest.approx(math.log10(0.1 / (0.6 * 0.4)))
    assert probs.pmi("b", "a") == -math.inf


def test_tuner_picks_the_threshold_with_the_best_break_accuracy():
    # PMI(new, york) = 2.0 (no break wanted), PMI(york, pizza) = -0.5 (break wanted)
    refs = [Segmentation.from_pipe("new york|pizza")] * 3 + [
        Segmentation.from_pipe("new|york pizza")
    ]
    choice = tune_tau(PROBS, refs)
    # any tau in (-0.5, 2.0] gets 6 of 8 gaps right; the midpoint is chosen
    assert choice.tau == pytest.approx(0.75)
    assert choice.break_accuracy == pytest.approx(6 / 8)
    assert (choice.gaps, choice.queries) == (8, 4)


def test_tuner_can_choose_to_break_everywhere_or_nowhere():
    everywhere = tune_tau(PROBS, [Segmentation.from_pipe("new|york|pizza")])
    assert everywhere.break_accuracy == 1.0 and everywhere.tau > 2.0
    nowhere = tune_tau(PROBS, [Segmentation.from_pipe("new york pizza")])
    assert nowhere.break_accuracy == 1.0 and nowhere.tau <= -0.5
    for choice, pipe in ((everywhere, "new|york|pizza"), (nowhere, "new york pizza")):
        assert PmiSegmenter(PROBS, choice.tau).segment("new york pizza").to_pipe() == pipe
