"""`reprokit triage --issue-json FILE --here`: an issue's own script, run contained from the triage cache on this
torch, decides what to say on the issue. The issues are written here in gh's JSON shape, each with a small script of
ours; torch's own behaviour decides every standing."""

import functools
import http.server
import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from reprokit.run.execute import Observation
from reprokit.tracker import triage_request
from reprokit.tracker.issue import issue_json, issue_reported, issue_script, release_dates, thread_reading
from reprokit.tracker.issue.exit_evidence import ExitEvidence
from reprokit.tracker.judging import triage_observe, triage_runs, triage_standing

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
    body += (
        f"### Error logs\n\n```\n{error}\n```\n\n### Versions\n\nPyTorch version: 2.6.0+cpu\nIs debug build: False\n"
    )
    return {
        "number": number,
        "title": "a bug",
        "body": body,
        "state": state,
        "stateReason": reason,
        "closedAt": "2025-03-01T00:00:00Z" if state == "CLOSED" else None,
        "labels": [{"name": "oncall: pt2"}],
        "comments": [
            {"author": {"login": login}, "authorAssociation": assoc, "body": text} for login, assoc, text in comments
        ],
        "url": f"https://github.com/pytorch/pytorch/issues/{number}",
    }


def triage(tmp_path, data, releases=("--here",), env=None):
    (tmp_path / "repo").mkdir(exist_ok=True)
    (tmp_path / "repo" / "matrix.yaml").write_bytes((ROOT / "matrix.yaml").read_bytes())
    path = tmp_path / f"issue-{data['number']}.json"
    path.write_text(json.dumps(data))
    env = {**(env or os.environ), "PYTHONPATH": str(ROOT / "tools"), "REPROKIT_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "--root",
            str(tmp_path / "repo"),
            "triage",
            "--issue-json",
            str(path),
            *releases,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
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
    data = issue(
        910002,
        [MATMUL_HEAD + MATMUL_CALL],
        FAKE_CALL,
        "CLOSED",
        "NOT_PLANNED",
        [("someone", "NONE", "same here"), ("maintainer", "MEMBER", "This is expected: the shapes differ.")],
    )
    out = triage(tmp_path, data)
    assert out.startswith("not posted: closed as not planned on 2025-03-01 (nothing was run)"), out
    assert not (tmp_path / "repo" / "reports").exists()
    data["stateReason"] = "COMPLETED"  # the maintainer's word alone also decides, naming the comment
    data["comments"][1]["createdAt"] = "2025-02-20T10:00:00Z"
    assert triage(tmp_path, data).startswith(
        'not posted: a maintainer (maintainer, 2025-02-20) said: "This is expected: the shapes differ."'
    )


@pytest.mark.e2e
def test_an_open_issue_whose_script_now_exits_0_gets_a_question_where_its_release_was_not_run(tmp_path):
    """--here: the reported 2.6.0 is not run; the script leaves torch's exception (the issue reports one) to end it,
    so its exit 0 on this torch is evidence, asked as a question (never "fixed": the baseline was not seen)."""
    out = triage(tmp_path, issue(910003, [PASSES], "torch._dynamo.exc.Unsupported: call_method relu"))
    assert out.startswith(
        "does not reproduce on torch 2.14.1: the script exits 0 where torch's exception would end "
        "it (the reported 2.6.0 was not run here)"
    ), out
    draft = draft_of(tmp_path, 910003)
    assert "runs without error on torch 2.14.1 (the issue reports torch 2.6.0, which was not run here)" in draft
    assert "can the issue be closed?" in draft and "no longer" not in draft.lower()
    nowhere_but_here(tmp_path, PASSES)


@pytest.mark.e2e
def test_a_script_that_only_prints_or_catches_says_nothing_by_exiting_0(tmp_path):
    out = triage(tmp_path, issue(910013, [PASSES], "it prints the wrong values"))
    assert out.startswith(
        "not posted: the script exits 0 on torch 2.14.1 (the reported 2.6.0 was not run here), but "
        "the script only prints its results"
    ), out
    catching = PASSES.replace("print(torch.compile", "try:\n    print(torch.compile").replace(
        "(torch.arange(6.0)))\n", "(torch.arange(6.0)))\nexcept Exception as e:\n    print('failed', e)\n"
    )
    out = triage(tmp_path, issue(910014, [catching], "torch._dynamo.exc.Unsupported: call_method relu"))
    assert (
        out.startswith("not posted: the script exits 0 on torch 2.14.1")
        and "catches the compiled call's error" in out.splitlines()[0]
    ), out
    assert not (tmp_path / "repo" / "reports").exists()


@pytest.fixture
def local_index(tmp_path):
    """A package index of ours on 127.0.0.1 that has no torch at all: every page is a 404."""
    (tmp_path / "index").mkdir()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path / "index"))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()


