"""JUDGED -> DRAFTED or NO_COMMENT, the last step of a triage (issue_lifecycle): the fp64 reference's word on a
low-precision mismatch, then whether the standing adds to what the thread knows. Pure: one value in, one out."""

from __future__ import annotations

import dataclasses

from reprokit.tracker.issue import release_dates
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.judging import signature as sig
from reprokit.tracker.judging.issue_lifecycle import Step, Triage
from reprokit.tracker.judging.triage_judge import span
from reprokit.tracker.judging.triage_standing import DIFFERENT, DOES_NOT, NO_LONGER, NOT_POSTED, STILL, TriageStanding


def numerics(t: Triage, judged_line: str, wrong: bool | None, release: str) -> Triage:
    """JUDGED -> NO_COMMENT when the fp64 reference does not call the low-precision mismatch wrong, or cannot judge
    it; the triage unchanged when it does (wrong=True)."""
    if wrong is None:
        return dataclasses.replace(
            t,
            step=Step.NO_COMMENT,
            standing=TriageStanding(NOT_POSTED, f"cannot judge numerics on torch {release}: {judged_line}"),
        )
    if not wrong:
        return dataclasses.replace(
            t,
            step=Step.NO_COMMENT,
            standing=TriageStanding(
                NOT_POSTED,
                f"{judged_line} (torch {release}): the script compares low-precision outputs with each other",
            ),
        )
    return t


def decide(t: Triage, issue: Issue) -> Triage:
    """JUDGED -> DRAFTED where the standing adds to what the thread knows; else NO_COMMENT with the reason. A closed
    issue is told "still reproduces" only from a release published after it was closed: an older one is expected
    to fail."""
    if t.step is not Step.JUDGED:
        return t
    state = issue.state.lower()
    if t.standing.kind == STILL and issue.closed and (until := release_dates.expected_to_fail_until(issue)):
        failing = [j.release for j in t.judged if j.outcome is sig.SAME]
        if not any(release_dates.published_after(r, until[0]) for r in failing):
            return dataclasses.replace(
                t,
                step=Step.NO_COMMENT,
                standing=TriageStanding(
                    NOT_POSTED,
                    f"still fails on torch {span(failing)}, published no later than {until[0]} ({until[1]}): "
                    "a release from before the fix is expected to fail, no comment; run one published since",
                ),
            )
    agrees = (t.standing.kind in (NO_LONGER, DOES_NOT) and issue.closed) or (
        t.standing.kind == STILL and not issue.closed
    )
    if agrees:
        return dataclasses.replace(
            t,
            step=Step.NO_COMMENT,
            standing=dataclasses.replace(
                t.standing, detail=t.standing.detail + f"; the issue is {state}: it agrees, no comment"
            ),
        )
    if t.standing.kind == DIFFERENT and issue.closed:
        return dataclasses.replace(
            t,
            step=Step.NO_COMMENT,
            standing=dataclasses.replace(
                t.standing,
                detail=t.standing.detail + "; the issue is closed: another failure belongs in a new issue, no comment",
            ),
        )
    return dataclasses.replace(t, step=Step.DRAFTED)
