"""The words of a triage: the standings, one run of the issue's script on one release, and the comment that says what
the runs showed. Pure: the issue, the triage (issue_lifecycle.Triage) and the runs in, Markdown out.

- `still reproduces`: the newest release run fails with the signature observed on the reported release;
- `no longer reproduces`: the newest release run passes (or, for an issue asking for an error, now raises one);
- `fails differently`: it fails another way (both failures named, no claim either way);
- `not posted: <reason>`: nothing to post (the thread decided, the reported release does not fail either, the run
  cannot say, the numerics cannot be judged, or the standing agrees with the issue's state)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.model.issue_states import StandingKind
from reprokit.model.records import RunStatus
from reprokit.model.untrusted_text import plain
from reprokit.run.execute import Observation
from reprokit.tracker.text.bug_text import OWN_WORDS, code_span, fence
from reprokit.tracker.text.clipped import clipped
from reprokit.tracker.text.traceback_text import headline
from reprokit.tracker.text.user_paths import as_user_sees

# The standings, one typed vocabulary (model/issue_states.StandingKind); DOES_NOT: the script exits 0 on a release newer
# than the reported one, which was not run.
STILL, NO_LONGER, DIFFERENT, DOES_NOT, NOT_POSTED = (StandingKind.STILL, StandingKind.NO_LONGER,
                                                     StandingKind.DIFFERENT, StandingKind.DOES_NOT,
                                                     StandingKind.NOT_POSTED)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class TriageRun:
    """The issue's script on one torch release: its observation, or why it could not run there."""

    release: str
    obs: Observation | None
    why: str = ""
    log: str = ""  # stderr as `python repro.py` prints it (paths of ours rewritten)


@dataclass(frozen=True)
class TriageStanding:
    """A standing as data (its kind, the releases it states) and the words after the kind; `line()` is the sentence
    issue-states.yaml keeps beside the data."""

    kind: StandingKind
    detail: str
    # STILL: the releases failing as observed; NO_LONGER: those passing (or raising the asked-for error) up to the
    # newest; DOES_NOT: the one that exits 0; DIFFERENT: the newest, failing another way; NOT_POSTED: none
    releases: tuple[str, ...] = ()

    def line(self) -> str:
        return f"{self.kind}: {self.detail}" if self.kind == NOT_POSTED else f"{self.kind} {self.detail}".rstrip()


def observed_line(obs: Observation | None) -> str:
    if obs is None:
        return "not run"
    if obs.status == RunStatus.PASS:
        return "exits 0"
    if obs.exception:  # the message as the user sees it: no path of this machine (its home, caches, host name)
        name, said = obs.exception.rsplit(".", 1)[-1], headline(as_user_sees(obs.message or ""))
        return clipped(f"{name}: {said}", 200) if said else name
    return f"{obs.status} (exit {obs.exit_code}, signal {obs.signal})"


def one_line(text: str, limit: int = 200) -> str:
    """Someone else's words (a title, a state reason) as one plain line: no control or direction characters."""
    return " ".join(_CONTROL.sub(" ", plain(text or "")).split())[:limit]


# GitHub's closing reasons, in words: nothing of the issue's own stateReason string reaches the comment.
STATE_REASONS = {"COMPLETED": "completed", "NOT_PLANNED": "not planned", "DUPLICATE": "duplicate",
                 "REOPENED": "reopened"}


def state_words(issue) -> str:
    if not issue.closed:
        return "open"
    return f"closed ({STATE_REASONS.get((issue.state_reason or '').upper(), 'no reason given')})"


def _lead_unrun(t, state: str) -> str:
    """The first lines where the reported release was not run: what this release did, as a question."""
    if t.stand_in is not None:
        unrun = t.stand_in.unrun_words(t.stood_in)
    elif t.reported and t.reported_by_date:
        unrun = (f"the issue names no release; torch {t.reported}, the newest when it was opened "
                 f"({t.reported_by_date}), was not run here")
    elif t.reported:
        unrun = f"the issue reports torch {t.reported}, which was not run here"
    else:
        unrun = "the issue names no release, and none older was run here"
    if t.standing.kind == DOES_NOT:
        return (f"The script in the description runs without error on torch {t.observed_on} ({unrun}); the issue is "
                f"{state}. Its exit status would show the failure: {t.exit_says}. Is this fixed, and can the issue "
                "be closed?")
    if t.standing.kind == NO_LONGER:
        said = t.judged[-1].line if t.judged else ""
        return (f"On torch {t.observed_on} the script in the description now raises {code_span(said)} ({unrun}); "
                f"the issue is {state}. Is this the error the issue asks for, and can it be closed?")
    return (f"On torch {t.observed_on} the script in the description fails with {code_span(t.signature.line())} "
            f"({unrun}); the issue is {state}.")


def _lead(issue, t) -> str:
    state = state_words(issue)
    if not t.baseline_run:
        return _lead_unrun(t, state)
    if t.stand_in is not None:
        before = "".join(f"; torch {r}, {t.stand_in.role(r)}, exits 0" for r in t.stood_in)
        on = f"torch {t.observed_on} ({t.source()}{before})"
    elif t.observed_on != t.reported:
        on = f"torch {t.observed_on} ({t.source()}; the nearest release run here)"
    elif t.reported_by_date:
        on = f"torch {t.observed_on} (the issue names no release: the newest when it was opened, {t.reported_by_date})"
    else:
        on = f"torch {t.observed_on}, the release it reports,"
    seen = ("finishes without the error the issue asks for" if t.accepts and t.signature.kind == "passes"
            else f"fails with {code_span(t.signature.line())}")
    first = f"On {on} the script in the description {seen}; the issue is {state}."
    runs = [j for j in t.judged if j.outcome != "not run"]
    if t.standing.kind == STILL:
        return f"{first} It still does on every release run since, up to torch {runs[-1].release}."
    if t.standing.kind == NO_LONGER:
        return f"{first} It no longer does {t.standing.detail}."
    return (f"{first} Torch {runs[-1].release} fails another way: {code_span(runs[-1].line)}; this says nothing "
            "either way about the bug.")


_LOG_LINE = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d[.\d]*\s+\d+\s+\S+:\d+\].*\n?", re.M)


def _error_log(log: str) -> str:
    """stderr without torch's logging lines (glog-style, such as fake tensor's), which repeat the traceback."""
    kept = _LOG_LINE.sub("", log).strip()
    return kept or log.strip()


def _cell(text: str) -> str:
    """A table cell: a code span whose `|` is escaped (GitHub's tables split on it, code spans included)."""
    return code_span(text).replace("|", "\\|")


def render(issue, t, runs: list[TriageRun], versions: str, extra: tuple[str, ...] | list[str] = ()) -> str:
    """The comment: the poster's own words first, then the facts of the runs."""
    rows = ["| torch | `python repro.py` |", "| --- | --- |",
            *[f"| {r.release} | {_cell(r.why or observed_line(r.obs))} |" for r in runs]]
    newest = next((r for r in reversed(runs) if r.obs is not None), None)
    log = _error_log(newest.log) if newest else ""
    return "\n".join([
        OWN_WORDS, "", _lead(issue, t), "",
        "Run unchanged (the description's Python blocks saved as `repro.py`, `python repro.py` with only torch "
        "installed, each release in its own environment):", "", *rows, "", *extra,
        *([f"<details><summary>Error log (torch {newest.release})</summary>", "", fence(log), "", "</details>", ""]
          if newest and log else []),
        "<details><summary>Versions</summary>", "", fence(versions), "", "</details>", ""])