def a_closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.e2e
@pytest.mark.parametrize("index", ["down", "without torch"])
def test_a_reported_release_that_cannot_be_installed_is_stood_in_for_only_when_it_does_not_exist(
    tmp_path, local_index, index
):
    """The issue reports 2.6.0, and the index pip's configuration names is ours: down, uv cannot install a release
    that may well exist (a full disk or a lost network say the same), so nothing stands in for it and the standing
    says so; an index without the release, the nearest release offered stands in and the standing names it."""
    url = f"http://127.0.0.1:{a_closed_port()}/simple" if index == "down" else local_index
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=url, UV_PYTHON_DOWNLOADS="never", UV_OFFLINE="0")
    out = triage(
        tmp_path,
        issue(910007, [PASSES], "torch._dynamo.exc.Unsupported: call_method relu"),
        ("--releases", sys.executable),
        env,
    )
    first = next(line for line in out.splitlines() if not line.startswith("torch "))  # building logs come first
    if index == "down":
        assert (
            first.startswith(
                "not posted: not judged: torch 2.6.0, the release the issue reports, could not be installed now ("
            )
            and "no other release stands in" in first
        ), out
        assert "2.14.1" not in first, out
    else:
        assert first.startswith(
            "does not reproduce on torch 2.14.1: the script exits 0 where torch's exception would "
            "end it (the reported 2.6.0 was not run here)"
        ), out
    assert not (tmp_path / "cache" / "envs" / "torch-2.6.0").exists()  # no half-built environment is left


@pytest.mark.e2e
def test_a_failure_the_issue_does_not_report_is_not_taken_for_it(tmp_path):
    # the prose parser would have taken the IndexError as the failure; the run observes a TorchRuntimeError
    out = triage(
        tmp_path,
        issue(
            910004,
            [MATMUL_HEAD + MATMUL_CALL],
            "Traceback (most recent call last):\n  File "
            '"x.py", line 3\nIndexError: index 3 is out of bounds for dimension 0',
        ),
    )
    first = out.splitlines()[0]
    # a script that only crashes, raising another error than the one the issue quotes: both named, no claim either way
    assert (
        first.startswith("fails differently (the issue quotes IndexError: index 3 is out of bounds for dimension 0; ")
        and "TorchRuntimeError" in first
    ), out


@pytest.mark.e2e
def test_a_script_failing_in_eager_before_its_compiled_call_gives_no_standing(tmp_path):
    out = triage(tmp_path, issue(910006, [VIEW], "RuntimeError: shape '[3]' is invalid for input of size 2"))
    assert out.startswith("not posted: on torch ") and "fails before any compiled call" in out, out


@pytest.mark.e2e
@pytest.mark.heavy  # four contained runs of a bf16 script: a minute
def test_a_bf16_mismatch_within_the_fp64_reference_is_not_a_wrong_result(tmp_path):
    # logsumexp decomposed (aot_eager_decomp_partition) keeps bf16 intermediates wider than eager does: the two differ,
    # and against an fp64 reference the compiled one is the closer
    out = triage(
        tmp_path,
        issue(
            910005,
            [BF16_LOGSUMEXP],
            'Traceback (most recent call last):\n  File "x.py"\nAssertionError: Tensor-likes are not equal!',
        ),
    )
    first = out.splitlines()[0]
    assert first.startswith("not posted: not a wrong result against an fp64 reference"), out
    compiled, eager = map(float, re.search(r"compiled RMS error ([\d.e-]+), eager's ([\d.e-]+)", first).groups())
    assert 0 < compiled <= 2 * eager
    assert "AssertionError: Tensor-likes are not equal!" in out.splitlines()[1]  # the plain run did fail
    nowhere_but_here(tmp_path, BF16_LOGSUMEXP)


def test_the_issue_text_gives_the_script_the_failure_and_the_version():
    data = issue(1, [MATMUL_HEAD, MATMUL_CALL, "import torch\nprint(torch.__version__)\n"], FAKE_CALL)
    parsed = issue_json.parse(data)
    assert issue_script.reproducer(parsed) == JOINED  # joined; the next block is another script
    reported = issue_reported.reported_failure(parsed)
    assert reported.exception == "torch._dynamo.exc.TorchRuntimeError"
    assert reported.message == "RuntimeError when making fake tensor call"
    assert issue_reported.reported_version(parsed) == "2.6.0+cpu"
    assert thread_reading.closure(parsed) is None
    with pytest.raises(issue_json.InputError):
        issue_json.parse({**data, "state": "MERGED"})


def unversioned(data, created):
    """The issue with no release named anywhere, opened on `created`."""
    return {**data, "body": data["body"].replace("PyTorch version: 2.6.0+cpu\n", ""), "createdAt": created}


