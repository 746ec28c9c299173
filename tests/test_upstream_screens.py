"""`reprokit upstream` as a maintainer would have it: it refuses a report that an open issue already makes (the
duplicate search it prints is run, here read offline from what `gh search issues` printed), screens a report whose own
workaround is the ordinary API use, and keeps this machine's name out of every draft."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from reprokit.tracker.judging import not_a_bug
from reprokit.tracker.text.user_paths import as_user_sees

ROOT = Path(__file__).resolve().parents[1]


def test_a_repro_compiling_a_bound_forward_whose_workaround_compiles_the_module_is_usage():
    case = ROOT / "cases" / "ddp-compiled-backward-lambda"
    screened = not_a_bug.ordinary_use((case / "repro.py").read_text(), (case / "fixed.py").read_text())
    assert screened.screen == "invalid usage" and "bound method model.forward" in screened.reason
    assert "torch.compile(model)" in screened.reason
    # a fixed.py that compiles something else is no such workaround
    assert not_a_bug.ordinary_use((case / "repro.py").read_text(), "torch.compile(other)(x)\n") is None


def test_the_machines_name_never_reaches_a_draft():
    host = socket.gethostname()
    assert host not in as_user_sees(f"E1203 {host} torch/_inductor/graph.py:9] boom\n/tmp/{host}-x/y.py")


@pytest.mark.e2e
def test_a_report_an_open_issue_already_makes_is_refused_naming_it(tmp_path):
    case_id = "type-inference-encoder-fastpath-stride"
    shutil.copy(ROOT / "matrix.yaml", tmp_path / "matrix.yaml")
    shutil.copytree(ROOT / "cases" / case_id, tmp_path / "cases" / case_id)
    shutil.copytree(ROOT / "results", tmp_path / "results")
    searched = tmp_path / "search.json"
    searched.write_text(
        json.dumps(
            [
                {"number": 170001, "title": "stride assert fixed", "state": "CLOSED", "isPullRequest": True},
                {
                    "number": 170002,
                    "title": "compiled TransformerEncoderLayer fast path fails",
                    "state": "OPEN",
                    "isPullRequest": False,
                    "body": "AssertionError: expected size 2==2, stride 1024==64 at dim=0 in "
                    "torch.ops.aten._transformer_encoder_layer_fwd",
                },
            ]
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(tmp_path),
            "upstream",
            case_id,
            "--search-json",
            str(searched),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines()[-1:] == [
        f"reprokit: cases/{case_id}: not filed: an open issue already reports this failure: #170002 (compiled "
        "TransformerEncoderLayer fast path fails) (found by the duplicate search the report lists); comment there "
        "instead; --force writes the report anyway"
    ], proc.stderr
    assert not (tmp_path / "reports" / "upstream" / f"{case_id}.md").exists()
