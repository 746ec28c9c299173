"""The test sessions rely on pytest-xdist's `--dist loadgroup` keeping every test of one `xdist_group` on one worker:
the triage fixtures share releases they build and remove, and the corpus module runs its cases once. A pytest or
xdist release that silently stops grouping (pytest 9.2 with xdist 3.8 does) would spread them and make them race."""

import os
import subprocess
import sys
from pathlib import Path

GROUPED = """
import os
import pytest

@pytest.mark.xdist_group("together")
@pytest.mark.parametrize("n", range(8))
def test_grouped(n):
    with open(os.path.join(os.environ["RAN_IN"], f"ran-{n}"), "w") as out:
        out.write(os.environ["PYTEST_XDIST_WORKER"])

@pytest.mark.parametrize("n", range(8))
def test_loose(n):
    pass
"""


def test_loadgroup_keeps_one_group_on_one_worker(tmp_path: Path):
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "ran").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "test_grouped.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "RAN_IN": str(tmp_path / "ran")},
    )
    assert proc.returncode == 0, proc.stdout[-2000:]
    ran = list((tmp_path / "ran").iterdir())
    assert len(ran) == 8 and len({p.read_text() for p in ran}) == 1, {p.name: p.read_text() for p in ran}