def test_an_issue_naming_no_release_is_judged_on_the_newest_release_before_the_day_it_was_opened():
    data = issue(2, [PASSES], "it fails")
    assert triage_request.release_judged_on(issue_json.parse(data), None) == ("2.6.0", "")  # its collect_env
    assert triage_request.release_judged_on(issue_json.parse(data), "2.5.1") == ("2.5.1", "")  # --reported-release
    for created, release in (
        ("2025-07-21T09:00:00Z", "2.7.1"),
        ("2025-04-23T18:00:00Z", "2.6.0"),  # 2.7.0 that day
        ("2026-10-01T00:00:00Z", "2.14.1"),
        ("2024-10-30T00:00:00Z", "2.5.1"),
    ):
        assert triage_request.release_judged_on(issue_json.parse(unversioned(data, created)), None) == (
            release,
            created[:10],
        ), created
    assert triage_request.release_judged_on(issue_json.parse(unversioned(data, "2019-01-01T00:00:00Z")), None) == (
        None,
        "",
    )  # older than every release: none is guessed
    days = list(release_dates.published().items())
    assert days[0] == ("2.0.0", "2023-03-15") and days[-1][0] == "2.15.0" and len(days) == 28
    minors = {}
    for release, day in days:  # within each series, later patches later
        assert day > minors.get(release.rsplit(".", 1)[0], ""), release
        minors[release.rsplit(".", 1)[0]] = day


@pytest.mark.e2e
def test_an_issue_naming_no_release_says_which_release_its_date_gave(tmp_path):
    out = triage(
        tmp_path,
        unversioned(issue(910008, [PASSES], "it fails"), "2026-10-01T12:00:00Z"),
        ("--releases", sys.executable),
    )
    first = out.splitlines()[0]
    assert (
        first == "not posted: does not reproduce on torch 2.14.1, the newest release when the issue was opened "
        "(2026-10-01): the script exits 0 (the script only prints its results, so its exit status says nothing); "
        "nothing to say"
    ), out


def _ran(exception=None, message="", status="fail", log=""):
    obs = Observation(
        status=status,
        exit_code=0 if status == "pass" else 1,
        signal=None,
        seconds=1.0,
        exception=exception,
        message=message,
        stage="dynamo" if exception else None,
        dynamo={"unique_graphs": 1},
    )
    return triage_standing.TriageRun("2.14.1", obs, "", log)


def test_what_a_run_cannot_say_is_not_posted():
    parsed = issue_json.parse(issue(3, [PASSES], "no traceback here"))

    def said(ran, script=PASSES):
        return triage_observe.observe(parsed, ran, script, False, "2.14.1").standing.line()

    assert (
        said(_ran(status="pass")) == "not posted: does not reproduce on torch 2.14.1, the release the issue "
        "reports: the script exits 0; nothing to say"
    )
    assert (
        triage_observe.observe(
            parsed, _ran(status="pass"), PASSES, False, "2.6.0", baseline_run=False, evidence=ExitEvidence.PRINTS_ONLY
        ).standing.line()
        == "not posted: the script exits 0 on torch 2.14.1 (the reported 2.6.0 was not run here), but the script only "
        "prints its results, so its exit status says nothing: nothing to say"
    )
    gone = _ran(
        "torch._dynamo.exc.Unsupported",
        "Observed exception",
        log="AttributeError: module 'torch._dynamo' has no attribute 'set_fullgraph'",
    )
    assert said(gone).startswith(
        "not posted: the script uses what torch 2.14.1 does not have (module 'torch._dynamo' has no attribute"
    )
    assert (
        said(_ran("RuntimeError", "Found no NVIDIA driver on your system."))
        == "not posted: the script needs CUDA, which torch 2.14.1 here lacks"
    )
    hint = _ran("torch._dynamo.exc.UserError", "Constraints violated (L['x'].size()[0])! ... use maybe_mark_dynamic")
    assert said(hint).startswith(
        "not posted: documented behaviour: torch 2.14.1's own message says 'maybe_mark_dynamic'"
    )


def test_the_signature_comes_from_runs_that_agree_and_a_chance_failure_is_outvoted():
    """Torch's own chance failures (a FileNotFoundError from inductor's cache, #134384) never become the signature:
    two runs that agree decide; where they differ, a third decides, and three that disagree give no signature."""
    unsupported = _ran("torch._dynamo.exc.Unsupported", "missing tp_iter for list_reverseiterator")
    again = _ran("torch._dynamo.exc.Unsupported", "missing tp_iter for list_reverseiterator")
    chance = _ran("FileNotFoundError", "[Errno 2] No such file or directory: '/tmp/x/torchinductor/ab/cd.py'")
    passed = _ran(status="pass")
    assert triage_runs.agree(unsupported, again) and triage_runs.agree(passed, _ran(status="pass"))
    assert not triage_runs.agree(unsupported, chance) and not triage_runs.agree(passed, unsupported)
    assert not triage_runs.agree(unsupported, passed)
    assert triage_runs.stable([unsupported, again]) == (unsupported, None)
    assert triage_runs.stable([chance, unsupported, again]) == (unsupported, chance)
    assert triage_runs.stable([unsupported, chance, again]) == (unsupported, chance)
    assert triage_runs.stable([passed, chance, _ran(status="pass")]) == (passed, chance)
    assert triage_runs.stable([passed, chance, unsupported]) == (None, None)
    cannot = triage_standing.TriageRun(
        "2.14.1", Observation(status="skip", exit_code=77, signal=None, seconds=0.1), "", ""
    )
    assert triage_runs.agree(cannot, cannot) and not triage_runs.agree(cannot, passed)
