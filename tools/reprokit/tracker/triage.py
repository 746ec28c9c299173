"""`reprokit triage ISSUE`: run a pytorch/pytorch issue's own script and say where the issue stands.

The issue is read as `gh issue view N --json ...` prints it (`--issue-json FILE` reads that output from a file). Its
thread is read first (thread_reading: closed as not planned, a maintainer's standing verdict decide before anything
runs). Its script (issue_script.reproducer) is written to a folder of this triage's own under the triage cache (never
the repository, never shared with another triage) and run unchanged, contained exactly as `reprokit run` runs case
code (upstream_runs.contained) on the target's device (triage_device), first on the release the issue reports (or,
where that one cannot be installed here, the nearest release run that is not newer): what that run does is the
issue's signature (signature.py), which the issue's text only confirms. The target's newest stable release is judged
against it (triage_releases says which releases run), and issue_lifecycle decides the standing and whether a comment
is drafted. Where the reported release is not run (--here, or not installable), the newest run is judged alone.

Here: the thread, the script, the plan and the triage's folder; triage_request: what a triage is asked and answers;
triage_release_runs: the runs and their judging; triage_draft: the decision and the comment.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from reprokit.model.matrix import Matrix
from reprokit.run import torch_envs
from reprokit.run.child_setup import write_readable_script
from reprokit.tracker import triage_release_runs
from reprokit.tracker.issue import build_stand_in, issue_reported, issue_script, thread_reading
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.judging import issue_lifecycle, triage_device, triage_releases, triage_runs
from reprokit.tracker.triage_request import Request, Triaged, release_judged_on


def _write_script(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    return write_readable_script(folder / "repro.py", text)


def triage(issue: Issue, request: Request, matrix: Matrix, out: Path, *, ours: tuple = (), log=print) -> Triaged:
    """The thread first, then the run on the reported release (the signature), the newest stable judged against it,
    the fp64 check where the signature is a low-precision comparison, and the comment where one is worth posting.
    The script stays in a folder of this triage's own, removed at the end."""
    (out / f"issue-{issue.number}-comment.md").unlink(missing_ok=True)  # an earlier draft says no more
    if verdict := thread_reading.closure(issue):
        return Triaged(issue, issue_lifecycle.reported(verdict.line() + " (nothing was run)"), [], None)
    found = issue_script.reproducer_anywhere(issue)
    if found is None:
        return Triaged(
            issue,
            issue_lifecycle.reported(
                "neither the description nor a comment by its author or a member has a fenced Python block that imports "
                "torch"
            ),
            [],
            None,
        )
    if found.from_comment:
        log(f"triage: the description has no script; running the one from {found.where}")
    text = found.text
    setting = triage_device.setting(text, matrix, request.target, sys.executable, request.timeout)
    target = matrix.targets[request.target]
    reported, by_date = release_judged_on(issue, request.reported)
    named = request.reported or issue_reported.reported_version(issue)  # the build as the issue names it, +local kept
    stand_in = build_stand_in.stand_in(named, issue.created) if named else None
    if stand_in is not None and stand_in.before is not None:
        log(
            f"triage: torch {stand_in.build} is a {stand_in.kind} build no index serves: torch "
            f"{' then '.join(stand_in.releases())} stand{'s' if len(stand_in.releases()) == 1 else ''} in for it"
        )
        reported = stand_in.before
    else:
        stand_in = None
    plan = triage_releases.plan(
        reported,
        target,
        nightly=request.nightly,
        given=list(request.releases) or None,
        here=request.here,
    )
    log(plan.announce(request.target))
    (torch_envs.cache_root() / "triage").mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{issue.number}-", dir=torch_envs.cache_root() / "triage"))
    try:
        folder.chmod(0o755)
        runner = triage_runs.Runner(
            setting, _write_script(folder / "script", text), (*ours, torch_envs.cache_root(), folder)
        )
        return triage_release_runs.judged(
            issue, request, target, plan, found, (reported, by_date, stand_in), runner, folder, out, log
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
