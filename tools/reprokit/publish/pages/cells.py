"""The cells every Markdown page shares: a verdict with what went wrong, case text cut or wrapped, a tally's line."""

from __future__ import annotations

import functools
import textwrap
from collections import defaultdict

from reprokit.model.records import Record
from reprokit.model.untrusted_text import identifier, md_cell
from reprokit.model.verdict import Tally, Verdict
from reprokit.publish.glossary import BY_MACHINE


def cell(text: str | None, width: int = 90) -> str:
    return md_cell(text, width)


@functools.lru_cache(maxsize=4096)
def wrapped(text: str | None, width: int = 60) -> str:
    """A cell's whole text in lines of about `width` characters: a claim is wrapped, never cut. Cached: a case's
    claim is the same cell in every row of the case (each dtype, each release)."""
    return "<br>".join(textwrap.wrap(cell(text, width=10**9), width, break_long_words=False, break_on_hyphens=False))


def outcome_text(rec: Record | None, dtype: bool = False) -> str:
    """A verdict cell: symbol and word (with the run's dtype when `dtype`), then what went wrong."""
    if rec is None:
        return "—"
    text = f"{rec.verdict.symbol} {rec.verdict}" + (f" `{rec.dtype}`" if dtype else "") + by_machine(rec)
    if not rec.verdict.ran:
        return f"{text}: {cell(rec.why, 60)}"
    if rec.exception and rec.verdict not in (Verdict.DOES_NOT_REPRODUCE, Verdict.FIX_WORKS):
        short = identifier(rec.exception).rsplit(".", 1)[-1]
        text += f": `{short}` {cell(rec.headline(), 70)}"
    elif rec.verdict.needs_attention:
        text += f": {cell(rec.why, 70)}"
    return text


def by_machine(rec: Record) -> str:
    """ " (by machine: does-not-reproduce on Intel(R) Xeon(R) Processor)" where another machine gave the same torch and
    case content another verdict: the mark alone would be one machine's verdict read as the release's."""
    if not rec.machine_dependent:
        return ""
    others = "; ".join(
        f"{verdict} on {cell(machine, 60)}" for machine, verdict in sorted((rec.on_other_machines or {}).items())
    )
    return f" ({BY_MACHINE}: {others})"


def rows_by_case(records: list[Record]) -> dict[tuple[str, str], dict[str, Record]]:
    """(case, dtype) -> variant -> record."""
    grouped: dict[tuple[str, str], dict[str, Record]] = defaultdict(dict)
    for rec in records:
        grouped[(rec.case, rec.dtype)][rec.variant] = rec
    return dict(sorted(grouped.items()))


def summary_line(t: Tally) -> str:
    return (
        f"{t.runs} runs. Repros: {t.repros_run} ran — {t.reproduce} reproduce, "
        f"{t.do_not_reproduce} do not reproduce, {t.fail_differently} fail differently, "
        f"{t.timeout} timed out; {t.repros_skipped} skipped. "
        f"Our fixes: {t.fixes_text()} ({t.fixes_broken} broken, {t.fixes_skipped} skipped). "
        f"The article's own fixes: {t.article_fixes_text()}."
        + (f" Flaky (runs of one variant disagreed): {t.flaky}." if t.flaky else "")
        + (
            f" Machine-dependent (another machine's verdict differs, same torch and content): {t.machine_dependent}."
            if t.machine_dependent
            else ""
        )
    )
