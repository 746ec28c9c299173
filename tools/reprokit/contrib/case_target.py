"""The target a new case's first `reprokit run` uses: the one whose device is this machine's."""

from __future__ import annotations

from pathlib import Path

from reprokit.model.case import load_case
from reprokit.model.matrix import Target
from reprokit.run import environment


def target_to_run(targets: dict[str, Target], folder: Path, facts: dict | None = None) -> tuple[str, str]:
    """The target the new case's first `run` uses: cpu where it runs there; else the target whose device this machine
    has (its GPU's name matched against matrix.yaml's name_pattern, read by the case interpreter: facts), and only
    without one the first target of its device kind; with why, in words ("" for cpu)."""
    devices = load_case(folder / "case.yaml").requires.devices
    if "cpu" in devices and "cpu" in targets:
        return "cpu", ""
    facts = environment.device_facts() if facts is None else facts
    if (here := environment.target_here(targets, devices, facts)) is not None:
        return here, f"this machine's {facts.get('device_name')} is a {here} device"
    first = next((name for name, t in targets.items() if t.device.kind in devices), next(iter(targets)))
    found = facts.get("device_name") or "no accelerator"
    return first, f"on a machine with its device: {found} here matches no {'/'.join(devices)} target of matrix.yaml"
