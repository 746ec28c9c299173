"""The pieces of a bug report that need no run: the standalone script, tracebacks without the runner's frames and
where a failure was raised, what a script's code says, the one-line release history, the title."""

import json

import pytest
from reprokit.contrib.script_code import facts, torch_calls
from reprokit.model.schema import InputError
from reprokit.run.execute import Observation
from reprokit.tracker.drafting.issue_fields import Failure, title
from reprokit.tracker.issue import issue_search
from reprokit.tracker.text.release_summary import ReleaseHistory
from reprokit.tracker.text.standalone import standalone
from reprokit.tracker.text.traceback_text import raised_at, without_harness
from reprokit.tracker.text.user_paths import as_user_sees

SCRIPT = '''"""A repro.

Run: python repro.py   (REPRO_DEVICE=cuda REPRO_DTYPE=bfloat16 to change device / dtype)
"""
import os

import torch

device = os.environ.get("REPRO_DEVICE", "cpu")
dtype = getattr(torch, os.environ.get("REPRO_DTYPE", "float32"))
other = os.getenv("REPRO_DEVICE") + os.environ["REPRO_DTYPE"]
'''


def test_the_standalone_script_has_constants_and_no_word_of_the_corpus_variables():
    out = standalone(SCRIPT, "cuda", "bfloat16")
    assert "REPRO_" not in out and "import os" not in out
    assert 'device = "cuda"' in out and "dtype = torch.bfloat16" in out and 'other = "cuda" + "bfloat16"' in out
    assert out.startswith('"""A repro.\n') and "Run: python repro.py\n" in out


def test_a_read_that_cannot_become_a_constant_is_refused():
    with pytest.raises(InputError, match="cannot be replaced"):
        standalone('import os\nd = dict(os.environ)["REPRO_DEVICE"]\n', "cpu", "float32")
    keeps_os = standalone('import os\nd = os.environ.get("REPRO_DEVICE", "cpu")\np = os.getcwd()\n', "cpu", "float32")
    assert keeps_os.startswith("import os\n")


HARNESSED = """Traceback (most recent call last):
  File "/x/tools/reprokit/child/probe.py", line 176, in main
    runpy.run_path(script, run_name="__main__")
  File "<frozen runpy>", line 291, in run_path
  File "<frozen runpy>", line 98, in _run_module_code
  File "/tmp/s/repro.py", line 4, in <module>
    torch.ones(2, 3) @ torch.ones(2, 3)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)
"""


def test_the_error_log_is_what_python_repro_py_prints():
    assert without_harness(HARNESSED) == (
        'Traceback (most recent call last):\n  File "/tmp/s/repro.py", line 4, in '
        "<module>\n    torch.ones(2, 3) @ torch.ones(2, 3)\nRuntimeError: mat1 and "
        "mat2 shapes cannot be multiplied (2x3 and 2x3)\n"
    )
    ranked = "".join(f"[rank0]: {line}\n" for line in HARNESSED.splitlines())
    assert "probe.py" not in without_harness(ranked) and "[rank0]:     torch.ones" in without_harness(ranked)


def test_where_a_failure_was_raised():
    cxx = raised_at(without_harness(HARNESSED), "/tmp/s/repro.py")
    assert cxx.in_own_code and not cxx.raised_by_script("RuntimeError")  # torch's C++ raised it on the script's line
    assert raised_at(
        HARNESSED.replace("torch.ones(2, 3) @ torch.ones(2, 3)", "raise RuntimeError('x')"), "/tmp/s/repro.py"
    ).raised_by_script("RuntimeError")
    deep = HARNESSED.replace(
        "RuntimeError:",
        '  File "/v/site-packages/torch/_inductor/x.py", line 9, in f\n    raise RuntimeError\nRuntimeError:',
    )
    assert not raised_at(deep, "/tmp/s/repro.py").in_own_code
    assert raised_at(deep, "/tmp/s/repro.py").where() == "x.py line 9, in f"


def test_what_the_code_says_not_the_comments():
    code = facts('"""Compiled with torch.compile on cuda."""\n# torch.compile(f)\nimport torch\nprint(torch.ones(1))\n')
    assert not code.compiles and code.requires()["devices"] == ["cpu"]
    assert facts("import torch\n@torch.compile\ndef f(x):\n    return x\n").compiles
    assert facts("from torch import compile\ng = compile(len)\n").compiles
    assert torch_calls(
        "import torch.nn.functional as F\nfrom torch import nn\nF.gelu(nn.Linear(2, 2)(x))\ntorch.manual_seed(0)\n"
    ) == ["torch.nn.functional.gelu", "torch.nn.Linear"]


