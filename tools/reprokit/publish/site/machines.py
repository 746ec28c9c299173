"""Where each case stands on each target, as every page of the site shows it: one standing per target, or one per
machine where the repro's verdict depends on the machine (store/machines.py: another CPU model or GPU gave another
verdict on the same torch release and case content). A machine's verdict on a release comes from the records the store
keeps: the machine of the record's own run, and the verdicts of the other machines' records it replaced
(`on_other_machines`), over every build of the release (views.build_split). No machine's verdict is dropped; which
machine gave which is said beside it.

    cpu on AMD EPYC: reproduces on every recorded release (2.8.0–2.15.0)
    cpu on Intel(R) Xeon(R) Processor: does not reproduce on every recorded release (2.8.0–2.15.0)
"""

from __future__ import annotations

from collections import Counter

from reprokit.model.records import Record
from reprokit.publish.issue_status import CaseStanding, machine_standings, standing_of
from reprokit.publish.render import Published
from reprokit.store.machines import cpu_model
from reprokit.store.views import View

# case id -> target -> its standings (one, or one per machine), targets in matrix.yaml's order, only those recorded
Standings = dict[str, dict[str, list[CaseStanding]]]


def records_by_case(histories: dict[str, dict[str, list[Record]]]) -> dict[str, dict[str, dict[str, list[Record]]]]:
    """target -> case -> release -> that case's records: a case's standing then reads its own records, not the
    store's."""
    out: dict[str, dict[str, dict[str, list[Record]]]] = {}
    for target, every in histories.items():
        mine = out.setdefault(target, {})
        for release, records in every.items():
            for rec in records:
                mine.setdefault(rec.case, {}).setdefault(release, []).append(rec)
    return out


def standings(p: Published, by_case: dict | None = None) -> Standings:
    """Every case on every recorded target: its standing, or its standing per machine. `by_case`: records_by_case
    of the histories, where the caller has it."""
    by_case = by_case or records_by_case(p.histories)
    out: Standings = {}
    for cd in p.cases:
        mine = out.setdefault(cd.case.id, {})
        for target in p.histories:
            every = by_case[target].get(cd.case.id, {})
            found = machine_standings(cd, target, every, p.splits.get(target, {}), p.machines)
            if not found and (one := standing_of(cd, target, every)).verdicts:
                found = [one]
            if found:
                mine[target] = found
    return out


def flat(found: dict[str, list[CaseStanding]]) -> list[CaseStanding]:
    """A case's standings in the pages' order: targets in matrix.yaml's order, machines by name."""
    return [s for target_standings in found.values() for s in target_standings]


def recorded_on(view: View | None) -> list[str]:
    """The devices a target's current records were made on, most records first: "NVIDIA H100 80GB HBM3 (146 records)",
    "2 × NVIDIA H200 (8 records)" (the device count from its run's environment, where more than one), a CPU by its
    model."""
    if view is None:
        return []
    runs = {h.run_id: h for h in view.runs}

    def device(rec: Record) -> str:
        env = runs[rec.run_id].environment if rec.run_id in runs else {}
        if rec.device == "cpu":
            return cpu_model(env) or "a CPU"
        n = env.get("device_count")
        return f"{n} × {rec.device}" if isinstance(n, int) and n > 1 else rec.device

    seen = Counter(device(r) for r in view.records)
    return [f"{device} ({n} record{'s' if n > 1 else ''})" for device, n in seen.most_common()]
