"""Triage, take two: what it says to the tracker, rule by rule. The observations are what the probe records
(run.execute.Observation) for the runs named; the end-to-end runs of real issues' scripts are in test_triage.py,
test_triage_cli.py and test_triage_fixtures.py. Each test names the defect it holds."""

from pathlib import Path

import pytest
from reprokit.model.schema import InputError
from reprokit.run.execute import Observation
from reprokit.run.request import load_root_matrix
from reprokit.store.store import Store
from reprokit.store.views import repro_history
from reprokit.tracker.drafting import report_facts, triage_comment
from reprokit.tracker.issue import issue_json, issue_reported, release_dates
from reprokit.tracker.issue.exit_evidence import ExitEvidence
from reprokit.tracker.issue.exit_evidence import of as evidence_of
from reprokit.tracker.judging import (
    eager_fix,
    signature,
    triage_decide,
    triage_judge,
    triage_observe,
    triage_releases,
    triage_standing,
    unjudged,
)
from reprokit.tracker.judging.issue_lifecycle import Step
from reprokit.tracker.judging.triage_standing import DOES_NOT, NO_LONGER, NOT_POSTED, STILL, TriageRun
from reprokit.tracker.text.release_summary import ReleaseHistory

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (
    "import torch\n\n\n@torch.compile(fullgraph=True)\ndef f(x):\n    return x.sum()\n\n\nprint(f(torch.ones(3)))\n"
)


def issue(body, title="a bug", state="OPEN", reason="", closed_at=None, created="2026-06-01T00:00:00Z", comments=()):
    return issue_json.parse(
        {
            "number": 1,
            "title": title,
            "body": body,
            "state": state,
            "stateReason": reason,
            "closedAt": closed_at,
            "createdAt": created,
            "comments": [
                {"author": {"login": a}, "authorAssociation": assoc, "body": b, "createdAt": date}
                for a, assoc, date, b in comments
            ],
        }
    )


def ran(release, status="fail", exception=None, message="", stage="dynamo", signal=None, code=None, seconds=1.0):
    obs = Observation(
        status=status,
        exit_code=code if code is not None else 0 if status == "pass" else 1,
        signal=signal,
        seconds=seconds,
        exception=exception,
        message=message,
        stage=stage if exception else None,
        dynamo={"unique_graphs": 1},
    )
    return TriageRun(release, obs)


def judged(data, runs, reported="2.13.0", fixes=None, eager=None, **kw):
    t = triage_observe.observe(data, runs[0], SCRIPT, False, reported, eager=eager, **kw)
    if t.step is Step.OBSERVED:
        t = triage_judge.judge(t, runs, fixes)
    return triage_decide.decide(t, data)


UNSUPPORTED = ("torch._dynamo.exc.Unsupported", "Dynamo does not know how to trace the builtin `operator.getitem`")


# Defect: "open issues whose own script now passes get nothing" (with --here the reported release is not run).
def test_an_open_issue_whose_script_exits_0_where_its_release_was_not_run_gets_a_question():
    data = issue("It fails with `torch._dynamo.exc.Unsupported` on 2.12.0.\n\n```python\n" + SCRIPT + "```\n")
    t = judged(data, [ran("2.14.1", "pass")], reported="2.12.0", baseline_run=False)
    assert t.step is Step.DRAFTED and t.standing.kind == DOES_NOT, t
    assert t.standing.line() == (
        "does not reproduce on torch 2.14.1: the script exits 0 where torch's exception would "
        "end it (the reported 2.12.0 was not run here)"
    )
    body = triage_comment.render(data, t, [ran("2.14.1", "pass")], "PyTorch version: 2.14.1")
    assert "runs without error on torch 2.14.1 (the issue reports torch 2.12.0, which was not run here)" in body
    assert body.count("?") >= 1 and "no longer" not in body.lower()
    closed = issue(data.body, state="CLOSED", reason="COMPLETED", closed_at="2026-08-01T00:00:00Z")
    t = judged(closed, [ran("2.14.1", "pass")], reported="2.12.0", baseline_run=False)
    assert (
        t.step is Step.NO_COMMENT
        and t.standing.line().startswith("does not reproduce")
        and "it agrees" in t.standing.detail
    )
    printing = judged(
        data, [ran("2.14.1", "pass")], reported="2.12.0", baseline_run=False, evidence=ExitEvidence.PRINTS_ONLY
    )
    assert printing.step is Step.NO_COMMENT and "only prints its results" in printing.standing.detail


