"""The exception class names an oracle or a script may use, asked of the torch under test in a contained child
process, never imported here: `validate` reads pull requests' case folders, and importing a name a case chose runs
code (`this.Boom` runs the module `this`; `cases.x.repro.Boom` runs the case's script, with the runner's environment).

Only names under `torch.` are looked up at all (builtins are read from this interpreter's `builtins` module, which
imports nothing); the child is a case run (`run/execute.observe`: another user, no network, writes confined, the
environment's allow-list) of `child/exception_names.py` from an empty folder, with no folder of this package on its
path.
"""

from __future__ import annotations

import builtins
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from reprokit.child import EXCEPTION_NAMES
from reprokit.model.records import RunStatus
from reprokit.run.child_setup import write_readable_script
from reprokit.run.env_cache import cache_root
from reprokit.run.execute import observe
from reprokit.run.torch_envs import own_torch

BUILTIN_EXCEPTIONS = frozenset(
    name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)
)
_MARK = "REPROKIT_EXCEPTION_NAMES "


@dataclass
class TorchNames:
    """What the torch of one interpreter has: its bare exception class names and the dotted names asked so far."""

    bare: frozenset[str] = frozenset()
    dotted: dict[str, str] = field(default_factory=dict)  # name -> "class" | "missing" | "not an exception class"


class NamesUnknown(Exception):
    """The child process that asks torch did not answer (its one-line reason)."""


_known: dict[str, TorchNames | None] = {}  # python -> its names (None: it has no torch), for this process's life


def pinned_interpreter(pin: str) -> str | None:
    """The interpreter whose torch is the release `pin`: this one where its torch is that release, else the pin's
    environment in the cache where it is built (`reprokit run --torch PIN` builds one); None where neither is."""
    if own_torch(pin) is not None:
        return sys.executable
    python = cache_root() / "envs" / f"torch-{pin}" / "bin" / "python"
    return str(python) if (python.parent.parent / ".complete").exists() and python.exists() else None


def under_torch(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] == "torch" and len(parts) > 1 and all(p.isidentifier() for p in parts)


def _child_env(package_root: Path) -> dict[str, str]:
    """The runner's environment with no PYTHONPATH entry that holds this package or lies in the repository."""
    env = dict(os.environ)
    kept = [
        p
        for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p and not (Path(p) / "reprokit").exists() and not Path(p).resolve().is_relative_to(package_root)
    ]
    env["PYTHONPATH"] = os.pathsep.join(kept)
    return env


def torch_names(dotted: set[str], python: str = sys.executable, root: Path | None = None) -> TorchNames | None:
    """The names of the torch of `python` (None when it has no torch), the dotted names (all under torch.) resolved."""
    if python in _known and _known[python] is None:
        return None
    known = _known.setdefault(python, TorchNames())
    assert known is not None  # a python known to have no torch has returned above
    missing = sorted(n for n in dotted if n not in known.dotted)
    if known.bare and not missing:
        return known
    folder = Path(tempfile.mkdtemp(prefix="reprokit-names-"))
    try:
        script = write_readable_script(folder / "exception_names.py", copy_of=EXCEPTION_NAMES)
        obs = observe(
            script,
            env=_child_env((root or Path.cwd()).resolve()),
            timeout=600,
            python=python,
            extra_env={"REPRO_DEVICE": "cpu", "REPROKIT_DOTTED_NAMES": json.dumps(missing)},
            tail_bytes=1 << 20,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    lines = [line for line in obs.stdout_tail.splitlines() if line.startswith(_MARK)]
    if obs.status != RunStatus.PASS or not lines:
        raise NamesUnknown(
            f"the exception names of {python}'s torch could not be read ({obs.status}: "
            f"{obs.exception or obs.signal or 'exit ' + str(obs.exit_code)})"
        )
    answer = json.loads(lines[-1][len(_MARK) :])
    if answer.get("package"):
        raise NamesUnknown(f"the child process of {python} could import this package; nothing was looked up")
    if not answer.get("torch"):
        _known[python] = None
        return None
    known.bare = frozenset(answer["bare"])
    known.dotted.update(answer["dotted"])
    _known[python] = known
    return known
