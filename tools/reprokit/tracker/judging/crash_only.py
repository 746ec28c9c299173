"""An issue whose script just crashes, read as a maintainer reads it: the script prints no result, catches nothing and
asserts nothing, so torch's exception is its only way to fail, and the issue says the compiled call fails (in its title
or its prose). Where the issue quotes no error of its own (or names one only in prose, as words, never as a traceback's
or a log's exception line), the exception the run raises IS the failure it reports: "still reproduces", naming the
exception and saying the issue quoted none. Where it quotes an error line that the run does not confirm, the script
fails another way: "fails differently", both named. Pure: the issue, its script and the run's signature in, a verdict
or None out; only consulted where the issue's text does not confirm the observed signature (signature.confirmed_in)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.tracker.issue import exit_evidence
from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.issue.issue_reported import reported_failure
from reprokit.tracker.issue.issue_script import without_script
from reprokit.tracker.judging import signature as sig
from reprokit.tracker.judging.signature import Signature

# the issue's own words that the compiled call fails (a crash word alone is eager_fix.CRASH_WORDS' business)
FAILS = re.compile(
    r"\b(?:fail(?:s|ed|ing|ure)?|errors?|raises?|raised|throws?|exceptions?|crash(?:es|ed)?|breaks|broken)\b", re.I
)
# the same words denied ("runs without an error", "no exception", "does not crash"): they say it does not fail
DENIED = re.compile(
    r"(?:\b(?:no|without(?: an?| any)?|never|not)|n't)\s+(?:\w+\s+)?"
    r"(?:fail(?:s|ed|ing|ure)?|errors?|raises?|raised|throws?|exceptions?|crash(?:es|ed)?|breaks)\b",
    re.I,
)


@dataclass(frozen=True)
class CrashReading:
    """How a crash-only script's exception stands to the issue: `quoted` is the error line the issue quotes where it
    differs from the run's ("" where the issue quotes none: the run's exception is the reported failure)."""

    quoted: str = ""

    @property
    def same(self) -> bool:
        return not self.quoted

    def confirmed(self, found: Signature) -> str:
        return (
            f"the issue says the compiled call fails and quotes no error; the script's only way to fail is torch's "
            f"exception, so {found.exception} is the failure it reports"
        )


def only_crashes(script: str) -> bool:
    """No print of a result, no try/except around the compiled call, no assert: its exit status is torch's."""
    return exit_evidence.of(script, reports_error=False) is exit_evidence.ExitEvidence.RAISES


def reading(issue: Issue, script: str, found: Signature) -> CrashReading | None:
    """The verdict for a raising run the issue's text does not confirm, or None where this rule says nothing (the
    script can fail some other way, or the issue does not say that it fails)."""
    if found.kind != sig.RAISES or not only_crashes(script):
        return None
    quoted = reported_failure(issue)
    if quoted is not None:
        return CrashReading(quoted.line())
    if not FAILS.search(DENIED.sub(" ", "\n".join(without_script(issue)))):
        return None
    return CrashReading()
