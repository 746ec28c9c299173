"""The comment triage drafts, read as the maintainer who posts it reads it: torch's words as torch printed them and
nothing else in code spans, each message once, which release stood in for which build, "since" only where the releases
between ran, a closed issue told when the release came out, where the script came from, and the record line whole.
The observations are what the probe records (run.execute.Observation) for the runs named; each test names the defect
it holds."""

import re

from reprokit.run.execute import Observation
from reprokit.tracker.drafting.triage_comment import render
from reprokit.tracker.issue import build_stand_in, issue_json, issue_script
from reprokit.tracker.judging import triage_decide, triage_judge, triage_observe
from reprokit.tracker.judging.issue_lifecycle import Step
from reprokit.tracker.judging.triage_standing import DOES_NOT, NO_LONGER, STILL, TriageRun

SCRIPT = "import torch\n\n\n@torch.compile\ndef f(a, b):\n    return a @ b\n\n\nf(torch.ones(2, 3), torch.ones(4, 5))\n"
MATMUL = (
    "torch._dynamo.exc.TorchRuntimeError",
    "Dynamo failed to run FX node with fake tensors: call_function <built-in function matmul>(*(FakeTensor(..., "
    "size=(2, 3)), FakeTensor(..., size=(4, 5))), **{}): got RuntimeError('a and b must have same reduction dim, "
    "but got [2, 3] X [4, 5].')",
)
MAT = ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")


def issue(body, state="OPEN", closed_at=None, comments=(), author="reporter"):
    return issue_json.parse(
        {
            "number": 7,
            "title": "compiled matmul",
            "body": body,
            "state": state,
            "stateReason": "COMPLETED" if state == "CLOSED" else "",
            "closedAt": closed_at,
            "createdAt": "2026-06-01T00:00:00Z",
            "author": {"login": author},
            "comments": [
                {"author": {"login": a}, "authorAssociation": assoc, "body": b, "createdAt": "2026-06-02T00:00:00Z"}
                for a, assoc, b in comments
            ],
        }
    )


def ran(release, exception=None, message="", status="fail", stage="dynamo", log=""):
    obs = Observation(
        status=status,
        exit_code=0 if status == "pass" else 1,
        signal=None,
        seconds=1.0,
        exception=exception,
        message=message,
        stage=stage if exception else None,
        dynamo={"unique_graphs": 1},
        stderr_tail=log,
    )
    return TriageRun(release, obs, "", log)


def triaged(data, runs, reported, **kw):
    t = triage_observe.observe(data, runs[0], SCRIPT, False, reported, **kw)
    if t.step is Step.OBSERVED:
        t = triage_judge.judge(t, runs)
    return triage_decide.decide(t, data)


def code_spans(markdown: str) -> list[str]:
    outside = re.sub(r"^(`{3,}).*?^\1$", "", markdown, flags=re.M | re.S)  # fenced blocks are logs, not prose
    return [m.group(2).strip() for m in re.finditer(r"(`+)(.+?)\1", outside)]


# Defect: "neutralised tokens in prose" (`matN and matN`, `tensor([[N]])`) and "words left inside code spans"
# (`..., as eager does`, the stage), and "long messages cut mid-word and repeated three times".
def test_a_draft_says_torchs_message_as_torch_printed_it_once_and_only_torchs_words_are_code():
    data = issue(
        "Compiling fails: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)\n\n```python\n" + SCRIPT + "```\n",
        state="CLOSED",
        closed_at="2026-08-20T00:00:00Z",
    )
    runs = [ran(r, *MAT, stage="inductor") for r in ("2.13.0", "2.14.1", "2.15.0")]
    t = triaged(data, runs, "2.13.0")
    assert t.step is Step.DRAFTED and t.standing.kind == STILL, t.standing
    body = render(data, t, runs, "PyTorch version: 2.15.0")
    assert (
        "matN" not in body
        and "(NxN and NxN)" not in body
        and "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)" in body
    )
    assert body.count("mat1 and mat2") == 2, body  # the lead and the reference run's row; later rows say "the same"
    assert "| 2.15.0 | fails the same way as on 2.13.0 |" in body
    for span in code_spans(body):
        assert not span.endswith(("as eager does", ")")) or span.startswith("RuntimeError"), span
        assert "(in inductor)" not in span, span
    assert "fails with `RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)` in inductor" in body
    # a closed issue: when the release that still fails came out, against the close
    assert "Torch 2.15.0 was published on 2026-10-28, after the issue was closed on 2026-08-20." in body


