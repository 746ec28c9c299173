"""Markdown tables for every rendered page."""

from __future__ import annotations


def table(rows: list[list], headers: list[str]) -> str:
    """A GitHub Markdown table. Cells are already escaped (`_cell`); no padding: Markdown ignores it, and measuring
    widths (tabulate) took most of the time of rendering a large store."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join("" if c is None else str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
