"""The GitHub Actions workflows: actionlint and zizmor clean, the hardware matrix generated from matrix.yaml,
trusted-ref triggers only, and the nightly autofix's one-PR-per-case idempotence against a real git remote."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
TOOLS_ENV = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}


def bin_path(name):
    found = shutil.which(name) or str(Path(sys.executable).with_name(name))
    assert Path(found).exists(), f"{name} is not installed (it comes with the test extra: pip install -e .[test])"
    return found


def test_actionlint_finds_nothing():
    proc = subprocess.run([bin_path("actionlint"), *map(str, WORKFLOWS)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing():
    # Offline: no GitHub API calls. No finding is ignored, so no ignore list is kept.
    proc = subprocess.run(
        [bin_path("zizmor"), "--offline", "--format", "json", *map(str, WORKFLOWS)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == []


def test_gpu_jobs_run_only_on_trusted_refs():
    for path in WORKFLOWS:
        data = yaml.safe_load(path.read_text())
        triggers = data[True]  # YAML 1.1 reads the key `on` as True
        assert "pull_request_target" not in triggers, path
        if path.name != "ci.yml":
            assert "pull_request" not in triggers, path
            assert data["permissions"] == {}, path
    hardware = yaml.safe_load((ROOT / ".github" / "workflows" / "hardware.yml").read_text())
    assert "vars.REPROKIT_GPU_RUNNERS" in hardware["jobs"]["matrix"]["if"]
    assert "fork == false" in hardware["jobs"]["matrix"]["if"]


def test_adding_a_target_adds_a_job_without_a_workflow_edit(tmp_path):
    matrix = yaml.safe_load((ROOT / "matrix.yaml").read_text())
    matrix["targets"]["l40s"] = {
        **matrix["targets"]["a100"],
        "description": "NVIDIA L40S",
        "runner_labels": ["self-hosted", "gpu-l40s"],
    }
    (tmp_path / "matrix.yaml").write_text(yaml.safe_dump(matrix))
    out = subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(tmp_path), "targets", "--json", "--exclude", "cpu"],
        capture_output=True,
        text=True,
        env=TOOLS_ENV,
        check=True,
    ).stdout
    jobs = {j["target"]: j["runs-on"] for j in json.loads(out)["include"]}
    assert jobs["l40s"] == ["self-hosted", "gpu-l40s"] and "cpu" not in jobs
    assert set(jobs) == set(matrix["targets"]) - {"cpu"}


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def test_autofix_opens_one_branch_per_changed_case_and_is_idempotent(tmp_path):
    remote, repo = tmp_path / "remote.git", tmp_path / "repo"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    git("clone", "-q", str(remote), str(repo), cwd=tmp_path)
    shutil.copy(ROOT / "matrix.yaml", repo / "matrix.yaml")
    (repo / "expected").mkdir()
    (repo / "expected" / "cpu.yaml").write_text("a-case/repro@float32: reproduces\nb-case/repro@float32: reproduces\n")
    git("add", ".", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init", cwd=repo)
    git("push", "-q", "origin", "HEAD", cwd=repo)
    from reprokit.store.store import Store
    from support import record

    Store(tmp_path / "nightly").merge(
        [
            record(case="a-case", verdict="does-not-reproduce", torch="2.99.0.dev", why="ran and exited 0"),
            record(case="b-case", verdict="reproduces", torch="2.99.0.dev"),
        ]
    )
    cmd = [
        sys.executable,
        "-m",
        "reprokit",
        "--root",
        str(repo),
        "autofix",
        "--target",
        "cpu",
        "--results",
        str(tmp_path / "nightly"),
        "--push",
    ]
    first = subprocess.run(cmd, capture_output=True, text=True, env=TOOLS_ENV)
    assert "proposed a-case: a-case: no longer reproduces on torch 2.99.0.dev" in first.stdout, first.stderr
    assert "b-case" not in first.stdout  # unchanged: no PR
    branches = git("ls-remote", "--heads", str(remote), cwd=tmp_path)
    assert "refs/heads/autofix/cpu/a-case" in branches
    changed = git("show", "autofix/cpu/a-case:expected/cpu.yaml", cwd=remote)
    assert "a-case/repro@float32: does-not-reproduce" in changed and "b-case/repro@float32: reproduces" in changed
    second = subprocess.run(cmd, capture_output=True, text=True, env=TOOLS_ENV)
    assert "skip a-case: branch autofix/cpu/a-case exists" in second.stdout


def test_the_autofix_job_can_push_with_its_own_token_and_no_other_step_holds_one():
    """persist-credentials: false left git with no credential, so `autofix --push` could not push: git gets the job's
    token (scoped by the job's permissions) in one step, right before the push, and no step that runs code of the
    repository's cases holds a token."""
    nightly = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text())
    propose = nightly["jobs"]["propose"]
    assert propose["permissions"] == {"contents": "write", "pull-requests": "write"}
    steps = propose["steps"]
    setup = next(i for i, s in enumerate(steps) if s.get("run") == "gh auth setup-git")
    push = next(i for i, s in enumerate(steps) if "autofix" in s.get("run", "") and "--push" in s.get("run", ""))
    assert setup < push and steps[setup]["env"]["GH_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"
    assert all(s.get("with", {}).get("persist-credentials") is False for s in steps if "checkout" in s.get("uses", ""))
    assert nightly["jobs"]["run"]["permissions"] == {"contents": "read"}  # the job that runs cases holds no write token


def test_the_gpu_label_guidance_asks_for_the_whole_diff():
    """The GPU job runs the pull request's noxfile.py, pyproject.toml and root modules on the runner host, not only
    cases/ and tools/: whoever labels it reviews the whole diff."""
    guidance = (ROOT / "CONTRIBUTING.md").read_text()
    assert "Review the whole diff" in guidance
    for path in ("noxfile.py", "pyproject.toml", "root modules"):
        assert path in guidance.split("Review the whole diff", 1)[1][:400]
    assert "review the\n# whole diff" in (ROOT / ".github" / "workflows" / "hardware.yml").read_text()


def test_the_warm_mode_tests_that_skip_as_root_run_in_a_ci_job_that_is_not_root():
    """CI's tests job runs as root (sudo), where every warm-mode test skips: another job runs them as the runner's
    own user, through the nox session that selects them and fails where one skips."""
    import re

    jobs = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())["jobs"]
    unprivileged = [
        name
        for name, job in jobs.items()
        if any("nox -s tests-unprivileged" in step.get("run", "") for step in job["steps"])
    ]
    assert unprivileged, "no CI job runs nox -s tests-unprivileged"
    steps = [step.get("run", "") for step in jobs[unprivileged[0]]["steps"]]
    assert not any(re.search(r"\bsudo\b.*\bnox\b", run) for run in steps)  # the tests themselves run unprivileged
    noxfile = (ROOT / "noxfile.py").read_text()
    assert 'name="tests-unprivileged"' in noxfile and '"-k", "warm", "tests/test_warm.py"' in noxfile
    warm_skips_as_root = (ROOT / "tests" / "test_warm.py").read_text()
    assert "os.geteuid() == 0" in warm_skips_as_root  # what the job exists for