# Defect: "'since 2.15.0' when only the reported release and 2.15.0 ran".
def test_since_is_said_only_where_the_releases_between_were_run():
    data = issue("It raises TorchRuntimeError.\n\n```python\n" + SCRIPT + "```\n")
    runs = [ran("2.13.0", *MATMUL), ran("2.15.0", status="pass")]
    t = triaged(data, runs, "2.13.0")
    assert t.standing.kind == NO_LONGER and t.step is Step.DRAFTED
    assert not t.standing.line().startswith("no longer reproduces since"), t.standing.line()
    assert t.unrun_between == ("2.14.0", "2.14.1")
    body = render(data, t, runs, "PyTorch version: 2.15.0")
    assert not re.search(r"since (torch )?2\.", body), body
    assert (
        "It no longer does on torch 2.15.0: the script exits 0. It was fixed after torch 2.13.0; the releases "
        "between (2.14.0..2.14.1) were not run (`reprokit triage --since` bisects them)."
    ) in body
    every = [ran("2.13.0", *MATMUL), ran("2.14.0", *MATMUL), ran("2.14.1", status="pass"), ran("2.15.0", status="pass")]
    t = triaged(data, every, "2.13.0")
    assert t.standing.line().startswith("no longer reproduces since 2.14.1: the script exits 0 (last bad 2.14.0")
    assert "It no longer does since torch 2.14.1, the release after 2.14.0: the script exits 0." in render(
        data, t, every, "PyTorch version: 2.15.0"
    )


# Defect: "a record line cut at 300 characters, leaving `[signature on torch 2.13.0: AssertionError:  (torch 2.13.0).`".
def test_the_record_line_is_bounded_whole_and_cut_only_at_a_word():
    long = "the node " + " ".join(f"buf{i}_with_a_long_generated_name" for i in range(40)) + " is invalid"
    data = issue(f"AssertionError: {long}\n\n```python\n" + SCRIPT + "```\n")
    runs = [
        ran("2.13.0", "AssertionError", long, stage="inductor"),
        ran("2.15.0", "AssertionError", long.replace("node", "graph output"), stage="inductor"),
    ]
    t = triaged(data, runs, "2.13.0")
    line = t.record_line()
    assert (
        len(line) <= 300 and line.endswith("(in inductor)]") and " [signature on torch 2.13.0: AssertionError: " in line
    ), line
    words = set(long.split()) | set(long.replace("node", "graph output").split())
    for cut in re.findall(r"(\S+)…", line):
        assert cut in words, (cut, line)  # a word kept whole before each ellipsis


