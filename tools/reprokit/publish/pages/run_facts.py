"""A run header and its machine, as the short texts every page shows (jobs, caches, finish time, machine)."""

from __future__ import annotations

from reprokit.model.records import RunHeader
from reprokit.publish.pages.cells import cell
from reprokit.store.views import View


def jobs_text(head: RunHeader) -> str:
    """'12 jobs', or '3 sittings (15, 15, 1 jobs)' for a run continued with --resume."""
    jobs = [s.jobs for s in head.sittings]
    if len(jobs) == 1:
        return f"{jobs[0]} jobs"
    return f"{len(jobs)} sittings ({', '.join(str(j) for j in jobs)} jobs)"


def cache_text(head: RunHeader) -> str:
    """'cold caches', or 'warm caches (DIR)' for a run made with --cache."""
    return "cold caches" if head.cache == "cold" else f"**warm caches** {head.cache.removeprefix('warm ')}"


def finished_text(head: RunHeader) -> str:
    """'2026-11-29 12:21 UTC' from the header's ISO time."""
    return head.finished.replace("T", " ")[:16] + " UTC" if "T" in head.finished else head.finished


def machine_text(facts: dict) -> str:
    """One line for report headers: device, torch, CUDA/ROCm, driver."""
    parts = [facts.get("device_name") or f"CPU ({facts.get('cpu')})", f"torch {facts.get('torch')}"]
    if facts.get("cuda"):
        parts.append(f"CUDA {facts['cuda']}")
    if facts.get("hip"):
        parts.append(f"ROCm/HIP {facts['hip']}")
    if facts.get("compute_capability"):
        parts.append(f"sm_{str(facts['compute_capability']).replace('.', '')}")
    if facts.get("driver"):
        parts.append(f"driver {facts['driver']}")
    parts.append(f"Python {facts.get('python')}")
    return ", ".join(parts)


def run_lines(view: View) -> list[str]:
    """Which runs the view shows, how each ran, and where: one line per run."""
    shown = {r.run_id: 0 for r in view.records}
    for r in view.records:
        shown[r.run_id] += 1
    lines = []
    newest = next((h.sittings[-1].on for h in reversed(view.runs) if h.sittings), "")  # the page's "Recorded on"
    for n, head in enumerate(view.runs):
        what = "Run" if n == 0 else "Added later"
        on = head.sittings[-1].on if head.sittings else ""
        where = f" on {on}" if on and (n or on != newest) else ""  # the first run too, where its machine differs
        lines.append(
            f"{what}: {head.mode} mode, {jobs_text(head)}, {cache_text(head)}"
            + (", warm interpreter" if head.interpreter.startswith("warm") else "")
            + f", {head.wall_seconds:.0f} s wall"
            + (f" for the selection {cell(', '.join(head.selection), 200)}" if head.selection else "")
            + f"{where}, torch {head.torch}, finished {finished_text(head)}; {shown.get(head.run_id, 0)} records "
            f"shown.  "
        )
    return lines
