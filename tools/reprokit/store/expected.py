"""The committed expected state (expected/<target>.yaml): the gate of a target's pinned torch.

A run of the pinned release fails when any verdict differs from the expected one, in either direction, and prints
the one command that accepts the change. Runs of other releases are history: their changes are printed, not gated.

The gate judges only what holds on this machine: an entry may say which machine it was recorded on and why its
verdict depends on the machine (`{verdict: reproduces, recorded_on: AMD EPYC, machine_dependent: "why"}`), and the
store may know a key as machine-dependent (two CPU models disagreed on one torch build and content). A difference on
such a key, seen on another machine, is listed apart and does not fail the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from reprokit.model.records import Record
from reprokit.model.schema import InputError
from reprokit.model.verdict import Verdict, changed
from reprokit.store.store import Loaded
from reprokit.store.views import current, release_of

HEADER = "# Committed expected verdicts: a run fails when any differs. Accept a change with --update-expected.\n"


def expected_path(root: Path, target: str, suite: str = "cases") -> Path:
    return root / "expected" / (f"{target}.yaml" if suite == "cases" else f"{target}-{suite}.yaml")


@dataclass(frozen=True)
class MachineNote:
    """An expected entry that holds on the machine it was recorded on only."""

    recorded_on: str
    why: str


def load(path: Path) -> dict[str, Verdict]:
    return {k: v for k, (v, _note) in load_entries(path).items()}


def load_entries(path: Path) -> dict[str, tuple[Verdict, MachineNote | None]]:
    """Each key's expected verdict, and its machine note where the file gives one."""
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError:
        raise InputError(f"{path}: not valid YAML; restore it with `git checkout {path}`") from None
    allowed = ", ".join(v.value for v in Verdict)
    if not isinstance(data, dict):
        raise InputError(f"{path}: must map run keys to verdicts, e.g. 'case/repro@float32: reproduces'")
    out: dict[str, tuple[Verdict, MachineNote | None]] = {}
    for key, value in data.items():
        note = None
        if isinstance(value, dict):
            if set(value) != {"verdict", "recorded_on", "machine_dependent"}:
                raise InputError(
                    f"{path}: {key}: a mapping needs exactly verdict, recorded_on (the CPU model) and "
                    "machine_dependent (why the verdict depends on the machine)"
                )
            note = MachineNote(str(value["recorded_on"]), str(value["machine_dependent"]))
            value = value["verdict"]
        if value not in {v.value for v in Verdict}:
            raise InputError(f"{path}: {key}: {value!r} is not a verdict (allowed: {allowed})")
        out[key] = (Verdict(value), note)
    return out


def save(path: Path, verdicts: dict[str, Verdict], notes: dict[str, MachineNote] | None = None) -> None:
    """Write the expected state; a machine note (given, else the file's own) is kept where its verdict is kept."""
    if notes is None:
        notes = {k: n for k, (v, n) in load_entries(path).items() if n is not None and verdicts.get(k) == v}
    path.parent.mkdir(parents=True, exist_ok=True)
    plain = {
        k: (
            {"verdict": str(v), "recorded_on": notes[k].recorded_on, "machine_dependent": notes[k].why}
            if k in notes
            else str(v)
        )
        for k, v in sorted(verdicts.items())
    }
    path.write_text(HEADER + yaml.safe_dump(plain, sort_keys=True, width=200), encoding="utf-8")


def accept(path: Path, observed: dict[str, Verdict]) -> None:
    """Accept the run's verdicts: only the entries of its keys whose verdict changed (or is new) are rewritten; every
    other line of the file, its comments and machine notes included, stays as it was."""
    if not path.exists():
        save(path, observed)
        return
    entries = load_entries(path)
    blocks = _blocks(path.read_text(encoding="utf-8"))
    for key, verdict in sorted(observed.items()):
        if key in entries and entries[key][0] == verdict:
            continue
        text = yaml.safe_dump({key: str(verdict)}, width=200)
        at = next((i for i, (k, _) in enumerate(blocks) if k == key), None)
        if at is not None:
            blocks[at] = (key, text)
        else:  # a new key goes where sorting puts it, so that a file kept sorted stays sorted
            at = next((i for i, (k, _) in enumerate(blocks) if k is not None and k > key), len(blocks))
            blocks.insert(at, (key, text))
    path.write_text("".join(text for _, text in blocks), encoding="utf-8")


