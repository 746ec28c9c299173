"""`reprokit triage --issue-json FILE --here`: an issue's own script, run contained from the triage cache on this
torch, decides what to say on the issue. The issues are written here in gh's JSON shape, each with a small script of
ours; torch's own behaviour decides every standing."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from reprokit.run.execute import Observation
from reprokit.tracker import issue_json, triage_standing

ROOT = Path(__file__).resolve().parents[1]

MATMUL_HEAD = """import torch


@torch.compile(backend="eager")
def f(a, b):
    return a @ b
"""
MATMUL_CALL = "f(torch.ones(2, 3), torch.ones(4, 5))\n"
JOINED = MATMUL_HEAD.rstrip("\n") + "\n\n" + MATMUL_CALL  # the two blocks as triage runs them
FAKE_CALL = """Traceback (most recent call last):
  File "/home/someone/bug.py", line 9, in <module>
    f(torch.ones(2, 8), torch.ones(9, 5))
torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call

from user code:
   File "/home/someone/bug.py", line 6, in f
"""
PASSES = """import torch


def f(x):
    return (x + 1).relu().sum()


print(torch.compile(f, backend="eager")(torch.arange(6.0)))
"""
VIEW = """import torch

print(torch.ones(2).view(3))
"""
BF16_LOGSUMEXP = """import torch

torch.manual_seed(0)


def f(x):
    return torch.logsumexp(x, -1)