# Defect: "checks nothing" printed for a script that lets torch's exception decide (crash and compile-error scripts).
def test_what_the_scripts_exit_status_says_is_read_from_its_code():
    raising = "import torch\n\nf = torch.compile(lambda x: x.relu())\nf(torch.ones(2))\n"
    assert evidence_of(raising, reports_error=True) is ExitEvidence.RAISES
    printing = raising.replace("f(torch.ones(2))", "print(f(torch.ones(2)))")
    assert evidence_of(printing, reports_error=False) is ExitEvidence.PRINTS_ONLY
    asserting = raising + "torch.testing.assert_close(f(torch.ones(2)), torch.ones(2))\n"
    assert evidence_of(asserting, reports_error=False) is ExitEvidence.ASSERTS
    catching = (
        "import torch\n\n\n@torch.compile\ndef f(x):\n    return x.relu()\n\n\ntry:\n    f(torch.ones(2))\n"
        "except Exception as err:\n    print('failed:', err)\n"
    )
    assert evidence_of(catching, reports_error=True) is ExitEvidence.CATCHES
    eager_only = (
        "import torch\n\nf = torch.compile(lambda x: x[5])\ntry:\n    (lambda x: x[5])(torch.ones(2))\n"
        "except IndexError as err:\n    print('eager:', err)\nf(torch.ones(2))\n"
    )
    assert evidence_of(eager_only, reports_error=True) is ExitEvidence.RAISES  # only eager's call is caught
    reraised = catching.replace("print('failed:', err)", "raise SystemExit(1)")
    assert evidence_of(reraised, reports_error=True) is not ExitEvidence.CATCHES
    data = issue("It crashes with a segfault (core dumped).\n\n```python\n" + raising + "```\n")
    t = triage_observe.observe(
        data, ran("2.13.0", "pass"), raising, False, "2.13.0", evidence=evidence_of(raising, reports_error=True)
    )
    assert "checks nothing" not in t.standing.line() and "exit status says nothing" not in t.standing.line(), t


# Defect: "a script that just crashes is read as 'only prints its results'" (an issue quoting one line of Dynamo's
# message, a compiler's error line or a comment in the script, with no traceback and no error class).
def test_a_script_that_prints_catches_and_asserts_nothing_is_judged_by_its_exit_status():
    crashing = (
        "import torch\n\n\n@torch.compile(fullgraph=True)\ndef f(x):\n    return x.nonzero().sum()\n\n\n"
        "# fails: Dynamo cannot trace data-dependent output shapes\nf(torch.ones(4))\nprint('done')\n"
    )
    assert evidence_of(crashing, reports_error=False) is ExitEvidence.RAISES
    for text in (
        "Compiling fails with: Could not guard on data-dependent expression",
        "g++ says:\n```\ncabc.cpp:14:27: error: 'tmp7' was not declared in this scope\n```",
    ):
        data = issue(text + "\n\n```python\n" + crashing + "```\n")
        assert issue_reported.reported_failure(data) is None  # nothing in the text names an error class
        t = judged(
            data,
            [ran("2.14.1", "pass")],
            reported="2.12.0",
            baseline_run=False,
            evidence=evidence_of(crashing, reports_error=False),
        )
        assert t.step is Step.DRAFTED and t.standing.kind == DOES_NOT, t.standing
        assert "exit status says nothing" not in t.standing.line()
    printing = crashing.replace("f(torch.ones(4))", "print(f(torch.ones(4)))")
    assert evidence_of(printing, reports_error=False) is ExitEvidence.PRINTS_ONLY


