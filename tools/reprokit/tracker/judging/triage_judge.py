"""OBSERVED -> JUDGED, the second step of a triage (issue_lifecycle): every release run compared with the signature
observed on the reported release, and the standing read from the newest. Pure: runs in, one value out."""

from __future__ import annotations

import dataclasses
from functools import partial

from reprokit.model.releases import release_key
from reprokit.tracker.issue import release_dates
from reprokit.tracker.judging import signature as sig
from reprokit.tracker.judging import unjudged
from reprokit.tracker.judging.issue_lifecycle import ReleaseJudgement, Step, Triage
from reprokit.tracker.judging.triage_observe import before_compile
from reprokit.tracker.judging.triage_standing import (
    DIFFERENT,
    NO_LONGER,
    NOT_POSTED,
    STILL,
    TriageRun,
    TriageStanding,
    observed_line,
)

NOW_RAISES = sig.NOW_RAISES
order = partial(release_key, labels="nightly-last")  # oldest first, as triage_releases orders them


def outcome(t: Triage, ran: TriageRun, eager_fix: bool = False) -> sig.Outcome:
    """How one release's run compares with the signature (signature.compare), an issue asking for an error and a
    fix that raises eager's error (`eager_fix`) read as the issue means them."""
    assert t.signature is not None  # only an observed or judged triage is compared, and both have a signature
    got = sig.compare(t.signature, ran.obs, ran.log)
    if t.accepts and t.signature.kind is sig.PASSES:
        if got is sig.GOOD:
            return sig.SAME  # still accepts it
        if ran.obs is not None and ran.obs.exception:
            return NOW_RAISES
    if got is sig.OTHER and eager_fix:
        return NOW_RAISES
    return got


def span(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"


def judge(t: Triage, runs: list[TriageRun], eager_fixes: dict[str, str] | None = None) -> Triage:
    """OBSERVED -> JUDGED: each release run compared with the signature; the standing from the newest release.
    `eager_fixes`: the releases whose run raises the error eager raises where the issue reports a crash, a silent
    acceptance or an internal error (eager_fixed), with how in words: the fix the issue asked for."""
    assert t.signature is not None  # an observed triage has its signature (observe)
    eager_fixes = eager_fixes or {}
    judged = tuple(
        ReleaseJudgement(
            r.release, o, r.why or observed_line(r.obs), eager_fixes.get(r.release, "") if o is NOW_RAISES else ""
        )
        for r in runs
        for o in [outcome(t, r, r.release in eager_fixes)]
    )
    start = next(i for i, r in enumerate(runs) if r.release == t.observed_on)
    since = [j for j in judged[start:] if j.outcome is not sig.NOT_RUN]
    newest = since[-1]
    step = dataclasses.replace(t, step=Step.JUDGED, judged=judged)
    late = next(r for r in runs if r.release == newest.release)
    if why := unjudged.later_unjudged(late, t.signature):
        return dataclasses.replace(step, step=Step.NO_COMMENT, standing=TriageStanding(NOT_POSTED, why))
    if t.quoted_other:
        return _not_the_quoted(step, since, newest)
    if newest.outcome is sig.SAME:
        same = [j.release for j in since if j.outcome is sig.SAME]
        said = "accepts it without an error" if t.accepts and t.signature.kind is sig.PASSES else t.signature.line()
        said += "; the issue quotes no error, and this exception is the script's only way to fail" * t.quotes_no_error
        return dataclasses.replace(
            step,
            standing=TriageStanding(
                STILL, f"on torch {span(same)} (newest run: {newest.release}): {said}", tuple(same)
            ),
        )
    if newest.outcome in (sig.GOOD, NOW_RAISES):
        stretch: list[str] = []
        for j in reversed(since):
            if j.outcome != newest.outcome:
                break
            stretch.insert(0, j.release)
        last_bad = next((j for j in reversed(since) if j.outcome is sig.SAME and j.release not in stretch), None)
        how = f"now raises {newest.said()}" if newest.outcome is NOW_RAISES else "the script exits 0"
        ran = {j.release for j in judged if j.outcome is not sig.NOT_RUN}
        unrun = tuple(
            r
            for r in release_dates.published()
            if r not in ran and last_bad is not None and order(last_bad.release) < order(r) < order(stretch[0])
        )
        if last_bad is None:
            detail = f"on every release run from {span(stretch)}: {how}"
        elif unrun:  # "since" would claim the releases between, which nothing ran
            detail = (
                f"on torch {span(stretch)}: {how}; fixed after {last_bad.release}, the last release run with "
                f"the bug; the releases between ({span(list(unrun))}) were not run: --since bisects "
                "them"
            )
        else:
            detail = f"since {stretch[0]}: {how} (last bad {last_bad.release}: {last_bad.said()})"
        return dataclasses.replace(
            step, standing=TriageStanding(NO_LONGER, detail, tuple(stretch)), unrun_between=unrun
        )
    if before_compile(next(r for r in runs if r.release == newest.release)):
        return dataclasses.replace(
            step,
            step=Step.NO_COMMENT,
            standing=TriageStanding(
                NOT_POSTED,
                f"on torch {newest.release} the script fails before any compiled call ({newest.line}): that "
                "says nothing about the reported bug",
            ),
        )
    return dataclasses.replace(
        step,
        standing=TriageStanding(
            DIFFERENT,
            f"(on torch {t.observed_on}: {t.signature.line()}; on torch {newest.release}: {newest.line})",
            (newest.release,),
        ),
    )


def _not_the_quoted(step: Triage, since: list[ReleaseJudgement], newest: ReleaseJudgement) -> Triage:
    """A crash-only script that raises another error than the one the issue quotes: "fails differently" while the
    newest release still fails (both errors named, no claim either way); nothing to say once it passes, since the
    quoted failure was never seen here."""
    assert step.signature is not None  # judged from an observed triage
    failing = [j.release for j in since if j.outcome in (sig.SAME, sig.OTHER)]
    if newest.outcome in (sig.SAME, sig.OTHER):
        return dataclasses.replace(
            step,
            standing=TriageStanding(
                DIFFERENT,
                f"(the issue quotes {step.quoted_other}; on torch {span(failing)}: {newest.line})",
                (newest.release,),
            ),
        )
    return dataclasses.replace(
        step,
        step=Step.NO_COMMENT,
        standing=TriageStanding(
            NOT_POSTED,
            f"on torch {step.observed_on} the script fails with {step.signature.line()}, not the "
            f"{step.quoted_other} the issue quotes, and on torch {newest.release}: {newest.said()}; the quoted "
            "failure was never seen here, nothing to say",
        ),
    )
