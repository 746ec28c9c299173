"""`reprokit triage ISSUE`: run a pytorch/pytorch issue's own script and say where the issue stands.

The issue is read as `gh issue view N --json ...` prints it (`--issue-json FILE` reads that output from a file). Its
thread is read first (thread_reading: closed as not planned, a maintainer's standing verdict decide before anything
runs). Its script (issue_json.reproducer) is written to a folder of this triage's own under the triage cache (never
the repository, never shared with another triage) and run unchanged, contained exactly as `reprokit run` runs case
code (upstream_runs.contained) on the target's device (triage_device), first on the release the issue reports (or,
where that one cannot be installed here, the nearest release run that is not newer): what that run does is the
issue's signature (signature.py), which the issue's text only confirms. The target's newest stable release is judged
against it (triage_releases says which releases run), and issue_lifecycle decides the standing and whether a comment
is drafted. Where the reported release is not run (--here, or not installable), the newest run is judged alone.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.choices import GH_FIELDS, TRIAGE_TIMEOUT
from reprokit.model.matrix import Matrix, Target
from reprokit.model.schema import EnvironmentProblem, InputError
from reprokit.run import torch_envs
from reprokit.run.child_setup import write_readable_script
from reprokit.store.views import release_of
from reprokit.tracker.drafting.triage_comment import render
from reprokit.tracker.issue import build_stand_in, exit_evidence, issue_json, release_dates, thread_reading
from reprokit.tracker.issue.build_stand_in import StandIn
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.judging import (
    eager_fix,
    fp64_check,
    issue_lifecycle,
    signature,
    triage_device,
    triage_releases,
    triage_runs,
    unjudged,
    upstream_runs,
)
from reprokit.tracker.judging.issue_lifecycle import Step, Triage
from reprokit.tracker.judging.triage_releases import Offered, order
from reprokit.tracker.judging.triage_standing import STILL, TriageRun, observed_line
from reprokit.tracker.text.user_paths import as_user_sees

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


def _write_script(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    return write_readable_script(folder / "repro.py", text)


def reported_release(issue: Issue) -> str | None:
    version = issue_json.reported_version(issue)
    return release_of(version) if version else None


def release_judged_on(issue: Issue, given: str | None) -> tuple[str | None, str]:
    """The release the issue is judged on (--reported-release, else the one it reports, else the newest published
    before the day it was opened) and, in the last case, that day."""
    if reported := given or reported_release(issue):
        return reported, ""
    by_date = release_dates.newest_before(issue.created)
    return by_date, issue.created[:10] if by_date else ""


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


def triage(issue: Issue, request: Request, matrix: Matrix, out: Path, *, ours: tuple = (), log=print) -> Triaged:
    """The thread first, then the run on the reported release (the signature), the newest stable judged against it,
    the fp64 check where the signature is a low-precision comparison, and the comment where one is worth posting.
    The script stays in a folder of this triage's own, removed at the end."""
    (out / f"issue-{issue.number}-comment.md").unlink(missing_ok=True)  # an earlier draft says no more
    if verdict := thread_reading.closure(issue):
        return Triaged(issue, issue_lifecycle.reported(verdict.line() + " (nothing was run)"), [], None)
    found = issue_json.reproducer_anywhere(issue)
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
    named = request.reported or issue_json.reported_version(issue)  # the build as the issue names it, +local kept
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
        return _judged(issue, request, target, plan, found, (reported, by_date, stand_in), runner, folder, out, log)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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


def _judged(
    issue: Issue,
    request: Request,
    target: Target,
    plan,
    found: issue_json.Reproducer,
    judged_on: tuple[str | None, str, StandIn | None],
    runner: triage_runs.Runner,
    folder: Path,
    out: Path,
    log,
) -> Triaged:
    """Run the issue's script on the reference release and the later ones, and judge what they did.

    Long: one straight sequence of the triage's steps (the reference, a build's stand-ins, the retry of a run past its
    limit, the later releases), each of which may end the triage with its own standing; split, each piece would
    need the whole state passed back and forth."""
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
        text, complains or issue_json.reported_failure(issue) is not None or issue_json.cut_before_error(issue)
    )  # a traceback, cut: an error was reported
    runs = [chosen]
    t = issue_lifecycle.observe(
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
        t = issue_lifecycle.observe(
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
            and issue_lifecycle.outcome(t, newest) is signature.OTHER
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
        t = issue_lifecycle.judge(t, runs, fixes)
    extra = []
    if (
        t.step is Step.JUDGED
        and t.standing.kind == STILL  # never "still" unjudged
        and t.signature is not None
        and t.signature.kind is signature.RAISES  # (a judged triage has one)
        and fp64_check.applies(text, t.signature.exception, t.signature.skeleton)
    ):
        same = [j.release for j in t.judged if j.outcome is signature.SAME]
        on = same[-1] if same else ref
        judged = triage_runs.fp64(dataclasses.replace(runner.setting, python=python_of[on]), folder / "fp64", text)
        t = issue_lifecycle.numerics(t, judged.line(), judged.wrong_result if judged.judged else None, on)
        extra = [
            f"Against an fp64 reference (torch {on}, the script's random inputs seeded alike on every side): "
            f"{judged.line()}.",
            "",
        ]
    t = issue_lifecycle.decide(dataclasses.replace(t, script_from=found.where), issue)
    draft = None
    if t.post:
        newest = next(r for r in reversed(runs) if r.obs is not None)
        versions_text = upstream_runs.collect_env(python_of[newest.release])
        body = render(issue, t, runs, as_user_sees(versions_text, None, runner.ours), extra)
        out.mkdir(parents=True, exist_ok=True)
        draft = out / f"issue-{issue.number}-comment.md"
        draft.write_text(body, encoding="utf-8")
    return Triaged(issue, t, runs, draft)
