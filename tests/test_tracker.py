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
    return subprocess.run([sys.executable, "-m", "reprokit", "--root", str(root), *args], env=env,
                          capture_output=True, text=True, timeout=300)


def flagged_on_the_page(page: str) -> dict[str, str]:
    """case id -> the state of its issue, for every row the page flags."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| \[`([\w-]+)`\].*?\| (open|closed) \(.*⚑", page, re.M)}


def test_every_issue_the_page_flags_gets_a_draft_and_every_linked_issue_is_listed(tmp_path):
    proc = reprokit(ROOT, "tracker", "--report-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    page = flagged_on_the_page((ROOT / "reports" / "upstream-issues.md").read_text())
    assert len([s for s in page.values() if s == "closed"]) == 5 and len([s for s in page.values() if s == "open"]) == 9
    drafts = {p.name.removesuffix("-comment.md") for p in tmp_path.glob("*-comment.md")}
    assert drafts == set(page)
    listed = re.findall(r"^#(\d+) (open|closed) \(checked [\d-]+\)  ([\w-]+): (.*)$", proc.stdout, re.M)
    assert len(listed) == 40 and "40 linked issues; 14 need a comment" in proc.stdout
    for _, state, case_id, line in listed:
        if case_id in page:
            assert line.startswith("still reproduces on torch" if state == "closed" else ("no longer reproduces",
                                                                                        "does not reproduce"))
        else:
            assert line == "agrees with the recorded runs"
    radd = (tmp_path / "export-radd-user-object-comment.md").read_text()
    assert radd.startswith("This still reproduces on torch 2.8.0..2.15.0 (cpu), 2.11.0 (h100)")
    assert "Recorded run on torch 2.15.0" in radd and "```python" in radd and "PyTorch version: 2.15.0" in radd
    norm = (tmp_path / "export-vector-norm-data-dependent-comment.md").read_text()
    assert norm.startswith("This no longer reproduces since 2.12.1 (first good; last bad 2.11.0) on cpu")
    assert "gh issue comment 136757 --repo pytorch/pytorch --body-file" in proc.stdout


def test_issue_states_from_github_decide_the_page_and_the_drafts(tmp_path):
    repo = tmp_path / "repo"
    for name in ("cases", "results"):
        shutil.copytree(ROOT / name, repo / name)
    for name in ("matrix.yaml", "issue-states.yaml", "claims.yaml"):
        shutil.copy(ROOT / name, repo / name)
    states = tmp_path / "states.jsonl"  # what `gh api repos/pytorch/pytorch/issues/N --jq '{number, state}'` prints
    states.write_text(json.dumps({"number": 136757, "state": "open"}) + "\n" +
                      json.dumps({"number": 999999999, "state": "closed"}) + "\n")
    proc = reprokit(repo, "tracker-states", "--import", str(states))
    assert proc.returncode == 0 and "1 issue states" in proc.stdout, proc.stderr
    saved = yaml.safe_load((repo / "issue-states.yaml").read_text())["issues"]
    assert saved[136757] == {"state": "open", "checked": datetime.date.today().isoformat()}
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
