"""Tracker sync from the recorded runs (no case runs): every issue that reports/upstream-issues.md flags gets its
comment draft from `reprokit tracker`, and issue states read from GitHub (`tracker-states --import`, what the
issue-states workflow does) decide the page and the drafts."""

import datetime
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def reprokit(root, *args):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def flagged_on_the_page(page: str) -> dict[str, str]:
    """case id -> the state of its issue, for every row the page flags."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| \[`([\w-]+)`\].*?\| (open|closed) \(.*⚑", page, re.M)}


def test_every_issue_the_page_flags_gets_a_draft_or_the_reason_it_gets_none(tmp_path):
    (tmp_path / "export-radd-user-object-comment.md").write_text("an earlier draft")
    proc = reprokit(ROOT, "tracker", "--report-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    page = flagged_on_the_page((ROOT / "reports" / "upstream-issues.md").read_text())
    assert (
        len([s for s in page.values() if s == "closed"]) == 5 and len([s for s in page.values() if s == "open"]) == 10
    )
    drafts = {p.name.removesuffix("-comment.md") for p in tmp_path.glob("*-comment.md")}
    listed = re.findall(r"^#(\d+) (open|closed) \(checked [\d-]+\)  ([\w-]+): (.*)$", proc.stdout, re.M)
    assert len(listed) == 40 and f"40 linked issues; {len(drafts)} need a comment" in proc.stdout
    held = ("related: ", "not triaged: ", "the issue's own script: ", "never failed: ")
    for _, state, case_id, line in listed:
        if case_id not in page:
            assert line == "agrees with the recorded runs" and case_id not in drafts
        elif case_id in drafts:  # no "still reproduces" from the case alone: the issue's own script decides
            assert state == "open" and line.startswith(("no longer reproduces", "does not reproduce")), line
        else:
            assert line.startswith(held), line
    assert set(drafts) < set(page)  # the earlier draft of a held issue is gone
    radd = next(line for _, _, case_id, line in listed if case_id == "export-radd-user-object")
    assert radd.startswith("related: the issue exports a user object's __mul__")
    norm = next(line for _, _, case_id, line in listed if case_id == "export-vector-norm-data-dependent")
    assert norm.startswith("related: ") and "export-vector-norm-data-dependent" not in drafts  # another guard
    assert "gh issue comment 116336" not in proc.stdout
    # a written repro that never failed on any recorded release is no evidence that the issue is fixed
    static = next(line for _, _, case_id, line in listed if case_id == "export-slice-assign-max-example-static")
    assert static.startswith("never failed: ") and "export-slice-assign-max-example-static" not in drafts
    for case_id in drafts:  # every draft rests on a repro that failed on some recorded release, then stopped
        assert (
            "Supporting evidence: a repro written from this issue (not its own code) does not reproduce on any"
            not in (tmp_path / f"{case_id}-comment.md").read_text()
        )
    for path in tmp_path.glob("*-comment.md"):
        text = path.read_text()
        assert not re.search(r"/work/|/root/|/home/|/tmp/|probe\.py|\.cache/reprokit", text), path


def test_issue_states_from_github_decide_the_page_and_the_drafts(tmp_path):
    repo = tmp_path / "repo"
    for name in ("cases", "results"):
        shutil.copytree(ROOT / name, repo / name)
    for name in ("matrix.yaml", "issue-states.yaml", "claims.yaml"):
        shutil.copy(ROOT / name, repo / name)
    states = tmp_path / "states.jsonl"  # what `gh api repos/pytorch/pytorch/issues/N --jq '{number, state}'` prints
    states.write_text(
        json.dumps({"number": 136757, "state": "open"})
        + "\n"
        + json.dumps({"number": 999999999, "state": "closed"})
        + "\n"
    )
    proc = reprokit(repo, "tracker-states", "--import", str(states))
    assert proc.returncode == 0 and "1 issue states" in proc.stdout, proc.stderr
    saved = yaml.safe_load((repo / "issue-states.yaml").read_text())["issues"]
    assert saved[136757]["state"] == "open" and saved[136757]["checked"] == datetime.date.today().isoformat()
    assert saved[136757]["link"] == "related" and saved[136757]["triage"].startswith("no longer reproduces")  # kept
    assert 999999999 not in saved  # no case links it
    assert reprokit(repo, "report").returncode == 0
    page = (repo / "reports" / "upstream-issues.md").read_text()
    row = next(line for line in page.splitlines() if "[`export-radd-user-object`]" in line and "| cpu |" in line)
    assert f"| open ({datetime.date.today().isoformat()}) |" in row and "⚑" not in row
    listed = reprokit(repo, "tracker", "--report-dir", str(tmp_path / "drafts"))
    assert "#136757 open" in listed.stdout and "export-radd-user-object: agrees with the recorded runs" in listed.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"number": 136757, "state": "merged"}\n')
    refused = reprokit(repo, "tracker-states", "--import", str(bad))
    assert refused.returncode == 2 and "bad.jsonl:1: state 'merged': open or closed" in refused.stderr