def test_the_ci_script_runs_the_warm_mode_tests_as_a_user_that_is_not_root():
    """.ci/run (this project's CI, as root) runs them too: .ci/unprivileged, with the tests session's environment
    before it is removed, as uid 65534, failing where one skips for another reason than needing root."""
    ci = (ROOT / ".ci" / "run").read_text()
    step = ci.index(".ci/unprivileged .nox/tests")
    assert ci.index("nox -s tests\n") < step < ci.index("rm -rf .nox/tests")
    script = (ROOT / ".ci" / "unprivileged").read_text()
    assert "setpriv --reuid=65534" in script and '"UNPRIVILEGED"' in script and '"ROOT_ONLY_SKIP"' in script


def test_the_backlog_workflow_lists_shards_and_merges_with_no_token_that_writes():
    """backlog.yml (linted above with the others): gh lists the issues once, each of SHARDS matrix jobs judges its
    part with `reprokit backlog --shard k/N` and uploads it, and one job merges them; every job reads only."""
    path = ROOT / ".github" / "workflows" / "backlog.yml"
    assert path in WORKFLOWS
    data = yaml.safe_load(path.read_text())
    assert set(data[True]) == {"schedule", "workflow_dispatch"} and data["permissions"] == {}
    jobs = data["jobs"]
    assert all(job["permissions"] == {} for job in jobs.values())
    runs = {name: " ".join(s.get("run", "") for s in job["steps"]) for name, job in jobs.items()}
    assert "reprokit backlog --label" in runs["list"] and "--fetch-only" in runs["list"]
    shards = jobs["shard"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(data["env"]["SHARDS"]) + 1)) and jobs["shard"]["needs"] == "list"
    assert '--shard "$SHARD/$SHARDS"' in runs["shard"] and "--merge shards/*" in runs["merge"]
    assert jobs["merge"]["needs"] == ["shard", "gpu-shard"] and "!cancelled()" in jobs["merge"]["if"]
    assert all(
        f"-of-{len(shards)}-" in s["with"]["key"] for s in jobs["shard"]["steps"] if "cache" in s.get("uses", "")
    )


def test_the_backlogs_gpu_shard_runs_the_cuda_issues_on_the_gpu_runner_labels_of_matrix_yaml():
    """backlog.yml's GPU shard: only where the repository has GPU runners (as hardware.yml), on the runner labels
    matrix.yaml gives GPU_TARGET (the list job's `reprokit targets --json --only`, run here), judging only the
    issues whose script needs a CUDA GPU on that target; its artifact is one of the merged shards."""
    data = yaml.safe_load((ROOT / ".github" / "workflows" / "backlog.yml").read_text())
    jobs, target = data["jobs"], data["env"]["GPU_TARGET"]
    gpu = jobs["gpu-shard"]
    assert gpu["needs"] == "list" and gpu["if"] == "vars.REPROKIT_GPU_RUNNERS == 'enabled'"
    assert (
        gpu["runs-on"] == "${{ matrix.runs-on }}"
        and gpu["strategy"]["matrix"] == "${{ fromJSON(needs.list.outputs.gpu) }}"
    )
    listing = next(s["run"] for s in jobs["list"]["steps"] if s.get("id") == "gpu")
    assert 'reprokit targets --json --only "$GPU_TARGET"' in listing
    proc = subprocess.run(
        [sys.executable, "-m", "reprokit", "targets", "--json", "--only", target],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
        cwd=ROOT,
    )
    matrix = yaml.safe_load((ROOT / "matrix.yaml").read_text())["targets"]
    assert json.loads(proc.stdout) == {
        "include": [{"target": target, "family": "cuda", "runs-on": matrix[target]["runner_labels"]}]
    }, proc.stderr
    judge = next(s for s in gpu["steps"] if "reprokit backlog" in s.get("run", ""))
    assert "--needs-gpu" in judge["run"] and '--target "$TARGET"' in judge["run"]
    assert judge["env"]["TARGET"] == "${{ matrix.target }}"
    upload = next(s for s in gpu["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"].startswith("backlog-shard-")  # the merge job's pattern takes it
