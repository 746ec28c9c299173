"""`reprokit triage ISSUE`: run a pytorch/pytorch issue's own script and say where the issue stands.

The issue is read as `gh issue view N --json ...` prints it (`--issue-json FILE` reads that output from a file). Its
thread is read first (thread_reading: closed as not planned, a maintainer's standing verdict decide before anything
runs). Its script (issue_json.reproducer) is written to the triage cache (~/.cache/reprokit/triage/<N>/, never the
repository) and run unchanged, contained exactly as `reprokit run` runs case code (upstream_runs.contained), first on
the release the issue reports (or, where that one cannot be installed here, the nearest release run that is not newer):
what that run does is the issue's signature (signature.py), which the issue's text only confirms. Every later release
is judged against it, and issue_lifecycle decides the standing and whether a comment is drafted.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from packaging.version import InvalidVersion, Version

from reprokit.model.schema import InputError
from reprokit.run import torch_envs
from reprokit.store.views import release_of
from reprokit.tracker import (
    fp64_check,
    issue_json,
    issue_lifecycle,
    release_dates,
    signature,
    thread_reading,
    upstream_runs,
)
from reprokit.tracker.issue_json import Issue
from reprokit.tracker.issue_lifecycle import Step, Triage
from reprokit.tracker.triage_standing import STILL, Ran, observed_line, render
from reprokit.tracker.user_paths import as_user_sees

GH_FIELDS = "number,title,body,state,stateReason,closedAt,createdAt,labels,comments,url"
TIMEOUT = 300.0


@dataclass(frozen=True)
class Triaged:
    issue: Issue
    triage: Triage
    runs: list[Ran]
    draft: Path | None

    @property
    def standing(self):
        return self.triage.standing


def from_gh(number: int) -> Issue:
    """The issue read with the GitHub CLI (read-only)."""
    gh = shutil.which("gh")
    if gh is None:
        raise InputError(f"gh is not installed: read the issue elsewhere with `gh issue view {number} --repo "
                         f"pytorch/pytorch --json {GH_FIELDS}` and pass the file with --issue-json")
    done = subprocess.run([gh, "issue", "view", str(number), "--repo", "pytorch/pytorch", "--json", GH_FIELDS],
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise InputError(f"gh issue view {number}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}")
    try:
        return issue_json.parse(json.loads(done.stdout))
    except ValueError:
        raise InputError(f"gh issue view {number}: did not print JSON") from None


def folder_for(number: int) -> Path:
    return torch_envs.cache_root() / "triage" / str(number)


def _order(release: str) -> tuple:
    if release == "nightly":
        return (1, Version("0"))
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (0, Version("0"))


class Offered(NamedTuple):
    release: str
    python: str | None  # None: not available here (why says why)
    why: str = ""
    transient: bool = False  # the release exists but could not be installed now: nothing may stand in for it


def interpreters(versions: list[str], here: bool, log=print) -> list[Offered]:
    """Each release offered, oldest first; a version may be an interpreter's path (given paths first: a release one
    of them holds is not built again)."""
    if here:
        return [Offered(_version_of(sys.executable), sys.executable)]
    found: dict[str, Offered] = {}
    for version in sorted(dict.fromkeys(versions), key=lambda v: "/" not in v):
        if version in found:
            continue
        try:
            python = str(torch_envs.ensure(version, log=log).python)
        except torch_envs.BuildFailed as err:
            log(f"torch {version}: could not be installed now ({err})")
            found[version] = Offered(version, None, f"could not be installed now ({err})", transient=True)
            continue
        except InputError as err:
            log(f"torch {version}: not available here ({err})")
            found[version] = Offered(version, None, "not available here (no build for this Python and platform)")
            continue
        label = _version_of(python) if "/" in version else version
        found.setdefault(label, Offered(label, python))
    return sorted(found.values(), key=lambda f: _order(f.release))


def reference(reported: str | None, available: list[str]) -> str | None:
    """The release whose run gives the signature: the reported one, else the nearest available not newer than it,
    else (a report older than every release here, or none named) the oldest available, which the standing names as
    the stand-in it is."""
    if not available:
        return None
    if reported in available:
        return reported
    older = [r for r in available if reported and r != "nightly" and _order(r) <= _order(reported)]
    return older[-1] if older else available[0]


def _version_of(python: str) -> str:
    done = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                          timeout=120, check=False)
    return release_of((done.stdout.strip().splitlines() or ["?"])[-1])


def _run_once(python: str, script: Path, timeout: float, ours: tuple) -> tuple:
    setting = upstream_runs.Setting(python, "cpu", "float32", timeout)
    obs = upstream_runs.contained(setting, script)
    return obs, as_user_sees(obs.stderr_tail, script, ours)


def _ran(release: str, python: str, script: Path, timeout: float, ours: tuple) -> Ran:
    obs, err = _run_once(python, script, timeout, ours)
    return Ran(release, obs, "", err)


def _reference_runs(ref: str, python: str, script: Path, timeout: float, ours: tuple, log) -> tuple:
    """The run on the reference release that gives the signature, confirmed by a second (and, where those two
    disagree, a third) run, with every run made; None where three runs disagree."""
    tries = [_ran(ref, python, script, timeout, ours) for _ in range(2)]
    if not agree(tries[0], tries[1]):  # a third run decides which one torch did by chance
        tries.append(_ran(ref, python, script, timeout, ours))
    chosen, odd = stable(tries)
    if odd is not None:
        log(f"torch {ref}: 1 of 3 runs of the script did otherwise ({observed_line(odd.obs)}); the signature is the "
            "other two's")
    return chosen, tries


def _flaky(issue: Issue, ref: str, tries: list[Ran]) -> Triaged:
    return Triaged(issue, issue_lifecycle.reported(
        f"flaky on torch {ref}: three runs of the script disagree (" + "; ".join(observed_line(r.obs) for r in tries)
        + "): no signature to judge against"), tries, None)


def agree(a: Ran, b: Ran) -> bool:
    """Two runs of the script on one release did the same: both finished, or both failed alike (signature.compare),
    or neither could run."""
    if 77 in (a.obs.exit_code, b.obs.exit_code):  # the probe's "cannot run here" (no CUDA, ...)
        return a.obs.exit_code == b.obs.exit_code
    outcome = signature.compare(signature.of(a.obs, a.log), b.obs, b.log)
    return outcome == signature.SAME or (outcome == signature.GOOD and a.obs.status == "pass")


def stable(tries: list[Ran]) -> tuple[Ran | None, Ran | None]:
    """The run the signature comes from and the odd one out: two runs that agree decide; of three, the two that
    agree decide and the third is named; three that all disagree decide nothing (None, None)."""
    if len(tries) == 2 or agree(tries[0], tries[1]):
        return tries[0], (tries[2] if len(tries) == 3 else None)
    for kept, other in ((0, 1), (1, 0)):
        if agree(tries[kept], tries[2]):
            return tries[kept], tries[other]
    return None, None


def _run_later(offered: Offered, script: Path, timeout: float, ours: tuple) -> Ran:
    if offered.python is None:
        return Ran(offered.release, None, offered.why)
    return _ran(offered.release, offered.python, script, timeout, ours)


def _fp64(python: str, folder: Path, script_text: str, timeout: float) -> fp64_check.Judged:
    """The three capturing runs and the judge (fp64_check), each contained."""
    setting = upstream_runs.Setting(python, "cpu", "float32", timeout)
    variants = {"low": (fp64_check.captured(script_text), {}),
                "eager": (fp64_check.captured(script_text), {"REPROKIT_BACKEND": "eager"}),
                "ref": (fp64_check.in_float64(script_text), {})}
    dirs = {name: folder / name / "capture" for name in variants}
    for name, (text, _) in variants.items():
        shutil.rmtree(folder / name, ignore_errors=True)
        dirs[name].mkdir(parents=True)
        dirs[name].chmod(0o777)  # the case user writes its captures here, and nowhere else
        (folder / name).chmod(0o755)
        (folder / name / "repro.py").write_text(text, encoding="utf-8")
        (folder / name / "repro.py").chmod(0o644)
    with ThreadPoolExecutor(len(variants)) as pool:  # three independent contained runs
        list(pool.map(lambda name: upstream_runs.contained(
            setting, folder / name / "repro.py", {"REPROKIT_CAPTURE": str(dirs[name]), **variants[name][1]},
            writable=(dirs[name],)), variants))
    judge = fp64_check.judge_script(folder)
    done = upstream_runs.contained(setting, judge, {f"REPROKIT_{k.upper()}": str(v) for k, v in dirs.items()})
    return fp64_check.verdict(done.stdout_tail)


def _write_script(folder: Path, text: str) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    script = folder / "repro.py"
    script.write_text(text, encoding="utf-8")
    script.chmod(0o644)
    return script


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


def triage(issue: Issue, versions: list[str], out: Path, *, here: bool = False, timeout: float = TIMEOUT,
           ours: tuple = (), reported: str | None = None, log=print) -> Triaged:
    """The thread first, then the run on the reported release (the signature), the later releases judged against it,
    the fp64 check where the signature is a low-precision comparison, and the comment where one is worth posting. The
    script stays in the cache folder, which is removed at the end."""
    (out / f"issue-{issue.number}-comment.md").unlink(missing_ok=True)  # an earlier draft says no more
    if verdict := thread_reading.closure(issue):
        return Triaged(issue, issue_lifecycle.reported(verdict.line() + " (nothing was run)"), [], None)
    text = issue_json.reproducer(issue)
    if text is None:
        return Triaged(issue, issue_lifecycle.reported("the description has no fenced Python block that imports torch"),
                       [], None)
    reported, by_date = release_judged_on(issue, reported)
    folder = folder_for(issue.number)
    script = _write_script(folder / "script", text)
    ours = (*ours, torch_envs.cache_root(), folder)
    try:
        installable = reported and re.fullmatch(r"\d+\.\d+\.\d+", reported)  # a release, not a dev build or "main"
        pythons = interpreters([*versions, *([reported] if installable and not here else [])], here, log)
        if failed := next((o for o in pythons if o.release == reported and o.transient), None):
            which = "the newest release when the issue was opened" if by_date else "the release the issue reports"
            return Triaged(issue, issue_lifecycle.reported(
                f"not judged: torch {reported}, {which}, {failed.why}; no other release stands "
                "in for one that exists: run triage again once it installs"),
                [Ran(failed.release, None, failed.why)], None)
        available = [o.release for o in pythons if o.python]
        ref = available[0] if here and available else reference(reported, available)  # --here: this torch decides
        if ref is None:
            return Triaged(issue, issue_lifecycle.reported("no torch release could be installed here"),
                           [Ran(o.release, None, o.why) for o in pythons], None)
        python_of = {o.release: o.python for o in pythons}
        chosen, tries = _reference_runs(ref, python_of[ref], script, timeout, ours, log)
        if chosen is None:
            return _flaky(issue, ref, tries)
        runs = [chosen]
        t = issue_lifecycle.observe(issue, runs[0], text, thread_reading.asks_for_error(issue), reported, by_date)
        if t.step is Step.OBSERVED:  # only then are the later releases worth running
            runs += [_run_later(o, script, timeout, ours) for o in pythons if _order(o.release) > _order(ref)]
            t = issue_lifecycle.judge(t, runs)
        extra = []
        if t.step is Step.JUDGED and t.standing.kind == STILL and t.signature.kind == signature.RAISES and \
                fp64_check.applies(text, t.signature.exception, t.signature.skeleton):  # never "still" unjudged
            same = [j.release for j in t.judged if j.outcome == signature.SAME]
            on = same[-1] if same else ref
            judged = _fp64(python_of[on], folder / "fp64", text, timeout)
            t = issue_lifecycle.numerics(t, judged.line(), judged.wrong_result if judged.judged else None, on)
            extra = [f"Against an fp64 reference (torch {on}, the script's random inputs seeded alike on every side): "
                     f"{judged.line()}.", ""]
        t = issue_lifecycle.decide(t, issue)
        draft = None
        if t.post:
            newest = next(r for r in reversed(runs) if r.obs is not None)
            versions_text = upstream_runs.collect_env(python_of[newest.release])
            body = render(issue, t, runs, as_user_sees(versions_text, None, ours), extra)
            out.mkdir(parents=True, exist_ok=True)
            draft = out / f"issue-{issue.number}-comment.md"
            draft.write_text(body, encoding="utf-8")
        return Triaged(issue, t, runs, draft)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