# Defect: "a run past its time limit becomes the signature" (2 of 3 runs under load outvoted the reported SIGFPE).
def test_a_run_past_its_limit_is_never_the_signature_nor_a_draft_where_the_issue_reports_no_hang():
    from reprokit.model.choices import TRIAGE_TIMEOUT
    from reprokit.tracker.judging import triage_runs

    assert TRIAGE_TIMEOUT >= 600  # a busy 2-core machine: 300 s timed out runs that finish in minutes
    data = issue(
        "The compiled call dies with SIGFPE (Floating point exception, core dumped).\n\n```python\n" + SCRIPT + "```\n"
    )
    assert not unjudged.reports_hang(data)
    slow = ran("2.12.0", "timeout", code=-9, seconds=600.0)
    fpe = ran("2.12.0", "crash", signal="SIGFPE", code=-8)
    assert triage_runs.stable([slow, slow, fpe], hang_reported=False) == (fpe, None)
    assert triage_runs.stable([slow, slow, fpe], hang_reported=True)[0] is slow  # a hang reported: it is the failure
    t = judged(data, [slow], reported="2.12.0")
    assert t.step is Step.NO_COMMENT and t.standing.line() == (
        "not posted: not judged here: on torch 2.12.0 the script ran past 600 s, and the issue reports no hang"
    ), t
    t = judged(data, [fpe, ran("2.15.0", "timeout", code=-9, seconds=1200.0)], reported="2.12.0")
    assert t.step is Step.NO_COMMENT and t.standing.line() == (
        "not posted: not judged here: on torch 2.15.0 the script ran past 1200 s, and the issue reports no hang"
    ), t
    hanging = issue("It hangs forever in the compiled call.\n\n```python\n" + SCRIPT + "```\n")
    t = judged(hanging, [slow, ran("2.15.0", "timeout", code=-9, seconds=600.0)], reported="2.12.0")
    assert t.standing.kind == STILL, t  # where the issue reports a hang, running past the limit is the bug


PKG_RESOURCES = """Traceback (most recent call last):
  File "repro.py", line 9, in <module>
    f(torch.ones(4))
  File ".../site-packages/torch/_dynamo/eval_frame.py", line 489, in _fn
    return fn(*args, **kwargs)
  File ".../site-packages/torch/_inductor/codecache.py", line 33, in <module>
    from torch.utils import cpp_extension
  File ".../site-packages/torch/utils/cpp_extension.py", line 28, in <module>
    from pkg_resources import packaging  # type: ignore[attr-defined]
ModuleNotFoundError: No module named 'pkg_resources'
"""


# Defect: "a broken environment reads as the script's failure" (2.1.2 built with a setuptools without pkg_resources).
def test_torch_failing_to_import_its_own_dependencies_is_an_environment_broken_in_one_line():
    from reprokit.run import torch_envs

    assert torch_envs.extras("2.1.2") == ("setuptools<81", "numpy<2")  # the tools an old release imports
    assert torch_envs.extras("2.3.1") == ("setuptools<81", "numpy<2")
    assert torch_envs.extras("2.4.0") == torch_envs.extras("nightly") == ("setuptools", "numpy")
    data = issue("Inductor raises LoweringException on this.\n\n```python\n" + SCRIPT + "```\n")
    broken = TriageRun(
        "2.1.2",
        ran("2.1.2", exception="ModuleNotFoundError", message="No module named 'pkg_resources'", stage="runtime").obs,
        "",
        PKG_RESOURCES,
    )
    t = judged(data, [broken], reported="2.1.2")
    assert t.step is Step.NO_COMMENT and t.standing.line() == (
        "not posted: environment broken: not judged (torch 2.1.2 cannot import its own dependencies here: "
        "ModuleNotFoundError: No module named 'pkg_resources')"
    ), t
    lowering = ran(
        "2.1.2", exception="torch._inductor.exc.LoweringException", message="AssertionError: x", stage="inductor"
    )
    t = judged(data, [lowering, TriageRun("2.15.0", broken.obs, "", PKG_RESOURCES)], reported="2.1.2")
    assert t.step is Step.NO_COMMENT and t.standing.detail.startswith("environment broken: not judged (torch 2.15.0"), t
    own = PKG_RESOURCES.replace(".../site-packages/torch/utils/cpp_extension.py", "repro.py")  # the script's import
    t = judged(data, [TriageRun("2.1.2", broken.obs, "", own)], reported="2.1.2")
    assert "environment broken" not in t.standing.line(), t
    torch_own = PKG_RESOURCES.replace("No module named 'pkg_resources'", "No module named 'torch._C._dynamo.guards'")
    t = judged(data, [TriageRun("2.1.2", broken.obs, "", torch_own)], reported="2.1.2")
    assert "environment broken" not in t.standing.line(), t  # torch missing a part of itself is torch's bug


