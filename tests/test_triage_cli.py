"""`reprokit triage` and `reprokit tracker` from the command line, as a maintainer runs them: at most two environments
by default (stand-in releases: this environment, entered under two release names), one line and exit 2 for what
cannot be run here (an unknown target, a CUDA script on the CPU), two triages of one issue at once, and the tracker
reaching a standing offline from gh-shaped files. Real torch, real contained runs."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support import run_reprokit

ROOT = Path(__file__).resolve().parents[1]
GRAPH_BREAK = """import torch


@torch.compile(backend="eager", fullgraph=True)
def f(x):
    torch._dynamo.graph_break()
    return x + 1


print(f(torch.ones(2)))
"""
CUDA = 'import torch\n\nx = torch.ones(2, device="cuda")\nprint(torch.compile(lambda t: t + 1)(x))\n'


def issue(number, script, version="2.12.1", state="OPEN"):
    body = (
        f"### 🐛 Describe the bug\n\n```python\n{script}```\n\n### Error logs\n\n```\ntorch._dynamo.exc.Unsupported:"
        f" Call to `torch._dynamo.graph_break()`\n```\n\n### Versions\n\nPyTorch version: {version}+cpu\n"
    )
    return {
        "number": number,
        "title": "graph break under fullgraph",
        "body": body,
        "state": state,
        "stateReason": "",
        "closedAt": None,
        "createdAt": "2026-07-01T00:00:00Z",
        "labels": [],
        "comments": [],
        "url": f"https://github.com/pytorch/pytorch/issues/{number}",
    }


def reprokit(tmp_path, *args, env=None, timeout=900):
    (tmp_path / "repo").mkdir(exist_ok=True)
    (tmp_path / "repo" / "matrix.yaml").write_bytes((ROOT / "matrix.yaml").read_bytes())
    env = {**(env or os.environ), "PYTHONPATH": str(ROOT / "tools"), "REPROKIT_CACHE": str(tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(tmp_path / "repo"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def write_issue(tmp_path, data) -> Path:
    path = tmp_path / f"{data['number']}.json"
    path.write_text(json.dumps(data))
    return path


def test_an_unknown_target_is_one_line_and_exit_2(tmp_path):
    proc = reprokit(
        tmp_path, "triage", "--issue-json", str(write_issue(tmp_path, issue(920001, GRAPH_BREAK))), "--target", "a101"
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "--target 'a101': unknown target; matrix.yaml has cpu, a10" in proc.stderr


@pytest.mark.e2e
def test_a_cuda_script_on_the_cpu_target_is_refused_in_one_line_before_anything_runs(tmp_path):
    proc = reprokit(
        tmp_path, "triage", "--issue-json", str(write_issue(tmp_path, issue(920002, CUDA))), "--here", "--record"
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert (
        proc.stderr.startswith("reprokit: the script needs a CUDA GPU: run with --target a10 or a100 or h100")
        and "on a GPU machine" in proc.stderr
    ), proc.stderr
    assert not (tmp_path / "repo" / "reports").exists() and not (tmp_path / "repo" / "issue-states.yaml").exists()


@pytest.mark.e2e
def test_two_triages_of_one_issue_at_once_each_keep_their_own_folder(tmp_path):
    """The second starts once the first is running the script from its folder: a folder shared by issue number
    would be emptied under the first (its next run: FileNotFoundError for repro.py)."""
    path = write_issue(tmp_path, issue(920003, GRAPH_BREAK))
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(
            reprokit, tmp_path, "triage", "--issue-json", str(path), "--here", "--report-dir", str(tmp_path / "out0")
        )
        deadline = time.monotonic() + 300
        while not list((tmp_path / "cache").glob("triage/**/repro.py")) and time.monotonic() < deadline:
            time.sleep(0.05)
        second = pool.submit(
            reprokit, tmp_path, "triage", "--issue-json", str(path), "--here", "--report-dir", str(tmp_path / "out1")
        )
        scripts_at_once = 0
        while not (first.done() and second.done()):
            scripts_at_once = max(scripts_at_once, len(list((tmp_path / "cache").glob("triage/**/repro.py"))))
            time.sleep(0.05)
        done = [first.result(), second.result()]
    assert scripts_at_once == 2  # two folders, one each, while both ran
    for proc in done:
        assert proc.returncode == 0, proc.stderr
        standing = proc.stdout.splitlines()[0]
        assert standing.startswith("still reproduces on torch 2.14.1") and "Unsupported" in standing, proc.stdout
        assert "FileNotFoundError" not in proc.stdout
    assert not list((tmp_path / "cache" / "triage").iterdir())  # each removed its own folder, and only it


@pytest.fixture
def stand_in_releases(tmp_path):
    """Two releases already built: this environment (its torch, 2.14.1) under the names 2.12.1 and 2.15.0, the
    newest of cpu's history. Building any other release would need an index, and pip's is one that is down."""
    envs = tmp_path / "cache" / "envs"
    envs.mkdir(parents=True)
    marker = Path(sys.prefix) / ".complete"
    ours = not marker.exists()
    if ours:
        marker.write_text("stand-in\n")
    for release in ("2.12.1", "2.15.0"):
        (envs / f"torch-{release}").symlink_to(sys.prefix, target_is_directory=True)
    yield envs
    if ours:
        marker.unlink()


@pytest.mark.e2e
def test_a_default_triage_builds_no_more_than_the_reported_release_and_the_newest(tmp_path, stand_in_releases):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL="http://127.0.0.1:9/simple", UV_OFFLINE="1")
    proc = reprokit(tmp_path, "triage", "--issue-json", str(write_issue(tmp_path, issue(920004, GRAPH_BREAK))), env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == "triage on cpu: torch 2.12.1 (reported), 2.15.0; nothing to build", (
        proc.stderr
    )
    ran = [line.split(":")[0].strip() for line in proc.stdout.splitlines() if line.startswith("  torch ")]
    assert ran == ["torch 2.12.1", "torch 2.15.0"], proc.stdout
    assert sorted(p.name for p in stand_in_releases.iterdir() if not p.name.startswith(".")) == [
        "torch-2.12.1",
        "torch-2.15.0",
    ]
    assert "could not be installed" not in proc.stderr + proc.stdout
    assert proc.stdout.startswith("still reproduces on torch 2.12.1..2.15.0"), proc.stdout


@pytest.mark.e2e
def test_the_tracker_triages_a_linked_issue_from_its_file_without_gh(tmp_path):
    """#141865 is closed and the case linking it still reproduces; without a triage of the issue's own script the
    tracker holds its comment ("not triaged"). From its gh-shaped file (our paraphrase, with our script) it runs
    the script here and drafts the comment."""
    env = {
        **os.environ,
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT / "tools"),  # no gh
        "REPROKIT_CACHE": str(tmp_path / "cache"),
    }

    def tracker(*args):
        return subprocess.run(
            [sys.executable, "-m", "reprokit", "--root", str(ROOT), "tracker", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    before = tracker("--report-dir", str(tmp_path / "before"))
    line = next(ln for ln in before.stdout.splitlines() if ln.startswith("#141865"))
    assert "not triaged" in line, before.stdout
    after = tracker(
        "--issues-json", str(ROOT / "tests" / "fixtures" / "tracker"), "--here", "--report-dir", str(tmp_path / "after")
    )
    assert after.returncode == 0, after.stderr
    line = next(ln for ln in after.stdout.splitlines() if ln.startswith("#141865"))
    assert "not triaged" not in line and "still reproduces" in line, after.stdout + after.stderr
    assert (tmp_path / "after" / "inductor-cpu-linear-half-input-accepted-comment.md").exists()
    assert "#141865: triaged from 141865.json: still reproduces on torch 2.14.1" in after.stderr


@pytest.mark.e2e
def test_a_triage_started_from_the_temporary_folder_runs_as_from_anywhere(tmp_path):
    """`python -m` puts the working directory on the runner's search path; started from /tmp, that folder was bound
    read-only over the run's own folder (/tmp/reprokit-...), and inductor's first write there failed."""
    script = (
        "import torch\n\nprint(torch.compile(lambda x: x * 2)(torch.ones(4)))\n\n\n"
        '@torch.compile(backend="eager", fullgraph=True)\ndef f(x):\n    torch._dynamo.graph_break()\n'
        "    return x + 1\n\n\nprint(f(torch.ones(2)))\n"
    )
    path = write_issue(tmp_path, issue(920005, script))
    cache = Path(tempfile.mkdtemp(prefix="reprokit-test-cache-", dir=Path.home()))  # the script's folder not in /tmp
    try:
        proc = run_reprokit(
            ROOT,
            "triage",
            "--issue-json",
            str(path),
            "--here",
            "--report-dir",
            str(tmp_path / "out"),
            env={"REPROKIT_CACHE": str(cache)},
            timeout=900,
            cwd=tempfile.gettempdir(),
        )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("still reproduces on torch 2.14.1") and "Read-only file system" not in proc.stdout, (
        proc.stdout
    )


@pytest.mark.parametrize("field", ["labels", "comments", "nesting"])
def test_a_malformed_issue_file_is_one_line_naming_the_file_and_exit_2(tmp_path, field):
    data = issue(920002, GRAPH_BREAK)
    path = tmp_path / "920002.json"
    if field == "nesting":  # a decoder's recursion limit, not a field: still one line
        path.write_text("[" * 200_000 + "]" * 200_000)
    else:
        path.write_text(json.dumps({**data, field: 7}))
    proc = reprokit(tmp_path, "triage", "--issue-json", str(path), "--here", timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(path) in proc.stderr and (field in proc.stderr or "nests deeper" in proc.stderr), proc.stderr


STORAGE_OFFSET = """import torch


