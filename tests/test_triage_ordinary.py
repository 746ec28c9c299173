"""Triage on ordinary pytorch/pytorch issues (tests/fixtures/triage-ordinary): issues that name a nightly build, open
issues whose script just crashes (no print, no assert: torch's exception is its only way to fail) and no longer does,
an issue reported on a release older than 2.4 and closed issues. Each <N>.json is the issue as gh prints it, its body
our paraphrase with a script of ours; truth.yaml holds every release run by hand and what a right triage says.

Two ways each issue is triaged, as a maintainer would: by default (the release the issue reports, or what stands in
for a nightly or for "main", and the CPU target's newest stable) and with `--here` (this environment's torch alone).
The default path builds the releases it needs with the project's own builder, in the project's cache ($REPROKIT_CACHE,
else ~/.cache/reprokit: shared with `reprokit run --torch` and the hand runs; `reprokit envs` lists and frees it).
torch's own behaviour decides every standing."""

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from support import run_reprokit

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "triage-ordinary"
TRUTH = {entry["number"]: entry for entry in yaml.safe_load((FIXTURES / "truth.yaml").read_text())}
OTHER_FIXTURES = [p for p in (ROOT / "tests" / "fixtures").glob("triage*") if p != FIXTURES]
PYTHON_BLOCK = re.compile(r"```python\n(.*?)\n```", re.S)


def standing_of(stdout: str) -> str:
    """The standing: the first line that is neither the announcement nor a per-release row."""
    return next(
        (line for line in stdout.splitlines() if line and not line.startswith(("triage", "torch ", "reprokit:"))), ""
    )


def test_every_fixture_is_a_real_issue_of_ours_with_its_truth():
    numbers = {int(p.stem) for p in FIXTURES.glob("*.json")}
    assert numbers == set(TRUTH)
    shapes = [TRUTH[n]["shape"] for n in numbers]
    assert shapes.count("nightly") >= 2 and shapes.count("open-crash-now-passes") >= 3
    assert shapes.count("old-release") >= 1 and shapes.count("closed") >= 2
    for n in numbers:
        data = json.loads((FIXTURES / f"{n}.json").read_text())
        assert data["number"] == n and data["url"].endswith(f"/issues/{n}")
        # one Python block, and it is the script that was run by hand, byte for byte
        blocks = PYTHON_BLOCK.findall(data["body"])
        assert len(blocks) == 1 and blocks[0] == (FIXTURES / "scripts" / f"s{n}.py").read_text().rstrip()
        assert (data["state"] == "CLOSED") == (TRUTH[n]["kind"] == "closed")
        assert not [p for p in (ROOT / "cases").glob("*/case.yaml") if f"issues/{n}\n" in p.read_text() + "\n"]
        assert f"  {n}:" not in (ROOT / "issue-states.yaml").read_text()
        assert not [p for folder in OTHER_FIXTURES for p in folder.glob(f"{n}.json")]
        runs = TRUTH[n]["runs"]
        assert "2.14.1" in runs and "2.15.0" in runs and str(TRUTH[n]["reported"]) in runs, n


def test_the_crash_only_scripts_fail_only_by_torchs_own_exception():
    """The open issues that no longer fail are the point of this set: their scripts print nothing, assert nothing and
    catch nothing, so an exit 0 on a newer release is the evidence."""
    for n, truth in TRUTH.items():
        if truth["shape"] != "open-crash-now-passes":
            continue
        script = (FIXTURES / "scripts" / f"s{n}.py").read_text()
        code = "\n".join(line for line in script.splitlines() if not line.lstrip().startswith("#"))
        assert not re.search(r"\b(print|assert|try|except)\b|assert_close", code), n


def triage(number: int, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_reprokit(
        ROOT,
        "triage",
        "--issue-json",
        str(FIXTURES / f"{number}.json"),
        "--report-dir",
        str(tmp_path),
        *extra,
        timeout=3600,
    )


def check(number: int, mode: str, proc: subprocess.CompletedProcess, tmp_path: Path) -> None:
    truth = TRUTH[number][mode]
    said = standing_of(proc.stdout)
    drafted = (tmp_path / f"issue-{number}-comment.md").exists()
    detail = (
        f"#{number} {mode}: triage said {said!r} (draft: {drafted}); truth: {truth['expected']!r} "
        f"(draft: {truth['post']}) - {TRUTH[number]['why']}\n{proc.stdout[-2500:]}\n{proc.stderr[-1500:]}"
    )
    assert proc.returncode == 0, detail
    assert said.startswith(truth["expected"]), detail
    assert drafted == truth["post"], detail


@pytest.mark.e2e
@pytest.mark.heavy  # two releases each, built on first use in the project's cache (the reported one can be 3-4 GB)
@pytest.mark.xdist_group("gigabytes")
@pytest.mark.parametrize("number", sorted(TRUTH))
def test_default_triage_is_right_on_an_ordinary_issue(number, tmp_path):
    check(number, "default", triage(number, tmp_path), tmp_path)


@pytest.mark.e2e
@pytest.mark.heavy  # one contained run of this environment's torch per issue: a minute each on a busy machine
@pytest.mark.parametrize("number", sorted(TRUTH))
def test_triage_here_is_right_on_an_ordinary_issue(number, tmp_path):
    check(number, "here", triage(number, tmp_path, "--here"), tmp_path)
