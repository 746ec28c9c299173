"""What a new-issue report says besides the run: the history per error from the results store, the regression and
the expected behaviour in one line, the workaround that `fixed.py` holds, the related issues found by searching."""

from __future__ import annotations

import re
from pathlib import Path

from reprokit.contrib import case_files
from reprokit.model.corpus import CaseDir
from reprokit.model.records import RunStatus
from reprokit.model.schema import InputError
from reprokit.store.store import Loaded
from reprokit.store.views import releases
from reprokit.tracker.drafting.issue_fields import Failure
from reprokit.tracker.issue import issue_search
from reprokit.tracker.judging import signature
from reprokit.tracker.text.bug_text import code_span
from reprokit.tracker.text.release_summary import ReleaseHistory
from reprokit.tracker.text.standalone import standalone
from reprokit.tracker.text.traceback_text import headline

REGRESSION_LABEL = "module: regression"


def errors_by_release(loaded: Loaded, target: str, case_id: str, dtype: str) -> dict[str, str]:
    """release -> 'Class: first line' of what the repro raised there (in the report's dtype), from the store."""
    found = {}
    for release, records in releases(loaded, target, "cases").items():
        rec = next((r for r in records if r.case == case_id and r.variant == "repro" and r.dtype == dtype), None)
        if rec is not None and rec.exception:
            found[release] = f"{rec.exception.rsplit('.', 1)[-1]}: {headline(rec.message)}"[:160]
    return found


FULLGRAPH = re.compile(r"^[^#\n]*\bfullgraph\s*=\s*True", re.M)
GRAPH_BREAK_ERRORS = ("Unsupported", "UserError")  # the errors torch documents for what fullgraph=True cannot trace


def expected(failure: Failure, history: ReleaseHistory, script: str = "") -> str:
    """The expected behaviour, one line; under fullgraph=True a dynamo failure's expected outcome is the clean
    graph-break error, not eager's result."""
    if (
        failure.compiles
        and failure.component == "dynamo"
        and FULLGRAPH.search(script)
        and failure.short_exception not in GRAPH_BREAK_ERRORS
    ):
        earlier = history.error_change()
        was = (
            f", as torch {earlier[1]} raised ({code_span(earlier[2])})"
            if earlier and earlier[2] in GRAPH_BREAK_ERRORS
            else ""
        )
        return (
            f"Expected: under `fullgraph=True`, a clean graph-break error naming what Dynamo cannot trace "
            f"(`torch._dynamo.exc.Unsupported` or `UserError`){was}, not {code_span(failure.short_exception)}."
        )
    if reg := history.regression():
        return f"Expected: `python repro.py` exits 0, as it does on torch {reg[0]} (a regression in {reg[1]})."
    if failure.own_check and failure.compiles:
        return "Expected: the compiled result equals eager's within the script's tolerance (its own check passes)."
    if failure.obs.status == RunStatus.TIMEOUT:
        return "Expected: `python repro.py` finishes, as it does without torch.compile."
    if failure.exports:
        return f"Expected: the program exports and runs without {code_span(failure.short_exception)}."
    if failure.compiles:
        return f"Expected: the compiled call runs as eager does, without {code_span(failure.short_exception)}."
    return "Expected: `python repro.py` exits 0."


def workaround(cd: CaseDir, device: str, dtype: str) -> str | None:
    """fixed.py as a plain script (the run's device and dtype written in), when the case has one."""
    text = case_files.read_optional(cd.path, "fixed.py")
    if text is None:
        return None
    try:
        return standalone(text, device, dtype)
    except InputError:
        return None


def searched(failure: Failure, key: str, search_json: Path | None) -> issue_search.Searched:
    """The search on torch's own error text and on the failing operator (run once: it refuses duplicates and is
    listed in the report)."""
    return issue_search.search([key, issue_search.failing_op(failure.obs.message or "") or ""], search_json)


def duplicates(failure: Failure, found: issue_search.Searched) -> list[issue_search.Found]:
    """Open issues that already report this failure (same exception and operator, or most of its message)."""
    message = signature.skeleton(failure.obs.message)
    words = set(re.findall(r"[a-z][a-z_]{2,}", re.sub(r"'[^']*'", " ", message.lower())))
    return issue_search.duplicates(
        found, failure.short_exception, issue_search.failing_op(failure.obs.message or ""), words
    )


def regression_title(title: str, history: ReleaseHistory) -> str:
    reg = history.regression()
    return f"[regression {reg[1]}, {reg[0]} works] {title}"[:200] if reg else title
