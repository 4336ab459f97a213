"""Tables of an IR-based evaluation: paper 000's Table 3 (measures x systems) and Kendall tau."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

from qseg.evaluation.ir.framework import MATCHING, TUNED, UNSEGMENTED, IrResults

SIGNIFICANT = 0.05
TIED = "~"
AGAINST_TUNED = "\u2020"
"""The mark of a p-value under :data:`SIGNIFICANT` against tuned BM25 (``*``: against the
unsegmented query on plain BM25)."""


def _cell(value: float, p: float | None, p_tuned: float | None) -> str:
    mark = "*" if p is not None and p < SIGNIFICANT else ""
    mark += AGAINST_TUNED if p_tuned is not None and p_tuned < SIGNIFICANT else ""
    return f"{value:.4f}{mark}"


def table_rows(results: IrResults) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the main table; ``*`` marks p < 0.05 against unsegmented, the
    dagger against tuned BM25."""
    header = ["measure", *results.columns]
    rows = []
    for row in results.table():
        cells = [row["measure"]]
        for column in results.columns:
            p = None if column == UNSEGMENTED else row[f"{column} p"]
            cells.append(_cell(row[column], p, row.get(f"{column} p tuned")))
        rows.append(cells)
    return header, rows


def marks_note(results: IrResults) -> str:
    """What the table's marks mean (the dagger only where the table has tuned BM25)."""
    note = "* = p < 0.05 against unsegmented (paired t-test)"
    if TUNED in results.columns:
        note += f"; {AGAINST_TUNED} = p < 0.05 against {TUNED}"
    return note


def bm25_note(results: IrResults) -> str | None:
    """One line with the BM25 parameters cross-validation chose, per measure and fold."""
    if not results.bm25_parameters:
        return None
    chosen = "; ".join(
        f"{measure} " + ", ".join(f"{k1:g}/{b:g}" for k1, b in params)
        for measure, params in results.bm25_parameters.items()
    )
    return (
        f"{TUNED}: k1/b chosen per fold by {len(next(iter(results.bm25_parameters.values())))}"
        f"-fold cross-validation over the queries on each measure ({chosen})"
    )


def tau_rows(taus: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a Kendall tau table; ``~`` marks a tau where systems tie."""
    header = ["IR measure", *MATCHING]
    rows = [
        [row["measure"], *(f"{row[m]:.3f}{TIED if m in row['tied'] else ''}" for m in MATCHING)]
        for row in taus
    ]
    return header, rows


def tau_note(taus: list[dict[str, Any]]) -> str:
    """In what steps tau moves with this many systems, and what ``~`` means, if it is used:
    with n systems and no ties tau is (concordant - discordant pairs) / all pairs, so a pair
    that changes sides moves it by 2 / (n (n - 1) / 2)."""
    systems = taus[0]["systems"]
    pairs = systems * (systems - 1) // 2
    note = (
        f"{systems} systems ({pairs} pair{'s' if pairs > 1 else ''}): where neither ranking "
        f"ties, tau moves in steps of {Fraction(2, pairs)}"
    )
    if any(row["tied"] for row in taus):
        note += (
            f"; {TIED}: systems tie in QVRS or in the matching metric, and tau-b leaves the "
            "tied pairs out of its denominator, so its values fall between those steps"
        )
    return note


def _listed(ids: list[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return f"{shown} and {len(ids) - limit} more" if len(ids) > limit else shown


def left_out_note(results: IrResults) -> str | None:
    """One line naming the queries of the collection that no column covers, by reason."""
    if not results.left_out:
        return None
    count = sum(map(len, results.left_out.values()))
    reasons = "; ".join(f"{reason}: {_listed(ids)}" for reason, ids in results.left_out.items())
    return f"{count} queries left out ({reasons})"


def unreachable_note(results: IrResults) -> str | None:
    """One line naming the measures left out because no judgment reaches their grade."""
    if not results.unreachable:
        return None
    highest = max(results.unreachable.values())
    return (
        f"{', '.join(results.unreachable)} left out: they count only documents of a grade above "
        f"the highest judged ({highest}; binary judgments?), so they are 0 for every query and "
        "system; --grades maps grades, e.g. 1:2"
    )


def _finite(value: Any) -> Any:
    """JSON has no NaN: undefined values (a tau of tied rankings) become null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def to_json(results: IrResults, taus: dict[str, list[dict[str, Any]]]) -> str:
    return json.dumps(
        _finite(
            {
                "columns": results.columns,
                "table": results.table(),
                "kendall_tau": taus,
                "queries": results.queries,
                "bqv_skipped_queries": results.skipped_bqv,
                "nested_skipped_queries": results.skipped_nested,
                "left_out_queries": results.left_out,
                "left_out_measures": results.unreachable,
                "searches": results.searches,
                "cache_hits": results.cache_hits,
                "bm25_parameters": results.bm25_parameters,
            }
        ),
        indent=2,
    )
