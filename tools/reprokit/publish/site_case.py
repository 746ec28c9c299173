"""What a case page adds to the case's verdicts: its upstream issue (number, state, the disagreement flags of
issue_status), the first release where its repro reproduces and the first where it no longer does, per target, a
"reproduce locally" snippet over the published raw script, the case folder's files, and whether `reprokit upstream`
would file it (with the reason it refuses otherwise)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.case import Case
from reprokit.model.corpus import DEVICE_STRING, CaseDir
from reprokit.model.records import Record
from reprokit.model.verdict import Verdict
from reprokit.publish.issue_status import Standing, issue_links, standing_of
from reprokit.store.views import release_order

# A case folder's files published as plain files beside its page; nothing a browser would run as a page (html, svg).
PUBLISHED_SUFFIXES = (".py", ".yaml", ".yml", ".txt", ".md")
PYTORCH_ISSUE = re.compile(r"^https://github\.com/pytorch/pytorch/issues/\d+")  # as tracker/upstream.py matches


def upstream_refusal(case: Case) -> str | None:
    """Why `reprokit upstream` refuses this case, from case.yaml alone: documented behaviour (tracker/not_a_bug.py's
    first screen, which publish/ may not import). A case linked to an issue is never refused (upstream drafts the
    comment its issue needs); the other screens (invalid usage, a fundamental graph break, a feature request) depend
    on a run, so the page cannot know them."""
    if case.documented:
        return f"documented behaviour: case.yaml documented: {case.documented}"
    return None


def published_files(cd: CaseDir) -> list[Path]:
    """The case folder's files the site copies (plain files of a published kind), by name."""
    return sorted((p for p in cd.path.iterdir() if p.is_file() and not p.is_symlink()
                   and p.suffix in PUBLISHED_SUFFIXES), key=lambda p: p.name)


@dataclass(frozen=True)
class TargetHistory:
    """The case's repro on one target: the first release it reproduces on, the first after that where it ran and
    did not (the fix), every reproducing stretch, the newest verdict and the issue-state flag."""

    standing: Standing

    @property
    def target(self) -> str:
        return self.standing.target

    @property
    def first_bad(self) -> str:
        return self.standing.reproducing[0] if self.standing.reproducing else ""

    @property
    def first_good(self) -> str:
        verdicts = self.standing.verdicts  # oldest release first
        last = max((n for n, (_, v) in enumerate(verdicts) if v is Verdict.REPRODUCES), default=None)
        if last is None:
            return ""
        return next((rel for rel, v in verdicts[last + 1:] if v is Verdict.DOES_NOT_REPRODUCE), "")

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
    """`pip install torch==release` and the command that runs the raw script as a maintainer would."""

    release: str
    target: str
    reproduced: bool  # the release is the newest on which the repro reproduced; else the target's newest recorded
    device: str
    dtype: str
    script: str  # the raw script's path relative to the case page

    @property
    def command(self) -> str:
        return f"REPRO_DEVICE={self.device} REPRO_DTYPE={self.dtype} python repro.py"


@dataclass(frozen=True)
class CaseFacts:
    issues: list[tuple[str, str]]  # (number, URL) of each linked pytorch/pytorch issue
    histories: list[TargetHistory]
    reproduce: Reproduce | None
    refusal: str | None
    files: list[str]  # the case folder's published files, relative to the case page

    @property
    def flags(self) -> list[tuple[str, str]]:
        return [(h.target, h.flag) for h in self.histories if h.flag]


def reproduce_with(cd: CaseDir, histories: list[TargetHistory]) -> Reproduce | None:
    """The newest release (over every target) on which the repro reproduced, else the newest one that recorded it."""
    recorded = [(release_order(rel), rel, h.target, v) for h in histories for rel, v in h.standing.verdicts]
    if not recorded:
        return None
    reproducing = [r for r in recorded if r[3] is Verdict.REPRODUCES]
    _, release, target, verdict = max(reproducing or recorded, key=lambda r: r[0])
    devices = cd.case.requires.devices
    device = DEVICE_STRING["cpu" if "cpu" in devices else devices[0]]
    return Reproduce(release, target, verdict is Verdict.REPRODUCES, device, cd.case.requires.dtypes[0],
                     f"{cd.case.id}/repro.py")


def case_facts(cd: CaseDir, histories: dict[str, dict[str, list[Record]]]) -> CaseFacts:
    mine = [TargetHistory(s) for target, every in histories.items()
            if (s := standing_of(cd, target, every)).verdicts]
    return CaseFacts(issue_links(cd), mine, reproduce_with(cd, mine), upstream_refusal(cd.case),
                     [f"{cd.case.id}/{p.name}" for p in published_files(cd)])
