"""`reprokit triage ISSUE`: run a pytorch/pytorch issue's own script and say where the issue stands.

The issue is read as `gh issue view N --json ...` prints it (`--issue-json FILE` reads that output from a file). Its
script (issue_json.reproducer) is written to the triage cache (~/.cache/reprokit/triage/<N>/, never the repository)
and run unchanged, contained exactly as `reprokit run` runs case code (upstream_runs.contained: run/execute.observe),
once per torch release: the releases the target records plus the newest available, or only this environment's torch
(`--here`). The standing (triage_standing) decides the comment, written beside the other drafts; the issue's
context (closed as not planned, a maintainer's "expected") decides before anything runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from reprokit.model.schema import InputError
from reprokit.run import torch_envs
from reprokit.tracker import fp64_check, issue_json, triage_standing, upstream_runs
from reprokit.tracker.issue_json import Issue
from reprokit.tracker.triage_standing import NO_LONGER, NOT_POSTED, SAME, STILL, Ran, Standing
from reprokit.tracker.user_paths import as_user_sees

GH_FIELDS = "number,title,body,state,stateReason,closedAt,labels,comments,url"
TIMEOUT = 300.0


@dataclass(frozen=True)
class Triaged:
    issue: Issue
    standing: Standing
    runs: list[Ran]
    draft: Path | None


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


def interpreters(versions: list[str], here: bool, log=print) -> list[tuple[str, str | None, str]]:
    """(release, interpreter or None, why not) per release to run, oldest first."""
    if here:
        return [(_version_of(sys.executable), sys.executable, "")]
    found = []
    for version in versions:
        try:
            found.append((version, str(torch_envs.ensure(version, log=log).python), ""))
        except InputError as err:
            found.append((version, None, f"not available here ({err})"[:200]))
    return found


def _version_of(python: str) -> str:
    done = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True,
                          timeout=120, check=False)
    return (done.stdout.strip().splitlines() or ["?"])[-1].split("+")[0]


def _run_once(python: str, script: Path, timeout: float, ours: tuple) -> tuple:
    setting = upstream_runs.Setting(python, "cpu", "float32", timeout)
    obs = upstream_runs.contained(setting, script)
    return obs, as_user_sees(obs.stderr_tail, script, ours)


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


def triage(issue: Issue, versions: list[str], out: Path, *, here: bool = False, timeout: float = TIMEOUT,
           ours: tuple = (), log=print) -> Triaged:
    """Long: the issue's context first, then one contained run per release, the fp64 check where it applies, the
    standing and the comment; the script stays in the cache folder, which is removed at the end."""
    if why := issue_json.closure(issue):
        return Triaged(issue, Standing(NOT_POSTED, why + " (nothing was run)"), [], None)
    text = issue_json.reproducer(issue)
    if text is None:
        return Triaged(issue, Standing(NOT_POSTED, "the description has no fenced Python block that imports torch"),
                       [], None)
    reported = issue_json.reported_failure(issue)
    folder = folder_for(issue.number)
    script = _write_script(folder / "script", text)
    ours = (*ours, torch_envs.cache_root(), folder)
    try:
        runs, pythons = [], interpreters(versions, here, log)
        python_of = {release: python for release, python, _ in pythons}
        for release, python, why in pythons:
            if python is None:
                runs.append(Ran(release, None, why))
                continue
            obs, err = _run_once(python, script, timeout, ours)
            runs.append(Ran(release, obs, "", err))
        st = triage_standing.standing(issue, reported, runs, text)
        extra = []
        newest = next((r for r in reversed(runs) if r.obs is not None), None)
        if (newest and newest.obs.status != "pass" and st.kind != NOT_POSTED
                and fp64_check.applies(text, newest.obs.exception, newest.obs.message)):
            judged = _fp64(python_of[newest.release], folder / "fp64", text, timeout)
            if judged.judged and not judged.wrong_result:
                st = Standing(NOT_POSTED, f"{judged.line()}: the script compares low-precision outputs with each "
                                          "other")
            else:
                extra = [f"Against an fp64 reference (torch {newest.release}): {judged.line()}.", ""]
        draft = None
        (out / f"issue-{issue.number}-comment.md").unlink(missing_ok=True)  # an earlier draft says no more
        if (st.kind == NO_LONGER and issue.closed) or (st.kind == STILL and not issue.closed):
            # agrees with the issue's state: nothing to add to the thread (a "still happens" on an open issue is noise)
            st = Standing(st.kind, st.detail + f"; the issue is {issue.state.lower()}: no comment")
        elif st.kind != NOT_POSTED:
            versions_text = upstream_runs.collect_env(python_of[newest.release])
            body = triage_standing.render(issue, st, reported, runs, as_user_sees(versions_text, None, ours), extra)
            out.mkdir(parents=True, exist_ok=True)
            draft = out / f"issue-{issue.number}-comment.md"
            draft.write_text(body, encoding="utf-8")
        return Triaged(issue, st, runs, draft)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def same_as_reported(t: Triaged) -> bool:
    """The newest release run fails the way the issue reports."""
    ran = [r for r in t.runs if r.obs is not None]
    reported = issue_json.reported_failure(t.issue)
    return bool(ran) and triage_standing.outcome(reported, ran[-1].obs) == SAME
