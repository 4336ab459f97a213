"""McNemar's test of two segmenters on the same queries (paper 004's significance test)."""

from __future__ import annotations

import json

import pytest
from helpers import assert_one_line_error, out, qseg

from qseg.errors import QsegError
from qseg.evaluation.significance import compare, mcnemar
from qseg.segmentation import Reference, Segmentation


def test_the_exact_p_value_and_the_corrected_statistic_by_hand():
    test = mcnemar("a", "b", "queries", 40, 10, 2)
    assert test.p_value == pytest.approx(2 * (1 + 12 + 66) / 2**12)  # 2 P(X <= 2), X ~ B(12, 1/2)
    assert test.statistic == pytest.approx((10 - 2 - 1) ** 2 / 12)
    assert mcnemar("a", "b", "gaps", 5, 0, 0).p_value == 1.0
    assert mcnemar("a", "b", "gaps", 5, 3, 3).p_value == 1.0


def _gold_and_systems():
    """12 queries: A right and B wrong on 10, B right and A wrong on 2."""
    gold, a, b = {}, {}, {}
    right, wrong = (
        Segmentation.from_pipe("new york|tickets"),
        Segmentation.from_pipe("new|york tickets"),
    )
    for i in range(12):
        gold[str(i)] = [Reference(right, 3)]
        a[str(i)], b[str(i)] = (right, wrong) if i < 10 else (wrong, right)
    return gold, {"A": a, "B": b}


def test_discordant_queries_and_gaps_are_counted():
    gold, systems = _gold_and_systems()
    by_query, by_gap = compare(systems, "A", "B", gold)
    assert (by_query.units, by_query.only_a, by_query.only_b) == (12, 10, 2)
    assert (by_gap.units, by_gap.only_a, by_gap.only_b) == (24, 20, 4)  # both gaps differ
    assert by_query.p_value == pytest.approx(0.0386, abs=1e-4)
    with pytest.raises(QsegError, match="no system named 'C'"):
        compare(systems, "A", "C", gold)


def test_qseg_evaluate_compare(write):
    gold = write("gold.txt", "q1\tnew york|tickets\nq2\tcheap|red sox tickets\n")
    a = write("a.txt", "q1\tnew york|tickets\nq2\tcheap|red sox tickets\n")
    b = write("b.txt", "q1\tnew|york|tickets\nq2\tcheap|red sox tickets\n")
    text = out(qseg("evaluate", "--gold", gold, a, b, "--compare", "a", "b"))
    assert "a vs b, queries      2                 1                 0" in text
    report = json.loads(
        out(qseg("evaluate", "--gold", gold, a, b, "--compare", "a", "b", "--format", "json"))
    )
    assert [r["system"] for r in report["systems"]] == ["a", "b"]
    assert [(t["unit"], t["only_a"], t["only_b"]) for t in report["mcnemar"]] == [
        ("queries", 1, 0),
        ("gaps", 1, 0),
    ]
    assert_one_line_error(
        qseg("evaluate", "--gold", gold, a, b, "--compare", "a", "x"), "no system named 'x'"
    )
