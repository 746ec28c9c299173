"""Tracker sync: the comment each linked pytorch/pytorch issue needs, and the issue states it is decided on.

An issue needs a comment when the recorded runs disagree with its state (the flags of reports/upstream-issues.md):
closed while the repro still reproduces on a target's newest recorded release, or open while it does not. The state
is issue-states.yaml's (the issue-states workflow reads it from GitHub; `tracker-states --import` takes what `gh api`
printed), else the case.yaml's. Drafts for every such issue come from the store alone (`reprokit tracker`); `reprokit
upstream ID` makes that issue's draft from a contained run made now."""

from __future__ import annotations

import dataclasses
import datetime
import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprokit.contrib import case_files
from reprokit.model import corpus, issue_states
from reprokit.model.corpus import DEVICE_STRING, CaseDir
from reprokit.model.issue_states import StandingKind
from reprokit.model.matrix import Matrix
from reprokit.model.schema import InputError
from reprokit.publish import issue_status
from reprokit.store.store import Loaded, Store
from reprokit.store.views import release_of, releases, repro_history
from reprokit.tracker.drafting import issue_comment
from reprokit.tracker.drafting.issue_comment import NO_LONGER, STILL, CommentEvidence
from reprokit.tracker.judging.triage_standing import TriageStanding
from reprokit.tracker.text.release_summary import ReleaseHistory
from reprokit.tracker.text.standalone import standalone
from reprokit.tracker.text.user_paths import as_user_sees

REPO = "pytorch/pytorch"


@dataclass(frozen=True)
class Linked:
    """A case linked to a pytorch/pytorch issue, with the state it is judged on and its recorded history."""

    cd: CaseDir
    number: int
    state: str
    checked: str
    histories: dict[str, ReleaseHistory]  # target -> recorded releases of its repro
    kind: StandingKind | None  # STILL | NO_LONGER | None (no comment: see `held`)
    held: str | None = None  # why no comment although the case's runs disagree with the issue's state
    triage: str | None = None  # what `reprokit triage N --record` said, with its torch

    @property
    def url(self) -> str:
        return f"https://github.com/{REPO}/issues/{self.number}"

    def line(self) -> str:
        said: dict[str, Callable[[dict[str, ReleaseHistory]], str]] = {
            STILL: issue_comment.still_line,
            NO_LONGER: issue_comment.no_longer_line,
        }
        if self.held:
            return self.held
        return said[self.kind](self.flagged()) if self.kind else "agrees with the recorded runs"

    def flagged(self, kind: StandingKind | None = None) -> dict[str, ReleaseHistory]:
        """The targets whose newest recorded release disagrees with the issue's state."""
        want = issue_comment.BAD if (kind or self.kind) == STILL else issue_comment.GOOD
        return {t: h for t, h in self.histories.items() if h.decisive() and h.decisive()[-1][1] == want}


@dataclass(frozen=True)
class Corpus:
    """The cases (issue states applied), the store per target and matrix.yaml, read once."""

    cases: list[CaseDir]
    loaded: dict[str, Loaded]
    matrix: Matrix
    states: issue_states.IssueStates = issue_states.IssueStates()

    @classmethod
    def read(cls, root: Path, store_dir: Path, matrix: Matrix) -> Corpus:
        states = issue_states.load(root)
        cases = issue_states.applied(corpus.discover(root / "cases"), states)
        store = Store(store_dir)
        return cls(cases, {t: store.load(t, "cases") for t in matrix.targets}, matrix, states)


