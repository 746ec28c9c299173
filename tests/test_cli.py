"""The `reprokit` command end to end, with real processes: expected-state gating, kill and --resume, reports."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reprokit.probe import landlock_abi

ROOT = Path(__file__).resolve().parents[1]
CASE_YAML = """id: {id}
title: fixture case {id}
category: diagnosis
article: {{section: "0", claim: a fixture for the runner's own tests, stance: fails}}
requires: {{devices: [cpu], timeout: 60}}
expect:
  repro: {{kind: raises, exception: ValueError}}
"""


def make_corpus(tmp_path, n, sleep=0.0):
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    for i in range(n):
        folder = tmp_path / "cases" / f"fixture-{i:02d}"
        folder.mkdir(parents=True)
        (folder / "case.yaml").write_text(CASE_YAML.format(id=f"fixture-{i:02d}"))
        (folder / "repro.py").write_text(f"import time\ntime.sleep({sleep})\nraise ValueError('bug {i}')\n")
        (folder / "fixed.py").write_text(f"import time\ntime.sleep({sleep})\nprint('fixed {i}')\n")
    return tmp_path


def reprokit(root, *args, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run([sys.executable, "-m", "reprokit", "--root", str(root), *args], env=env,
                          capture_output=True, text=True, **kwargs)


def test_expected_state_gates_changes_in_both_directions(tmp_path):
    root = make_corpus(tmp_path, 2)
    first = reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "2")
    assert first.returncode == 1 and "(new) -> reproduces" in first.stdout
    assert reprokit(root, "run", "--host", "--target", "cpu", "--update-expected").returncode == 0
    assert reprokit(root, "run", "--host", "--target", "cpu").returncode == 0
    # The bug is fixed upstream: the repro stops reproducing, and the run must say so and fail.
    (root / "cases" / "fixture-01" / "repro.py").write_text("print('no longer fails')\n")
    changed = reprokit(root, "run", "--host", "--target", "cpu")
    assert changed.returncode == 1
    assert "fixture-01/repro@float32: reproduces -> does-not-reproduce" in changed.stdout
    assert "reprokit run --target cpu --case fixture-01 --update-expected" in changed.stdout


def test_cases_added_later_keep_the_runs_header_and_say_where_they_ran(tmp_path):
    root = make_corpus(tmp_path, 3)
    reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "2")
    before = json.loads((root / "reports" / "cpu" / "results.json").read_text())
    reprokit(root, "run", "--host", "--target", "cpu", "--case", "fixture-01")
    after = json.loads((root / "reports" / "cpu" / "results.json").read_text())
    assert len(after["records"]) == 6 and after["environment"] == before["environment"]
    assert after["run"]["wall_seconds"] == before["run"]["wall_seconds"]  # the whole run's figure, not the selection's
    (added,) = after["run"]["added"]
    assert added["keys"] == ["fixture-01/fixed@float32", "fixture-01/repro@float32"]
    assert "Added later: 2 runs (fixture-01) on CPU" in (root / "reports" / "cpu.md").read_text()


def test_results_and_report(tmp_path):
    root = make_corpus(tmp_path, 2)
    reprokit(root, "run", "--host", "--target", "cpu")
    data = json.loads((root / "reports" / "cpu" / "results.json").read_text())
    assert data["environment"]["torch"].startswith("2.")
    assert "collect_env" in data["environment"]
    by_key = {r["key"]: r for r in data["records"]}
    assert by_key["fixture-00/repro@float32"]["verdict"] == "reproduces"
    assert by_key["fixture-00/repro@float32"]["exception"] == "ValueError"
    assert by_key["fixture-00/fixed@float32"]["verdict"] == "fix-works"
    md = (root / "reports" / "cpu.md").read_text()
    assert "2 reproduce" in md and "`ValueError` bug 0" in md
    # Rendering is deterministic: the same results give the same bytes.
    assert reprokit(root, "report").returncode == 0
    assert (root / "reports" / "cpu.md").read_text() == md


def test_killed_run_resumes_without_losing_or_repeating_anything(tmp_path):
    root = make_corpus(tmp_path, 6, sleep=1.0)
    journal = root / "reports" / "cpu" / "results.partial.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    proc = subprocess.Popen([sys.executable, "-m", "reprokit", "--root", str(root), "run", "--host", "--target", "cpu",
                             "--jobs", "1"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not journal.exists() or len(journal.read_text().splitlines()) < 3):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {json.loads(line)["key"]: json.loads(line) for line in journal.read_text().splitlines()}
    assert 3 <= len(before) < 12
    assert not (root / "reports" / "cpu" / "results.json").exists()  # a cut-off run publishes nothing

    reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "2", "--resume")
    records = json.loads((root / "reports" / "cpu" / "results.json").read_text())["records"]
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == 12
    after = {r["key"]: r for r in records}
    for key, rec in before.items():
        assert after[key]["seconds"] == rec["seconds"]  # kept, not re-run
    assert not journal.exists()


def test_corrupt_results_file_is_one_line_and_left_alone(tmp_path):
    root = make_corpus(tmp_path, 1)
    path = root / "reports" / "cpu" / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"target": "cpu", "records": [')
    proc = reprokit(root, "run", "--host", "--target", "cpu", "--resume")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "results.json: not a valid results file" in proc.stderr
    assert path.read_text() == '{"target": "cpu", "records": ['


@pytest.mark.parametrize("args, message", [
    (["run", "--host", "--target", "h200"], "--target 'h200': unknown target; matrix.yaml has cpu, a10"),
    (["run", "--host", "--target", "cpu", "--case", "nope-*"], "--case 'nope-*': no case matches"),
    (["run", "--host", "--target", "cpu", "--shard", "3/2"], "--shard '3/2': must be i/n"),
])
def test_unknown_target_case_or_shard_is_one_line(tmp_path, args, message):
    proc = reprokit(make_corpus(tmp_path, 1), *args)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_gpu_target_is_refused_on_a_cpu_machine(tmp_path):
    proc = reprokit(make_corpus(tmp_path, 1), "run", "--host", "--target", "h100")
    assert proc.returncode == 2
    assert "target h100 needs a cuda device, found no accelerator (cpu); pass --force" in proc.stderr


def test_forced_gpu_target_records_skips_with_reasons(tmp_path):
    root = make_corpus(tmp_path, 1)
    (root / "cases" / "fixture-00" / "case.yaml").write_text(
        CASE_YAML.format(id="fixture-00").replace("devices: [cpu]", "devices: [cuda], min_devices: 2"))
    reprokit(root, "run", "--host", "--target", "h100", "--force")
    rec = json.loads((root / "reports" / "h100" / "results.json").read_text())["records"][0]
    assert rec["verdict"] == "skipped" and rec["why"] == "needs 2 CUDA devices, found 0"


def test_shards_partition_the_corpus(tmp_path):
    root = make_corpus(tmp_path, 5)
    seen = []
    for i in (1, 2, 3):
        out = tmp_path / f"out{i}"
        reprokit(root, "run", "--host", "--target", "cpu", "--shard", f"{i}/3", "--out", str(out))
        seen += [r["case"] for r in json.loads((out / "cpu" / "results.json").read_text())["records"]]
    assert sorted(set(seen)) == [f"fixture-{i:02d}" for i in range(5)] and len(seen) == 10


def test_deadline_leaves_unstarted_runs_for_resume(tmp_path):
    root = make_corpus(tmp_path, 4, sleep=1.0)
    first = reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "1", "--deadline", "0.5")
    assert "runs not started before the --deadline" in first.stdout
    data = json.loads((root / "reports" / "cpu" / "results.json").read_text())
    assert 1 <= len(data["records"]) < 8 and data["run"]["not_started"] == 8 - len(data["records"])
    assert "**Incomplete:**" in (root / "reports" / "cpu.md").read_text()
    reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "2", "--resume")
    data = json.loads((root / "reports" / "cpu" / "results.json").read_text())
    assert len(data["records"]) == 8 and data["run"]["not_started"] == 0
    assert data["run"]["sittings"] == [1, 2]  # the report says the run was split, and how
    if landlock_abi() >= 1:  # every run's writes were confined, and the report says so
        assert all(r["confined"] for r in data["records"])
        assert "confined to its own folder (Landlock ABI" in (root / "reports" / "cpu.md").read_text()
    assert "Run: host mode, 2 sittings (1, 2 jobs)" in (root / "reports" / "cpu.md").read_text()


def test_cache_warm_rerun_hits_inductor_cache_and_says_warm(tmp_path):
    root = make_corpus(tmp_path, 0)
    folder = root / "cases" / "compiles"
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(CASE_YAML.format(id="compiles").replace(
        "{kind: raises, exception: ValueError}", "{kind: stdout, match: never printed}"))
    (folder / "repro.py").write_text(
        "import torch\nfrom torch._dynamo.utils import counters\n"
        "torch.compile(lambda x: x.cos() * 2)(torch.randn(8))\n"
        "print('hits', counters['inductor']['fxgraph_cache_hit'])\n")
    cache = tmp_path / "cache"
    args = ("run", "--host", "--target", "cpu", "--cache", str(cache), "--no-ladder")
    reprokit(root, *args)
    assert any(cache.glob("inductor/*")), "nothing cached"
    reprokit(root, *args)
    data = json.loads((root / "reports" / "cpu" / "results.json").read_text())
    assert "hits 1" in data["records"][0]["stdout_tail"] and data["run"]["cache"] == f"warm ({cache})"
    assert f"**warm caches** ({cache})" in (root / "reports" / "cpu.md").read_text()
    reprokit(root, "run", "--host", "--target", "cpu", "--no-ladder")  # without --cache: cold again
    assert "hits 0" in json.loads((root / "reports" / "cpu" / "results.json").read_text())["records"][0]["stdout_tail"]