def accept_recorded(root: Path, loaded: Loaded, target: str, suite: str, pin: str) -> tuple[int, Path]:
    """`reprokit accept`: the target's recorded verdicts of its pinned release (results brought back from another
    machine) become its expected state, in one write; (how many, the file). Refused where that release has none."""
    view = current(loaded, target, suite, pin)
    if view is None or view.off_pin:
        raise InputError(f"{target}: no records of the pinned torch {pin} to accept")
    path = expected_path(root, target, suite)
    save(path, {**load(path), **{r.key: r.verdict for r in view.records}})
    return len(view.records), path


def _blocks(text: str) -> list[tuple[str | None, str]]:
    """The file as its entries' text, each with its key (None: a comment or blank line), in the file's order."""
    blocks: list[tuple[str | None, str]] = []
    for line in text.splitlines(keepends=True):
        if line[:1] in (" ", "\t") and blocks and blocks[-1][0] is not None:  # an entry's continuation line
            blocks[-1] = (blocks[-1][0], blocks[-1][1] + line)
        elif not line.strip() or line.startswith("#"):
            blocks.append((None, line))
        else:
            blocks.append((str(next(iter(yaml.safe_load(line)))), line))
    if blocks and not blocks[-1][1].endswith("\n"):
        blocks[-1] = (blocks[-1][0], blocks[-1][1] + "\n")
    return blocks


@dataclass
class Gate:
    path: Path
    gated: bool  # the records are of the pinned release
    release: str
    pin: str
    changes: list[tuple[str, Verdict | None, Verdict]] = field(default_factory=list)
    accepted: int = 0
    observed: int = 0
    # Differences on machine-dependent keys, seen on another machine: (key, expected, observed, why); never fail.
    machine: list[tuple[str, Verdict, Verdict, str]] = field(default_factory=list)
    here: str = ""  # this machine, in words
    refused: bool = False  # --update-expected on another release than the pin: nothing accepted, the run fails

    @property
    def new(self) -> list[tuple[str, Verdict | None, Verdict]]:
        return [c for c in self.changes if c[1] is None]

    @property
    def differ(self) -> list[tuple[str, Verdict | None, Verdict]]:
        """Changes of keys that have an expected verdict: the only ones that fail a run (a new key never does)."""
        return [c for c in self.changes if c[1] is not None]

    @property
    def failed(self) -> bool:
        return self.gated and bool(self.differ) and not self.accepted


def check(
    root: Path,
    target: str,
    suite: str,
    pin: str,
    records: list[Record],
    update: bool = False,
    here: str = "",
    known_dependent: dict[str, dict[str, str]] | None = None,
) -> Gate:
    """Compare the records of one run with the expected state; with update=True accept them (pinned release only).
    here: this machine's CPU model; known_dependent: the store's machine-dependent keys (machines.py)."""
    path = expected_path(root, target, suite)
    releases = {release_of(r.torch) for r in records}
    release = releases.pop() if len(releases) == 1 else ", ".join(sorted(releases))
    observed = {r.key: r.verdict for r in records}
    entries = load_entries(path)
    expected = {k: v for k, (v, _) in entries.items()}
    notes = {k: n for k, (_, n) in entries.items() if n is not None}
    gate = Gate(path, release == release_of(pin), release, pin, observed=len(observed), here=here)
    for key, was, now in changed(expected, observed):
        why = _machine_dependent(key, notes.get(key), here, known_dependent or {})
        if was is not None and why:
            gate.machine.append((key, was, now, why))
        else:
            gate.changes.append((key, was, now))
    if update and gate.gated:
        accept(path, observed)
        gate.accepted = len(observed)
    gate.refused = update and not gate.gated
    return gate


