"""Triage on ten real pytorch/pytorch issues that no case links (tests/fixtures/triage: each issue as gh prints it,
its body our paraphrase with a script of ours, and truth.yaml: both releases run by hand, the standing a right
triage gives and whether a comment is worth posting). Triage is offered the releases the truth was run on by hand,
2.13.0 and this environment's 2.14.1; it adds the release an issue reports where that is a release it can install
(2.10.0 and 2.11.0 here), an issue that names none is judged on the newest release published before the day it was
opened (2.2.0, 2.12.0, 2.14.0 here), and one that names a nightly from the nearest release offered; three open issues
that name none are judged on 2.6.0 as run by hand (--reported-release). Every release was also run by hand (truth.yaml).
torch's own behaviour decides every standing."""

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from support import run_reprokit

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "triage"
TRUTH = {entry["number"]: entry for entry in yaml.safe_load((FIXTURES / "truth.yaml").read_text())}
# Built as `reprokit run --torch V` builds them (run/torch_envs.py, about 30 s each from this machine's package
# index), as are the reported releases triage adds; this interpreter's own torch is the newest.
RELEASES = ("2.13.0",)


# A cache of these tests' own: no other test (on another worker, at the same time) builds, uses or removes a release
# in it, and these tests remove only what is theirs.
CACHE = Path(tempfile.gettempdir()) / "reprokit-triage-fixtures-cache"


def complete_environments() -> set[str]:
    return {p.parent.name.removeprefix("torch-") for p in (CACHE / "envs").glob("torch-*/.complete")}


def remove_environments(versions: list[str]) -> None:
    from reprokit.run import env_cache

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REPROKIT_CACHE", str(CACHE))
        env_cache.remove(versions)


@pytest.fixture(scope="module")
def own_cache_removed_after_all():
    """The cache these tests build in (2.13.0, kept for every issue) is removed when they end."""
    yield
    shutil.rmtree(CACHE, ignore_errors=True)


@pytest.fixture
def reported_release_removed_after(own_cache_removed_after_all):
    """The release an issue reports, built for it (a CUDA build: 3-4 GB with its libraries), is removed once that
    issue is judged, so that the cache never holds more than one of them (the six at once: about 25 GB); an issue
    reporting the same release builds it again, in about 30 s."""
    before = complete_environments()
    yield
    if built := sorted(complete_environments() - before - set(RELEASES)):
        remove_environments(built)


def test_every_fixture_is_an_issue_of_ours_with_its_truth():
    numbers = {int(p.stem) for p in FIXTURES.glob("*.json")}
    assert numbers == set(TRUTH) and len(numbers) == 13
    kinds = [TRUTH[n]["kind"] for n in numbers]
    assert kinds.count("closed-fixed") == 4 and kinds.count("closed-not-a-bug") == 2 and kinds.count("open") == 7
    assert sum(TRUTH[n]["post"] for n in numbers) == 3  # the open issues a release fixed since
    for n in numbers:
        data = json.loads((FIXTURES / f"{n}.json").read_text())
        assert data["number"] == n and data["body"].count("```python") == 1
        linked = [p for p in (ROOT / "cases").glob("*/case.yaml") if f"issues/{n}\n" in p.read_text() + "\n"]
        assert not linked and f"  {n}:" not in (ROOT / "issue-states.yaml").read_text()