def linked(data: Corpus) -> list[Linked]:
    """Every case that links a pytorch/pytorch issue, with what its issue needs."""
    every = {t: releases(loaded, t, "cases") for t, loaded in data.loaded.items()}
    flags = {(s.case.case.id, s.target) for s in issue_status.standings(data.cases, every) if s.flag()}
    out = []
    for cd in data.cases:
        numbers = issue_states.issue_numbers(cd.case)
        if not numbers or cd.case.source != "upstream":
            continue
        histories = {}
        for target, loaded in data.loaded.items():
            dtypes = [d for d in cd.case.requires.dtypes if d in data.matrix.targets[target].dtypes]
            if dtypes:
                _, pairs = repro_history(loaded, target, cd.case.id, dtypes)
                if pairs:
                    histories[target] = ReleaseHistory.of(pairs)
        flagged = any((cd.case.id, t) in flags for t in histories)
        kind = (STILL if cd.case.issue_state == "closed" else NO_LONGER) if flagged else None
        item = Linked(cd, numbers[0], cd.case.issue_state or "?", cd.case.issue_checked or "?", histories, kind)
        out.append(_held(item, data.states.issues.get(numbers[0])))
    return out


def _held(item: Linked, known: issue_states.IssueState | None) -> Linked:
    """The item with no comment where the issue's own script or thread says otherwise than the case: a case that
    tests something else than the issue ("related"), a "no longer reproduces" from a repro that never failed on any
    recorded release (no evidence), a triage of the issue's own script that disagrees, or (for "still reproduces",
    which would reopen a closed issue) no triage at all."""
    triage = f"{known.triage} (torch {known.triage_torch})" if known and known.triage else None
    item = dataclasses.replace(item, triage=triage)
    if item.kind is None:
        return item
    ours = item.line()
    if known and known.link == "related":
        return dataclasses.replace(
            item,
            kind=None,
            held=f"related: {known.link_why or 'the case tests something else'}; no comment from it (the case {ours})",
        )
    if item.kind == NO_LONGER and not any(
        v == issue_comment.BAD for h in item.histories.values() for _, v in h.releases
    ):
        return dataclasses.replace(
            item,
            kind=None,
            held=f"never failed: the case's repro did not fail on any recorded "
            f"release, so its passing is no evidence that the issue is "
            f"fixed; only the issue's own script can say "
            f"(`reprokit triage {item.number}`); no comment",
        )
    if triage is None:
        if item.kind == STILL:
            return dataclasses.replace(
                item,
                kind=None,
                held=f"not triaged: the case {ours}, but the issue's own "
                f"script was not run (`reprokit triage {item.number}`); "
                "no comment",
            )
        return item
    assert known is not None  # where `triage` (above) came from
    if known.triage_kind != item.kind:  # the standing's kind as data (issue_states reads an older entry's once)
        return dataclasses.replace(
            item, kind=None, held=f"the issue's own script: {triage}; no comment (the case {ours})"
        )
    return item


def _recorded_versions(environment: dict) -> str:
    """The recorded run's collect_env fields, as `python -m torch.utils.collect_env` names the main ones."""
    env = environment.get("collect_env") or {}
    names = (
        ("PyTorch version", "torch_version"),
        ("Is debug build", "is_debug_build"),
        ("CUDA used to build PyTorch", "cuda_compiled_version"),
        ("OS", "os"),
        ("GCC version", "gcc_version"),
        ("Libc version", "libc_version"),
        ("Python version", "python_version"),
        ("Python platform", "python_platform"),
        ("Is CUDA available", "is_cuda_available"),
    )
    lines = [f"{label}: {env[key]}" for label, key in names if env.get(key) is not None]
    return "\n".join(lines) or "(not recorded)"


def from_store(item: Linked, data: Corpus) -> CommentEvidence:
    """The comment's evidence from the newest recorded run of the first flagged target (no run is made)."""
    assert item.kind is not None  # only an item whose runs disagree with the issue gets a comment (drafts)
    target, history = next(iter(item.flagged().items()))
    release = history.decisive()[-1][0]
    loaded = data.loaded[target]
    records = [
        r
        for r in loaded.records
        if r.case == item.cd.case.id and r.variant == "repro" and release_of(r.torch) == release
    ]
    record = max(records, key=lambda r: r.recorded_at)
    loaded.with_outputs([record])
    header = loaded.runs.get(record.run_id)
    script = standalone(
        case_files.read_text(item.cd.path, "repro.py"),
        DEVICE_STRING[data.matrix.targets[target].device.kind],
        record.dtype,
    )
    ran = (
        f"Recorded run on torch {record.torch} ({target}, {record.recorded_at[:10]}): {record.verdict}"
        + (f", `{record.exception}`" if record.exception else "")
        + "."
    )
    return CommentEvidence(
        item.kind,
        item.histories,
        script,
        ran,
        as_user_sees(record.stderr_tail or ""),
        _recorded_versions(header.environment if header else {}),
        item.triage,
    )


