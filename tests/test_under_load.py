"""A time limit is never the verdict under load: a run that hits its limit while the machine is busy is run again
alone with a longer limit, and recorded as it is then (the record says it was confirmed that way).

The load is real: processes that spin on every core for the whole run, as other work on a shared CI machine does.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import stored

# Heavy: its load slows every other test running beside it; `nox -s tests-heavy` (and .ci/run) run it.
pytestmark = [pytest.mark.e2e, pytest.mark.heavy, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[1]

# About one second of CPU time, however long that takes on the wall clock (the load stretches it, never shortens it).
SCRIPT = """import time
start = time.process_time()
while time.process_time() - start < 1.0:
    pass
print("finished its work")
"""
CASE = """id: busy-fixture
title: a script that needs one second of CPU time
category: diagnosis
requires: {devices: [cpu], timeout: 2}
expect:
  repro: {kind: hangs}
"""


@pytest.fixture
def load():
    """Two spinning processes per core, for as long as the test runs, each in a session of its own: the scheduler
    shares the CPU between sessions (autogroup), and every run is a session of its own (bubblewrap's --new-session), so
    spinners sharing the test's session would weigh as one."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(2 * (os.cpu_count() or 1))
    ]
    yield
    for proc in spinners:
        proc.kill()
        proc.wait()


def test_a_run_past_its_limit_under_load_is_confirmed_alone_and_recorded_as_it_is_then(tmp_path, load):
    (tmp_path / "matrix.yaml").write_bytes((ROOT / "matrix.yaml").read_bytes())
    case = tmp_path / "cases" / "busy-fixture"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text(CASE)
    (case / "repro.py").write_text(SCRIPT)
    (case / "fixed.py").write_text(SCRIPT)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(tmp_path),
            "run",
            "--host",
            "--target",
            "cpu",
            "--jobs",
            "2",
            "--no-report",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT / "tools")},
        capture_output=True,
        text=True,
        timeout=240,
    )
    records = {r.variant: r for r in stored(tmp_path)}
    assert set(records) == {"repro", "fixed"}, proc.stdout + proc.stderr
    repro, fixed = records["repro"], records["fixed"]
    # Under this load the first run outlives its 2 s limit; the lone re-run's limit is 6 s, which the work fits in.
    assert repro.verdict == "does-not-reproduce" and fixed.verdict == "fix-works", proc.stdout
    for rec in (repro, fixed):
        assert rec.confirmed_alone and "hit its 2 s limit" in rec.confirmed_alone
        assert "run again alone with a 6 s limit" in rec.confirmed_alone
