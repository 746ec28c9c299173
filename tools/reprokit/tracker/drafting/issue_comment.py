"""The comment a linked pytorch/pytorch issue needs, from the recorded runs of the corpus's repro of it:

- closed, yet the repro still reproduces on the newest recorded release: "still reproduces on torch A..B (targets)";
- open, yet it does not: "no longer reproduces since X (first good; last bad Y)".

Each with the standalone repro, what a run of it printed (made now, or the newest recorded one, said which), the
versions and every recorded release per target. Pure: evidence in, Markdown out."""

from __future__ import annotations

from dataclasses import dataclass

from reprokit.model.issue_states import StandingKind
from reprokit.model.releases import release_key
from reprokit.tracker.text.bug_text import OWN_WORDS, fence
from reprokit.tracker.text.release_summary import BAD, GOOD, ReleaseHistory

STILL, NO_LONGER = StandingKind.STILL, StandingKind.NO_LONGER  # the comments a linked issue may need


@dataclass(frozen=True)
class CommentEvidence:
    kind: StandingKind  # STILL | NO_LONGER
    histories: dict[str, ReleaseHistory]  # target -> its recorded releases
    script: str  # the standalone repro
    ran: str  # one line: which run the log is from and how it ended
    error_log: str
    versions: str
    triage: str | None = None  # what running the issue's own script said (`reprokit triage N --record`)


def stretch(history: ReleaseHistory, verdict) -> tuple[str, str] | None:
    """(first, last) of the run of decisive releases with `verdict` that ends at the newest decisive one."""
    known = history.decisive()
    if not known or known[-1][1] != verdict:
        return None
    first = len(known) - 1
    while first > 0 and known[first - 1][1] == verdict:
        first -= 1
    return known[first][0], known[-1][0]


def _span(first: str, last: str) -> str:
    return first if first == last else f"{first}..{last}"


def still_line(histories: dict[str, ReleaseHistory]) -> str:
    """'still reproduces on torch 2.8.0..2.15.0 (cpu), 2.11.0 (h100)'."""
    parts = [f"{_span(*s)} ({target})" for target, h in histories.items() if (s := stretch(h, BAD))]
    return f"{STILL} on torch {', '.join(parts)}"


def no_longer_line(histories: dict[str, ReleaseHistory]) -> str:
    """'no longer reproduces since 2.12.1 (first good; last bad 2.11.0) on cpu', per target that says so; a target
    where it never reproduced: 'does not reproduce on any recorded release 2.8.0..2.15.0 (cpu)'."""
    since, never = [], []
    for target, h in histories.items():
        good = stretch(h, GOOD)
        if good is None:
            continue
        known = [r for r, _ in h.decisive()]
        at = known.index(good[0])
        if at > 0:
            since.append(f"since {good[0]} (first good; last bad {known[at - 1]}) on {target}")
        else:
            never.append(f"{_span(*good)} ({target})")
    parts = ([f"{NO_LONGER} " + "; ".join(since)] if since else []) + (
        ["does not reproduce on any recorded release " + ", ".join(never)] if never else []
    )
    return "; ".join(parts) or NO_LONGER


def release_table(histories: dict[str, ReleaseHistory]) -> list[str]:
    """Every recorded release (rows) per target (columns)."""
    cells = {(rel, t): f"{v.symbol} {v}" for t, h in histories.items() for rel, v in [*h.releases, *h.nightly]}
    rels = sorted({rel for rel, _ in cells}, key=release_key)
    targets = list(histories)
    return [
        f"| torch | {' | '.join(targets)} |",
        "|---" * (len(targets) + 1) + "|",
        *[f"| {rel} | " + " | ".join(cells.get((rel, t), "—") for t in targets) + " |" for rel in rels],
    ]


def render(ev: CommentEvidence) -> str:
    """The comment: the poster's own words, what the issue's own script did (when triaged), then the case's runs,
    named as what they are: supporting evidence from a repro written from the issue."""
    said = still_line(ev.histories) if ev.kind == STILL else no_longer_line(ev.histories)
    lead = (
        [f"The issue's own script, run unchanged (`reprokit triage`): {ev.triage}.", ""]
        if ev.triage
        else ["The issue's own script was not run here; what follows is a repro written from it.", ""]
    )
    support = f"Supporting evidence: a repro written from this issue (not its own code) {said}" + (
        ", although the issue is closed."
        if ev.kind == STILL
        else ", although the issue is open (fixed, or the repro misses what the issue describes)."
    )
    return "\n".join(
        [
            OWN_WORDS,
            "",
            *lead,
            support,
            "",
            "That repro (save as `repro.py`, run `python repro.py` with only torch installed):",
            "",
            fence(ev.script, "python"),
            "",
            ev.ran,
            "",
            "<details><summary>Error log</summary>",
            "",
            fence(ev.error_log.rstrip() or "(nothing on stderr)"),
            "",
            "</details>",
            "",
            "Recorded releases of that repro (🔴 reproduces, 🟢 does not):",
            "",
            *release_table(ev.histories),
            "",
            "<details><summary>Versions</summary>",
            "",
            fence(ev.versions),
            "",
            "</details>",
            "",
        ]
    )
