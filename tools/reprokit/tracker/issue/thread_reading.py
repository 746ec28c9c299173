"""Reading an issue's thread as a maintainer would: whether the project has already said the reported behaviour is
not a bug, and whether the issue's complaint is that torch accepts something it should refuse.

A comment counts as the project's verdict only when a maintainer (MEMBER, OWNER, COLLABORATOR) wrote it, outside a
quote or a code block, in a sentence about the compiled behaviour (not one about eager), and only if no later
maintainer comment or a linked fix contradicts it. An explicit "not a bug / by design / working as intended / user
error" counts; so does telling the reporter what their own code must do ("you need to assert the index is in
bounds"). Closed as not planned (or as a duplicate) is honoured. Every verdict names its comment (author, date).
Linear in the thread's size."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.tracker.issue.issue_json import MAINTAINERS, Issue
from reprokit.tracker.issue.issue_script import outside_fences

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
NOT_A_BUG = re.compile(
    r"\b(not an? (?:compiler |real )?(?:bug|issue with (?:torch|pytorch|torch\.compile))|by design|"
    r"working as intended|works as intended|as designed|user error|usage error|rather than a "
    r"(?:compiler |real )?bug|(?:intended|expected|documented) (?:\w+ )?behaviou?r|"
    r"(?:this|that|it) is because you(?:'re| are)\b|(?:this|that|it) is expected\b(?! to)|(?:this|that|it)'s expected\b(?! to)|"
    r"won'?t fix)",
    re.I,
)
USER_FIX = re.compile(
    r"\byou (?:need|have|ought) to (?:assert|check|guard|mark|call|use torch\._check|add an? "
    r"(?:assert|check))\b|\byou should (?:assert|check|guard|mark)\b",
    re.I,
)
ABOUT_EAGER = re.compile(r"\beager\b", re.I)
ABOUT_COMPILE = re.compile(r"\b(compile[ds]?|compiling|inductor|dynamo|graph|export)\b", re.I)
CONTRADICTS = re.compile(
    r"\b(this is (?:indeed |definitely |actually )?a (?:real )?bug|is a (?:real )?bug\b|"
    r"reopen(?:ing|ed)?\b|should(?: not|n't) (?:fail|error|raise|crash)|"
    r"we should (?:probably |definitely )?(?:make sure|fix|raise|match|error)\b)",
    re.I,
)
LINKED_FIX = re.compile(r"github\.com/pytorch/pytorch/pull/\d+|\bfix(?:ed|es)? (?:in|by|with)? ?#\d+", re.I)
# The complaint is an acceptance: torch should have refused (raised, warned) and did not.
ASKS_FOR_ERROR = re.compile(
    r"\bshould (?:raise|throw|error(?: out)?|warn|reject|refuse|complain|fail)\b|"
    r"\bexpect(?:ed|s)? (?:an? )?(?:error|exception|warning)\b|"
    r"\b(?:silently|quietly) (?:accept|succeed|pass|ignore|run|return|produce|compute)s?\b|"
    r"\bno (?:error|exception|warning) is (?:raised|thrown|given|emitted)\b|"
    r"\binstead of (?:raising|erroring|throwing|an error|an exception)\b|"
    r"\b(?:runs?|works?|succeeds?) (?:normally|fine|silently|without (?:an? )?error) (?:under|with|"
    r"in|when using) torch\.compile\b|\bnot runnable (?:under|in) eager\b|"
    r"\bwhere eager (?:mode )?(?:raises|throws|errors|fails)\b|"
    r"\baccepts?\b[^.\n]{0,80}\b(?:while|where|whereas|but) eager\b|"
    r"\bthe same (?:[\w-]+ )?error as eager\b|\beager (?:mode )?(?:rejects|refuses)\b",
    re.I,
)


@dataclass(frozen=True)
class ThreadRuling:
    """A maintainer's word that the behaviour is not a bug, or the issue's closing as not planned."""

    author: str
    date: str
    quote: str

    def line(self) -> str:
        who = f"a maintainer ({self.author}, {self.date[:10] or 'undated'})" if self.author else "the issue"
        return f'{who} said: "{self.quote}"' if self.author else self.quote


def prose(text: str) -> str:
    """The text without its code blocks and quoted lines: what its author says in their own words (one pass)."""
    return outside_fences(text, quotes=True)


def _verdict_sentence(text: str) -> str | None:
    for sentence in _SENTENCE.findall(prose(text)):
        said = NOT_A_BUG.search(sentence) or USER_FIX.search(sentence)
        if said is None:
            continue
        if ABOUT_EAGER.search(sentence) and not ABOUT_COMPILE.search(sentence):
            continue  # e.g. "eager is expected to fail here": about eager, not about the compiled behaviour
        return " ".join(sentence.split())[:200]
    return None


def maintainer_verdict(issue: Issue) -> ThreadRuling | None:
    """The last maintainer verdict that no later maintainer comment or linked fix contradicts."""
    standing = None
    for i, comment in enumerate(issue.comments):
        if comment.association not in MAINTAINERS or (said := _verdict_sentence(comment.body)) is None:
            continue
        later = issue.comments[i + 1 :]
        overruled = any(
            (c.association in MAINTAINERS and CONTRADICTS.search(prose(c.body))) or LINKED_FIX.search(c.body)
            for c in later
        )
        if not overruled:
            standing = ThreadRuling(comment.author, comment.created, said)
    return standing


def closure(issue: Issue) -> ThreadRuling | None:
    """Why the issue's own context says there is nothing to post, or None."""
    if issue.closed and issue.state_reason in ("NOT_PLANNED", "DUPLICATE"):
        return ThreadRuling(
            "",
            issue.closed_at,
            f"closed as {issue.state_reason.lower().replace('_', ' ')}"
            + (f" on {issue.closed_at[:10]}" if issue.closed_at else ""),
        )
    return maintainer_verdict(issue)


def asks_for_error(issue: Issue) -> bool:
    """The issue's complaint is that torch accepts something: its title or its prose asks for an error."""
    return bool(ASKS_FOR_ERROR.search(issue.title) or ASKS_FOR_ERROR.search(prose(issue.body)))
