"""The model sweep runs through the same runner: a real cell of a self-contained structure, its record and report."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from reprokit.model.matrix import load_matrix
from reprokit.run import sweep
from support import stored

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.e2e


def test_grid_and_structures_are_valid():
    assert len(sweep.structures(ROOT / "sweep")) == 27
    target = load_matrix(ROOT / "matrix.yaml").targets["cpu"]
    runs = sweep.plan(ROOT / "sweep", "cpu", target, {"device_count": 0})
    assert len({r.case.id for r in runs}) == 27 and all(r.script.name == "cell.py" for r in runs)
    assert {r.variant for r in runs} == {
        "inference-default",
        "inference-fullgraph",
        "inference-dynamic",
        "train-default",
    }


def test_a_structure_whose_package_is_missing_is_skipped_not_counted_as_a_compile_failure():
    target = load_matrix(ROOT / "matrix.yaml").targets["cpu"]
    facts = {"device_count": 0, "packages": {"transformers": None, "torchao": "0.18.0"}}
    runs = {r.case.id: r for r in sweep.plan(ROOT / "sweep", "cpu", target, facts)}
    assert runs["sweep-bert"].skip == "needs transformers, not installed in this Python"
    assert runs["sweep-glu-mlp"].skip is None  # torch only
    installed = {**facts, "packages": {"transformers": "5.25.0", "torchao": None}}
    assert all(r.skip is None for r in sweep.plan(ROOT / "sweep", "cpu", target, installed))


def test_the_facts_name_the_optional_packages_of_the_case_interpreter():
    from importlib import metadata

    from reprokit.run import environment

    def version(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    facts = environment.collect(sys.executable)
    assert facts["packages"] == {name: version(name) for name in environment.PACKAGES}


@pytest.mark.heavy
def test_a_real_cell_is_recorded_and_reported(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("matrix.yaml",):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "sweep", root / "sweep")
    (root / "cases").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(root),
            "run",
            "--host",
            "--target",
            "cpu",
            "--suite",
            "sweep",
            "--smoke",
            "--case",
            "sweep-glu-mlp",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    (record,) = stored(root, "cpu", "sweep")
    assert record.key == "sweep-glu-mlp/inference-default@float32"
    assert record.verdict == "does-not-reproduce", record.stderr_tail[-2000:]
    metrics = json.loads(record.stdout_tail.strip().splitlines()[-1].removeprefix("SWEEP_RESULT "))
    assert metrics["accurate"] and metrics["fp64_reference"] and metrics["compile_seconds"] > 0
    report = (root / "reports" / "cpu-sweep.md").read_text()
    assert (
        "cells failing (error or inaccurate)       | 0.0% (0/1)" in report.replace("  ", " ") or "0.0% (0/1)" in report
    )
    assert (root / "reports" / "cpu" / "sweep-heatmap.png").stat().st_size > 1000


def test_an_edit_of_the_sweeps_cell_supersedes_its_records_and_the_reports_say_so(tmp_path):
    """The committed cpu sweep (108 cells, the sweep's content when they ran) is complete until sweep/cell.py
    changes; from then on its cells are history: the report and the headline say superseded, never complete."""
    from support import run_reprokit

    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    (tmp_path / "cases").mkdir()
    shutil.copytree(ROOT / "sweep", tmp_path / "sweep", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "results" / "cpu" / "sweep", tmp_path / "results" / "cpu" / "sweep")
    done = run_reprokit(tmp_path, "report")
    assert done.returncode == 0, done.stderr
    index = (tmp_path / "reports" / "README.md").read_text()
    assert "all 108 cells of its grid recorded" in index and "uperseded" not in index

    with open(tmp_path / "sweep" / "cell.py", "a") as cell:
        cell.write("\n# a change of what every cell runs\n")
    done = run_reprokit(tmp_path, "report")
    assert done.returncode == 0, done.stderr
    index = (tmp_path / "reports" / "README.md").read_text()
    assert "`cpu`: not judged (108 cells superseded" in index and "all 108 cells" not in index
    page = (tmp_path / "reports" / "cpu-sweep.md").read_text()
    assert "**Superseded:** 108 cells of torch 2.14.1" in page and "cells failing" not in page
