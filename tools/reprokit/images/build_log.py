"""An image build's log as it streams: on a terminal, each step printed and a status line below it with the latest
output and the time so far; elsewhere (CI logs), every line of the build's output, plain."""

from __future__ import annotations

import os
import re
import sys
import time
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.status import Status

STEP = re.compile(r"^Step \d+/\d+ : ")  # the legacy builder's step lines


class BuildLog:
    def __init__(self, title: str, log=print, terminal: bool | None = None):
        self.title, self.log = title, log
        self.terminal = (sys.stdout.isatty() and not os.environ.get("CI")) if terminal is None else terminal
        self.tail: deque[str] = deque(maxlen=8)  # the last lines, for an error message
        self.step = "starting"
        self._started = time.monotonic()
        self._status: Status | None = None
        self._partial = ""

    def __enter__(self) -> BuildLog:
        if self.terminal:
            from rich.console import Console

            self._console = Console()
            self._status = self._console.status(self._text(""))
            self._status.start()
        return self

    def _text(self, latest: str):
        from rich.text import Text  # plain text: a build's output is no markup

        elapsed = time.monotonic() - self._started
        return Text(f"{self.title}: {self.step} ({elapsed:.0f} s){'  ' + latest[:100] if latest else ''}")

    def feed(self, text: str) -> None:
        """A chunk of the build's output: whole lines are shown, a partial one waits for its end."""
        *whole, self._partial = (self._partial + text).split("\n")
        for line in whole:
            line = line.rstrip()
            if not line.strip():
                continue
            self.tail.append(line.strip())
            if STEP.match(line):
                self.step = line[:120]
            if self._status is None:
                self.log(line)
            elif STEP.match(line):
                self._console.print(line, markup=False, highlight=False)
                self._status.update(self._text(""))
            else:
                self._status.update(self._text(line.strip()))

    def __exit__(self, *exc) -> None:
        if self._partial:
            self.feed("\n")
        if self._status is not None:
            self._status.stop()
