"""The script in a pytorch/pytorch issue's text: its fenced blocks, the first Python block that imports torch (joined
with the blocks that continue it), in the description or else in a comment by its author or a maintainer, and the
text without it (the reporter's words and logs).

Everything here is text someone else wrote: nothing of it is executed here (triage runs the reproducer contained,
from a folder outside the repository)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from reprokit.tracker.issue.issue_json import MAINTAINERS, Issue

LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")  # GitHub's logins: anything else is not named in a draft
FENCE = re.compile(r"^ {0,3}(```+|~~~+)\s*([\w+-]*)[^\n]*$")
PYTHON_INFO = ("python", "py", "python3", "pycon", "")
IMPORTS_TORCH = re.compile(r"^\s*(import torch\b|from torch\b)", re.M)
TRACEBACK = re.compile(r"^\s*(\[rank\d+\]:\s*)?Traceback \(most recent call last\):\s*$")
# The last line of a traceback: a dotted class name, optionally its message (a block of such lines is an error log,
# never a script's continuation; issue_reported.py reads the reported failure with the same two patterns).
EXCEPTION_LINE = re.compile(r"^(?:\[rank\d+\]:\s*)?([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)(?::\s?(.*))?$")
ERROR_NAME = re.compile(r"(Error|Exception|Unsupported|Failed|Failure|NotFound|Violation|SymNode)$")


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


def is_python(info: str, text: str) -> bool:
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
        (i for i, (info, text) in enumerate(blocks) if is_python(info, text) and IMPORTS_TORCH.search(text)), None
    )
    if start is None:
        return None
    script = blocks[start][1]
    for info, text in blocks[start + 1 : MAX_JOINED + start + 1]:
        if (
            not is_python(info, text)
            or IMPORTS_TORCH.search(text)
            or _is_error_text(text)
            or not _parses(script + "\n" + text)
        ):
            break
        script += "\n\n" + text
    return script.strip("\n") + "\n"


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
