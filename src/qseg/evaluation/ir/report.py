"""Tables of an IR-based evaluation: paper 000's Table 3 (measures x systems) and Kendall tau."""

from __future__ import annotations

import json
import math
from typing import Any

from qseg.evaluation.ir.framework import MATCHING, UNSEGMENTED, IrResults

SIGNIFICANT = 0.05


def _cell(value: float, p: float | None) -> str:
    mark = "*" if p is not None and p < SIGNIFICANT else ""
    return f"{value:.4f}{mark}"


def table_rows(results: IrResults) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the main table; ``*`` marks p < 0.05 against unsegmented."""
    header = ["measure", *results.columns]
    rows = []
    for row in results.table():
        cells = [row["measure"]]
        for column in results.columns:
            p = None if column == UNSEGMENTED else row[f"{column} p"]
            cells.append(_cell(row[column], p))
        rows.append(cells)
    return header, rows


def tau_rows(taus: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    header = ["IR measure", *MATCHING]
    rows = [[row["measure"], *(f"{row[m]:.3f}" for m in MATCHING)] for row in taus]
    return header, rows


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
                "searches": results.searches,
                "cache_hits": results.cache_hits,
            }
        ),
        indent=2,
    )
