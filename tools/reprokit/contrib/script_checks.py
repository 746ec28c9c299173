"""A case's scripts read as untrusted (never through a link, regular files only, bounded) and checked without running
them: each parses and imports nothing of the project's package; the class names it compares with are collected."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PROJECT_PACKAGE = "reprokit"
SCRIPT_CAP = 1 << 20  # bytes of a case script validate reads: a repro is a few KB


class NotAScript(Exception):
    """A case's `*.py` that is no regular file of at most SCRIPT_CAP bytes (a link, a FIFO, a device, a flood)."""


def script_text(path: Path) -> str:
    """The script's text, opened as untrusted: never through a link (O_NOFOLLOW: a `repro.py` linked to
    /proc/self/environ or /dev/zero), regular files only (O_NONBLOCK: a FIFO never blocks), at most SCRIPT_CAP bytes."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise NotAScript(
            f"{path}: cannot be opened as a regular file ({err.strerror}); case files are regular files, never links"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAScript(f"{path}: not a regular file; case files are regular files")
        if info.st_size > SCRIPT_CAP:
            raise NotAScript(f"{path}: {info.st_size} bytes; a case script is at most {SCRIPT_CAP} bytes")
        data = os.read(fd, SCRIPT_CAP + 1)
    finally:
        os.close(fd)
    if len(data) > SCRIPT_CAP:
        raise NotAScript(f"{path}: more than {SCRIPT_CAP} bytes; a case script is at most {SCRIPT_CAP} bytes")
    return data.decode("utf-8", "replace")


def script_problems(path: Path) -> list[str]:
    """A case script must parse and must not import the project's package (it has to paste into a bug report)."""
    try:
        tree = ast.parse(script_text(path), filename=str(path))
    except NotAScript as err:
        return [str(err)]
    except SyntaxError as err:
        return [f"{path}:{err.lineno}: does not parse ({err.msg})"]
    except (RecursionError, MemoryError):
        return [f"{path}: an expression is nested too deeply for Python to read it"]
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            if name.split(".")[0] == PROJECT_PACKAGE:
                problems.append(f"{path}:{node.lineno}: imports {name}; case scripts must run with torch alone")
    return problems


def compared_class_names(path: Path) -> list[tuple[int, str]]:
    """String constants a script compares with a class's __name__ / __qualname__ that look like exception names."""
    try:
        tree = ast.parse(script_text(path))
    except (NotAScript, SyntaxError, RecursionError, MemoryError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(n, ast.Attribute) and n.attr in ("__name__", "__qualname__") for n in sides):
            continue
        for n in sides:
            if (
                isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and re.fullmatch(r"[A-Z]\w*(Error|Exception)", n.value)
            ):
                found.append((node.lineno, n.value))
    return found
