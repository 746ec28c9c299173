"""Whether a run of a script ever reached its own code: one that failed importing torch (not installed here) or at
one of the imports it starts with says nothing about the bug, and no oracle may be read from it."""

from __future__ import annotations

import ast
import re
import sys

from reprokit.contrib.script_code import parse
from reprokit.model.records import RunStatus
from reprokit.run.execute import Observation

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+)')
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def first_own_line(text: str) -> int | None:
    """The line of the script's first statement that is neither its docstring nor an import; None when it has none."""
    tree = parse(text)
    if tree is None:
        return None
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if not docstring and not isinstance(node, (ast.Import, ast.ImportFrom)):
            return node.lineno
    return None


def _script_lines(stderr: str, script_name: str) -> list[int]:
    """The script's own lines in the last traceback of stderr, outermost first."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return []
    frames = [_FRAME.match(line) for line in lines[starts[-1] :]]
    return [int(m.group("line")) for m in frames if m and m.group("file").rsplit("/", 1)[-1] == script_name]


def before_own_code(seen: Observation, text: str, script_name: str) -> str | None:
    """Why this run never reached the script's own code (torch is not installed, an import it starts with failed),
    in one sentence; None when it did, or when it ended otherwise than with an import error."""
    exception = (seen.exception or "").rsplit(".", 1)[-1]
    if seen.status == RunStatus.TIMEOUT or exception not in _IMPORT_ERRORS:
        return None
    message = next((ln.strip() for ln in (seen.message or "").splitlines() if ln.strip()), "")
    failure = f"{exception}: {message}" if message else exception
    if re.search(r"No module named '?torch'?$", message):
        return f"torch is not installed in this environment ({sys.executable}): {failure}"
    where = _script_lines(seen.stderr_tail, script_name)
    own = first_own_line(text)
    if not where:
        return f"the script failed before its first line ran: {failure}"
    if own is None or where[0] < own:  # the module-level statement that failed is one of the leading imports
        return f"the script failed at its import on line {where[0]}, before its first own line: {failure}"
    return None
