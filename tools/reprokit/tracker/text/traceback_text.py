"""Python tracebacks as a run printed them: the frames of the exception raised last, where it was raised (the
script's own code, torch, or code torch generated), and the error log without the runner's own frames.

The probe runs the script with runpy, so its traceback starts with frames of probe.py and <frozen runpy>; `python
repro.py` prints the same traceback without them, which is what a bug report shows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from reprokit.model.records import message_headline

FRAME = re.compile(r'^(?P<prefix>\[rank\d+\]: ?)?  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')
TRACEBACK = re.compile(r"^(\[rank\d+\]: ?)?Traceback \(most recent call last\):$")
# Errors the interpreter raises on the script's own code (torch's C++ operators raise RuntimeError, TypeError, ...).
PYTHON_ERRORS = (
    "AssertionError",
    "AttributeError",
    "NameError",
    "UnboundLocalError",
    "KeyError",
    "ImportError",
    "ModuleNotFoundError",
    "SyntaxError",
)
LAUNCHER_FAILED = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
_HARNESS = re.compile(r"(^<frozen runpy>$|/runpy\.py$|/reprokit/child/probe\.py$|/probe\.py$)")


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    name: str
    code: str = ""  # the source line Python printed under it

    @property
    def in_torch(self) -> bool:
        """A frame of torch's own package (torch.testing, the checks a script calls, is the script's comparison)."""
        return "/torch/" in self.file and "/torch/testing/" not in self.file


def without_harness(stderr: str) -> str:
    """stderr with the probe's and runpy's frames taken out of every traceback (each frame with its source lines)."""
    out: list[str] = []
    skipping: str | None = None  # the rank prefix of a harness frame whose source lines are being skipped
    for line in stderr.splitlines(keepends=True):
        m = FRAME.match(line.rstrip("\n"))
        if m:
            skipping = (m.group("prefix") or "") if _HARNESS.search(m.group("file")) else None
            if skipping is not None:
                continue
        elif skipping is not None and line.startswith(skipping + "    "):
            continue
        else:
            skipping = None
        out.append(line)
    return "".join(out)


def last_frames(stderr: str) -> list[Frame]:
    """The frames of the traceback printed last (chained exceptions: the one raised last), outermost first. A tail cut
    before its header still gives the frames that are left."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if TRACEBACK.match(line)]
    # torchrun's own summary of a rank that failed comes last: the rank's traceback is the failure
    while len(starts) > 1 and any(LAUNCHER_FAILED in line for line in lines[starts[-1] :]):
        lines, starts = lines[: starts[-1]], starts[:-1]
    return frames_of(lines[starts[-1] + 1 if starts else 0 :])


def frames_of(lines: list[str]) -> list[Frame]:
    """Every frame the lines print, each with the source line Python printed under it."""
    frames: list[Frame] = []
    for i, line in enumerate(lines):
        m = FRAME.match(line)
        if m:
            prefix = m.group("prefix") or ""
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            code = nxt[len(prefix) :].strip() if nxt.startswith(prefix + "    ") and not FRAME.match(nxt) else ""
            frames.append(Frame(m.group("file"), int(m.group("line")), m.group("name"), code))
    return frames


@dataclass(frozen=True)
class RaisedAt:
    """Where the failure was raised, from the last traceback's frames."""

    frames: list[Frame]
    script: str  # the script's path as the traceback names it

    @property
    def torch_frames(self) -> list[Frame]:
        return [f for f in self.frames if f.in_torch]

    @property
    def innermost(self) -> Frame | None:
        return self.frames[-1] if self.frames else None

    @property
    def in_own_code(self) -> bool:
        """The failing line is the script's (or a torch.testing check it called), with no frame of torch anywhere.
        Its exception may still come from torch's C++ code (an operator called on that line): see raised_by_script."""
        inner = self.innermost
        return (
            inner is not None
            and not self.torch_frames
            and (inner.file == self.script or "/torch/testing/" in inner.file)
        )

    def raised_by_script(self, exception: str | None) -> bool:
        """Raised by the script's own Python: a `raise` or `assert` statement, a class the script defines, or an
        error Python itself raises on a bad name, key or attribute, with no torch frame in the traceback."""
        inner = self.innermost
        if inner is None or not self.in_own_code:  # (in_own_code has an innermost frame)
            return False
        code = inner.code
        name = (exception or "").rsplit(".", 1)[-1]
        return (
            code.startswith(("raise ", "assert "))
            or (exception or "").startswith("__main__.")
            or name in PYTHON_ERRORS
            or "/torch/testing/" in inner.file
        )

    def where(self) -> str:
        inner = self.innermost
        if inner is None:
            return "no traceback"
        name = inner.file.rsplit("/", 1)[-1]
        return f"{name} line {inner.line}, in {inner.name}"


def raised_at(stderr: str, script: str) -> RaisedAt:
    return RaisedAt(last_frames(stderr), script)


# The first line of an exception's message; a backend wrapper's `backend='x' raised:` with the error it wraps.
headline = partial(message_headline, wrapper="join")


def says_nothing(line: str) -> bool:
    """An error line whose message is empty, the wrapped error's included: "AssertionError:", "BackendCompilerFailed:
    backend='inductor' raised: AssertionError:"."""
    return not line.strip() or line.rstrip().endswith(("Error:", "Error", "raised:"))


def assertion_site(log: str) -> str:
    """Where torch's own `assert` failed, for an AssertionError whose message is empty (the draft would otherwise
    say only `AssertionError:`): 'torch/_inductor/pattern_matcher.py, line 2192, in stable_topological_sort: assert
    not waiting', from the last frame of torch's package in the log whose source line is an assert statement (chained
    tracebacks included: a backend's wrapper re-raises it). "" where there is none."""
    asserts = [f for f in frames_of(log.splitlines()) if f.in_torch and f.code.startswith("assert ")]
    if not asserts:
        return ""
    f = asserts[-1]
    return f"torch/{f.file.split('/torch/', 1)[1]}, line {f.line}, in {f.name}: {f.code}"[:300]
