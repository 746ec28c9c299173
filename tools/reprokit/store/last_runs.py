"""Where a target's only records of a case are history: when and on what the case last ran there, and why that run is
not current (recorded before records kept a run identity, or of an earlier version of the case), and what has kept it
from running since (the target's later runs had fewer devices than the case needs). A page then says so, never that
the case has not run there."""

from __future__ import annotations

from dataclasses import dataclass

from reprokit.model.corpus import CaseDir
from reprokit.model.records import Record
from reprokit.model.verdict import Role
from reprokit.store.store import Loaded
from reprokit.store.views import superseded


@dataclass(frozen=True)
class LastRun:
    """The newest history record of a case on a target that has no current record of it."""

    record: Record
    devices: int | None  # how many devices its run saw (None: unknown)
    why_history: str  # why the record is not current
    since: str  # what has kept the case from running there since ("" where nothing known did)

    @property
    def text(self) -> str:
        rec = self.record
        where = (
            rec.device if rec.device == "cpu" else (f"{self.devices} × {rec.device}" if self.devices else rec.device)
        )
        line = (
            f"not current: last ran on torch {rec.torch} on {where} ({rec.recorded_at[:10]}), {rec.verdict}; "
            f"history, because {self.why_history}"
        )
        return line + (f"; {self.since}" if self.since else "")


def last_runs(loaded: Loaded, target: str, cases: list[CaseDir]) -> dict[str, LastRun]:
    """Case id -> its LastRun on the target, for every case of the corpus whose records there are all history."""
    current = {
        r.case
        for r in loaded.records
        if r.target == target and r.suite == "cases" and not superseded(r, loaded.content)
    }
    newest: dict[str, Record] = {}
    for rec in loaded.records:
        if rec.target != target or rec.suite != "cases" or rec.case in current or not rec.verdict.ran:
            continue
        best = newest.get(rec.case)
        rank = (Role.of(rec.variant) is Role.REPRO, rec.recorded_at)
        if best is None or rank > (Role.of(best.variant) is Role.REPRO, best.recorded_at):
            newest[rec.case] = rec
    by_id = {cd.case.id: cd for cd in cases}
    return {case: _last_run(rec, loaded, target, by_id[case]) for case, rec in sorted(newest.items()) if case in by_id}


def _last_run(rec: Record, loaded: Loaded, target: str, cd: CaseDir) -> LastRun:
    header = loaded.runs.get(rec.run_id)
    devices = (header.environment.get("device_count") if header else None) or None
    why = (
        "it was recorded before records kept the run's identity (what ran cannot be told)"
        if not rec.case_hash
        else "the case's scripts or oracle have changed since (it ran an earlier version)"
    )
    need = max(cd.case.requires.min_devices, cd.case.requires.world_size)
    runs = [h for h in loaded.runs.values() if h.target == target and h.suite == "cases" and h.device != "cpu"]
    enough = max(
        (h.finished for h in runs if (h.environment.get("device_count") or 0) >= need), default=rec.recorded_at
    )
    found = [h.environment.get("device_count") or 0 for h in runs if h.finished > max(enough, rec.recorded_at)]
    since = ""
    if need > 1 and found:  # every run after the last one with enough devices had fewer
        since = (
            f"{need} devices have not been available to this project on {target} since {enough[:10]}: its "
            f"{len(found)} later run{'s' if len(found) > 1 else ''} had {max(found)}"
        )
    return LastRun(rec, devices, why, since)
