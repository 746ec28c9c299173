"""The words of a triage: the standings and one run of the issue's script on one release (the comment that says what
the runs showed is drafting/triage_comment.py). Pure.

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
from reprokit.tracker.text.clipped import clipped
from reprokit.tracker.text.traceback_text import headline
from reprokit.tracker.text.user_paths import as_user_sees

# The standings, one typed vocabulary (model/issue_states.StandingKind); DOES_NOT: the script exits 0 on a release newer
# than the reported one, which was not run.
STILL, NO_LONGER, DIFFERENT, DOES_NOT, NOT_POSTED = (
    StandingKind.STILL,
    StandingKind.NO_LONGER,
    StandingKind.DIFFERENT,
    StandingKind.DOES_NOT,
    StandingKind.NOT_POSTED,
)
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
STATE_REASONS = {
    "COMPLETED": "completed",
    "NOT_PLANNED": "not planned",
    "DUPLICATE": "duplicate",
    "REOPENED": "reopened",
}


def state_words(issue) -> str:
    if not issue.closed:
        return "open"
    return f"closed ({STATE_REASONS.get((issue.state_reason or '').upper(), 'no reason given')})"
