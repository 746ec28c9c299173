"""The backlog's list, `OUT/backlog.md`: every issue of the set under what a maintainer does with it, each with its
standing, the releases run, the evidence and the comment draft; and a feed of what changed since the last backlog.

Titles, standings and runs' lines carry the issue's and the script's own text: each is one line with Markdown's
punctuation, HTML and entities made literal, so that an issue can make no heading, link, image, table or markup of
the page. Only the issue's link is ours, made from its number. Rendered from the journal alone: the same judgements
give the same page."""

from __future__ import annotations

from collections.abc import Iterable

from reprokit.model.issue_states import StandingKind
from reprokit.model.untrusted_text import one_line
from reprokit.store.backlog_journal import NOT_JUDGED, NOT_READ, Judgement

QUESTION = "Open, no longer reproduces on the newest release run: a question drafted"
AGAIN = "Closed, fails again on a release published after the close"
DIFFERENT = "Fails differently"
STILL = "Still reproduces"
AGREES = "Closed, no longer reproduces: agrees with the close"
NOT = "Not judged: why"
GROUPS = (QUESTION, AGAIN, DIFFERENT, STILL, AGREES, NOT)
COUNTED = {
    QUESTION: "a question drafted",
    AGAIN: "failing again after the close",
    DIFFERENT: "failing differently",
    STILL: "still reproducing",
    AGREES: "agreeing with the close",
    NOT: "not judged",
}  # the summary's words
FEED_LINES = 60
_LITERAL = str.maketrans({c: "\\" + c for c in "\\`*_[]|~!#"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"})


def group(j: Judgement) -> str:
    """What a maintainer does with the issue, from its state and standing (triage's decide already held back a
    closed issue failing only on releases from before its close: that one is "not posted", with why)."""
    closed = j.state == "CLOSED"
    if j.kind in (StandingKind.NO_LONGER.value, StandingKind.DOES_NOT.value):
        return AGREES if closed else QUESTION
    if j.kind == StandingKind.STILL.value:
        return AGAIN if closed else STILL
    if j.kind == StandingKind.DIFFERENT.value:
        return DIFFERENT
    return NOT  # not posted (the reason), not read, not judged


def cut(value: str | None, limit: int = 300) -> str:
    """Someone else's text as one plain line, cut with a mark (the site's template escapes it)."""
    line = one_line(value)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def text(value: str | None, limit: int = 300) -> str:
    """Someone else's text as one literal line of Markdown."""
    return cut(value, limit).translate(_LITERAL)


def _issue_link(j: Judgement) -> str:
    if j.number is None:
        return f"file {text(j.ident, 120)}"
    return f"[#{j.number}](https://github.com/pytorch/pytorch/issues/{j.number})"


def item(j: Judgement) -> list[str]:
    state = {"OPEN": "open", "CLOSED": "closed"}.get(j.state, "state unknown")
    head = f"- {_issue_link(j)} ({state}): {text(j.title, 160) or '(no title)'}"
    lines = [head, f"  - standing: {text(j.line(), 600)}"]
    if j.releases:
        lines.append(
            "  - releases: " + "; ".join(f"torch {text(r.release, 40)}: {text(r.line, 200)}" for r in j.releases)
        )
    if j.signature:
        lines.append(f"  - evidence (the run judged on): {text(j.signature, 400)}")
    if j.draft is not None:
        lines.append(f"  - draft: [drafts/{j.draft}](drafts/{j.draft})")  # issue-N-comment.md (journal checks it)
    return lines


def changed(
    current: dict[str, Judgement], previous: dict[str, Judgement]
) -> list[tuple[Judgement, Judgement | None, Judgement | None]]:
    """(the issue's newest judgement, the one before or None where new, the one now or None where it left the set)
    for each issue whose group changed, that is new, or that left the set, in the list's order."""
    out = []
    for ident in sorted(set(current) | set(previous), key=order_of):
        now, then = current.get(ident), previous.get(ident)
        if now is None or then is None or group(now) != group(then):
            out.append((now if now is not None else previous[ident], then, now))
    return out


def feed(current: dict[str, Judgement], previous: dict[str, Judgement] | None) -> list[str]:
    """One line per issue whose group changed, that is new, or that left the set, since the previous list."""
    if previous is None:
        return ["The first backlog here: nothing to compare with."]
    lines = []
    for j, then, now in changed(current, previous):
        if now is None:
            lines.append(f"- {_issue_link(j)}: no longer in the set (was: {group(j).lower()})")
        elif then is None:
            lines.append(f"- {_issue_link(j)}: new, {group(j).lower()}")
        else:
            lines.append(f"- {_issue_link(j)}: {group(then).lower()} → {group(now).lower()}")
    if not lines:
        return ["Nothing changed: every issue stands where it stood."]
    more = len(lines) - FEED_LINES
    return lines[:FEED_LINES] + ([f"- and {more} more"] if more > 0 else [])


def order_of(ident: str) -> tuple[int, int, str]:
    return (0, int(ident[1:]), "") if ident.startswith("#") and ident[1:].isdigit() else (1, 0, ident)


def render(judgements: Iterable[Judgement], previous: dict[str, Judgement] | None, title: str = "The backlog") -> str:
    current = {j.ident: j for j in judgements}
    by_group: dict[str, list[Judgement]] = {g: [] for g in GROUPS}
    for ident in sorted(current, key=order_of):
        by_group[group(current[ident])].append(current[ident])
    times = sorted(j.judged_at for j in current.values())
    counts = ", ".join(f"{len(by_group[g])} {COUNTED[g]}" for g in GROUPS if by_group[g])
    lines = [
        f"# {text(title, 120)}",
        "",
        f"{len(current)} issue{'s' if len(current) != 1 else ''} ({counts or 'none'}); judged {times[0][:16]}Z to {times[-1][:16]}Z."
        if times
        else "No issues.",
        "",
        "Each issue's own script, run by `reprokit triage` on the releases named; drafts are for a person to "
        "read, complete and post.",
        "",
        "## Changed since the last backlog",
        "",
        *feed(current, previous),
        "",
    ]
    unread = [j for j in by_group[NOT] if j.kind in (NOT_READ, NOT_JUDGED)]
    for g in GROUPS:
        if not by_group[g]:
            continue
        lines += [f"## {g} ({len(by_group[g])})", ""]
        if g == NOT and unread:
            lines += [f"{len(unread)} not read or not judged by this run: see each line's reason.", ""]
        for j in by_group[g]:
            lines += item(j)
        lines.append("")
    return "\n".join(lines)
