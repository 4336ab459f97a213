"""Plain-text and Markdown tables for command output and reports."""

from __future__ import annotations

import json
from collections.abc import Sequence

Table = tuple[str, list[str], list[list[str]]]
"""A titled table: title, header, rows of cells."""


def render_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool = False
) -> str:
    """Aligned columns (first left, others right), or a Markdown table."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = []
    for row in (header, *rows):
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def render_tables(tables: Sequence[Table], fmt: str) -> str:
    """Titled tables as aligned text (``table``), Markdown (``markdown``) or one JSON list."""
    if fmt == "json":
        records = [{"title": t, "header": h, "rows": r} for t, h, r in tables]
        return json.dumps(records, indent=2) + "\n"
    parts = [
        f"{title}\n\n{render_table(header, rows, markdown=fmt == 'markdown')}\n"
        for title, header, rows in tables
    ]
    return "\n".join(parts)
