"""Figures of `nox -s bench` read from recorded runs: the corpus wall time against the ideal (2), the warm
interpreter against the cold one (4), the CPU history per torch release (6) and a GPU run placed on its devices (7)."""

from __future__ import annotations

from pathlib import Path

from reprokit.model.records import Record, RunHeader
from reprokit.store.store import Store
from reprokit.store.views import current


def main_run(store_dir: Path, target: str = "cpu") -> tuple[list[Record], RunHeader]:
    """The records and header of the CPU view's main run (the run that recorded most of the shown records)."""
    loaded = Store(store_dir).load(target, "cases")
    view = current(loaded, target, "cases", None)
    if view is None:
        raise SystemExit(f"{store_dir}: no {target} records")
    main = max(view.runs, key=lambda h: sum(r.run_id == h.run_id for r in view.records))
    return [r for r in view.records if r.run_id == main.run_id], main


def wall_vs_ideal(store_dir: Path) -> None:
    records, head = main_run(store_dir)
    ran = [r for r in records if r.status]
    jobs = head.sittings[0].jobs if head.sittings else 1
    ideal = sum(r.seconds for r in ran) / jobs
    wall = head.wall_seconds
    note = " (a partial or resumed run)" if head.selection or len(head.sittings) > 1 else ""
    print(
        f"2. corpus wall {wall:.0f} s vs ideal {ideal:.0f} s (sum of {len(ran)} run times / {jobs} jobs): "
        f"{wall / ideal:.2f}x{note}; ladder re-runs are in the wall time, not in the ideal (floor: <= 1.15x)"
    )


def placement(store_dir: Path, target: str = "h100") -> None:
    """Figure 7: a GPU corpus run with each run placed on its devices."""
    if not (store_dir / target).is_dir():
        print(f"7. placement: no {target} run at {store_dir}")
        return
    records, head = main_run(store_dir, target)
    ran = [r for r in records if r.status and r.seconds > 0]
    sitting = head.sittings[0]
    ideal = sum(r.seconds for r in ran) / sitting.jobs
    longest = max(ran, key=lambda r: r.seconds)
    bound = max(ideal, longest.seconds)
    print(
        f"7. placement: {head.target} on {len(sitting.devices)} device(s) of {head.device}, {sitting.jobs} jobs, at "
        f"most {sitting.jobs_per_device} per device: wall {head.wall_seconds:.0f} s for {len(ran)} runs of "
        f"{sum(r.seconds for r in ran):.0f} s; ideal (sum / jobs) {ideal:.0f} s = {head.wall_seconds / ideal:.2f}x; "
        f"longest run {longest.seconds:.0f} s ({longest.case}), so no order ends before {bound:.0f} s: "
        f"{head.wall_seconds / bound:.2f}x of that (goal: <= 1.1x)"
    )


def history(store_dir: Path) -> None:
    """Figure 6: per torch release of the CPU history, its environment set-up time and wall time against the ideal."""
    loaded = Store(store_dir).load("cpu", "cases")
    rows = []
    for head in sorted(loaded.runs.values(), key=lambda h: h.finished):
        mine = [r for r in loaded.records if r.run_id == head.run_id and r.status]
        if not head.sittings or not mine or head.selection:
            continue
        jobs = head.sittings[0].jobs
        ideal = sum(r.seconds for r in mine) / jobs
        setup = sum(s.env_setup_seconds for s in head.sittings)
        rows.append((head.torch, setup, head.wall_seconds, ideal))
    if not rows:
        print("6. history: no whole-corpus runs recorded")
        return
    total_wall, total_ideal = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(
        f"6. history: {len(rows)} corpus runs, wall {total_wall:.0f} s vs ideal {total_ideal:.0f} s = "
        f"{total_wall / total_ideal:.2f}x; per release (set-up s, wall s, ideal s): "
        + "; ".join(f"{t} ({s:.0f}, {w:.0f}, {i:.0f})" for t, s, w, i in rows)
    )


def warm_vs_cold(cold_dir: Path, warm_dir: Path) -> None:
    (cold, cold_head), (warm, warm_head) = main_run(cold_dir), main_run(warm_dir)
    a = {r.key: r.verdict for r in cold}
    b = {r.key: r.verdict for r in warm}
    differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    ratio = warm_head.wall_seconds / max(cold_head.wall_seconds, 1e-9)
    print(
        f"4. warm interpreter: {len(b)} runs, {len(differ)} verdicts differ from the cold run's {len(a)}"
        + (f" ({', '.join(differ[:5])})" if differ else "")
        + f"; wall {warm_head.wall_seconds:.0f} s vs cold {cold_head.wall_seconds:.0f} s = {ratio:.2f}x",
        flush=True,
    )
