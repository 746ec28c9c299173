"""Before a new PyTorch issue is drafted: is the failure a torch bug at all? Decided from what the run observed (the
exception, its chain, the frames of its traceback, the output) and from case.yaml, never from a list of case ids.

Screens, in order: documented behaviour (case.yaml `documented:`); invalid usage (an optional package that is not
installed, an option or API torch does not have, an error raised by the script's own code with no torch frame); a
fundamental graph break under fullgraph=True (torch's own hint says so); the script's own expectation (torch raised
nothing: the failure is the script's own assertion, with no torch frame, on something other than a computed result,
such as a count of graphs or recompiles); a feature request (the same in a script that compiles nothing).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from reprokit.model.case import Case
from reprokit.model.records import RunStatus
from reprokit.run.execute import Observation
from reprokit.tracker.text.traceback_text import RaisedAt, headline

# torch's words when it is handed a name it does not have: an inductor option, a module attribute, a config entry, a
# backend, a keyword argument.
UNKNOWN_NAME = (
    re.compile(r"Unexpected optimization option [\w.]+"),
    re.compile(r"module 'torch[\w.]*' has no attribute '\w+'"),
    re.compile(r"torch\.[\w.]+ does not exist"),
    re.compile(r"Invalid backend: '?[\w.-]+'?"),
    re.compile(r"got an unexpected keyword argument '\w+'"),
)
MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
INSTALL_HINT = re.compile(r"to install ([A-Za-z_][\w.]*)")
FUNDAMENTAL = "This graph break is fundamental"  # torch's hint on a graph break Dynamo will not trace (2.7 and later)
# An assertion that checks a computed result (values, dtype, shape): compiled against eager, a wrong result.
RESULT_CHECK = re.compile(
    r"allclose|assert_close|isclose|equal\(|\.abs\(|same\(|\.dtype|\.shape|\.size\(|\.stride\(|"
    r"torch\.testing|\bmax\(|norm"
)
DATA_DEPENDENT = re.compile(r"^Data-dependent branching|generic_jump", re.M)  # the same break before the hint existed


# A bound method compiled where the ordinary use compiles the module itself (DDP's forward, a model's __call__).
BOUND_METHOD = re.compile(r"torch\.compile\(\s*([A-Za-z_][\w.]*)\.(forward|__call__)\b")


@dataclass(frozen=True)
class Screened:
    """Why this failure is not a new torch bug: which screen, and the reason in one line."""

    screen: str  # documented behaviour | invalid usage | fundamental graph break | own expectation | feature request
    reason: str

    def line(self) -> str:
        return f"{self.screen}: {self.reason}"


def _chain(obs: Observation) -> list[str]:
    return [c for p in obs.probes for c in p.get("chain", []) if isinstance(c, str)]


def missing_package(obs: Observation, output: str, python: str) -> Screened | None:
    """An ImportError in the chain naming a package that is not torch and that this interpreter cannot import."""
    if not any(c.rsplit(".", 1)[-1] in ("ImportError", "ModuleNotFoundError") for c in _chain(obs)):
        return None
    names = [m.group(1) for m in MISSING_MODULE.finditer(output)] + INSTALL_HINT.findall(obs.message or "")
    for name in dict.fromkeys(n.split(".")[0] for n in names):
        if name != "torch" and not _importable(python, name):
            return Screened(
                "invalid usage",
                f"needs the optional package {name}, which is not installed here ({obs.exception}: {_headline(obs)})",
            )
    return None


def _importable(python: str, module: str) -> bool:
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)"
    done = subprocess.run([python, "-I", "-c", probe, module], capture_output=True, timeout=60, check=False)
    return done.returncode == 0


def _headline(obs: Observation) -> str:
    return headline(obs.message)[:160]


def unknown_name(obs: Observation, output: str, raised: RaisedAt) -> Screened | None:
    """torch refused a name it does not have: in the failure's own message, or in the output of a script whose
    failure is its own assertion about what torch refused."""
    for pattern in UNKNOWN_NAME:
        if m := pattern.search(obs.message or ""):
            return Screened(
                "invalid usage",
                f"an option or API torch does not have: {m.group(0)} ({obs.exception}, raised at {raised.where()})",
            )
    if obs.exception == "AttributeError" and raised.raised_by_script(obs.exception):
        return Screened(
            "invalid usage",
            f"an API torch does not have: AttributeError: {_headline(obs)} (raised in "
            f"{raised.where()}, no torch frame)",
        )
    if raised.raised_by_script(obs.exception):
        for pattern in UNKNOWN_NAME:
            if m := pattern.search(output):
                return Screened(
                    "invalid usage",
                    f"torch refused a name it does not have ({m.group(0)}) and the "
                    f"failure is the script's own {obs.exception} at {raised.where()}",
                )
    return None


def graph_break(obs: Observation) -> Screened | None:
    """A graph break Dynamo reports as fundamental, raised because the script asked for one graph (fullgraph=True)."""
    if not (obs.exception or "").endswith(".Unsupported"):
        return None
    message = obs.message or ""
    if FUNDAMENTAL in message or DATA_DEPENDENT.search(message):
        site = re.search(r"https://\S+/gb/gb\d+\.html", message)
        return Screened(
            "fundamental graph break",
            f"{_headline(obs)} under fullgraph=True; torch's hint: "
            f'"{FUNDAMENTAL}"' + (f" ({site.group(0)})" if site else ""),
        )
    return None


def own_code(obs: Observation, raised: RaisedAt, compiles: bool) -> Screened | None:
    """The failure raised by the script itself, with no torch frame anywhere in its traceback."""
    if not raised.raised_by_script(obs.exception):
        return None
    if obs.exception != "AssertionError":
        return Screened(
            "invalid usage",
            f"{obs.exception}: {_headline(obs)} is raised in the script's own code "
            f"({raised.where()}), with no torch frame in its traceback",
        )
    inner = raised.innermost
    assert inner is not None  # raised_by_script: the script's own frame is the innermost
    code = inner.code
    if compiles and (RESULT_CHECK.search(code) or "/torch/testing/" in inner.file):
        return None  # compiled against eager: a wrong result of torch.compile is a bug (the ablation says where)
    if compiles:
        return Screened(
            "own expectation",
            f"torch raised nothing: the failure is the script's own assertion "
            f"({raised.where()}: `{code[:120]}`), with no torch frame, on something "
            "other than a computed result; check what torch documents first (a count "
            "of graphs or recompiles changes with automatic dynamic shapes)",
        )
    return Screened(
        "feature request",
        f"torch raised nothing: the failure is the script's own assertion "
        f"({raised.where()}: {_headline(obs)}), with no torch frame, in a script "
        "that calls no torch.compile",
    )


def screen(case: Case, obs: Observation, output: str, raised: RaisedAt, compiles: bool, python: str) -> Screened | None:
    """The first screen the failure falls under, or None: a torch failure to report."""
    if case.documented:
        return Screened("documented behaviour", f"case.yaml documented: {case.documented}")
    if obs.status == RunStatus.PASS:
        return None
    return (
        missing_package(obs, output, python)
        or unknown_name(obs, output, raised)
        or graph_break(obs)
        or own_code(obs, raised, compiles)
    )


def ordinary_use(repro: str, fixed: str | None) -> Screened | None:
    """The case's own documented workaround (fixed.py) is the ordinary API use that the repro departs from: it compiles
    the module where the repro compiles the module's bound method."""
    if not fixed:
        return None
    for m in BOUND_METHOD.finditer(repro):
        owner = m.group(1)
        if re.search(rf"torch\.compile\(\s*{re.escape(owner)}\s*[,)]", fixed):
            return Screened(
                "invalid usage",
                f"the repro compiles the bound method {owner}.{m.group(2)}; the case's "
                f"own workaround (fixed.py) compiles the module, torch.compile({owner}), "
                "which is the documented use",
            )
    return None
