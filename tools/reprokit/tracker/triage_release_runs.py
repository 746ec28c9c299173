"""The run of the releases: the issue's script run on the reference release (the reported one, a build's stand-ins,
or the newest where the reported one cannot be installed), its signature observed, then the later releases run one at
a time and judged against it (triage_observe, triage_judge); triage_draft ends the triage."""

from __future__ import annotations

import sys
from pathlib import Path

from reprokit.model.matrix import Target
from reprokit.tracker import triage_draft
from reprokit.tracker.issue import exit_evidence, issue_reported, issue_script, thread_reading
from reprokit.tracker.issue.build_stand_in import StandIn
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.judging import (
    eager_fix,
    issue_lifecycle,
    signature,
    triage_judge,
    triage_observe,
    triage_releases,
    triage_runs,
    unjudged,
)
from reprokit.tracker.judging.issue_lifecycle import Step, Triage
from reprokit.tracker.judging.triage_releases import Offered, order
from reprokit.tracker.judging.triage_standing import TriageRun, observed_line
from reprokit.tracker.triage_request import Request, Triaged


def _flaky(issue: Issue, ref: str, tries: list[TriageRun]) -> Triaged:
    return Triaged(
        issue,
        issue_lifecycle.reported(
            f"flaky on torch {ref}: three runs of the script disagree ("
            + "; ".join(observed_line(r.obs) for r in tries)
            + "): no signature to judge against"
        ),
        tries,
        None,
    )


def _reference(
    issue: Issue,
    request: Request,
    target: Target,
    plan: triage_releases.Plan,
    reported: str | None,
    by_date: str,
    offered: dict[str, Offered],
    log,
) -> tuple[str | None, bool, Triaged | None]:
    """The release whose run gives the signature, whether it is (or stands in for) the reported one, or the
    standing that ends the triage before any run (a reported release that exists but cannot be installed now)."""
    if request.here:
        here = triage_releases.version_of(sys.executable, max(request.timeout, triage_releases.READ_VERSION_TIMEOUT))
        offered[here] = Offered(here, sys.executable)
        return here, not (reported is None or order(here) > order(reported)), None
    if request.releases:  # exactly these: every one built, the reference the nearest not newer than the reported
        for release in plan.releases:
            o = triage_releases.offer(release, request.timeout, log, *_source(target))
            offered.setdefault(o.release, o)
    elif plan.reported:  # by default the reported release first: the newest is built only once it has been run
        offered[plan.reported] = triage_releases.offer(plan.reported, request.timeout, log, *_source(target))
    if reported is not None and (failed := offered.get(reported)) is not None and failed.transient:
        which = "the newest release when the issue was opened" if by_date else "the release the issue reports"
        return (
            None,
            True,
            Triaged(
                issue,
                issue_lifecycle.reported(
                    f"not judged: torch {reported}, {which}, {failed.why}; no other release stands in for one that exists: "
                    "run triage again once it installs"
                ),
                [TriageRun(failed.release, None, failed.why)],
                None,
            ),
        )
    available = sorted((r for r, o in offered.items() if o.python), key=order)
    if request.releases or (reported in available):
        ref = triage_releases.reference(reported, available)
        return ref, ref is not None and not (reported is None or order(ref) > order(reported)), None
    newest = next(r for r in reversed(plan.releases) if r != "nightly")
    offered[newest] = triage_releases.offer(newest, request.timeout, log, *_source(target))
    return (newest if offered[newest].python else None), False, None


def _named(plan: triage_releases.Plan, offered: dict[str, Offered]) -> list[str]:
    """The plan's releases oldest first, an interpreter's path (--releases) named by the release it holds (offered
    before any run), so that it is ordered among the others and not taken as older than all of them."""
    by_path = {o.python: o.release for o in offered.values() if o.python}
    return sorted(dict.fromkeys(by_path.get(r, r) for r in plan.releases), key=order)


def _source(target: Target) -> tuple[str, str | None]:
    return target.family, (target.pins.index_url if target.family != "cpu" else None)


def _stand_ins_after(stand_in: StandIn | None, ref: str, plan: triage_releases.Plan) -> list[tuple[str, bool]]:
    """Where the stand-in before a build exits 0: the release the build became (judged as the reported one), then the
    newest judged alone (its exit status asked about), each only where newer than the release run."""
    if stand_in is None:
        return []
    newest = next(r for r in reversed(plan.releases) if r != "nightly")
    became = [(stand_in.became, True)] if stand_in.became and order(stand_in.became) > order(ref) else []
    return [*became, *([(newest, False)] if order(newest) > order(ref) else [])]


def _shows_nothing(t: Triage) -> bool:
    return t.step is Step.NO_COMMENT and t.signature is not None and t.signature.kind is signature.PASSES


