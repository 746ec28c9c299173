"""An environment that cannot run torch at all: torch's own package failing to import what it needs (an old
release's `from pkg_resources import packaging` under a setuptools that no longer has pkg_resources, a numpy it was
not built for). Such a run says nothing about the issue: "environment broken: not judged". Pure: a log in."""

from __future__ import annotations

import re

from reprokit.tracker.text.traceback_text import FRAME, TRACEBACK, Frame

# torch failing to import a part of itself is torch's own bug (a circular import, a renamed module), not the environment
OWN_MODULE = re.compile(r"No module named '(?:torch|functorch)\b|cannot import name '\w+' from '(?:torch|functorch)\b")
IMPORT_FAILED = re.compile(r"^(?:\[rank\d+\]: ?)?(?:\w+\.)*(ModuleNotFoundError|ImportError): (.{1,300})")


def broken_import(log: str) -> str | None:
    """The import error a traceback of `log` ends with where the import that failed is torch's own (its innermost
    frame in torch's package), in one line; None where there is none (a script importing what is not installed is
    the script's own business)."""
    frames: list[Frame] = []
    for line in log.splitlines():
        if TRACEBACK.match(line):
            frames = []
        elif m := FRAME.match(line):
            frames.append(Frame(m.group("file"), int(m.group("line")), m.group("name")))
        elif (m := IMPORT_FAILED.match(line)) and frames:
            said = m.group(2).strip()
            if frames[-1].in_torch and not OWN_MODULE.search(said):
                return f"{m.group(1)}: {said}"
            frames = []
    return None