# Defect: "where the body has no script, triage says 'no fenced Python block' and stops" (a maintainer's comment often
# has the minimal repro); and "'the script in this issue's description, run unchanged' must be true of what was run".
def test_the_first_script_in_a_comment_by_the_author_or_a_member_is_run_and_named():
    body = "Compiling a matmul of mismatched shapes fails with a TorchRuntimeError."  # no script of its own
    someone = ("someone", "NONE", "Same here:\n```python\nimport torch\nprint(torch.ones(1))\n```")
    member = ("dev", "MEMBER", "A minimal repro you can use to see if you fixed it:\n```python\n" + SCRIPT + "```")
    data = issue(body, comments=[someone, member])
    assert issue_script.reproducer(data) is None
    found = issue_script.reproducer_anywhere(data)
    assert found is not None and found.text == SCRIPT and found.where == "a comment by a maintainer (`dev`)"
    own = issue(body, comments=[someone, ("reporter", "NONE", "```python\n" + SCRIPT + "```")])
    assert issue_script.reproducer_anywhere(own).where == "a comment by the issue's author (`reporter`)"
    assert issue_script.reproducer_anywhere(issue(body, comments=[someone])) is None  # a bystander's script: not run
    forged = issue(body, comments=[("x](http://e.example) [y", "MEMBER", "```python\n" + SCRIPT + "```")])
    assert issue_script.reproducer_anywhere(forged).where == "a comment by a maintainer"  # no login not GitHub's named
    runs = [ran("2.13.0", *MATMUL), ran("2.15.0", status="pass")]
    t = triaged(data, runs, "2.13.0")
    t = triage_decide.decide(t.__class__(**{**t.__dict__, "script_from": found.where}), data)
    text = render(data, t, runs, "PyTorch version: 2.15.0")
    assert "the script from a comment by a maintainer (`dev`) fails with" in text
    assert "the script in the description" not in text
    assert "the Python blocks of a comment by a maintainer (`dev`) saved as `repro.py`" in text
    assert t.record_line().split(" [signature")[0].endswith("(the script from a comment by a maintainer (`dev`))")


def test_a_draft_names_the_commenter_without_notifying_them():
    """A posted draft said "from a comment by @dev": GitHub notifies @dev of every such comment. The login stays,
    in a code span (no notification there); the draft holds no @login outside one."""
    import re

    body = "Compiling a matmul of mismatched shapes fails with a TorchRuntimeError."
    for login, association in (("dev", "MEMBER"), ("reporter", "NONE")):
        data = issue(body, comments=[(login, association, "```python\n" + SCRIPT + "```")])
        found = issue_script.reproducer_anywhere(data)
        assert found is not None
        runs = [ran("2.13.0", *MATMUL), ran("2.15.0", status="pass")]
        t = triaged(data, runs, "2.13.0")
        t = triage_decide.decide(t.__class__(**{**t.__dict__, "script_from": found.where}), data)
        text = render(data, t, runs, "PyTorch version: 2.15.0")
        assert f"(`{login}`)" in text, text
        assert not re.search(r"@[A-Za-z0-9]", re.sub(r"`[^`\n]*`", "", text)), text


# Defect: "a nightly, dev or source build is never run, and nothing stands in for it".
def test_a_build_no_index_serves_is_stood_in_for_and_the_draft_says_which_release_for_which_build():
    source = build_stand_in.stand_in("2.10.0a0+git1a2b3c4", "2025-12-01T00:00:00Z")
    assert (source.before, source.became, source.kind) == ("2.9.1", "2.10.0", "source")
    nightly = build_stand_in.stand_in("2.15.0.dev20261001+cpu")
    assert (nightly.before, nightly.became, nightly.kind) == ("2.14.1", "2.15.0", "nightly")
    assert build_stand_in.stand_in("2.14.1") is None and build_stand_in.stand_in("main") is None
    data = issue(
        "It raises TorchRuntimeError.\n\n```python\n" + SCRIPT + "```\n\nPyTorch version: 2.10.0a0+git1a2b3c4\n"
    )
    # the release before it exits 0; the release it became fails as reported; the newest passes
    runs = [ran("2.9.1", status="pass"), ran("2.10.0", *MATMUL), ran("2.15.0", status="pass")]
    t = triage_observe.observe(data, runs[1], SCRIPT, False, "2.9.1", stand_in=source, stood_in=("2.9.1",))
    t = triage_decide.decide(triage_judge.judge(t, runs), data)
    body = render(data, t, runs, "PyTorch version: 2.15.0")
    assert (
        "On torch 2.10.0 (the release the source build 2.10.0a0+git1a2b3c4 became, which the issue reports; torch "
        "2.9.1, the last release before the source build 2.10.0a0+git1a2b3c4, exits 0) the script in the "
        "description fails with"
    ) in body, body
    # every stand-in exits 0: the newest is asked about alone, the stand-ins named
    passed = ran("2.15.0", status="pass")
    t = triage_observe.observe(
        data, passed, SCRIPT, False, "2.14.1", baseline_run=False, stand_in=nightly, stood_in=("2.14.1",)
    )
    assert t.standing.kind == DOES_NOT and t.standing.line().endswith(
        "(the nightly build 2.15.0.dev20261001+cpu the issue reports is served by no index; torch 2.14.1, standing in "
        "for it, exits 0 too)"
    ), t.standing.line()
    assert "torch 2.14.1, standing in for it, exits 0 too" in render(
        data, triage_decide.decide(t, data), [passed], "PyTorch version: 2.15.0"
    )


