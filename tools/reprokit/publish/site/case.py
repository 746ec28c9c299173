"""What a case page adds to the case's verdicts: its upstream issue (number, state, the disagreement flags of
issue_status), the first release where its repro reproduces and the first where it no longer does, per target (per
machine where its verdict depends on the machine: site/machines.py), every other target of matrix.yaml marked not
recorded, a "reproduce locally" snippet over the published raw script from a recorded run that ran (naming its
machine), the case folder's files, and whether `reprokit upstream` would file it (with the reason it refuses
otherwise)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.model.case import Case
from reprokit.model.corpus import DEVICE_STRING, CaseDir
from reprokit.model.records import Record
from reprokit.model.releases import release_key
from reprokit.model.verdict import Role, Verdict
from reprokit.publish.issue_status import CaseStanding, issue_links
from reprokit.store.last_runs import LastRun

# A case folder's files published as plain files beside its page; nothing a browser would run as a page (html, svg).
PUBLISHED_SUFFIXES = (".py", ".yaml", ".yml", ".txt", ".md")
NO_HARDWARE = "not recorded (no such hardware has run it)"
NOT_RUN_HERE = "not recorded (this case has not run on this target yet)"
# a pytorch/pytorch issue link (model/issue_states.ISSUE_NUMBER reads its number)
PYTORCH_ISSUE = re.compile(r"^https://github\.com/pytorch/pytorch/issues/\d+")


def upstream_refusal(case: Case) -> str | None:
    """Why `reprokit upstream` refuses this case, from case.yaml alone: documented behaviour (tracker/judging/not_a_bug.py's
    first screen, which publish/ may not import). A case linked to an issue is never refused (upstream drafts the
    comment its issue needs); the other screens (invalid usage, a fundamental graph break, a feature request) depend
    on a run, so the page cannot know them."""
    if case.documented:
        return f"documented behaviour: case.yaml documented: {case.documented}"
    return None


def published_files(cd: CaseDir) -> list[Path]:
    """The case folder's files the site copies (plain files of a published kind), by name."""
    return sorted(
        (p for p in cd.path.iterdir() if p.is_file() and not p.is_symlink() and p.suffix in PUBLISHED_SUFFIXES),
        key=lambda p: p.name,
    )


@dataclass(frozen=True)
class TargetHistory:
    """The case's repro on one target: the first release it reproduces on, the first after that where it ran and
    did not (the fix), every reproducing stretch, the newest verdict and the issue-state flag."""

    standing: CaseStanding

    @property
    def target(self) -> str:
        return self.standing.target

    @property
    def label(self) -> str:
        """The target, and the machine where the repro's verdict depends on it."""
        return self.standing.label

    @property
    def first_bad(self) -> str:
        return self.standing.reproducing[0] if self.standing.reproducing else ""

    @property
    def first_good(self) -> str:
        verdicts = self.standing.verdicts  # oldest release first
        last = max((n for n, (_, v) in enumerate(verdicts) if v is Verdict.REPRODUCES), default=None)
        if last is None:
            return ""
        return next((rel for rel, v in verdicts[last + 1 :] if v is Verdict.DOES_NOT_REPRODUCE), "")

    @property
    def stretches(self) -> str:
        return ", ".join(a if a == b else f"{a}–{b}" for a, b in self.standing.stretches())

    @property
    def newest(self) -> tuple[str, Verdict] | None:
        return self.standing.newest

    @property
    def flag(self) -> str:
        return self.standing.disagreement() if self.standing.case.case.source == "upstream" else ""


@dataclass(frozen=True)
class Reproduce:
    """`pip install torch==release` and the command that runs the raw script as a maintainer would, from a recorded
    run that ran (never a skipped one): the newest that reproduced, else the newest that ran."""

    release: str
    target: str
    reproduced: bool  # the release is the newest on which the repro reproduced; else the newest on which it ran
    device: str
    dtype: str
    script: str  # the raw script's path relative to the case page
    machine: str = ""  # the machine that run was made on ("" where the store does not know it)
    ranks: int = 1  # the processes torchrun starts (a case of world_size > 1), 1 for plain python

    @property
    def command(self) -> str:
        return local_command(self.device, self.dtype, self.ranks)


