"""End to end in Docker: the cpu image builds from a local base and a wheelhouse, is reused when unchanged, and the
CPU corpus run inside it (no network, non-root, repository read-only) gives the same verdicts as the host run.

Needs a running Docker engine, a local base image ($REPROKIT_E2E_BASE) and a wheelhouse ($REPROKIT_E2E_WHEELHOUSE);
.ci/run prepares all three. Skipped elsewhere, except under CI, where a missing engine is a failure.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from reprokit.container import docker_running

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


def test_corpus_in_the_container_matches_the_host_verdicts(tmp_path):
    proc = reprokit("run", "--target", "cpu", "--container", "--base-image", BASE, "--wheelhouse", WHEELHOUSE,
                    "--jobs", "2", "--out", str(tmp_path))
    recorded = json.loads((tmp_path / "cpu" / "results.json").read_text())
    expected = yaml.safe_load((ROOT / "expected" / "cpu.yaml").read_text())
    verdicts = {r["key"]: r["verdict"] for r in recorded["records"]}
    assert verdicts == {k: v for k, v in expected.items() if k in verdicts} and len(verdicts) == len(expected)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert recorded["environment"]["torch"].startswith("2.13.0")
    assert (tmp_path / "cpu.md").exists()  # rendered outside the container, exactly as a host run