x = torch.randn(64, 64, dtype=torch.bfloat16)
actual = torch.compile(f, backend="aot_eager_decomp_partition")(x)
torch.testing.assert_close(actual, f(x), rtol=0, atol=0)
"""


def issue(number, blocks, error, state="OPEN", reason="", comments=()):
    """gh issue view's JSON: the description holds the script's Python blocks, the error block and collect_env."""
    body = "### 🐛 Describe the bug\n\nIt fails.\n\n" + "".join(f"```python\n{b}```\n\nand then\n\n" for b in blocks)
    body += f"### Error logs\n\n```\n{error}\n```\n\n### Versions\n\nPyTorch version: 2.6.0+cpu\nIs debug build: False\n"
    return {"number": number, "title": "a bug", "body": body, "state": state, "stateReason": reason,
            "closedAt": "2025-03-01T00:00:00Z" if state == "CLOSED" else None, "labels": [{"name": "oncall: pt2"}],
            "comments": [{"author": {"login": login}, "authorAssociation": assoc, "body": text}
                         for login, assoc, text in comments],
            "url": f"https://github.com/pytorch/pytorch/issues/{number}"}


def triage(tmp_path, data):
    (tmp_path / "repo").mkdir(exist_ok=True)
    (tmp_path / "repo" / "matrix.yaml").write_bytes((ROOT / "matrix.yaml").read_bytes())
    path = tmp_path / f"issue-{data['number']}.json"
    path.write_text(json.dumps(data))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools"), "REPROKIT_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "reprokit", "--root", str(tmp_path / "repo"), "triage",
                           "--issue-json", str(path), "--here"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def nowhere_but_here(tmp_path, script):
    """The script is in no file of the repository (nor of the scratch repository), and the cache kept nothing."""
    cache = tmp_path / "cache" / "triage"
    assert not cache.exists() or not list(cache.rglob("*.py"))
    for base in (tmp_path / "repo", ROOT):
        for path in base.rglob("*"):
            if {".git", ".nox", "tests", "__pycache__"} & set(path.relative_to(base).parts) or not path.is_file():
                continue
            assert script not in path.read_text(errors="replace"), path


def draft_of(tmp_path, number):
    return (tmp_path / "repo" / "reports" / "upstream" / f"issue-{number}-comment.md").read_text()


@pytest.mark.e2e
def test_closed_and_still_failing_the_same_way_still_reproduces(tmp_path):
    # the issue splits its script in two blocks; the sizes in its traceback differ from the script's
    out = triage(tmp_path, issue(910001, [MATMUL_HEAD, MATMUL_CALL], FAKE_CALL, "CLOSED", "COMPLETED"))
    first = out.splitlines()[0]
    assert first.startswith("still reproduces on torch ") and "TorchRuntimeError" in first, out
    draft = draft_of(tmp_path, 910001)
    assert draft.startswith("_(Your own words here") and draft.splitlines()[1] == ""
    assert "the issue is closed (completed)" in draft and 'File "repro.py", line 8' in draft
    for ours in ("probe.py", "/tmp/reprokit-", str(tmp_path), "site-packages/torch/_dynamo", "<frozen runpy>"):
        assert ours not in draft.replace(".../site-packages/torch/_dynamo", ""), ours
    nowhere_but_here(tmp_path, JOINED)


def test_closed_as_not_planned_with_a_members_expected_is_not_posted_and_runs_nothing(tmp_path):
    data = issue(910002, [MATMUL_HEAD + MATMUL_CALL], FAKE_CALL, "CLOSED", "NOT_PLANNED",
                 [("someone", "NONE", "same here"), ("maintainer", "MEMBER", "This is expected: the shapes differ.")])
    out = triage(tmp_path, data)
    assert out.startswith("not posted: closed as not planned (nothing was run)"), out
    assert not (tmp_path / "repo" / "reports").exists()
    data["stateReason"] = "COMPLETED"  # the maintainer's word alone also decides
    assert triage(tmp_path, data).startswith('not posted: a maintainer (maintainer, member) said: "…This is expected')


@pytest.mark.e2e
def test_open_and_passing_no_longer_reproduces(tmp_path):
    out = triage(tmp_path, issue(910003, [PASSES], "torch._dynamo.exc.Unsupported: call_method relu"))
    assert out.startswith("no longer reproduces on any release run ("), out
    assert "the issue is open" in draft_of(tmp_path, 910003)
    nowhere_but_here(tmp_path, PASSES)


@pytest.mark.e2e
def test_another_exception_than_the_reported_one_fails_differently(tmp_path):
    out = triage(tmp_path, issue(910004, [VIEW], "Traceback (most recent call last):\n  File \"x.py\", line 3\n"
                                                  "IndexError: index 3 is out of bounds for dimension 0"))
    first = out.splitlines()[0]
    assert first.startswith("fails differently (reported IndexError: index 3 is out of bounds") and \
        "observed on torch" in first and "RuntimeError: shape '[3]' is invalid" in first, out
    assert "says nothing either way" in draft_of(tmp_path, 910004)


@pytest.mark.e2e
@pytest.mark.heavy  # four contained runs of a bf16 script: a minute
def test_a_bf16_mismatch_within_the_fp64_reference_is_not_a_wrong_result(tmp_path):
    # logsumexp decomposed (aot_eager_decomp_partition) keeps bf16 intermediates wider than eager does: the two differ,
    # and against an fp64 reference the compiled one is the closer
    out = triage(tmp_path, issue(910005, [BF16_LOGSUMEXP], "Traceback (most recent call last):\n  File \"x.py\"\n"
                                                            "AssertionError: Tensor-likes are not equal!"))
    first = out.splitlines()[0]
    assert first.startswith("not posted: not a wrong result against an fp64 reference"), out
    compiled, eager = map(float, re.search(r"compiled RMS error ([\d.e-]+), eager's ([\d.e-]+)", first).groups())
    assert 0 < compiled <= 2 * eager
    assert "AssertionError: Tensor-likes are not equal!" in out.splitlines()[1]  # the plain run did fail
    nowhere_but_here(tmp_path, BF16_LOGSUMEXP)


def test_the_issue_text_gives_the_script_the_failure_and_the_version():
    data = issue(1, [MATMUL_HEAD, MATMUL_CALL, "import torch\nprint(torch.__version__)\n"], FAKE_CALL)
    parsed = issue_json.parse(data)
    assert issue_json.reproducer(parsed) == JOINED  # joined; the next block is another script
    reported = issue_json.reported_failure(parsed)
    assert reported.exception == "torch._dynamo.exc.TorchRuntimeError"
    assert reported.message == "RuntimeError when making fake tensor call"
    assert issue_json.reported_version(parsed) == "2.6.0+cpu"
    assert issue_json.closure(parsed) is None
    with pytest.raises(issue_json.InputError):
        issue_json.parse({**data, "state": "MERGED"})


def _ran(exception=None, message="", status="fail", log=""):
    obs = Observation(status=status, exit_code=0 if status == "pass" else 1, signal=None, seconds=1.0,
                      exception=exception, message=message)
    return triage_standing.Ran("2.14.1", obs, "", log)


def test_what_a_run_cannot_say_is_not_posted():
    parsed = issue_json.parse(issue(3, [PASSES], "no traceback here"))
    # no exception named and a script that checks nothing: exiting 0 says nothing about the bug
    said = triage_standing.standing(parsed, None, [_ran(status="pass")], PASSES).line()
    assert said.startswith("not posted: the issue names no exception and its script checks nothing")
    assert triage_standing.standing(parsed, None, [_ran(status="pass")], PASSES + "assert y == 1\n").line() \
        .startswith("no longer reproduces")
    gone = _ran("torch._dynamo.exc.Unsupported", "Observed exception",
                log="AttributeError: module 'torch._dynamo' has no attribute 'set_fullgraph'")
    assert triage_standing.standing(parsed, None, [gone], PASSES).line().startswith(
        "not posted: the script uses what torch 2.14.1 does not have (module 'torch._dynamo' has no attribute")
    cuda = _ran("RuntimeError", "Found no NVIDIA driver on your system.")
    assert triage_standing.standing(parsed, None, [cuda], PASSES).line() == \
        "not posted: the script needs CUDA, which torch 2.14.1 here lacks"
    hint = _ran("torch._dynamo.exc.UserError", "Constraints violated (L['x'].size()[0])! ... use maybe_mark_dynamic")
    reported = issue_json.Reported("torch._dynamo.exc.UserError", "Constraints violated (L['x'].size()[0])!")
    assert triage_standing.standing(parsed, reported, [hint], PASSES).line().startswith(
        "not posted: documented behaviour: torch 2.14.1's own message says 'maybe_mark_dynamic'")