# Defect: "a fix that raises eager's error is read as a new failure".
def test_a_crash_replaced_by_the_error_eager_raises_is_no_longer_reproducing():
    data = issue(
        "The compiled call segfaults (SIGSEGV) where eager raises IndexError.\n\n```python\n" + SCRIPT + "```\n"
    )
    crash = ran("2.12.0", "crash", signal="SIGSEGV", code=-11)
    now = ran(
        "2.15.0",
        exception="IndexError",
        message="index 5 is out of bounds for dimension 0 with size 2",
        stage="runtime",
    )
    t = judged(data, [crash, now], reported="2.12.0", fixes={"2.15.0": "as eager does"})
    assert t.standing.kind == NO_LONGER and "now raises IndexError: index N" not in t.standing.detail
    assert t.standing.detail.startswith(
        "on torch 2.15.0: now raises IndexError: index 5 is out of bounds for "
        "dimension 0 with size 2, as eager does; fixed after 2.12.0"
    ), t.standing
    assert t.step is Step.DRAFTED
    index_error = eager_fix.EagerError("IndexError", "index 5 is out of bounds for dimension 0 with size 2")
    assert eager_fix.eager_fixed(data, signature.EXITS, "IndexError", False, index_error) == "as eager does"
    assert not eager_fix.eager_fixed(data, signature.EXITS, "InternalTorchDynamoError", False, None)
    # Dynamo's fake-tensor run raising eager's very error, wrapped (#143702 on 2.14.1)
    strides = eager_fix.EagerError(
        "RuntimeError", "as_strided: Negative strides are not supported at the moment, got strides: [-7, 1]"
    )
    wrapped = (
        "RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run FX node with fake "
        "tensors: call_method as_strided(...): got RuntimeError('as_strided: Negative strides are not "
        "supported at the moment, got strides: [-7, 1]')"
    )
    assert (
        eager_fix.eager_fixed(data, signature.EXITS, "TorchRuntimeError", False, strides, message=wrapped)
        == "wrapping the RuntimeError eager raises"
    )
    assert not eager_fix.eager_fixed(data, signature.EXITS, "TorchRuntimeError", False, index_error, message=wrapped)
    unrelated = issue("Wrong values.\n\n```python\n" + SCRIPT + "```\n")
    assert not eager_fix.eager_fixed(
        unrelated, signature.RAISES, "RuntimeError", False, eager_fix.EagerError("RuntimeError", "x")
    )
    # where the reported release was not run, this torch raising eager's error is asked about, as a fix
    t = judged(data, [now], reported="2.12.0", eager=index_error, baseline_run=False)
    assert t.standing.kind == NO_LONGER and t.step is Step.DRAFTED and "as eager does" in t.standing.detail


# Defect: "a closed issue is told 'still reproduces' on a release older than its fix".
def test_a_closed_issue_still_fails_only_on_releases_published_after_it_was_closed():
    failing = ran("2.13.0", exception=UNSUPPORTED[0], message=UNSUPPORTED[1])
    body = (
        "Unsupported: Dynamo does not know how to trace the builtin `operator.getitem`\n\n```python\n" + SCRIPT + "```"
    )
    closed = issue(body, state="CLOSED", reason="COMPLETED", closed_at="2026-08-20T00:00:00Z")
    t = judged(closed, [failing], reported="2.13.0")  # 2.13.0: 2026-07-08, before the close
    assert t.step is Step.NO_COMMENT and t.standing.detail.startswith(
        "still fails on torch 2.13.0, published no later than 2026-08-20 (closed on 2026-08-20)"
    )
    later = ran("2.14.1", exception=UNSUPPORTED[0], message=UNSUPPORTED[1])  # 2026-09-30: after it
    t = judged(closed, [failing, later], reported="2.13.0")
    assert t.step is Step.DRAFTED and t.standing.kind == STILL
    # no closedAt: the newest release at the last maintainer comment (2.13.0 on 2026-07-20) is expected to fail
    undated = issue(
        body,
        state="CLOSED",
        reason="COMPLETED",
        comments=[("dev", "MEMBER", "2026-07-20T00:00:00Z", "fixed by the linked PR")],
    )
    assert release_dates.expected_to_fail_until(undated) == (
        "2026-07-08",
        "torch 2.13.0 was the newest release at 2026-07-20",
    )
    assert judged(undated, [failing], reported="2.13.0").step is Step.NO_COMMENT
    assert release_dates.published_after("2.14.0.dev20260801+cpu", "2026-07-31")
    assert not release_dates.published_after("2.13.0+cu130", "2026-07-08")


