"""The site's backlog page, where a merged `reprokit backlog` is kept in the store (results/backlog/): the same groups
as the Markdown list (publish/backlog_page.py), each issue with its standing, the releases run, the evidence and its
draft (published beside the page), and what changed since the list it replaced. Every text of an issue or a script
reaches the page through the template's escaping only, one line each."""

from __future__ import annotations

from dataclasses import dataclass

from reprokit.publish.backlog_page import GROUPS, changed, group, order_of
from reprokit.publish.backlog_page import cut as one_line
from reprokit.store.backlog_journal import DRAFTS, Judgement, KeptBacklog

PAGE = "backlog.html"
FOLDER = "backlog"  # the drafts' folder beside the page: backlog/drafts/issue-N-comment.md


@dataclass(frozen=True)
class Item:
    number: int | None
    ident: str
    state: str
    title: str
    standing: str
    releases: list[tuple[str, str]]
    evidence: str
    draft: str | None  # the draft's path in the site


@dataclass(frozen=True)
class Change:
    number: int | None
    ident: str
    was: str  # "" for an issue new to the set
    now: str  # "" for an issue that left it


def _item(j: Judgement, drafts: dict[str, str]) -> Item:
    return Item(
        j.number,
        one_line(j.ident, 120),
        {"OPEN": "open", "CLOSED": "closed"}.get(j.state, "state unknown"),
        one_line(j.title, 200),
        one_line(j.line(), 600),
        [(one_line(r.release, 40), one_line(r.line, 240)) for r in j.releases],
        one_line(j.signature, 400),
        f"{FOLDER}/{DRAFTS}/{j.draft}" if j.draft in drafts else None,
    )


def changes(current: dict[str, Judgement], previous: list[Judgement]) -> list[Change]:
    """Each issue whose group changed, that is new or that left the set, since the list the merge replaced."""
    return [
        Change(j.number, one_line(j.ident, 120), group(then) if then else "", group(now) if now else "")
        for j, then, now in changed(current, {j.ident: j for j in previous})
    ]


def backlog_files(kept: KeptBacklog) -> tuple[dict, dict[str, str]]:
    """(the page's values, the drafts as site files)."""
    current = {j.ident: j for j in kept.judgements}
    groups = {g: [] for g in GROUPS}  # type: dict[str, list[Item]]
    for ident in sorted(current, key=order_of):
        groups[group(current[ident])].append(_item(current[ident], kept.drafts))
    times = sorted(j.judged_at for j in kept.judgements)
    page = {
        "groups": [(g, items) for g, items in groups.items() if items],
        "total": len(current),
        "judged": (times[0][:16], times[-1][:16]) if times else None,
        "changes": None if kept.previous is None else changes(current, kept.previous),
    }
    drafts = {f"{FOLDER}/{DRAFTS}/{name}": text for name, text in kept.drafts.items()}
    return page, drafts