def judged(
    issue: Issue,
    request: Request,
    target: Target,
    plan,
    found: issue_script.Reproducer,
    judged_on: tuple[str | None, str, StandIn | None],
    runner: triage_runs.Runner,
    folder: Path,
    out: Path,
    log,
) -> Triaged:
    """Run the issue's script on the reference release and the later ones, and judge what they did.

    Long: one straight sequence of the triage's steps (the reference, a build's stand-ins, the retry of a run past its
    limit, the later releases), each of which may end the triage with its own standing; split, each piece would
    need the whole state passed back and forth. What follows the judging reads only its result (triage_draft)."""
    reported, by_date, stand_in = judged_on
    text = found.text
    offered: dict[str, Offered] = {}
    ref, baseline_run, ended = _reference(issue, request, target, plan, reported, by_date, offered, log)
    if ended is not None:
        return ended
    if ref is None:
        return Triaged(
            issue,
            issue_lifecycle.reported("no torch release could be installed here"),
            [TriageRun(o.release, None, o.why) for o in offered.values()],
            None,
        )
    python_of = {r: o.python for r, o in offered.items() if o.python}
    hangs = unjudged.reports_hang(issue)
    chosen, tries, past = triage_runs.reference_runs(ref, python_of[ref], runner, log, hangs)
    if chosen is None and past:
        return Triaged(
            issue,
            issue_lifecycle.reported(
                f"not judged here: on torch {ref} the script {past}, twice the {request.timeout:.0f} s limit, and the "
                "issue reports no hang"
            ),
            tries,
            None,
        )
    if chosen is None:
        return _flaky(issue, ref, tries)
    accepts = thread_reading.asks_for_error(issue)
    complains = eager_fix.complains_of_compiler(issue, accepts)
    eager = runner.eager_error(python_of[ref]) if chosen.obs.exception and complains else None
    evidence = exit_evidence.of(
        text, complains or issue_reported.reported_failure(issue) is not None or issue_reported.cut_before_error(issue)
    )  # a traceback, cut: an error was reported
    runs = [chosen]
    t = triage_observe.observe(
        issue,
        chosen,
        text,
        accepts,
        reported,
        by_date,
        baseline_run=baseline_run,
        evidence=evidence,
        eager=eager,
        stand_in=stand_in,
    )
    for alt, baseline in _stand_ins_after(stand_in, ref, plan) if not (request.here or request.releases) else []:
        if not _shows_nothing(t):
            break
        o = offered.get(alt) or triage_releases.offer(alt, request.timeout, log, *_source(target))
        offered[o.release] = o
        if o.python is None:
            continue
        python_of[alt] = o.python
        again = (
            next((r for r in runs if r.release == alt), None)
            or triage_runs.reference_runs(alt, o.python, runner, log, hangs)[0]
        )
        if again is None:
            break
        tried = (*t.stood_in, ref) if ref != alt else t.stood_in
        runs, ref, chosen = [*(r for r in runs if r.release != alt), again], alt, again
        eager = runner.eager_error(o.python) if again.obs.exception and complains else None
        t = triage_observe.observe(
            issue,
            again,
            text,
            accepts,
            reported,
            by_date,
            baseline_run=baseline,
            evidence=evidence,
            eager=eager,
            stand_in=stand_in,
            stood_in=tried,
        )
    if t.step is Step.OBSERVED:  # only then are the later releases worth running (built one at a time, on demand)
        assert t.signature is not None  # observe gives an observed triage its signature
        for release in [r for r in _named(plan, offered) if order(r) > order(ref)] if not request.here else []:
            o = offered.get(release) or triage_releases.offer(release, request.timeout, log, *_source(target))
            offered[o.release] = o
            runs.append(
                runner.ran_to_end(o.release, o.python, hangs) if o.python else TriageRun(o.release, None, o.why)
            )
            python_of.update({o.release: o.python} if o.python else {})
        newest = runs[-1]
        fixes: dict[str, str] = {}
        if (
            newest.obs is not None
            and newest.obs.exception
            and complains
            and triage_judge.outcome(t, newest) is signature.OTHER
        ):
            how = eager_fix.eager_fixed(
                issue,
                t.signature.kind,
                newest.obs.exception.rsplit(".", 1)[-1],
                accepts,
                runner.eager_error(python_of[newest.release]),
                t.signature.exception,
                newest.obs.message or "",
            )
            fixes = {newest.release: how} if how else {}
        if request.since:
            history = [str(v) for v in target.pins.history]
            runs = triage_runs.bisect(
                t,
                runs,
                runner,
                history,
                lambda r: offered.setdefault(r, triage_releases.offer(r, request.timeout, log, *_source(target))),
            )
            python_of.update({r: o.python for r, o in offered.items() if o.python})
        t = triage_judge.judge(t, runs, fixes)
    return triage_draft.concluded(issue, t, runs, found, runner, python_of, ref, folder, out)
