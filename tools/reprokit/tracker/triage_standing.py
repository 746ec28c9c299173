"""Where an issue stands after its own script ran on each release, and the comment that says so. Pure: the issue and
the runs in, one standing and Markdown out.

- `still reproduces`: the newest release run raises the exception class the issue reports, with its message;
- `no longer reproduces`: the script exits 0 on the newest release (since the first good one after the last bad);
- `fails differently`: it fails, not the way the issue reports (no claim either way);
- `not posted: <reason>`: the issue's context or the run says there is nothing to post (closed as not planned, a
  maintainer's "expected", documented behaviour, a mismatch the fp64 reference does not call wrong, no script)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.run.execute import Observation
from reprokit.tracker.bug_text import OWN_WORDS, code_span, fence
from reprokit.tracker.issue_json import Issue, Reported
from reprokit.tracker.not_a_bug import UNKNOWN_NAME
from reprokit.tracker.traceback_text import headline

STILL, NO_LONGER, DIFFERENT, NOT_POSTED = "still reproduces", "no longer reproduces", "fails differently", "not posted"
SAME, PASSES, OTHER, NOT_RUN = "same", "passes", "other", "not run"
WORD = re.compile(r"[a-z_][a-z_.]{2,}")
SAME_WORDS = 0.7  # of the reported message's words that the observed message must hold
# torch's own words when the failure is the behaviour it documents (it names what to use instead)
DOCUMENTED = (re.compile(r"This graph break is fundamental"), re.compile(r"\bmaybe_mark_dynamic\b"))
CHECKS = re.compile(r"^\s*(assert\b|raise\b)|assert_close|\.allclose\(|sys\.exit\(", re.M)  # the script can fail
NO_CUDA = re.compile(r"Torch not compiled with CUDA enabled|Found no NVIDIA driver|No CUDA GPUs are available")


@dataclass(frozen=True)
class Ran:
    """The issue's script on one torch release: its observation, or why it could not run there."""

    release: str
    obs: Observation | None
    why: str = ""
    log: str = ""  # stderr as `python repro.py` prints it (paths of ours rewritten)


@dataclass(frozen=True)
class Standing:
    kind: str  # STILL | NO_LONGER | DIFFERENT | NOT_POSTED
    detail: str

    def line(self) -> str:
        return f"{self.kind}: {self.detail}" if self.kind == NOT_POSTED else f"{self.kind} {self.detail}".rstrip()


def _words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def same_message(reported: str, observed: str) -> bool:
    """Most words of the reported message's first line are in the observed message (numbers, sizes and names of
    temporaries change between releases; the words torch says do not)."""
    wanted = _words(headline(reported))
    return not wanted or len(wanted & _words(observed)) >= SAME_WORDS * len(wanted)


def outcome(reported: Reported | None, obs: Observation | None) -> str:
    if obs is None or obs.exit_code == 77:
        return NOT_RUN
    if obs.status == "pass":
        return PASSES
    if reported is None or (obs.exception or "").rsplit(".", 1)[-1] != reported.short:
        return OTHER
    return SAME if same_message(reported.message, obs.message or "") else OTHER


def observed_line(obs: Observation | None) -> str:
    if obs is None:
        return "not run"
    if obs.status == "pass":
        return "exits 0"
    if obs.exception:
        return f"{obs.exception.rsplit('.', 1)[-1]}: {headline(obs.message)}"[:200]
    return f"{obs.status} (exit {obs.exit_code}, signal {obs.signal})"


def _spans(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}"


def standing(issue: Issue, reported: Reported | None, runs: list[Ran], script: str = "") -> Standing:
    """The standing from the runs, oldest release first (the last is the newest release run)."""
    ran = [(r, outcome(reported, r.obs)) for r in runs if outcome(reported, r.obs) != NOT_RUN]
    if not ran:
        whys = "; ".join(f"{r.release}: {r.why or observed_line(r.obs)}" for r in runs)
        return Standing(NOT_POSTED, f"the script ran on no release ({whys})")
    newest, now = ran[-1]
    if newest.obs and NO_CUDA.search(newest.obs.message or ""):
        return Standing(NOT_POSTED, f"the script needs CUDA, which torch {newest.release} here lacks")
    for pattern in UNKNOWN_NAME:  # torch's words for a name it does not have: the script needs another release
        if now != PASSES and newest.obs and (m := pattern.search(newest.log or newest.obs.message or "")):
            return Standing(NOT_POSTED, f"the script uses what torch {newest.release} does not have ({m.group(0)}): "
                                        "it needs the release it was written for")
    for pattern in DOCUMENTED:
        if now != PASSES and newest.obs and (m := pattern.search(newest.obs.message or "")):
            return Standing(NOT_POSTED, f"documented behaviour: torch {newest.release}'s own message says "
                                        f"{m.group(0)!r} ({observed_line(newest.obs)})")
    if now == SAME:
        same = [r.release for r, o in ran if o == SAME]
        return Standing(STILL, f"on torch {_spans(same)} (newest run: {newest.release}): "
                               f"{observed_line(newest.obs)}")
    if now == PASSES and reported is None and not CHECKS.search(script):
        return Standing(NOT_POSTED, "the issue names no exception and its script checks nothing (no assert or raise): "
                                    f"exiting 0 on torch {newest.release} says nothing about the bug")
    if now == PASSES:
        stretch = []
        for r, o in reversed(ran):
            if o != PASSES:
                return Standing(NO_LONGER, f"since {stretch[0]} (first good; last bad {r.release}: "
                                           f"{observed_line(r.obs)})")
            stretch.insert(0, r.release)
        return Standing(NO_LONGER, f"on any release run ({_spans(stretch)})")
    said = reported.line() if reported else "no exception in the issue's text"
    return Standing(DIFFERENT, f"(reported {said}; observed on torch {newest.release}: {observed_line(newest.obs)}): "
                               "no claim either way")


def _lead(issue: Issue, st: Standing, reported: Reported | None) -> str:
    state = f"closed ({issue.state_reason.lower()})" if issue.closed else "open"
    said = f"the {code_span(reported.line())} it reports" if reported else "no exception in its text"
    if st.kind == STILL:
        return (f"The script in this issue's description still fails the way it reports ({said}) on the newest "
                f"release run; the issue is {state}.")
    if st.kind == NO_LONGER:
        return (f"The script in this issue's description no longer fails: it exits 0 {st.detail}; the issue is "
                f"{state}.")
    return (f"The script in this issue's description fails, but not the way it reports ({said}): this says nothing "
            "either way about the bug itself.")


def render(issue: Issue, st: Standing, reported: Reported | None, runs: list[Ran], versions: str,
           extra: tuple[str, ...] | list[str] = ()) -> str:
    """The comment: the poster's own words first, then the facts of the runs."""
    rows = ["| torch | `python repro.py` |", "| --- | --- |",
            *[f"| {r.release} | {code_span(r.why or observed_line(r.obs))} |" for r in runs]]
    newest = next((r for r in reversed(runs) if r.obs is not None), None)
    log = newest.log.rstrip() if newest else ""
    return "\n".join([
        OWN_WORDS, "", _lead(issue, st, reported), "",
        "Run unchanged (the description's Python blocks saved as `repro.py`, `python repro.py` with only torch "
        "installed, each release in its own environment):", "", *rows, "", *extra,
        f"<details><summary>Error log (torch {newest.release if newest else '?'})</summary>", "",
        fence(log or "(nothing on stderr)"), "", "</details>", "",
        "<details><summary>Versions</summary>", "", fence(versions), "", "</details>", ""])
