"""Importing an upstream issue with `reprokit new-case`: the oracle, devices, launcher, title and the issue's facts
come from the flags and from one run of the script, so the case needs no editing by hand. Real processes; the
scripts import no torch, so each test takes about a second."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from reprokit.contrib.first_run import exception_line, message_regex
from reprokit.contrib.new_case import infer_requires

ROOT = Path(__file__).resolve().parents[1]
ISSUE = "https://github.com/pytorch/pytorch/issues/12345"
FACTS = ["--link", ISSUE, "--reported-on", "2.4.0", "--issue-state", "open", "--area", "inductor-cpu"]


def reprokit(root, *args):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools")}
    return subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "repo" / "cases").mkdir(parents=True)
    (tmp_path / "repo" / "matrix.yaml").write_bytes((ROOT / "matrix.yaml").read_bytes())
    return tmp_path / "repo"


def write(tmp_path, text):
    path = tmp_path / "from_issue.py"
    path.write_text(text)
    return path


def case_yaml(repo, cid="from-issue"):
    return yaml.safe_load((repo / "cases" / cid / "case.yaml").read_text())


RAISES = '''"""Inductor codegen fails for a strided max (from the issue)."""
class CodegenFailed(RuntimeError):
    pass
try:
    raise KeyError("x")
except KeyError as err:
    raise CodegenFailed("C++ compile error in kernel 3 (see 'output')") from err
'''


def test_the_observed_failure_proposes_the_oracle_and_the_issue_facts_are_recorded(repo, tmp_path):
    made = reprokit(repo, "new-case", "from-issue", "--from", str(write(tmp_path, RAISES)), *FACTS)
    assert made.returncode == 0, made.stderr
    assert ": reproduces (" in made.stdout and "CodegenFailed)" in made.stdout  # judged as run judges it
    data = case_yaml(repo)
    assert data["expect"]["repro"] == {
        "kind": "raises",
        "exception": "CodegenFailed",
        "match": r"C\+\+\ compile\ error\ in\ kernel",
    }
    assert data["title"] == "Inductor codegen fails for a strided max (from the issue)."
    assert data["requires"]["devices"] == ["cpu"]
    assert {k: data[k] for k in ("source", "reported_on", "issue_state", "area")} == {
        "source": "upstream",
        "reported_on": "2.4.0",
        "issue_state": "open",
        "area": "inductor-cpu",
    }
    assert data["issue_checked"]  # the date the state was read


def test_an_assertion_is_a_wrong_result_and_a_passing_script_says_it_does_not_reproduce(repo, tmp_path):
    made = reprokit(
        repo, "new-case", "wrong", "--from", str(write(tmp_path, "assert 1 == 2, 'compiled != eager'\n")), *FACTS
    )
    assert made.returncode == 0, made.stderr
    assert case_yaml(repo, "wrong")["expect"]["repro"] == {"kind": "wrong-result"}
    made = reprokit(
        repo, "new-case", "passes", "--from", str(write(tmp_path, "print('ok')\n")), "--wrong-result", *FACTS
    )
    assert made.returncode == 0, made.stderr
    assert ": does-not-reproduce (ran and exited 0)" in made.stdout
    assert case_yaml(repo, "passes")["expect"]["repro"] == {"kind": "wrong-result"}  # the flag wins


def test_an_upstream_case_without_the_issue_facts_records_them_as_unknown(repo, tmp_path):
    """Many issues give no version: the case is made, and says so, rather than refused or guessed."""
    made = reprokit(repo, "new-case", "from-issue", "--from", str(write(tmp_path, RAISES)), "--link", ISSUE)
    assert made.returncode == 0, made.stderr
    data = case_yaml(repo)
    assert (data["reported_on"], data["issue_state"]) == ("unknown", "unknown") and "issue_checked" not in data


def test_fixed_script_devices_and_torch_range_need_no_hand_edit(repo, tmp_path):
    fixed = tmp_path / "fixed.py"
    fixed.write_text("print('fixed')\n")
    made = reprokit(
        repo,
        "new-case",
        "gpu-only",
        "--from",
        str(write(tmp_path, "x = 'cuda'\n")),
        "--no-run",
        "--wrong-result",
        "--fixed",
        str(fixed),
        "--requires-torch",
        ">=2.4",
        *FACTS,
    )
    assert made.returncode == 0, made.stderr
    data = case_yaml(repo, "gpu-only")
    assert data["requires"] == {"devices": ["cuda"], "torch": ">=2.4"}
    assert (repo / "cases" / "gpu-only" / "fixed.py").read_text() == "print('fixed')\n"


def test_launcher_and_ranks_are_read_from_a_torchrun_script():
    text = (
        'import os\nif "RANK" not in os.environ:\n    run(["--nproc-per-node=4", __file__])\nos.environ["REPRO_DEVICE"]'
    )
    assert infer_requires(text) == {"devices": ["cpu", "cuda"], "world_size": 4, "launcher": "torchrun"}


def test_the_exception_line_is_the_last_traceback_s_and_the_match_is_a_stable_prefix():
    stderr = (
        "Traceback (most recent call last):\n  File 'a.py', line 1\nKeyError: 'x'\n\nThe above exception was the "
        "direct cause of the following exception:\n\nTraceback (most recent call last):\n  File 'a.py', line 3\n"
        "    raise Unsupported\ntorch._dynamo.exc.Unsupported: Data-dependent branching\n  Explanation: ...\n"
    )
    assert exception_line(stderr) == ("torch._dynamo.exc.Unsupported", "Data-dependent branching")
    assert message_regex("Could not guard on data-dependent expression Eq(u0, 1)") == re_escaped(
        "Could not guard on data-dependent expression Eq"
    )
    assert message_regex("u0 (x)") is None  # too short to be stable


def re_escaped(text):
    import re

    return re.escape(text)


def test_match_alone_accepts_any_exception_class_whose_message_matches():
    from reprokit.contrib.new_case import oracle_from_flags

    assert oracle_from_flags(None, "C\\+\\+ compile error", None, None, False) == {
        "kind": "raises",
        "match": "C\\+\\+ compile error",
    }


CPU_SCRIPT_TALKING_OF_CUDA = '''"""Reported on CUDA ("cuda:0", an A100); this repro runs on the CPU."""
# The issue used x.cuda() and device="cuda"; the failure does not depend on the device.
import torch

x = torch.ones(3)  # not .cuda(): "cuda" only in this comment
assert x.device.type == "cpu", "torch put a CPU tensor elsewhere"
'''


def test_a_comment_or_docstring_saying_cuda_does_not_make_a_cpu_script_a_cuda_case(repo, tmp_path):
    made = reprokit(
        repo,
        "new-case",
        "talks-of-cuda",
        "--from",
        str(write(tmp_path, CPU_SCRIPT_TALKING_OF_CUDA)),
        "--no-run",
        "--wrong-result",
        *FACTS,
    )
    assert made.returncode == 0, made.stderr
    assert case_yaml(repo, "talks-of-cuda")["requires"]["devices"] == ["cpu"]
    # the code itself decides: a hard-coded device string or a .cuda() call makes it CUDA-only
    assert infer_requires('import torch\nx = torch.ones(3, device="cuda")\n')["devices"] == ["cuda"]
    assert infer_requires("import torch\nx = torch.ones(3).cuda()\n")["devices"] == ["cuda"]
    assert infer_requires('"""REPRO_DEVICE=cuda to change"""\nimport torch\n')["devices"] == ["cpu"]


def test_dtypes_and_ranks_come_from_code_tokens():
    text = (
        'import torch\n# torch.float16 in a comment, "--nproc-per-node=8" too\n'
        "x = torch.ones(2, dtype=torch.bfloat16)\n"
    )
    assert infer_requires(text) == {"devices": ["cpu"], "dtypes": ["bfloat16"]}
    ranked = 'import os, subprocess\nsubprocess.run(["torchrun", "--nproc-per-node=3", __file__])\n'
    assert infer_requires(ranked) == {"devices": ["cpu"], "world_size": 3, "launcher": "torchrun"}