def _machine_dependent(key: str, note: MachineNote | None, here: str, known: dict[str, dict[str, str]]) -> str:
    """Why a difference on `key` is the machine's, not torch's; "" when it is not known to be."""
    if note is not None and note.recorded_on != here:
        return f"differs from the {note.recorded_on} record: machine-dependent ({note.why})"
    if key in known:
        seen = "; ".join(f"{machine}: {verdict}" for machine, verdict in sorted(known[key].items()))
        return f"machine-dependent in the store ({seen})"
    return ""


def pin_command(target: str, suite: str, pin: str, cases: list[str] | tuple[str, ...], out: Path | None) -> str:
    """The run that pins `cases` as the expected state: on the target's pinned torch, into the same --out store."""
    return (
        f"reprokit run --target {target} --torch {pin} "
        + ("--suite sweep " if suite == "sweep" else "")
        + "".join(f"--case {c} " for c in cases)
        + (f"--out {out} " if out else "")
        + "--update-expected"
    )


def describe(
    gate: Gate, root: Path, target: str, suite: str, torch: str | None = None, out: Path | None = None
) -> list[str]:
    """What the gate found, as the lines the run prints; torch: the run's --torch, repeated in the command it gives;
    out: the run's --out folder, repeated too (the records to accept are there)."""
    where = gate.path.relative_to(root) if gate.path.is_relative_to(root) else gate.path
    apart = [f"  {key}: {was} -> {now}: {why}" for key, was, now, why in gate.machine]
    apart = (
        [
            f"{len(apart)} verdicts differ on machine-dependent runs (not gated, this machine: "
            f"{gate.here or 'unknown'}):",
            *apart,
        ]
        if apart
        else []
    )
    new = [f"new: no expected state yet: {key}: {now}" for key, _was, now in gate.new]
    cases = sorted({k.split("/")[0] for k, _, _ in gate.changes})
    refused = (
        [
            f"--update-expected: nothing accepted into {where}: torch {gate.release} ran, not {target}'s pin "
            f"{gate.pin}; pin them with: {pin_command(target, suite, gate.pin, cases, out)}"
        ]
        if gate.refused
        else []
    )
    if not gate.gated:
        head = f"torch {gate.release} is not the pinned {gate.pin}: recorded as history, not gated by {where}"
        pin = (
            [
                f"pin the new ones on the pinned torch (then commit {where} with the case): "
                f"{pin_command(target, suite, gate.pin, sorted({k.split('/')[0] for k, _, _ in gate.new}), out)}"
            ]
            if gate.new and not gate.refused
            else []
        )
        return (
            refused
            + [head]
            + [
                f"  {k}: {was} -> {now} (vs the pinned release's expected state)"
                for k, was, now in gate.changes
                if was is not None
            ]
            + apart
            + new
            + pin
        )
    if gate.accepted:
        return [f"accepted {gate.accepted} verdicts into {where}"]
    if not gate.changes:
        return [f"all {gate.observed - len(gate.machine)} verdicts match {where}"] + apart
    differ = gate.differ
    lines = [f"{len(differ)} verdicts differ from {where}:"] if differ else []
    lines += [f"  {key}: {was} -> {now}" for key, was, now in differ] + apart + new
    command = (
        f"reprokit run --target {target} "
        + (f"--torch {torch} " if torch else "")
        + ("--suite sweep " if suite == "sweep" else "")
        + " ".join(f"--case {c}" for c in cases)
        + (f" --out {out}" if out else "")
        + " --update-expected"
    )
    if differ:
        lines.append(f"accept the new state with: {command}")
    else:  # only new keys: the run passes; pinning them is the contributor's next step
        lines.append(f"pin it as the expected state (then commit {where} with the case): {command}")
    return lines
