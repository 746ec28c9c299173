"""A log as the person pasting it would see it after `python repro.py` in an empty folder: the script is `repro.py`,
no frame of the runner's probe or runpy, torch's files under `.../site-packages/`, and no path of ours (the run's
temporary folder, the checkout, a case folder, the cache of torch environments or of triage)."""

from __future__ import annotations

import re
import socket
import tempfile
from pathlib import Path

from reprokit.tracker.text.traceback_text import without_harness

SITE = re.compile(r"(?:/[^\s\"'/:]+)+/(site-packages|dist-packages)/")
PROBE = re.compile(r"(?:/[^\s\"'/:]+)*/reprokit/child/probe\.py")  # torchrun names the script it started: ours
INTERPRETER = re.compile(r"(?:/[^\s\"'/:]+)+/bin/(python[\d.]*)\b")
# torch's CUDA wheel on a machine without CUDA says so while compiling for the CPU: not part of any failure
NOISE = re.compile(r"^.*No CUDA runtime is found, using CUDA_HOME=.*\n?", re.M)
CASE_FILE = re.compile(r"(?:/[^\s\"'/:]+)*/cases/[\w.-]+/([\w.-]+)")  # a case folder's file, in any checkout
CACHE = re.compile(r"(?:/[^\s\"'/:]+)*/\.cache/reprokit(/[^\s\"':]*)?")  # the caches of reprokit, on any machine
RUN_FOLDER = re.compile(re.escape(tempfile.gettempdir().rstrip("/")) + r"/reprokit-[\w-]+(/[^\s\"':]*)?")


def _under(root: str) -> re.Pattern:
    return re.compile(re.escape(root.rstrip("/")) + r"(/[^\s\"':]*)?")


def as_user_sees(text: str, script: str | Path | None = None, ours: tuple[str | Path, ...] = ()) -> str:
    """`text` with the runner's frames taken out and every path of ours rewritten. `script`: the path the script ran
    from (it becomes `repro.py`); `ours`: folders whose paths become their last part (the checkout, the caches)."""
    text = without_harness(text)
    if script is not None:
        text = text.replace(str(script), "repro.py")
    text = NOISE.sub("", text)
    text = PROBE.sub("repro.py", text)
    text = INTERPRETER.sub(lambda m: m.group(1), text)
    text = SITE.sub(lambda m: f".../{m.group(1)}/", text)
    text = CASE_FILE.sub(lambda m: m.group(1), text)
    text = CACHE.sub(lambda m: (m.group(1) or "/.").rsplit("/", 1)[-1] or ".", text)
    text = RUN_FOLDER.sub(lambda m: (m.group(1) or "/.").rsplit("/", 1)[-1] or ".", text)
    for root in sorted({str(r) for r in ours if str(r) not in ("", "/")}, key=len, reverse=True):
        text = _under(root).sub(lambda m: (m.group(1) or "/.").rsplit("/", 1)[-1] or ".", text)
    home = str(Path.home()).rstrip("/")
    if len(home) > 1:  # what is left under this machine's home (a pyenv interpreter's standard library): `~`
        text = re.sub(re.escape(home) + r"(?=/)", "~", text)
    host = socket.gethostname()
    if len(host) >= 2:  # this machine's name (a log line, a temporary file name) is nobody else's business
        text = re.sub(rf"\b{re.escape(host)}\b", "<host>", text)
    return text