def write(item: Linked, evidence: CommentEvidence, out: Path) -> tuple[Path, str]:
    """out/ID-comment.md and the `gh issue comment` line that posts it."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{item.cd.case.id}-comment.md"
    path.write_text(issue_comment.render(evidence), encoding="utf-8")
    return path, shlex.join(["gh", "issue", "comment", str(item.number), "--repo", REPO, "--body-file", str(path)])


def import_states(root: Path, source: Path, today: datetime.date | None = None) -> tuple[Path, int]:
    """issue-states.yaml updated from `gh api repos/pytorch/pytorch/issues/N` output (one JSON object per line with
    `number` and `state`), checked today; only issues the cases link are taken."""
    wanted = {n for cd in corpus.discover(root / "cases") for n in issue_states.issue_numbers(cd.case)}
    current = dict(issue_states.load(root).issues)
    taken = 0
    for i, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            number, state = int(item["number"]), str(item["state"]).lower()
        except (ValueError, KeyError, TypeError):
            raise InputError(f"{source}:{i}: not a JSON object with number and state") from None
        if state not in ("open", "closed"):
            raise InputError(f"{source}:{i}: state {state!r}: open or closed")
        if number in wanted:
            read: dict[str, Any] = {"state": state, "checked": today or datetime.date.today()}
            before = current.get(number)  # what was judged of the issue (link, triage) stays
            current[number] = before.model_copy(update=read) if before else issue_states.IssueState(**read)
            taken += 1
    return issue_states.save(root, issue_states.IssueStates(issues=current)), taken


def _update(root: Path, number: int, fields: dict) -> Path | None:
    current = dict(issue_states.load(root).issues)
    if number not in current:
        return None
    current[number] = current[number].model_copy(update=fields)
    return issue_states.save(root, issue_states.IssueStates(issues=current))


def record_triage(root: Path, number: int, line: str, torch: str, standing: TriageStanding) -> Path | None:
    """issue-states.yaml with what triage said of a linked issue (None: no case links it, nothing written): its
    sentence and, beside it, the standing as data."""
    return _update(
        root, number, {"triage": " ".join(line.split())[:400], "triage_torch": torch, **triage_data(standing)}
    )


def triage_data(standing: TriageStanding) -> dict:
    """The fields of issue-states.yaml that keep a standing as data (what `reprokit tracker` decides by)."""
    return {"triage_kind": standing.kind, "triage_releases": list(standing.releases)}


def record_link(root: Path, number: int, kind: str, why: str) -> Path | None:
    """issue-states.yaml with whether the linked case fails the way the issue reports, read from its thread."""
    if kind not in ("same", "related"):
        raise InputError(f"link {kind!r}: same or related")
    return _update(root, number, {"link": kind, "link_why": " ".join(why.split())[:300] or None})


def drafts(data: Corpus, out: Path) -> list[tuple[Linked, Path | None, str | None]]:
    """Every linked issue, in either state; a comment drafted from the store for each whose runs disagree with it."""
    found: list[tuple[Linked, Path | None, str | None]] = []
    for item in sorted(linked(data), key=lambda i: (i.kind is None, i.number)):
        if item.kind is None:
            (out / f"{item.cd.case.id}-comment.md").unlink(missing_ok=True)  # an earlier draft it no longer needs
            found.append((item, None, None))
        else:
            found.append((item, *write(item, from_store(item, data), out)))
    return found
