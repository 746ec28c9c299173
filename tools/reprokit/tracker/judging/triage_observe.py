"""REPORTED -> OBSERVED (or NO_COMMENT), the first step of a triage (issue_lifecycle): the run on the reported release
read into the issue's signature, which the issue's text must confirm; or, where the reported release was not run, that
run judged alone. Pure: runs in, one value out."""

from __future__ import annotations

from typing import Any

from reprokit.model.records import RunStatus
from reprokit.tracker.issue.build_stand_in import StandIn
from reprokit.tracker.issue.exit_evidence import ExitEvidence
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.issue.issue_reported import cut_before_error
from reprokit.tracker.issue.issue_script import without_script
from reprokit.tracker.issue.release_dates import on_reported, reported_words
from reprokit.tracker.judging import crash_only, eager_fix, unjudged
from reprokit.tracker.judging import signature as sig
from reprokit.tracker.judging.issue_lifecycle import ReleaseJudgement, Step, Triage, reported
from reprokit.tracker.judging.signature import Signature
from reprokit.tracker.judging.triage_standing import (
    DOES_NOT,
    NO_LONGER,
    STILL,
    TriageRun,
    TriageStanding,
    observed_line,
)

NOW_RAISES = sig.NOW_RAISES


def before_compile(ran: TriageRun) -> bool:
    """The script failed in eager code before any graph was compiled (no torch.compile stage, no graph)."""
    obs = ran.obs
    assert obs is not None  # a run that did not run never gets here (observe returned; judge skips NOT_RUN)
    graphs = (obs.dynamo or {}).get("unique_graphs", 0) if isinstance(obs.dynamo, dict) else 0
    return obs.status != RunStatus.PASS and (obs.stage in (None, "runtime")) and not graphs


def observe(
    issue: Issue,
    ref: TriageRun,
    script: str,
    accepts: bool,
    reported_release: str | None,
    reported_by_date: str = "",
    *,
    baseline_run: bool = True,
    evidence: ExitEvidence = ExitEvidence.RAISES,
    eager: eager_fix.EagerError | None = None,
    stand_in: StandIn | None = None,
    stood_in: tuple[str, ...] = (),
) -> Triage:
    """REPORTED -> OBSERVED (or NO_COMMENT): the signature of the run on the reported release (or, where the issue
    names none, the newest release when it was opened). `baseline_run` False: the reported release was not run and
    `ref` is newer (--here, or the reported one cannot be installed): a clean exit, or eager's error where the issue
    reports a crash, is then judged on this run alone. `eager`: the error the script raises with torch.compile
    disabled on `ref`, where that was run. `stand_in`: the issue names a build no index serves, and `ref` stands in
    for it (`stood_in`: the stand-ins run before, which exit 0)."""
    facts: dict[str, Any] = {
        "reported": reported_release,
        "reported_by_date": reported_by_date,  # Triage's fields
        "observed_on": ref.release,
        "accepts": accepts,
        "baseline_run": baseline_run,
        "stand_in": stand_in,
        "stood_in": stood_in,
    }
    if why := unjudged.reference_unjudged(ref, issue):
        return reported(why, **facts)
    assert ref.obs is not None  # reference_unjudged: a run that did not run is unjudged
    found = sig.of(ref.obs, ref.log)
    texts = [issue.title, issue.body, *(c.body for c in issue.comments)]
    unrun = "" if baseline_run else f" ({_unrun_words(facts)})"
    if found.kind is sig.PASSES:
        return _passes(ref, found, accepts, evidence, unrun, facts)
    if found.kind is sig.EXITS:
        words = unjudged.HANG_WORDS if ref.obs.status == RunStatus.TIMEOUT else eager_fix.CRASH_WORDS
        if not words.search("\n".join(texts)):
            return reported(
                f"on torch {ref.release} the script {observed_line(ref.obs)}, which the issue's text does not describe",
                signature=found,
                **facts,
            )
        return Triage(
            Step.OBSERVED, TriageStanding(STILL, ""), signature=found, confirmed="the issue describes it", **facts
        )
    if before_compile(ref):
        return reported(
            f"on torch {ref.release} the script fails before any compiled call ({observed_line(ref.obs)}, "
            "in eager code): that says nothing about the compiled behaviour",
            signature=found,
            **facts,
        )
    fixed = eager_fix.eager_fixed(issue, found.kind, found.exception, accepts, eager, message=ref.obs.message or "")
    if eager is not None and fixed:
        said = f"{observed_line(ref.obs)}, {fixed}"
        if baseline_run:
            return reported(
                f"on {_on(ref.release, facts)} the script raises "
                f"{said}: the failure the issue reports did not happen here",
                signature=found,
                **facts,
            )
        return Triage(
            Step.JUDGED,
            TriageStanding(NO_LONGER, f"on torch {ref.release}: now raises {said}{unrun}", (ref.release,)),
            signature=found,
            judged=(ReleaseJudgement(ref.release, NOW_RAISES, observed_line(ref.obs), fixed),),
            **facts,
        )
    normal = sig.normalised_text(texts)  # once: both checks read it
    confirmed = sig.confirmed_in(found, texts, normal, without_script(issue)) or sig.printed_in(
        ref.obs.stdout_tail, texts, normal
    )
    if confirmed is None and cut_before_error(issue):
        confirmed = "the issue's log is cut before its error line: judged on the observed run alone"
    if confirmed is None and (crash := crash_only.reading(issue, script, found)) is not None:
        if crash.same:
            facts["quotes_no_error"], confirmed = True, crash.confirmed(found)
        else:
            facts["quoted_other"], confirmed = crash.quoted, f"the issue quotes another error ({crash.quoted})"
    if confirmed is None:
        return reported(
            f"on torch {ref.release} the script fails with {found.line()}, which the issue's text does "
            "not mention: not the failure it reports",
            signature=found,
            **facts,
        )
    return Triage(Step.OBSERVED, TriageStanding(STILL, ""), signature=found, confirmed=confirmed, **facts)