# Defect: "words left inside code spans" (a crash's own words, `crash (exit -11, signal SIGSEGV)`; "fails with exits -11").
def test_a_crash_and_eagers_error_read_as_sentences_with_only_torchs_words_in_code():
    data = issue(
        "The compiled call segfaults (SIGSEGV) where eager raises IndexError.\n\n```python\n" + SCRIPT + "```\n"
    )
    crash = TriageRun(
        "2.12.0", Observation(status="crash", exit_code=-11, signal="SIGSEGV", seconds=1.0, dynamo={"unique_graphs": 1})
    )
    now = ran("2.15.0", "IndexError", "index 5 is out of bounds for dimension 0 with size 2", stage="runtime")
    t = triage_observe.observe(data, crash, SCRIPT, False, "2.12.0")
    t = triage_decide.decide(triage_judge.judge(t, [crash, now], {"2.15.0": "as eager does"}), data)
    body = render(data, t, [crash, now], "PyTorch version: 2.15.0")
    assert "the script in the description crashes with SIGSEGV (exit -11); the issue is open." in body, body
    assert "it raises `IndexError: index 5 is out of bounds for dimension 0 with size 2`, as eager does." in body
    assert "| 2.12.0 | crash (exit -11, signal SIGSEGV) |" in body
    assert code_spans(body.split("| torch |")[1].split("<details>")[0]) == [
        "python repro.py",
        "IndexError: index 5 is out of bounds for dimension 0 with size 2",
    ], body


# Defect: two drafts of ordinary issues said only `AssertionError:` (torch's assert with an empty message), and a
# maintainer had to find which assertion failed before posting.
def test_an_assertion_with_an_empty_message_is_named_by_torchs_own_assert_line():
    log = (
        "Traceback (most recent call last):\n"
        '  File "repro.py", line 9, in <module>\n'
        "    compiled(x)\n"
        '  File "/venvs/2.8.0/lib/python3.11/site-packages/torch/_inductor/pattern_matcher.py", line 2192, in '
        "stable_topological_sort\n"
        "    assert not waiting and len(ready) == len(graph.nodes)\n"
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "AssertionError: \n"
    )
    data = issue("Compiling this crashes inside inductor.\n\n```python\n" + SCRIPT + "```\n")
    runs = [
        ran(
            "2.8.0",
            "torch._dynamo.exc.BackendCompilerFailed",
            "backend='inductor' raised:\nAssertionError: ",
            stage="inductor",
            log=log,
        ),
        ran("2.15.0", status="pass"),
    ]
    t = triaged(data, runs, "2.8.0")
    assert t.step is Step.DRAFTED and t.standing.kind == NO_LONGER, t.standing
    body = render(data, t, runs, "PyTorch version: 2.15.0")
    site = (
        "torch/_inductor/pattern_matcher.py, line 2192, in stable_topological_sort: "
        "assert not waiting and len(ready) == len(graph.nodes)"
    )
    assert f"`{site}`" in body, body
    assert "/venvs/" not in body  # the machine's folders are not torch's words
    row = next(line for line in body.splitlines() if line.startswith("| 2.8.0 |"))
    assert site in row, row
