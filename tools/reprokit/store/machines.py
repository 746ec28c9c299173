"""Which machine a record was made on (the CPU model, the GPU), and which verdicts depend on it.

A verdict that differs between two machines of one target, on the same torch build and the same case content, is
machine-dependent: like a flaky one it is never a change, a fix or a rate's figure, and the expected-state gate does
not fail a run on it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache

from packaging.version import InvalidVersion, Version

from reprokit.model.records import Record, RunHeader


@lru_cache(maxsize=4096)
def release_of(torch: str) -> str:
    """The release a torch build belongs to: 2.13.0+cpu -> 2.13.0 (a string that is no version stays itself)."""
    try:
        return Version(torch).public
    except InvalidVersion:
        return torch


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


def machine_dependent(
    records: list[Record], runs: dict[str, RunHeader], this_run: str | None = None
) -> dict[str, dict[str, str]]:
    """Run keys whose verdicts differ between machines on the same torch release and case content, whatever the
    build label (2.13.0+cpu on one CPU model, 2.13.0+cu130 on another):
    {key: {machine: verdict}} (only the keys that differ). The store keeps one record per identity: the verdicts of
    the other machines it replaced are in its `on_other_machines`. With `this_run`, what the store knew before that
    run: its own verdicts are left out (a run never excuses itself: the expected-state gate asks this), only the other
    machines' verdicts its records replaced count."""
    seen: dict[tuple[str, str, str | None], dict[str, str]] = defaultdict(dict)
    for rec in records:
        if not rec.verdict.ran:
            continue
        machine = machine_of(runs.get(rec.run_id))
        found = seen[(rec.key, release_of(rec.torch), rec.case_hash)]
        found.update(rec.on_other_machines or {})  # what the record replaced (store.py keeps it)
        if machine and rec.run_id != this_run:
            found[machine] = str(rec.verdict)
    out: dict[str, dict[str, str]] = {}
    for (key, _release, _content), by_machine in seen.items():
        if len(set(by_machine.values())) > 1:
            out.setdefault(key, {}).update(by_machine)
    return out


def across_builds(chosen: Record, builds: list[Record], runs: dict[str, RunHeader]) -> Record:
    """The record a release shows, marked machine-dependent where another build of the same release and case content
    ran on another machine with another verdict (its verdict joins `on_other_machines`): a difference of machines,
    not of builds. Builds of one machine that disagree stay a build split (views.build_split)."""
    here = machine_of(runs.get(chosen.run_id))
    if not (chosen.verdict.ran and chosen.case_hash and here):
        return chosen
    others = {}
    for rec in builds:
        there = machine_of(runs.get(rec.run_id))
        if (
            rec is not chosen
            and rec.torch != chosen.torch
            and rec.verdict.ran
            and rec.case_hash == chosen.case_hash
            and there
            and there != here
        ):
            others[there] = str(rec.verdict)
    if not others or all(v == str(chosen.verdict) for v in others.values()):
        return chosen
    return chosen.model_copy(update={"on_other_machines": {**others, **(chosen.on_other_machines or {})}})