@pytest.mark.parametrize(
    ("verdicts", "line"),
    [
        (["reproduces"] * 3, "fails on every recorded release 2.8.0..2.10.0"),
        (["does-not-reproduce", "does-not-reproduce", "reproduces"], "regressed in 2.10.0, 2.9.1 works"),
        (["reproduces", "does-not-reproduce", "does-not-reproduce"], "fixed in 2.9.1, 2.8.0 fails"),
        (
            ["fails-differently", "reproduces", "reproduces"],
            "fails on 2.9.1..2.10.0 (2 of 3 recorded releases; the others: fails-differently)",
        ),
    ],
)
def test_the_release_history_in_one_line(verdicts, line):
    history = ReleaseHistory.of(
        [(f"{rel}+cpu", v) for rel, v in zip(["2.8.0", "2.9.1", "2.10.0"], verdicts, strict=True)]
    )
    assert history.line().startswith(line)
    nightly = ReleaseHistory.of([("2.8.0+cpu", "reproduces"), ("2.11.0.dev20260101+cpu", "does-not-reproduce")])
    assert nightly.line() == "fails on every recorded release 2.8.0..2.8.0; nightly 2.11.0.dev20260101: works"


def test_the_title_names_the_symptom_and_the_op():
    obs = Observation(
        status="fail",
        exit_code=1,
        signal=None,
        seconds=1.0,
        exception="AssertionError",
        message="expected size 2==2, stride 1024==64 at dim=0; expected size 16==16\n"
        "Error in op: torch.ops.aten._transformer_encoder_layer_fwd.default",
    )
    failure = Failure(obs, own_check=False, component="inductor", compiles=True, exports=False)
    assert title(failure) == (
        "torch.compile (inductor): AssertionError: expected size 2==2, stride 1024==64 at dim=0 "
        "in torch.ops.aten._transformer_encoder_layer_fwd"
    )


def test_the_history_per_error_and_a_regression():
    history = ReleaseHistory.of(
        [("2.8.0", "does-not-reproduce"), ("2.9.1", "reproduces"), ("2.10.0", "reproduces"), ("2.11.0", "reproduces")],
        {
            "2.9.1": "UserError: Constraints violated",
            "2.10.0": "UserError: Constraints violated",
            "2.11.0": "InternalTorchDynamoError: PendingUnbackedSymbolNotFound",
        },
    )
    assert history.by_error() == (
        "2.8.0: works; 2.9.1..2.10.0: UserError: Constraints violated; "
        "2.11.0: InternalTorchDynamoError: PendingUnbackedSymbolNotFound"
    )
    assert history.regression() == ("2.8.0", "2.9.1")
    fixed = ReleaseHistory.of([("2.8.0", "reproduces"), ("2.9.1", "does-not-reproduce")], {"2.8.0": "UserError: x"})
    assert fixed.regression() is None and fixed.by_error() == "2.8.0: UserError: x; 2.9.1: works"


def test_a_log_holds_no_path_of_ours():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/work/main/tools/reprokit/child/probe.py", line 227, in main\n'
        '    runpy.run_path(script, run_name="__main__")\n'
        '  File "<frozen runpy>", line 291, in run_path\n'
        '  File "/tmp/reprokit-upstream-x1y2/script/repro.py", line 8, in <module>\n'
        "    f(x)\n"
        '  File "/root/.cache/reprokit/envs/torch-2.15.0/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py",'
        " line 1, in _fn\n"
        '  File "/home/ci/checkout/cases/some-case/repro.py", line 3, in f\n'
        "RuntimeError: wrote /root/.cache/reprokit/triage/12/out.txt and /tmp/reprokit-abc/x.log\n"
    )
    out = as_user_sees(log, "/tmp/reprokit-upstream-x1y2/script/repro.py")
    assert 'File "repro.py", line 8, in <module>' in out and 'File "repro.py", line 3, in f' in out
    assert 'File ".../site-packages/torch/_dynamo/eval_frame.py"' in out
    assert "wrote out.txt and x.log" in out
    for ours in ("probe.py", "runpy", "/tmp/", ".cache", "/work/", "/home/", "cases/"):
        assert ours not in out, ours


def test_related_issues_are_listed_from_the_search(tmp_path):
    found = tmp_path / "search.json"
    found.write_text(
        json.dumps(
            [
                {
                    "number": 151234,
                    "title": "[inductor] stride assert in _transformer_encoder_layer_fwd",
                    "state": "OPEN",
                    "url": "https://github.com/pytorch/pytorch/issues/151234",
                    "isPullRequest": False,
                },
                {"number": 151999, "title": "Fix <script> meta stride", "state": "MERGED", "isPullRequest": True},
                {"number": "x", "title": "not an issue"},
            ]
        )
    )
    lines = issue_search.related(["AssertionError expected size stride", "_transformer_encoder_layer_fwd"], found)
    assert lines[0].startswith("Related issues and pull requests (2 found by `gh search issues -- 'AssertionError")
    assert "- #151999 (merged pull request): Fix \\<script\\> meta stride" in lines
    assert "- #151234 (open issue): \\[inductor\\] stride assert in \\_transformer\\_encoder\\_layer\\_fwd" in lines
    assert (
        issue_search.failing_op("failed on aten._transformer_encoder_layer_fwd.default")
        == "_transformer_encoder_layer_fwd"
    )
