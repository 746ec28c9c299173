"""A pytorch/pytorch issue as `gh issue view N --json number,title,body,state,stateReason,closedAt,labels,comments,url`
prints it: the file read, every field checked for its type and size, into an Issue. What triage takes from its text is
read elsewhere: the reproducer (issue_script.py), the failure and the torch version it reports (issue_reported.py).

Everything here is text someone else wrote: sizes are bounded, every field is checked for its type, nothing of it is
executed here (triage runs the reproducer contained, from a folder outside the repository)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.model.schema import InputError

MAX_JSON_BYTES = 4_000_000  # an issue with its comments; GitHub caps a body at 65,536 characters
MAX_TEXT = 262_144  # characters of one body or comment: a larger one is refused, never cut
MAINTAINERS = ("MEMBER", "OWNER", "COLLABORATOR")  # authorAssociation of the people who speak for the project


@dataclass(frozen=True)
class Comment:
    author: str
    association: str
    body: str
    created: str = ""


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    body: str
    state: str  # OPEN | CLOSED
    state_reason: str  # COMPLETED | NOT_PLANNED | REOPENED | DUPLICATE | ""
    closed_at: str
    url: str
    labels: list[str] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    created: str = ""
    author: str = ""  # the login of who opened it ("" where the file does not say)

    @property
    def closed(self) -> bool:
        return self.state == "CLOSED"


def _text(data: dict, key: str, limit: int = MAX_TEXT, where: str = "") -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"issue JSON: {where}{key} is not a string")
    if len(value) > limit:
        raise InputError(
            f"issue JSON: {where}{key} is {len(value):,} characters, over the {limit:,} triage reads "
            "(GitHub's own cap is 65,536)"
        )
    return value


def _list(data: dict, key: str) -> list:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"issue JSON: {key} is not a list (gh prints a list of objects)")
    return value


def parse(data: object) -> Issue:
    """An Issue from gh's JSON (already decoded); raises InputError naming the field that is wrong."""
    if not isinstance(data, dict):
        raise InputError("issue JSON: not an object (expected what `gh issue view N --json ...` prints)")
    number = data.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise InputError("issue JSON: number is not a positive integer")
    labels = [lb.get("name") for lb in _list(data, "labels") if isinstance(lb, dict)]
    comments: list[Comment] = []
    for c in _list(data, "comments"):
        if isinstance(c, dict):
            author = c.get("author")
            author = author if isinstance(author, dict) else {}
            comments.append(
                Comment(
                    str(author.get("login") or "?")[:100],
                    str(c.get("authorAssociation") or "NONE")[:40],
                    _text(c, "body", where=f"comments[{len(comments)}]."),
                    _text(c, "createdAt", 100, f"comments[{len(comments)}]."),
                )
            )
    state = _text(data, "state").upper()
    if state not in ("OPEN", "CLOSED"):
        raise InputError(f"issue JSON: state {state!r}: OPEN or CLOSED")
    opener = data.get("author")
    author = str(opener.get("login") or "")[:100] if isinstance(opener, dict) else ""
    return Issue(
        number,
        _text(data, "title", 1000),
        _text(data, "body"),
        state,
        _text(data, "stateReason", 40).upper(),
        _text(data, "closedAt", 100),
        f"https://github.com/pytorch/pytorch/issues/{number}",
        [str(n)[:100] for n in labels if isinstance(n, str)],
        comments,
        _text(data, "createdAt", 100),
        author,
    )


def read(path: Path) -> Issue:
    if not path.is_file() or path.stat().st_size > MAX_JSON_BYTES:
        raise InputError(f"{path}: not a regular file of at most {MAX_JSON_BYTES} bytes")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: not JSON ({err})") from None
    except RecursionError:  # brackets nested deeper than the decoder goes: no issue gh prints looks so
        raise InputError(f"{path}: not an issue: its JSON nests deeper than the decoder reads") from None
    try:
        return parse(data)
    except InputError as err:
        raise InputError(f"{path}: {err}") from None
