"""The states a triaged pytorch/pytorch issue can be in, and the transitions between them, in one place (as syzkaller
keeps its bug states). The standing `triage` prints, the comment it drafts and what `--record` keeps in
issue-states.yaml are all read from the final `Triage` value.

    REPORTED --thread decides (closed as not planned, a maintainer's standing verdict)--> NO_COMMENT
    REPORTED --no script / the reported release cannot run it / it does not fail there either--> NO_COMMENT
    REPORTED --run on the reported release, its signature confirmed by the issue's text--> OBSERVED
    OBSERVED --every other release compared with that signature--> JUDGED
    JUDGED --the standing disagrees with the issue's state--> DRAFTED (a draft), else NO_COMMENT (agrees)

Standings: "still reproduces" (the newest release fails with the observed signature), "no longer reproduces" (it
passes, or, for an issue that asks for an error, now raises one), "fails differently" (another failure), "not posted:
<reason>". Pure: runs in, one value out; nothing here runs anything."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any

from reprokit.model.records import RunStatus
from reprokit.model.releases import release_key
from reprokit.tracker.issue import release_dates
from reprokit.tracker.issue.build_stand_in import StandIn
from reprokit.tracker.issue.exit_evidence import ExitEvidence
from reprokit.tracker.issue.issue_json import Issue, cut_before_error, without_script
from reprokit.tracker.issue.release_dates import on_reported, reported_words, source_words
from reprokit.tracker.judging import crash_only, eager_fix, unjudged
from reprokit.tracker.judging import signature as sig
from reprokit.tracker.judging.signature import Signature
from reprokit.tracker.judging.triage_standing import (
    DIFFERENT,
    DOES_NOT,
    NO_LONGER,
    NOT_POSTED,
    STILL,
    TriageRun,
    TriageStanding,
    observed_line,
)
from reprokit.tracker.text.clipped import clipped

NOW_RAISES = sig.NOW_RAISES
order = partial(release_key, labels="nightly-last")  # oldest first, as triage_releases orders them
RECORD_LIMIT = 300  # characters of the sentence issue-states.yaml keeps


class Step(str, Enum):
    """Where a triage is in its life (never stored, never rendered): its last step is DRAFTED (a comment draft is
    written) or NO_COMMENT (it ends without one). Which words its standing begins with is the standing's own
    vocabulary (StandingKind, stored in issue-states.yaml): a triage that ends with no comment may still stand as
    "still reproduces" (it agrees with the thread), and no word of one vocabulary is a word of the other."""

    REPORTED = "reported"
    OBSERVED = "observed on the reported release"
    JUDGED = "judged per release"
    DRAFTED = "comment drafted"
    NO_COMMENT = "ended without a comment"


@dataclass(frozen=True)
class ReleaseJudgement:
    """One release's run judged against the issue's signature (issue_lifecycle.judge): its outcome, in one line."""

    release: str
    outcome: sig.Outcome
    line: str  # what the run did (observed_line), torch's words only
    fix: str = ""  # NOW_RAISES: how that error is the fix, in our words ("as eager does")

    def said(self) -> str:
        return f"{self.line}, {self.fix}" if self.fix else self.line


@dataclass(frozen=True)
class Triage:
    step: Step
    standing: TriageStanding
    reported: str | None = None  # the release the issue reports (collect_env's, or --reported-release)
    reported_by_date: str = ""  # the day the issue was opened, where `reported` was taken from it (release_dates)
    observed_on: str | None = None  # the release whose run gave the signature
    signature: Signature | None = None
    accepts: bool = False  # the complaint is that torch accepts what it should refuse
    confirmed: str | None = None  # how the issue's text confirms the signature
    judged: tuple[ReleaseJudgement, ...] = ()
    baseline_run: bool = True  # False: the reported release was not run (--here, or it cannot be installed here)
    exit_says: str = ""  # why the script's exit status is evidence (exit_evidence), where a clean exit is judged
    stand_in: StandIn | None = None  # where the issue names a build no index serves: the releases standing in for it
    stood_in: tuple[str, ...] = ()  # stand-ins run before `observed_on` that exit 0 (they showed nothing)
    script_from: str = "the description"  # where the script run was found (issue_json.Reproducer.where)
    unrun_between: tuple[
        str, ...
    ] = ()  # NO_LONGER: published releases between the last bad and the first good, not run
    quotes_no_error: bool = False  # a crash-only script's exception taken as the failure of an issue quoting none
    quoted_other: str = ""  # the error line the issue quotes, where a crash-only script raises another (crash_only)

    @property
    def post(self) -> bool:
        return self.step is Step.DRAFTED

    def source(self) -> str:
        """Where the release it is judged on comes from, in words."""
        if self.stand_in is not None and self.observed_on:
            return f"{self.stand_in.role(self.observed_on)}, which the issue reports"
        return source_words(self.reported, self.reported_by_date)

    def record_line(self, limit: int = RECORD_LIMIT) -> str:
        """What issue-states.yaml keeps, in at most `limit` characters: the standing, where the script came from when
        not the description, and the signature it was judged against (each part cut at a word, the bracket whole)."""
        source = "" if self.script_from == "the description" else f" (the script from {self.script_from})"
        bracket = (
            f" [signature on torch {self.observed_on}: {self.signature.line(limit // 3)}]" if self.signature else ""
        )
        return clipped(self.standing.line(), limit - len(source) - len(bracket)) + source + bracket


def reported(standing_reason: str, **facts) -> Triage:
    """REPORTED -> NO_COMMENT (standing "not posted") before anything runs (or with nothing to judge)."""
    return Triage(Step.NO_COMMENT, TriageStanding(NOT_POSTED, standing_reason), **facts)


def _before_compile(ran: TriageRun) -> bool:
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
    if _before_compile(ref):
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


def _span(names: list[str]) -> str:
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
                STILL, f"on torch {_span(same)} (newest run: {newest.release}): {said}", tuple(same)
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
            detail = f"on every release run from {_span(stretch)}: {how}"
        elif unrun:  # "since" would claim the releases between, which nothing ran
            detail = (
                f"on torch {_span(stretch)}: {how}; fixed after {last_bad.release}, the last release run with "
                f"the bug; the releases between ({_span(list(unrun))}) were not run: --since bisects "
                "them"
            )
        else:
            detail = f"since {stretch[0]}: {how} (last bad {last_bad.release}: {last_bad.said()})"
        return dataclasses.replace(
            step, standing=TriageStanding(NO_LONGER, detail, tuple(stretch)), unrun_between=unrun
        )
    if _before_compile(next(r for r in runs if r.release == newest.release)):
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
                f"(the issue quotes {step.quoted_other}; on torch {_span(failing)}: {newest.line})",
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
                    f"still fails on torch {_span(failing)}, published no later than {until[0]} ({until[1]}): "
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
