"""The `reprokit` command end to end, with real processes: expected-state gating, reports, shards, deadlines."""

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from reprokit.child.landlock import landlock_abi
from reprokit.store.store import Store
from reprokit.store.views import release_of
from support import stored

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
RUNNING = release_of(version("torch"))  # the torch release the runs of these tests record
CASE_YAML = """id: {id}
title: fixture case {id}
category: diagnosis
article: {{section: "0", claim: a fixture for the runner's own tests, stance: fails}}
requires: {{devices: [cpu], timeout: 60}}
expect:
  repro: {{kind: raises, exception: ValueError}}
"""


def set_cpu_pin(root: Path, release: str) -> None:
    """Point the fixture matrix's cpu pin at `release` (the expected state gates the pinned release only)."""
    matrix = yaml.safe_load((root / "matrix.yaml").read_text())
    matrix["targets"]["cpu"]["pins"]["torch"] = release
    (root / "matrix.yaml").write_text(yaml.safe_dump(matrix, sort_keys=False))


def make_corpus(tmp_path, n, sleep=0.0):
    """n fixture cases and the repository's matrix.yaml, its cpu pin set to the torch running here (the tests check
    the gate, not the pin: `nox -s tests` installs the pin, a quick pytest run uses whatever torch is installed)."""
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    set_cpu_pin(tmp_path, RUNNING)
    for i in range(n):
        folder = tmp_path / "cases" / f"fixture-{i:02d}"
        folder.mkdir(parents=True)
        (folder / "case.yaml").write_text(CASE_YAML.format(id=f"fixture-{i:02d}"))
        (folder / "repro.py").write_text(f"import time\ntime.sleep({sleep})\nraise ValueError('bug {i}')\n")
        (folder / "fixed.py").write_text(f"import time\ntime.sleep({sleep})\nprint('fixed {i}')\n")
    return tmp_path


def reprokit(root, *args, env=None, **kwargs):
    env = env or {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        **kwargs,
    )


def test_expected_state_gates_changes_in_both_directions(tmp_path):
    root = make_corpus(tmp_path, 2)
    first = reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "2")
    # a new case has no expected state to differ from: its first run passes and says how to pin it
    assert first.returncode == 0 and "new: no expected state yet: fixture-00/repro@float32: reproduces" in first.stdout
    assert reprokit(root, "run", "--host", "--target", "cpu", "--update-expected").returncode == 0
    assert reprokit(root, "run", "--host", "--target", "cpu").returncode == 0
    # The bug is fixed upstream: the repro stops reproducing, and the run must say so and fail.
    (root / "cases" / "fixture-01" / "repro.py").write_text("print('no longer fails')\n")
    changed = reprokit(root, "run", "--host", "--target", "cpu")
    assert changed.returncode == 1
    assert "fixture-01/repro@float32: reproduces -> does-not-reproduce" in changed.stdout
    assert "reprokit run --target cpu --case fixture-01 --update-expected" in changed.stdout


def test_cases_added_later_are_a_second_run_shown_beside_the_first(tmp_path):
    root = make_corpus(tmp_path, 3)
    reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "2")
    first = {r.key: r for r in stored(root)}
    reprokit(root, "run", "--host", "--target", "cpu", "--case", "fixture-01")
    after = {r.key: r for r in stored(root)}
    assert len(after) == 6
    assert {k for k in after if after[k].run_id != first[k].run_id} == {
        "fixture-01/fixed@float32",
        "fixture-01/repro@float32",
    }
    md = (root / "reports" / "cpu.md").read_text()
    assert "Added later: host mode, " in md and "for the selection fixture-01" in md


def test_results_and_report(tmp_path):
    root = make_corpus(tmp_path, 2)
    reprokit(root, "run", "--host", "--target", "cpu")
    (runs_file,) = (root / "results" / "cpu" / "cases").glob("*.runs.jsonl")
    header = json.loads(runs_file.read_text())
    assert header["environment"]["torch"].startswith("2.") and "collect_env" in header["environment"]
    by_key = {r.key: r for r in stored(root)}
    assert by_key["fixture-00/repro@float32"].verdict == "reproduces"
    assert by_key["fixture-00/repro@float32"].exception == "ValueError"
    assert by_key["fixture-00/fixed@float32"].verdict == "fix-works"
    assert by_key["fixture-00/fixed@float32"].run_id == header["run_id"]
    md, index = (root / "reports" / "cpu.md").read_text(), (root / "reports" / "README.md").read_text()
    assert "2 reproduce" in md and "`ValueError` bug 0" in md
    # Rendering is deterministic: the same records give the same bytes, on every page.
    assert reprokit(root, "report").returncode == 0
    assert (root / "reports" / "cpu.md").read_text() == md
    assert (root / "reports" / "README.md").read_text() == index


def test_history_lists_every_record(tmp_path):
    root = make_corpus(tmp_path, 2)
    reprokit(root, "run", "--host", "--target", "cpu")
    rows = json.loads(reprokit(root, "history", "--json", "--case", "fixture-01").stdout)
    assert [(r["case"], r["variant"], r["verdict"]) for r in rows] == [
        ("fixture-01", "fixed", "fix-works"),
        ("fixture-01", "repro", "reproduces"),
    ]
    assert set(rows[0]) >= {"case", "variant", "dtype", "target", "torch", "device", "verdict", "recorded_at"}


