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
MAX_TEXT = 262_144  # characters of one body or comment: a larger one is refused, never cut
LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")  # GitHub's logins: anything else is not named in a draft
MAINTAINERS = ("MEMBER", "OWNER", "COLLABORATOR")  # authorAssociation of the people who speak for the project
FENCE = re.compile(r"^ {0,3}(```+|~~~+)\s*([\w+-]*)[^\n]*$")
PYTHON_INFO = ("python", "py", "python3", "pycon", "")
IMPORTS_TORCH = re.compile(r"^\s*(import torch\b|from torch\b)", re.M)
TRACEBACK = re.compile(r"^\s*(\[rank\d+\]:\s*)?Traceback \(most recent call last\):\s*$")
# The last line of a traceback: a dotted class name, optionally its message.
EXCEPTION_LINE = re.compile(r"^(?:\[rank\d+\]:\s*)?([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?::\s?(.*))?$")
ERROR_NAME = re.compile(r"(Error|Exception|Unsupported|Failed|Failure|NotFound|Violation|SymNode)$")
# collect_env's line (any capitalisation: "PyTorch Version:" in some templates), `torch==X`, "torch version X",
# "torch X.Y.Z" in a sentence; a version ends at its last letter or digit (no trailing dot or bracket).
_V = r"(\d+\.\d+(?:\.\d+)?(?:[.+\w]*\w)?)"
TORCH_VERSION = (
    re.compile(rf"^\s*(?:PyTorch|torch) version\s*:\s*{_V}", re.M | re.I),
    re.compile(rf"\btorch(?:==|\s+version:?\s*){_V}", re.I),
    re.compile(r"\b(?:torch|pytorch)\s+v?(\d+\.\d+\.\d+(?:[.+\w]*\w)?)", re.I),
)
# A nightly build named anywhere (an issue filed against main, reproduced by a commenter on a nightly).
DEV_BUILD = re.compile(r"\b(\d+\.\d+\.\d+(?:a0)?\.dev\d{8}(?:\+\w+)?)")


@dataclass(frozen=True)
class Comment:
    author: str
    association: str
    body: str
    created: str = ""


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
        found.append((info, "\n".join(lines[i + 1 : j])))
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


MAX_JOINED = 20  # continuation blocks joined to a script (each join parses the whole: bounded)


def _is_error_text(text: str) -> bool:
    """A block whose lines name an error class (`torch._dynamo.exc.X: message`, valid Python as an annotation): the
    error log an issue pastes, never code."""
    for line in text.splitlines():
        m = EXCEPTION_LINE.match(line.strip())
        if m and m.group(2) is not None and ERROR_NAME.search(m.group(1)):
            return True
    return False


@dataclass(frozen=True)
class Reproducer:
    """The script triage runs and where it was found, in words ("the description", "a comment by a maintainer
    (`login`)"): a login is never written as @login, which would notify its owner from every posted draft."""

    text: str
    where: str = "the description"

    @property
    def from_comment(self) -> bool:
        return self.where != "the description"


def reproducer(issue: Issue) -> str | None:
    """The description's script (script_of); None when the description has none."""
    return script_of(issue.body)


def reproducer_anywhere(issue: Issue) -> Reproducer | None:
    """The description's script; where it has none, the first script in a comment by the issue's author or by a
    member of the project (a maintainer's minimal repro), oldest first; None when neither has one."""
    if (text := script_of(issue.body)) is not None:
        return Reproducer(text)
    for c in issue.comments:
        if (c.association in MAINTAINERS or (issue.author and c.author == issue.author)) and (
            text := script_of(c.body)
        ) is not None:
            return Reproducer(text, commenter(c.author, issue.author))
    return None


def commenter(login: str, author: str | None) -> str:
    """Whose comment, in words a posted draft may carry: the login in a code span (GitHub notifies no one there),
    left out where it is not the shape of a GitHub login."""
    who = "the issue's author" if author and login == author else "a maintainer"
    return f"a comment by {who}" + (f" (`{login}`)" if LOGIN.fullmatch(login) else "")


def script_of(body: str) -> str | None:
    """The first fenced Python block that imports torch, with the Python blocks right after it that continue it
    (they import no torch themselves and the whole still parses); None when the text has none."""
    blocks = fences(body)
    start = next(
        (i for i, (info, text) in enumerate(blocks) if _is_python(info, text) and IMPORTS_TORCH.search(text)), None
    )
    if start is None:
        return None
    script = blocks[start][1]
    for info, text in blocks[start + 1 : MAX_JOINED + start + 1]:
        if (
            not _is_python(info, text)
            or IMPORTS_TORCH.search(text)
            or _is_error_text(text)
            or not _parses(script + "\n" + text)
        ):
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
        found = _exception_after(lines[starts[-1] + 1 :])
        if found:
            return found
    for line in reversed(lines):
        m = EXCEPTION_LINE.match(line.strip())
        if m and ERROR_NAME.search(m.group(1)) and m.group(2) is not None:
            return Reported(m.group(1), m.group(2).strip())
    return None


def reported_version(issue: Issue) -> str | None:
    """The torch the issue reports: its collect_env's "PyTorch version" (or `torch==X`); else the first nightly build
    its description or a comment names (an issue against main); None when it names no version."""
    for pattern in TORCH_VERSION:
        if m := pattern.search(issue.body):
            return m.group(1)[:40]
    for text in (issue.body, *(c.body for c in issue.comments)):
        if m := DEV_BUILD.search(text):
            return m.group(1)[:40]
    return None


def outside_fences(text: str, infos: tuple[str, ...] | None = None, quotes: bool = False) -> str:
    """The text without its fenced blocks (only those whose info word is in `infos`, where given) and, with
    `quotes`, without its quoted lines: one pass."""
    kept, skip = [], None
    for line in text.replace("\r\n", "\n").split("\n"):
        if skip is not None:
            if line.strip().startswith(skip):
                skip = None
            continue
        if (m := FENCE.match(line)) and (infos is None or m.group(2).lower() in infos):
            skip = m.group(1)
        elif not (quotes and line.lstrip().startswith(">")):
            kept.append(line)
    return "\n".join(kept)


def without_script(issue: Issue) -> list[str]:
    """The title, the body and the comments with every fenced Python block taken out: the reporter's words and logs,
    where a token of torch's message confirms the failure (the script names its own identifiers)."""
    python = ("python", "py", "python3")
    return [issue.title, outside_fences(issue.body, python), *(outside_fences(c.body, python) for c in issue.comments)]


def cut_before_error(issue: Issue) -> bool:
    """The description's log stops before its error line: a traceback whose exception line never comes (a report
    pasted in part, or a body GitHub cut). Such an issue is judged on the observed run alone."""
    lines = "\n".join(text for info, text in fences(issue.body) if not _is_python(info, text)).split("\n")
    starts = [i for i, line in enumerate(lines) if TRACEBACK.match(line)]
    return bool(starts) and _exception_after(lines[starts[-1] + 1 :]) is None and reported_failure(issue) is None