def _on(release: str, facts: dict[str, Any]) -> str:
    """The release a run was, in words: the reported one, the newest at the issue's date, or what it stands in for."""
    if (stand_in := facts["stand_in"]) is not None:
        return f"torch {release}, {stand_in.role(release)} the issue reports"
    return on_reported(release, facts["reported"], facts["reported_by_date"])


def _unrun_words(facts: dict[str, Any]) -> str:
    """Why the run is judged alone: the reported release (or build) not run, and the stand-ins that showed nothing."""
    stand_in, tried = facts["stand_in"], facts["stood_in"]
    if stand_in is None:
        return f"the reported {reported_words(facts['reported'], facts['reported_by_date'])} was not run here"
    return stand_in.unrun_words(tried)


def _passes(
    ref: TriageRun, found: Signature, accepts: bool, evidence: ExitEvidence, unrun: str, facts: dict[str, Any]
) -> Triage:
    """The reference run exits 0: the bug itself where the issue asks for an error; a question where the reported
    release was not run and the script's exit status decides; else nothing to say."""
    if accepts:
        return Triage(
            Step.OBSERVED,
            TriageStanding(STILL, ""),
            signature=found,
            confirmed="the issue asks for an error and the script finishes without one",
            **facts,
        )
    if not facts["baseline_run"]:
        if not evidence.decides:
            return reported(
                f"the script exits 0 on torch {ref.release}{unrun}, but {evidence.words()}: nothing to say",
                signature=found,
                **facts,
            )
        return Triage(
            Step.JUDGED,
            TriageStanding(
                DOES_NOT, f"on torch {ref.release}: the script exits 0 where {evidence.words()}{unrun}", (ref.release,)
            ),
            signature=found,
            judged=(ReleaseJudgement(ref.release, sig.GOOD, "exits 0"),),
            exit_says=evidence.words(),
            **facts,
        )
    checks = "" if evidence.decides else f" ({evidence.words()})"
    return reported(
        f"does not reproduce on {_on(ref.release, facts)}: the script exits 0{checks}; nothing to say",
        signature=found,
        **facts,
    )
