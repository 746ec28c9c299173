"""Text for a bug report made of what a case printed: fenced blocks and code spans that its output cannot break out of,
and the one line of stderr that names the failure."""

from __future__ import annotations

import re

from reprokit.model.untrusted_text import plain


def fence(text: str, info: str = "") -> str:
    """A fenced block that no backtick run inside `text` can close (terminal escapes and control characters out)."""
    text = plain(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


def code_span(text: str) -> str:
    """One line of untrusted text as inline code, whatever backticks it holds."""
    text = " ".join(plain(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def key_line(stderr: str) -> str | None:
    """The exception line Python printed last (`module.Class: message`), the line people search issues for.

    Under torchrun a rank's own error (its lines prefixed `[rankN]:`) comes before the launcher's ChildFailedError.
    """
    ranks: dict[str, list[str]] = {}
    for rank, line in re.findall(r"^\[rank(\d+)\]: ?(.*)$", stderr, re.M):
        ranks.setdefault(rank, []).append(line)
    for lines in [*ranks.values(), stderr.splitlines()]:
        found = _exception_line(lines)
        if found:
            return found
    return None


def _exception_line(lines: list[str]) -> str | None:
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return None
    rest = lines[starts[-1] + 1:]
    for i, line in enumerate(rest):
        if line and not line[0].isspace():
            if line.rstrip().endswith("raised:"):  # a backend wrapper: the wrapped error is on the next line
                line += " " + next((nxt.strip() for nxt in rest[i + 1:] if nxt.strip()), "")
            return line.strip()
    return None
