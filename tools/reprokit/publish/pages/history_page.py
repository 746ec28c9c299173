"""reports/<target>-history.md: every recorded verdict of every case, one column per torch release."""

from __future__ import annotations

from collections import defaultdict

from reprokit.model.records import Record
from reprokit.model.verdict import Verdict
from reprokit.publish.markdown import table

HISTORY_MARK = {
    Verdict.REPRODUCES: "✖ reproduces",
    Verdict.DOES_NOT_REPRODUCE: "○ does not",
    Verdict.FAILS_DIFFERENTLY: "△ differently",
    Verdict.TIMEOUT: "⧗ timeout",
    Verdict.SKIPPED: "· skipped",
    Verdict.FIX_WORKS: "✓ works",
    Verdict.FIX_BROKEN: "✗ broken",
    Verdict.FLAKY: "◐ flaky",
}


BY_MACHINE_MARK = "⇄ by machine"


def _history_cell(rec: Record | None, now: dict[str, str]) -> str:
    """A history cell: the verdict's mark, with † when the record was made with another version of its case (its
    content hash differs from the folder's now) and ‡ when the record kept no hash (recorded before hashes were)."""
    if rec is None:
        return ""
    if rec.machine_dependent:  # no one machine's verdict is the release's (verdict.decisive)
        return BY_MACHINE_MARK
    if rec.case_hash is None:
        return HISTORY_MARK[rec.verdict] + " ‡"
    if rec.case in now and rec.case_hash != now[rec.case]:
        return HISTORY_MARK[rec.verdict] + " †"
    return HISTORY_MARK[rec.verdict]


def render_history(
    target: str, description: str, every: dict[str, list[Record]], pin: str | None, now: dict[str, str] | None = None
) -> str:
    """Case x torch release: each recorded verdict, marked by shape as well as word (readable without colour).
    `now` maps case id -> the content hash of its folder today: cells recorded with another version are marked, and
    records of cases no longer in the corpus are left out (the store keeps them)."""
    releases = list(every)
    cells: dict[str, dict[str, Record]] = defaultdict(dict)
    for release, records in every.items():
        for rec in records:
            if now is None or rec.case in now:
                cells[rec.key][release] = rec
    now = now or {}
    rows = [
        [
            f"[`{key.split('/')[0]}`](../cases/{key.split('/')[0]}/) {key.split('/', 1)[1]}",
            *[_history_cell(cells[key].get(rel), now) for rel in releases],
        ]
        for key in sorted(cells)
    ]
    builds = {rel: sorted({r.torch for r in recs}) for rel, recs in every.items()}
    return "\n".join(
        [
            f"# `{target}` across torch releases: {description}",
            "",
            f"Every recorded verdict per torch release (the pin in matrix.yaml is {pin}). Builds: "
            + "; ".join(f"{rel}: {', '.join(b)}" for rel, b in builds.items())
            + ". An empty cell was not recorded.",
            "",
            "Marks: " + ", ".join([*HISTORY_MARK.values(), BY_MACHINE_MARK]) + " (machines of one torch release gave "
            "the run different verdicts: the case page names each). † recorded with an earlier version of the case (its files "
            "changed since: the verdict is that version's); ‡ recorded before records kept their case's content hash.",
            "",
            table(rows, ["case variant@dtype", *releases]),
            "",
        ]
    )