def local_command(device: str, dtype: str, ranks: int) -> str:
    """The line that runs the raw script in its case folder as the runner does: plain python, or torchrun with one
    process per rank."""
    launch = f"torchrun --standalone --nproc-per-node {ranks}" if ranks > 1 else "python"
    return f"REPRO_DEVICE={device} REPRO_DTYPE={dtype} {launch} repro.py"


def untried_command(case: Case) -> str:
    """The command for a case no recorded run has run: on the case's own device (a GPU-only case's GPU, never the
    CPU it cannot run on) and its first dtype."""
    devices = case.requires.devices
    device = DEVICE_STRING["cpu" if "cpu" in devices else devices[0]]
    return local_command(device, case.requires.dtypes[0], case.requires.world_size)


@dataclass(frozen=True)
class CaseFacts:
    issues: list[tuple[str, str]]  # (number, URL) of each linked pytorch/pytorch issue
    histories: list[TargetHistory]
    reproduce: Reproduce | None
    refusal: str | None
    files: list[str]  # the case folder's published files, relative to the case page
    # (target, hardware, why) of each target of matrix.yaml with no record of this case: no such hardware has run
    # anything, or this case has not run there yet
    unrecorded: list[tuple[str, str, str]]
    untried: str = ""  # the command for the case's own device, where no current record of its repro ran
    last_runs: list[tuple[str, str]] = field(default_factory=list)  # (target, its LastRun's text), history only

    @property
    def flags(self) -> list[tuple[str, str]]:
        return [(h.label, h.flag) for h in self.histories if h.flag]


def reproduce_with(
    cd: CaseDir, histories: list[TargetHistory], records: dict[str, dict[str, list[Record]]], machines: dict[str, str]
) -> Reproduce | None:
    """The newest release (over every target and machine) on which the repro reproduced, else the newest on which it
    ran; None where it never ran. `records`: target -> release -> the case's records."""
    ran = [(release_key(rel), rel, h, v) for h in histories for rel, v in h.standing.verdicts if v.ran]
    if not ran:
        return None
    _, release, history, verdict = max([r for r in ran if r[3] is Verdict.REPRODUCES] or ran, key=lambda r: r[0])
    runs = [
        r
        for r in records.get(history.target, {}).get(release, [])
        if Role.of(r.variant) is Role.REPRO and r.verdict is verdict
    ]
    machine = history.standing.machine or next((machines[r.run_id] for r in runs if machines.get(r.run_id)), "")
    devices = cd.case.requires.devices
    on_cpu = "cpu" in devices and (not runs or runs[0].device == "cpu")
    device = DEVICE_STRING["cpu" if on_cpu else next((d for d in devices if d != "cpu"), devices[0])]
    dtype = runs[0].dtype if runs else cd.case.requires.dtypes[0]
    return Reproduce(
        release,
        history.target,
        verdict is Verdict.REPRODUCES,
        device,
        dtype,
        f"{cd.case.id}/repro.py",
        machine,
        cd.case.requires.world_size,
    )


def case_facts(
    cd: CaseDir,
    found: dict[str, list[CaseStanding]],
    records: dict[str, dict[str, list[Record]]],
    machines: dict[str, str],
    hardware: dict[str, str],
    recorded: set[str],
    history: dict[str, LastRun] | None = None,
) -> CaseFacts:
    """The case page's facts from its standings (machines.standings), its records per target and release, the
    machines of the runs, matrix.yaml's targets (target -> hardware), the targets with any record and, per target
    where the case's records are all history, when and on what it last ran (store/last_runs.py)."""
    history = history or {}
    mine = [TargetHistory(s) for target_standings in found.values() for s in target_standings]
    return CaseFacts(
        issue_links(cd),
        mine,
        reproduce_with(cd, mine, records, machines),
        upstream_refusal(cd.case),
        [f"{cd.case.id}/{p.name}" for p in published_files(cd)],
        [
            (
                target,
                what,
                history[target].text if target in history else NOT_RUN_HERE if target in recorded else NO_HARDWARE,
            )
            for target, what in hardware.items()
            if target not in found
        ],
        untried_command(cd.case),
        [(t, last.text) for t, last in history.items()],
    )