# Defect: "the text check is word-for-word, not loose".
def test_the_issue_text_confirms_by_a_compiler_line_a_token_or_the_stage_and_a_cut_body_says_so():
    cpp = (
        "CppCompileError: C++ compile error\n\nCommand:\ng++ /tmp/torchinductor_root/ab/cabc.cpp -shared\n\nOutput:\n"
        "/tmp/torchinductor_root/ab/cabc.cpp:14:27: error: 'tmp7' was not declared in this scope\n"
    )
    observed = ran("2.13.0", exception="torch._inductor.exc.InductorError", message=cpp, stage="inductor")
    body = (
        "Compiling fails:\n\n```\n/tmp/torchinductor_me/xy/cxy.cpp:31:9: error: 'tmp3' was not declared in this "
        "scope\n```\n\n```python\n" + SCRIPT + "```\n"
    )
    t = triage_observe.observe(issue(body), observed, SCRIPT, False, "2.13.0")
    assert t.step is Step.OBSERVED and "'tmpN' was not declared in this scope" in t.confirmed, t
    op = ran(
        "2.13.0",
        exception="torch._dynamo.exc.TorchRuntimeError",
        message="Dynamo failed to run FX node with fake tensors: call_function aten._weight_norm_interface(...)",
    )
    t = triage_observe.observe(
        issue("the decomposition of aten._weight_norm_interface breaks\n```python\n" + SCRIPT + "```"),
        op,
        SCRIPT,
        False,
        "2.13.0",
    )
    assert t.step is Step.OBSERVED and "aten._weight_norm_interface" in t.confirmed
    stage = triage_observe.observe(
        issue("inductor dies on this one\n```python\n" + SCRIPT + "```"), observed, SCRIPT, False, "2.13.0"
    )
    assert stage.step is Step.OBSERVED and "failing stage (inductor)" in stage.confirmed
    cut = issue(
        "```python\n" + SCRIPT + '```\n\n```\nTraceback (most recent call last):\n  File "x.py", line 9, in '
        '<module>\n    f(x)\n  File "/site-packages/torch/_dynamo/eval_frame.py", line 655, in _fn\n'
    )
    t = triage_observe.observe(
        cut,
        ran(
            "2.13.0", exception="torch._dynamo.exc.BackendCompilerFailed", message="backend='foo' raised:\nKeyError: 3"
        ),
        SCRIPT,
        False,
        "2.13.0",
    )
    assert t.step is Step.OBSERVED and t.confirmed.startswith("the issue's log is cut before its error line"), t
    # the script's own names confirm nothing: the token must be outside the script
    own = ran("2.13.0", exception="torch._dynamo.exc.TorchRuntimeError", message="call_function my_weird_helper(...)")
    t = triage_observe.observe(
        issue("wrong values\n```python\ndef my_weird_helper(x):\n    return x\n" + SCRIPT + "```"),
        own,
        SCRIPT,
        False,
        "2.13.0",
    )
    assert t.step is Step.NO_COMMENT and "not the failure it reports" in t.standing.detail


def test_the_reported_release_is_read_as_issues_write_it_and_one_run_never_says_either():
    for text, version in (
        ("PyTorch Version: 2.12.0+cu128", "2.12.0+cu128"),
        ("I am on torch 2.11.0.", "2.11.0"),
        ("pytorch 2.10.0 with CUDA", "2.10.0"),
        ("nightly 2.15.0.dev20261001+cpu", "2.15.0.dev20261001+cpu"),
    ):
        assert issue_reported.reported_version(issue(text)) == version, text
    said = triage_observe.observe(
        issue("```python\n" + SCRIPT + "```"), ran("2.13.0", "pass"), SCRIPT, False, "2.13.0"
    ).standing.line()
    assert "either" not in said and "torch 2.13.0, the release the issue reports" in said


