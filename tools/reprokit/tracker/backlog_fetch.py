"""The online half of a backlog: the issues of a `gh` query (`--label "oncall: pt2" --state open --limit N`) saved as
the files a backlog reads, DIR/<number>.json, each what `gh issue view N --json ...` prints (the fields triage reads),
so that the run can be repeated offline from the folder. Read-only: gh lists and views, nothing else."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from reprokit.model.choices import GH_FIELDS
from reprokit.model.schema import EnvironmentProblem, InputError

REPO = "pytorch/pytorch"
STATES = ("open", "closed", "all")
MAX_LIMIT = 10_000
GH_TIMEOUT = 120  # seconds of one gh call


def list_command(gh: str, labels: tuple[str, ...], state: str, limit: int) -> list[str]:
    """`gh issue list` for the numbers of the query's issues (each label must match: gh's AND)."""
    if state not in STATES:
        raise InputError(f"--state {state!r}: one of {', '.join(STATES)}")
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"--limit {limit}: from 1 to {MAX_LIMIT:,}")
    return [
        gh,
        "issue",
        "list",
        "--repo",
        REPO,
        *(a for label in labels for a in ("--label", label)),
        "--state",
        state,
        "--limit",
        str(limit),
        "--json",
        "number",
    ]


def view_command(gh: str, number: int) -> list[str]:
    return [gh, "issue", "view", str(number), "--repo", REPO, "--json", GH_FIELDS]


def _gh(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=GH_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(f"{' '.join(command[1:4])}: gh did not answer in {GH_TIMEOUT} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise EnvironmentProblem(f"{' '.join(command[1:4])}: {last[:300]}")
    return done.stdout


def numbers_of(listing: str) -> list[int]:
    """The issue numbers of `gh issue list --json number`'s output."""
    try:
        data = json.loads(listing)
    except ValueError:
        raise EnvironmentProblem("gh issue list: did not print JSON") from None
    if not isinstance(data, list):
        raise EnvironmentProblem("gh issue list: did not print a list")
    return sorted(
        {
            d["number"]
            for d in data
            if isinstance(d, dict)
            and isinstance(d.get("number"), int)
            and not isinstance(d.get("number"), bool)
            and d["number"] > 0
        }
    )


def fetch(folder: Path, labels: tuple[str, ...], state: str, limit: int, log=print) -> list[int]:
    """The query's issues written to folder/<number>.json (an issue gh cannot view is logged, left out, and the
    others saved): the numbers saved."""
    gh = shutil.which("gh")
    if gh is None:
        raise EnvironmentProblem(
            "gh is not installed: list the issues elsewhere with `gh issue view N --repo "
            f"{REPO} --json {GH_FIELDS}` per issue, and pass the folder with --issues-json"
        )
    numbers = numbers_of(_gh(list_command(gh, labels, state, limit)))
    folder.mkdir(parents=True, exist_ok=True)
    saved = []
    for number in numbers:
        try:
            text = _gh(view_command(gh, number))
        except EnvironmentProblem as err:
            log(f"#{number}: not saved ({err})")
            continue
        # saved as printed: what gh printed is what a later run reads (a file that does not read is its list line)
        (folder / f"{number}.json").write_text(text, encoding="utf-8")
        saved.append(number)
    log(f"saved {len(saved)} of {len(numbers)} issues in {folder}")
    return saved
