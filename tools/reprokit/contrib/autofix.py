"""Propose one pull request per case whose verdict changed in a run (glacier's autofix, for torch versions).

Idempotent: a case whose branch `autofix/<target>/<case>` already exists on the remote is skipped. Each branch
changes only that case's lines in expected/<target>.yaml; the commit and PR title say what changed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

from reprokit.model.schema import InputError
from reprokit.model.untrusted_text import fenced, md_cell
from reprokit.model.verdict import Verdict, changed
from reprokit.run.request import load_root_matrix, target_of
from reprokit.store import expected
from reprokit.store.store import Store
from reprokit.store.views import View, current


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)


def title(case: str, changes: list[tuple[str, Verdict | None, Verdict]], torch_version: str) -> str:
    if any(new is Verdict.FIX_BROKEN for _, _, new in changes):
        what = "fix broken"
    elif any(old is Verdict.REPRODUCES and new is Verdict.DOES_NOT_REPRODUCE for _, old, new in changes):
        what = "no longer reproduces"
    else:
        what = "verdict changed"
    return f"{case}: {what} on torch {torch_version}"


def body(changes: list[tuple[str, Verdict | None, Verdict]], results: View) -> str:
    by_key = results.by_key()
    lines = [
        f"Recorded on torch {', '.join(results.builds)} "
        f"({results.environment.get('device_name') or 'CPU'}), run finished "
        f"{results.header.finished if results.header else '?'}.",
        "",
        "| run | expected | now | why |",
        "| --- | --- | --- | --- |",
    ]
    for key, old, new in changes:
        lines.append(f"| `{key}` | {old or '(new)'} | {new} | {md_cell(by_key[key].why, 200)} |")
    for key, _, _ in changes:
        tail = (by_key[key].stderr_tail or by_key[key].stdout_tail).strip()[-1500:]
        lines += ["", f"<details><summary>{key} output</summary>", "", *fenced(tail), "</details>"]
    return "\n".join(lines) + "\n"


def propose(root: Path, target: str, results: View, remote: str = "origin", push: bool = False) -> list[str]:
    """Create (and with push=True, push and open PRs for) one branch per changed case; returns what it did."""
    expected_file = expected.expected_path(root, target)
    changes = changed(expected.load(expected_file), {r.key: r.verdict for r in results.records})
    per_case: dict[str, list] = defaultdict(list)
    for change in changes:
        per_case[change[0].split("/", 1)[0]].append(change)
    done = []
    for case, case_changes in sorted(per_case.items()):
        branch = f"autofix/{target}/{case}"
        remote_has = _git("ls-remote", "--exit-code", "--heads", remote, branch, cwd=root).returncode == 0
        if remote_has or _git("rev-parse", "--verify", "--quiet", branch, cwd=root).returncode == 0:
            done.append(f"skip {case}: branch {branch} exists")
            continue
        pr_title = title(case, case_changes, ", ".join(results.builds))
        worktree = Path(tempfile.mkdtemp(prefix="autofix-"))
        try:
            _git("worktree", "add", "-q", "-b", branch, str(worktree), "HEAD", cwd=root)
            path = expected.expected_path(worktree, target)
            expected.save(path, {**expected.load(path), **{k: new for k, _, new in case_changes}})
            _git("add", str(path.relative_to(worktree)), cwd=worktree)
            _git(
                "-c",
                "user.name=reprokit-bot",
                "-c",
                "user.email=reprokit-bot@users.noreply.github.com",
                "commit",
                "-q",
                "-m",
                pr_title,
                "-m",
                body(case_changes, results),
                cwd=worktree,
            )
            if push:
                pushed = _git("push", "-q", remote, branch, cwd=worktree)
                if pushed.returncode != 0:
                    done.append(f"failed {case}: git push: {pushed.stderr.strip().splitlines()[-1:]}")
                    continue
                gh = [
                    "gh",
                    "pr",
                    "create",
                    "--head",
                    branch,
                    "--title",
                    pr_title,
                    "--body",
                    body(case_changes, results),
                ]
                if shutil.which("gh"):
                    subprocess.run(gh, cwd=worktree, check=False)
            done.append(f"proposed {case}: {pr_title} (branch {branch})")
        finally:
            _git("worktree", "remove", "--force", str(worktree), cwd=root)
    return done


def propose_recorded(root: Path, target: str, results: str, remote: str = "origin", push: bool = False) -> list[str]:
    """`reprokit autofix`: propose from the records of `results` (a store folder brought back from a run), read as
    the reports read them (the pinned release if recorded, else the newest); refused where it holds none."""
    pin = target_of(load_root_matrix(root), target).pins.torch
    view = current(Store(Path(results).resolve()).load(target, "cases"), target, "cases", pin)
    if view is None:
        raise InputError(f"{results}: no records of target {target}")
    return propose(root, target, view, remote=remote, push=push)
