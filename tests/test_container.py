"""End to end in Docker: the cpu image builds from a local base and a wheelhouse, is reused when unchanged, and the
CPU corpus run inside it (no network, non-root, repository read-only) gives the same verdicts as the host run.

Then the h100 image, a CUDA build of torch with its CUDA libraries, from the same base and a CUDA wheelhouse
($REPROKIT_E2E_CUDA_WHEELHOUSE, Python 3.11 wheels: the local base's Python), run here with --force: torch imports
and reports CUDA, finds no GPU, the GPU-only case is skipped with its reason and the CPU-capable one runs.

Needs a running Docker engine, a local base image ($REPROKIT_E2E_BASE) and the wheelhouses; .ci/run prepares them.
Skipped elsewhere, except under CI, where a missing engine is a failure.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from reprokit.images.container import docker_running
from reprokit.model.corpus import discover
from reprokit.store import expected as expected_state
from reprokit.store.views import release_of
from support import stored

ROOT = Path(__file__).resolve().parents[1]
BASE = os.environ.get("REPROKIT_E2E_BASE")
WHEELHOUSE = os.environ.get("REPROKIT_E2E_WHEELHOUSE")
CUDA_WHEELHOUSE = os.environ.get("REPROKIT_E2E_CUDA_WHEELHOUSE")
ready = docker_running() and BASE and WHEELHOUSE
if not ready and os.environ.get("CI") != "true":
    pytest.skip("no Docker engine / base image / wheelhouse here (.ci/run prepares them)", allow_module_level=True)
# One worker runs them all (`--dist loadgroup`): they share one image, which two workers would build twice at once;
# the same worker runs the triage fixtures, which build several torch releases: the tests that take gigabytes of disk
# run one after another.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("gigabytes")]


def reprokit(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(ROOT), *args], env=env, capture_output=True, text=True
    )


def test_image_builds_and_is_reused_when_unchanged():
    assert ready, "CI must provide Docker, REPROKIT_E2E_BASE and REPROKIT_E2E_WHEELHOUSE"
    first = reprokit("image", "--target", "cpu", "--base-image", BASE, "--wheelhouse", WHEELHOUSE)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Step 1/" in first.stdout or "up to date" in first.stdout  # the build's log streams
    second = reprokit("image", "--target", "cpu", "--base-image", BASE, "--wheelhouse", WHEELHOUSE)
    assert "up to date (nothing changed), not rebuilt" in second.stdout
    assert first.stdout.split()[-1] == second.stdout.split()[-1]


def test_a_base_image_that_is_not_here_and_cannot_be_pulled_says_what_to_do_instead():
    """A machine with Docker and no registry: the build stops at FROM; the one line says how to go on."""
    assert ready, "CI must provide Docker, REPROKIT_E2E_BASE and REPROKIT_E2E_WHEELHOUSE"
    absent = "reprokit-test/no-such-base:none"  # no registry holds it, reachable or not
    proc = reprokit("image", "--target", "cpu", "--base-image", absent, "--wheelhouse", WHEELHOUSE)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.strip()]
    assert (
        "image build failed" in line
        and f"({absent}, the base image, is not on this machine and could not be "
        "pulled: build FROM a local image with --base-image"
        in line
        and "--host" in line
    ), line


@pytest.mark.heavy
@pytest.mark.timeout(2700)  # about 10 minutes alone on 2 cores, 20 under a full 2-core load
def test_corpus_in_the_container_matches_the_host_verdicts(tmp_path):
    """One article case of each category (14 cases, about 30 runs: every kind of case the image must run, each oracle
    kind among them) gives in the image exactly the verdicts the pinned release gave on the host
    (expected/cpu.yaml). All 45 article cases took over 45 minutes under a full load; `nox -s repro-cpu` runs the
    whole corpus in the container wherever Docker runs."""
    first_of_category: dict[str, str] = {}
    for case_dir in sorted(discover(ROOT / "cases"), key=lambda c: c.case.id):
        if case_dir.case.source == "article":
            first_of_category.setdefault(case_dir.case.category, case_dir.case.id)
    article = sorted(first_of_category.values())
    assert len(article) >= 12
    selection = [arg for case_id in article for arg in ("--case", case_id)]
    proc = reprokit(
        "run",
        "--target",
        "cpu",
        "--container",
        "--base-image",
        BASE,
        "--wheelhouse",
        WHEELHOUSE,
        "--jobs",
        "2",
        "--out",
        str(tmp_path),
        *selection,
    )
    recorded = stored(tmp_path)
    expected = expected_state.load(ROOT / "expected" / "cpu.yaml")
    mine = {k: v for k, v in expected.items() if k.split("/")[0] in article}
    verdicts = {r.key: r.verdict for r in recorded}
    assert verdicts == mine
    assert proc.returncode == 0, proc.stdout[-3000:]
    pin = yaml.safe_load((ROOT / "matrix.yaml").read_text())["targets"]["cpu"]["pins"]["torch"]
    assert {release_of(r.torch) for r in recorded} == {pin}
    assert (tmp_path / "reports" / "cpu.md").exists()  # rendered outside the container, exactly as a host run


def test_options_reach_the_container_whole(tmp_path):
    """--warm and --no-ladder used to be dropped on the way into the container; now the whole request goes in."""
    proc = reprokit(
        "run",
        "--target",
        "cpu",
        "--container",
        "--base-image",
        BASE,
        "--wheelhouse",
        WHEELHOUSE,
        "--case",
        "custom-op-unregistered-gemm",
        "--warm",
        "--no-ladder",
        "--out",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    from reprokit.store.store import Store

    (header,) = Store(tmp_path / "results").load().runs.values()
    assert header.interpreter.startswith("warm") and header.selection == ["custom-op-unregistered-gemm"]


@pytest.mark.heavy
@pytest.mark.timeout(1800)  # the image: about 5 minutes on 2 cores; the two cases: about 2
def test_the_cuda_image_builds_here_and_runs_on_a_machine_without_a_gpu(tmp_path):
    if not CUDA_WHEELHOUSE:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must provide REPROKIT_E2E_CUDA_WHEELHOUSE (.ci/run downloads it)")
        pytest.skip("no CUDA wheelhouse here (.ci/run downloads one)")
    image = ["--base-image", BASE, "--base-python", "3.11", "--wheelhouse", CUDA_WHEELHOUSE]
    built = reprokit("image", "--target", "h100", *image)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-2000:]
    try:
        _runs_on_a_machine_without_a_gpu(built, image, tmp_path)
    finally:  # about 10 GB that only this test uses: removed once it is done with it
        import docker

        docker.from_env().images.remove(built.stdout.strip().splitlines()[-1], force=True)


def _runs_on_a_machine_without_a_gpu(built, image, tmp_path):
    assert "cuda 13.0 devices visible 0" in built.stdout or "up to date" in built.stdout  # the build's self-test
    proc = reprokit(
        "run",
        "--target",
        "h100",
        "--container",
        "--force",
        *image,
        "--jobs",
        "2",
        "--no-ladder",
        "--case",
        "custom-op-unregistered-gemm",
        "--case",
        "partition-p2p-access",
        "--out",
        str(tmp_path),
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    records = {r.key: r for r in stored(tmp_path, "h100")}
    assert records["partition-p2p-access/repro@float32"].why == "needs 2 CUDA devices, found 0"
    ran = records["custom-op-unregistered-gemm/repro@float32"]
    assert ran.verdict == "reproduces" and ran.device == "cpu" and ran.torch == "2.13.0+cu130"
    from reprokit.store.store import Store

    (header,) = Store(tmp_path / "results").load("h100").runs.values()
    assert header.environment["cuda"] == "13.0" and header.environment["device_count"] == 0
    assert "summary: h100: 5 runs recorded" in proc.stdout
