"""The fix an issue that reports a crash, a silent acceptance or an internal compiler error asks for: the compiled
call raising the error eager raises (the same class, or the class the issue names). Pure: the classes in, a yes or no
out; the run with torch.compile disabled that says what eager raises is triage_runs'."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.issue.issue_reported import reported_failure
from reprokit.tracker.issue.issue_script import without_script
from reprokit.tracker.judging import signature as sig

CRASH_WORDS = re.compile(
    r"\b(segfault|segmentation fault|SIGSEGV|SIGABRT|core dumped|abort(?:ed|s)?|crash(?:es|ed)?|"
    r"illegal (?:memory|instruction))\b",
    re.I,
)
# torch's errors that stand for "the compiler broke", which the error eager raises replaces when it is fixed
INTERNAL = (
    "InternalTorchDynamoError",
    "BackendCompilerFailed",
    "InductorError",
    "LoweringException",
    "CppCompileError",
    "TorchRuntimeError",
)


def complains_of_compiler(issue: Issue, accepts: bool) -> bool:
    """The issue reports a crash, a silent acceptance (it asks for an error) or an internal compiler error: then the
    error eager raises, raised by the compiled call, is its fix."""
    texts = "\n".join([issue.title, issue.body, *(c.body for c in issue.comments)])
    failure = reported_failure(issue)
    return accepts or bool(CRASH_WORDS.search(texts)) or (failure is not None and failure.short in INTERNAL)


# Dynamo's wrapper of an error its fake-tensor run raised: the same error eager raises, reported at compile time.
WRAPPERS = ("TorchRuntimeError",)


@dataclass(frozen=True)
class EagerError:
    """What the script raises with torch.compile disabled: the class's short name and its message's first line."""

    name: str
    message: str


def eager_fixed(
    issue: Issue,
    signature_kind: sig.SignatureKind,
    exception: str,
    accepts: bool,
    eager: EagerError | None,
    before: str = "",
    message: str = "",
) -> str | None:
    """How a run that raises `exception` (`message`) is the fix the issue asked for, in words, or None: the issue
    reports a crash (a signal), a silent acceptance or an internal error (`before`: the class the signature raised),
    and the compiled call now raises what eager raises: the same class, the class the issue names, or Dynamo's
    wrapper of eager's very error."""
    if not exception:
        return None
    complains = signature_kind is sig.EXITS or before in INTERNAL or complains_of_compiler(issue, accepts)
    if not complains:
        return None
    if exception in WRAPPERS and eager is not None and len(eager.message) >= 12 and eager.message in message:
        return f"wrapping the {eager.name} eager raises"
    if exception in INTERNAL:
        return None
    named = bool(re.search(rf"(?<![\w]){re.escape(exception)}\b", "\n".join(without_script(issue))))
    return "as eager does" if (eager is not None and exception == eager.name) or named else None
