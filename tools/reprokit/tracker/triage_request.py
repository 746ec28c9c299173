"""What a triage is asked and what it answers: the issue read with the GitHub CLI, the command line's request merged
once (Request), the release the issue is judged on, and the standing with the runs and the draft (Triaged)."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.choices import GH_FIELDS, TRIAGE_TIMEOUT
from reprokit.model.schema import EnvironmentProblem, InputError
from reprokit.store.views import release_of
from reprokit.tracker.issue import issue_json, issue_reported, release_dates
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.judging.issue_lifecycle import Triage
from reprokit.tracker.judging.triage_standing import TriageRun

TIMEOUT = TRIAGE_TIMEOUT


@dataclass(frozen=True)
class Triaged:
    issue: Issue
    triage: Triage
    runs: list[TriageRun]
    draft: Path | None

    @property
    def standing(self):
        return self.triage.standing


def from_gh(number: int) -> Issue:
    """The issue read with the GitHub CLI (read-only)."""
    gh = shutil.which("gh")
    if gh is None:
        raise EnvironmentProblem(
            f"gh is not installed: read the issue elsewhere with `gh issue view {number} --repo "
            f"pytorch/pytorch --json {GH_FIELDS}` and pass the file with --issue-json"
        )
    done = subprocess.run(
        [gh, "issue", "view", str(number), "--repo", "pytorch/pytorch", "--json", GH_FIELDS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise EnvironmentProblem(f"gh issue view {number}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}")
    try:
        return issue_json.parse(json.loads(done.stdout))
    except (ValueError, RecursionError):
        raise InputError(f"gh issue view {number}: did not print JSON") from None


@dataclass(frozen=True, kw_only=True)
class Request:
    """What the command line asked, merged once and named field by field (three flags side by side are never told
    apart by position): the target, which releases (default: the reported one and the target's newest stable), and
    the limits of each run. The matrix the target is read from is the repository's, not the command line's."""

    target: str = "cpu"
    releases: tuple[str, ...] = ()  # --releases: exactly these (versions or interpreters' paths)
    here: bool = False  # this interpreter's torch alone
    nightly: bool = False
    since: bool = False  # bisect the recorded releases between two differing outcomes
    reported: str | None = None  # --reported-release
    timeout: float = TIMEOUT


def reported_release(issue: Issue) -> str | None:
    version = issue_reported.reported_version(issue)
    return release_of(version) if version else None


def release_judged_on(issue: Issue, given: str | None) -> tuple[str | None, str]:
    """The release the issue is judged on (--reported-release, else the one it reports, else the newest published
    before the day it was opened) and, in the last case, that day."""
    if reported := given or reported_release(issue):
        return reported, ""
    by_date = release_dates.newest_before(issue.created)
    return by_date, issue.created[:10] if by_date else ""