@pytest.mark.e2e
@pytest.mark.heavy  # ten issues, each run on two or three releases (up to three built environments): minutes
# One worker builds the environments (the others would race it), the worker that builds the images: the tests that
# take gigabytes run one after another (at once, with the CUDA image, they outgrew CI's disk).
@pytest.mark.xdist_group("gigabytes")
@pytest.mark.parametrize("number", sorted(TRUTH))
def test_triage_is_right_on_a_real_issue(number, tmp_path, reported_release_removed_after):
    truth = TRUTH[number]
    proc = run_reprokit(
        ROOT,
        "triage",
        "--issue-json",
        str(FIXTURES / f"{number}.json"),
        "--releases",
        *RELEASES,
        sys.executable,
        "--report-dir",
        str(tmp_path),
        *(["--reported-release", str(truth["judged_on"])] if "judged_on" in truth else []),
        env={"REPROKIT_CACHE": str(CACHE)},
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr
    standing = next(line for line in proc.stdout.splitlines() if not line.startswith("torch "))
    assert standing.startswith(truth["expected"]), (proc.stdout[-3000:], proc.stderr[-2000:], truth["why"])
    drafted = (tmp_path / f"issue-{number}-comment.md").exists()
    assert drafted == truth["post"], standing
    if truth["kind"] == "closed-not-a-bug":
        assert "(nothing was run)" in standing and "a maintainer (" in standing


CUDA = ROOT / "tests" / "fixtures" / "triage-cuda"
CUDA_TRUTH = {e["number"]: e for e in yaml.safe_load((CUDA / "truth.yaml").read_text())}


def test_the_cuda_fixtures_are_real_issues_of_ours_with_the_truth_run_on_a_gpu():
    assert {int(p.stem) for p in CUDA.glob("*.json")} == set(CUDA_TRUTH) and len(CUDA_TRUTH) == 5
    for n, truth in CUDA_TRUTH.items():
        data = json.loads((CUDA / f"{n}.json").read_text())
        assert data["number"] == n and data["body"].count("```python") == 1 and "cuda" in data["body"]
        assert any("H200" in run for run in truth["runs"]) and truth["here"]["expected"]


def test_a_cuda_issue_on_a_machine_without_a_gpu_is_refused_in_one_line(tmp_path):
    for target, said in (
        ("cpu", "the script needs a CUDA GPU: run with --target a10 or a100 or h100"),
        ("h100", "--target h100 runs on a cuda device and this machine has none"),
    ):
        proc = run_reprokit(
            ROOT,
            "triage",
            "--issue-json",
            str(CUDA / "163275.json"),
            "--here",
            "--target",
            target,
            "--report-dir",
            str(tmp_path),
            env={"REPROKIT_CACHE": str(tmp_path)},
            timeout=300,
        )
        if target == "h100" and Path("/dev/nvidia0").exists():
            continue  # a GPU machine runs it (bench/h200-triage)
        assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert not list(tmp_path.glob("*.md"))


def test_the_recorded_triage_on_the_h200_gave_every_action_the_hand_runs_give():
    """bench/h200-triage/triage.log: `reprokit triage --target h100 --here` on each CUDA fixture, run on the H200."""
    log = (ROOT / "bench" / "h200-triage" / "triage.log").read_text()
    sections = {int(part.split("\n", 1)[0]): part for part in log.split("=== #")[1:]}
    assert set(sections) == set(CUDA_TRUTH)
    for n, part in sections.items():
        lines = part.splitlines()
        standing = next(ln for ln in lines[1:] if not ln.startswith("triage:"))
        assert standing.startswith(CUDA_TRUTH[n]["here"]["expected"]), (n, standing)
        assert ("  draft: " in part) == CUDA_TRUTH[n]["here"]["post"], (n, part)
        assert "rc=0" in part and "torch 2.11.0" in part


TWO = ROOT / "tests" / "fixtures" / "triage-two"
TWO_TRUTH = (
    {e["number"]: e for e in yaml.safe_load((TWO / "truth.yaml").read_text())} if (TWO / "truth.yaml").exists() else {}
)
DEFAULT_LOG = ROOT / "bench" / "triage-default" / "triage.log"


def test_ten_more_real_issues_cover_what_triage_must_say():
    """3 open issues whose script now passes, 1 fixed by raising eager's error, 2 closed issues fixed after the
    release they report; none linked by a case."""
    assert len(TWO_TRUTH) == 10 and {int(p.stem) for p in TWO.glob("*.json")} == set(TWO_TRUTH)
    shapes = [t["shape"] for t in TWO_TRUTH.values()]
    assert shapes.count("now-passes") >= 3 and shapes.count("fixed-by-eager-error") >= 1
    assert shapes.count("closed-fixed-after") >= 2
    for n, truth in TWO_TRUTH.items():
        data = json.loads((TWO / f"{n}.json").read_text())
        assert data["number"] == n and data["body"].count("```python") == 1
        assert not [p for p in (ROOT / "cases").glob("*/case.yaml") if f"issues/{n}\n" in p.read_text() + "\n"]
        assert f"  {n}:" not in (ROOT / "issue-states.yaml").read_text() and n not in TRUTH
        assert {"default", "here"} <= set(truth) and set(truth["runs"]) >= {"2.14.1", "2.15.0"}


@pytest.mark.e2e
@pytest.mark.heavy  # ten issues, two or three contained runs each on this environment's torch: minutes
@pytest.mark.parametrize("number", sorted(TWO_TRUTH))
def test_triage_here_is_right_on_ten_more_real_issues(number, tmp_path):
    """--here: this environment's torch (the pin, 2.14.1) alone; the release each issue reports is not run."""
    truth = TWO_TRUTH[number]["here"]
    proc = run_reprokit(
        ROOT,
        "triage",
        "--issue-json",
        str(TWO / f"{number}.json"),
        "--here",
        "--report-dir",
        str(tmp_path),
        env={"REPROKIT_CACHE": str(tmp_path / "cache")},
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr
    standing = proc.stdout.splitlines()[0]
    assert standing.startswith(truth["expected"]), (standing, TWO_TRUTH[number]["why"])
    assert (tmp_path / f"issue-{number}-comment.md").exists() == truth["post"], standing


def test_the_recorded_default_triage_of_ten_more_real_issues_is_right():
    """bench/triage-default/triage.log: `reprokit triage --issue-json N.json` with no release named (the reported
    release and cpu's newest stable, 2.15.0), each issue's run recorded here (the releases take gigabytes each: CI
    runs the --here half live, and the default path with stand-in releases, test_triage_cli.py)."""
    log = DEFAULT_LOG.read_text()
    sections = {int(part.split("\n", 1)[0]): part for part in log.split("=== #")[1:]}
    assert set(sections) == set(TWO_TRUTH)
    for n, part in sections.items():
        truth = TWO_TRUTH[n]["default"]
        lines = [ln for ln in part.splitlines()[1:] if not ln.startswith(("triage", "torch "))]
        assert lines[0].startswith(truth["expected"]), (n, lines[0])
        assert ("  draft: " in part) == truth["post"], (n, part)
        ran = [ln.split(":")[0].strip() for ln in lines if ln.startswith("  torch ")]
        assert 1 <= len(ran) <= 2 and ran[-1] in ("torch 2.15.0", f"torch {TWO_TRUTH[n]['reported']}"), (n, ran)


CRASH_ONLY = CUDA / "crash-only"
ON_THE_H100 = ROOT / "bench" / "triage-h100"


@pytest.mark.parametrize(
    "number, truth",
    [
        *sorted(CUDA_TRUTH.items()),
        *((e["number"], e) for e in yaml.safe_load((CRASH_ONLY / "truth.yaml").read_text())),
    ],
)
def test_triage_on_the_h100_said_what_the_hand_run_truth_says(number, truth):
    """bench/triage-h100: `reprokit triage --target h100 --here` on each CUDA fixture, run on an H100 and kept as
    printed: its standing starts as the truth's `here` says, and it drafted a comment exactly where one is worth
    posting (the crash-only one, #120357, included)."""
    said = (ON_THE_H100 / f"{number}.out").read_text()
    standing = next(line for line in said.splitlines() if not line.startswith(("triage:", " ", "#")))
    assert standing.startswith(truth["here"]["expected"]), (number, standing, truth["why"])
    assert ("  draft: " in said) == truth["here"]["post"], number
    assert (ON_THE_H100 / f"issue-{number}-comment.md").exists() == truth["here"]["post"], number


def test_the_crash_only_cuda_fixture_is_read_as_only_crashing_and_its_script_is_the_issues_block():
    """#120357's script prints, asserts and catches nothing, so its exit status decides (what let the H100 run draft
    a comment on a pass); the issue file's one Python block is scripts/s120357.py, byte for byte."""
    from reprokit.tracker.issue import issue_json, issue_script
    from reprokit.tracker.judging.crash_only import only_crashes

    issue = issue_json.read(CRASH_ONLY / "120357.json")
    script = (CUDA / "scripts" / "s120357.py").read_text()
    assert issue_script.script_of(issue.body) == script and only_crashes(script)