# Defect: "the default builds every recorded release, oldest first, before running anything".
def test_a_default_triage_plans_the_reported_release_and_the_newest_stable_and_nightly_only_when_asked():
    cpu = load_root_matrix(ROOT).targets["cpu"]
    assert len(cpu.pins.history) >= 8
    newest = triage_releases.newest_stable(cpu)
    assert newest == max(map(str, cpu.pins.history), key=triage_releases.order)
    assert triage_releases.plan("2.10.0", cpu).releases == ("2.10.0", newest)
    assert triage_releases.plan("2.10.0", cpu, nightly=True).releases == ("2.10.0", newest, "nightly")
    assert triage_releases.plan("2.14.0.dev20260801", cpu).releases == (newest,)  # a dev build is not installable
    assert triage_releases.plan(newest, cpu).releases == (newest,)
    assert triage_releases.between([str(v) for v in cpu.pins.history], "2.10.0", newest) == [
        str(v)
        for v in cpu.pins.history
        if triage_releases.order("2.10.0") < triage_releases.order(str(v)) < triage_releases.order(newest)
    ]


# Defect: "under load it crashes" (reading a release's version raised a TimeoutExpired traceback).
def test_reading_a_releases_version_takes_the_runs_timeout_and_fails_in_one_line(tmp_path):
    slow = tmp_path / "python"
    slow.write_text("#!/bin/sh\nsleep 30\n")
    slow.chmod(0o755)
    with pytest.raises(InputError, match=r"`import torch` did not finish in 1 s \(the run's timeout"):
        triage_releases.version_of(str(slow), 1.0)


# Defect: "`upstream` misses the news" (the error class changed at 2.14.1; Expected under fullgraph=True).
def test_a_report_leads_with_the_change_of_error_and_expects_a_clean_graph_break_under_fullgraph():
    loaded = Store(ROOT / "results").load("cpu", "cases")
    case = "dynamic-shape-argmax-indexing-2d"
    _, pairs = repro_history(loaded, "cpu", case, ["float32"])
    history = ReleaseHistory.of(pairs, report_facts.errors_by_release(loaded, "cpu", case, "float32"))
    changed = history.error_change()
    assert changed is not None and changed[0] == "2.14.1" and changed[2:] == ("UserError", "InternalTorchDynamoError")
    assert "; since 2.14.1 with InternalTorchDynamoError, before with UserError" in history.line()
    script = (ROOT / "cases" / case / "repro.py").read_text()
    assert "fullgraph=True" in script
    failure = report_facts.Failure(
        ran(
            "2.14.1", exception="torch._dynamo.exc.InternalTorchDynamoError", message="PendingUnbackedSymbolNotFound"
        ).obs,
        False,
        "dynamo",
        True,
        False,
    )
    said = report_facts.expected(failure, history, script)
    assert (
        said.startswith("Expected: under `fullgraph=True`, a clean graph-break error")
        and f"as torch {changed[1]} raised (`UserError`)" in said
        and "runs as eager does" not in said
    )


def test_the_state_reason_reaches_a_comment_only_as_one_of_githubs_words():
    planted = issue("x", state="CLOSED", reason="![x](https://e.example/a.png)")
    assert triage_standing.state_words(planted) == "closed (no reason given)"
    assert triage_standing.state_words(issue("x", state="CLOSED", reason="COMPLETED")) == "closed (completed)"
    assert NOT_POSTED == "not posted"


def test_a_triage_standing_is_kept_as_data_beside_its_sentence(tmp_path):
    from reprokit.model import issue_states
    from reprokit.model.issue_states import IssueState, IssueStates, StandingKind, standing_of_sentence

    state = IssueState(
        state="closed",
        checked="2026-12-01",
        triage="a sentence reworded since",
        triage_torch="2.14.1",
        triage_kind=StandingKind.STILL,
        triage_releases=["2.13.0", "2.14.1"],
    )
    issue_states.save(tmp_path, IssueStates(issues={1: state}))
    assert "triage_kind: still reproduces" in (tmp_path / "issue-states.yaml").read_text()
    assert issue_states.load(tmp_path).issues[1].triage_kind is StandingKind.STILL
    assert issue_states.load(tmp_path).issues[1].triage_releases == ["2.13.0", "2.14.1"]
    assert f"{StandingKind.NO_LONGER} since 2.14.1" == "no longer reproduces since 2.14.1"
    assert standing_of_sentence("not posted: the thread decided") == (StandingKind.NOT_POSTED, [])
    assert triage_standing.STILL is StandingKind.STILL  # one vocabulary: the lifecycle's words are the stored kinds


