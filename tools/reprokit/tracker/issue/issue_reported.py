"""What a pytorch/pytorch issue reports: the failure (the exception class and message of the error block or
traceback outside its script), whether its log stops before the error line, and the torch version (collect_env's
"PyTorch version:" line, else a nightly build it names).

Everything here is text someone else wrote: a version is cut to 40 characters, a message line to 200."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprokit.tracker.issue.issue_json import Issue
from reprokit.tracker.issue.issue_script import ERROR_NAME, EXCEPTION_LINE, TRACEBACK, fences, is_python

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
class Reported:
    """The failure the issue reports: the exception's dotted class and the first line of its message."""

    exception: str
    message: str

    @property
    def short(self) -> str:
        return self.exception.rsplit(".", 1)[-1]

    def line(self) -> str:
        return f"{self.short}: {self.message}"[:200] if self.message else self.short


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
    blocks = [text for info, text in fences(issue.body) if not is_python(info, text)] or [issue.body]
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


def cut_before_error(issue: Issue) -> bool:
    """The description's log stops before its error line: a traceback whose exception line never comes (a report
    pasted in part, or a body GitHub cut). Such an issue is judged on the observed run alone."""
    lines = "\n".join(text for info, text in fences(issue.body) if not is_python(info, text)).split("\n")
    starts = [i for i, line in enumerate(lines) if TRACEBACK.match(line)]
    return bool(starts) and _exception_after(lines[starts[-1] + 1 :]) is None and reported_failure(issue) is None
