"""The comment a triage drafts on a pytorch/pytorch issue, made to be posted as it stands once the poster has written
their own words on its first line: torch's messages as torch printed them (inside code spans, and nothing else is),
each said once; which release stood in for which build; "since" only where the releases between were run; on a closed
issue, when the release the comment is about came out against the day it was closed. Pure: the issue, the triage
(issue_lifecycle.Triage) and the runs in, Markdown out."""

from __future__ import annotations

import re
import signal

from reprokit.tracker.issue import release_dates
from reprokit.tracker.judging import signature as sig
from reprokit.tracker.judging.triage_standing import (
    DIFFERENT,
    DOES_NOT,
    NO_LONGER,
    STILL,
    TriageRun,
    observed_line,
    one_line,
    state_words,
)
from reprokit.tracker.text.bug_text import OWN_WORDS, code_span, fence
from reprokit.tracker.text.traceback_text import assertion_site, says_nothing

SAME_WAY = "fails the same way"
_SIGNALS = {s.value: s.name for s in signal.Signals}
_LOG_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d[.\d]*\s+\d+\s+\S+:\d+\].*\n?", re.M)


def _span(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"


def _script(t) -> str:
    return "the script in the description" if t.script_from == "the description" else f"the script from {t.script_from}"


def _fails(signature) -> str:
    """How the signature's run failed, as a verb phrase in Markdown: torch's error in a code span, our words outside."""
    if signature.kind is sig.RAISES:
        at = f", its message empty, from {code_span(signature.assertion)}" if signature.assertion else ""
        return f"fails with {code_span(signature.error())}" + (f" in {signature.stage}" if signature.stage else "") + at
    if signature.stage == "timeout":
        return "runs past its time limit"
    code = signature.exit_code
    if code is not None and code < 0 and -code in _SIGNALS:
        return f"crashes with {_SIGNALS[-code]} (exit {code})"
    return f"exits {code} without raising"


def _raised(j) -> str:
    return code_span(j.line) + (f", {j.fix}" if j.fix else "")


def _unrun(t) -> str:
    if t.stand_in is not None:
        return t.stand_in.unrun_words(t.stood_in)
    if t.reported and t.reported_by_date:
        return (
            f"the issue names no release; torch {t.reported}, the newest when it was opened "
            f"({t.reported_by_date}), was not run here"
        )
    if t.reported:
        return f"the issue reports torch {t.reported}, which was not run here"
    return "the issue names no release, and none older was run here"


def _lead_unrun(issue, t, state: str) -> str:
    """The first lines where the reported release was not run: what this release did, as a question."""
    script, unrun = _script(t), _unrun(t)
    if t.standing.kind == DOES_NOT:
        return (
            f"{script[0].upper()}{script[1:]} runs without error on torch {t.observed_on} ({unrun}); the issue is "
            f"{state}. Its exit status would show the failure: {t.exit_says}. Is this fixed, and can the issue "
            "be closed?"
        )
    if t.standing.kind == NO_LONGER and t.judged:
        return (
            f"On torch {t.observed_on} {script} now raises {_raised(t.judged[-1])} ({unrun}); the issue is "
            f"{state}. Is this the error the issue asks for, and can it be closed?"
        )
    return f"On torch {t.observed_on} {script} {_fails(t.signature)} ({unrun}); the issue is {state}." + _against_close(
        issue, t.observed_on
    )


def _on(t) -> str:
    if t.stand_in is not None:
        before = "".join(f"; torch {r}, {t.stand_in.role(r)}, exits 0" for r in t.stood_in)
        return f"torch {t.observed_on} ({t.source()}{before})"
    if t.observed_on != t.reported:
        return f"torch {t.observed_on} ({t.source()}; the nearest release run here)"
    if t.reported_by_date:
        return (
            f"torch {t.observed_on} (the issue names no release: the newest when it was opened, {t.reported_by_date})"
        )
    return f"torch {t.observed_on}, the release it reports,"


def _no_longer(t, runs) -> str:
    newest = runs[-1]
    how = "the script exits 0" if newest.outcome is sig.GOOD else f"it raises {_raised(newest)}"
    stretch = list(t.standing.releases) or [newest.release]
    last_bad = next((j.release for j in reversed(runs) if j.outcome is sig.SAME and j.release not in stretch), None)
    if last_bad is None:
        return f"It no longer does on any release run from torch {_span(stretch)}: {how}."
    if t.unrun_between:
        return (
            f"It no longer does on torch {_span(stretch)}: {how}. It was fixed after torch {last_bad}; the "
            f"releases between ({_span(t.unrun_between)}) were not run (`reprokit triage --since` bisects them)."
        )
    return f"It no longer does since torch {stretch[0]}, the release after {last_bad}: {how}."


def _against_close(issue, release: str) -> str:
    """On a closed issue: the day `release` was published, against the day the issue was closed."""
    published = release_dates.published().get(release.split("+")[0], "")
    closed = issue.closed_at[:10]
    if not (issue.closed and published and closed):
        return ""
    when = "after" if published > closed else "the day" if published == closed else "before"
    return f" Torch {release} was published on {published}, {when} the issue was closed on {closed}."


def _lead(issue, t) -> str:
    state = state_words(issue)
    if not t.baseline_run:
        return _lead_unrun(issue, t, state)
    seen = (
        "finishes without the error the issue asks for"
        if t.accepts and t.signature.kind is sig.PASSES
        else _fails(t.signature)
    )
    first = f"On {_on(t)} {_script(t)} {seen}; the issue is {state}."
    runs = [j for j in t.judged if j.outcome is not sig.NOT_RUN]
    if t.standing.kind == STILL:
        failing = [j.release for j in runs if j.outcome is sig.SAME]
        return f"{first} It still does on every release run since, up to torch {runs[-1].release}." + _against_close(
            issue, failing[-1]
        )
    if t.standing.kind == NO_LONGER:
        return f"{first} {_no_longer(t, runs)}" + _against_close(issue, t.standing.releases[0])
    if t.standing.kind == DIFFERENT and t.quoted_other:  # the script never raised what the issue quotes
        return (
            f"{first} The issue quotes {code_span(t.quoted_other)}, which no release run here raised (newest run: "
            f"torch {runs[-1].release}); this says nothing either way about the bug."
        )
    if t.standing.kind == DIFFERENT:
        return (
            f"{first} Torch {runs[-1].release} fails another way: {code_span(runs[-1].line)}; this says nothing "
            "either way about the bug."
        )
    return first


def _error_log(log: str) -> str:
    """stderr without torch's logging lines (glog-style, such as fake tensor's), which repeat the traceback."""
    kept = _LOG_LINE.sub("", log).strip()
    return kept or log.strip()


def _cell(t, r: TriageRun) -> str:
    """One release's cell: torch's own line in a code span (`|` escaped: GitHub's tables split on it, code spans
    included), our words outside any; a later run failing as the signature says so instead of repeating it."""
    if r.why or r.obs is None:
        return one_line(r.why or "not run").replace("|", "\\|")
    j = next((j for j in t.judged if j.release == r.release), None)
    if j is not None and j.outcome is sig.SAME and r.release != t.observed_on and t.signature.kind is sig.RAISES:
        return f"{SAME_WAY} as on {t.observed_on}"
    said = observed_line(r.obs)
    if not r.obs.exception:  # exits 0, a crash, a timeout: our words for how the process ended
        return said
    site = assertion_site(r.log) if says_nothing(said) else ""  # an empty message: torch's failed assert
    at = f" from {code_span(site)}" if site else ""
    return (code_span(said) + at + (f", {j.fix}" if j is not None and j.fix else "")).replace("|", "\\|")


def render(issue, t, runs: list[TriageRun], versions: str, extra: tuple[str, ...] | list[str] = ()) -> str:
    """The comment: the poster's own words first, then the facts of the runs."""
    rows = ["| torch | `python repro.py` |", "| --- | --- |", *[f"| {r.release} | {_cell(t, r)} |" for r in runs]]
    blocks = (
        "the description's Python blocks"
        if t.script_from == "the description"
        else f"the Python blocks of {t.script_from}"
    )
    newest = next((r for r in reversed(runs) if r.obs is not None), None)
    log = _error_log(newest.log) if newest else ""
    return "\n".join(
        [
            OWN_WORDS,
            "",
            _lead(issue, t),
            "",
            f"Run unchanged ({blocks} saved as `repro.py`, `python repro.py` with only torch installed, each release in "
            "its own environment):",
            "",
            *rows,
            "",
            *extra,
            *(
                [
                    f"<details><summary>Error log (torch {newest.release})</summary>",
                    "",
                    fence(log),
                    "",
                    "</details>",
                    "",
                ]
                if newest and log
                else []
            ),
            "<details><summary>Versions</summary>",
            "",
            fence(versions),
            "",
            "</details>",
            "",
        ]
    )
