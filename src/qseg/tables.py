"""Plain-text and Markdown tables for command output and reports."""

from __future__ import annotations

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
