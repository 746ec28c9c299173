"""Real cases from the corpus, run by the real runner against the installed torch."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import stored

ROOT = Path(__file__).resolve().parents[1]
# One worker runs the module (`--dist loadgroup`): its one corpus run is a module fixture, made once, not per worker.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("real-cases")]


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(ROOT),
            "run",
            "--host",
            "--target",
            "cpu",
            "--jobs",
            "2",
            "--case",
            "custom-op-unregistered-gemm",
            "--out",
            str(out),
        ],
        env=env,
        check=False,
    )
    return {r.key: r.model_dump(mode="json") for r in stored(out)}


def test_unregistered_custom_op_reproduces_in_dynamo(records):
    rec = records["custom-op-unregistered-gemm/repro@float32"]
    assert rec["verdict"] == "reproduces"
    assert rec["exception"] == "torch._dynamo.exc.Unsupported"
    assert "fake" in rec["message"]
    assert rec["stage"] == "dynamo"


def test_registering_a_fake_kernel_fixes_it(records):
    rec = records["custom-op-unregistered-gemm/fixed@float32"]
    assert rec["verdict"] == "fix-works"
    assert rec["dynamo"]["graph_breaks"] == 0 and rec["dynamo"]["unique_graphs"] == 1


def test_the_articles_registration_call_does_not_exist(records):
    rec = records["custom-op-unregistered-gemm/article_fix@float32"]
    assert rec["verdict"] == "fix-broken" and rec["exception"] == "AttributeError"


def test_verdicts_match_the_committed_expected_state(records):
    from reprokit.store import expected as expected_state

    expected = expected_state.load(ROOT / "expected" / "cpu.yaml")
    for key, rec in records.items():
        assert expected[key] == rec["verdict"], key
