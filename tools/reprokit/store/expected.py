"""The committed expected state (expected/<target>.yaml): the gate of a target's pinned torch.

A run of the pinned release fails when any verdict differs from the expected one, in either direction, and prints
the one command that accepts the change. Runs of other releases are history: their changes are printed, not gated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from reprokit.model.records import Record
from reprokit.model.schema import InputError
from reprokit.model.verdict import Verdict, changed
from reprokit.store.views import release_of

HEADER = "# Committed expected verdicts: a run fails when any differs. Accept a change with --update-expected.\n"


def expected_path(root: Path, target: str, suite: str = "cases") -> Path:
    return root / "expected" / (f"{target}.yaml" if suite == "cases" else f"{target}-{suite}.yaml")


def load(path: Path) -> dict[str, Verdict]:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError:
        raise InputError(f"{path}: not valid YAML; restore it with `git checkout {path}`") from None
    allowed = ", ".join(v.value for v in Verdict)
    if not isinstance(data, dict):
        raise InputError(f"{path}: must map run keys to verdicts, e.g. 'case/repro@float32: reproduces'")
    for key, value in data.items():
        if value not in {v.value for v in Verdict}:
            raise InputError(f"{path}: {key}: {value!r} is not a verdict (allowed: {allowed})")
    return {k: Verdict(v) for k, v in data.items()}


def save(path: Path, verdicts: dict[str, Verdict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    plain = {k: str(v) for k, v in sorted(verdicts.items())}
    path.write_text(HEADER + yaml.safe_dump(plain, sort_keys=True, width=200), encoding="utf-8")


@dataclass
class Gate:
    path: Path
    gated: bool  # the records are of the pinned release
    release: str
    pin: str
    changes: list[tuple[str, Verdict | None, Verdict]] = field(default_factory=list)
    accepted: int = 0
    observed: int = 0

    @property
    def failed(self) -> bool:
        return self.gated and bool(self.changes) and not self.accepted


def check(root: Path, target: str, suite: str, pin: str, records: list[Record], update: bool = False) -> Gate:
    """Compare the records of one run with the expected state; with update=True accept them (pinned release only)."""
    path = expected_path(root, target, suite)
    releases = {release_of(r.torch) for r in records}
    release = releases.pop() if len(releases) == 1 else ", ".join(sorted(releases))
    observed = {r.key: r.verdict for r in records}
    expected = load(path)
    gate = Gate(path, release == release_of(pin), release, pin, changed(expected, observed), observed=len(observed))
    if update and gate.gated:
        save(path, {**expected, **observed})
        gate.accepted = len(observed)
    return gate


def describe(gate: Gate, root: Path, target: str, suite: str) -> list[str]:
    """What the gate found, as the lines the run prints."""
    where = gate.path.relative_to(root) if gate.path.is_relative_to(root) else gate.path
    if not gate.gated:
        head = (f"torch {gate.release} is not the pinned {gate.pin}: recorded as history, not gated by {where}")
        return [head] + [f"  {k}: {was or '(new)'} -> {now} (vs the pinned release's expected state)"
                         for k, was, now in gate.changes if was is not None]
    if gate.accepted:
        return [f"accepted {gate.accepted} verdicts into {where}"]
    if not gate.changes:
        return [f"all {gate.observed} verdicts match {where}"]
    lines = [f"{len(gate.changes)} verdicts differ from {where}:"]
    lines += [f"  {key}: {was or '(new)'} -> {now}" for key, was, now in gate.changes]
    cases = sorted({k.split("/")[0] for k, _, _ in gate.changes})
    lines.append(f"accept the new state with: reprokit run --target {target} "
                 + ("--suite sweep " if suite == "sweep" else "") + " ".join(f"--case {c}" for c in cases)
                 + " --update-expected")
    return lines
