"""The states a triaged pytorch/pytorch issue can be in, and the value a triage carries through them, in one place (as
syzkaller keeps its bug states). The standing `triage` prints, the comment it drafts and what `--record` keeps in
issue-states.yaml are all read from the final `Triage` value. Each step is a module of its own: `reported` here,
observe in triage_observe, judge in triage_judge, numerics and decide in triage_decide.

    REPORTED --thread decides (closed as not planned, a maintainer's standing verdict)--> NO_COMMENT
    REPORTED --no script / the reported release cannot run it / it does not fail there either--> NO_COMMENT
    REPORTED --run on the reported release, its signature confirmed by the issue's text--> OBSERVED
    OBSERVED --every other release compared with that signature--> JUDGED
    JUDGED --the standing disagrees with the issue's state--> DRAFTED (a draft), else NO_COMMENT (agrees)

Standings: "still reproduces" (the newest release fails with the observed signature), "no longer reproduces" (it
passes, or, for an issue that asks for an error, now raises one), "fails differently" (another failure), "not posted:
<reason>". Pure: runs in, one value out; nothing here runs anything."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from reprokit.tracker.issue.build_stand_in import StandIn
from reprokit.tracker.issue.release_dates import source_words
from reprokit.tracker.judging import signature as sig
from reprokit.tracker.judging.signature import Signature
from reprokit.tracker.judging.triage_standing import NOT_POSTED, TriageStanding
from reprokit.tracker.text.clipped import clipped

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
    """One release's run judged against the issue's signature (triage_judge.judge): its outcome, in one line."""

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
    script_from: str = "the description"  # where the script run was found (issue_script.Reproducer.where)
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
