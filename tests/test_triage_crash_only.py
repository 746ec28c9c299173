"""Triage of an issue whose script just crashes (prints, catches and asserts nothing: torch's exception is its only way
to fail) and still raises, on issues of our own words (judging/crash_only.py): an issue that says the compiled call
fails and quotes no error is told "still reproduces" with the exception named, and no comment while it is open; one
that quotes another error is told "fails differently"."""

from reprokit.tracker.drafting import triage_comment
from reprokit.tracker.issue import issue_json
from reprokit.tracker.judging import crash_only, signature, triage_decide, triage_judge, triage_observe
from reprokit.tracker.judging.issue_lifecycle import Step
from reprokit.tracker.judging.triage_standing import DIFFERENT, NOT_POSTED, STILL
from test_triage_rules import ran

CRASHES = (
    "import torch\n\n\n@torch.compile(fullgraph=True)\ndef grow(x):\n    return torch.cat([x, x.nonzero()])\n\n\n"
    "grow(torch.ones(4))\n"
)
PRINTS = CRASHES.replace("grow(torch.ones(4))", "print(grow(torch.ones(4)))")
RAISED = ("torch._dynamo.exc.TorchRuntimeError", "Dynamo failed to run FX node with fake tensors: call_function cat")


def issue(body, title="compiling a concatenation with nonzero breaks", state="OPEN"):
    return issue_json.parse(
        {"number": 7, "title": title, "body": body, "state": state, "stateReason": "", "closedAt": None, "comments": []}
    )


def triaged(data, runs, script=CRASHES, **kw):
    t = triage_observe.observe(data, runs[0], script, False, "2.13.0", **kw)
    if t.step is Step.OBSERVED:
        t = triage_judge.judge(t, runs)
    return triage_decide.decide(t, data)


STILL_RUNS = [ran(r, exception=RAISED[0], message=RAISED[1]) for r in ("2.13.0", "2.15.0")]


# Defect: an open issue quoting no error whose crash-only script still raises read "not posted: ... which the issue's
# text does not mention: not the failure it reports" (pytorch #194103, #193809).
def test_an_issue_quoting_no_error_whose_crash_only_script_still_raises_still_reproduces():
    data = issue("Under torch.compile the call fails; eager is fine.\n\n```python\n" + CRASHES + "```\n")
    t = triaged(data, STILL_RUNS)
    assert t.standing.kind == STILL and not t.post, t.standing.line()
    line = t.standing.line()
    assert line.startswith("still reproduces on torch 2.13.0..2.15.0 (newest run: 2.15.0): TorchRuntimeError"), line
    assert "the issue quotes no error" in line and line.endswith("the issue is open: it agrees, no comment"), line
    # with --here: the newest alone, judged the same way
    t = triaged(data, STILL_RUNS[1:], baseline_run=False)
    assert t.standing.kind == STILL and not t.post, t.standing.line()


def test_the_rule_needs_a_crash_only_script_and_an_issue_saying_it_fails():
    said = issue("Under torch.compile the call fails; eager is fine.\n\n```python\n" + PRINTS + "```\n")
    t = triaged(said, STILL_RUNS, script=PRINTS)  # a script printing its result may fail by its values instead
    assert t.step is Step.NO_COMMENT and "not the failure it reports" in t.standing.detail, t.standing.line()
    silent = issue("Here is what I ran.\n\n```python\n" + CRASHES + "```\n", title="concatenation with nonzero")
    t = triaged(silent, STILL_RUNS)
    assert t.step is Step.NO_COMMENT and t.standing.kind == NOT_POSTED, t.standing.line()
    assert crash_only.reading(silent, CRASHES, signature.of(STILL_RUNS[0].obs)) is None
    denied = issue(
        "It runs without an error and doesn't crash, but the values are off.\n\n```python\n" + CRASHES + "```\n",
        title="concatenation with nonzero gives other values",
    )
    assert crash_only.reading(denied, CRASHES, signature.of(STILL_RUNS[0].obs)) is None
    said_fails = issue("It runs without an error in eager, but compiled it fails.\n\n```python\n" + CRASHES + "```\n")
    assert crash_only.reading(said_fails, CRASHES, signature.of(STILL_RUNS[0].obs)).same


def test_an_issue_quoting_another_error_fails_differently_and_says_nothing_once_it_passes():
    quoted = '```\nTraceback (most recent call last):\n  File "x.py", line 3\nIndexError: index 4 is out of bounds\n```'
    data = issue("The compiled call fails:\n\n```python\n" + CRASHES + "```\n\n" + quoted)
    t = triaged(data, STILL_RUNS)
    assert t.standing.kind == DIFFERENT and t.post, t.standing.line()
    assert t.standing.line() == (
        "fails differently (the issue quotes IndexError: index 4 is out of bounds; on torch 2.13.0..2.15.0: "
        "TorchRuntimeError: Dynamo failed to run FX node with fake tensors: call_function cat)"
    )
    body = triage_comment.render(data, t, STILL_RUNS, "PyTorch version: 2.15.0")
    assert "The issue quotes `IndexError: index 4 is out of bounds`, which no release run here raised" in body
    t = triaged(data, [STILL_RUNS[0], ran("2.15.0", "pass")])
    assert t.step is Step.NO_COMMENT and "the quoted failure was never seen here" in t.standing.detail, t