def test_corrupt_store_file_is_one_line_and_left_alone(tmp_path):
    root = make_corpus(tmp_path, 1)
    reprokit(root, "run", "--host", "--target", "cpu", "--no-ladder")
    (path,) = [
        p
        for p in (root / "results" / "cpu" / "cases").glob("*.jsonl")
        if not p.name.endswith((".runs.jsonl", ".output.jsonl"))
    ]
    path.write_text(path.read_text()[:-40] + "\n")
    before = path.read_text()
    proc = reprokit(root, "run", "--host", "--target", "cpu", "--resume")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{path}:2: " in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert path.read_text() == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--host", "--target", "h200"], "--target 'h200': unknown target; matrix.yaml has cpu, a10"),
        (["run", "--host", "--target", "cpu", "--case", "nope-*"], "--case 'nope-*': no case matches"),
        (["run", "--host", "--target", "cpu", "--shard", "3/2"], "--shard '3/2': must be i/n"),
        (
            ["run", "--host", "--target", "cpu", "--dtype", "float16"],
            "--dtype 'float16': no selected run is in that dtype (they are in float32)",
        ),
    ],
)
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
        CASE_YAML.format(id="fixture-00").replace("devices: [cpu]", "devices: [cuda], min_devices: 2")
    )
    reprokit(root, "run", "--host", "--target", "h100", "--force")
    (rec,) = [r for r in stored(root, "h100") if r.variant == "repro"]
    assert rec.verdict == "skipped" and rec.why == "needs 2 CUDA devices, found 0"


@pytest.mark.heavy
def test_shards_partition_the_corpus(tmp_path):
    root = make_corpus(tmp_path, 5)
    seen = []
    for i in (1, 2, 3):
        out = tmp_path / f"out{i}"
        reprokit(root, "run", "--host", "--target", "cpu", "--shard", f"{i}/3", "--out", str(out))
        seen += [r.case for r in stored(out)]
    assert sorted(set(seen)) == [f"fixture-{i:02d}" for i in range(5)] and len(seen) == 10


def test_dtype_selects_the_runs_of_that_dtype(tmp_path):
    root = make_corpus(tmp_path, 2)
    case = root / "cases" / "fixture-01" / "case.yaml"
    case.write_text(case.read_text().replace("{devices: [cpu]", "{devices: [cpu], dtypes: [float32, bfloat16]"))
    reprokit(root, "run", "--host", "--target", "cpu", "--dtype", "bfloat16", "--out", str(tmp_path / "out"))
    assert sorted(r.key for r in stored(tmp_path / "out")) == ["fixture-01/fixed@bfloat16", "fixture-01/repro@bfloat16"]


def test_deadline_leaves_unstarted_runs_for_resume(tmp_path):
    root = make_corpus(tmp_path, 4, sleep=1.0)
    first = reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "1", "--deadline", "0.5")
    assert "runs not started before the --deadline" in first.stdout
    records = stored(root)
    (header,) = Store(root / "results").load().runs.values()
    assert 1 <= len(records) < 8 and header.not_started == 8 - len(records)
    assert "**Incomplete:**" in (root / "reports" / "cpu.md").read_text()
    reprokit(root, "run", "--host", "--target", "cpu", "--jobs", "2", "--resume")
    records = stored(root)
    (header,) = Store(root / "results").load().runs.values()
    assert len(records) == 8 and header.not_started == 0 and {r.run_id for r in records} == {header.run_id}
    assert [s.jobs for s in header.sittings] == [1, 2] and header.sittings[0].ended == "deadline"
    if landlock_abi() >= 1:  # every run's writes were confined, and the report says so
        assert all(r.confined for r in records)
        assert "confined to its own folder (Landlock ABI" in (root / "reports" / "cpu.md").read_text()
    assert "Run: host mode, 2 sittings (1, 2 jobs)" in (root / "reports" / "cpu.md").read_text()


@pytest.mark.heavy
def test_cache_warm_rerun_hits_inductor_cache_and_says_warm(tmp_path):
    root = make_corpus(tmp_path, 0)
    folder = root / "cases" / "compiles"
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(
        CASE_YAML.format(id="compiles").replace(
            "{kind: raises, exception: ValueError}", "{kind: stdout, match: never printed}"
        )
    )
    (folder / "repro.py").write_text(
        "import torch\nfrom torch._dynamo.utils import counters\n"
        "torch.compile(lambda x: x.cos() * 2)(torch.randn(8))\n"
        "print('hits', counters['inductor']['fxgraph_cache_hit'])\n"
    )
    cache = tmp_path / "cache"
    args = ("run", "--host", "--target", "cpu", "--cache", str(cache), "--no-ladder")
    reprokit(root, *args)
    assert any(cache.glob("*/*/inductor/*")), "nothing cached"  # DIR/<case>/<variant>@<dtype>: a run's own folder
    reprokit(root, *args)
    (rec,) = stored(root)
    assert "hits 1" in rec.stdout_tail
    assert {h.cache for h in Store(root / "results").load().runs.values()} == {f"warm ({cache})"}
    assert f"**warm caches** ({cache})" in (root / "reports" / "cpu.md").read_text()
    reprokit(root, "run", "--host", "--target", "cpu", "--no-ladder")  # without --cache: cold again
    assert "hits 0" in stored(root)[0].stdout_tail
