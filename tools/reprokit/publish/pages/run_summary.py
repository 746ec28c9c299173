"""The lines every run ends with: what was recorded, its verdicts, what changed against the expected state, the wall
time and where the report is (the per-run lines and the gate's own list come before it)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from reprokit.model.records import Record
from reprokit.model.verdict import Verdict
from reprokit.store.expected import Gate


def lines(
    target: str,
    records: list[Record],
    gate: Gate | None,
    seconds: float,
    not_started: int,
    interrupted: bool,
    report: Path | None,
) -> list[str]:
    counts = Counter(r.verdict for r in records)
    tally = ", ".join(f"{counts[v]} {v}" for v in Verdict if counts[v])
    out = [f"summary: {target}: {len(records)} runs recorded in {seconds:.0f} s" + (f": {tally}" if tally else "")]
    if interrupted or not_started:
        out.append(
            f"  {not_started} runs not recorded ({'interrupted' if interrupted else 'past the --deadline'}); "
            "`--resume` runs them"
        )
    if gate is None:
        out.append("  verdicts: not compared with the expected state")
    elif gate.refused:
        out.append(f"  verdicts: none accepted (torch {gate.release} is not the pinned {gate.pin}): the run fails")
    elif not gate.gated:
        differ = len(gate.changes) - len(gate.new)
        out.append(
            f"  verdicts: history (torch {gate.release}, not the pinned {gate.pin}); "
            f"{differ} differ from the pinned release's expected state"
            + (f", {len(gate.new)} new (no expected state yet)" if gate.new else "")
            + (f", {len(gate.machine)} machine-dependent" if gate.machine else "")
        )
    elif gate.accepted:
        out.append(f"  verdicts: {gate.accepted} accepted as the expected state")
    elif gate.differ:
        out.append(
            f"  verdicts: {len(gate.differ)} changed against the expected state (listed above): the run fails"
            + (f", {len(gate.new)} new (no expected state yet)" if gate.new else "")
            + (f"; {len(gate.machine)} machine-dependent differences listed apart" if gate.machine else "")
        )
    elif gate.new:
        out.append(
            f"  verdicts: {len(gate.new)} new (no expected state yet: the run passes; --update-expected pins them)"
        )
    else:
        out.append(
            "  verdicts: none changed against the expected state"
            + (f" ({len(gate.machine)} machine-dependent differences listed apart)" if gate.machine else "")
        )
    if report is not None:
        out.append(f"  report: {report}")
    return out
