"""Which machine a record was made on (the CPU model, the GPU), and which verdicts depend on it.

A verdict that differs between two machines of one target, on the same torch build and the same case content, is
machine-dependent: like a flaky one it is never a change, a fix or a rate's figure, and the expected-state gate does
not fail a run on it.
"""

from __future__ import annotations

import re
from collections import defaultdict

from reprokit.model.records import Record, RunHeader


def cpu_model(environment: dict | None) -> str:
    """The CPU's model name as collect_env's lscpu text gives it ("AMD EPYC", "Intel(R) Xeon(R) Processor"), else
    what platform says; "" when unknown."""
    environment = environment or {}
    text = str((environment.get("collect_env") or {}).get("cpu_info") or "")
    found = re.search(r"Model name:\s*(.+)", text)
    return found.group(1).strip() if found else str(environment.get("cpu") or "")


def machine_of(header: RunHeader | None) -> str:
    """The machine a run was made on, in words: the CPU model, and the GPU where there is one."""
    if header is None:
        return ""
    gpu = header.device if header.device and header.device != "cpu" else ""
    return " + ".join(part for part in (cpu_model(header.environment), gpu) if part)


def machine_dependent(records: list[Record], runs: dict[str, RunHeader],
                      this_run: str | None = None) -> dict[str, dict[str, str]]:
    """Run keys whose verdicts differ between machines on the same torch build and case content:
    {key: {machine: verdict}} (only the keys that differ). The store keeps one record per identity: the verdicts of
    the other machines it replaced are in its `on_other_machines`. With `this_run`, what the store knew before that
    run: its own verdicts are left out (a run never excuses itself: the expected-state gate asks this), only the other
    machines' verdicts its records replaced count."""
    seen: dict[tuple[str, str, str | None], dict[str, str]] = defaultdict(dict)
    for rec in records:
        if not rec.verdict.ran:
            continue
        machine = machine_of(runs.get(rec.run_id))
        found = seen[(rec.key, rec.torch, rec.case_hash)]
        found.update(rec.on_other_machines or {})  # what the record replaced (store.py keeps it)
        if machine and rec.run_id != this_run:
            found[machine] = str(rec.verdict)
    out: dict[str, dict[str, str]] = {}
    for (key, _torch, _content), by_machine in seen.items():
        if len(set(by_machine.values())) > 1:
            out.setdefault(key, {}).update(by_machine)
    return out
