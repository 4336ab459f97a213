"""Paper 004's two floors: always-split and never-split."""

from __future__ import annotations

from conftest import webis_file

import qseg
from qseg.corpora.webis import read_references
from qseg.evaluation.matching import choose_reference, evaluate, segment_gold
from qseg.segmentation import Segmentation


def test_every_gap_or_none():
    assert qseg.segmenter("always-split").segment("New York Yankees") == Segmentation.from_pipe(
        "new|york|yankees"
    )
    assert qseg.segmenter("never-split").segment("new york yankees").to_pipe() == "new york yankees"
    assert qseg.segmenter("never-split").segment("tickets").to_pipe() == "tickets"


def test_the_ranking_counts_the_gaps_that_differ():
    ranked = qseg.segmenter("always-split").rank("a b c", 4)
    assert (ranked[0][0].to_pipe(), ranked[0][1]) == ("a|b|c", 0.0)
    assert sorted(score for _, score in ranked) == [-2.0, -1.0, -1.0, 0.0]
    assert {seg.to_pipe() for seg, _ in ranked[1:3]} == {"a b|c", "a|b c"}
    never = qseg.segmenter("never-split").rank("a b c", 4)
    assert [score for _, score in never] == [0.0, -1.0, -1.0, -2.0]
    assert never[-1][0].to_pipe() == "a|b|c"


def test_on_webis_the_floors_are_the_majority_break_shares():
    gold = read_references(webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt"))
    systems = {
        spec: segment_gold(qseg.segmenter(spec), gold) for spec in ("always-split", "never-split")
    }
    always, never = evaluate(systems, gold)
    majority = [choose_reference("majority", refs) for refs in gold.values()]
    breaks = [b for seg in majority for b in seg.breaks]
    assert always.break_accuracy == sum(breaks) / len(breaks)
    assert abs(always.break_accuracy + never.break_accuracy - 1) < 1e-12
    whole = sum(1 for seg in majority if not any(seg.breaks)) / len(majority)
    assert never.query_accuracy == whole
    assert round(always.break_accuracy, 3) == 0.597  # the corpus breaks at 59.7% of its gaps
