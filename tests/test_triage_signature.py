"""Triage judged against what the reported release itself does: the signature is observed from a run, the issue's text
only confirms it; an issue that asks for an error; numerics that cannot be judged; the thread read as a maintainer
reads it; bounded text; the one module that holds an issue's states. The observations here are what the probe records
(run.execute.Observation); the end-to-end runs of real scripts are in test_triage.py and test_triage_fixtures.py."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reprokit.model.schema import InputError
from reprokit.run.execute import Observation
from reprokit.tracker.issue import issue_json, issue_reported, issue_script, thread_reading
from reprokit.tracker.judging import fp64_check, signature, triage_decide, triage_judge, triage_observe
from reprokit.tracker.judging.issue_lifecycle import Step
from reprokit.tracker.judging.triage_standing import NO_LONGER, STILL, TriageRun

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "import torch\n\nprint(torch.compile(lambda x: x.sum())(torch.ones(3)))\n"
LOWERING = (
    "LoweringException: AssertionError: buf12 has size 4096 at 0x7f3a9c0 in "
    "/home/someone/venv/lib/python3.11/site-packages/torch/_inductor/lowering.py"
)


def issue(body, title="a bug", state="OPEN", reason="", comments=()):
    return issue_json.parse(
        {
            "number": 1,
            "title": title,
            "body": body,
            "state": state,
            "stateReason": reason,
            "comments": [
                {"author": {"login": a}, "authorAssociation": assoc, "body": b, "createdAt": date}
                for a, assoc, date, b in comments
            ],
        }
    )


def ran(release, status="fail", exception=None, message="", stage="inductor", graphs=1):
    obs = Observation(
        status=status,
        exit_code=0 if status == "pass" else 1,
        signal=None,
        seconds=1.0,
        exception=exception,
        message=message,
        stage=stage if exception else None,
        dynamo={"unique_graphs": graphs},
    )
    return TriageRun(release, obs)


def judged(data, runs, accepts=False, reported="2.13.0"):
    t = triage_observe.observe(data, runs[0], SCRIPT, accepts, reported)
    if t.step is Step.OBSERVED:
        t = triage_judge.judge(t, runs)
    return triage_decide.decide(t, data)


BAD = (
    "torch._inductor.exc.InductorError",
    "LoweringException: AssertionError: buf3 has size 1024 at 0x55d0 in "
    "/opt/conda/lib/python3.12/site-packages/torch/_inductor/lowering.py",
)
# Where issues put the error they report: none of these is a fenced traceback, which is all the prose parser found.
SHAPES = {
    "a list item": "Steps:\n\n1. run the script\n2. it fails with InductorError: LoweringException\n",
    "a blockquote": "The compile dies:\n\n> " + LOWERING + "\n",
    "prose": "On 2.13 torch.compile dies with an InductorError while lowering; eager is fine.\n",
    "a rank prefix": '```\n[rank0]: Traceback (most recent call last):\n[rank0]:   File "a.py", line 3\n[rank0]: '
    + LOWERING
    + "\n```\n",
    "a glog prefix": "```\nE1202 12:00:00.123456 140 torch/_inductor/graph.py:900] " + LOWERING + "\n```\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_signature_comes_from_the_run_and_the_text_only_confirms_it(shape):
    data = issue(SHAPES[shape] + "\n```python\n" + SCRIPT + "```\n")
    t = judged(data, [ran("2.13.0", exception=BAD[0], message=BAD[1]), ran("2.14.1", status="pass")])
    assert t.signature.exception == "InductorError" and t.signature.stage == "inductor"
    assert "0x" not in t.signature.skeleton and "/opt/conda" not in t.signature.skeleton
    assert t.standing.kind == NO_LONGER and t.post, t.standing.line()
    assert t.standing.detail.startswith(
        "on torch 2.14.1: the script exits 0; fixed after 2.13.0, the last release run "
        "with the bug; the releases between (2.14.0) were not run"
    )


def test_a_failure_the_text_does_not_mention_and_a_reported_release_that_passes_say_nothing():
    data = issue("It gives wrong values on 2.13.\n\n```python\n" + SCRIPT + "```\n")
    t = judged(data, [ran("2.13.0", exception=BAD[0], message=BAD[1]), ran("2.14.1", status="pass")])
    assert t.step is Step.NO_COMMENT and "which the issue's text does not mention" in t.standing.detail
    t = judged(data, [ran("2.13.0", status="pass"), ran("2.14.1", status="pass")])
    assert t.standing.line().startswith(
        "not posted: does not reproduce on torch 2.13.0, the release the issue reports: the script exits 0"
    )


def test_the_same_signature_tolerates_numbers_addresses_paths_and_generated_names():
    sig = signature.of(ran("2.13.0", exception=BAD[0], message=BAD[1]).obs)
    assert signature.compare(sig, ran("2.14.1", exception=BAD[0], message=LOWERING).obs) == signature.SAME
    other = ran("2.14.1", exception=BAD[0], message="CppCompileError: C++ compile error")
    assert signature.compare(sig, other.obs) == signature.OTHER
    t = judged(issue(SHAPES["prose"]), [ran("2.13.0", exception=BAD[0], message=BAD[1]), other])
    assert t.standing.kind == "fails differently" and "on torch 2.13.0: InductorError" in t.standing.detail


def test_an_issue_asking_for_an_error_is_fixed_when_a_release_raises_it():
    data = issue(
        "torch.compile silently accepts an out-of-range index; it should raise an error like eager does.\n\n"
        "```python\n" + SCRIPT + "```\n",
        title="compiled index_select should raise on a bad index",
    )
    assert thread_reading.asks_for_error(data)
    for title in (
        "torch.compile can compile the model that is not runnable under eager mode",
        "compiled matmul silently succeeds with mismatched dtypes where eager raises RuntimeError",
    ):
        assert thread_reading.asks_for_error(issue("", title=title)), title
    assert not thread_reading.asks_for_error(issue("```python\n# should raise\n```\n", title="compile fails"))
    now = ran("2.14.1", exception="torch._inductor.exc.InductorError", message="IndexError: index 9 is out of bounds")
    t = judged(data, [ran("2.13.0", status="pass"), now], accepts=True)
    assert t.standing.kind == NO_LONGER and t.post
    assert t.standing.detail.startswith(
        "on torch 2.14.1: now raises InductorError: IndexError: index 9 is out of bounds"
    )
    assert "fixed after 2.13.0, the last release run with the bug" in t.standing.detail
    still = judged(data, [ran("2.13.0", status="pass"), ran("2.14.1", status="pass")], accepts=True)
    assert still.standing.kind == STILL and "accepts it without an error" in still.standing.detail


def test_a_script_that_fails_in_eager_before_the_compiled_call_gives_no_standing():
    eager = ran(
        "2.14.1",
        exception="RuntimeError",
        message="shape '[3]' is invalid for input of size 2",
        stage="runtime",
        graphs=0,
    )
    t = judged(issue("InductorError on 2.13\n"), [ran("2.13.0", exception=BAD[0], message=BAD[1]), eager])
    assert t.step is Step.NO_COMMENT and "fails before any compiled call" in t.standing.detail
    first = judged(issue("RuntimeError: shape is invalid\n"), [eager])
    assert first.step is Step.NO_COMMENT and first.record_line().startswith(
        "not posted: on torch 2.14.1 the script fails before any compiled call"
    )


def test_numerics_that_cannot_be_judged_are_never_still_reproduces():
    data = issue("AssertionError: Tensor-likes are not close!\n")
    cmp = ran("2.13.0", exception="AssertionError", message="Tensor-likes are not close!", stage="runtime")
    t = judged(data, [cmp, TriageRun("2.14.1", cmp.obs)])
    assert t.standing.kind == STILL  # open and still failing: before the numerics are weighed
    said = triage_decide.numerics(t, "not judged against an fp64 reference: nothing captured", None, "2.14.1")
    assert said.standing.line().startswith("not posted: cannot judge numerics on torch 2.14.1")


def test_the_fp64_captures_fix_an_unseeded_scripts_inputs_alike_on_every_side(tmp_path):
    script = (
        "import torch\nx = torch.randn(64, dtype=torch.float16)\n"
        "print(torch.allclose(x.float().exp().half(), x.exp()))\n"
    )
    folders = []
    for side in ("a", "b"):
        folder = tmp_path / side
        folder.mkdir()
        path = tmp_path / f"{side}.py"
        path.write_text(fp64_check.captured(script))
        done = subprocess.run(
            [sys.executable, str(path)],
            env={**os.environ, "REPROKIT_CAPTURE": str(folder)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        folders.append(sorted(p.read_text() for p in folder.glob("*.json")))
    assert folders[0] == folders[1] and folders[0]


MAINTAINER = "MEMBER"


def test_the_thread_is_read_as_a_maintainer_reads_it():
    eager = issue(
        "x",
        comments=[
            (
                "ann",
                MAINTAINER,
                "2026-01-02",
                "Eager is expected to fail here; the compiled one returning garbage is the bug.",
            )
        ],
    )
    assert thread_reading.closure(eager) is None
    quoted = issue("x", comments=[("bob", MAINTAINER, "2026-01-02", "> this is expected\n\nWhy would it be?")])
    assert thread_reading.closure(quoted) is None
    overruled = issue(
        "x",
        comments=[
            ("ann", MAINTAINER, "2026-01-02", "This is expected behavior."),
            ("cid", MAINTAINER, "2026-02-03", "Reopening: this is a bug in the lowering."),
            ("bot", "NONE", "2026-03-01", "Fixed by https://github.com/pytorch/pytorch/pull/5"),
        ],
    )
    assert thread_reading.closure(overruled) is None
    consistent = issue(
        "x",
        comments=[
            ("ann", MAINTAINER, "2025-04-10", "This looks like an expected behavior."),
            (
                "bea",
                MAINTAINER,
                "2025-04-14",
                "If eager raises, we should probably make sure that compile raises the same error.",
            ),
        ],
    )
    assert thread_reading.closure(consistent) is None
    usage = issue(
        "x",
        comments=[
            (
                "dee",
                MAINTAINER,
                "2026-04-05",
                "For data-dependent indexing you need to assert the index is in bounds (torch._check).",
            )
        ],
    )
    said = thread_reading.closure(usage)
    assert said.line().startswith(
        'a maintainer (dee, 2026-04-05) said: "For data-dependent indexing you need to assert'
    )
    outsider = issue("x", comments=[("eve", "NONE", "2026-04-05", "Not a bug, works as intended.")])
    assert thread_reading.closure(outsider) is None
    plain = issue("x", comments=[("fay", MAINTAINER, "2026-05-06", "Not a bug: the model only supports even sizes.")])
    assert thread_reading.closure(plain).author == "fay"
    closed = issue("x", state="CLOSED", reason="NOT_PLANNED")
    assert thread_reading.closure(closed).line().startswith("closed as not planned")


def test_a_large_body_is_read_in_linear_time_and_an_oversized_one_is_refused_in_one_line():
    body = "".join(f"```python\nimport torch\n```\n[rank0]: E: {i:05d}\n> qq\n" for i in range(4000))
    assert len(body) == 200_000 and body.count("```python") == 4000
    data = issue(body)
    start = time.monotonic()
    issue_script.reproducer(data)
    issue_reported.reported_failure(data)
    thread_reading.asks_for_error(data)
    signature.confirmed_in(signature.of(ran("2.13.0", exception="RuntimeError", message="boom 12").obs), [body])
    assert time.monotonic() - start < 5
    with pytest.raises(InputError, match=r"^issue JSON: body is 300,000 characters, over the 262,144 triage reads"):
        issue_json.parse({"number": 2, "title": "t", "body": "x" * 300_000, "state": "OPEN"})


def test_the_oversized_issue_is_refused_by_the_command_in_one_line(tmp_path):
    path = tmp_path / "issue.json"
    path.write_text(json.dumps({"number": 2, "title": "t", "body": "x" * 300_000, "state": "OPEN"}))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tools"), "REPROKIT_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "reprokit", "--root", str(ROOT), "triage", "--issue-json", str(path), "--here"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "over the 262,144 triage reads" in proc.stderr


def test_every_state_and_its_record_come_from_the_one_lifecycle():
    data = issue(SHAPES["prose"], state="CLOSED", reason="COMPLETED")
    t = judged(data, [ran("2.13.0", exception=BAD[0], message=BAD[1]), ran("2.14.1", status="pass")])
    assert t.step is Step.NO_COMMENT and t.standing.kind == NO_LONGER  # agrees with the closed issue
    assert t.record_line().startswith("no longer reproduces on torch 2.14.1: the script exits 0; fixed after 2.13.0")
    assert t.standing.releases == ("2.14.1",)
    assert "[signature on torch 2.13.0: InductorError: LoweringException" in t.record_line()
    t = judged(data, [ran("2.13.0", exception=BAD[0], message=BAD[1]), ran("2.14.1", exception=BAD[0], message=BAD[1])])
    assert t.step is Step.DRAFTED and t.standing.kind == STILL and t.standing.releases == ("2.13.0", "2.14.1")
    assert {s.value for s in Step} == {
        "reported",
        "observed on the reported release",
        "judged per release",
        "comment drafted",
        "ended without a comment",
    }


def test_the_signature_release_is_the_reported_one_or_the_nearest_older_one():
    from reprokit.tracker.judging.triage_releases import reference

    here = ["2.12.1", "2.13.0", "2.14.1", "nightly"]
    assert reference("2.13.0", here) == "2.13.0"
    assert reference("2.13.1", here) == "2.13.0"  # not installable: the nearest release not newer
    assert reference("2.5.1", here) == "2.12.1"  # older than every release here: the oldest stands in, named
    assert reference(None, here) == "2.12.1"  # no release named: the oldest, and the standing says so


def test_an_error_log_block_that_parses_as_python_is_not_joined_to_the_script():
    body = (
        "```python\nimport torch\nprint(torch.ones(1))\n```\n\nError logs\n\n```\n"
        "torch._dynamo.exc.InternalTorchDynamoError: PendingUnbackedSymbolNotFound\n```\n"
    )
    assert issue_script.reproducer(issue(body)) == "import torch\nprint(torch.ones(1))\n"


def test_a_draft_table_cell_holds_a_pipe_and_no_home_path():
    from reprokit.tracker.drafting.triage_comment import render
    from reprokit.tracker.text.user_paths import as_user_sees

    data = issue("Unsupported: 'Pair._replace | _replace'\n```python\n" + SCRIPT + "```")
    piped = ran("2.13.0", exception="torch._dynamo.exc.Unsupported", message="'Pair._replace | _replace'")
    t = judged(data, [piped, ran("2.14.1", exception="RuntimeError", message="a | b")])
    body = render(data, t, [piped, ran("2.14.1", exception="RuntimeError", message="a | b")], "PyTorch version: 2.14.1")
    assert "| 2.14.1 | `RuntimeError: a \\| b` |" in body, body
    home = str(Path.home())
    assert home not in as_user_sees(f'  File "{home}/.pyenv/versions/3.11.7/lib/python3.11/collections/x.py", line 1')


def test_a_run_s_line_in_the_draft_names_no_path_of_this_machine():
    """torch names the file it skipped (#158772's script on 2.6.0: a pyenv interpreter's collections module under
    root's home); the draft's table and the standing show it as the user would paste it, under `~`."""
    import socket
    from pathlib import Path

    from reprokit.run.execute import Observation
    from reprokit.tracker.judging.triage_standing import observed_line

    home, host = str(Path.home()), socket.gethostname()
    message = (
        f"'inline in skipfiles: Pair._replace | _replace {home}/.pyenv/versions/3.11.7/lib/python3.11/"
        f"collections/__init__.py, skipped according trace_rules.lookup SKIP_DIRS' on {host}"
    )
    obs = Observation(
        status="fail", exit_code=1, signal=None, seconds=1.0, exception="torch._dynamo.exc.Unsupported", message=message
    )
    line = observed_line(obs)  # the table's cell, the standing's words and issue-states.yaml's all come from it
    assert line.startswith("Unsupported: 'inline in skipfiles") and "~/.pyenv/versions/3.11.7/lib/" in line
    assert home + "/" not in line and "<host>" in line