def test_a_wrappers_inner_error_or_a_compiler_line_after_its_warnings_confirms_the_failure():
    warnings = "".join(
        f"vec256_int.h:{n}:7: warning: overflow in conversion from 'int' to 'char'\n" for n in range(900)
    )
    message = "CppCompileError: C++ compile error\n\nOutput:\n" + warnings  # the probe's message: cut in the warnings
    log = (
        message
        + "/tmp/x/cabc.cpp:77:9: error: 'decltype' evaluates to 'float', which is not a class or enumeration type\n"
    )
    observed = TriageRun(
        "2.11.0",
        ran("2.11.0", exception="torch._inductor.exc.InductorError", message=message, stage="inductor").obs,
        "",
        log,
    )
    body = (
        "It fails to build:\n```\nerror: 'decltype' evaluates to 'float', which is not a class or enumeration type\n"
        "```\n```python\n" + SCRIPT + "```"
    )
    t = triage_observe.observe(issue(body), observed, SCRIPT, False, "2.11.0")
    assert t.step is Step.OBSERVED and "'decltype' evaluates to 'float'" in t.confirmed, t
    named = triage_observe.observe(
        issue("```python\n" + SCRIPT + "```", title="compile crashes with CppCompileError"),
        observed,
        SCRIPT,
        False,
        "2.11.0",
    )
    assert named.step is Step.OBSERVED and named.confirmed == "the issue's text names CppCompileError", named


def _request_calls(tree) -> list:
    import ast

    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == "Request" or getattr(node.func, "attr", None) == "Request")
    ]


def test_the_triage_request_is_one_keyword_only_frozen_value():
    """It was built by position (eight fields, three flags side by side) next to an eleven-field copy of the same
    command line: a flag given in the wrong place was taken for another without a word."""
    import dataclasses

    from reprokit.tracker.triage_request import Request

    with pytest.raises(TypeError):
        Request(load_root_matrix(ROOT), "cpu")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Request("cpu", (), True)  # type: ignore[misc]
    asked = Request(target="cpu", here=True, timeout=30.0)
    assert (asked.here, asked.nightly, asked.since, asked.releases) == (True, False, False, ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        asked.here = False  # type: ignore[misc]


def test_every_triage_request_is_built_by_name_and_each_command_builds_one():
    """`triage` and `tracker` build the request once, from their arguments; the command's logic receives it whole
    (it rebuilt it by position from a copy of its own), and nowhere is one built by position."""
    import ast

    package = ROOT / "tools" / "reprokit"
    for path in [*(package / "tracker").rglob("*.py"), *(package / "cli").rglob("*.py")]:  # urllib's elsewhere
        for call in _request_calls(ast.parse(path.read_text(encoding="utf-8"))):
            assert not call.args, f"{path.relative_to(ROOT)}:{call.lineno}: a Request built by position"
    cli = ast.parse((package / "cli" / "tracker.py").read_text(encoding="utf-8"))
    built = {f.name: len(_request_calls(f)) for f in cli.body if isinstance(f, ast.FunctionDef)}
    assert (built["cmd_triage"], built["cmd_tracker"]) == (1, 1)
    assert not _request_calls(ast.parse((package / "tracker" / "triage_command.py").read_text(encoding="utf-8")))


def test_the_command_line_reaches_triage_as_one_request(capsys):
    """--here with --releases is refused from the request the command line built (one line, exit 2)."""
    from reprokit.cli import main

    fixture = next((ROOT / "tests" / "fixtures" / "triage").glob("*.json"))
    argv = ["--root", str(ROOT), "triage", "--issue-json", str(fixture), "--here", "--releases", "2.14.1"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().endswith("--releases names others: give one of them")