def shift(t):
    off = t.storage_offset()
    return t * 2 + off


view = torch.arange(10.0)[3:7]
torch.testing.assert_close(torch.compile(shift, fullgraph=True, backend="eager")(view), shift(view))
"""


@pytest.fixture
def built_newest(tmp_path):
    """cpu's newest stable (2.15.0), built once in the shared environment cache, linked into this test's own."""
    real = Path(os.environ.get("REPROKIT_CACHE", Path.home() / ".cache" / "reprokit")) / "envs" / "torch-2.15.0"
    if not (real / ".complete").exists():
        pytest.skip("torch 2.15.0 is not built here (`reprokit envs`): a 4 GB build is not made for a test")
    (tmp_path / "cache" / "envs").mkdir(parents=True)
    (tmp_path / "cache" / "envs" / "torch-2.15.0").symlink_to(real, target_is_directory=True)


# Defect: "a nightly, dev or source build is never run, and nothing stands in for it" (only the newest ran, alone).
@pytest.mark.e2e
def test_a_nightly_build_is_stood_in_for_by_the_last_release_before_it_and_the_draft_says_so(tmp_path, built_newest):
    data = issue(920005, STORAGE_OFFSET, version="2.15.0.dev20261001")
    data["body"] = data["body"].replace(
        "torch._dynamo.exc.Unsupported: Call to `torch._dynamo.graph_break()`",
        "Dynamo rejects it: torch.* op returned non-Tensor",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL="http://127.0.0.1:9/simple", UV_OFFLINE="1")
    proc = reprokit(
        tmp_path,
        "triage",
        "--issue-json",
        str(write_issue(tmp_path, data)),
        "--report-dir",
        str(tmp_path / "out"),
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "torch 2.15.0.dev20261001+cpu is a nightly build no index serves: torch 2.14.1 then 2.15.0 stand in"
        in proc.stderr
    ), proc.stderr
    ran = [line.split(":")[0].strip() for line in proc.stdout.splitlines() if line.startswith("  torch ")]
    assert ran == ["torch 2.14.1", "torch 2.15.0"], proc.stdout
    assert proc.stdout.startswith("no longer reproduces since 2.15.0"), proc.stdout  # 2.14.1 and 2.15.0 are adjacent
    draft = (tmp_path / "out" / "issue-920005-comment.md").read_text()
    assert (
        "On torch 2.14.1 (the last release before the nightly build 2.15.0.dev20261001+cpu, which the issue "
        "reports) the script in the description fails with `Unsupported: torch.* op returned non-Tensor"
    ) in draft


# Defect: "where the body has no script, triage says 'no fenced Python block' and stops".
@pytest.mark.e2e
def test_a_script_in_a_members_comment_is_triaged_where_the_description_has_none(tmp_path):
    """Closed on 2026-08-20, before 2.14.1 came out (2026-09-30): a release from after the close still failing is
    news, and the draft says when it came out and that the script is the member's."""
    data = issue(920006, GRAPH_BREAK, state="CLOSED")
    data["body"] = (
        data["body"].split("### 🐛 Describe the bug")[0] + "Dynamo rejects graph_break() under fullgraph "
        "with torch._dynamo.exc.Unsupported; no script yet.\n\nPyTorch version: 2.12.1+cpu\n"
    )
    data.update(closedAt="2026-08-20T00:00:00Z", stateReason="COMPLETED", author={"login": "reporter"})
    data["comments"] = [
        {
            "author": {"login": "dev"},
            "authorAssociation": "MEMBER",
            "createdAt": "2026-07-02T00:00:00Z",
            "body": "A minimal repro you can use to see if you fixed it:\n\n```python\n" + GRAPH_BREAK + "```\n",
        }
    ]
    proc = reprokit(
        tmp_path,
        "triage",
        "--issue-json",
        str(write_issue(tmp_path, data)),
        "--here",
        "--report-dir",
        str(tmp_path / "out"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "the description has no script; running the one from a comment by a maintainer (`dev`)" in proc.stderr, (
        proc.stderr
    )
    assert proc.stdout.startswith("still reproduces on torch 2.14.1"), proc.stdout
    draft = (tmp_path / "out" / "issue-920006-comment.md").read_text()
    assert "the script from a comment by a maintainer (`dev`) fails with `` Unsupported: Call to" in draft, draft
    assert "Torch 2.14.1 was published on 2026-09-30, after the issue was closed on 2026-08-20." in draft
    assert "the script in the description" not in draft and "the description's Python blocks" not in draft


# Defect: "a run past its time limit becomes the signature" (where the issue reports no hang).
@pytest.mark.e2e
def test_a_script_running_past_its_limit_is_retried_once_longer_and_then_not_judged(tmp_path):
    slow = "import time\n\nimport torch\n\ntime.sleep(900)\nprint(torch.compile(lambda x: x + 1)(torch.ones(2)))\n"
    data = issue(920007, slow)
    proc = reprokit(
        tmp_path,
        "triage",
        "--issue-json",
        str(write_issue(tmp_path, data)),
        "--here",
        "--timeout",
        "4",
        "--report-dir",
        str(tmp_path / "out"),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == (
        "not posted: not judged here: on torch 2.14.1 the script ran past 8 s, twice "
        "the 4 s limit, and the issue reports no hang"
    ), proc.stdout
    assert proc.stdout.count("  torch 2.14.1: timeout") == 3, proc.stdout  # two runs, then one retry at 8 s
    assert not (tmp_path / "out").exists()
