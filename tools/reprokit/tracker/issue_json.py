"""A pytorch/pytorch issue as `gh issue view N --json number,title,body,state,stateReason,closedAt,labels,comments,url`
prints it, and the facts triage takes from it: the reproducer (the fenced Python blocks that import torch, joined when
the issue splits them), the failure it reports (the exception class and message of the error block or traceback),
the torch version it reports (collect_env's "PyTorch version:" line) and why it was closed.

Everything here is text someone else wrote: sizes are bounded, every field is checked for its type, nothing of it is
executed here (triage runs the reproducer contained, from a folder outside the repository)."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.model.schema import InputError

MAX_JSON_BYTES = 4_000_000  # an issue with its comments; GitHub caps a body at 65,536 characters
MAINTAINERS = ("MEMBER", "OWNER", "COLLABORATOR")  # authorAssociation of the people who speak for the project
# A maintainer saying the behaviour is intended (the reason an issue is closed without a fix).
INTENDED = re.compile(r"\b(expected( behaviou?r)?|by design|not a bug|working as intended|as intended|intended "
                      r"behaviou?r|documented behaviou?r|won'?t fix)\b", re.I)
FENCE = re.compile(r"^ {0,3}(```+|~~~+)\s*([\w+-]*)[^\n]*$")
PYTHON_INFO = ("python", "py", "python3", "pycon", "")
IMPORTS_TORCH = re.compile(r"^\s*(import torch\b|from torch\b)", re.M)
TRACEBACK = re.compile(r"^\s*(\[rank\d+\]:\s*)?Traceback \(most recent call last\):\s*$")
# The last line of a traceback: a dotted class name, optionally its message.
EXCEPTION_LINE = re.compile(r"^(?:\[rank\d+\]:\s*)?([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?::\s?(.*))?$")
ERROR_NAME = re.compile(r"(Error|Exception|Unsupported|Failed|Failure|NotFound|Violation|SymNode)$")
TORCH_VERSION = (re.compile(r"^PyTorch version:\s*(\S+)", re.M), re.compile(r"\btorch(?:==|\s+version:?\s*)(\d+\.\d+\S*)"))


@dataclass(frozen=True)
class Comment:
    author: str
    association: str
    body: str


@dataclass(frozen=True)
class Reported:
    """The failure the issue reports: the exception's dotted class and the first line of its message."""

    exception: str
    message: str

    @property
    def short(self) -> str:
        return self.exception.rsplit(".", 1)[-1]

    def line(self) -> str:
        return f"{self.short}: {self.message}"[:200] if self.message else self.short


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

    @property
    def closed(self) -> bool:
        return self.state == "CLOSED"


def _text(data: dict, key: str, limit: int = 200_000) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"issue JSON: {key} is not a string")
    return value[:limit]


def parse(data: object) -> Issue:
    """An Issue from gh's JSON (already decoded); raises InputError naming the field that is wrong."""
    if not isinstance(data, dict):
        raise InputError("issue JSON: not an object (expected what `gh issue view N --json ...` prints)")
    number = data.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise InputError("issue JSON: number is not a positive integer")
    labels = [lb.get("name") for lb in data.get("labels") or [] if isinstance(lb, dict)]
    comments = []
    for c in data.get("comments") or []:
        if isinstance(c, dict):
            author = c.get("author") if isinstance(c.get("author"), dict) else {}
            comments.append(Comment(str(author.get("login") or "?")[:100], str(c.get("authorAssociation") or "NONE"),
                                    _text(c, "body")))
    state = _text(data, "state").upper()
    if state not in ("OPEN", "CLOSED"):
        raise InputError(f"issue JSON: state {state!r}: OPEN or CLOSED")
    return Issue(number, _text(data, "title", 1000), _text(data, "body"), state, _text(data, "stateReason").upper(),
                 _text(data, "closedAt", 100), _text(data, "url", 300) or
                 f"https://github.com/pytorch/pytorch/issues/{number}",
                 [str(n)[:100] for n in labels if isinstance(n, str)], comments)


def read(path: Path) -> Issue:
    if not path.is_file() or path.stat().st_size > MAX_JSON_BYTES:
        raise InputError(f"{path}: not a regular file of at most {MAX_JSON_BYTES} bytes")
    try:
        return parse(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: not JSON ({err})") from None


def fences(body: str) -> list[tuple[str, str]]:
    """(info word, content) of every fenced block, in order."""
    found, lines, i = [], body.replace("\r\n", "\n").split("\n"), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        marker, info, j = m.group(1), m.group(2).lower(), i + 1
        while j < len(lines) and not lines[j].strip().startswith(marker):
            j += 1
        found.append((info, "\n".join(lines[i + 1:j])))
        i = j + 1
    return found


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _is_python(info: str, text: str) -> bool:
    return info in PYTHON_INFO and not TRACEBACK.match(text.lstrip().split("\n", 1)[0]) and _parses(text)


def reproducer(issue: Issue) -> str | None:
    """The first fenced Python block that imports torch, with the Python blocks right after it that continue it
    (they import no torch themselves and the whole still parses); None when the issue has none."""
    blocks = fences(issue.body)
    start = next((i for i, (info, text) in enumerate(blocks) if _is_python(info, text) and IMPORTS_TORCH.search(text)),
                 None)
    if start is None:
        return None
    script = blocks[start][1]
    for info, text in blocks[start + 1:]:
        if not _is_python(info, text) or IMPORTS_TORCH.search(text) or not _parses(script + "\n" + text):
            break
        script += "\n\n" + text
    return script.strip("\n") + "\n"


def _exception_after(lines: list[str]) -> Reported | None:
    """The exception line that ends a traceback: the first unindented line after its frames."""
    for k, line in enumerate(lines):
        if not line.strip() or line.startswith((" ", "\t")) or line.lstrip().startswith("File "):
            continue
        m = EXCEPTION_LINE.match(line.strip())
        if m and not line.startswith("During handling") and not line.startswith("The above exception"):
            return Reported(m.group(1), (m.group(2) or "").strip())
        if k > 0:
            return None
    return None


def reported_failure(issue: Issue) -> Reported | None:
    """The exception the issue reports: the one ending its last traceback (the exception raised last); else the last
    line outside the reproducer that names an error class."""
    blocks = [text for info, text in fences(issue.body) if not _is_python(info, text)] or [issue.body]
    text = "\n".join(blocks)
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if TRACEBACK.match(line)]
    if starts:
        found = _exception_after(lines[starts[-1] + 1:])
        if found:
            return found
    for line in reversed(lines):
        m = EXCEPTION_LINE.match(line.strip())
        if m and ERROR_NAME.search(m.group(1)) and m.group(2) is not None:
            return Reported(m.group(1), m.group(2).strip())
    return None


def reported_version(issue: Issue) -> str | None:
    for pattern in TORCH_VERSION:
        if m := pattern.search(issue.body):
            return m.group(1)[:40]
    return None


def closure(issue: Issue) -> str | None:
    """Why the issue's own context says there is nothing to post, or None: closed as not planned (or as a duplicate),
    or a maintainer's comment calling the behaviour intended."""
    if issue.closed and issue.state_reason in ("NOT_PLANNED", "DUPLICATE"):
        return f"closed as {issue.state_reason.lower().replace('_', ' ')}"
    for c in issue.comments:
        if c.association in MAINTAINERS and (m := INTENDED.search(c.body)):
            start = max(0, m.start() - 60)
            quote = " ".join(c.body[start:m.end() + 60].split())
            return f"a maintainer ({c.author}, {c.association.lower()}) said: \"…{quote}…\""
    return None
