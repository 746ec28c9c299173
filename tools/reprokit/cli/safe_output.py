"""The command line's output, made safe at the last moment: every line it prints may hold a path or an id a case
controls (a folder named "x\n::error title=...", an exception message), so no line reaches a terminal or a CI log as a
command or with control characters in it."""

from __future__ import annotations

import re
from typing import TextIO

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]")  # C0/C1 but tab, newline and ESC (see below)
_ESCAPE = re.compile("\x1b")


def safe_line(line: str, keep_escapes: bool = False) -> str:
    """One output line as data: control characters shown as \\xNN, a line a CI runner would read as a workflow
    command (`::error ...`, `::add-mask::`) shown with a leading marker. ESC is kept only for a terminal (rich's
    progress bar draws with it); in a log it is shown like any control character."""
    line = _SURROGATE.sub("\ufffd", line)
    line = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", line)
    if not keep_escapes:
        line = _ESCAPE.sub("\\\\x1b", line)
    return "(escaped) " + line if line.lstrip().startswith("::") else line


class LineGuard:
    """A text stream that writes whole lines through `safe_line` (a partial line waits for its end or a flush)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self._pending = ""
        self._tty = stream.isatty() if hasattr(stream, "isatty") else False

    def write(self, text: str) -> int:
        *lines, self._pending = (self._pending + text).split("\n")
        for line in lines:
            self.stream.write(safe_line(line, self._tty) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.stream.write(safe_line(self._pending, self._tty))
            self._pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self._tty

    def __getattr__(self, name: str):
        return getattr(self.stream, name)
