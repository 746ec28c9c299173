"""End to end in Docker: the cpu image builds from a local base and a wheelhouse, is reused when unchanged, and the
CPU corpus run inside it (no network, non-root, repository read-only) gives the same verdicts as the host run.

Needs a running Docker engine, a local base image ($REPROKIT_E2E_BASE) and a wheelhouse ($REPROKIT_E2E_WHEELHOUSE);
.ci/run prepares all three. Skipped elsewhere, except under CI, where a missing engine is a failure.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from reprokit.container import docker_running
from support import stored

ROOT = Path(__file__).resolve().parents[1]
BASE = os.environ.get("REPROKIT_E2E_BASE")
WHEELHOUSE = os.environ.get("REPROKIT_E2E_WHEELHOUSE")
ready = docker_running() and BASE and WHEELHOUSE
if not ready and os.environ.get("CI") != "true":
    pytest.skip("no Docker engine / base image / wheelhouse here (.ci/run prepares them)", allow_module_level=True)
pytestmark = pytest.mark.e2e


def reprokit(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run([sys.executable, "-m", "reprokit", "--root", str(ROOT), *args], env=env,
                          capture_output=True, text=True)


def test_image_builds_and_is_reused_when_unchanged():
    assert ready, "CI must provide Docker, REPROKIT_E2E_BASE and REPROKIT_E2E_WHEELHOUSE"
    first = reprokit("image", "--target", "cpu", "--base-image", BASE, "--wheelhouse", WHEELHOUSE)
    assert first.returncode == 0, first.stdout + first.stderr
    second = reprokit("image", "--target", "cpu", "--base-image", BASE, "--wheelhouse", WHEELHOUSE)
    assert "up to date (nothing changed), not rebuilt" in second.stdout
    assert first.stdout.split()[-1] == second.stdout.split()[-1]


@pytest.mark.timeout(2700)  # the whole corpus, about 8 minutes alone on 2 cores
def test_corpus_in_the_container_matches_the_host_verdicts(tmp_path):
    proc = reprokit("run", "--target", "cpu", "--container", "--base-image", BASE, "--wheelhouse", WHEELHOUSE,
                    "--jobs", "2", "--out", str(tmp_path))
    recorded = stored(tmp_path)
    expected = yaml.safe_load((ROOT / "expected" / "cpu.yaml").read_text())
    verdicts = {r.key: r.verdict for r in recorded}
    assert verdicts == {k: v for k, v in expected.items() if k in verdicts} and len(verdicts) == len(expected)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert {r.torch for r in recorded} == {"2.13.0+cpu"}
    assert (tmp_path / "reports" / "cpu.md").exists()  # rendered outside the container, exactly as a host run


def test_options_reach_the_container_whole(tmp_path):
    """--warm and --no-ladder used to be dropped on the way into the container; now the whole request goes in."""
    proc = reprokit("run", "--target", "cpu", "--container", "--base-image", BASE, "--wheelhouse", WHEELHOUSE,
                    "--case", "custom-op-unregistered-gemm", "--warm", "--no-ladder", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    from reprokit.store import Store
    (header,) = Store(tmp_path / "results").load().runs.values()
    assert header.interpreter.startswith("warm") and header.selection == ["custom-op-unregistered-gemm"]
